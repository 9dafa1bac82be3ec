"""Learning-rate scaling rules for a changed batch size (as `zeus.utils.lr_scaler`).

When the batch-size optimizer hands a job a batch size other than the one its learning rate was
tuned for, scale the rate with one of these:

    scaler = SquareRootScaler(bs=32, lr=1e-3)
    lr = scaler.compute_lr(new_bs=128)     # 2e-3 (x sqrt(128 / 32))
    LinearScaler(bs=32, lr=1e-3).compute_lr(128)   # 4e-3 (x 128 / 32)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

__all__ = ["SquareRootScaler", "LinearScaler"]


def _positive_batch_size(name: str, value: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int batch size, not {type(value).__name__}")
    if value <= 0:
        raise ValueError(f"{name} must be a positive batch size, not {value}")
    return value


class _Scaler:
    bs: int
    lr: float

    def __post_init__(self) -> None:
        _positive_batch_size("bs", self.bs)
        if isinstance(self.lr, bool) or not isinstance(self.lr, (int, float)) or not math.isfinite(self.lr):
            raise ValueError(f"lr must be a finite number, not {self.lr!r}")

    def _ratio(self, new_bs: int) -> float:
        return _positive_batch_size("new_bs", new_bs) / self.bs


@dataclass
class SquareRootScaler(_Scaler):
    """lr x sqrt(new_bs / bs) (Krizhevsky's rule; suits adaptive optimisers such as Adam).

    Args:
        bs: the batch size `lr` was tuned for.
        lr: the learning rate at `bs`.
    """

    bs: int
    lr: float

    def compute_lr(self, new_bs: int) -> float:
        """The learning rate for batch size `new_bs`."""
        return self.lr * math.sqrt(self._ratio(new_bs))


@dataclass
class LinearScaler(_Scaler):
    """lr x new_bs / bs (Goyal et al.'s rule for SGD).

    Args:
        bs: the batch size `lr` was tuned for.
        lr: the learning rate at `bs`.
    """

    bs: int
    lr: float

    def compute_lr(self, new_bs: int) -> float:
        """The learning rate for batch size `new_bs`."""
        return self.lr * self._ratio(new_bs)
