"""A fake NVIDIA GPU for machines without one: the fake NVML the project's tests use
(`libnvidia-ml.so.1`, built from testing/fake_nvml), shipped inside the wheel.

Off unless asked for, so a real GPU is never shadowed. Turn it on for one shell::

    export ZEUS_FAKE_GPU=1                   # zeus_cpp, and the zeus / zeusd commands, see one H100
    eval "$(python -m zeus_cpp.fake_gpu --gpus 2 --memory-power-w 60)"   # or: other fake GPUs

With `ZEUS_FAKE_GPU=1` (also `true`, `yes`, `on`), importing zeus_cpp points `ZEUS_NVML_PATH` at
the bundled fake before any GPU is discovered, and the `zeus` and `zeusd` commands pip installed
(which start through zeus_cpp) inherit it. The fake plays one H100 drawing 350 W (limits 200 to
700 W, no memory power rail) unless `ZEUS_FAKE_NVML_STATE` names a state file: then it reads
its GPUs from there and writes back what was set, so separate processes see each other's power
limits. `python -m zeus_cpp.fake_gpu` writes such a file and prints the two export lines:

    python -m zeus_cpp.fake_gpu [--gpus N] [--power-w W] [--memory-power-w W] [--state FILE]
    python -m zeus_cpp.fake_gpu --off        # the unset line
    python -m zeus_cpp.fake_gpu --path       # where the fake library is ("" when not shipped)

A zeus_cpp installed without the fake (from the build tree's `cmake --install`) finds the build
tree's `fakes/libnvidia-ml.so.1` when it runs from the build tree, and otherwise warns that the
switch cannot be honoured.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
import tempfile
from pathlib import Path
from typing import List, Optional

from zeus_cpp._fake_gpu import SWITCH, apply_switch, bundled_path, describe, enabled, state


def main(argv: Optional[List[str]] = None) -> int:
    """python -m zeus_cpp.fake_gpu: writes a state file and prints the export lines."""
    parser = argparse.ArgumentParser(
        prog="python -m zeus_cpp.fake_gpu",
        description="Print the shell lines that turn on the fake NVIDIA GPU shipped with zeus_cpp "
                    "(use: eval \"$(python -m zeus_cpp.fake_gpu)\").")
    parser.add_argument("--gpus", type=int, default=1, help="how many fake H100s (default 1)")
    parser.add_argument("--power-w", type=float, default=350.0, help="what each draws, W (default 350)")
    parser.add_argument("--memory-power-w", type=float, default=None,
                        help="the memory rail's power, W: gives the memory_average power domain "
                             "(default: no memory rail, as the default fake)")
    parser.add_argument("--state", type=Path, default=None,
                        help="the state file to write (default: zeus-fake-gpu-<uid>.json in the temp folder)")
    parser.add_argument("--off", action="store_true", help="print the line that turns the fake off")
    parser.add_argument("--path", action="store_true", help="print the fake library's path and exit")
    args = parser.parse_args(argv)
    if args.path:
        path = bundled_path()
        print(path if path is not None else "")
        return 0 if path is not None else 1
    if args.off:
        print(f"unset {SWITCH} ZEUS_FAKE_NVML_STATE")
        return 0
    if bundled_path() is None:
        print("python -m zeus_cpp.fake_gpu: this zeus_cpp ships no fake GPU (install a wheel from "
              "`make wheel`)", file=sys.stderr)
        return 1
    if not 1 <= args.gpus <= 64:
        parser.error("--gpus must be between 1 and 64")
    if not args.power_w > 0 or (args.memory_power_w is not None and not args.memory_power_w >= 0):
        parser.error("--power-w must be > 0 and --memory-power-w >= 0")
    path = args.state or Path(tempfile.gettempdir()) / f"zeus-fake-gpu-{os.getuid()}.json"
    path = path.resolve()
    path.write_text(json.dumps(state(args.gpus, args.power_w, args.memory_power_w), indent=1) + "\n")
    print(f"export {SWITCH}=1")
    print(f"export ZEUS_FAKE_NVML_STATE={shlex.quote(str(path))}")
    return 0


__all__ = ["SWITCH", "apply_switch", "bundled_path", "describe", "enabled", "main", "state"]

if __name__ == "__main__":
    sys.exit(main())
