"""The fake GPU switch (ZEUS_FAKE_GPU), applied when zeus_cpp is imported; the public module and
its command line are zeus_cpp.fake_gpu (kept apart so that `python -m zeus_cpp.fake_gpu` does not
run a module the package imported already)."""

from __future__ import annotations

import os
import warnings
from pathlib import Path
from typing import Optional

#: The environment variable that turns the fake on.
SWITCH = "ZEUS_FAKE_GPU"
_ON = {"1", "true", "yes", "on"}
_OFF = {"", "0", "false", "no", "off"}
_LIBRARY = "libnvidia-ml.so.1"


def bundled_path() -> Optional[Path]:
    """The fake NVML shipped with this zeus_cpp (the wheel's zeus_cpp/fakes/, or a build tree's
    fakes/ when zeus_cpp runs from build/<type>/python); None when there is none."""
    here = Path(__file__).resolve().parent  # zeus_cpp/
    for candidate in (here / "fakes" / _LIBRARY, here.parent.parent / "fakes" / _LIBRARY):
        if candidate.is_file():
            return candidate
    return None


def enabled() -> bool:
    """True when ZEUS_FAKE_GPU asks for the fake (1, true, yes, on; any case)."""
    return os.environ.get(SWITCH, "").strip().lower() in _ON


def apply_switch() -> Optional[Path]:
    """Honours ZEUS_FAKE_GPU (zeus_cpp calls this when imported): when it is on, points
    ZEUS_NVML_PATH at the fake and returns its path; else changes nothing and returns None."""
    value = os.environ.get(SWITCH, "").strip().lower()
    if value in _OFF:
        return None
    if value not in _ON:
        warnings.warn(f"{SWITCH}={os.environ[SWITCH]!r} is neither on (1, true, yes, on) nor off "
                      f"(0, false, no, off, empty); the fake GPU stays off", stacklevel=3)
        return None
    path = bundled_path()
    if path is None:
        warnings.warn(f"{SWITCH} is set but this zeus_cpp ships no fake GPU (install a wheel from "
                      "`make wheel`, or set ZEUS_NVML_PATH to a fake libnvidia-ml.so.1)", stacklevel=3)
        return None
    previous = os.environ.get("ZEUS_NVML_PATH")
    if previous and Path(previous).resolve() != path:
        warnings.warn(f"{SWITCH} replaces ZEUS_NVML_PATH={previous} with the fake GPU {path}", stacklevel=3)
    os.environ["ZEUS_NVML_PATH"] = str(path)
    return path


def describe() -> str:
    """One line for show_env: whether the fake is on, and where it is."""
    path = bundled_path()
    if enabled():
        if path is None:
            return f"{SWITCH} is on, but this zeus_cpp ships no fake GPU"
        state = os.environ.get("ZEUS_FAKE_NVML_STATE")
        return f"on ({SWITCH}): {path}" + (f", state {state}" if state else ", one H100 (no state file)")
    if path is None:
        return "not shipped with this zeus_cpp"
    return (f"off; on a machine without a GPU, `export {SWITCH}=1` (or python -m zeus_cpp.fake_gpu) "
            f"uses the fake at {path}")


def state(gpus: int = 1, power_w: float = 350.0, memory_power_w: Optional[float] = None) -> dict:
    """A fake NVML state: `gpus` H100s drawing `power_w` (and `memory_power_w` on the memory rail,
    which makes the "memory_average" power domain available)."""
    device: dict = {"power_draw_mw": int(power_w * 1000)}
    if memory_power_w is not None:
        device["memory_power_mw"] = int(memory_power_w * 1000)
    devices = []
    for index in range(gpus):
        devices.append(dict(device, uuid=f"GPU-00000000-fake-0000-0000-{index:012d}"))
    return {"devices": devices}
