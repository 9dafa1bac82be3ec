"""The whole Perseus loop from Python: profile -> plan -> Frontier -> straggler.

2 stages x 2 pipelines (4 gloo processes on CPU, each on its own fake GPU whose power follows the
locked SM clock: 100 W + 300 W x (f / 1980)^3). The ranks' instructions are clock-bound sleeps
(x 1980 / clock), so the online profiler (`zeus pfo serve --scheduler profiler`) measures time and
energy that change with the clock: two warm-up rounds at the top clock, one round per clock down to
the 900 MHz floor, then "[profiling-done]" stops every rank. Its stage profile, built only from
what the Python clients measured and reported, goes through `zeus pfo plan`; the same ranks then
train under `--scheduler frontier` on that frontier, and the operator's straggler report makes
pipeline 0 switch to exactly the plan `zeus pfo choose` picks, while pipeline 1 keeps the fastest.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Dict, List

import pytest

pytest.importorskip("torch")

from pfo_helpers import (CLOCKS_MHZ, all_unlocked, check_switched_pipelines,  # noqa: E402
                         rank_errors, report_straggler, run_frontier_job, start_pfo_server,
                         start_rank_workers, stop_pfo_server, write_gpus, zeus_cli)

STAGES, WORLD, MICROBATCHES = 2, 4, 4
FLOOR_MHZ = 900
PROFILED_MHZ = [mhz for mhz in CLOCKS_MHZ if mhz >= FLOOR_MHZ]


def clock_power() -> Dict[str, int]:
    return {str(f): int(100000 + 300000 * (f / CLOCKS_MHZ[0]) ** 3) for f in CLOCKS_MHZ}


def profile_online(tmp_path: Path) -> Path:
    """Runs the ranks under the online profiler until it is done; the stage profile it wrote."""
    dump = tmp_path / "dump"
    args = json.dumps({"num_microbatches": MICROBATCHES, "minimum_frequency": FLOOR_MHZ})
    server, url = start_pfo_server(tmp_path / "profiler.log", "--scheduler", "profiler",
                                   "--scheduler-args", args, "--dump", str(dump))
    try:
        ranks = start_rank_workers(tmp_path, url, "profile", WORLD, STAGES, iterations=1000,
                                   steps_per_round=4, clock_bound=True)
        for rank in ranks:
            rank.communicate(timeout=240)
            assert rank.returncode == 0, rank_errors(tmp_path, "profile", WORLD)
    finally:
        stop_pfo_server(server)
    for rank in range(WORLD):
        assert "[profiling-done]" in (tmp_path / f"profile.{rank}.err").read_text(), \
            rank_errors(tmp_path, "profile", WORLD)
    (profile,) = dump.glob("*/stage_profile.csv")
    return profile


def check_profile(rows: List[Dict[str, str]]) -> None:
    """Every profiled clock, both stages and instructions; time and energy follow the fake."""
    clocks = sorted({int(r["frequency"]) for r in rows}, reverse=True)
    assert clocks == PROFILED_MHZ, clocks
    assert len(rows) == STAGES * 2 * len(clocks), len(rows)
    assert all(float(r["time"]) > 0 and float(r["energy"]) > 0 for r in rows), rows

    def total(column: str, mhz: int) -> float:
        return sum(float(r[column]) for r in rows if int(r["frequency"]) == mhz)

    # Summed over stages and instructions, so one overslept sleep does not decide: times grow
    # as 1 / f (2.2 x at 900 MHz); energy per instruction is (100 + 300 x^3) / x in x = f / 1980,
    # least at 1200 MHz (0.76 x the top clock's).
    assert total("time", 900) > 1.4 * total("time", 1980), [total("time", f) for f in clocks]
    assert total("energy", 1200) < 0.9 * total("energy", 1980), \
        [total("energy", f) for f in clocks]


def test_profile_plan_and_straggle_from_python(tmp_path, fake_nvml):
    write_gpus(fake_nvml.path, WORLD, power_draw_mw_by_sm_mhz=clock_power())
    profile = profile_online(tmp_path)
    assert all_unlocked(fake_nvml.path)
    with profile.open() as f:
        rows = list(csv.DictReader(f))
    check_profile(rows)
    # The 3D rule merged the two pipelines' ranks of a stage: one row per stage, instruction
    # and clock, with Zeus's rank columns.
    assert {"rank", "dp_rank", "pp_rank", "tp_rank"} <= set(rows[0]), rows[0]
    state = json.loads(fake_nvml.path.read_text())  # the next phase's clock logs start empty
    state["sm_clock_log"] = []
    fake_nvml.path.write_text(json.dumps(state))

    plans = tmp_path / "plans"
    zeus_cli("pfo", "plan", "--profile", str(profile), "--stages", str(STAGES),
             "--microbatches", str(MICROBATCHES), "--p2p-power", "50", "--noise", "0.8",
             "--out", str(plans))
    zeus_cli("pfo", "export-plan", "--plans", str(plans), "--fastest", "--out",
             str(tmp_path / "fastest.json"))
    fastest = json.loads((tmp_path / "fastest.json").read_text())
    # A straggler long enough that the least-energy plan finishing by T' lowers some clock.
    t_prime = 1.15 * fastest["time"]
    zeus_cli("pfo", "choose", "--plans", str(plans), "--straggler-time", repr(t_prime),
             "--out", str(tmp_path / "chosen.json"))
    chosen = json.loads((tmp_path / "chosen.json").read_text())
    assert chosen["frequencies"] != fastest["frequencies"], (chosen, fastest)

    line = run_frontier_job(tmp_path, plans, WORLD, STAGES,
                            lambda url, job: report_straggler(url, job, t_prime, 1),
                            clock_bound=True)
    print("served:", line)
    assert "(operator, pipeline 1)" in line, line
    if f"plan {chosen['plan']}" in line:
        switched = [[mhz for _, mhz in stage] for stage in chosen["frequencies"]]
    else:
        # The combined policy found one global clock cheaper at T' than the plan.
        assert "global clock" in line, line
        mhz = int(line.split("global clock ", 1)[1].split()[0])
        switched = [[mhz] for _ in range(STAGES)]
    check_switched_pipelines(fake_nvml.path, WORLD, STAGES, fastest, switched)
