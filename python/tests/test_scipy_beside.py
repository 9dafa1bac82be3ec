"""zeus_cpp beside Debian's scipy in one /usr/bin/python3 process.

The project builds on Debian's default Boost (libboost-dev), which python3-scipy needs through
python3-pythran, so a machine set up with `make deps` has both: this test imports them together,
in both orders, in a fresh interpreter each time, and uses both in the same process. Without
python3-scipy it fails naming the fix: it is in the Makefile's DEB_PACKAGES.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys

import pytest

from conftest import fake_device

CHILD = """
import sys, time
for name in sys.argv[1:]:
    __import__(name)
import scipy.optimize
from zeus_cpp.monitor import ZeusMonitor

monitor = ZeusMonitor(sync_execution_with=None)
monitor.begin_window("w")
time.sleep(0.05)
m = monitor.end_window("w")
power = m.gpu_energy[0] / m.time
fit = scipy.optimize.minimize_scalar(lambda w: (w - power) ** 2)
print(round(power), round(fit.x))
"""


def test_runs_under_debians_python():
    assert sys.executable == "/usr/bin/python3"


@pytest.mark.parametrize("order", [["zeus_cpp", "scipy"], ["scipy", "zeus_cpp"]])
def test_scipy_and_zeus_cpp_in_one_process(fake_nvml, order):
    assert importlib.util.find_spec("scipy") is not None, (
        "python3-scipy is not installed: run `make deps` (it is in the Makefile's DEB_PACKAGES)"
    )
    fake_nvml.write([fake_device(power_draw_w=250)])
    child = subprocess.run(
        [sys.executable, "-c", CHILD, *order], capture_output=True, text=True, timeout=120
    )
    assert child.returncode == 0, child.stderr
    power, fitted = (int(v) for v in child.stdout.split())
    # The fake counter grows at exactly the drawn power; scipy finds the minimum at that power.
    assert power == pytest.approx(250, rel=0.05)
    assert fitted == pytest.approx(power, abs=1)
