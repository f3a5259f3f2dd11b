#!/usr/bin/env python3
"""check_includes.py - the include rules of framework/README.md, enforced.

Usage: check_includes.py [ROOT]   (ROOT: a hetfarm checkout, default ".")

Every `#include "..."` of framework/, schedulers/ and apps/ is resolved the way
the compiler resolves it (the including file's folder first, then -iquote
framework) and checked against the rooms' rules:

    framework/ (top)  the faces: hetfarm.h, hf_cuda.h, sched.h, device.h; faces include faces only
    io/               faces and io/
    drivers/          faces, io/, drivers/          (never core/)
    core/             faces, io/, core/, mpi/       (the engine's nodes use the transport)
    report/           faces, io/, core/, report/    (never drivers/)
    cli/              anything in framework/
    starpu/           faces and starpu/             (HASS as a StarPU policy: its own library)
    mpi/              faces and mpi/                (the rank transport; built only with MPI)
    schedulers/       faces and schedulers/
    apps/NAME/        faces and apps/NAME/     (apps/ itself: faces)

and no header reaches itself through its includes. Prints one line per broken
rule ("file:line: includes X (room R may include only ...)") and exits 1, or
exits 0 silently. Tests (tests/) may include anything and are not checked.
"""
import os
import re
import sys

FACES = {"hetfarm.h", "hf_cuda.h", "sched.h", "device.h"}
ALLOWED = {
    "faces": {"faces"},
    "io": {"faces", "io"},
    "drivers": {"faces", "io", "drivers"},
    "core": {"faces", "io", "core", "mpi"},
    "report": {"faces", "io", "core", "report"},
    "cli": {"faces", "io", "drivers", "core", "report", "cli", "mpi", "starpu"},
    "starpu": {"faces", "starpu"},
    "mpi": {"faces", "mpi"},
    "schedulers": {"faces", "schedulers"},
    "apps": {"faces"},
}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def room_of(root, path):
    """The room a file (relative to root) belongs to, or None when unchecked."""
    parts = os.path.relpath(path, root).split(os.sep)
    if parts[0] == "framework":
        return "faces" if len(parts) == 2 else parts[1]
    if parts[0] == "schedulers":
        return "schedulers"
    if parts[0] == "apps":
        return "apps/" + parts[1] if len(parts) >= 3 else "apps"
    return None


def resolve(root, src, name):
    """The file an include names, as the compiler finds it; None for system headers."""
    for base in (os.path.dirname(src), os.path.join(root, "framework")):
        cand = os.path.normpath(os.path.join(base, name))
        if os.path.isfile(cand):
            return cand
    return None


def sources(root):
    for top in ("framework", "schedulers", "apps"):
        for dirpath, _, files in os.walk(os.path.join(root, top)):
            for f in sorted(files):
                if f.endswith((".c", ".h", ".cu")):
                    yield os.path.join(dirpath, f)


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else ".")
    errors, graph = [], {}
    for src in sources(root):
        room = room_of(root, src)
        graph.setdefault(src, [])
        with open(src, encoding="utf-8", errors="replace") as fh:
            for lineno, line in enumerate(fh, 1):
                m = INCLUDE.match(line)
                if not m:
                    continue
                target = resolve(root, src, m.group(1))
                if target is None:
                    continue  # a system or generated header
                graph[src].append(target)
                troom = room_of(root, target)
                if room.startswith("apps/"):
                    ok = troom in ("faces", room)
                    allowed = "the faces and its own folder"
                else:
                    ok = troom in ALLOWED.get(room, set())
                    allowed = ", ".join(sorted(ALLOWED.get(room, set())))
                if not ok:
                    errors.append("%s:%d: includes %s (room %s may include only %s)" % (
                        os.path.relpath(src, root), lineno, os.path.relpath(target, root),
                        room, allowed))
    errors += cycles(root, graph)
    for e in errors:
        print(e)
    return 1 if errors else 0


def cycles(root, graph):
    """One message per include cycle, found by depth-first search."""
    found, state, stack = [], {}, []

    def visit(node):
        state[node] = 1
        stack.append(node)
        for nxt in graph.get(node, []):
            if state.get(nxt) == 1:
                loop = stack[stack.index(nxt):] + [nxt]
                found.append("include cycle: " + " -> ".join(os.path.relpath(p, root) for p in loop))
            elif not state.get(nxt):
                visit(nxt)
        stack.pop()
        state[node] = 2

    for node in sorted(graph):
        if not state.get(node):
            visit(node)
    return found


if __name__ == "__main__":
    sys.exit(main())
