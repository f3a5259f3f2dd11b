#!/usr/bin/env python3
"""test_docs.py - the documentation stays a map a newcomer can follow.

DESIGN
------
Four rules, checked on the repository: README.md is at most 400 lines (the
quick start, concepts, writing an app, comparing schedulers; references go to
docs/); every docs/*.md page is linked from README.md; every relative link in
README.md and docs/*.md names a file that exists (and, with a #anchor into a
Markdown file, a heading of that file, as GitHub spells its anchors); and
bench/results (one current result per benchmark and machine, git keeps the
history) holds under 5 MB. Then each rule is broken once in a copy of those
files in a temporary folder, and the check must name it: a check that cannot
fail proves nothing. Standard library only.
"""
import os
import re
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
README_MAX_LINES = 400
RESULTS_MAX_BYTES = 5 * 1000 * 1000
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)|!\[[^\]]*\]\(([^)\s]+)\)")


def slug(heading):
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    s = heading.strip().lower()
    s = re.sub(r"[^\w\- ]", "", s)
    return s.replace(" ", "-")


def anchors(path):
    out = set()
    fence = False
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.startswith("```"):
                fence = not fence
            m = re.match(r"#{1,6} (.+)", line)
            if m and not fence:
                out.add(slug(m.group(1)))
    return out


def links(path):
    """Every link target of a Markdown file, with its line number, outside code blocks."""
    out = []
    fence = False
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if line.startswith("```"):
                fence = not fence
                continue
            if fence or line.startswith("    "):
                continue
            text = re.sub(r"`[^`]*`", "", line)
            for m in LINK.finditer(text):
                out.append((n, m.group(1) or m.group(2)))
    return out


def check(root):
    """Returns the problems found under root, one line each."""
    problems = []
    readme = os.path.join(root, "README.md")
    with open(readme, encoding="utf-8") as f:
        nlines = sum(1 for _ in f)
    if nlines > README_MAX_LINES:
        problems.append(f"README.md: {nlines} lines, more than {README_MAX_LINES}")
    docs_dir = os.path.join(root, "docs")
    pages = sorted(p for p in os.listdir(docs_dir) if p.endswith(".md")) \
        if os.path.isdir(docs_dir) else []
    readme_targets = {os.path.normpath(t.split("#")[0]) for _, t in links(readme)}
    for p in pages:
        if os.path.join("docs", p) not in readme_targets:
            problems.append(f"docs/{p}: not linked from README.md")
    for md in [readme] + [os.path.join(docs_dir, p) for p in pages]:
        rel = os.path.relpath(md, root)
        for n, target in links(md):
            if re.match(r"[a-z][a-z0-9+.-]*:", target):
                continue  # http:, https:, mailto:
            path, _, anchor = target.partition("#")
            dest = os.path.normpath(os.path.join(os.path.dirname(md), path)) if path else md
            if not os.path.exists(dest):
                problems.append(f"{rel}:{n}: link to {target}: no such file")
            elif anchor and dest.endswith(".md") and anchor not in anchors(dest):
                problems.append(f"{rel}:{n}: link to {target}: no heading #{anchor}")
    results = os.path.join(root, "bench", "results")
    size = 0
    for d, _, files in os.walk(results):
        size += sum(os.path.getsize(os.path.join(d, f)) for f in files)
    if size >= RESULTS_MAX_BYTES:
        problems.append(f"bench/results: {size} bytes, not under {RESULTS_MAX_BYTES}")
    return problems


def copy_docs(dst):
    shutil.copy(os.path.join(ROOT, "README.md"), dst)
    shutil.copytree(os.path.join(ROOT, "docs"), os.path.join(dst, "docs"))
    shutil.copytree(os.path.join(ROOT, "bench"), os.path.join(dst, "bench"))
    for d in ("framework", "apps", "configs", "profiles", "tests", "schedulers"):
        os.makedirs(os.path.join(dst, d), exist_ok=True)
    # Links may name any tracked file: give every target of the real tree a stand-in.
    for md in [os.path.join(ROOT, "README.md")] + [
            os.path.join(ROOT, "docs", p) for p in os.listdir(os.path.join(ROOT, "docs"))]:
        for _, t in links(md):
            path = t.split("#")[0]
            if not path or re.match(r"[a-z][a-z0-9+.-]*:", t):
                continue
            src = os.path.normpath(os.path.join(os.path.dirname(md), path))
            out = os.path.join(dst, os.path.relpath(src, ROOT))
            if os.path.exists(src) and not os.path.exists(out):
                os.makedirs(os.path.dirname(out), exist_ok=True)
                if os.path.isdir(src):
                    os.makedirs(out, exist_ok=True)
                else:
                    shutil.copy(src, out)


def append(path, text):
    with open(path, "a", encoding="utf-8") as f:
        f.write(text)


# (what is broken, how, words the check must print)
CASES = [
    ("README too long", lambda d: append(os.path.join(d, "README.md"), "x\n" * 400),
     "README.md: "),
    ("a page not linked", lambda d: append(os.path.join(d, "docs", "orphan.md"), "# Orphan\n"),
     "docs/orphan.md: not linked from README.md"),
    ("a dead link", lambda d: append(os.path.join(d, "docs", "config.md"),
                                     "\nSee [gone](gone.md).\n"),
     "docs/config.md:"),
    ("a dead anchor", lambda d: append(os.path.join(d, "docs", "config.md"),
                                       "\nSee [it](../README.md#no-such-heading).\n"),
     "no heading #no-such-heading"),
    ("results too big", lambda d: append(os.path.join(d, "bench", "results", "big.json"),
                                         " " * RESULTS_MAX_BYTES),
     "bench/results: "),
]


def main():
    failed = 0
    problems = check(ROOT)
    for p in problems:
        print(f"FAIL {p}")
    failed += bool(problems)
    if not problems:
        print("ok   the tree: README, docs links, bench/results size")
    for what, breaks, words in CASES:
        with tempfile.TemporaryDirectory() as tmp:
            copy_docs(tmp)
            base = check(tmp)
            breaks(tmp)
            found = [p for p in check(tmp) if p not in base]
            if any(words in p for p in found):
                print(f"ok   {what}")
            else:
                print(f"FAIL {what}: expected {words!r}, got {found}")
                failed += 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
