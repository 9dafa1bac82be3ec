"""The GPU check kit's guard (run.sh): records every GPU's power limit before the checks and puts
the GPUs back afterwards, on any exit: power limits to what they were, locked SM and memory
clocks reset. Straight through NVML (ctypes; the library the checks use: ZEUS_NVML_PATH, else
libnvidia-ml.so.1), so it works whatever state zeus or zeusd were left in.

    python3 gpu_state.py save FILE       # {"gpus": [{"index", "name", "power_limit_mw"}], ...}
    python3 gpu_state.py restore FILE    # prints what it restored; exit 1 when something failed
"""

from __future__ import annotations

import ctypes
import json
import os
import sys

NVML_SUCCESS = 0
NVML_ERROR_NOT_SUPPORTED = 3


def nvml() -> ctypes.CDLL:
    lib = ctypes.CDLL(os.environ.get("ZEUS_NVML_PATH") or "libnvidia-ml.so.1")
    rc = lib.nvmlInit_v2()
    if rc != NVML_SUCCESS:
        sys.exit(f"gpu_state.py: nvmlInit_v2 failed ({rc})")
    return lib


def handles(lib: ctypes.CDLL) -> list:
    count = ctypes.c_uint()
    if lib.nvmlDeviceGetCount_v2(ctypes.byref(count)) != NVML_SUCCESS:
        sys.exit("gpu_state.py: nvmlDeviceGetCount_v2 failed")
    out = []
    for index in range(count.value):
        handle = ctypes.c_void_p()
        if lib.nvmlDeviceGetHandleByIndex_v2(index, ctypes.byref(handle)) == NVML_SUCCESS:
            out.append((index, handle))
    return out


def save(path: str) -> None:
    lib = nvml()
    gpus = []
    for index, handle in handles(lib):
        name = ctypes.create_string_buffer(96)
        lib.nvmlDeviceGetName(handle, name, 96)
        limit = ctypes.c_uint()
        default = ctypes.c_uint()
        got = lib.nvmlDeviceGetPowerManagementLimit(handle, ctypes.byref(limit)) == NVML_SUCCESS
        lib.nvmlDeviceGetPowerManagementDefaultLimit(handle, ctypes.byref(default))
        gpus.append({"index": index, "name": name.value.decode(errors="replace"),
                     "power_limit_mw": limit.value if got else None,
                     "default_power_limit_mw": default.value or None})
    with open(path, "w") as f:
        json.dump({"gpus": gpus}, f)


def restore(path: str) -> None:
    lib = nvml()
    with open(path) as f:
        saved = {g["index"]: g for g in json.load(f)["gpus"]}
    failed = []
    for index, handle in handles(lib):
        done = []
        for call in ("nvmlDeviceResetGpuLockedClocks", "nvmlDeviceResetMemoryLockedClocks"):
            rc = getattr(lib, call)(handle)
            if rc == NVML_SUCCESS:
                done.append(call[len("nvmlDeviceReset"):])
            elif rc != NVML_ERROR_NOT_SUPPORTED:
                failed.append(f"GPU {index} {call}: NVML error {rc}")
        entry = saved.get(index, {})
        want = entry.get("power_limit_mw") or entry.get("default_power_limit_mw")
        if want:
            now = ctypes.c_uint()
            lib.nvmlDeviceGetPowerManagementLimit(handle, ctypes.byref(now))
            if now.value != want:
                rc = lib.nvmlDeviceSetPowerManagementLimit(handle, ctypes.c_uint(want))
                if rc == NVML_SUCCESS:
                    done.append(f"power limit {now.value} -> {want} mW")
                else:
                    failed.append(f"GPU {index} power limit back to {want} mW: NVML error {rc}")
        print(f"gpu_state.py: GPU {index}: {', '.join(done) or 'nothing to reset'}")
    for line in failed:
        print(f"gpu_state.py: {line}", file=sys.stderr)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in ("save", "restore"):
        sys.exit(__doc__.strip().split("\n\n")[-1])
    (save if sys.argv[1] == "save" else restore)(sys.argv[2])
