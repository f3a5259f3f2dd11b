"""machine.py - the description of the machine a bench ran on, recorded in every result file,
and where that result goes.

Fields: host (hostname), cpu_model (from /proc/cpuinfo), cores (CPUs this process may use),
date (UTC, ISO 8601), os (PRETTY_NAME of /etc/os-release), kernel, gpus (nvidia-smi's names,
empty when there is none or no driver). Standard library only.

Results are curated: one current file per benchmark and machine kind,
bench/results/<kind>/<bench>.json, and git keeps the history. The kind is $HF_MACHINE when
set, else derived from the GPUs: none -> dev-vm (the 2-core CPU VM the CI runs on), one H200 ->
h200, two -> h200x2, one H100 -> h100. Every file records the command that produced it
(write_json_atomic adds "command": $HF_BENCH_COMMAND, which the shell benches export with the
knobs that were set, else this process's own command line).

    python3 bench/machine.py kind            # prints the kind
    python3 bench/machine.py path BENCH      # prints bench/results/<kind>/BENCH.json
"""
import datetime
import os
import platform
import re
import shlex
import shutil
import subprocess
import sys


def _cpu_model():
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _os_name():
    try:
        with open("/etc/os-release", encoding="utf-8") as f:
            for line in f:
                if line.startswith("PRETTY_NAME="):
                    return line.split("=", 1)[1].strip().strip('"')
    except OSError:
        pass
    return platform.system()


def _gpus():
    if not shutil.which("nvidia-smi"):
        return []
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=20, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return []
    return [line.strip() for line in out.splitlines() if line.strip()]


def describe():
    """Returns the machine fields as a dict (see the module docstring)."""
    return {
        "host": platform.node(),
        "cpu_model": _cpu_model(),
        "cores": len(os.sched_getaffinity(0)),
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "os": _os_name(),
        "kernel": platform.release(),
        "gpus": _gpus(),
    }


def kind(gpus=None):
    """The machine kind that names the results folder: $HF_MACHINE, else from the GPUs'
    model (h100, h200; xN when there are N > 1), else dev-vm."""
    env = os.environ.get("HF_MACHINE", "").strip()
    if env:
        if not re.fullmatch(r"[a-z0-9][a-z0-9._-]*", env):
            sys.exit(f"machine.py: HF_MACHINE={env!r} is not a folder name (a-z, 0-9, . _ -)")
        return env
    gpus = _gpus() if gpus is None else gpus
    if not gpus:
        return "dev-vm"
    m = re.search(r"\b([A-Z]{1,2}\d{2,4})\b", gpus[0])
    model = m.group(1).lower() if m else "gpu"
    return model if len(gpus) == 1 else f"{model}x{len(gpus)}"


def result_path(bench):
    """bench/results/<kind>/<bench>.json, relative to the repository root (the benches run
    from there)."""
    return os.path.join("bench", "results", kind(), bench + ".json")


def command(knobs=()):
    """The command that produced a result: $HF_BENCH_COMMAND (set by the shell benches),
    else this Python process's own command line, after those of the environment variables
    named in knobs that are set."""
    env = os.environ.get("HF_BENCH_COMMAND", "").strip()
    if env:
        return env
    set_knobs = [f"{k}={shlex.quote(os.environ[k])}" for k in knobs if k in os.environ]
    return " ".join(set_knobs + ["python3", shlex.join(sys.argv)])


def write_json_atomic(path, obj):
    """Writes obj as indented JSON to a temporary file next to path, then renames it, so a
    failed bench never leaves a half-written result. A dict gains "command" (command())
    unless it has one; the folder is created."""
    import json
    if isinstance(obj, dict) and "command" not in obj:
        obj = {"command": command(), **obj}
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    tmp = f"{path}.tmp.{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(obj, f, indent=2)
        f.write("\n")
    os.replace(tmp, path)


if __name__ == "__main__":
    if sys.argv[1:] == ["kind"]:
        print(kind())
    elif len(sys.argv) == 3 and sys.argv[1] == "path":
        print(result_path(sys.argv[2]))
    else:
        sys.exit("usage: machine.py kind | machine.py path BENCH")
