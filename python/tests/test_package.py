"""The package itself: docstrings, type stubs in step with the extension, the install command."""

from __future__ import annotations

import ast
import importlib
import inspect
import os
import subprocess
import sys
from pathlib import Path

import zeus_cpp
from zeus_cpp import _zeus_cpp

PUBLIC_MODULES = [
    "zeus_cpp",
    "zeus_cpp.monitor",
    "zeus_cpp.monitor.energy",
    "zeus_cpp.monitor.power",
    "zeus_cpp.device",
    "zeus_cpp.device.exception",
    "zeus_cpp.device.gpu",
    "zeus_cpp.device.gpu.common",
    "zeus_cpp.exception",
    "zeus_cpp.fake_gpu",
    "zeus_cpp.optimizer.power_limit",
    "zeus_cpp.optimizer.batch_size",
    "zeus_cpp.optimizer.batch_size.client",
    "zeus_cpp.optimizer.batch_size.common",
    "zeus_cpp.optimizer.batch_size.exceptions",
    "zeus_cpp.run",
    "zeus_cpp.utils.framework",
    "zeus_cpp.utils.logging",
    "zeus_cpp.utils.zeusd",
]


def test_every_public_class_and_method_has_a_docstring():
    missing = []
    for name in PUBLIC_MODULES:
        module = importlib.import_module(name)
        assert module.__doc__, name
        for attr, value in vars(module).items():
            if attr.startswith("_") or not getattr(value, "__module__", "").startswith("zeus_cpp"):
                continue
            if inspect.isclass(value) or inspect.isfunction(value):
                if not inspect.getdoc(value):
                    missing.append(f"{name}.{attr}")
            if inspect.isclass(value):
                for method, member in vars(value).items():
                    if method.startswith("_") or not (inspect.isfunction(member) or isinstance(member, property)):
                        continue
                    if not (member.__doc__ or "").strip():
                        missing.append(f"{name}.{attr}.{method}")
    assert missing == []


def test_stub_lists_everything_the_extension_exports():
    stub = ast.parse((Path(zeus_cpp.__file__).parent / "_zeus_cpp.pyi").read_text())
    stubbed = {}
    for node in stub.body:
        if isinstance(node, ast.ClassDef):
            stubbed[node.name] = {n.name for n in node.body if isinstance(n, ast.FunctionDef)}
        elif isinstance(node, ast.FunctionDef):
            stubbed[node.name] = set()
    exported = {n for n in dir(_zeus_cpp) if not n.startswith("_")}
    assert exported == set(stubbed)
    for name in exported:
        value = getattr(_zeus_cpp, name)
        if inspect.isclass(value) and not issubclass(value, BaseException):
            members = {m for m in vars(value) if not m.startswith("_")}
            assert members == stubbed[name] - {"__init__"}, name


def test_install_command_gives_an_importable_package(tmp_path):
    build_dir = os.environ["ZEUS_BUILD_DIR"]
    done = subprocess.run(["cmake", "--install", build_dir, "--component", "python", "--prefix", str(tmp_path)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    site = tmp_path / f"lib/python{sys.version_info.major}.{sys.version_info.minor}/dist-packages"
    assert (site / "zeus_cpp" / "_zeus_cpp.pyi").exists()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = str(site)
    code = "import zeus_cpp.monitor, zeus_cpp._zeus_cpp as m; print(m.__file__)"
    imported = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                              timeout=60, cwd=tmp_path)
    assert imported.returncode == 0, imported.stderr
    assert imported.stdout.strip().startswith(str(site))
