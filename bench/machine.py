"""machine.py - the description of the machine a bench ran on, recorded in every result file.

Fields: host (hostname), cpu_model (from /proc/cpuinfo), cores (CPUs this process may use),
date (UTC, ISO 8601), os (PRETTY_NAME of /etc/os-release), kernel, gpus (nvidia-smi's names,
empty when there is none or no driver). Standard library only.
"""
import datetime
import os
import platform
import shutil
import subprocess


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


def write_json_atomic(path, obj):
    """Writes obj as indented JSON to a temporary file next to path, then renames it, so a
    failed bench never leaves a half-written result."""
    import json
    tmp = f"{path}.tmp.{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(obj, f, indent=2)
        f.write("\n")
    os.replace(tmp, path)
