"""Hugging Face `Trainer` callbacks: the power-limit optimizer and per-epoch energy logging.

    from zeus_cpp.monitor import ZeusMonitor
    from zeus_cpp.optimizer.power_limit import HFGlobalPowerLimitOptimizer
    from zeus_cpp.integrations.huggingface import HFEnergyCallback

    monitor = ZeusMonitor(gpu_indices=[0])
    trainer = Trainer(..., args=TrainingArguments(..., report_to=["tensorboard"]),
                      callbacks=[HFGlobalPowerLimitOptimizer(monitor)])
    HFEnergyCallback(monitor).attach(trainer)    # before the report_to callbacks
    trainer.train()   # logs zeus/epoch_energy_j ... each epoch, zeus/train_energy_j at the end

`transformers` is imported lazily: the callbacks subclass `transformers.TrainerCallback` when it
can be imported, else a plain base with the same hooks (so they also work with loops that call
the hooks the way Trainer does). The hooks take Trainer's `(args, state, control, **kwargs)` and
follow the callback protocol of transformers 4.x: `Trainer.log(logs)` appends a copy of `logs`
to `state.log_history` and then calls `on_log(args, state, control, logs=logs)` on every callback
in order (the report_to callbacks first, then the ones given to Trainer); after each epoch it
calls `on_epoch_end` and then logs if `control.should_log` is set; its last log (the one with
`train_runtime`) comes before `on_train_end`.
"""

from __future__ import annotations

import functools
from typing import Any, Dict, Optional

# The hooks of transformers.TrainerCallback (4.x), each `(args, state, control, **kwargs)`.
TRAINER_HOOKS = (
    "on_init_end", "on_train_begin", "on_train_end", "on_epoch_begin", "on_epoch_end",
    "on_step_begin", "on_pre_optimizer_step", "on_optimizer_step", "on_substep_end",
    "on_step_end", "on_evaluate", "on_predict", "on_save", "on_log", "on_prediction_step",
)


def _stand_in_hook(self, args, state, control, **kwargs):  # noqa: ANN001
    """Does nothing (transformers.TrainerCallback's default)."""
    del self, args, state, control, kwargs


class TrainerCallbackStandIn:
    """transformers.TrainerCallback's hooks, every one a no-op (used without transformers)."""


for _hook in TRAINER_HOOKS:
    setattr(TrainerCallbackStandIn, _hook, _stand_in_hook)


@functools.lru_cache(maxsize=None)
def trainer_callback_base() -> type:
    """transformers.TrainerCallback when importable, else TrainerCallbackStandIn (cached)."""
    try:
        from transformers import TrainerCallback  # noqa: PLC0415 (lazy on purpose: it is slow)
    except ImportError:
        return TrainerCallbackStandIn
    return TrainerCallback


def _energy_logs(prefix: str, measurement: Any) -> Dict[str, float]:
    logs = {f"{prefix}_energy_j": float(measurement.total_energy), f"{prefix}_time_s": float(measurement.time)}
    for index, joules in sorted(measurement.gpu_energy.items()):
        logs[f"{prefix}_gpu{index}_energy_j"] = float(joules)
    for index, joules in sorted((measurement.cpu_energy or {}).items()):
        logs[f"{prefix}_cpu{index}_energy_j"] = float(joules)
    for index, joules in sorted((measurement.dram_energy or {}).items()):
        logs[f"{prefix}_dram{index}_energy_j"] = float(joules)
    return logs


