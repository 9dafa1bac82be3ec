"""zeus_cpp.utils.lr_scaler: upstream Zeus's SquareRootScaler and LinearScaler."""

import math

import pytest

from zeus_cpp.utils.lr_scaler import LinearScaler, SquareRootScaler


def test_square_root_and_linear_rules():
    assert SquareRootScaler(bs=32, lr=1e-3).compute_lr(128) == pytest.approx(2e-3)
    assert SquareRootScaler(32, 1e-3).compute_lr(8) == pytest.approx(5e-4)
    assert LinearScaler(bs=32, lr=1e-3).compute_lr(new_bs=128) == pytest.approx(4e-3)
    assert LinearScaler(bs=32, lr=1e-3).compute_lr(32) == 1e-3
    assert SquareRootScaler(bs=10, lr=0.1).compute_lr(20) == pytest.approx(0.1 * math.sqrt(2))
    # Dataclasses with upstream's fields.
    assert SquareRootScaler(bs=4, lr=0.5) == SquareRootScaler(4, 0.5)
    assert LinearScaler(4, 0.5).bs == 4 and LinearScaler(4, 0.5).lr == 0.5


@pytest.mark.parametrize("scaler", [SquareRootScaler, LinearScaler])
def test_bad_batch_sizes_and_rates_are_refused_with_the_argument_named(scaler):
    with pytest.raises(ValueError, match="bs must be a positive batch size"):
        scaler(bs=0, lr=1e-3)
    with pytest.raises(TypeError, match="bs must be an int"):
        scaler(bs=2.5, lr=1e-3)
    with pytest.raises(ValueError, match="lr must be a finite number"):
        scaler(bs=8, lr=float("nan"))
    with pytest.raises(ValueError, match="new_bs must be a positive batch size"):
        scaler(bs=8, lr=1e-3).compute_lr(-4)
