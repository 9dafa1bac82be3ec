"""What zeus_cpp sees on this machine, as a block to paste into a bug report (as upstream's
`python -m zeus.show_env`)::

    python3 -m zeus_cpp.show_env          # text
    python3 -m zeus_cpp.show_env --json   # one JSON object

Versions (zeus_cpp, Python, PyTorch with its CUDA or ROCm build and whether it sees a GPU), the
GPU libraries found and their paths, each device with its backend, why the other backends were
skipped, RAPL, and zeusd (ZEUSD_SOCK_PATH or ZEUSD_HOST_PORT): reachable or not, and the
capabilities it grants this process, and whether the fake GPU shipped with zeus_cpp is on
(ZEUS_FAKE_GPU, zeus_cpp.fake_gpu). The C++ side is the report of `zeus show-env`
(zeus/zeusd_client/environment_report.h); this module adds Python's packages and the fake GPU.
"""

from __future__ import annotations

import argparse
import importlib
import json
import platform
import sys
from typing import Any, Dict, List, Optional

import zeus_cpp
from zeus_cpp import _fake_gpu as fake_gpu
from zeus_cpp import _zeus_cpp


def _torch_version() -> str:
    try:
        torch = importlib.import_module("torch")
    except Exception as error:  # not installed, or broken: say which
        return f"not available ({type(error).__name__}: {error})"
    build = "CPU only"
    if getattr(torch.version, "cuda", None):
        build = f"CUDA {torch.version.cuda}"
    elif getattr(torch.version, "hip", None):
        build = f"ROCm {torch.version.hip}"
    try:
        visible = torch.cuda.device_count() if torch.cuda.is_available() else 0
    except Exception as error:
        return f"{torch.__version__} ({build}; GPU check failed: {error})"
    return f"{torch.__version__} ({build}, {visible} GPU(s) visible to torch)"


def packages() -> List[Dict[str, str]]:
    """Python's side of the report: name and version of each package."""
    return [
        {"name": "zeus_cpp", "version": f"{zeus_cpp.__version__} ({zeus_cpp.__file__})"},
        {"name": "Python", "version": f"{platform.python_version()} ({sys.executable})"},
        {"name": "PyTorch", "version": _torch_version()},
    ]


def report() -> Dict[str, Any]:
    """The whole report as a dict (the keys of `zeus show-env --json`, and "fake_gpu")."""
    collected = json.loads(_zeus_cpp.environment_report(json.dumps(packages())))
    path = fake_gpu.bundled_path()
    collected["fake_gpu"] = {"enabled": fake_gpu.enabled(), "path": str(path) if path else None,
                             "detail": fake_gpu.describe()}
    return collected


def show_env(as_json: bool = False) -> str:
    """The report as text (or JSON text)."""
    collected = report()
    if as_json:
        return json.dumps(collected)
    fake = collected.pop("fake_gpu")
    text = _zeus_cpp.format_environment_report(json.dumps(collected))
    return text.rstrip("\n") + f"\n## Fake GPU ({fake_gpu.SWITCH})\n  {fake['detail']}\n"


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m zeus_cpp.show_env", description=__doc__.split("\n")[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)
    print(show_env(args.json))
    return 0


if __name__ == "__main__":
    sys.exit(main())
