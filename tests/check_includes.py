#!/usr/bin/env python3
"""check_includes.py - the include rules of framework/README.md and
apps/graph/README.md, enforced.

Usage: check_includes.py [ROOT]   (ROOT: a hetfarm checkout, default ".")

Every `#include "..."` of framework/, schedulers/ and apps/ is resolved the way
the compiler resolves it (the including file's folder first, then -iquote
framework, then -iquote apps) and checked against the rooms' rules:

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
    apps/graph/ROOM/  faces, its own room and the rooms APP_ROOMS lists for it
                      (apps/graph/README.md); apps/graph/ itself holds no source

A reference (NAME_ref.c, NAME_ref.h in a room of apps/graph) depends on nothing
of the app it checks: it includes the faces, the graph layer and the _ref.h
headers of its own room only. No header reaches itself through its includes.

Call circles, in apps/: a module is a file stem of one folder, its header, its
C file and its CUDA side together (bfs.h, bfs.c, bfs_cuda.cu: module bfs;
NAME_ref.c is a module of its own). Module A depends on module B when a file of
A names a function B defines: a non-static function of B's .c or .cu, or an
inline function of B's header that A includes. No module may depend on itself
through others (a function of A used in B and one of B used in A is the
shortest such circle).

Prints one line per broken rule ("file:line: includes X (room R may include
only ...)", "include cycle: ...", "call circle: ...") and exits 1, or exits 0
silently. Tests (tests/) and benches may include anything and are not checked.
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
# Apps made of rooms (apps/NAME/ROOM/): which rooms each room may include
# besides the faces and itself. The order is the layering: a room includes
# only rooms above it, so rooms cannot form a circle.
APP_ROOMS = {
    "graph": {
        "layer": set(),                          # CSR, loaders, writers, generators
        "app": {"layer"},                        # what every graph app shares
        "partition": {"layer", "app"},           # the multilevel partitioner (an app)
        "placement": {"layer", "app", "partition"},  # [load] placement = partition
        "bfs": {"layer", "app", "placement"},
        "sssp": {"layer", "app", "placement"},
        "pagerank": {"layer", "app", "placement"},
        "cc": {"layer", "app", "placement"},
        "mst": {"layer", "app", "placement"},
    },
}
# What a reference (NAME_ref.c / NAME_ref.h) in a roomed app may include
# besides the faces and its own room's _ref.h headers.
REF_ROOMS = {"graph": {"layer"}}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def room_of(root, path):
    """The room a file (relative to root) belongs to, or None when unchecked."""
    parts = os.path.relpath(path, root).split(os.sep)
    if parts[0] == "framework":
        return "faces" if len(parts) == 2 else parts[1]
    if parts[0] == "schedulers":
        return "schedulers"
    if parts[0] == "apps":
        if len(parts) == 2:
            return "apps"
        if parts[1] in APP_ROOMS and len(parts) >= 4:
            return "apps/%s/%s" % (parts[1], parts[2])
        return "apps/" + parts[1]
    return None


def resolve(root, src, name):
    """The file an include names, as the compiler finds it; None for system headers."""
    for base in (os.path.dirname(src), os.path.join(root, "framework"), os.path.join(root, "apps")):
        cand = os.path.normpath(os.path.join(base, name))
        if os.path.isfile(cand):
            return cand
    return None


def sources(root, tops=("framework", "schedulers", "apps")):
    for top in tops:
        for dirpath, dirs, files in os.walk(os.path.join(root, top)):
            dirs.sort()
            for f in sorted(files):
                if f.endswith((".c", ".h", ".cu", ".cuh")):
                    yield os.path.join(dirpath, f)


def is_ref(path):
    stem = os.path.splitext(os.path.basename(path))[0]
    return stem.endswith("_ref")


def app_rule(room, troom, src, target):
    """(ok, what the room may include) for an include from a room of apps/."""
    parts = room.split("/")
    if len(parts) == 3:  # apps/NAME/ROOM
        app, own = parts[1], parts[2]
        if is_ref(src):
            extra = REF_ROOMS.get(app, set())
            ok = troom == "faces" or troom in {"apps/%s/%s" % (app, r) for r in extra} or (
                troom == room and is_ref(target))
            return ok, "the faces, %s and its room's _ref.h (a reference depends on " \
                       "nothing of the app it checks)" % ", ".join(
                           "apps/%s/%s" % (app, r) for r in sorted(extra))
        extra = APP_ROOMS[app][own]
        ok = troom in ("faces", room) or troom in {"apps/%s/%s" % (app, r) for r in extra}
        return ok, "the faces, its own folder%s" % "".join(
            ", apps/%s/%s" % (app, r) for r in sorted(extra))
    return troom in ("faces", room), "the faces and its own folder"


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else ".")
    errors, graph = [], {}
    for src in sources(root):
        room = room_of(root, src)
        rel = os.path.relpath(src, root)
        parts = rel.split(os.sep)
        if parts[0] == "apps" and parts[1] in APP_ROOMS:
            if len(parts) == 3:
                errors.append("%s: apps/%s/ holds rooms only: put this file in one of them "
                              "(apps/%s/README.md)" % (rel, parts[1], parts[1]))
                continue
            if parts[2] not in APP_ROOMS[parts[1]]:
                errors.append("%s: unknown room apps/%s/%s/ (add it to APP_ROOMS in "
                              "tests/check_includes.py and to apps/%s/README.md)"
                              % (rel, parts[1], parts[2], parts[1]))
                continue
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
                    ok, allowed = app_rule(room, troom, src, target)
                else:
                    ok = troom in ALLOWED.get(room, set())
                    allowed = ", ".join(sorted(ALLOWED.get(room, set())))
                if not ok:
                    errors.append("%s:%d: includes %s (room %s may include only %s)" % (
                        rel, lineno, os.path.relpath(target, root), room, allowed))
    errors += cycles(root, graph)
    errors += call_circles(root, graph)
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


# ---- call circles -------------------------------------------------------------

TOKEN = re.compile(r'[A-Za-z_]\w*|\d[\w.]*|\S')
KEYWORDS = {"if", "for", "while", "switch", "return", "sizeof", "defined", "do", "else"}


def strip(text):
    """The code of a C/CUDA file without comments, string and character
    literals (each left as the token "S") or preprocessor lines."""
    out, i, n = [], 0, len(text)
    at_line_start = True
    while i < n:
        c = text[i]
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            i = n if j < 0 else j + 2
            out.append(" ")
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            i = j + 1
            out.append(" S ")
            at_line_start = False
        elif c == "#" and at_line_start:
            while i < n:  # the directive and its continuation lines
                j = text.find("\n", i)
                j = n if j < 0 else j
                cont = text[i:j].rstrip().endswith("\\")
                i = j + 1
                if not cont:
                    break
            out.append("\n")
        else:
            out.append(c)
            if c == "\n":
                at_line_start = True
            elif not c.isspace():
                at_line_start = False
            i += 1
    return "".join(out)


def definitions(tokens):
    """(name, is_static) of every function defined at file scope (extern "C"
    blocks are file scope too)."""
    defs, depth, transparent, i, decl_static = [], 0, [], 0, False
    while i < len(tokens):
        t = tokens[i]
        if t == "extern" and i + 2 < len(tokens) and tokens[i + 1] == "S" and tokens[i + 2] == "{":
            transparent.append(depth)
            i += 3
            continue
        if t == "{":
            depth += 1
        elif t == "}":
            if transparent and transparent[-1] == depth:
                transparent.pop()
            else:
                depth -= 1
            if depth == 0:
                decl_static = False
        elif depth == 0 and t == ";":
            decl_static = False
        elif depth == 0 and t == "static":
            decl_static = True
        elif depth == 0 and (t[0].isalpha() or t[0] == "_") and t not in KEYWORDS and \
                i + 1 < len(tokens) and tokens[i + 1] == "(":
            j, par = i + 1, 0
            while j < len(tokens):  # the matching parenthesis
                par += tokens[j] == "("
                par -= tokens[j] == ")"
                if par == 0:
                    break
                j += 1
            k = j + 1
            while k < len(tokens) and tokens[k] in ("const", "noexcept", "override"):
                k += 1
            if k < len(tokens) and tokens[k] == "{":
                defs.append((t, decl_static))
                i = k  # the body is then walked as any braces
                continue
            i = j + 1
            continue
        i += 1
    return defs


def uses(tokens):
    """The identifiers inside braces (function bodies, initializers): what a
    file names, as opposed to what its prototypes declare."""
    out, depth, transparent = set(), 0, []
    for i, t in enumerate(tokens):
        if t == "{":
            if i >= 2 and tokens[i - 1] == "S" and tokens[i - 2] == "extern":
                transparent.append(depth)
            else:
                depth += 1
        elif t == "}":
            if transparent and transparent[-1] == depth:
                transparent.pop()
            else:
                depth -= 1
        elif depth > 0 and (t[0].isalpha() or t[0] == "_"):
            out.add(t)
    return out


def module_of(root, path):
    """A file's module: its folder and stem, less a _cuda suffix (bfs.h, bfs.c
    and bfs_cuda.cu are module bfs)."""
    d, base = os.path.split(os.path.relpath(path, root))
    stem = os.path.splitext(base)[0]
    if stem.endswith("_cuda"):
        stem = stem[: -len("_cuda")]
    return os.path.join(d, stem)


def call_circles(root, includes):
    """One message per circle of modules of apps/ that name each other's functions."""
    files = [f for f in sources(root, ("apps",)) if f in includes]
    tokens, defined = {}, {}  # file -> tokens; name -> [(file, is_header)]
    for f in files:
        with open(f, encoding="utf-8", errors="replace") as fh:
            toks = TOKEN.findall(strip(fh.read()))
        tokens[f] = toks
        header = f.endswith((".h", ".cuh"))
        for name, static in definitions(toks):
            if header or not static:
                defined.setdefault(name, []).append((f, header))

    def reach(f):
        seen, todo = set(), [f]
        while todo:
            x = todo.pop()
            for y in includes.get(x, []):
                if y not in seen:
                    seen.add(y)
                    todo.append(y)
        return seen

    edges = {}  # module -> {module: (file, name, defining file)}
    for f in files:
        own = {n for n, _ in definitions(tokens[f])}
        visible = reach(f)
        ma = module_of(root, f)
        for name in sorted(uses(tokens[f]) & set(defined)):
            if name in own:
                continue
            for g, header in defined[name]:
                if header and g not in visible:
                    continue
                mb = module_of(root, g)
                if mb != ma:
                    edges.setdefault(ma, {}).setdefault(mb, (f, name, g))
    found, index, low, stack, on, counter = [], {}, {}, [], set(), [0]

    def strong(v):  # Tarjan's strongly connected components
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, {})):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(describe(root, sorted(comp), edges))

    for v in sorted(edges):
        if v not in index:
            strong(v)
    return found


def describe(root, comp, edges):
    """'call circle: A -> B -> A (a.c names f of b.c; ...)' for one component."""
    members = set(comp)
    path, seen = [comp[0]], {comp[0]}
    while True:  # walk inside the component until a module repeats
        nxt = sorted(m for m in edges[path[-1]] if m in members)
        step = next((m for m in nxt if m not in seen), nxt[0])
        path.append(step)
        if step in seen:
            break
        seen.add(step)
    path = path[path.index(path[-1]):]
    why = []
    for a, b in zip(path, path[1:]):
        f, name, g = edges[a][b]
        why.append("%s names %s of %s" % (os.path.relpath(f, root), name, os.path.relpath(g, root)))
    rest = sorted(members - set(path))
    return "call circle: %s (%s)%s" % (" -> ".join(path), "; ".join(why),
                                       "; in the same circle: " + ", ".join(rest) if rest else "")


if __name__ == "__main__":
    sys.exit(main())
