"""The fake GPU shipped with zeus_cpp (issue 48, item 4): `ZEUS_FAKE_GPU=1` makes zeus_cpp load the
fake NVML it carries (here the build tree's fakes/libnvidia-ml.so.1; in a wheel zeus_cpp/fakes/,
tested by test/packaging/wheel_fake_gpu.sh), so `ZeusMonitor(gpu_indices=[0])` works on a machine
without a GPU; without the switch nothing changes (a real GPU is never shadowed), and the error
for a machine without GPUs names the switch. `python -m zeus_cpp.fake_gpu` prints the export
lines for other fake GPUs; `python -m zeus_cpp.show_env` says whether the fake is on."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

BUILD_FAKE = Path(os.environ["ZEUS_BUILD_DIR"]) / "fakes" / "libnvidia-ml.so.1"


def python(code: str, **env_changes) -> subprocess.CompletedProcess:
    """`code` in a fresh Python with no fake configured (as on a laptop), plus `env_changes`
    (None removes a variable)."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("ZEUS_NVML_PATH", "ZEUS_FAKE_NVML_STATE", "ZEUS_FAKE_GPU")}
    for key, value in env_changes.items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = value
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)


MEASURE = """
import os, time
from zeus_cpp.monitor import ZeusMonitor
monitor = ZeusMonitor(gpu_indices=[0], sync_execution_with=None)
monitor.begin_window("w")
time.sleep(0.3)
m = monitor.end_window("w")
print(os.environ.get("ZEUS_NVML_PATH"), round(m.gpu_energy[0] / m.time))
"""


def test_fake_gpu_switch_makes_zeus_monitor_work_without_a_gpu():
    done = python(MEASURE, ZEUS_FAKE_GPU="1")
    assert done.returncode == 0, done.stderr
    path, watts = done.stdout.split()
    assert Path(path).resolve() == BUILD_FAKE.resolve()
    assert 330 <= int(watts) <= 370  # the fake H100's 350 W
    for spelling in ("true", "YES", "on"):
        assert python(MEASURE, ZEUS_FAKE_GPU=spelling).returncode == 0, spelling


def test_without_the_switch_nothing_is_shadowed_and_the_error_names_it():
    done = python(MEASURE)
    assert done.returncode != 0
    assert "GPU index 0 does not exist (no GPUs visible)" in done.stderr, done.stderr
    assert "ZEUS_FAKE_GPU=1" in done.stderr and "python -m zeus_cpp.fake_gpu" in done.stderr
    untouched = python("import os, zeus_cpp; print(os.environ.get('ZEUS_NVML_PATH'))", ZEUS_FAKE_GPU="0")
    assert untouched.returncode == 0 and untouched.stdout.strip() == "None", untouched.stderr
    # A path the user set is left alone while the switch is off.
    mine = python("import os, zeus_cpp; print(os.environ['ZEUS_NVML_PATH'])", ZEUS_NVML_PATH="/opt/x/libnvidia-ml.so.1")
    assert mine.stdout.strip() == "/opt/x/libnvidia-ml.so.1"


def test_an_unknown_switch_value_warns_and_stays_off():
    done = python("import os, zeus_cpp; print(os.environ.get('ZEUS_NVML_PATH'))", ZEUS_FAKE_GPU="maybe")
    assert done.returncode == 0 and done.stdout.strip() == "None"
    assert "ZEUS_FAKE_GPU='maybe' is neither on" in done.stderr


def test_fake_gpu_module_prints_two_export_lines_for_other_fake_gpus(tmp_path):
    state = tmp_path / "fake state.json"
    done = subprocess.run([sys.executable, "-m", "zeus_cpp.fake_gpu", "--gpus", "2", "--memory-power-w", "60",
                           "--state", str(state)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["export ZEUS_FAKE_GPU=1", f"export ZEUS_FAKE_NVML_STATE='{state}'"]
    assert len(json.loads(state.read_text())["devices"]) == 2
    # The lines as a shell uses them: two GPUs, and the memory_average power domain.
    code = ("from zeus_cpp.monitor.power import PowerMonitor\nimport time\n"
            "pm = PowerMonitor(gpu_indices=[0, 1], power_domains=['device_instant', 'memory_average'])\n"
            "time.sleep(0.5)\n"
            "t = pm.get_power_timeline('memory_average', gpu_index=1)\n"
            "print(len(pm.gpu_indices), round(t[1][-1][1]))\n")
    script = tmp_path / "run.py"
    script.write_text(code)
    env = {k: v for k, v in os.environ.items() if k not in ("ZEUS_NVML_PATH", "ZEUS_FAKE_NVML_STATE")}
    shell = subprocess.run(["bash", "-c", f'eval "$({sys.executable} -m zeus_cpp.fake_gpu --gpus 2 '
                            f'--memory-power-w 60 --state "{state}")" && {sys.executable} {script}'],
                           env=env, capture_output=True, text=True, timeout=120)
    assert shell.returncode == 0, shell.stderr
    assert shell.stdout.split() == ["2", "60"]
    off = subprocess.run([sys.executable, "-m", "zeus_cpp.fake_gpu", "--off"], capture_output=True, text=True)
    assert off.stdout.strip() == "unset ZEUS_FAKE_GPU ZEUS_FAKE_NVML_STATE"
    where = subprocess.run([sys.executable, "-m", "zeus_cpp.fake_gpu", "--path"], capture_output=True, text=True)
    assert Path(where.stdout.strip()).resolve() == BUILD_FAKE.resolve()


def test_show_env_says_whether_the_fake_gpu_is_on():
    off = python("from zeus_cpp.show_env import show_env; print(show_env())")
    assert off.returncode == 0, off.stderr
    assert "## Fake GPU (ZEUS_FAKE_GPU)\n  off; on a machine without a GPU, `export ZEUS_FAKE_GPU=1`" in off.stdout
    on = python("from zeus_cpp.show_env import report; import json; print(json.dumps(report()['fake_gpu']))",
                ZEUS_FAKE_GPU="1")
    fake = json.loads(on.stdout)
    assert fake["enabled"] is True and Path(fake["path"]).resolve() == BUILD_FAKE.resolve()
    assert fake["detail"].startswith("on (ZEUS_FAKE_GPU)")
