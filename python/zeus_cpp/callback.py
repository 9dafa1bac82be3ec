"""Training-loop callbacks (as `zeus.callback`).

Every hook is a no-op here, so an optimizer overrides only the hooks it needs and a training loop
can call every hook on every callback. `CallbackSet` calls a list of callbacks in order::

    callbacks = CallbackSet([power_limit_optimizer, pipeline_frequency_optimizer])
    callbacks.on_train_begin()
    for epoch in range(epochs):
        callbacks.on_epoch_begin()
        for batch in loader:
            callbacks.on_step_begin(); train(batch); callbacks.on_step_end()
        callbacks.on_epoch_end()
        callbacks.on_evaluate(validation_metric)
    callbacks.on_train_end()
"""

from __future__ import annotations

from typing import Iterable, List


class Callback:
    """Base class of the optimizers' training-loop hooks; each hook does nothing by default."""

    def on_train_begin(self) -> None:
        """Training begins."""

    def on_train_end(self) -> None:
        """Training ends."""

    def on_epoch_begin(self) -> None:
        """An epoch begins."""

    def on_epoch_end(self) -> None:
        """An epoch ends."""

    def on_step_begin(self) -> None:
        """A training step (iteration) begins."""

    def on_step_end(self) -> None:
        """A training step (iteration) ends."""

    def on_evaluate(self, metric: float) -> None:
        """The model was evaluated; `metric` is the validation metric."""

    def on_instruction_begin(self, name: str) -> None:
        """A pipeline instruction (e.g. "forward", "backward") begins."""

    def on_instruction_end(self, name: str) -> None:
        """A pipeline instruction ends."""


class CallbackSet(Callback):
    """Calls each hook on every callback of the list, in the list's order."""

    def __init__(self, callbacks: Iterable[Callback]) -> None:
        self.callbacks: List[Callback] = list(callbacks)
        for callback in self.callbacks:
            if not isinstance(callback, Callback):
                raise TypeError(
                    f"CallbackSet takes Callback objects; got {type(callback).__name__} "
                    "(subclass zeus_cpp.callback.Callback)"
                )

    def on_train_begin(self) -> None:
        for callback in self.callbacks:
            callback.on_train_begin()

    def on_train_end(self) -> None:
        for callback in self.callbacks:
            callback.on_train_end()

    def on_epoch_begin(self) -> None:
        for callback in self.callbacks:
            callback.on_epoch_begin()

    def on_epoch_end(self) -> None:
        for callback in self.callbacks:
            callback.on_epoch_end()

    def on_step_begin(self) -> None:
        for callback in self.callbacks:
            callback.on_step_begin()

    def on_step_end(self) -> None:
        for callback in self.callbacks:
            callback.on_step_end()

    def on_evaluate(self, metric: float) -> None:
        for callback in self.callbacks:
            callback.on_evaluate(metric)

    def on_instruction_begin(self, name: str) -> None:
        for callback in self.callbacks:
            callback.on_instruction_begin(name)

    def on_instruction_end(self, name: str) -> None:
        for callback in self.callbacks:
            callback.on_instruction_end(name)
