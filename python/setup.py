"""pip install for zeus_cpp, with Debian's build tools only (setuptools, wheel, CMake):

    python3 -m venv --system-site-packages venv
    venv/bin/python -m pip install --no-build-isolation ./python

setuptools drives the project's own CMake build: build_ext configures the source tree (the folder
above this one, or ZEUS_SOURCE_DIR) into a build folder, builds only the Python targets
(_zeus_cpp and zeus_cpp_python, which assemble the package: the extension beside the .py files)
and copies the assembled package into the wheel. The build folder is ZEUS_CMAKE_BUILD_DIR when
set; else build/release when `make build` configured it (nothing up to date is recompiled); else
a new build/pip-<python> under the source tree. CMAKE_ARGS adds
options to the configure step; ZEUS_BUILD_JOBS sets the parallelism (default: the CPU count).
`cmake --install build/release --component python` remains the other way to install.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = Path(__file__).resolve().parent
PACKAGE = "zeus_cpp"


def _source_dir() -> Path:
    root = Path(os.environ.get("ZEUS_SOURCE_DIR", HERE.parent)).resolve()
    if not (root / "CMakeLists.txt").is_file() or not (root / "python" / PACKAGE).is_dir():
        sys.exit(f"zeus_cpp: {root} is not the Zeus source tree (no CMakeLists.txt and "
                 f"python/{PACKAGE}); set ZEUS_SOURCE_DIR to it")
    return root


def _version() -> str:
    text = (HERE / PACKAGE / "__init__.py").read_text()
    match = re.search(r'^__version__ = "([^"]+)"', text, re.MULTILINE)
    if not match:
        sys.exit(f"zeus_cpp: no __version__ in {HERE / PACKAGE / '__init__.py'}")
    return match.group(1)


class CMakeBuild(build_ext):
    """Builds the extension with the project's CMake build and copies the assembled package."""

    def build_extension(self, ext: Extension) -> None:
        if shutil.which("cmake") is None:
            sys.exit("zeus_cpp: cmake not found (sudo apt-get install cmake, or make deps)")
        source = _source_dir()
        tag = f"{sys.version_info.major}.{sys.version_info.minor}"
        build = Path(os.environ.get("ZEUS_CMAKE_BUILD_DIR", ""))
        if not os.environ.get("ZEUS_CMAKE_BUILD_DIR"):
            release = source / "build" / "release"
            build = release if (release / "CMakeCache.txt").is_file() else (
                source / "build" / f"pip-{tag}")
        if not (build / "CMakeCache.txt").is_file():
            configure = ["cmake", "-S", str(source), "-B", str(build),
                         "-DCMAKE_BUILD_TYPE=RelWithDebInfo", "-DZEUS_BUILD_BENCH=OFF",
                         f"-DPython3_EXECUTABLE={sys.executable}"]
            configure += shlex.split(os.environ.get("CMAKE_ARGS", ""))
            self._run(configure)
        jobs = os.environ.get("ZEUS_BUILD_JOBS", str(os.cpu_count() or 1))
        self._run(["cmake", "--build", str(build), "-j", jobs, "--target", "_zeus_cpp",
                   "zeus_cpp_python"])
        assembled = build / "python" / PACKAGE
        suffix = sysconfig.get_config_var("EXT_SUFFIX")
        if not (assembled / f"_zeus_cpp{suffix}").is_file():
            sys.exit(f"zeus_cpp: the build made no {assembled}/_zeus_cpp{suffix}: its Python "
                     f"is not this one ({sys.executable}); use another ZEUS_CMAKE_BUILD_DIR")
        target = Path(self.build_lib) / PACKAGE
        if target.exists():
            shutil.rmtree(target)
        shutil.copytree(assembled, target,
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "_zeus_cpp.*.so"))
        shutil.copy2(assembled / f"_zeus_cpp{suffix}", self.get_ext_fullpath(ext.name))

    def _run(self, command: list) -> None:
        print("zeus_cpp:", " ".join(shlex.quote(c) for c in command), flush=True)
        subprocess.run(command, check=True)


setup(
    name="zeus_cpp",
    version=_version(),
    description="Zeus in C++ for Python: GPU/CPU energy measurement and optimisation",
    license="Apache-2.0",
    python_requires=">=3.9",
    ext_modules=[Extension(f"{PACKAGE}._zeus_cpp", sources=[])],
    cmdclass={"build_ext": CMakeBuild},
    zip_safe=False,
)
