"""zeus_cpp.optimizer.pipeline_frequency.PipelineFrequencyOptimizer in one process: a one-stage
job against `zeus pfo serve` on 127.0.0.1, on the fake NVML (clock log on)."""

from __future__ import annotations

import json
import threading
import time

import pytest

from pfo_helpers import (all_unlocked, clock_log, expected_log, start_pfo_server,
                         stop_pfo_server, write_gpus, write_json)
from zeus_cpp import InvalidArgumentError, UnavailableError
from zeus_cpp.optimizer.pipeline_frequency import PipelineFrequencyOptimizer

SCHEDULE = [("forward", 1500), ("forward", 900), ("backward", 1200), ("backward", 600)]


@pytest.fixture
def server(tmp_path, fake_nvml):
    write_gpus(fake_nvml.path, 1)
    schedule = write_json(tmp_path / "schedule.json", [[list(e) for e in SCHEDULE]])
    process, url = start_pfo_server(tmp_path / "server.log", "--scheduler", "point-solution",
                                    "--schedule", str(schedule), "--dump", str(tmp_path / "dump"))
    yield url
    stop_pfo_server(process)


def make(url: str, **kwargs) -> PipelineFrequencyOptimizer:
    return PipelineFrequencyOptimizer(0, 0, 0, 0, 0, 1, 1, 1, 1, url, **kwargs)


def run_step(pfo: PipelineFrequencyOptimizer, names) -> None:
    pfo.on_step_begin()
    for name in names:
        pfo.on_instruction_begin(name)
        pfo.wait_for_clock()
        time.sleep(0.002)
        pfo.on_instruction_end(name)
    pfo.on_step_end()


def test_clocks_follow_the_schedule_and_results_reach_the_server(server, fake_nvml, tmp_path):
    pfo = make(server, job_metadata="py", steps_per_round=2)
    assert pfo.job_id.endswith("+dp1+pp1+tp1+PointSolution+py")
    assert pfo.schedule == SCHEDULE and pfo.rounds == 1
    for _ in range(4):
        run_step(pfo, [name for name, _ in SCHEDULE])
    assert pfo.rounds == 3
    pfo.stop()
    pfo.stop()  # idempotent
    assert clock_log(fake_nvml.path, 0) == expected_log(SCHEDULE, 4)
    assert all_unlocked(fake_nvml.path)
    assert pfo.controller_stats["failed"] == 0
    (job,) = (tmp_path / "dump").iterdir()
    for n in range(2):
        (result,) = json.loads((job / f"{n}.prof.json").read_text())
        assert len(result["iter_time"]) == 2
        assert all(t >= 0.002 for ts in result["time_breakdown"]["forward"] for t in ts)
        assert all(e > 0 for es in result["energy_breakdown"]["backward"] for e in es)
    with pytest.raises(InvalidArgumentError):
        pfo.on_step_begin()  # stopped


def test_a_name_off_the_schedule_raises_with_the_cores_message(server):
    pfo = make(server)
    pfo.on_step_begin()
    with pytest.raises(InvalidArgumentError, match="backward"):
        pfo.on_instruction_begin("backward")  # the schedule starts with a forward
    pfo.on_step_begin()  # the abandoned iteration does not stick
    pfo.on_instruction_begin("forward")
    pfo.on_instruction_end("forward")
    with pytest.raises(InvalidArgumentError):
        pfo.on_step_end()  # three instructions were left
    pfo.stop()


def test_several_ranks_without_torch_distributed_name_the_fix(server):
    with pytest.raises(InvalidArgumentError, match="init_process_group"):
        PipelineFrequencyOptimizer(0, 0, 0, 0, 0, 1, 2, 1, 2, server)


def test_an_unreachable_server_raises_and_leaves_the_clocks_unlocked(fake_nvml):
    write_gpus(fake_nvml.path, 1)
    with pytest.raises(UnavailableError):
        make("http://127.0.0.1:9", timeout_s=2.0)
    assert all_unlocked(fake_nvml.path)


def test_wrong_types_raise_type_error(server):
    with pytest.raises(TypeError, match="device_id"):
        PipelineFrequencyOptimizer(0, 0, 0, 0, "0", 1, 1, 1, 1, server)


def test_the_gil_is_released_while_the_first_schedule_is_awaited(tmp_path, fake_nvml):
    # world_size 2 through a broadcast that hands over the id: the barrier waits for rank 1,
    # which never comes; a Python thread keeps running meanwhile, and the server's rank timeout
    # ends the wait with an error.
    from zeus_cpp import _zeus_cpp

    write_gpus(fake_nvml.path, 1)
    schedule = write_json(tmp_path / "s.json", [[["forward", 900]], [["forward", 900]]])
    process, url = start_pfo_server(tmp_path / "server.log", "--scheduler", "point-solution",
                                    "--schedule", str(schedule), "--rank-timeout", "2")
    ticks = []
    stop = threading.Event()
    ticker = threading.Thread(target=lambda: [ticks.append(1) or time.sleep(0.01)
                                              for _ in iter(stop.is_set, True)])
    ticker.start()
    try:
        with pytest.raises(UnavailableError, match="rank 1 never registered"):
            _zeus_cpp.PipelineFrequencyOptimizer(url, 0, 0, 0, 0, 0, 1, 2, 1, 2,
                                                 broadcast=lambda value: value)
    finally:
        stop.set()
        ticker.join()
        stop_pfo_server(process)
    assert len(ticks) > 20
    assert all_unlocked(fake_nvml.path)


def test_an_exception_in_the_broadcast_is_raised_as_is(tmp_path, fake_nvml):
    from zeus_cpp import _zeus_cpp

    write_gpus(fake_nvml.path, 1)

    def broken(value: str) -> str:
        raise ConnectionError("the process group is gone")

    with pytest.raises(ConnectionError, match="process group is gone"):
        _zeus_cpp.PipelineFrequencyOptimizer("http://127.0.0.1:9", 0, 1, 0, 1, 0, 1, 2, 1, 2,
                                             broadcast=broken)
    assert all_unlocked(fake_nvml.path)
