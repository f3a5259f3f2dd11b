"""ini_set.py - copies an INI file with some keys set: the benches' way to derive configs.

    python3 bench/ini_set.py IN OUT section.key=value [section.key=value ...]

A key that exists in its section is rewritten in place (comments and order kept); a missing
key is added at the end of its section; a missing section is appended. `section.key=` with an
empty value deletes the key. Standard library only; fails loudly on a malformed assignment.
"""
import re
import sys


def main(argv):
    if len(argv) < 3:
        sys.exit("usage: ini_set.py IN OUT section.key=value ...")
    src, dst, assigns = argv[0], argv[1], argv[2:]
    with open(src, encoding="utf-8") as f:
        lines = f.read().splitlines()
    for a in assigns:
        m = re.fullmatch(r"([^.=\s]+)\.([^=\s]+)=(.*)", a)
        if not m:
            sys.exit(f"ini_set.py: '{a}': expected section.key=value")
        lines = set_key(lines, m.group(1), m.group(2), m.group(3).strip())
    with open(dst, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")


def set_key(lines, section, key, value):
    """Returns lines with section.key set to value (deleted when value is empty)."""
    out, cur, done, sec_seen = [], None, False, False
    for i, line in enumerate(lines):
        h = re.match(r"\s*\[([^\]]+)\]", line)
        if h:
            if cur == section and not done and value:
                out.append(f"{key} = {value}")
                done = True
            cur = h.group(1).strip()
            sec_seen = sec_seen or cur == section
        elif cur == section and re.match(rf"\s*{re.escape(key)}\s*=", line):
            if value and not done:
                out.append(f"{key} = {value}")
            done = True
            continue
        out.append(line)
    if not done and value:
        if cur == section:
            out.append(f"{key} = {value}")
        elif not sec_seen:
            out += ["", f"[{section}]", f"{key} = {value}"]
    return out


if __name__ == "__main__":
    main(sys.argv[1:])
