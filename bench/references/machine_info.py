"""The machine and library facts that go with a comparison: CPU (from /proc/cpuinfo), memory,
kernel and OS, Python, torch (version, torch.__config__.show(), its BLAS), DeepSpeed, and the
OpenBLAS that Asteria's benchmark loads (its core and build config, through ctypes).

    python -m bench.references.machine_info [--openblas PATH] --json
"""
from __future__ import annotations

import argparse
import ctypes
import os
import platform
import re
import sys
from pathlib import Path

from bench.references import common

INTERESTING_FLAGS = ("avx2", "fma", "avx512f", "avx512bw", "avx512vl", "avx512_bf16", "avx512_fp16",
                     "avx512_vnni", "amx_tile", "amx_bf16", "amx_int8")


def cpu_info() -> dict:
    info: dict = {}
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return info
    first = text.split("\n\n")[0]
    fields = dict(
        (k.strip(), v.strip()) for k, _, v in (line.partition(":") for line in first.splitlines()) if k.strip()
    )
    for key in ("model name", "vendor_id", "cpu family", "model", "stepping", "microcode", "cpu MHz", "cache size"):
        if key in fields:
            info[key.replace(" ", "_")] = fields[key]
    flags = set(fields.get("flags", "").split())
    info["simd_flags"] = [f for f in INTERESTING_FLAGS if f in flags]
    info["logical_cpus"] = len(re.findall(r"^processor\s*:", text, re.M))
    info["affinity_cpus"] = len(os.sched_getaffinity(0))
    if "hypervisor" in flags:
        info["virtualized"] = True
    return info


def mem_total_gib() -> float | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return round(int(line.split()[1]) / 2**20, 1)
    except OSError:
        pass
    return None


def os_release() -> str | None:
    try:
        text = Path("/etc/os-release").read_text()
        m = re.search(r'^PRETTY_NAME="?([^"\n]*)"?', text, re.M)
        return m.group(1) if m else None
    except OSError:
        return None


def openblas_info(path: str | None) -> dict:
    """Core and config of an OpenBLAS library, as the library reports them."""
    name = path or "libopenblas.so.0"
    try:
        lib = ctypes.CDLL(name)
    except OSError as exc:
        return {"library": name, "error": str(exc)}
    out = {"library": name}
    for fn in ("openblas_get_corename", "openblas_get_config"):
        f = getattr(lib, fn, None)
        if f is not None:
            f.restype = ctypes.c_char_p
            out[fn.replace("openblas_get_", "")] = f().decode(errors="replace").strip()
    f = getattr(lib, "openblas_get_num_threads", None)
    if f is not None:
        out["num_threads_here"] = f()
    for var in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE", "OPENBLAS_VERBOSE"):
        if var in os.environ:
            out[var] = os.environ[var]
    return out


def collect(openblas: str | None) -> dict:
    info = {
        "cpu": cpu_info(),
        "mem_total_gib": mem_total_gib(),
        "kernel": platform.release(),
        "os": os_release(),
        "python": sys.version.split()[0],
        "python_executable": sys.executable,
        "loadavg": common.loadavg(),
        "environment": {k: os.environ[k] for k in sorted(os.environ)
                        if k.startswith(("OMP_", "MKL_", "OPENBLAS_", "KMP_", "GOMP_", "DS_", "TORCH_EXTENSIONS"))},
    }
    import torch

    info["torch"] = {
        "version": torch.__version__,
        "cuda_build": torch.version.cuda,
        "cuda_available": torch.cuda.is_available(),
        "default_threads": torch.get_num_threads(),
        "mkl_available": torch.backends.mkl.is_available(),
        "mkldnn_available": torch.backends.mkldnn.is_available(),
        "cpu_capability": torch.backends.cpu.get_cpu_capability(),
        "config": torch.__config__.show(),
        "parallel_info": torch.__config__.parallel_info(),
    }
    try:
        import numpy

        info["numpy"] = numpy.__version__
    except ImportError:
        pass
    try:
        import deepspeed

        info["deepspeed"] = deepspeed.__version__
    except Exception as exc:  # noqa: BLE001 - reported, not fatal
        info["deepspeed"] = f"unavailable: {exc}"
    info["asteria_openblas"] = openblas_info(openblas)
    return info


def main(argv=None) -> None:
    import json

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--openblas", help="the OpenBLAS library Asteria's benchmark loads (default libopenblas.so.0)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    sink = common.RecordSink(True)
    info = collect(args.openblas)
    if args.json:
        sink._out.write(json.dumps(info, sort_keys=True) + "\n")
    else:
        sink._out.write(json.dumps(info, indent=2, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
