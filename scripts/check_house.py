#!/usr/bin/env python3
"""The house rules of docs/architecture.md, measured on the source tree.

Usage: scripts/check_house.py [SOURCE_DIR]      (exit 1 naming every breach; --graph prints the
                                                 room graph instead)

A room is a folder of src/ holding code, with its subfolders (src/device/nvml is part of
src/device); a folder without code of its own is a wing whose subfolders are rooms
(src/perseus/server, src/perseus/client). An include "room/.../x.h" points into that room; a public header
"zeus/<area>/x.h" points into the room whose source file implements it (includes it first), else
into the room named like its area. The rules:
  1. No include from a client room or the proxy into a server, store or simulator room.
  2. No circle of includes between rooms.
  3. The root CMakeLists.txt names no folder or test binary to give it a link exception.
  4. Every `namespace zeus::pfo` (Perseus) is declared under src/perseus/ or include/zeus/perseus/.
  5. include/zeus/ holds area folders only, no header of its own.
"""
import os
import re
import sys

CLIENT_ROOMS = ("client", "perseus/client", "zeusd_client", "proxy", "serving/live")
SERVER_ROOMS = ("server", "perseus/server", "zeusd", "store", "sim", "perseus/emulation",
                "serving/simulation")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def rooms_of(src):
    rooms = set()
    for root, _dirs, files in os.walk(src):
        if any(f.endswith((".cc", ".h")) for f in files):
            rooms.add(os.path.relpath(root, src))
    return rooms


def room_of_path(rel, rooms):
    """The room holding the file src/<rel>: its shallowest folder that is a room (a folder's
    subfolders are parts of its room when it holds code itself: device/nvml is device's)."""
    parts = rel.split("/")[:-1]
    for depth in range(1, len(parts) + 1):
        if "/".join(parts[:depth]) in rooms:
            return "/".join(parts[:depth])
    return None


def header_owners(src, rooms):
    """Public header "zeus/<area>/x.h" -> the room of its implementation: the x.cc that includes
    it, else a source file whose first include it is, else (target_room) the area's room."""
    by_stem, by_first = {}, {}
    for root, _dirs, files in os.walk(src):
        for name in sorted(files):
            if not name.endswith(".cc") or name.endswith("_test.cc"):
                continue
            path = os.path.join(root, name)
            room = room_of_path(os.path.relpath(path, src), rooms)
            with open(path, encoding="utf-8") as f:
                includes = INCLUDE.findall(f.read())
            for include in includes:
                if include.startswith("zeus/") and os.path.basename(include)[:-2] == name[:-3]:
                    by_stem[include] = room
            if includes and includes[0].startswith("zeus/"):
                by_first.setdefault(includes[0], room)
    return {**by_first, **by_stem}


def target_room(include, rooms, owners):
    parts = include.split("/")
    if parts[0] == "zeus" and len(parts) >= 3:
        return owners.get(include, parts[1] if parts[1] in rooms else None)
    return room_of_path(include, rooms)


def within(room, group):
    return any(room == g or room.startswith(g + "/") for g in group)


def include_graph(src, rooms):
    owners = header_owners(src, rooms)
    edges = {}  # (from, to) -> first file
    for root, _dirs, files in os.walk(src):
        for name in files:
            if not name.endswith((".cc", ".h")) or name.endswith("_test.cc"):
                continue
            path = os.path.join(root, name)
            here = room_of_path(os.path.relpath(path, src), rooms)
            with open(path, encoding="utf-8") as f:
                for include in INCLUDE.findall(f.read()):
                    there = target_room(include, rooms, owners)
                    if there and there != here:
                        edges.setdefault((here, there), os.path.relpath(path, src))
    return edges


def circles(edges):
    graph = {}
    for a, b in edges:
        graph.setdefault(a, set()).add(b)
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(v):  # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    top = args[0] if args else os.path.join(os.path.dirname(__file__), "..")
    src = os.path.join(top, "src")
    rooms = rooms_of(src)
    edges = include_graph(src, rooms)
    if "--graph" in sys.argv:
        for (a, b), where in sorted(edges.items()):
            print(f"{a} -> {b}    ({where})")
        return 0
    breaches = []
    for (a, b), where in sorted(edges.items()):
        if within(a, CLIENT_ROOMS) and within(b, SERVER_ROOMS):
            breaches.append(f"rule 1: {where} (room {a}) includes from {b}, a server, store or "
                            "simulator room: move what both need to src/wire/ or the core")
    for component in circles(edges):
        breaches.append("rule 2: the rooms " + ", ".join(component) + " include each other "
                        "(scripts/check_house.py --graph lists each include)")
    with open(os.path.join(top, "CMakeLists.txt"), encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if re.search(r'\b(name|rel|top_layer|layer)\s+STREQUAL\b', line):
                breaches.append(f"rule 3: CMakeLists.txt:{number} gives one folder an exception "
                                "(say what its tests link with zeus_test_links in its room)")
    for base in ("src", "include"):
        for root, _dirs, files in os.walk(os.path.join(top, base)):
            rel = os.path.relpath(root, top)
            if rel.startswith(("src/perseus", "include/zeus/perseus")):
                continue
            for name in files:
                with open(os.path.join(root, name), encoding="utf-8", errors="replace") as f:
                    if re.search(r'namespace\s+(zeus::)?pfo\b', f.read()):
                        breaches.append(f"rule 4: {rel}/{name} declares zeus::pfo outside the "
                                        "Perseus wing (src/perseus/, include/zeus/perseus/)")
    flat = [n for n in os.listdir(os.path.join(top, "include", "zeus")) if n.endswith(".h")]
    for name in sorted(flat):
        breaches.append(f"rule 5: include/zeus/{name} is in no area folder")
    for breach in breaches:
        print(breach)
    print(f"{len({room_of_path(r + '/x', rooms) for r in rooms})} rooms, {len(edges)} room-to-room includes, {len(breaches)} breaches")
    return 1 if breaches else 0


if __name__ == "__main__":
    sys.exit(main())
