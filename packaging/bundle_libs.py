#!/usr/bin/python3
"""Bundles the shared libraries that ELF files need beyond the manylinux allow-list (glibc's
libraries, libstdc++, libgcc_s) into one folder beside them, as auditwheel does for wheels, with
Debian's patchelf: the core of packaging/wheel/repair.py (the wheels) and of the GPU check kit
(packaging/hw-kit/assemble.sh, its helper programs).

- Debug sections are stripped from every ELF file (the symbol tables stay, for backtraces).
- Each library outside the allow-list is copied under a name made unique by its content hash
  (libpq-1a2b3c4d.so.5: never confused with the system's copy of the same library loaded into the
  same process), its soname set to that name, every reference to it rewritten, and run paths set
  relative to each file ($ORIGIN), so the tree can be moved anywhere.
- Then ldd checks that every library of every ELF file resolves to the allow-list or inside the
  tree, and the newest glibc symbol version needed is reported.

    bundle_libs.py TREE LIBS_DIR     (LIBS_DIR relative to TREE; prints the newest glibc needed)
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

# The manylinux allow-list the wheels and the kit keep to (PEP 600, the narrower list of the
# project's release issue).
ALLOWED = {
    "libc.so.6", "libm.so.6", "libpthread.so.0", "libdl.so.2", "librt.so.1",
    "libstdc++.so.6", "libgcc_s.so.1", "ld-linux-x86-64.so.2", "linux-vdso.so.1",
    # glibc's own smaller libraries: tied to the glibc they came with (GLIBC_PRIVATE), never bundled.
    "libresolv.so.2", "libutil.so.1", "libanl.so.1",
}
TOOLS = ("patchelf", "strip", "readelf", "ldd")


def fail(message: str) -> None:
    sys.exit(f"{Path(sys.argv[0]).name}: {message}")


def run(*command: str) -> str:
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        fail(f"{' '.join(command)} failed: {done.stderr.strip()}")
    return done.stdout


def is_elf(path: Path) -> bool:
    with path.open("rb") as f:
        return f.read(4) == b"\x7fELF"


def resolved_libraries(path: Path) -> dict:
    """soname -> resolved path (None when not found) of everything ldd says `path` loads."""
    env = {k: v for k, v in os.environ.items() if k != "LD_LIBRARY_PATH"}
    done = subprocess.run(["ldd", str(path)], capture_output=True, text=True, env=env)
    libraries = {}
    for line in done.stdout.splitlines():
        match = re.match(r"\s*(\S+) => (not found|(\S+) \(0x[0-9a-f]+\))", line)
        if match:
            libraries[match.group(1)] = match.group(3)
            continue
        match = re.match(r"\s*(/\S+) \(0x[0-9a-f]+\)", line)  # the loader itself
        if match:
            libraries[Path(match.group(1)).name] = match.group(1)
    return libraries


def bundled_name(soname: str, source: Path) -> str:
    digest = hashlib.sha256(source.read_bytes()).hexdigest()[:8]
    stem, dot, rest = soname.partition(".so")
    return f"{stem}-{digest}{dot}{rest}"


def glibc_needed(path: Path) -> tuple:
    """The newest GLIBC_x.y symbol version `path` needs, as (x, y)."""
    versions = re.findall(r"GLIBC_(\d+)\.(\d+)", run("readelf", "--version-info", "-W", str(path)))
    return max(((int(a), int(b)) for a, b in versions), default=(0, 0))


def bundle(tree: Path, libs: Path) -> list:
    """Bundles into `libs` (inside `tree`) what the ELF files of `tree` need; returns every ELF
    file of the tree afterwards, the bundled copies included."""
    elves = [p for p in sorted(tree.rglob("*"))
             if p.is_file() and not p.is_symlink() and p.parent != libs and is_elf(p)]
    if not elves:
        fail(f"{tree} holds no ELF file")
    for elf in elves:
        run("strip", "--strip-debug", str(elf))
    wanted = {}
    for elf in elves:
        for soname, where in resolved_libraries(elf).items():
            if soname in ALLOWED:
                continue
            if where is None:
                fail(f"{elf.relative_to(tree)} needs {soname}, which is not found on this machine")
            wanted[soname] = Path(where).resolve()
    libs.mkdir(parents=True, exist_ok=True)
    renamed = {}
    for soname, source in sorted(wanted.items()):
        name = bundled_name(soname, source)
        copy = libs / name
        shutil.copyfile(source, copy)
        copy.chmod(0o755)
        run("strip", "--strip-debug", str(copy))
        run("patchelf", "--set-soname", name, str(copy))
        renamed[soname] = name
    for elf in elves + [libs / name for name in renamed.values()]:
        for soname in run("patchelf", "--print-needed", str(elf)).split():
            if soname in renamed:
                run("patchelf", "--replace-needed", soname, renamed[soname], str(elf))
        origin = os.path.relpath(libs, elf.parent)
        run("patchelf", "--set-rpath", "$ORIGIN" if origin == "." else f"$ORIGIN/{origin}", str(elf))
    return elves + [libs / name for name in renamed.values()]


def check(tree: Path, elves: list) -> tuple:
    """Every library of every ELF file is allowed or inside the tree; the newest glibc needed."""
    newest = (0, 0)
    inside = str(tree.resolve()) + os.sep
    for elf in elves:
        for soname, where in resolved_libraries(elf).items():
            if where is None:
                fail(f"{elf.relative_to(tree)}: {soname} not found after the repair")
            if soname not in ALLOWED and not str(Path(where).resolve()).startswith(inside):
                fail(f"{elf.relative_to(tree)}: {soname} resolves outside the wheel ({where})")
        newest = max(newest, glibc_needed(elf))
    return newest


def check_tools() -> None:
    for tool in TOOLS:
        if shutil.which(tool) is None:
            fail(f"{tool} not found (sudo apt-get install patchelf binutils, or make deps)")


def this_glibc() -> tuple:
    return tuple(int(x) for x in os.confstr("CS_GNU_LIBC_VERSION").split()[1].split(".")[:2])


def main() -> None:
    if len(sys.argv) != 3:
        sys.exit(__doc__.strip().split("\n\n")[-1])
    check_tools()
    tree = Path(sys.argv[1]).resolve()
    libs = tree / sys.argv[2]
    elves = bundle(tree, libs)
    newest = check(tree, elves)
    bundled = [p for p in elves if p.parent == libs]
    print(f"bundle_libs.py: {len(elves) - len(bundled)} ELF files, {len(bundled)} libraries "
          f"bundled in {libs.relative_to(tree)}, newest glibc symbol {newest[0]}.{newest[1]}")


if __name__ == "__main__":
    main()
