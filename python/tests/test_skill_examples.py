"""Every example of skills/*/SKILL.md marked for testing (a fence opened with ```python test,
```sh test or ```cpp test) runs on the fake NVML, so the guide for coding agents cannot rot:
Python blocks with /usr/bin/python3 and the built zeus_cpp, shell blocks with bash (`set -e`,
the built zeus first on PATH), C++ blocks compiled against include/ and the built libzeus.a."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import List

import pytest

SOURCE_DIR = Path(os.environ.get("ZEUS_SOURCE_DIR", Path(__file__).resolve().parents[2]))
SKILLS = sorted((SOURCE_DIR / "skills").glob("*/SKILL.md"))
FENCE = re.compile(r"^```(\w+) test\n(.*?)^```$", re.DOTALL | re.MULTILINE)


def _examples() -> List[pytest.ParameterSet]:
    examples = []
    for skill in SKILLS:
        for index, match in enumerate(FENCE.finditer(skill.read_text())):
            language, code = match.group(1), match.group(2)
            examples.append(pytest.param(language, code, id=f"{skill.parent.name}-{index}-{language}"))
    return examples


def test_every_skill_has_tested_examples_in_each_language():
    assert SKILLS, f"no skills/*/SKILL.md under {SOURCE_DIR}"
    for skill in SKILLS:
        text = skill.read_text()
        assert text.startswith("---\nname: "), f"{skill}: front matter with name first"
        assert "\ndescription: " in text.split("\n---\n")[0], f"{skill}: no description"
        languages = {m.group(1) for m in FENCE.finditer(text)}
        assert {"python", "sh", "cpp"} <= languages, f"{skill}: tested languages {languages}"
        # Every fence of a runnable language is tested: none escapes the test by its marker.
        untested = re.findall(r"^```(python|sh|cpp)\s*$", text, re.MULTILINE)
        assert not untested, f"{skill}: examples without the 'test' marker: {untested}"


def _run(command: List[str], cwd: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env["PATH"] = os.environ["ZEUS_BIN"] + os.pathsep + env.get("PATH", "")
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=240, check=False)


@pytest.mark.parametrize("language, code", _examples())
def test_skill_example_runs(language: str, code: str, tmp_path: Path) -> None:
    if language == "python":
        script = tmp_path / "example.py"
        script.write_text(code)
        result = _run([sys.executable, str(script)], tmp_path)
    elif language == "sh":
        script = tmp_path / "example.sh"
        script.write_text("set -euo pipefail\n" + code)
        result = _run(["bash", str(script)], tmp_path)
    elif language == "cpp":
        source = tmp_path / "example.cc"
        source.write_text(code)
        build = Path(os.environ["ZEUS_BUILD_DIR"])
        binary = tmp_path / "example"
        compiled = _run(["g++", "-std=c++20", "-O0", "-I", str(SOURCE_DIR / "include"),
                         str(source), "-o", str(binary), str(build / "libzeus.a"), "-ldl",
                         "-pthread"], tmp_path)
        assert compiled.returncode == 0, compiled.stderr
        result = _run([str(binary)], tmp_path)
    else:
        pytest.fail(f"no runner for ```{language} test")
    assert result.returncode == 0, f"stdout:\n{result.stdout}\nstderr:\n{result.stderr}"
