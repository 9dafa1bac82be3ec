"""pip install for zeus_cpp, with Debian's build tools only (setuptools, wheel, CMake):

    python3 -m venv --system-site-packages venv
    venv/bin/python -m pip install --no-build-isolation ./python

setuptools drives the project's own CMake build: build_ext configures the source tree (the folder
above this one, or ZEUS_SOURCE_DIR) into a build folder, builds only what the package holds
(zeus_cpp_ext_cp3XY, the extension for the running Python; zeus_cpp_python, the .py files; the
programs zeus and zeusd; fake_nvml, the fake libnvidia-ml.so.1) and copies it into the wheel: the
native programs go to zeus_cpp/bin/ (the `zeus` and `zeusd` commands pip puts on the
environment's PATH run them), the fake NVML to zeus_cpp/fakes/ (loaded only when ZEUS_FAKE_GPU=1,
zeus_cpp/fake_gpu.py) and the data `zeus simulate` reads to zeus_cpp/share/zeus/data. The build folder is ZEUS_CMAKE_BUILD_DIR when
set; else build/release when `make build` configured it (nothing up to date is recompiled; a
Python the tree has no extension for is added to its ZEUS_WHEEL_PYTHONS); else a new
build/pip-<python> under the source tree. CMAKE_ARGS adds options to the configure step;
ZEUS_BUILD_JOBS sets the parallelism (default: the CPU count). `make wheel`
(packaging/wheel/) builds this for every Python found and makes the wheels portable (bundled
libraries, manylinux tag).
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
from setuptools.command.install import install

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


def _configured_tags(build: Path) -> list:
    """The Python tags (cp311, ...) this build tree makes an extension for."""
    listing = build / "python" / "extension_tags.txt"
    return listing.read_text().split() if listing.is_file() else []


def _copy_native(source: Path, dest: Path) -> None:
    """Copies a native file into the wheel without its debug sections (the build's line tables,
    four fifths of `zeus`'s bytes; the symbol tables stay, for backtraces), so pip packs and
    installs a fifth of the bytes. A plain copy where binutils' strip is missing."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    strip = shutil.which("strip")
    if strip is None or subprocess.run([strip, "--strip-debug", "-o", str(dest), str(source)]).returncode != 0:
        shutil.copy2(source, dest)
    else:
        shutil.copymode(source, dest)


class CMakeBuild(build_ext):
    """Builds the extension and the native programs with the project's CMake build, and copies
    the assembled package: the .py files, the extension, bin/zeus and bin/zeusd (run by the
    `zeus` and `zeusd` entry points, zeus_cpp/_launcher.py), fakes/libnvidia-ml.so.1 (the fake
    GPU, off unless ZEUS_FAKE_GPU=1) and the data `zeus simulate` reads (share/zeus/data, which
    zeus finds relative to itself)."""

    def build_extension(self, ext: Extension) -> None:
        if shutil.which("cmake") is None:
            sys.exit("zeus_cpp: cmake not found (sudo apt-get install cmake, or make deps)")
        source = _source_dir()
        version = f"{sys.version_info.major}.{sys.version_info.minor}"
        tag = f"cp{sys.version_info.major}{sys.version_info.minor}"
        build = Path(os.environ.get("ZEUS_CMAKE_BUILD_DIR", ""))
        if not os.environ.get("ZEUS_CMAKE_BUILD_DIR"):
            release = source / "build" / "release"
            build = release if (release / "CMakeCache.txt").is_file() else (
                source / "build" / f"pip-{version}")
        if not (build / "CMakeCache.txt").is_file():
            configure = ["cmake", "-S", str(source), "-B", str(build),
                         "-DCMAKE_BUILD_TYPE=RelWithDebInfo", "-DZEUS_BUILD_BENCH=OFF",
                         f"-DPython3_EXECUTABLE={sys.executable}"]
            configure += shlex.split(os.environ.get("CMAKE_ARGS", ""))
            self._run(configure)
        if tag not in _configured_tags(build):
            # A build tree made for another Python: add this one to its wheel interpreters.
            self._run(["cmake", str(build), f"-DZEUS_WHEEL_PYTHONS={';'.join(self._wheel_pythons(build))}"])
        jobs = os.environ.get("ZEUS_BUILD_JOBS", str(os.cpu_count() or 1))
        self._run(["cmake", "--build", str(build), "-j", jobs, "--target", f"zeus_cpp_ext_{tag}",
                   "zeus_cpp_python", "zeus_cli", "zeusd", "fake_nvml"])
        assembled = build / "python" / PACKAGE
        suffix = sysconfig.get_config_var("EXT_SUFFIX")
        built = [assembled / f"_zeus_cpp{suffix}", build / "python" / f"ext-{tag}" / f"_zeus_cpp{suffix}"]
        extension = next((path for path in built if path.is_file()), None)
        if extension is None:
            sys.exit(f"zeus_cpp: the build made none of {', '.join(map(str, built))} for this "
                     f"Python ({sys.executable}); use another ZEUS_CMAKE_BUILD_DIR")
        target = Path(self.build_lib) / PACKAGE
        if target.exists():
            shutil.rmtree(target)
        shutil.copytree(assembled, target,
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "_zeus_cpp.*.so"))
        _copy_native(extension, Path(self.get_ext_fullpath(ext.name)))
        (target / "bin").mkdir()
        for program in ("zeus", "zeusd"):
            _copy_native(build / "bin" / program, target / "bin" / program)
        # The fake NVML (testing/fake_nvml), used only when ZEUS_FAKE_GPU=1 (zeus_cpp.fake_gpu).
        _copy_native(build / "fakes" / "libnvidia-ml.so.1", target / "fakes" / "libnvidia-ml.so.1")
        shutil.copytree(source / "data", target / "share" / "zeus" / "data")

    def _wheel_pythons(self, build: Path) -> list:
        cache = (build / "CMakeCache.txt").read_text()
        match = re.search(r"^ZEUS_WHEEL_PYTHONS:STRING=(.*)$", cache, re.MULTILINE)
        listed = [p for p in (match.group(1).split(";") if match else []) if p]
        return listed + [sys.executable]

    def _run(self, command: list) -> None:
        print("zeus_cpp:", " ".join(shlex.quote(c) for c in command), flush=True)
        subprocess.run(command, check=True)


class Install(install):
    """setuptools' install, with the options Debian's patched setuptools asks of it
    (`install_layout`, `prefix_option`): `make wheel` builds the wheels of Pythons that come
    without setuptools (3.12 and newer) with Debian's, whose install_lib and install_egg_info
    read these options from an install command that lacks them there."""

    install_layout = None
    prefix_option = None


setup(
    name="zeus_cpp",
    version=_version(),
    description="Zeus in C++ for Python: GPU/CPU energy measurement and optimisation",
    license="Apache-2.0",
    python_requires=">=3.9",
    ext_modules=[Extension(f"{PACKAGE}._zeus_cpp", sources=[])],
    cmdclass={"build_ext": CMakeBuild, "install": Install},
    entry_points={"console_scripts": ["zeus = zeus_cpp._launcher:zeus",
                                      "zeusd = zeus_cpp._launcher:zeusd"]},
    zip_safe=False,
)
