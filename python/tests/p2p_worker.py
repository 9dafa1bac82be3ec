"""One rank of the P2P blocking-power test (gloo, CPU).

Usage: p2p_worker.py RANK WORLD_SIZE STORE_FILE WAIT_S
The environment names this rank's own fake NVML state. Prints measure_p2p_power's result.
"""

from __future__ import annotations

import sys

import torch.distributed as dist

from zeus_cpp.optimizer.pipeline_frequency import measure_p2p_power


def main() -> None:
    rank, world_size, store_file, wait_s = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], float(sys.argv[4])
    dist.init_process_group("gloo", init_method=f"file://{store_file}", rank=rank, world_size=world_size)
    print(measure_p2p_power(device_id=0, wait_s=wait_s))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
