#!/usr/bin/python3
"""Makes a wheel that pip built on this machine (packaging/wheel/build.sh) portable, as
auditwheel's `repair` does, with Debian's patchelf and python3-wheel: the libraries its ELF files
need beyond the manylinux allow-list go into zeus_cpp.libs/ (packaging/bundle_libs.py: renamed by
content hash, run paths relative, checked with ldd), the platform tag becomes
manylinux_<glibc>_<arch> (this machine's glibc: the floor of the systems the wheel runs on;
no file may need a newer one) and the wheel is packed again with a new RECORD.

    repair.py WHEEL --out DIR
"""

from __future__ import annotations

import argparse
import platform
import stat
import sys
import tempfile
from pathlib import Path

from wheel.cli.pack import pack
from wheel.wheelfile import WheelFile

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bundle_libs import bundle, check, check_tools, fail, this_glibc  # noqa: E402

LIBS_DIR = "zeus_cpp.libs"


def retag(tree: Path, platform_tag: str) -> None:
    wheel_file = next(tree.glob("*.dist-info")) / "WHEEL"
    lines = wheel_file.read_text().splitlines()
    out = []
    for line in lines:
        if line.startswith("Tag: "):
            interpreter, abi, _ = line[len("Tag: "):].split("-")
            line = f"Tag: {interpreter}-{abi}-{platform_tag}"
        out.append(line)
    wheel_file.write_text("\n".join(out) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("wheel", type=Path)
    parser.add_argument("--out", type=Path, required=True, help="folder for the repaired wheel")
    args = parser.parse_args()
    check_tools()
    glibc = this_glibc()
    platform_tag = f"manylinux_{glibc[0]}_{glibc[1]}_{platform.machine()}"
    with tempfile.TemporaryDirectory() as scratch:
        tree = Path(scratch) / "tree"
        with WheelFile(args.wheel) as wheel:
            for info in wheel.infolist():
                wheel.extract(info, tree)
                mode = info.external_attr >> 16
                if mode & stat.S_IXUSR:
                    (tree / info.filename).chmod(0o755)
        (tree / next(tree.glob("*.dist-info")).name / "RECORD").unlink()
        elves = bundle(tree, tree / LIBS_DIR)
        newest = check(tree, elves)
        if newest > glibc:
            fail(f"a file needs glibc {newest[0]}.{newest[1]}, newer than this machine's")
        retag(tree, platform_tag)
        args.out.mkdir(parents=True, exist_ok=True)
        before = set(args.out.glob("*.whl"))
        pack(str(tree), str(args.out), None)
        made = sorted(set(args.out.glob("*.whl")) - before) or sorted(args.out.glob(f"*{platform_tag}.whl"))
    bundled = sorted(p.name for p in elves if p.parent.name == LIBS_DIR)
    print(f"repair.py: {made[-1].name if made else '?'}: {len(bundled)} libraries bundled, "
          f"newest glibc symbol {newest[0]}.{newest[1]}, tag {platform_tag}")


if __name__ == "__main__":
    main()
