"""The fake NVML's state file (ZEUS_FAKE_NVML_STATE) as the fake inference servers drive it:
set_power() brings each device's energy counter up to now at its old power and sets the new one
(so the counter follows the server to the microsecond, not to file time stamps); locked_sm_mhz()
reads the SM clock a client locked through the fake NVML (None: not locked). Both under the
fake's own lock (STATE.lock), so a server, the fake NVML in other processes and another fake
sharing the file never lose one another's writes."""
import fcntl
import json
import os
import time


def set_power(state_path, watts, gpu=-1):
    """Rewrites the state file: the counter brought up to now at the old power, then `watts` on
    device `gpu` (-1: every device)."""
    if not state_path:
        return
    now_ns = time.time_ns()
    with open(state_path + ".lock", "a") as guard:
        fcntl.flock(guard, fcntl.LOCK_EX)
        with open(state_path) as f:
            state = json.load(f)
        mtime_ns = os.stat(state_path).st_mtime_ns
        for index, device in enumerate(state["devices"]):
            if gpu >= 0 and index != gpu:
                continue  # another fake's: left as it is
            since_ns = device.get("energy_time_ns") or mtime_ns
            old_mw = min(device.get("power_draw_mw", 350000), device.get("limit_mw", 700000))
            device["energy_mj"] = device.get("energy_mj", 0.0) + old_mw * (now_ns - since_ns) / 1e9
            device["energy_time_ns"] = now_ns
            device["power_draw_mw"] = int(watts * 1000)
        tmp = state_path + ".tmp"
        with open(tmp, "w") as f:
            json.dump(state, f)
        os.replace(tmp, state_path)


def locked_sm_mhz(state_path, gpu=0):
    """The SM clock locked on device `gpu` (the lock's upper end, MHz), or None (also without a
    state file)."""
    if not state_path:
        return None
    with open(state_path + ".lock", "a") as guard:
        fcntl.flock(guard, fcntl.LOCK_SH)
        with open(state_path) as f:
            state = json.load(f)
    locked = state["devices"][gpu].get("locked_sm_clocks_mhz")
    return locked[1] if locked else None
