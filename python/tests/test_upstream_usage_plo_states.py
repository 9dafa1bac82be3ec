"""GlobalPowerLimitOptimizer's state objects as upstream users read them (zeus.optimizer.power_limit:
Ready, Warmup, Profiling, Done; power limits in mW), on the fake NVML."""

from __future__ import annotations

import dataclasses
import json
import time

import pytest

from zeus_cpp.monitor import ZeusMonitor
from zeus_cpp.optimizer.power_limit import (
    Done,
    Energy,
    GlobalPowerLimitOptimizer,
    MaxSlowdownConstraint,
    Profiling,
    Ready,
    Time,
    Warmup,
)

from conftest import fake_device


def make_plo(fake_nvml, tmp_path=None, **kwargs):
    """An optimizer over one fake GPU drawing 300 W with limits 100..300 W (candidates 300, 200,
    100 W with pl_step=100)."""
    fake_nvml.write([fake_device(power_draw_w=300, min_limit_w=100, max_limit_w=300)])
    monitor = ZeusMonitor(gpu_indices=[0], cpu_indices=[], sync_execution_with=None)
    options = dict(optimum_selector=Energy(), wait_steps=1, warmup_steps=2, profile_steps=3, pl_step=100)
    options.update(kwargs)
    return GlobalPowerLimitOptimizer(monitor, **options)


def step(plo):
    plo.on_step_begin()
    time.sleep(0.01)  # the fake GPU's energy grows with wall time
    plo.on_step_end()


def test_state_classes_have_upstreams_fields():
    assert [f.name for f in dataclasses.fields(Ready)] == ["next_power_limit", "steps"]
    assert [f.name for f in dataclasses.fields(Warmup)] == ["current_power_limit", "steps"]
    assert [f.name for f in dataclasses.fields(Profiling)] == ["current_power_limit", "steps"]
    assert [f.name for f in dataclasses.fields(Done)] == ["optimal_power_limit"]
    done = Done(optimal_power_limit=175_000)
    assert done.optimal_power_limit == 175_000 and repr(done) == "Done(optimal_power_limit=175000)"
    assert Warmup(current_power_limit=300_000, steps=10) == Warmup(current_power_limit=300_000, steps=10)
    assert Warmup(current_power_limit=300_000, steps=10) != Profiling(current_power_limit=300_000, steps=10)


@pytest.mark.parametrize("build", [
    lambda: Ready(next_power_limit=0, steps=1),
    lambda: Warmup(current_power_limit=300_000, steps=-1),
    lambda: Profiling(current_power_limit=300_000, steps=0),
    lambda: Done(optimal_power_limit=-5),
    lambda: Done(optimal_power_limit="high"),
])
def test_fields_must_be_positive_integers_as_upstreams_pydantic_models(build):
    with pytest.raises(ValueError, match="must be a positive integer"):
        build()


def test_state_walks_upstreams_machine_step_by_step(fake_nvml):
    plo = make_plo(fake_nvml)
    expected = [Ready(next_power_limit=300_000, steps=2)]  # before any step: wait_steps + 1
    expected += [Ready(next_power_limit=300_000, steps=1)]
    for limit_mw in (300_000, 200_000, 100_000):
        expected += [Warmup(current_power_limit=limit_mw, steps=2), Warmup(current_power_limit=limit_mw, steps=1)]
        expected += [Profiling(current_power_limit=limit_mw, steps=s) for s in (3, 2, 1)]
    seen = [plo.state]
    for _ in range(len(expected) - 1):
        step(plo)
        seen.append(plo.state)
    assert seen == expected
    step(plo)  # the last profiling window closes: the optimum is selected and set
    assert isinstance(plo.state, Done)
    # The fake draws min(300 W, limit) at the same speed: 100 W costs the least energy.
    assert plo.state.optimal_power_limit == 100_000
    assert plo.state.optimal_power_limit // 1000 == plo.optimal_power_limit
    assert fake_nvml.limit_w() == 100
    step(plo)
    assert plo.state == Done(optimal_power_limit=100_000)


