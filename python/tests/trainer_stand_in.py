"""A stand-in for transformers.Trainer's callback protocol (4.x), for tests without transformers.

It calls the callbacks the way `Trainer._inner_training_loop` does: on_train_begin; per epoch
on_epoch_begin, per step on_step_begin / (work) / on_step_end then a log when
`control.should_log`; on_epoch_end then a log when `control.should_log`; the final log carrying
`train_runtime`; on_train_end. `log()` appends a copy of the logs (plus the step) to
`state.log_history` and then calls on_log(args, state, control, logs=logs) on each callback in
order, like `Trainer.log`. Like CallbackHandler, on_step_begin and on_epoch_begin clear
`should_log`, and a hook's returned control replaces the handler's.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List


@dataclass
class TrainingArguments:
    num_train_epochs: int = 2
    logging_steps: int = 1000
    report_to: List[str] = field(default_factory=lambda: ["stand_in"])


@dataclass
class TrainerState:
    epoch: float = 0.0
    global_step: int = 0
    log_history: List[Dict[str, float]] = field(default_factory=list)


@dataclass
class TrainerControl:
    should_log: bool = False
    should_training_stop: bool = False


class CallbackHandler:
    def __init__(self, callbacks: List[Any]) -> None:
        self.callbacks = list(callbacks)

    def call_event(self, event: str, args, state, control, **kwargs):
        if event in ("on_step_begin", "on_epoch_begin"):
            control.should_log = False
        for callback in self.callbacks:
            result = getattr(callback, event)(args, state, control, model="model", **kwargs)
            if result is not None:
                control = result
        return control


class ReportTo:
    """What a report_to backend (TensorBoard, W&B) receives: every on_log's logs."""

    def __init__(self) -> None:
        self.logged: List[Dict[str, float]] = []

    def __getattr__(self, name: str):
        if name.startswith("on_"):
            return lambda args, state, control, **kwargs: None
        raise AttributeError(name)

    def on_log(self, args, state, control, logs=None, **kwargs):
        self.logged.append(dict(logs))


class StandInTrainer:
    def __init__(self, callbacks: List[Any], steps_per_epoch: int, step: Callable[[], None],
                 args: TrainingArguments = None) -> None:
        self.args = args or TrainingArguments()
        self.state = TrainerState()
        self.control = TrainerControl()
        self.report = ReportTo()
        # Trainer: the default and report_to callbacks first, then the ones given.
        self.callback_handler = CallbackHandler([self.report] + list(callbacks))
        self.steps_per_epoch = steps_per_epoch
        self.step = step

    def _event(self, event: str, **kwargs) -> None:
        self.control = self.callback_handler.call_event(event, self.args, self.state, self.control, **kwargs)

    def log(self, logs: Dict[str, float]) -> None:
        logs["epoch"] = self.state.epoch
        self.state.log_history.append({**logs, "step": self.state.global_step})
        self._event("on_log", logs=logs)

    def _maybe_log(self) -> None:
        if self.control.should_log:
            self.log({"loss": 1.0 / (1 + self.state.global_step)})
            self.control.should_log = False

    def train(self) -> TrainerState:
        start = time.monotonic()
        self._event("on_train_begin")
        for epoch in range(self.args.num_train_epochs):
            self._event("on_epoch_begin")
            for step in range(self.steps_per_epoch):
                self._event("on_step_begin")
                self.step()
                self.state.global_step += 1
                self.state.epoch = epoch + (step + 1) / self.steps_per_epoch
                self._event("on_step_end")
                if self.state.global_step % self.args.logging_steps == 0:
                    self.control.should_log = True
                self._maybe_log()
            self._event("on_epoch_end")
            self._maybe_log()
        self.log({"train_runtime": time.monotonic() - start, "train_loss": 0.5})
        self._event("on_train_end")
        return self.state
