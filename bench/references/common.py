"""Shared pieces of the reference benchmarks: thread setup before torch is imported, the
stdout discipline for JSON records, timing helpers and source-tree identification.

Nothing here imports torch at module level: `setup_threads` has to run first.
"""
from __future__ import annotations

import hashlib
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

THREAD_VARS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")


def setup_threads(threads: int) -> None:
    """Fixes every thread pool to `threads` before torch (and its OpenMP/MKL) is loaded."""
    if "torch" in sys.modules:
        raise RuntimeError("setup_threads() must run before torch is imported")
    for var in THREAD_VARS:
        os.environ[var] = str(threads)


def import_torch(threads: int):
    """Imports torch after setup_threads and pins its intra-op pool to `threads`."""
    import torch

    torch.set_num_threads(threads)
    if torch.get_num_threads() != threads:
        raise RuntimeError(f"torch.set_num_threads({threads}) left {torch.get_num_threads()} threads")
    return torch


class RecordSink:
    """One JSON object per line on the real stdout; everything else the libraries print
    (DeepSpeed logs to stdout, ninja prints build lines) is sent to stderr instead.

    The file descriptor 1 is duplicated for the records and then pointed at stderr, so that
    output from C code goes to stderr too.
    """

    def __init__(self, as_json: bool) -> None:
        self.as_json = as_json
        sys.stdout.flush()
        self._out = os.fdopen(os.dup(1), "w", buffering=1)
        os.dup2(2, 1)
        sys.stdout = sys.stderr

    def emit(self, record: dict) -> None:
        if self.as_json:
            self._out.write(json.dumps(record, sort_keys=True) + "\n")
        else:
            self._out.write(human_line(record) + "\n")
        self._out.flush()


def human_line(record: dict) -> str:
    what = record.get("elements") or "x".join(str(d) for d in record.get("shape", []))
    if "elements_per_second" in record:
        value = f"{record['elements_per_second'] / 1e6:10.1f} M elements/s"
    else:
        value = f"{record['seconds'] * 1e3:10.2f} ms"
    return f"{record['implementation']:<40} {record['case']:<16} {what!s:<12} T={record['threads']}  {value}"


def time_call(fn) -> float:
    start = time.perf_counter_ns()
    fn()
    return (time.perf_counter_ns() - start) * 1e-9


def median(values) -> float:
    return float(statistics.median(values))


def loadavg() -> list[float] | None:
    try:
        return [float(x) for x in Path("/proc/loadavg").read_text().split()[:3]]
    except OSError:
        return None


def parse_shape(text: str) -> tuple[int, int]:
    try:
        rows, cols = (int(x) for x in text.lower().split("x"))
    except ValueError:
        raise SystemExit(f"--shape must be ROWSxCOLS, got {text!r}")
    if rows <= 0 or cols <= 0:
        raise SystemExit(f"--shape must be positive, got {text!r}")
    return rows, cols


def parse_count(text: str) -> int:
    """Accepts 10000000, 1e7 or 1E8."""
    value = float(text)
    if value != int(value) or value <= 0:
        raise SystemExit(f"expected a positive integer count, got {text!r}")
    return int(value)


def source_identity(paths: list[Path], root: Path) -> dict:
    """Identifies a source tree given on the command line: its git commit when it is a git
    checkout or worktree, and always a SHA-256 over the given files (sorted by path)."""
    digest = hashlib.sha256()
    for path in sorted(paths):
        digest.update(str(path.relative_to(root)).encode())
        digest.update(path.read_bytes())
    ident = {"path": str(root), "sha256": digest.hexdigest()}
    try:
        top = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "--show-toplevel"],
            capture_output=True, text=True, timeout=10, check=True,
        ).stdout.strip()
        if Path(top).resolve() != root.resolve():
            return ident  # inside some other repository: its commit would say nothing
        commit = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "HEAD"],
            capture_output=True, text=True, timeout=10, check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True, text=True, timeout=10, check=True,
        ).stdout.strip()
        ident["git_commit"] = commit
        ident["git_dirty"] = bool(dirty)
    except (OSError, subprocess.SubprocessError):
        pass
    return ident


def version_string(ident: dict, base: str | None = None) -> str:
    parts = [base] if base else []
    if "git_commit" in ident:
        parts.append("git " + ident["git_commit"][:12] + ("+dirty" if ident.get("git_dirty") else ""))
    else:
        parts.append("sha256 " + ident["sha256"][:12])
    return " ".join(parts)
