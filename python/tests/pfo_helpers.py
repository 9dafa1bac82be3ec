"""Shared pieces of the pipeline-frequency tests: fake GPUs with the SM clock log on, and
`zeus pfo serve` on 127.0.0.1 (a real server process, stopped by the caller)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List, Tuple

from conftest import fake_device

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
                       slow: Tuple[int, float] | None = None) -> List[subprocess.Popen]:
    """`world` pfo_rank_worker.py processes (gloo through a file store under tmp_path); each
    one's stderr in tmp_path/TAG.RANK.err. `slow`: (from iteration, factor) for replica 1."""
    here = Path(__file__).parent
    env = dict(os.environ)
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
