"""SOAP per-step and refresh time of nikhilvyas/SOAP (soap.py), taken from a source folder
given on the command line.

One fp32 parameter of ROWSxCOLS; SOAP(params, lr=3e-3, betas=(.95, .95), weight_decay=.01,
precondition_frequency=10, max_precond_dim=10000), every other setting at its default. With
max_precond_dim=10000 nothing is blocked: a 4096x1024 parameter has a 4096x4096 left and a
1024x1024 right factor (--row-blocks R splits the parameter into separate R-row parameters
instead, for comparison with a blocked layout).

SOAP's first step only builds the factors and their eigenbases by a full torch.linalg.eigh
(no weight update); its refresh, every 10th step, is one power iteration from the current
basis followed by a QR (get_orthogonal_matrix_QR), with the second moment permuted to the
sorted eigenvalue estimates. Reported:
  soap_step     median time of steps 3..10 (the first update step left out as warm-up; none
                of them refreshes);
  soap_refresh  the library's refresh call, get_orthogonal_matrix_QR, timed directly on the
                optimizer's state after step 10 (median of --refresh-samples calls; the state
                is restored after each call). As a cross-check, step 11, whose update runs
                the same call, is timed too and reported as inloop_refresh_minus_steady.
The first step's full eigh is reported as init_seconds in the details.

    python -m bench.references.soap_refs --src DIR --shape 1024x1024 --threads 1 --json
"""
from __future__ import annotations

import argparse
import hashlib
import sys
from pathlib import Path

from bench.references import common

LR, BETAS, WEIGHT_DECAY, FREQ, MAX_DIM = 3e-3, (0.95, 0.95), 0.01, 10, 10000


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--src", required=True, type=Path, help="folder holding soap.py (a checkout of nikhilvyas/SOAP)")
    ap.add_argument("--shape", type=common.parse_shape, required=True, help="ROWSxCOLS, e.g. 4096x1024")
    ap.add_argument("--threads", type=int, required=True)
    ap.add_argument("--refresh-samples", type=int, default=3, help="direct refresh calls timed (default 3)")
    ap.add_argument("--no-inloop-refresh", action="store_true",
                    help="skip the cross-check step that refreshes inside step()")
    ap.add_argument("--row-blocks", type=int, default=0,
                    help="split the parameter into separate parameters of this many rows (default 0: one parameter)")
    ap.add_argument("--gradients", type=int, default=4, help="distinct random gradients, cycled (default 4)")
    ap.add_argument("--json", action="store_true", help="one JSON record per line")
    return ap.parse_args(argv)


def import_soap(src: Path):
    src = src.resolve()
    if src.is_file() and src.name == "soap.py":
        src = src.parent
    if not (src / "soap.py").is_file():
        raise SystemExit(f"{src}: no soap.py here")
    sys.path.insert(0, str(src))
    import soap

    if Path(soap.__file__).resolve() != src / "soap.py":
        raise SystemExit(f"imported soap from {soap.__file__}, not from {src}")
    ident = common.source_identity([src / "soap.py"], src)
    return soap.SOAP, ident, common.version_string(ident)


def main(argv=None) -> None:
    args = parse_args(argv)
    common.setup_threads(args.threads)
    sink = common.RecordSink(args.json)
    torch = common.import_torch(args.threads)
    SOAP, ident, version = import_soap(args.src)

    rows, cols = args.shape
    block_rows = args.row_blocks or rows
    if rows % block_rows:
        raise SystemExit(f"--row-blocks {block_rows} does not divide {rows} rows")
    gen = torch.Generator().manual_seed(0)
    params = [torch.nn.Parameter(torch.randn(block_rows, cols, generator=gen) * 0.02)
              for _ in range(rows // block_rows)]
    grads = [[torch.randn(block_rows, cols, generator=gen) for _ in params] for _ in range(args.gradients)]
    opt = SOAP(params, lr=LR, betas=BETAS, weight_decay=WEIGHT_DECAY,
               precondition_frequency=FREQ, max_precond_dim=MAX_DIM)

    def step(k: int) -> float:
        for p, g in zip(params, grads[k % len(grads)]):
            p.grad = g
        return common.time_call(opt.step)

    # Call 1 initialises (full eigh, no update); calls 2..FREQ are updates with state step
    # 1..FREQ-1; the refresh runs inside the call whose state step reaches FREQ (call FREQ+1).
    init_seconds = step(1)
    times = {k: step(k) for k in range(2, FREQ + 1)}
    assert all(opt.state[p]["step"] == FREQ - 1 for p in params)
    steady = [times[k] for k in range(3, FREQ + 1)]
    steady_med = common.median(steady)

    # The refresh call itself, on the live state, restored afterwards.
    refresh = []
    for _ in range(args.refresh_samples):
        saved = [(opt.state[p]["exp_avg_sq"].clone(), opt.state[p]["Q"]) for p in params]

        def call():
            for p in params:
                opt.get_orthogonal_matrix_QR(opt.state[p], MAX_DIM, False)

        refresh.append(common.time_call(call))
        for p, (v, q) in zip(params, saved):
            opt.state[p]["exp_avg_sq"], opt.state[p]["Q"] = v, q

    inloop = None
    if not args.no_inloop_refresh:
        inloop = step(FREQ + 1)
        assert all(opt.state[p]["step"] == FREQ for p in params)
    if not all(torch.isfinite(p).all() for p in params):
        raise SystemExit("SOAP produced non-finite weights")

    factors = [list(f.shape) for f in opt.state[params[0]]["GG"] if len(f) > 0]
    shared = {
        "label": "SOAP (nikhilvyas)" + (f", {len(params)} x {block_rows}x{cols} params" if len(params) > 1 else ""),
        "source": ident,
        "soap_sha256": hashlib.sha256((Path(sys.modules[SOAP.__module__].__file__)).read_bytes()).hexdigest(),
        "parameters": len(params),
        "factor_shapes_per_parameter": factors,
        "hyperparameters": {"lr": LR, "betas": BETAS, "weight_decay": WEIGHT_DECAY,
                            "precondition_frequency": FREQ, "max_precond_dim": MAX_DIM,
                            "eps": 1e-8, "shampoo_beta": "betas[1]", "merge_dims": False,
                            "normalize_grads": False, "correct_bias": True},
        "init_seconds": init_seconds,
        "init_method": "first step: torch.linalg.eigh of every factor, no weight update",
        "step_seconds_by_call": sorted(times.items()),
        "torch_threads": torch.get_num_threads(),
    }
    base = {"implementation": "soap.SOAP", "version": version, "threads": args.threads, "shape": [rows, cols]}
    if len(params) > 1:
        base["variant"] = f"row_blocks_{block_rows}"
    sink.emit({**base, "case": "soap_step", "seconds": steady_med,
               "details": {**shared, "method": f"median of update steps 3..{FREQ} (none refreshes)",
                           "samples_seconds": steady}})
    record = {**base, "case": "soap_refresh", "seconds": common.median(refresh),
              "details": {**shared,
                          "method": "get_orthogonal_matrix_QR (one power iteration + torch.linalg.qr, "
                                    "warm-started from the current basis) timed directly, median",
                          "samples_seconds": refresh}}
    if inloop is not None:
        record["details"]["inloop_refresh_step_seconds"] = inloop
        record["details"]["inloop_refresh_minus_steady"] = inloop - steady_med
    sink.emit(record)


if __name__ == "__main__":
    main()
