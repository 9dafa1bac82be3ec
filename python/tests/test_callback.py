"""zeus_cpp.callback: Zeus's Callback base (every hook a no-op) and CallbackSet."""

import pytest

from zeus_cpp.callback import Callback, CallbackSet
from zeus_cpp.optimizer.pipeline_frequency import PipelineFrequencyOptimizer
from zeus_cpp.optimizer.power_limit import GlobalPowerLimitOptimizer

HOOKS = [
    ("on_train_begin", ()),
    ("on_epoch_begin", ()),
    ("on_step_begin", ()),
    ("on_instruction_begin", ("forward",)),
    ("on_instruction_end", ("forward",)),
    ("on_step_end", ()),
    ("on_epoch_end", ()),
    ("on_evaluate", (0.5,)),
    ("on_train_end", ()),
]


class Recorder(Callback):
    def __init__(self, name, log):
        self.name = name
        self.log = log

    def on_step_begin(self):
        self.log.append((self.name, "on_step_begin"))

    def on_instruction_begin(self, name):
        self.log.append((self.name, "on_instruction_begin", name))

    def on_evaluate(self, metric):
        self.log.append((self.name, "on_evaluate", metric))


def test_every_hook_of_the_base_does_nothing():
    callback = Callback()
    for hook, args in HOOKS:
        assert getattr(callback, hook)(*args) is None


def test_callback_set_calls_each_callback_in_order_and_skips_hooks_they_lack():
    log = []
    callbacks = CallbackSet([Recorder("a", log), Recorder("b", log)])
    for hook, args in HOOKS:
        getattr(callbacks, hook)(*args)
    assert log == [
        ("a", "on_step_begin"),
        ("b", "on_step_begin"),
        ("a", "on_instruction_begin", "forward"),
        ("b", "on_instruction_begin", "forward"),
        ("a", "on_evaluate", 0.5),
        ("b", "on_evaluate", 0.5),
    ]


def test_callback_set_refuses_what_is_not_a_callback():
    with pytest.raises(TypeError, match="subclass zeus_cpp.callback.Callback"):
        CallbackSet([Callback(), object()])


def test_the_optimizers_are_callbacks_with_every_hook():
    # A loop that calls every hook on a CallbackSet of optimizers (as upstream's training
    # scripts do) finds each hook on both, the ones they do not use included.
    for cls in (GlobalPowerLimitOptimizer, PipelineFrequencyOptimizer):
        assert issubclass(cls, Callback)
        for hook, _ in HOOKS:
            assert callable(getattr(cls, hook)), (cls.__name__, hook)
    assert PipelineFrequencyOptimizer.on_epoch_begin is Callback.on_epoch_begin
    assert PipelineFrequencyOptimizer.on_evaluate is Callback.on_evaluate
