"""One rank of the 2 stages x 2 replicas Perseus test (torch.distributed gloo on CPU).

Usage: pfo_rank_worker.py RANK WORLD_SIZE STAGES STORE_FILE SERVER_URL ITERATIONS STEPS_PER_ROUND
                          [SLOW_FROM SLOW_FACTOR]
The rank runs on fake GPU RANK (ZEUS_FAKE_NVML_STATE), stage RANK % STAGES of replica
RANK // STAGES. Each iteration is its stage's 1F1B order over 4 microbatches, sleeps standing in
for compute, and a gloo all-reduce at its end (the replicas' gradient all-reduce). Prints
"joined JOB_ID" on stderr once the first schedule arrived and one JSON line on stdout at the end;
exits without stop(), so the clocks are restored by the exit path. With SLOW_FROM and SLOW_FACTOR,
replica 1's instructions take SLOW_FACTOR x longer from iteration SLOW_FROM on (a straggler).
With PFO_WORKER_CLOCK_BOUND=1 in the environment, an instruction scheduled at a lower clock sleeps
longer (3 x its time x highest clock / its clock), as compute-bound work does, so an online profiler sees the
clocks at work; the server's "[profiling-done]" then ends the loop (its message on stderr).
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time

import torch
import torch.distributed as dist

from pfo_helpers import CLOCKS_MHZ, one_f_one_b
from zeus_cpp.optimizer.pipeline_frequency import PipelineFrequencyOptimizer

MICROBATCHES = 4
SLEEP_S = {"forward": 0.004, "backward": 0.008}


def run_iteration(pfo: PipelineFrequencyOptimizer, stages: int, stage: int, factor: float,
                  clock_bound: bool) -> None:
    """One iteration of the stage's 1F1B order; sleeps stand in for compute."""
    schedule = pfo.schedule
    pfo.on_step_begin()
    for position, name in enumerate(one_f_one_b(stages, MICROBATCHES, stage)):
        pfo.on_instruction_begin(name)
        pfo.wait_for_clock()
        seconds = SLEEP_S[name] * factor
        mhz = schedule[position][1] if position < len(schedule) else 0
        if clock_bound and mhz > 0:  # 3 x longer, so that an overslept sleep weighs less
            seconds *= 3 * CLOCKS_MHZ[0] / mhz  # (the fake GPUs' highest clock)
        time.sleep(seconds)
        pfo.on_instruction_end(name)
    pfo.on_step_end()


def main() -> None:
    rank, world_size, stages = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    store_file, url = sys.argv[4], sys.argv[5]
    iterations, steps_per_round = int(sys.argv[6]), int(sys.argv[7])
    slow_from, slow_factor = 0, 1.0
    if len(sys.argv) > 9:
        slow_from, slow_factor = int(sys.argv[8]), float(sys.argv[9])
    signal.signal(signal.SIGINT, signal.default_int_handler)  # Ctrl-C even when started ignored
    dist.init_process_group("gloo", init_method=f"file://{store_file}", rank=rank,
                            world_size=world_size)
    stage, replica = rank % stages, rank // stages
    pfo = PipelineFrequencyOptimizer(
        rank=rank, dp_rank=replica, pp_rank=stage, tp_rank=0, device_id=rank,
        dp_degree=world_size // stages, pp_degree=stages, tp_degree=1, world_size=world_size,
        server_url=url, steps_per_round=steps_per_round)
    print("joined", pfo.job_id, file=sys.stderr, flush=True)
    clock_bound = os.environ.get("PFO_WORKER_CLOCK_BOUND") == "1"
    gradient = torch.zeros(1)
    for iteration in range(iterations):
        factor = slow_factor if replica == 1 and iteration >= slow_from else 1.0
        try:
            run_iteration(pfo, stages, stage, factor, clock_bound)
        except Exception as error:  # the online profiler is done: training stops here
            if "[profiling-done]" not in str(error):
                raise
            print(error, file=sys.stderr, flush=True)
            break
        dist.all_reduce(gradient)
    print(json.dumps({"job_id": pfo.job_id, "rounds": pfo.rounds, **pfo.controller_stats}))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
