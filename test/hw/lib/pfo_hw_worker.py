"""One stage rank (of 2) of the pipeline of test/hw/pfo_pipeline_real.sh. Its GPU is cuda:0
(CUDA_VISIBLE_DEVICES names it) and NVML's --nvml-index. Each iteration runs the schedule the
server sent, in its order, with real stage dependencies over gloo; the instructions are bf16
matmuls (--fake: sleeps x max clock / scheduled clock). Prints "joined JOB" on stderr once the
first schedule arrived and one JSON line on stdout at the end."""
import argparse, datetime, fcntl, json, os, signal, statistics, sys, time

import torch
import torch.distributed as dist

from hw_nvml import Nvml
from zeus_cpp.optimizer.pipeline_frequency import PipelineFrequencyOptimizer

p = argparse.ArgumentParser()
p.add_argument("--rank", type=int, required=True)
p.add_argument("--store", required=True)
p.add_argument("--url", required=True)
p.add_argument("--iterations", type=int, required=True)
p.add_argument("--warmup", type=int, default=0)
p.add_argument("--steps-per-round", type=int, default=0)
p.add_argument("--measure", default="")  # NVML indices of the stage GPUs: time the window, rank 0 reads energy
p.add_argument("--nvml-index", type=int, required=True)
p.add_argument("--gpu-lock", default="")  # one GPU: serialise the ranks' instructions
p.add_argument("--wait-for-clock", action="store_true")
p.add_argument("--max-mhz", type=int, required=True)
p.add_argument("--fake", action="store_true")
a = p.parse_args()
stage = a.rank
signal.signal(signal.SIGINT, signal.default_int_handler)
nvml = Nvml()

reps = [int(r) for r in os.environ.get("PFO_HW_FORWARD_REPS", "8,4").split(",")][stage]
fake_ms = [float(m) for m in os.environ.get("PFO_HW_FAKE_FORWARD_MS", "12,6").split(",")][stage]
cuda = not a.fake
if cuda:
    n = int(os.environ.get("PFO_HW_MATMUL_N", "8192"))
    x = torch.randn(n, n, device="cuda:0", dtype=torch.bfloat16)
    w = torch.randn(n, n, device="cuda:0", dtype=torch.bfloat16)
    out = torch.empty_like(x)
    for _ in range(10):
        torch.matmul(x, w, out=out)
    torch.cuda.synchronize()

def compute(name, mhz):
    times = 2 if name == "backward" else 1
    if cuda:
        for _ in range(reps * times):
            torch.matmul(x, w, out=out)
        torch.cuda.synchronize()
    else:
        time.sleep(fake_ms * times * a.max_mhz / max(mhz, 1) / 1000.0)

dist.init_process_group("gloo", init_method=f"file://{a.store}", rank=a.rank, world_size=2,
                        timeout=datetime.timedelta(seconds=120))
pfo = PipelineFrequencyOptimizer(
    rank=a.rank, dp_rank=0, pp_rank=stage, tp_rank=0, device_id=0, dp_degree=1, pp_degree=2,
    tp_degree=1, world_size=2, server_url=a.url, steps_per_round=a.steps_per_round,
    timeout_s=60.0, schedule_timeout_s=120.0)
print("joined", pfo.job_id, file=sys.stderr, flush=True)
lock = os.open(a.gpu_lock, os.O_RDWR | os.O_CREAT) if a.gpu_lock else None
previous = a.max_mhz  # the controller starts at the maximum
change_s = []  # request (begin hook) to applied, for each instruction whose clock changed
observed = [0, 0, []]  # matched, checked, first mismatches
# --fake: the energy the instructions themselves drew (the counter read around each compute, the
# GPU held alone), so that scheduling delays of a loaded machine between instructions, drawn at
# whatever clock is locked then, do not decide whether the plan saved energy.
instruction_j = [0.0, False]  # sum, counting (the measured window)

def iteration(number):
    global previous
    schedule = pfo.schedule
    seen = {"forward": 0, "backward": 0}
    sends = []
    pfo.on_step_begin()
    for name, mhz in schedule:
        j = seen[name]
        seen[name] += 1
        token = torch.zeros(1)
        if stage == 1 and name == "forward":
            dist.recv(token, src=0, tag=1)  # the activation of microbatch j
        if stage == 0 and name == "backward":
            dist.recv(token, src=1, tag=2)  # its gradient
        if lock is not None:
            fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            begin = time.perf_counter()
            pfo.on_instruction_begin(name)
            if a.wait_for_clock:
                pfo.wait_for_clock()
                if mhz != previous:
                    change_s.append(time.perf_counter() - begin)
                if number > 0:  # (iteration 0: the other rank's start may still show)
                    now = nvml.sm_clock(a.nvml_index)
                    observed[1] += 1
                    if now == mhz:
                        observed[0] += 1
                    elif len(observed[2]) < 5:
                        observed[2].append((number, name, j, mhz, now))
            counting = a.fake and instruction_j[1]
            e0 = nvml.energy_j(a.nvml_index) if counting else 0.0
            compute(name, mhz)
            if counting:
                instruction_j[0] += nvml.energy_j(a.nvml_index) - e0
            pfo.on_instruction_end(name)
        finally:
            if lock is not None:
                fcntl.flock(lock, fcntl.LOCK_UN)
        previous = mhz
        if stage == 0 and name == "forward":
            sent = torch.full((1,), float(j))
            sends.append((dist.isend(sent, dst=1, tag=1), sent))
        if stage == 1 and name == "backward":
            sent = torch.full((1,), float(j))
            sends.append((dist.isend(sent, dst=0, tag=2), sent))
    for handle, _ in sends:
        handle.wait()
    pfo.on_step_end()

def window_edge():
    if cuda:
        torch.cuda.synchronize()
    dist.barrier()
    gpus = [int(g) for g in a.measure.split(",")]
    return time.time(), ({g: nvml.energy_j(g) for g in gpus} if a.rank == 0 else {})

done = False
start = None
for number in range(a.iterations):
    if a.measure and number == a.warmup:
        start = window_edge()
        instruction_j[1] = True
    try:
        iteration(number)
    except Exception as error:  # the online profiler is done: training stops here
        if "[profiling-done]" not in str(error):
            raise
        print(error, file=sys.stderr, flush=True)
        done = True
        break
result = {"rank": a.rank, "job_id": pfo.job_id, "rounds": pfo.rounds, "profiling_done": done,
          "iterations": number + (0 if done else 1)}
if a.measure and start is not None and not done:
    end = window_edge()
    result["window"] = {"seconds": end[0] - start[0], "iterations": a.iterations - a.warmup,
                        "energy_j": {str(g): end[1][g] - start[1][g] for g in end[1]}}
    if a.fake:
        result["window"]["instruction_energy_j"] = instruction_j[0]
stats = pfo.controller_stats
pfo.stop()
result["controller"] = stats
result["change_s"] = change_s
result["observed"] = {"matched": observed[0], "checked": observed[1], "mismatches": observed[2]}
print(json.dumps(result), flush=True)
dist.destroy_process_group()
