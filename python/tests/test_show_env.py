"""python -m zeus_cpp.show_env on the fakes: Python's packages, the fake NVML and its GPU, ROCm
absent with the reason, and zeusd configured but unreachable."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from zeus_cpp import show_env


def run(*args: str, **env: str) -> subprocess.CompletedProcess:
    environment = dict(os.environ, **env)
    return subprocess.run([sys.executable, "-m", "zeus_cpp.show_env", *args], env=environment,
                          capture_output=True, text=True, timeout=120, check=False)


def test_text_block_names_versions_devices_and_reasons(fake_nvml, tmp_path, monkeypatch):
    missing_rocm = tmp_path / "no-rocm.so"
    monkeypatch.setenv("ZEUS_ROCM_SMI_PATH", str(missing_rocm))
    result = run()
    assert result.returncode == 0, result.stderr
    text = result.stdout
    assert "  zeus_cpp: 0." in text
    assert f"  Python: {sys.version.split()[0]}" in text
    assert "  PyTorch: " in text
    nvml = os.path.realpath(os.environ["ZEUS_NVML_PATH"])
    assert f"NVML: {nvml} (loaded as {os.environ['ZEUS_NVML_PATH']})" in text
    assert f"ROCm SMI: not found: cannot load {missing_rocm}" in text
    assert "GPU 0 (physical 0): NVIDIA H100 80GB HBM3" in text and "backend nvml" in text
    assert "    amdsmi: not used: " in text and "    rocm_smi: not used: " in text
    assert "## RAPL\n  unavailable: " in text
    assert "not configured (set ZEUSD_SOCK_PATH or ZEUSD_HOST_PORT" in text


def test_json_and_an_unreachable_zeusd(fake_nvml, tmp_path, monkeypatch):
    monkeypatch.setenv("ZEUS_ROCM_SMI_PATH", str(tmp_path / "no-rocm.so"))
    socket = tmp_path / "zeusd.sock"
    result = run("--json", ZEUSD_SOCK_PATH=str(socket))
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert [p["name"] for p in report["packages"]] == ["zeus_cpp", "Python", "PyTorch"]
    zeusd = report["zeusd"]
    assert zeusd["configured"] is True and zeusd["reachable"] is False
    assert zeusd["endpoint"] == f"unix:{socket}"
    assert str(socket) in zeusd["error"] or "zeusd" in zeusd["error"]
    # Discovery goes through zeusd when ZEUSD_SOCK_PATH is set; its failure is reported.
    assert report["gpus"] or "discovery_error" in report


def test_in_process_report_has_every_section(fake_nvml):
    report = show_env.report()
    for key in ("packages", "platform", "environment", "libraries", "gpus", "cpus", "backends",
                "rapl", "zeusd"):
        assert key in report, key
    assert report["gpus"][0]["backend"] == "nvml"
    text = show_env.show_env()
    for title in ("## Versions", "## Environment", "## Libraries", "## Devices", "## RAPL",
                  "## zeusd"):
        assert title in text


def test_formatter_survives_a_malformed_report():
    from zeus_cpp import _zeus_cpp
    text = _zeus_cpp.format_environment_report(json.dumps({
        "gpus": [1, {"index": "x"}], "environment": 3, "packages": "zeus",
        "zeusd": {"configured": True, "reachable": True, "gpus": 5, "capabilities": [7]}}))
    assert "## zeusd" in text and "reachable: 0 GPUs" in text
    assert "capabilities granted to this process: 7" in text
    for bad in ("[]", "not json"):
        try:
            _zeus_cpp.format_environment_report(bad)
        except ValueError as error:
            assert "JSON object" in str(error)
        else:
            raise AssertionError(f"{bad!r} was accepted")
