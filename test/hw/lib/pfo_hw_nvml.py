"""NVML through ctypes (the real libnvidia-ml.so.1, or ZEUS_NVML_PATH's fake), for the check's
own readings: energy counters, power, the current SM clock, supported clocks."""
import ctypes, json, os, sys, time

class Nvml:
    def __init__(self):
        self.lib = ctypes.CDLL(os.environ.get("ZEUS_NVML_PATH") or "libnvidia-ml.so.1")
        self._ok(getattr(self.lib, "nvmlInit_v2", self.lib.nvmlInit)(), "nvmlInit")
        self.fake_state = os.environ.get("ZEUS_FAKE_NVML_STATE") if os.environ.get("HW_FAKE") else None
        self.handles = {}

    def _ok(self, rc, what):
        if rc != 0:
            raise RuntimeError(f"{what}: NVML error {rc}")

    def count(self):
        n = ctypes.c_uint()
        self._ok(self.lib.nvmlDeviceGetCount_v2(ctypes.byref(n)), "nvmlDeviceGetCount")
        return n.value

    def handle(self, i):
        if i not in self.handles:
            h = ctypes.c_void_p()
            self._ok(self.lib.nvmlDeviceGetHandleByIndex_v2(ctypes.c_uint(i), ctypes.byref(h)),
                     f"nvmlDeviceGetHandleByIndex({i})")
            self.handles[i] = h
        return self.handles[i]

    def energy_j(self, i):
        v = ctypes.c_ulonglong()
        self._ok(self.lib.nvmlDeviceGetTotalEnergyConsumption(self.handle(i), ctypes.byref(v)),
                 "nvmlDeviceGetTotalEnergyConsumption")
        return v.value / 1000.0

    def power_w(self, i):
        v = ctypes.c_uint()
        self._ok(self.lib.nvmlDeviceGetPowerUsage(self.handle(i), ctypes.byref(v)), "nvmlDeviceGetPowerUsage")
        return v.value / 1000.0

    def sm_clock(self, i):
        """The SM clock now (MHz); on the fake, which has no clock reading, its locked SM clock
        (0 when unlocked)."""
        if self.fake_state:
            locked = json.load(open(self.fake_state))["devices"][i].get("locked_sm_clocks_mhz")
            return locked[1] if locked else 0
        v = ctypes.c_uint()
        self._ok(self.lib.nvmlDeviceGetClockInfo(self.handle(i), ctypes.c_uint(1), ctypes.byref(v)),
                 "nvmlDeviceGetClockInfo(SM)")  # NVML_CLOCK_SM = 1
        return v.value

    def locked(self, i):
        """Fake only: whether SM or memory clocks are locked."""
        d = json.load(open(self.fake_state))["devices"][i]
        return d.get("locked_sm_clocks_mhz") is not None or d.get("locked_memory_clocks_mhz") is not None

    def sm_clocks(self, i):
        """Supported SM clocks at the highest memory clock, highest first (what the clock
        controller registers with the server)."""
        n = ctypes.c_uint(64)
        mem = (ctypes.c_uint * 64)()
        self._ok(self.lib.nvmlDeviceGetSupportedMemoryClocks(self.handle(i), ctypes.byref(n), mem),
                 "nvmlDeviceGetSupportedMemoryClocks")
        top = max(mem[k] for k in range(n.value))
        n = ctypes.c_uint(1024)
        sm = (ctypes.c_uint * 1024)()
        self._ok(self.lib.nvmlDeviceGetSupportedGraphicsClocks(self.handle(i), ctypes.c_uint(top),
                                                               ctypes.byref(n), sm),
                 "nvmlDeviceGetSupportedGraphicsClocks")
        return sorted({sm[k] for k in range(n.value)}, reverse=True)

if __name__ == "__main__":
    nvml, what, gpus = Nvml(), sys.argv[1], [int(g) for g in sys.argv[2].split(",") if g]
    if what == "count":
        print(nvml.count())
    elif what == "clocks":  # the SM clocks of the first GPU (all alike), space-separated
        print(" ".join(map(str, nvml.sm_clocks(gpus[0]))))
    elif what == "idle":  # mean power (W, summed over gpus / len) and lowest SM clock over ~2 s
        powers, clocks = [], []
        for _ in range(20):
            powers.append(sum(nvml.power_w(g) for g in gpus) / len(gpus))
            clocks.append(max(nvml.sm_clock(g) for g in gpus))
            time.sleep(0.1)
        print("%.1f %d" % (sum(powers) / len(powers), min(clocks)))
    elif what == "sm-clock":  # the highest current SM clock over gpus
        print(max(nvml.sm_clock(g) for g in gpus))
    elif what == "locked":  # fake: exit 0 when one of gpus has locked clocks
        sys.exit(0 if any(nvml.locked(g) for g in gpus) else 1)
