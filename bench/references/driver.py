"""Runs Asteria's optimizer benchmark (bench_optimizer_step) and the reference implementations
in interleaved rounds on this machine, then writes OUT/results.json (every raw sample),
OUT/table.md and prints the table. Started by bench/compare-references.sh, which first makes
the benchmark's virtual environment; see bench/references/README.md.

Within a round, every (case, size, thread count) runs Asteria's benchmark and then each
reference, each in its own process, back to back; odd rounds run them in the reverse order, so
that machine noise and ordering effects fall on both sides.
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

try:  # run as a module of the repository (python -m bench.references.driver) or as a script
    from bench.references.report import BUSY_MARK, THREAD_VARS, impl_key, render, write_outputs
except ImportError:
    from report import BUSY_MARK, THREAD_VARS, impl_key, render, write_outputs

REPO = Path(__file__).resolve().parents[2]
BENCH_NAME = "bench_optimizer_step"
FAMILIES = ("adamw", "shampoo", "soap")

# Google Benchmark names -> our case names.
ASTERIA_CASES = {
    "BM_AdamWUpdate": "adamw",
    "BM_ShampooStep": "shampoo_step",
    "BM_ShampooRefresh": "shampoo_refresh",
    "BM_SoapStep": "soap_step",
    "BM_SoapRefresh": "soap_refresh",
}
NO_MATCH = "the filter matched no benchmark"
TIME_UNITS = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}


# ---------------------------------------------------------------------------------------------
# Command line


def parse_list(text: str, conv) -> list:
    return [conv(x) for x in text.split(",") if x.strip()]


def parse_count(text: str) -> int:
    value = float(text)
    if value <= 0 or value != int(value):
        raise argparse.ArgumentTypeError(f"not a positive integer: {text}")
    return int(value)


def parse_shape(text: str) -> tuple[int, int]:
    m = re.fullmatch(r"\s*(\d+)\s*[xX]\s*(\d+)\s*", text)
    if not m:
        raise argparse.ArgumentTypeError(f"shape must be ROWSxCOLS: {text}")
    return int(m.group(1)), int(m.group(2))


def parse_args(argv=None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(
        prog="bench/compare-references.sh",
        description="Asteria's optimizer step benchmark against DeepSpeed CPUAdam, torch AdamW, "
                    "Distributed Shampoo and nikhilvyas/SOAP, interleaved on this machine.",
    )
    ap.add_argument("--shampoo-src", type=Path, help="checkout of facebookresearch/optimizers (holds distributed_shampoo/)")
    ap.add_argument("--soap-src", type=Path, help="checkout of nikhilvyas/SOAP (holds soap.py)")
    ap.add_argument("--build", type=Path, default=Path("build/release"),
                    help=f"Asteria build folder holding bench/{BENCH_NAME} (default build/release)")
    ap.add_argument("--out", type=Path, default=Path("out/compare-references"),
                    help="where results.json, table.md and logs/ go (default out/compare-references)")
    ap.add_argument("--rounds", type=int, default=3, help="interleaved rounds (default 3)")
    ap.add_argument("--threads", type=lambda s: parse_list(s, int), default=[1, 2],
                    help="comma-separated thread counts (default 1,2)")
    ap.add_argument("--only", type=lambda s: parse_list(s, str), default=list(FAMILIES),
                    help="comma-separated subset of adamw,shampoo,soap (default all)")
    ap.add_argument("--adamw-elements", type=lambda s: parse_list(s, parse_count), default=[10**7, 10**8],
                    help="comma-separated AdamW sizes (default 1e7,1e8)")
    ap.add_argument("--shapes", type=lambda s: parse_list(s, parse_shape), default=[(1024, 1024), (4096, 1024)],
                    help="comma-separated Shampoo/SOAP shapes (default 1024x1024,4096x1024)")
    ap.add_argument("--references-only", action="store_true",
                    help=f"run the references alone (no {BENCH_NAME} needed)")
    ap.add_argument("--openblas-coretype", metavar="NAME",
                    help="OPENBLAS_CORETYPE for Asteria's process (e.g. SkylakeX); default: as the environment has it")
    ap.add_argument("--benchmark-arg", action="append", default=[], metavar="ARG",
                    help=f"extra argument for {BENCH_NAME} (repeatable), e.g. --benchmark-arg=--benchmark_min_time=2s")
    ap.add_argument("--timeout", type=float, default=1800.0, help="seconds allowed per process (default 1800)")
    ap.add_argument("--wait-quiet", type=float, default=30.0, metavar="S",
                    help="before each process, wait up to S seconds until other processes keep fewer than "
                         "--quiet-threshold CPUs busy (default 30; 0: do not wait; the load is recorded either way)")
    ap.add_argument("--quiet-threshold", type=float, default=0.2, metavar="CPUS",
                    help="CPUs other processes may keep busy for --wait-quiet (default 0.2)")
    ap.add_argument("--validate-only", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)

    bad = [f for f in args.only if f not in FAMILIES]
    if bad:
        ap.error(f"--only: unknown {bad}; choose from {','.join(FAMILIES)}")
    if args.rounds < 1:
        ap.error("--rounds must be >= 1")
    if not args.threads or any(t < 1 for t in args.threads):
        ap.error("--threads must list positive counts")
    if "shampoo" in args.only:
        if args.shampoo_src is None:
            ap.error("--shampoo-src DIR is required (a checkout of facebookresearch/optimizers), or leave shampoo out with --only")
        src = args.shampoo_src.resolve()
        if not ((src / "distributed_shampoo" / "__init__.py").is_file()
                or (src.name == "distributed_shampoo" and (src / "__init__.py").is_file())):
            ap.error(f"--shampoo-src {args.shampoo_src}: no distributed_shampoo package there")
        args.shampoo_src = src
    if "soap" in args.only:
        if args.soap_src is None:
            ap.error("--soap-src DIR is required (a checkout of nikhilvyas/SOAP), or leave soap out with --only")
        src = args.soap_src.resolve()
        if not ((src / "soap.py").is_file() or (src.is_file() and src.name == "soap.py")):
            ap.error(f"--soap-src {args.soap_src}: no soap.py there")
        args.soap_src = src
    args.build = (args.build if args.build.is_absolute() else REPO / args.build).resolve()
    args.out = (args.out if args.out.is_absolute() else REPO / args.out).resolve()
    args.bench = args.build / "bench" / BENCH_NAME
    if not args.references_only and not os.access(args.bench, os.X_OK):
        sys.exit(
            f"error: {args.bench} not found (or not executable).\n"
            f"Build it with `make build` (or point --build at a build folder that has bench/{BENCH_NAME}),\n"
            f"or run the references alone with --references-only."
        )
    return args


# ---------------------------------------------------------------------------------------------
# Jobs


@dataclass
class Job:
    name: str           # e.g. "asteria adamw 10000000 T=1"
    side: str           # "asteria" or "reference"
    family: str
    threads: int
    cmd: list[str]
    env: dict = field(default_factory=dict)
    bench_out: Path | None = None  # Asteria: Google Benchmark JSON file


def thread_env(threads: int) -> dict:
    return {var: str(threads) for var in THREAD_VARS}


def size_token(size) -> str:
    return str(size) if isinstance(size, int) else f"{size[0]}x{size[1]}"


def asteria_job(args, family: str, size, threads: int, tmp: Path) -> Job:
    if family == "adamw":
        regex = f"^BM_AdamWUpdate/elements:{size}/threads:{threads}(/.*)?$"
    else:
        prefix = {"shampoo": "BM_Shampoo", "soap": "BM_Soap"}[family]
        regex = f"^{prefix}(Step|Refresh)/rows:{size[0]}/cols:{size[1]}/threads:{threads}(/.*)?$"
    out = tmp / f"asteria-{family}-{size_token(size)}-T{threads}.json"
    cmd = [str(args.bench), f"--benchmark_filter={regex}", f"--benchmark_out={out}",
           "--benchmark_out_format=json", *args.benchmark_arg]
    env = thread_env(threads)
    if args.openblas_coretype:
        env["OPENBLAS_CORETYPE"] = args.openblas_coretype
    return Job(f"asteria {family} {size_token(size)} T={threads}", "asteria", family, threads, cmd, env, out)


def reference_jobs(args, family: str, size, threads: int) -> list[Job]:
    py = [sys.executable, "-m"]
    common = ["--threads", str(threads), "--json"]
    env = thread_env(threads)
    if family == "adamw":
        return [
            Job(f"{impl} adamw {size} T={threads}", "reference", family, threads,
                py + ["bench.references.adamw_refs", "--impl", impl, "--elements", str(size), *common], env)
            for impl in ("deepspeed", "torch")
        ]
    shape = size_token(size)
    if family == "shampoo":
        return [Job(f"distributed_shampoo {shape} T={threads}", "reference", family, threads,
                    py + ["bench.references.shampoo_refs", "--src", str(args.shampoo_src), "--shape", shape, *common], env)]
    # SOAP's max_precond_dim is not a blocking (a larger dimension gets no factor at all), so a
    # parameter taller than Asteria's 1024-blocks is measured as separate 1024-row parameters:
    # the same factors and products Asteria's blocked parameter has.
    blocks = ["--row-blocks", "1024"] if size[0] > 1024 and size[0] % 1024 == 0 else []
    return [Job(f"soap {shape} T={threads}", "reference", family, threads,
                py + ["bench.references.soap_refs", "--src", str(args.soap_src), "--shape", shape, *blocks, *common], env)]


def round_jobs(args, round_index: int, tmp: Path) -> list[Job]:
    jobs: list[Job] = []
    for family in args.only:
        sizes = args.adamw_elements if family == "adamw" else args.shapes
        for size in sizes:
            for threads in args.threads:
                group = [] if args.references_only else [asteria_job(args, family, size, threads, tmp)]
                group += reference_jobs(args, family, size, threads)
                jobs += reversed(group) if round_index % 2 else group
    return jobs


def base_env() -> dict:
    env = dict(os.environ)
    env.setdefault("TORCH_EXTENSIONS_DIR", str(Path(sys.prefix) / "torch_extensions"))
    env["PYTHONPATH"] = str(REPO) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def loadavg():
    try:
        return [float(x) for x in Path("/proc/loadavg").read_text().split()[:3]]
    except OSError:
        return None


CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def busy_cpu_seconds() -> float | None:
    """CPU seconds all CPUs have spent busy since boot (/proc/stat: all but idle and iowait)."""
    try:
        fields = [int(x) for x in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    except (OSError, ValueError, IndexError):
        return None
    user, nice, system, idle, iowait, irq, softirq, steal = (fields + [0] * 8)[:8]
    return (user + nice + system + irq + softirq + steal) / CLOCK_TICKS


def children_cpu_seconds() -> float:
    import resource

    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def other_load(seconds: float = 1.0) -> float | None:
    """CPUs kept busy by other processes over `seconds`, measured while this driver waits."""
    before = busy_cpu_seconds()
    time.sleep(seconds)
    after = busy_cpu_seconds()
    return None if before is None or after is None else max(0.0, (after - before) / seconds)


def wait_for_quiet(limit_s: float, threshold: float) -> tuple[float | None, float]:
    """Waits (up to limit_s) until other processes keep fewer than `threshold` CPUs busy.
    Returns the last measured load and the seconds waited."""
    start = time.time()
    load = other_load()
    while load is not None and load > threshold and time.time() - start < limit_s:
        time.sleep(4.0)
        load = other_load()
    return load, round(time.time() - start, 1)


# ---------------------------------------------------------------------------------------------
# Asteria's Google Benchmark JSON


def parse_benchmark_json(path: Path) -> tuple[list[dict], dict]:
    data = json.loads(path.read_text())
    entries = data.get("benchmarks", [])
    iterations = [e for e in entries if e.get("run_type", "iteration") == "iteration"]
    if not iterations:  # --benchmark_report_aggregates_only: take the medians
        iterations = [e for e in entries if e.get("aggregate_name") == "median"]
    records = []
    for e in iterations:
        run_name = e.get("run_name") or e["name"]
        parts = run_name.split("/")
        case = ASTERIA_CASES.get(parts[0])
        if case is None:
            continue
        kv = dict(p.split(":", 1) for p in parts[1:] if ":" in p)
        rec = {"implementation": "asteria", "case": case, "threads": int(kv.get("threads", e.get("threads", 0)))}
        details = {k: e[k] for k in ("name", "run_name", "iterations", "real_time", "cpu_time", "time_unit",
                                     "repetitions", "repetition_index", "threads", "aggregate_name") if k in e}
        details.update({k: v for k, v in e.items() if k not in details and isinstance(v, (int, float))
                        and k not in ("family_index", "per_family_instance_index")})
        if e.get("error_occurred"):
            rec["error"] = e.get("error_message", "error_occurred")
        if case == "adamw":
            rec["elements"] = int(float(kv["elements"]))
            if "items_per_second" in e:
                rec["elements_per_second"] = float(e["items_per_second"])
            else:
                rec.setdefault("error", "no items_per_second counter")
        else:
            rec["shape"] = [int(kv["rows"]), int(kv["cols"])]
            rec["seconds"] = float(e["real_time"]) * TIME_UNITS[e.get("time_unit", "ns")]
        rec["details"] = details
        records.append(rec)
    return records, data.get("context", {})


# ---------------------------------------------------------------------------------------------
# Running


def run_job(job: Job, env: dict, log_dir: Path, tag: str, timeout: float) -> tuple[list[dict], dict]:
    """Runs one process; returns its records and facts about the run (wall time, load, errors)."""
    full_env = {**env, **job.env}
    started = time.time()
    load_before = loadavg()
    log = log_dir / f"{tag}.log"
    info = {"job": job.name, "side": job.side, "command": shlex.join(job.cmd),
            "started_at": dt.datetime.fromtimestamp(started).isoformat(timespec="seconds"),
            "loadavg_before": load_before, "log": str(log)}
    busy0, own0 = busy_cpu_seconds(), children_cpu_seconds()
    try:
        proc = subprocess.run(job.cmd, cwd=REPO, env=full_env, capture_output=True, text=True, timeout=timeout)
        rc, out, err = proc.returncode, proc.stdout, proc.stderr
    except subprocess.TimeoutExpired as exc:
        rc, out, err = "timeout", exc.stdout or "", (exc.stderr or "") + f"\n[timed out after {timeout} s]"
        out = out.decode() if isinstance(out, bytes) else out
        err = err.decode() if isinstance(err, bytes) else err
    wall = time.time() - started
    busy1, own1 = busy_cpu_seconds(), children_cpu_seconds()
    info.update({"returncode": rc, "wall_seconds": round(wall, 3), "loadavg_after": loadavg(),
                 "cpu_seconds": round(own1 - own0, 3)})
    if busy0 is not None and busy1 is not None and wall > 0:
        # CPUs that other processes kept busy while this one ran (0 on a quiet machine).
        info["other_load"] = round(max(0.0, (busy1 - busy0) - (own1 - own0)) / wall, 3)
    log.write_text(f"$ {info['command']}\n# env: {json.dumps(job.env)}\n# rc: {rc}\n--- stdout\n{out}\n--- stderr\n{err}")

    records: list[dict] = []
    if job.side == "asteria":
        if rc == 0:
            # Google Benchmark exits 0 when the filter matches nothing, and may not write the file.
            if job.bench_out and job.bench_out.is_file() and job.bench_out.stat().st_size > 0:
                records, context = parse_benchmark_json(job.bench_out)
                info["benchmark_context"] = context
            if not records:
                info["error"] = NO_MATCH
        else:
            tail = "\n".join(err.strip().splitlines()[-3:])
            info["error"] = f"{BENCH_NAME} exited with {rc}: {tail}"
    else:
        for line in out.splitlines():
            line = line.strip()
            if line.startswith("{"):
                try:
                    rec = json.loads(line)
                except json.JSONDecodeError:
                    continue
                if isinstance(rec, dict) and "implementation" in rec:
                    records.append(rec)
        if rc != 0:
            tail = "\n".join(err.strip().splitlines()[-3:])
            info["error"] = f"exited with {rc}: {tail}"
        elif not records:
            info["error"] = "printed no record"
    return records, info


def collect_machine(args, env: dict) -> dict:
    cmd = [sys.executable, "-m", "bench.references.machine_info", "--json"]
    openblas = None
    if not args.references_only:
        try:
            ldd = subprocess.run(["ldd", str(args.bench)], capture_output=True, text=True, timeout=30).stdout
            m = re.search(r"libopenblas\S*\s+=>\s+(\S+)", ldd)
            openblas = m.group(1) if m else None
        except (OSError, subprocess.SubprocessError):
            pass
    if openblas:
        cmd += ["--openblas", openblas]
    menv = dict(env)
    if args.openblas_coretype:
        menv["OPENBLAS_CORETYPE"] = args.openblas_coretype
    proc = subprocess.run(cmd, cwd=REPO, env=menv, capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        return {"error": proc.stderr.strip().splitlines()[-1:] or ["machine_info failed"]}
    info = json.loads(proc.stdout.strip().splitlines()[-1])
    info["asteria_openblas"]["linked_by_benchmark"] = bool(openblas)
    return info


def asteria_identity(args) -> dict:
    ident = {"build": str(args.build), "benchmark": str(args.bench)}
    try:
        ident["git_commit"] = subprocess.run(["git", "-C", str(REPO), "rev-parse", "HEAD"], capture_output=True,
                                             text=True, timeout=10, check=True).stdout.strip()
        ident["git_dirty"] = bool(subprocess.run(["git", "-C", str(REPO), "status", "--porcelain", "--untracked-files=no"],
                                                 capture_output=True, text=True, timeout=10).stdout.strip())
    except (OSError, subprocess.SubprocessError):
        pass
    if args.bench.exists():
        ident["benchmark_mtime"] = dt.datetime.fromtimestamp(args.bench.stat().st_mtime).isoformat(timespec="seconds")
    return ident


# ---------------------------------------------------------------------------------------------
# Summary and table


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--render"]:
        if len(argv) != 2:
            sys.exit("usage: python -m bench.references.driver --render OUT_DIR")
        return render(Path(argv[1]).resolve())
    args = parse_args(argv)
    if args.validate_only:
        return 0
    started = time.time()
    env = base_env()
    args.out.mkdir(parents=True, exist_ok=True)
    log_dir = args.out / "logs"
    if log_dir.exists():
        shutil.rmtree(log_dir)
    log_dir.mkdir()
    tmp = Path(tempfile.mkdtemp(prefix="compare-references-"))

    print(f"compare-references: {args.rounds} round(s), threads {args.threads}, {', '.join(args.only)}"
          f"{' (references only)' if args.references_only else ''}; output in {args.out}", flush=True)
    meta = {
        "started_at": dt.datetime.fromtimestamp(started).isoformat(timespec="seconds"),
        "args": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()},
        "machine": collect_machine(args, env),
    }
    if not args.references_only:
        meta["asteria"] = asteria_identity(args)

    samples: list[dict] = []
    runs: list[dict] = []
    loads: list[float] = []
    versions: dict[str, str] = {}
    for r in range(args.rounds):
        jobs = round_jobs(args, r, tmp)
        for i, job in enumerate(jobs):
            tag = f"r{r + 1}-{i + 1:02d}-{re.sub(r'[^A-Za-z0-9]+', '_', job.name).strip('_')}"
            print(f"[round {r + 1}/{args.rounds}] {i + 1}/{len(jobs)} {job.name} ...", end="", flush=True)
            quiet = {}
            if args.wait_quiet > 0:
                load, waited = wait_for_quiet(args.wait_quiet, args.quiet_threshold)
                quiet = {"other_load_at_start": load, "waited_for_quiet_seconds": waited}
            records, info = run_job(job, env, log_dir, tag, args.timeout)
            info.update({"round": r + 1, "order": i + 1, **quiet})
            runs.append(info)
            if info.get("other_load") is not None:
                loads.append(info["other_load"])
            for rec in records:
                rec.update({"round": r + 1, "order": i + 1, "job": job.name, "other_load": info.get("other_load")})
                samples.append(rec)
                if rec["implementation"] != "asteria":
                    label = rec.get("details", {}).get("label", rec["implementation"])
                    versions[rec["implementation"]] = f"{rec['implementation']} ({label}): {rec.get('version')}"
            shown = ", ".join(_short(rec) for rec in records)
            print(f" {info['wall_seconds']:.0f} s (others: {info.get('other_load', float('nan')):.2f} CPUs)  {shown}"
                  + (f"  ERROR: {info['error']}" if info.get("error") else ""), flush=True)
            meta["reference_versions"] = sorted(versions.values())
            write_outputs(args, meta, samples, runs, final=False)
        # A table after every round, so that a run stopped part-way still leaves one.
        meta["wall_seconds"] = round(time.time() - started, 1)
        if loads:
            meta["other_load"] = {"min": min(loads), "median": statistics.median(loads), "max": max(loads)}
        meta["rounds_done"] = r + 1
        write_outputs(args, meta, samples, runs, final=True)
    meta["wall_seconds"] = round(time.time() - started, 1)
    if loads:
        meta["other_load"] = {"min": min(loads), "median": statistics.median(loads), "max": max(loads)}
    text = write_outputs(args, meta, samples, runs, final=True)
    shutil.rmtree(tmp, ignore_errors=True)
    print()
    print(text)
    print(f"wrote {args.out / 'results.json'} and {args.out / 'table.md'}")
    # A benchmark that the filter did not find is reported, not fatal: the program may not have
    # every case yet. Failed processes are.
    return 1 if any(r.get("error") and r["error"] != NO_MATCH for r in runs) else 0


def _short(rec: dict) -> str:
    if rec.get("error"):
        return f"{rec['case']}: error"
    if "elements_per_second" in rec:
        return f"{impl_key(rec)} {rec['elements_per_second'] / 1e6:.0f} M/s"
    return f"{impl_key(rec)} {rec['case']} {rec['seconds'] * 1e3:.3g} ms"


if __name__ == "__main__":
    sys.exit(main())
