"""Shampoo per-step and refresh time of Distributed Shampoo (facebookresearch/optimizers,
package distributed_shampoo), taken from a source folder given on the command line.

One fp32 parameter of ROWSxCOLS; DistributedShampoo(lr=1e-3, betas=(0.9, 1.0), epsilon=1e-12,
max_preconditioner_dim=1024, Adam grafting (beta2=0.999, epsilon=1e-10), weight_decay=0,
precondition_frequency=F, start_preconditioning_step=F) with its default preconditioner
config: root inverse by eigendecomposition (torch.linalg.eigh), factor matrices stored packed.
A 4096x1024 parameter becomes four 1024x1024 blocks.

Steps 1..F-1 are Adam-grafting warm-up (DS requires start_preconditioning_step >= F), step F
is the first root computation, then steps run in periods of F: F-1 steps without a refresh,
then one that refreshes. Reported:
  shampoo_step    median time of the steps without a refresh after preconditioning started
                  (the first of them left out);
  shampoo_refresh median time of the refreshing steps (the first, at step F, left out) minus
                  shampoo_step: the root computation for every factor of every block.

    python -m bench.references.shampoo_refs --src DIR --shape 1024x1024 --threads 1 --json
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from bench.references import common

LR, BETAS, EPSILON, MAX_DIM = 1e-3, (0.9, 1.0), 1e-12, 1024
GRAFT_BETA2, GRAFT_EPS = 0.999, 1e-10


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--src", required=True, type=Path,
                    help="folder holding the distributed_shampoo package (a checkout of facebookresearch/optimizers)")
    ap.add_argument("--shape", type=common.parse_shape, required=True, help="ROWSxCOLS, e.g. 4096x1024")
    ap.add_argument("--threads", type=int, required=True)
    ap.add_argument("--frequency", type=int, default=8,
                    help="precondition_frequency F = start_preconditioning_step (default 8: 7 steady steps per refresh)")
    ap.add_argument("--refreshes", type=int, default=3,
                    help="timed refresh periods after the first root computation (default 3)")
    ap.add_argument("--gradients", type=int, default=4, help="distinct random gradients, cycled (default 4)")
    ap.add_argument("--json", action="store_true", help="one JSON record per line")
    args = ap.parse_args(argv)
    if args.frequency < 3 or args.refreshes < 1:
        ap.error("--frequency must be >= 3 and --refreshes >= 1")
    return args


def locate_package(src: Path) -> Path:
    """The folder to put on sys.path: SRC itself, or SRC's parent when SRC is the package."""
    src = src.resolve()
    if (src / "distributed_shampoo" / "__init__.py").is_file():
        return src
    if src.name == "distributed_shampoo" and (src / "__init__.py").is_file():
        return src.parent
    raise SystemExit(f"{src}: no distributed_shampoo package here (expected {src}/distributed_shampoo/__init__.py)")


def import_shampoo(src: Path):
    root = locate_package(src)
    sys.path.insert(0, str(root))
    import distributed_shampoo as ds

    loaded = Path(ds.__file__).resolve().parent
    if loaded != root / "distributed_shampoo":
        raise SystemExit(f"imported distributed_shampoo from {loaded}, not from {root}")
    # The Adam grafting config was renamed: AdamGraftingConfig (older) -> AdamPreconditionerConfig.
    graft_cls = getattr(ds, "AdamGraftingConfig", None) or getattr(ds, "AdamPreconditionerConfig")
    files = sorted((root / "distributed_shampoo").rglob("*.py"))
    files = [f for f in files if "tests" not in f.relative_to(root).parts and "examples" not in f.relative_to(root).parts]
    ident = common.source_identity(files, root)
    base = None
    pyproject = root / "pyproject.toml"
    if pyproject.is_file():
        import tomllib

        project = tomllib.loads(pyproject.read_text()).get("project", {})
        if project.get("name"):
            base = f"{project['name']} {project.get('version', '')}".strip()
    return ds, graft_cls, ident, common.version_string(ident, base)


def main(argv=None) -> None:
    args = parse_args(argv)
    common.setup_threads(args.threads)
    sink = common.RecordSink(args.json)
    torch = common.import_torch(args.threads)
    ds, graft_cls, ident, version = import_shampoo(args.src)

    rows, cols = args.shape
    gen = torch.Generator().manual_seed(0)
    param = torch.nn.Parameter(torch.randn(rows, cols, generator=gen) * 0.02)
    grads = [torch.randn(rows, cols, generator=gen) for _ in range(args.gradients)]
    freq = args.frequency
    opt = ds.DistributedShampoo(
        [param],
        lr=LR,
        betas=BETAS,
        epsilon=EPSILON,
        weight_decay=0.0,
        max_preconditioner_dim=MAX_DIM,
        precondition_frequency=freq,
        start_preconditioning_step=freq,
        grafting_config=graft_cls(beta2=GRAFT_BETA2, epsilon=GRAFT_EPS),
    )
    preconditioner_config = opt.param_groups[0].get("preconditioner_config")

    step_times: list[tuple[int, float]] = []
    total = freq * (args.refreshes + 1)
    for k in range(1, total + 1):
        param.grad = grads[k % len(grads)]
        step_times.append((k, common.time_call(opt.step)))
    if not torch.isfinite(param).all():
        raise SystemExit("Distributed Shampoo produced non-finite weights")

    warmup = [t for k, t in step_times if k < freq]
    first_refresh = step_times[freq - 1][1]
    steady = [t for k, t in step_times if k > freq + 1 and k % freq != 0]
    refresh_steps = [t for k, t in step_times if k > freq and k % freq == 0]
    steady_med = common.median(steady)
    refresh_med = common.median(refresh_steps)
    blocks = -(-rows // MAX_DIM) * -(-cols // MAX_DIM)

    shared = {
        "label": "Distributed Shampoo",
        "package": str(Path(ds.__file__).resolve().parent),
        "source": ident,
        "blocks": blocks,
        "block_shape": [min(rows, MAX_DIM), min(cols, MAX_DIM)],
        "precondition_frequency": freq,
        "start_preconditioning_step": freq,
        "grafting": f"{graft_cls.__name__}(beta2={GRAFT_BETA2}, epsilon={GRAFT_EPS})",
        "preconditioner_config": repr(preconditioner_config),
        "root_method": "eigendecomposition (torch.linalg.eigh), DS default RootInvShampooPreconditionerConfig",
        "hyperparameters": {"lr": LR, "betas": BETAS, "epsilon": EPSILON, "weight_decay": 0.0,
                            "max_preconditioner_dim": MAX_DIM},
        "step_seconds_by_step": step_times,
        "warmup_step_seconds": warmup,
        "first_refresh_step_seconds": first_refresh,
        "torch_threads": torch.get_num_threads(),
    }
    base = {"implementation": "distributed_shampoo.DistributedShampoo", "version": version,
            "threads": args.threads, "shape": [rows, cols]}
    sink.emit({**base, "case": "shampoo_step", "seconds": steady_med,
               "details": {**shared, "method": "median of steps without a refresh after preconditioning started",
                           "samples_seconds": steady}})
    sink.emit({**base, "case": "shampoo_refresh", "seconds": refresh_med - steady_med,
               "details": {**shared, "method": "median refreshing step minus median steady step",
                           "refresh_step_samples_seconds": refresh_steps,
                           "refresh_step_median_seconds": refresh_med,
                           "steady_step_median_seconds": steady_med}})


if __name__ == "__main__":
    main()
