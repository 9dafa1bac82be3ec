"""The Hugging Face callbacks through a stand-in of Trainer's callback protocol (trainer_stand_in).

transformers is not a Debian package: without it the callbacks subclass the stand-in base with
TrainerCallback's hooks; the stand-in Trainer calls them with (args, state, control, **kwargs)
like transformers 4.x does. The GPU is the fake NVML's H100 drawing 350 W.
"""

from __future__ import annotations

import time

import pytest

import zeus_cpp.optimizer.power_limit as power_limit
from zeus_cpp.integrations import huggingface
from zeus_cpp.integrations.huggingface import TRAINER_HOOKS, HFEnergyCallback, trainer_callback_base
from zeus_cpp.monitor import ZeusMonitor
from zeus_cpp.optimizer.power_limit import Done, Energy, GlobalPowerLimitOptimizer, HFGlobalPowerLimitOptimizer

from conftest import fake_device
from trainer_stand_in import StandInTrainer, TrainingArguments


def test_the_base_is_transformers_or_the_stand_in_with_every_hook():
    base = trainer_callback_base()
    try:
        import transformers  # noqa: F401
        assert base.__name__ == "TrainerCallback"
    except ImportError:
        assert base is huggingface.TrainerCallbackStandIn
    for hook in TRAINER_HOOKS:
        assert callable(getattr(base, hook))
    assert issubclass(HFEnergyCallback, base) and issubclass(HFGlobalPowerLimitOptimizer, base)
    # One class however it is reached.
    assert power_limit.HFGlobalPowerLimitOptimizer is HFGlobalPowerLimitOptimizer
    with pytest.raises(AttributeError):
        power_limit.NoSuchThing  # noqa: B018


def test_power_limit_optimizer_profiles_through_the_trainer_hooks(fake_nvml):
    fake_nvml.write([fake_device(power_draw_w=300, min_limit_w=100, max_limit_w=300)])
    monitor = ZeusMonitor(gpu_indices=[0], cpu_indices=[])
    callback = HFGlobalPowerLimitOptimizer(
        monitor, optimum_selector=Energy(), wait_steps=0, warmup_steps=1, profile_steps=2, pl_step=100
    )
    assert isinstance(callback.optimizer, GlobalPowerLimitOptimizer)
    # Steps of 25 ms: a profile window (two steps) is 50 ms, so a busy machine's scheduling delays
    # of a few ms cannot make the lowest limit's window the costlier one (with 5 ms steps they did).
    trainer = StandInTrainer([callback], steps_per_epoch=12, step=lambda: time.sleep(0.025),
                             args=TrainingArguments(num_train_epochs=2))
    trainer.train()
    assert callback.optimizer.power_limits == [300, 200, 100]
    assert isinstance(callback.optimizer.state, Done)
    assert [m.power_limit for m in callback.optimizer.measurements] == [300, 200, 100]
    # The fake draws min(300 W, limit) at the same speed: the lowest limit costs least energy.
    assert callback.optimizer.optimal_power_limit == 100
    assert fake_nvml.limit_log_w()[:3] == [300, 200, 100]
    assert fake_nvml.limit_w() == 100


def test_energy_callback_logs_each_epoch_and_the_run_to_the_report_backends(fake_nvml):
    monitor = ZeusMonitor(gpu_indices=[0], cpu_indices=[])
    energy = HFEnergyCallback(monitor)
    trainer = StandInTrainer([], steps_per_epoch=5, step=lambda: time.sleep(0.02),
                             args=TrainingArguments(num_train_epochs=3, logging_steps=4))
    assert energy.attach(trainer) is energy
    assert trainer.callback_handler.callbacks[0] is energy
    state = trainer.train()

    assert len(energy.epoch_logs) == 3
    for epoch in energy.epoch_logs:
        # ~0.1 s per epoch at 350 W.
        assert epoch["zeus/epoch_energy_j"] == pytest.approx(350 * epoch["zeus/epoch_time_s"], rel=0.05)
        assert epoch["zeus/epoch_gpu0_energy_j"] == epoch["zeus/epoch_energy_j"]
    run = energy.train_logs
    assert run is not None
    assert run["zeus/train_energy_j"] >= sum(e["zeus/epoch_energy_j"] for e in energy.epoch_logs)
    assert run["zeus/train_energy_j"] == pytest.approx(350 * run["zeus/train_time_s"], rel=0.05)

    # What a report_to backend saw: each epoch's energy in the log right after that epoch, the
    # run's in the final log; and the same in the Trainer's history.
    seen = trainer.report.logged
    with_epoch = [logs for logs in seen if "zeus/epoch_energy_j" in logs]
    assert [logs["zeus/epoch_energy_j"] for logs in with_epoch] == [e["zeus/epoch_energy_j"] for e in energy.epoch_logs]
    assert "train_runtime" in seen[-1] and seen[-1]["zeus/train_energy_j"] == run["zeus/train_energy_j"]
    assert [h["zeus/epoch_energy_j"] for h in state.log_history if "zeus/epoch_energy_j" in h] == [
        e["zeus/epoch_energy_j"] for e in energy.epoch_logs
    ]
    assert state.log_history[-1]["zeus/train_energy_j"] == run["zeus/train_energy_j"]
    assert not monitor.is_window_open("__HFEnergyCallback_train")


def test_energy_callback_without_a_final_log_still_records_the_run(fake_nvml):
    monitor = ZeusMonitor(gpu_indices=[0], cpu_indices=[])
    energy = HFEnergyCallback(monitor, prefix="energy.")
    control = object.__new__(type("Control", (), {}))
    state = type("State", (), {"log_history": [], "global_step": 7})()
    energy.on_train_begin(None, state, control)
    energy.on_epoch_begin(None, state, control)
    time.sleep(0.02)
    energy.on_train_end(None, state, control)  # stopped mid-epoch, no log
    assert "energy.train_energy_j" in state.log_history[-1] and state.log_history[-1]["step"] == 7
    assert not monitor.is_window_open("__HFEnergyCallback_epoch")
    with pytest.raises(TypeError):
        HFEnergyCallback(monitor, prefix=3)
