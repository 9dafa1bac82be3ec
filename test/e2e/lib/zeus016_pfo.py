"""Zeus 0.16's pipeline-frequency client, re-created for tests from its public source and docs.

`PipelineFrequencyOptimizer` and `FrequencyController` below behave as
`zeus.optimizer.pipeline_frequency.{optimizer,frequency_controller}` of Zeus 0.16.0 do, step for
step (read for facts, written here in our own words; the package itself cannot be installed on
this machine):
  - the optimizer needs torch.distributed initialised; global rank 0 POSTs the JobInfo (pydantic
    v1 `.dict()` through httpx) to /register_job, the id reaches every rank through
    `dist.broadcast_object_list`; each rank lists its GPU's SM clocks at the highest memory clock
    (descending), POSTs its RankInfo to /register_rank/{id}, starts its FrequencyController, and
    fetches its schedule once with GET /schedule/{id}?rank=R (no timeout), parsed with
    `FrequencySchedule.parse_raw`, checking the rank; any status but 200 raises RuntimeError
    with the server's answer;
  - on_instruction_begin(name) synchronises the device, takes the next (name, MHz) of the
    schedule (RuntimeError when exhausted or the name differs) and hands the clock to the
    controller (0: leave the clock); on_step_end checks the schedule was consumed exactly and
    rewinds it; on_step_begin and on_instruction_end do nothing; nothing is ever sent to /result;
  - the controller is a separate process (multiprocessing.Process fed by a multiprocessing.Queue,
    `atexit` puts the stop marker): it resets the power limit to the default, locks the memory
    clock at its maximum (NotSupported ignored) and the SM clock at the maximum, then locks each
    new clock that differs from the current one; on the stop marker it resets the memory clock
    lock (NotSupported ignored) and the SM clock lock.
What differs, because this machine has no CUDA and no pynvml: `get_gpus()` is a small ctypes
binding of the NVML library named by ZEUS_NVML_PATH (the project's fake libnvidia-ml.so.1 in the
tests), and torch.cuda.set_device / torch.cuda.synchronize are skipped when CUDA is unavailable.

Run as a script, it is one rank of a 1F1B pipeline training loop driven by torchrun-style
environment variables (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT): see `main`.
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import ctypes
import json
import multiprocessing as mp
import os
import shutil
import sys
import time
from typing import Optional

import httpx
import torch
import torch.distributed as dist

# zeus.optimizer.pipeline_frequency.common (0.16): the wire models.
from zeus016_wire import (GET_FREQUENCY_SCHEDULE_URL, REGISTER_JOB_URL, REGISTER_RANK_URL,
                          FrequencySchedule, JobInfo, RankInfo)


# ---- zeus.device.get_gpus(), NVIDIA only, over ctypes ------------------------------------------
class ZeusGPUNotSupportedError(RuntimeError):
    pass


class NvmlGpus:
    """The few NVML calls the pipeline-frequency client makes, by GPU index."""

    NOT_SUPPORTED = 3

    def __init__(self) -> None:
        self._lib = ctypes.CDLL(os.environ.get("ZEUS_NVML_PATH", "libnvidia-ml.so.1"))
        self._check(self._lib.nvmlInit_v2(), "nvmlInit_v2")
        self._handles: dict[int, ctypes.c_void_p] = {}

    def _check(self, rc: int, what: str) -> None:
        if rc == self.NOT_SUPPORTED:
            raise ZeusGPUNotSupportedError(f"{what}: not supported")
        if rc != 0:
            raise RuntimeError(f"{what} failed with NVML error {rc}")

    def _handle(self, index: int) -> ctypes.c_void_p:
        if index not in self._handles:
            handle = ctypes.c_void_p()
            self._check(self._lib.nvmlDeviceGetHandleByIndex_v2(ctypes.c_uint(index), ctypes.byref(handle)),
                        "nvmlDeviceGetHandleByIndex_v2")
            self._handles[index] = handle
        return self._handles[index]

    def _clock_list(self, fn, what: str, *args) -> list[int]:
        count = ctypes.c_uint(256)
        clocks = (ctypes.c_uint * 256)()
        self._check(fn(*args, ctypes.byref(count), clocks), what)
        return [clocks[i] for i in range(count.value)]

    def get_supported_memory_clocks(self, index: int) -> list[int]:
        return self._clock_list(self._lib.nvmlDeviceGetSupportedMemoryClocks,
                                "nvmlDeviceGetSupportedMemoryClocks", self._handle(index))

    def get_supported_graphics_clocks(self, index: int, memory_clock_mhz: int) -> list[int]:
        return self._clock_list(self._lib.nvmlDeviceGetSupportedGraphicsClocks,
                                "nvmlDeviceGetSupportedGraphicsClocks", self._handle(index),
                                ctypes.c_uint(memory_clock_mhz))

    def _call(self, function: str, index: int, *args: int) -> None:
        self._check(getattr(self._lib, function)(self._handle(index), *map(ctypes.c_uint, args)), function)

    def reset_power_management_limit(self, index: int) -> None:
        default, current = ctypes.c_uint(), ctypes.c_uint()
        h = self._handle(index)
        self._check(self._lib.nvmlDeviceGetPowerManagementDefaultLimit(h, ctypes.byref(default)),
                    "nvmlDeviceGetPowerManagementDefaultLimit")
        self._check(self._lib.nvmlDeviceGetPowerManagementLimit(h, ctypes.byref(current)),
                    "nvmlDeviceGetPowerManagementLimit")
        if current.value != default.value:
            self._call("nvmlDeviceSetPowerManagementLimit", index, default.value)

    def set_memory_locked_clocks(self, index: int, min_mhz: int, max_mhz: int) -> None:
        self._call("nvmlDeviceSetMemoryLockedClocks", index, min_mhz, max_mhz)

    def reset_memory_locked_clocks(self, index: int) -> None:
        self._call("nvmlDeviceResetMemoryLockedClocks", index)

    def set_gpu_locked_clocks(self, index: int, min_mhz: int, max_mhz: int) -> None:
        self._call("nvmlDeviceSetGpuLockedClocks", index, min_mhz, max_mhz)

    def reset_gpu_locked_clocks(self, index: int) -> None:
        self._call("nvmlDeviceResetGpuLockedClocks", index)


_GPUS: Optional[NvmlGpus] = None


def get_gpus() -> NvmlGpus:
    """One instance per process, as zeus.device.get_gpus()."""
    global _GPUS
    if _GPUS is None:
        _GPUS = NvmlGpus()
    return _GPUS


def sync_execution(gpu_devices: list[int]) -> None:
    """zeus.utils.framework.sync_execution(sync_with="torch"); nothing to wait for on CPU."""
    if torch.cuda.is_available():
        for device in gpu_devices:
            torch.cuda.synchronize(device)


# ---- zeus.optimizer.pipeline_frequency.frequency_controller (0.16) -----------------------------
class FrequencyController:
    def __init__(self, device_id: int = 0) -> None:
        self._q: mp.Queue = mp.Queue()
        self._proc = mp.Process(target=self._controller_process, args=(device_id,))
        atexit.register(self.end)
        self._proc.start()

    def set_frequency(self, frequency: int) -> None:
        if frequency != 0:
            self._q.put(frequency, block=False)

    def end(self) -> None:
        self._q.put(None, block=False)

    def _controller_process(self, device_id: int) -> None:
        gpus = get_gpus()
        gpus.reset_power_management_limit(device_id)
        max_mem_freq = max(gpus.get_supported_memory_clocks(device_id))
        with contextlib.suppress(ZeusGPUNotSupportedError):
            gpus.set_memory_locked_clocks(device_id, max_mem_freq, max_mem_freq)
        max_freq = max(gpus.get_supported_graphics_clocks(device_id, max_mem_freq))
        gpus.set_gpu_locked_clocks(device_id, max_freq, max_freq)
        current_freq = max_freq
        while True:
            target_freq = self._q.get(block=True)
            if target_freq is None:
                break
            if current_freq != target_freq:
                gpus.set_gpu_locked_clocks(device_id, target_freq, target_freq)
                current_freq = target_freq
        with contextlib.suppress(ZeusGPUNotSupportedError):
            gpus.reset_memory_locked_clocks(device_id)
        gpus.reset_gpu_locked_clocks(device_id)


# ---- zeus.optimizer.pipeline_frequency.optimizer (0.16) ----------------------------------------
class PipelineFrequencyOptimizer:
    def __init__(self, rank: int, dp_rank: int, pp_rank: int, tp_rank: int, device_id: int,
                 dp_degree: int, pp_degree: int, tp_degree: int, world_size: int,
                 server_url: str, job_metadata: str | None = None) -> None:
        if not dist.is_initialized():
            raise RuntimeError("Instantiate `PipelineFrequencyOptimizer` after `init_process_group`.")
        self.server_url = server_url
        self.rank = rank
        self.dp_rank = dp_rank
        self.pp_rank = pp_rank
        self.tp_rank = tp_rank
        self.device_id = device_id

        gpus = get_gpus()
        if torch.cuda.is_available():
            torch.cuda.set_device(device_id)

        job_id = None
        if rank == 0:
            job_info = JobInfo(pp_degree=pp_degree, dp_degree=dp_degree, tp_degree=tp_degree,
                               world_size=world_size, job_metadata=job_metadata)
            response = httpx.post(self.server_url + REGISTER_JOB_URL, json=job_info.dict())
            if (code := response.status_code) != 200:
                raise RuntimeError(f"PFO server returned status code {code}: {response.text}")
            job_id = response.json()
            if not isinstance(job_id, str):
                raise RuntimeError(f"PFO server returned a strange job ID: {job_id=}")

        objects = [job_id]
        dist.broadcast_object_list(objects, src=0)
        self.job_id = objects[0]
        if self.job_id is None:
            raise RuntimeError("Failed to broadcast job ID to all ranks")

        max_mem_freq = max(gpus.get_supported_memory_clocks(device_id))
        freqs = sorted(gpus.get_supported_graphics_clocks(device_id, max_mem_freq), reverse=True)

        rank_info = RankInfo(rank=self.rank, dp_rank=self.dp_rank, pp_rank=self.pp_rank,
                             tp_rank=self.tp_rank, available_frequencies=freqs)
        response = httpx.post(self.server_url + REGISTER_RANK_URL.format(job_id=self.job_id),
                              json=rank_info.dict())
        if (code := response.status_code) != 200:
            raise RuntimeError(f"PFO server returned status code {code}: {response.text}")

        self.frequency_controller = FrequencyController(device_id=device_id)
        self.freq_schedule = self._get_frequency_schedule()
        self.freq_schedule_iter = iter(self.freq_schedule)

    def _get_frequency_schedule(self) -> list[tuple[str, int]]:
        response = httpx.get(self.server_url + GET_FREQUENCY_SCHEDULE_URL.format(job_id=self.job_id),
                             params={"rank": self.rank}, timeout=None)
        if (code := response.status_code) != 200:
            raise RuntimeError(f"PFO server returned status code {code}: {response.text}")
        schedule = FrequencySchedule.parse_raw(response.text)
        if schedule.rank != self.rank:
            raise RuntimeError(f"PFO server returned a schedule for rank {schedule.rank} to rank {self.rank}")
        return schedule.frequencies

    def on_step_begin(self) -> None:
        pass

    def on_step_end(self) -> None:
        item = next(self.freq_schedule_iter, None)
        if item is not None:
            raise RuntimeError(
                f"PFO server returned more frequencies than expected. Next expected instruction and frequency is {item}")
        self.freq_schedule_iter = iter(self.freq_schedule)

    def on_instruction_begin(self, name: str) -> None:
        sync_execution([self.device_id])
        item = next(self.freq_schedule_iter, None)
        if item is None:
            raise RuntimeError("PFO server returned fewer frequencies than expected")
        instruction, frequency = item
        if instruction != name:
            raise RuntimeError(f"The next expected instruction is not forward: {instruction}")
        self.frequency_controller.set_frequency(frequency)

    def on_instruction_end(self, name: str) -> None:
        pass


# ---- a pipeline-parallel training loop that uses it --------------------------------------------
def one_f_one_b(num_stages: int, num_microbatches: int, stage: int) -> list[str]:
    """A stage's synchronous 1F1B order: forwards until the pipeline is full, then one backward
    and one forward in turn, then the remaining backwards."""
    warmup = min(num_stages - stage, num_microbatches)
    order = ["forward"] * warmup
    forwards = warmup
    backwards = 0
    while backwards < num_microbatches:
        order.append("backward")
        backwards += 1
        if forwards < num_microbatches:
            order.append("forward")
            forwards += 1
    return order


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--server", required=True)
    parser.add_argument("--microbatches", type=int, default=4)
    parser.add_argument("--iterations", type=int, default=3)
    parser.add_argument("--out", required=True, help="folder for this rank's report (rank{R}.json)")
    parser.add_argument("--schedule-file", help="the server's schedule file, which rank 0 replaces "
                                                "before each bad job")
    parser.add_argument("--bad", nargs="*", default=[],
                        help="schedule files to serve, one job each after the good one; each must "
                             "make every rank's optimizer fail with the server's message")
    args = parser.parse_args()

    rank = int(os.environ["RANK"])
    world = int(os.environ["WORLD_SIZE"])
    dist.init_process_group("gloo", rank=rank, world_size=world)
    report: dict = {"rank": rank}

    # The job: a pure pipeline, one stage per rank, rank = local GPU index (one node).
    opt = PipelineFrequencyOptimizer(rank=rank, dp_rank=0, pp_rank=rank, tp_rank=0, device_id=rank,
                                     dp_degree=1, pp_degree=world, tp_degree=1, world_size=world,
                                     server_url=args.server, job_metadata="zeus016")
    report["job_id"] = opt.job_id
    report["schedule"] = [list(x) for x in opt.freq_schedule]
    weights = torch.randn(64, 64)
    x = torch.randn(64, 64)
    order = one_f_one_b(world, args.microbatches, rank)
    for _ in range(args.iterations):
        opt.on_step_begin()
        for name in order:
            opt.on_instruction_begin(name)
            for _ in range(2 if name == "backward" else 1):
                x = torch.tanh(x @ weights)
            time.sleep(0.002)
            opt.on_instruction_end(name)
        opt.on_step_end()
        dist.barrier()
    opt.frequency_controller.end()
    opt.frequency_controller._proc.join(timeout=60)
    report["controller_exit"] = opt.frequency_controller._proc.exitcode

    # Bad schedules: every rank's optimizer must fail with the server's reason, none hang.
    report["bad"] = []
    for path in args.bad:
        dist.barrier()
        if rank == 0:
            shutil.copyfile(path, args.schedule_file)
        try:
            PipelineFrequencyOptimizer(rank=rank, dp_rank=0, pp_rank=rank, tp_rank=0, device_id=rank,
                                       dp_degree=1, pp_degree=world, tp_degree=1, world_size=world,
                                       server_url=args.server, job_metadata="bad")
            report["bad"].append("accepted")
        except RuntimeError as e:
            report["bad"].append(str(e))

    with open(os.path.join(args.out, f"rank{rank}.json"), "w") as f:
        json.dump(report, f)
    dist.barrier()
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
