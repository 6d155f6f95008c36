"""AdamW update throughput of the references: DeepSpeed's CPU Adam (DeepSpeedCPUAdam,
adamw_mode=True) and torch.optim.AdamW(fused=True) (foreach=True where fused is not supported
on CPU by the installed torch).

One flat fp32 parameter of E elements, its gradient set once; lr 1e-3, betas (0.9, 0.999),
eps 1e-8, weight decay 0.01. Only optimizer.step() is timed, after warm-up steps; the result is
E / median(step seconds).

    python -m bench.references.adamw_refs --impl deepspeed --elements 1e7 --threads 1 --json
"""
from __future__ import annotations

import argparse
import os
import re
from pathlib import Path

from bench.references import common

LR, BETAS, EPS, WEIGHT_DECAY = 1e-3, (0.9, 0.999), 1e-8, 0.01


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--impl", choices=("deepspeed", "torch"), required=True)
    ap.add_argument("--elements", type=common.parse_count, required=True, help="e.g. 1e7")
    ap.add_argument("--threads", type=int, required=True)
    ap.add_argument("--warmup", type=int, default=3, help="untimed steps first (default 3)")
    ap.add_argument("--min-steps", type=int, default=10, help="timed steps, at least (default 10)")
    ap.add_argument("--min-time", type=float, default=2.0,
                    help="keep timing steps until this many seconds of steps were timed (default 2)")
    ap.add_argument("--max-steps", type=int, default=200)
    ap.add_argument("--json", action="store_true", help="one JSON record per line")
    return ap.parse_args(argv)


def deepspeed_build_flags() -> str | None:
    """The compiler flags of the JIT-built cpu_adam op (from its build.ninja)."""
    base = os.environ.get("TORCH_EXTENSIONS_DIR")
    candidates = [Path(base)] if base else []
    candidates.append(Path.home() / ".cache" / "torch_extensions")
    for root in candidates:
        for ninja in root.glob("**/cpu_adam/build.ninja"):
            m = re.search(r"^cflags = (.*)$", ninja.read_text(), re.M)
            if m:
                flags = [f for f in m.group(1).split() if not f.startswith(("-I", "-isystem", "/"))]
                return " ".join(flags)
    return None


def make_optimizer(torch, impl: str, param):
    if impl == "deepspeed":
        import deepspeed
        from deepspeed.accelerator import get_accelerator
        from deepspeed.ops.adam import DeepSpeedCPUAdam

        opt = DeepSpeedCPUAdam([param], lr=LR, betas=BETAS, eps=EPS, weight_decay=WEIGHT_DECAY,
                               adamw_mode=True, bias_correction=True)
        details = {
            "variant": "DeepSpeedCPUAdam(adamw_mode=True)",
            "accelerator": get_accelerator().device_name(),
            "op_cflags": deepspeed_build_flags(),
        }
        return opt, "deepspeed.ops.adam.DeepSpeedCPUAdam", deepspeed.__version__, "DeepSpeed CPUAdam", details

    # torch: fused on CPU where the installed version supports it.
    try:
        opt = torch.optim.AdamW([param], lr=LR, betas=BETAS, eps=EPS, weight_decay=WEIGHT_DECAY, fused=True)
        variant, fallback = "fused", None
    except (RuntimeError, ValueError) as exc:  # fused not supported for CPU tensors
        opt = torch.optim.AdamW([param], lr=LR, betas=BETAS, eps=EPS, weight_decay=WEIGHT_DECAY, foreach=True)
        variant, fallback = "foreach", f"fused=True refused: {exc}"
    details = {"variant": variant}
    if fallback:
        details["fallback_reason"] = fallback
    return opt, "torch.optim.AdamW", torch.__version__, f"torch AdamW ({variant})", details


def main(argv=None) -> None:
    args = parse_args(argv)
    common.setup_threads(args.threads)
    sink = common.RecordSink(args.json)
    torch = common.import_torch(args.threads)

    n = args.elements
    gen = torch.Generator().manual_seed(0)
    param = torch.nn.Parameter(torch.empty(n, dtype=torch.float32).uniform_(-0.05, 0.05, generator=gen))
    param.grad = torch.empty(n, dtype=torch.float32).normal_(0.0, 1e-3, generator=gen)

    opt, impl_name, version, label, details = make_optimizer(torch, args.impl, param)

    for _ in range(args.warmup):
        opt.step()
    samples: list[float] = []
    while len(samples) < args.max_steps and (len(samples) < args.min_steps or sum(samples) < args.min_time):
        samples.append(common.time_call(opt.step))
    if not torch.isfinite(param[:1024]).all():
        raise SystemExit("AdamW produced non-finite weights")

    med = common.median(samples)
    details.update({
        "label": label,
        "median_step_seconds": med,
        "samples_seconds": samples,
        "warmup_steps": args.warmup,
        "hyperparameters": {"lr": LR, "betas": BETAS, "eps": EPS, "weight_decay": WEIGHT_DECAY},
        "torch_threads": torch.get_num_threads(),
    })
    sink.emit({
        "implementation": impl_name,
        "version": version,
        "case": "adamw",
        "threads": args.threads,
        "elements": n,
        "elements_per_second": n / med,
        "details": details,
    })


if __name__ == "__main__":
    main()
