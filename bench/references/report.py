"""How bench/compare-references.sh reports: the samples summarized per case (medians over
rounds, largest deviation, ratios of per-round pairs), the tables of table.md, the machine's
lines, and results.json; `render` writes table.md again from a results.json."""
from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import time
from pathlib import Path

THREAD_VARS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")  # the thread-count variables set per process

BUSY_MARK = 0.25  # † on values measured while other processes kept more CPUs than this busy


def impl_key(rec: dict) -> str:
    if rec["implementation"] == "asteria":
        return "asteria"
    return rec.get("details", {}).get("label") or rec["implementation"]


def size_of(rec: dict):
    return rec["elements"] if "elements" in rec else tuple(rec["shape"])


def value_of(rec: dict) -> float | None:
    if rec.get("error"):
        return None
    v = rec.get("elements_per_second", rec.get("seconds"))
    return float(v) if v is not None else None


def summarize(samples: list[dict]) -> list[dict]:
    """One row per (case, size, threads, implementation): the median over rounds of each
    process's value, the spread, and for references the paired ratio Asteria / reference."""
    groups: dict = {}
    others: dict = {}
    for s in samples:
        v = value_of(s)
        if v is None:
            continue
        key = (s["case"], size_of(s), s["threads"], impl_key(s))
        groups.setdefault(key, {}).setdefault(s["round"], []).append(v)
        if s.get("other_load") is not None:
            others.setdefault(key, []).append(s["other_load"])
    rows = []
    for (case, size, threads, impl), by_round in sorted(groups.items(), key=lambda kv: str(kv[0])):
        per_round = {r: statistics.median(vs) for r, vs in by_round.items()}
        values = list(per_round.values())
        med = statistics.median(values)
        row = {"case": case, "size": list(size) if isinstance(size, tuple) else size, "threads": threads,
               "implementation": impl, "unit": "elements/s" if case == "adamw" else "s",
               "median": med, "min": min(values), "max": max(values), "rounds": len(values),
               "per_round": {str(r): v for r, v in sorted(per_round.items())},
               "other_load_max": max(others.get((case, size, threads, impl), [0.0]))}
        asteria = groups.get((case, size, threads, "asteria"))
        if impl != "asteria" and asteria:
            a_round = {r: statistics.median(vs) for r, vs in asteria.items()}
            paired = [a_round[r] / per_round[r] for r in per_round if r in a_round and per_round[r] > 0]
            if paired:
                row["asteria_ratio"] = statistics.median(paired)
                row["asteria_ratio_rounds"] = len(paired)
                row["asteria_ratio_of_medians"] = statistics.median(a_round.values()) / med if med > 0 else None
        rows.append(row)
    return rows


def fmt_value(row: dict | None) -> str:
    if row is None:
        return "—"
    med = row["median"]
    if row["unit"] == "elements/s":
        text = f"{med / 1e6:,.0f} M/s"
    else:
        ms = med * 1e3
        text = f"{ms:.3g} ms" if ms < 1000 else f"{med:.3g} s"
        if med <= 0:
            text = f"{ms:.3g} ms (≤ 0: below noise)"
    if row["rounds"] > 1 and med > 0:
        dev = max(row["max"] - med, med - row["min"]) / med * 100
        text += f" ±{dev:.0f}%"
    if row.get("other_load_max", 0.0) > BUSY_MARK:
        text += " †"
    return text


def fmt_seconds(seconds: float) -> str:
    return f"{seconds * 1e3:.3g} ms" if abs(seconds) < 1 else f"{seconds:.3g} s"


def fmt_ratio(row: dict | None) -> str:
    if row is None or "asteria_ratio" not in row:
        return "—"
    return f"{row['asteria_ratio']:.3g}×"


def build_tables(rows: list[dict], args) -> list[str]:
    index = {(r["case"], json.dumps(r["size"]), r["threads"], r["implementation"]): r for r in rows}
    refs_by_family: dict[str, list[str]] = {}
    for r in rows:
        fam = r["case"].split("_")[0]
        if r["implementation"] != "asteria" and r["implementation"] not in refs_by_family.setdefault(fam, []):
            refs_by_family[fam].append(r["implementation"])
    lines: list[str] = []
    for fam in args.only:
        refs = sorted(refs_by_family.get(fam, []))
        asteria_cols = [] if args.references_only else ["Asteria"]
        ratio_cols = [] if args.references_only else [f"Asteria ÷ {r}" for r in refs]
        if fam == "adamw":
            lines += ["### AdamW update throughput (elements per second; higher is better)", ""]
            if not args.references_only:
                lines += ["Ratio = Asteria elements/s ÷ reference elements/s (> 1: Asteria faster).", ""]
            head = ["elements", "T", *asteria_cols, *refs, *ratio_cols]
            cases = [("adamw", size) for size in args.adamw_elements]
        else:
            title = {"shampoo": "Shampoo", "soap": "SOAP"}[fam]
            lines += [f"### {title} step and refresh time (lower is better)", ""]
            if not args.references_only:
                lines += ["Ratio = Asteria time ÷ reference time (< 1: Asteria faster).", ""]
            head = ["case", "shape", "T", *asteria_cols, *refs, *ratio_cols]
            cases = [(f"{fam}_{kind}", list(shape)) for kind in ("step", "refresh") for shape in args.shapes]
        lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        for case, size in cases:
            for threads in args.threads:
                key = (case, json.dumps(size), threads)
                a = index.get((*key, "asteria"))
                cells = [] if args.references_only else [fmt_value(a)]
                cells += [fmt_value(index.get((*key, r))) for r in refs]
                if not args.references_only:
                    cells += [fmt_ratio(index.get((*key, r))) for r in refs]
                if fam == "adamw":
                    lead = [f"{size:.0e}".replace("e+0", "e"), str(threads)]
                else:
                    lead = [case.split("_", 1)[1], f"{size[0]}×{size[1]}", str(threads)]
                lines.append("| " + " | ".join(lead + cells) + " |")
        lines.append("")
    return lines


