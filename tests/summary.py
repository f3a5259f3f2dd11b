#!/usr/bin/env python3
"""summary.py - the closing line of `make test`, from the outcomes that the
Makefile's run_tests appended to a file ("pass T", "skip T reason", "fail T").

    tests: 52 run, 46 passed, 6 skipped (no GPU: 4; no chromium: 2), 0 failed

Skip reasons are grouped by what is missing, so that CI's last line says why
anything did not run. Exits 1 when a test failed or nothing ran.
"""
import collections
import sys


def reason(text):
    t = text.lower()
    if "cuda" in t or "gpu" in t:
        return "no GPU"
    if "chromium" in t:
        return "no chromium"
    return text.strip() or "no reason given"


def main(path):
    passed = failed = 0
    skipped = collections.Counter()
    failed_names = []
    try:
        with open(path) as f:
            lines = f.read().splitlines()
    except OSError:
        lines = []
    for line in lines:
        kind, _, rest = line.partition(" ")
        name, _, why = rest.partition(" ")
        if kind == "pass":
            passed += 1
        elif kind == "skip":
            skipped[reason(why)] += 1
        elif kind == "fail":
            failed += 1
            failed_names.append(name)
    nskip = sum(skipped.values())
    total = passed + nskip + failed
    why = "; ".join("%s: %d" % (k, v) for k, v in sorted(skipped.items()))
    print("tests: %d run, %d passed, %d skipped%s, %d failed%s" % (
        total, passed, nskip, " (%s)" % why if why else "", failed,
        " (%s)" % " ".join(failed_names) if failed_names else ""))
    return 1 if failed or total == 0 else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "build/test-summary.txt"))
