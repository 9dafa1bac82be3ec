"""One rank of the two-process torch.distributed test (gloo, CPU).

Usage: distributed_worker.py RANK WORLD_SIZE STORE_FILE RESULT_FILE
The environment names this rank's own fake NVML state (ZEUS_FAKE_NVML_STATE). Trains the
`training.Job` under GlobalPowerLimitOptimizer and writes what the optimizer saw as JSON.
"""

from __future__ import annotations

import json
import sys

import torch.distributed as dist

from zeus_cpp.device import get_gpus
from zeus_cpp.monitor import ZeusMonitor
from zeus_cpp.optimizer.power_limit import GlobalPowerLimitOptimizer, ZeusCost

from training import Job


def main() -> None:
    rank, world_size, store_file, result_file = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
    dist.init_process_group("gloo", init_method=f"file://{store_file}", rank=rank, world_size=world_size)
    monitor = ZeusMonitor(gpu_indices=[0])
    plo = GlobalPowerLimitOptimizer(monitor, optimum_selector=ZeusCost(eta_knob=0.5),
                                    warmup_steps=1, profile_steps=8, pl_step=50)
    gpu = get_gpus().gpus[0]
    job = Job(seed=rank)
    for epoch in range(2):
        plo.on_epoch_begin()
        for batch in job.batches(limit=0 if epoch == 0 else 4):
            plo.on_step_begin()
            job.step(batch, gpu.get_power_management_limit() / 1000)
            plo.on_step_end()
            # Keep the ranks in lockstep like a DDP gradient all-reduce would.
            dist.barrier()
        plo.on_epoch_end()
    with open(result_file, "w") as f:
        json.dump({
            "optimal_power_limit": plo.optimal_power_limit,
            "measurements": [[m.power_limit, m.energy, m.time] for m in plo.measurements],
            "gpu_count": plo._optimizer.gpu_count,
        }, f)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