def rounds_text(meta: dict) -> str:
    planned = meta["args"]["rounds"]
    done = meta.get("rounds_done", planned)
    return str(planned) if done == planned else f"{done} of {planned} (stopped part-way)"


def machine_lines(meta: dict) -> list[str]:
    m = meta.get("machine", {})
    cpu = m.get("cpu", {})
    torch_info = m.get("torch", {})
    lines = ["### Machine and versions", ""]
    lines.append(f"- CPU: {cpu.get('model_name', '?')} (vendor {cpu.get('vendor_id', '?')}, family {cpu.get('cpu_family', '?')}, "
                 f"model {cpu.get('model', '?')}, stepping {cpu.get('stepping', '?')}), {cpu.get('logical_cpus', '?')} logical CPUs"
                 f"{', virtualized' if cpu.get('virtualized') else ''}; SIMD: {' '.join(cpu.get('simd_flags', []))}")
    lines.append(f"- Memory {m.get('mem_total_gib', '?')} GiB; {m.get('os', '?')}; kernel {m.get('kernel', '?')}; Python {m.get('python', '?')}")
    lines.append(f"- Thread counts: {', '.join(str(t) for t in meta['args']['threads'])} (torch.set_num_threads and "
                 f"{'/'.join(THREAD_VARS)} per process); rounds: {rounds_text(meta)}, interleaved")
    if torch_info:
        blas = re.findall(r"BLAS_INFO=(\w+)", torch_info.get("config", ""))
        lapack = re.findall(r"LAPACK_INFO=(\w+)", torch_info.get("config", ""))
        mkl = re.search(r"Intel\(R\) oneAPI Math Kernel Library Version ([^\n]*)", torch_info.get("config", ""))
        lines.append(f"- torch {torch_info.get('version')} (PyPI wheel; CUDA build {torch_info.get('cuda_build')}, no GPU used): "
                     f"BLAS {blas[0] if blas else '?'}, LAPACK {lapack[0] if lapack else '?'}"
                     f"{', MKL ' + mkl.group(1).strip() if mkl else ''}; CPU capability {torch_info.get('cpu_capability')}")
    lines.append(f"- DeepSpeed {m.get('deepspeed', '?')}; numpy {m.get('numpy', '?')}")
    for rec in meta.get("reference_versions", []):
        lines.append(f"- {rec}")
    ob = m.get("asteria_openblas", {})
    if not meta["args"]["references_only"]:
        ast = meta.get("asteria", {})
        lines.append(f"- Asteria: {ast.get('benchmark')} (repo {ast.get('git_commit', '?')[:12]}"
                     f"{'+dirty' if ast.get('git_dirty') else ''}, built {ast.get('benchmark_mtime', '?')})")
    if ob:
        core = ob.get("corename", ob.get("error", "?"))
        lines.append(f"- OpenBLAS for Asteria ({ob.get('library')}): core {core}; {ob.get('config', '')}"
                     + (f"; OPENBLAS_CORETYPE={ob['OPENBLAS_CORETYPE']}" if ob.get("OPENBLAS_CORETYPE") else ""))
        if "avx512f" in cpu.get("simd_flags", []) and str(core).lower() in ("prescott", "core2", "nehalem", "katmai", "atom"):
            lines.append(f"  - This OpenBLAS does not recognise the CPU and picks its {core} (SSE) kernels when a program "
                         "loads it; Asteria's programs then restart with OPENBLAS_CORETYPE set to the processor's class "
                         "(the kernels they ran are in the line on Asteria's BLAS above).")
    ol = meta.get("other_load")
    if ol:
        lines.append(f"- Other processes on the machine kept {ol['min']:.2f}–{ol['max']:.2f} CPUs busy during the "
                     f"measured processes (median {ol['median']:.2f}; per process in results.json `runs[].other_load`)")
    lines.append(f"- Started {meta.get('started_at')}, took {meta.get('wall_seconds', 0) / 60:.1f} min")
    return lines


