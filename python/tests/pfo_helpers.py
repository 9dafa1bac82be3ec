"""Shared pieces of the pipeline-frequency tests: fake GPUs with the SM clock log on, and
`zeus pfo serve` on 127.0.0.1 (a real server process, stopped by the caller)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any, Callable, Dict, List, Tuple

from conftest import fake_device

# The 2-stage x 2-replica job of the Python end-to-end tests: one list per stage in its 1F1B
# order over 4 microbatches (stage 0: FFBFBFBB, stage 1: FBFBFBFB). No clock is the maximum, so
# a locked schedule clock shows in the fake GPU's log.
STAGES, WORLD = 2, 4
SCHEDULE = [
    [("forward", 1755), ("forward", 1500), ("backward", 1200), ("forward", 900),
     ("backward", 600), ("forward", 1755), ("backward", 1500), ("backward", 1200)],
    [("forward", 600), ("backward", 900), ("forward", 1200), ("backward", 1500),
     ("forward", 1755), ("backward", 600), ("forward", 900), ("backward", 1200)],
]

CLOCKS_MHZ = [1980, 1755, 1500, 1200, 900, 600]


def write_gpus(path: Path, count: int, **extra: Any) -> None:
    """`count` fake H100s with CLOCKS_MHZ, their SM clock changes logged in the state file."""
    gpus = [fake_device(memory_clocks_mhz=[2619, 1593], graphics_clocks_mhz=CLOCKS_MHZ, **extra)
            for _ in range(count)]
    path.write_text(json.dumps({"sm_clock_log": [], "devices": gpus}))


def clock_log(path: Path, index: int) -> List[int]:
    """GPU `index`'s locked SM clocks in order (0: unlocked); repeated trailing unlocks once."""
    state = json.loads(path.read_text())
    log = [e["max_mhz"] for e in state.get("sm_clock_log", []) if e["index"] == index]
    while len(log) >= 2 and log[-1] == 0 and log[-2] == 0:
        log.pop()
    return log


def all_unlocked(path: Path) -> bool:
    """True when no GPU of the state file has locked SM or memory clocks."""
    state = json.loads(path.read_text())
    return all(d.get("locked_sm_clocks_mhz") is None and d.get("locked_memory_clocks_mhz") is None
               for d in state["devices"])


def expected_log(stage: List[Tuple[str, int]], iterations: int) -> List[int]:
    """The maximum (the controller's start), the stage's clocks `iterations` times with an
    unchanged clock once (the controller skips it), then 0 (unlocked at exit)."""
    wanted = [CLOCKS_MHZ[0]] + [mhz for _ in range(iterations) for _, mhz in stage]
    return [m for i, m in enumerate(wanted) if i == 0 or m != wanted[i - 1]] + [0]


def zeus_cli(*args: str) -> str:
    """Runs `zeus ARGS` (the build's binary); its stdout. Fails with its stderr."""
    binary = Path(os.environ["ZEUS_BIN"]) / "zeus"
    done = subprocess.run([str(binary), *args], capture_output=True, text=True)
    assert done.returncode == 0, f"zeus {' '.join(args)}: {done.stderr}"
    return done.stdout


def start_pfo_server(log_path: Path, *flags: str) -> Tuple[subprocess.Popen, str]:
    """`zeus pfo serve --port 0 FLAGS` and the URL it listens on."""
    zeus = Path(os.environ["ZEUS_BIN"]) / "zeus"
    log = open(log_path, "w")
    server = subprocess.Popen([str(zeus), "pfo", "serve", "--port", "0", *flags],
                              stdout=subprocess.PIPE, stderr=log, text=True)
    line = server.stdout.readline() if server.stdout else ""
    match = re.search(r"listening on (http://\S+)", line)
    if not match:
        server.kill()
        raise RuntimeError(f"zeus pfo serve did not start: {line!r} {log_path.read_text()}")
    return server, match.group(1)