@pytest.mark.parametrize("wait_steps", [0, 1, 3])
def test_ready_lasts_wait_steps_plus_one_step_begins(fake_nvml, wait_steps):
    plo = make_plo(fake_nvml, wait_steps=wait_steps)
    for _ in range(wait_steps):
        step(plo)
        assert isinstance(plo.state, Ready), plo.state
    assert fake_nvml.limit_log_w() == [300]  # only the maximum, set at construction
    step(plo)
    assert plo.state == Warmup(current_power_limit=300_000, steps=2)


def test_upstream_training_loop_sees_ready_during_the_wait(fake_nvml):
    """upstream's tests/optimizer/test_power_limit_optimizer.py training_loop, ported."""
    plo = make_plo(fake_nvml, wait_steps=1)
    wait_steps = 1
    for epoch in range(2):
        plo.on_epoch_begin()
        for batch_index in range(20):
            plo.on_step_begin()
            if wait_steps > 0 and epoch == 0 and batch_index < wait_steps:
                assert isinstance(plo.state, Ready)
            time.sleep(0.01)
            plo.on_step_end()
        plo.on_epoch_end()
    assert isinstance(plo.state, Done)


def test_epoch_end_sends_warmup_and_profiling_back_to_ready(fake_nvml):
    plo = make_plo(fake_nvml)
    for _ in range(3):
        step(plo)
    assert plo.state == Warmup(current_power_limit=300_000, steps=1)
    plo.on_epoch_end()  # interrupted during warm-up: upstream's Ready(next=current, steps=1)
    assert plo.state == Ready(next_power_limit=300_000, steps=1)
    step(plo)
    assert plo.state == Warmup(current_power_limit=300_000, steps=2)
    step(plo)
    step(plo)
    assert plo.state == Profiling(current_power_limit=300_000, steps=3)
    step(plo)
    plo.on_epoch_end()  # interrupted during profiling: the window is dropped
    assert plo.state == Ready(next_power_limit=300_000, steps=1)
    assert plo.measurements == []
    plo.on_epoch_end()  # nothing to interrupt in Ready
    assert plo.state == Ready(next_power_limit=300_000, steps=1)
    while not (isinstance(plo.state, Warmup) and plo.state.current_power_limit == 200_000):
        step(plo)
    assert [m.power_limit for m in plo.measurements] == [300]
    assert fake_nvml.limit_w() == 200
    plo.on_epoch_end()  # the next limit is the interrupted one; the maximum is back meanwhile
    assert plo.state == Ready(next_power_limit=200_000, steps=1)
    assert fake_nvml.limit_w() == 300


def test_state_is_a_snapshot(fake_nvml):
    plo = make_plo(fake_nvml)
    snapshot = plo.state
    snapshot.steps = 99
    assert plo.state == Ready(next_power_limit=300_000, steps=2)


def test_loaded_profile_starts_in_done_with_each_selectors_optimum(fake_nvml, tmp_path):
    path = tmp_path / "power_limit_optimizer.json"
    plo = make_plo(fake_nvml, profile_path=path)
    while not isinstance(plo.state, Done):
        step(plo)
    measurements = json.loads(path.read_text())["measurements"]
    del plo

    alive = []  # a collected optimizer puts the maximum back (zeus_cpp; upstream: at exit)

    def loaded(selector):
        alive.append(GlobalPowerLimitOptimizer(ZeusMonitor(gpu_indices=[0], cpu_indices=[]),
                                               optimum_selector=selector, pl_step=100, profile_path=path))
        return alive[-1]

    temp_plo = loaded(Energy())
    assert isinstance(temp_plo.state, Done)
    least_energy = min(measurements, key=lambda m: m["energy"])["power_limit"]
    assert temp_plo.state.optimal_power_limit == least_energy * 1000 == 100_000
    temp_plo = loaded(Time())
    assert isinstance(temp_plo.state, Done)
    fastest = min(measurements, key=lambda m: m["time"])["power_limit"]
    assert temp_plo.state.optimal_power_limit == fastest * 1000
    temp_plo = loaded(MaxSlowdownConstraint(factor=100.0))
    assert temp_plo.state == Done(optimal_power_limit=100_000)  # every limit is within 100x
    assert fake_nvml.limit_w() == 100