class _HFEnergyCallbackMixin:
    """HFEnergyCallback's behaviour (combined with the TrainerCallback base on first use)."""

    _EPOCH = "__HFEnergyCallback_epoch"
    _RUN = "__HFEnergyCallback_train"

    def __init__(self, monitor: Any = None, prefix: str = "zeus/") -> None:
        """Logs with `monitor` (a ZeusMonitor; default: one on every GPU and CPU).

        Args:
            monitor: the ZeusMonitor to measure with (shared with other callbacks is fine:
                the windows have their own names).
            prefix: put before every logged key (default "zeus/", a group in TensorBoard/W&B).
        """
        if monitor is None:
            from zeus_cpp.monitor import ZeusMonitor  # noqa: PLC0415

            monitor = ZeusMonitor()
        if not isinstance(prefix, str):
            raise TypeError(f"prefix must be a str, not {type(prefix).__name__}")
        self.monitor = monitor
        self.prefix = prefix
        self.pending: Dict[str, float] = {}
        self.epoch_logs: list = []
        self.train_logs: Optional[Dict[str, float]] = None

    def attach(self, trainer: Any) -> "_HFEnergyCallbackMixin":
        """Puts this callback first in `trainer`'s callbacks, ahead of the report_to ones.

        Trainer calls on_log on its callbacks in order and the report_to callbacks come first;
        from the front, the energy added to a log reaches every backend.
        """
        callbacks = trainer.callback_handler.callbacks
        if self in callbacks:
            callbacks.remove(self)
        callbacks.insert(0, self)
        return self

    def on_train_begin(self, args, state, control, **kwargs):  # noqa: ANN001
        """Opens the run's window."""
        self.monitor.begin_window(self._RUN, restart=True)

    def on_epoch_begin(self, args, state, control, **kwargs):  # noqa: ANN001
        """Opens the epoch's window."""
        self.monitor.begin_window(self._EPOCH, restart=True)

    def on_epoch_end(self, args, state, control, **kwargs):  # noqa: ANN001
        """Measures the epoch and asks Trainer to log now (the energy joins that log)."""
        if not self.monitor.is_window_open(self._EPOCH):
            return control
        logs = _energy_logs(self.prefix + "epoch", self.monitor.end_window(self._EPOCH))
        self.epoch_logs.append(logs)
        self.pending.update(logs)
        control.should_log = True
        return control

    def on_log(self, args, state, control, logs=None, **kwargs):  # noqa: ANN001
        """Adds what was measured since the last log to `logs` and to the history entry."""
        if logs is None:
            return control
        if "train_runtime" in logs and self.monitor.is_window_open(self._RUN):
            self.train_logs = _energy_logs(self.prefix + "train", self.monitor.end_window(self._RUN))
            self.pending.update(self.train_logs)
        if self.pending:
            logs.update(self.pending)
            if state.log_history:
                state.log_history[-1].update(self.pending)
            self.pending = {}
        return control

    def on_train_end(self, args, state, control, **kwargs):  # noqa: ANN001
        """Ends the run's window if no final log did (then it joins the history only)."""
        if self.monitor.is_window_open(self._EPOCH):
            self.monitor.end_window(self._EPOCH, cancel=True)
        if self.monitor.is_window_open(self._RUN):
            self.train_logs = _energy_logs(self.prefix + "train", self.monitor.end_window(self._RUN))
            state.log_history.append({**self.train_logs, "step": getattr(state, "global_step", 0)})


class _HFPowerLimitMixin:
    """HFGlobalPowerLimitOptimizer's behaviour (combined with the TrainerCallback base)."""

    def __init__(
        self,
        monitor: Any,
        optimum_selector: Any = None,
        wait_steps: int = 1,
        warmup_steps: int = 10,
        profile_steps: int = 40,
        pl_step: int = 25,
        profile_path: Any = None,
    ) -> None:
        """GlobalPowerLimitOptimizer's arguments; the optimizer is `self.optimizer`."""
        from zeus_cpp.optimizer.power_limit import GlobalPowerLimitOptimizer  # noqa: PLC0415

        self.optimizer = GlobalPowerLimitOptimizer(
            monitor=monitor,
            optimum_selector=optimum_selector,
            wait_steps=wait_steps,
            warmup_steps=warmup_steps,
            profile_steps=profile_steps,
            pl_step=pl_step,
            profile_path=profile_path,
        )

    def on_train_begin(self, args, state, control, **kwargs):  # noqa: ANN001
        """Forwards to the optimizer."""
        self.optimizer.on_train_begin()

    def on_train_end(self, args, state, control, **kwargs):  # noqa: ANN001
        """Forwards to the optimizer."""
        self.optimizer.on_train_end()

    def on_epoch_begin(self, args, state, control, **kwargs):  # noqa: ANN001
        """Forwards to the optimizer."""
        self.optimizer.on_epoch_begin()

    def on_epoch_end(self, args, state, control, **kwargs):  # noqa: ANN001
        """Marks the end of a training epoch."""
        self.optimizer.on_epoch_end()

    def on_step_begin(self, args, state, control, **kwargs):  # noqa: ANN001
        """Marks the beginning of a training step (drives the profiler)."""
        self.optimizer.on_step_begin()

    def on_step_end(self, args, state, control, **kwargs):  # noqa: ANN001
        """Forwards to the optimizer."""
        self.optimizer.on_step_end()


@functools.lru_cache(maxsize=None)
def hf_power_limit_optimizer_class() -> type:
    """HFGlobalPowerLimitOptimizer on the TrainerCallback base (built on first use)."""
    return type("HFGlobalPowerLimitOptimizer", (_HFPowerLimitMixin, trainer_callback_base()),
                {"__doc__": "GlobalPowerLimitOptimizer as a Hugging Face TrainerCallback.",
                 "__module__": "zeus_cpp.optimizer.power_limit"})


@functools.lru_cache(maxsize=None)
def hf_energy_callback_class() -> type:
    """HFEnergyCallback on the TrainerCallback base (built on first use)."""
    return type("HFEnergyCallback", (_HFEnergyCallbackMixin, trainer_callback_base()),
                {"__doc__": "Logs each epoch's and the run's energy into the Trainer's logs.",
                 "__module__": __name__})


def __getattr__(name: str) -> Any:
    if name == "HFEnergyCallback":
        return hf_energy_callback_class()
    if name == "HFGlobalPowerLimitOptimizer":
        return hf_power_limit_optimizer_class()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