def start_rank_workers(tmp_path: Path, url: str, tag: str, world: int, stages: int,
                       iterations: int, steps_per_round: int,
                       slow: Tuple[int, float] | None = None,
                       clock_bound: bool = False) -> List[subprocess.Popen]:
    """`world` pfo_rank_worker.py processes (gloo through a file store under tmp_path); each
    one's stderr in tmp_path/TAG.RANK.err. `slow`: (from iteration, factor) for replica 1;
    `clock_bound`: an instruction takes 3 x longer and longer still at a lower clock
    (x highest clock / its clock)."""
    here = Path(__file__).parent
    env = dict(os.environ)
    env["PFO_WORKER_CLOCK_BOUND"] = "1" if clock_bound else "0"
    env["PYTHONPATH"] = os.pathsep.join([str(here), env.get("PYTHONPATH", "")])
    store = tmp_path / f"{tag}.store"
    return [subprocess.Popen(
        [sys.executable, str(here / "pfo_rank_worker.py"), str(rank), str(world), str(stages),
         str(store), url, str(iterations), str(steps_per_round),
         *([str(slow[0]), str(slow[1])] if slow else [])],
        env=env, stdout=subprocess.PIPE, stderr=open(tmp_path / f"{tag}.{rank}.err", "w"),
        text=True) for rank in range(world)]


def rank_errors(tmp_path: Path, tag: str, world: int) -> str:
    return "\n".join((tmp_path / f"{tag}.{r}.err").read_text()[-2000:] for r in range(world))


def stop_pfo_server(server: subprocess.Popen) -> None:
    server.terminate()
    server.wait(timeout=10)


def one_f_one_b(stages: int, microbatches: int, stage: int) -> List[str]:
    """The synchronous 1F1B order of `stage`'s instructions in one iteration."""
    warmup = min(stages - stage - 1, microbatches)
    order = ["forward"] * warmup
    for _ in range(microbatches - warmup):
        order += ["forward", "backward"]
    return order + ["backward"] * warmup


def write_json(path: Path, value: Dict[str, Any] | List[Any]) -> Path:
    path.write_text(json.dumps(value))
    return path


def run_frontier_job(tmp_path: Path, plans: Path, world: int, stages: int,
                     on_joined: Callable[[str, str], None], slow: Tuple[int, float] | None = None,
                     clock_bound: bool = False) -> str:
    """`world` ranks for 20 iterations (rounds of 5) under `zeus pfo serve --scheduler frontier
    --plans PLANS`; on_joined(url, job) once all joined. The plan line of the job's /info."""
    server, url = start_pfo_server(tmp_path / "server.log", "--scheduler", "frontier",
                                   "--plans", str(plans))
    try:
        ranks = start_rank_workers(tmp_path, url, "run", world, stages, iterations=20,
                                   steps_per_round=5, slow=slow, clock_bound=clock_bound)
        deadline = time.monotonic() + 60
        while not all("joined" in (tmp_path / f"run.{r}.err").read_text() for r in range(world)):
            assert time.monotonic() < deadline, rank_errors(tmp_path, "run", world)
            time.sleep(0.02)
        job = (tmp_path / "run.0.err").read_text().split("joined ", 1)[1].split()[0]
        on_joined(url, job)
        for rank in ranks:
            rank.communicate(timeout=150)
            assert rank.returncode == 0, rank_errors(tmp_path, "run", world)
        with urllib.request.urlopen(f"{url}/info", timeout=10) as answer:
            jobs = json.loads(answer.read())["jobs"]
    finally:
        stop_pfo_server(server)
    (info,) = [j for j in jobs if j["job_id"] == job]
    return info["plan"]


def report_straggler(url: str, job: str, iteration_time_s: float, pipeline: int) -> None:
    """The operator's `POST /straggler/{job}`."""
    body = json.dumps({"iteration_time_s": iteration_time_s, "pipeline": pipeline}).encode()
    request = urllib.request.Request(f"{url}/straggler/{job}", data=body, method="POST",
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as answer:
        assert answer.status == 200


def check_switched_pipelines(nvml_path: Path, world: int, stages: int,
                             fastest: Dict[str, Any], switched_to: List[List[int]]) -> None:
    """Pipeline 1 (the straggler) only ever ran the fastest plan; pipeline 0 ends on
    `switched_to` (clocks per stage) after using some clock of it the fastest plan lacks."""
    assert all_unlocked(nvml_path)
    for rank in range(world):
        stage, pipeline = rank % stages, rank // stages
        log = clock_log(nvml_path, rank)
        fastest_clocks = set(fastest["frequencies"][stage]) | {CLOCKS_MHZ[0], 0}
        if pipeline == 1:
            assert set(log) <= fastest_clocks, (rank, log)
        else:
            wanted = switched_to[stage]
            assert set(wanted) - fastest_clocks, wanted  # the switch is visible
            assert (set(wanted) - fastest_clocks) <= set(log), (rank, log, wanted)
            tail = [m for m in log if m != 0][-len(set(wanted)):]
            assert set(tail) <= set(wanted), (rank, log, wanted)
