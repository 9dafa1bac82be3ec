"""Python side of python_window_bench: the cost of one begin_window/end_window pair from Python.

Run by the C++ benchmark binary python_window_bench (which measures the same pair in C++ and
prints the ratio), with PYTHONPATH at the built zeus_cpp and ZEUS_NVML_PATH at the fake NVML.
Prints one JSON line: {"zeus_monitor_ns": ..., "extension_ns": ...} (best of 5 repeats):
ZeusMonitor is the public wrapper (Measurement dataclass included), extension is the bare
_zeus_cpp.EnergyMonitor binding.
"""

from __future__ import annotations

import json
import sys
import time

from zeus_cpp import _zeus_cpp
from zeus_cpp.monitor import ZeusMonitor


def per_pair_ns(begin, end, pairs: int, repeats: int = 5) -> float:
    """Best-of-`repeats` nanoseconds per begin/end pair."""
    for _ in range(pairs // 10):  # warm up
        begin("step")
        end("step")
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter_ns()
        for _ in range(pairs):
            begin("step")
            end("step")
        best = min(best, (time.perf_counter_ns() - start) / pairs)
    return best


def main() -> None:
    pairs = int(sys.argv[1]) if len(sys.argv) > 1 else 20000
    monitor = ZeusMonitor(gpu_indices=[0], cpu_indices=[], sync_execution_with=None)
    raw = _zeus_cpp.EnergyMonitor(gpu_indices=[0], cpu_indices=[])
    result = {
        "zeus_monitor_ns": per_pair_ns(lambda k: monitor.begin_window(k, sync_execution=False),
                                       lambda k: monitor.end_window(k, sync_execution=False), pairs),
        "extension_ns": per_pair_ns(lambda k: raw.begin_window(k, False),
                                    lambda k: raw.end_window(k, False), pairs),
    }
    print(json.dumps(result))


if __name__ == "__main__":
    main()