def write_outputs(args, meta: dict, samples: list[dict], runs: list[dict], final: bool) -> str:
    rows = summarize(samples)
    results = {"meta": meta, "summary": rows, "samples": samples, "runs": runs}
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "results.json").write_text(json.dumps(results, indent=1, sort_keys=True, default=str) + "\n")
    if not final:
        return ""
    lines = ["## Asteria vs reference implementations: host optimizer math", ""]
    lines += ["Each value is the median over rounds of one process's median; ±: largest deviation of a "
              "round from it; †: in at least one round, other processes kept more than "
              f"{BUSY_MARK} CPUs busy while it ran. Ratios are medians of per-round ratios (Asteria and the "
              "reference ran back to back in each round). Method: bench/references/README.md.", ""]
    if args.references_only:
        lines += ["**References only**: Asteria's benchmark was not run.", ""]
    lines += build_tables(rows, args)
    variants = sorted({f"{s['details']['label']}: {s['details']['variant']}" for s in samples
                       if s.get("case") == "adamw" and s.get("details", {}).get("variant") and s["implementation"] != "asteria"})
    if variants:
        lines += ["AdamW variants: " + "; ".join(variants) + ".", ""]
    notes = []
    for s in samples:
        if s.get("case") == "soap_refresh" and "inloop_refresh_minus_steady" in s.get("details", {}):
            notes.append(s)
    if notes:
        lines += ["SOAP cross-check (refresh inside step() minus a steady step, median over rounds): " + ", ".join(
            f"{'×'.join(map(str, shape))} T={t}: {fmt_seconds(statistics.median(vals))}"
            for (shape, t), vals in sorted(_group_inloop(notes).items())) + ".", ""]
    inits = _group_values([s for s in samples if s.get("case") == "soap_step"], "init_seconds")
    if inits:
        lines += ["SOAP first step (full eigh of every factor, no update), median: " + ", ".join(
            f"{'×'.join(map(str, shape))} T={t}: {fmt_seconds(statistics.median(v))}" for (shape, t), v in sorted(inits.items())) + ".", ""]
    contexts = [r["benchmark_context"] for r in runs if r.get("benchmark_context")]
    blas = sorted({c["blas"] for c in contexts if c.get("blas")})
    if blas:
        lines += ["Asteria's BLAS, as its benchmark reported it: " + "; ".join(blas) + ".", ""]
    if any(c.get("library_build_type") == "debug" for c in contexts):
        lines += ["Note: Debian's Google Benchmark library reports itself as a debug build "
                  "(`library_build_type: debug`); the code measured is Asteria's release build.", ""]
    if any(c.get("cpu_scaling_enabled") for c in contexts):
        lines += ["Note: Google Benchmark reports CPU frequency scaling enabled.", ""]
    failed = [r for r in runs if r.get("error")]
    if failed:
        lines += ["### Problems", ""] + [f"- round {r['round']}, {r['job']}: {r['error']} (log: {r['log']})" for r in failed] + [""]
    lines += machine_lines(meta)
    text = "\n".join(lines) + "\n"
    (args.out / "table.md").write_text(text)
    torch_config = meta.get("machine", {}).get("torch", {}).get("config")
    if torch_config:
        (args.out / "table.md").write_text(text + "\n<details><summary>torch.__config__.show()</summary>\n\n```\n"
                                           + torch_config.strip() + "\n```\n</details>\n")
    return text


def _group_inloop(samples):
    out: dict = {}
    for s in samples:
        out.setdefault((tuple(s["shape"]), s["threads"]), []).append(s["details"]["inloop_refresh_minus_steady"])
    return out


def _group_values(samples, key):
    out: dict = {}
    for s in samples:
        if key in s.get("details", {}):
            out.setdefault((tuple(s["shape"]), s["threads"]), []).append(s["details"][key])
    return out


# ---------------------------------------------------------------------------------------------


def render(out: Path) -> int:
    """Writes OUT/table.md again from OUT/results.json (e.g. of a run stopped part-way)."""
    results = json.loads((out / "results.json").read_text())
    meta = results["meta"]
    a = meta["args"]
    args = argparse.Namespace(
        out=out, only=a["only"], threads=a["threads"], references_only=a["references_only"],
        adamw_elements=a["adamw_elements"], shapes=[tuple(x) for x in a["shapes"]], rounds=a["rounds"])
    samples, runs = results["samples"], results["runs"]
    if samples:
        meta.setdefault("rounds_done", max(x["round"] for x in samples))
    loads = [r["other_load"] for r in runs if r.get("other_load") is not None]
    if loads and "other_load" not in meta:
        meta["other_load"] = {"min": min(loads), "median": statistics.median(loads), "max": max(loads)}
    print(write_outputs(args, meta, samples, runs, final=True))
    return 0
