"""Perseus's straggler step from Python: 2 stages x 2 pipelines (4 gloo processes on CPU, each
on its own fake GPU) under `zeus pfo serve --scheduler frontier`, the frontier `zeus pfo plan`
makes from a stage profile written here. The operator reports pipeline 1 straggling at
T' = 1.06 x T_min: pipeline 0's GPUs switch to exactly the plan `zeus pfo choose` picks for T',
pipeline 1's keep the fastest plan, and every clock is unlocked at exit."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("torch")

from pfo_helpers import (CLOCKS_MHZ, all_unlocked, check_switched_pipelines,  # noqa: E402
                         clock_log, report_straggler, run_frontier_job, write_gpus,
                         zeus_cli)

STAGES, WORLD, MICROBATCHES = 2, 4, 4


def write_profile(path: Path) -> None:
    """Times ~ 1 / clock (the worker's 4 and 8 ms at the top), power ~ 100 W + 300 W x f^3."""
    rows = ["stage,instruction,frequency,time,energy"]
    for stage in range(STAGES):
        for name, ms in (("forward", 4), ("backward", 8)):
            for mhz in CLOCKS_MHZ[:-1]:
                t = ms * 1e-3 * CLOCKS_MHZ[0] / mhz
                watts = 100 + 300 * (mhz / CLOCKS_MHZ[0]) ** 3
                rows.append(f"{stage},{name},{mhz},{t:.7f},{watts * t:.7f}")
    path.write_text("\n".join(rows) + "\n")


@pytest.fixture
def planned(tmp_path, fake_nvml):
    """The frontier of the written profile; its fastest plan and `zeus pfo choose`'s plan for
    T' = 1.06 x T_min."""
    write_gpus(fake_nvml.path, WORLD)
    write_profile(tmp_path / "profile.csv")
    plans = tmp_path / "plans"
    zeus_cli("pfo", "plan", "--profile", str(tmp_path / "profile.csv"), "--stages", str(STAGES),
         "--microbatches", str(MICROBATCHES), "--p2p-power", "50", "--out", str(plans))
    zeus_cli("pfo", "export-plan", "--plans", str(plans), "--fastest", "--out",
         str(tmp_path / "fastest.json"))
    fastest = json.loads((tmp_path / "fastest.json").read_text())
    t_prime = 1.06 * fastest["time"]
    zeus_cli("pfo", "choose", "--plans", str(plans), "--straggler-time", repr(t_prime), "--out",
         str(tmp_path / "chosen.json"))
    chosen = json.loads((tmp_path / "chosen.json").read_text())
    return plans, fastest, t_prime, chosen


def test_the_operator_straggler_switches_the_other_pipeline(tmp_path, fake_nvml, planned):
    plans, fastest, t_prime, chosen = planned

    line = run_frontier_job(tmp_path, plans, WORLD, STAGES,
                            lambda url, job: report_straggler(url, job, t_prime, 1))
    assert "(operator, pipeline 1)" in line and f"plan {chosen['plan']}" in line, line
    check_switched_pipelines(fake_nvml.path, WORLD, STAGES, fastest,
                             [[mhz for _, mhz in stage] for stage in chosen["frequencies"]])


def test_a_measured_straggler_switches_the_other_pipeline(tmp_path, fake_nvml, planned):
    # Pipeline 1's instructions take 6 x longer from iteration 5 (round 1) on: the server
    # measures it from the reported results and, from round 2, serves pipeline 0 the combined
    # policy's pick for T' ~ 6 x T_min, one global clock (past every plan, the cheapest option).
    plans, fastest, _, _ = planned
    line = run_frontier_job(tmp_path, plans, WORLD, STAGES, lambda url, job: None, slow=(5, 6.0))
    assert "(measured, pipeline 1): global clock" in line, line
    mhz = int(line.split("global clock ", 1)[1].split()[0])
    assert all_unlocked(fake_nvml.path)
    for stage in range(STAGES):
        switched, straggler = clock_log(fake_nvml.path, stage), clock_log(fake_nvml.path, 2 + stage)
        fastest_clocks = set(fastest["frequencies"][stage]) | {CLOCKS_MHZ[0], 0}
        assert set(straggler) <= fastest_clocks, straggler
        # One clock for every instruction: pipeline 0's log ends on the global clock; where the
        # fastest plan changes clocks within an iteration, pipeline 0 stops changing them at the
        # switch (the controller skips unchanged ones) while the straggler goes on all 20
        # iterations; where it runs one clock, the straggler never sees the global one.
        assert switched[-2:] == [mhz, 0], switched
        if len(set(fastest["frequencies"][stage])) > 1:
            assert len(switched) < 0.75 * len(straggler), (switched, straggler)
        else:
            assert mhz not in straggler, (switched, straggler)
