"""The `zeus` and `zeusd` commands of a pip-installed zeus_cpp.

pip puts these entry points into the environment's bin/; each replaces itself (exec) with the
native program shipped inside the package (zeus_cpp/bin/), so signals, exit codes and standard
streams are the program's own. The programs find their shared libraries in zeus_cpp.libs/ (a
wheel) or on the system (an install from source), and `zeus simulate` finds its bundled data in
zeus_cpp/share/zeus/data, all relative to where they lie, whatever the install scheme.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path


def _exec(name: str) -> None:
    program = Path(__file__).resolve().parent / "bin" / name
    if not os.access(program, os.X_OK):
        sys.exit(f"{name}: this zeus_cpp has no {program} (an install without the native "
                 f"programs); reinstall from a wheel (make wheel) or from the source tree "
                 f"(pip install ./python)")
    os.execv(program, [name, *sys.argv[1:]])


def zeus() -> None:
    """The zeus command line (zeus --help)."""
    _exec("zeus")


def zeusd() -> None:
    """The privileged daemon (zeusd --help; runs as root, see the operators' guide)."""
    _exec("zeusd")
