#!/usr/bin/env python3
"""`mpirun -np N asteria train` against single-process training.

  equals-global-batch N OPTIMIZER: S = 0, 8 steps; the data-parallel run's final weights equal a
      single process's on the same global batch within float tolerance (the ranks' gradients are
      summed in another order, so bits may differ).
  replicas-bitwise N OPTIMIZER S: 50 steps; every rank's weights and optimizer state digests are
      equal (summary.json replicas_identical), and each rank's plan reduces every layer.
  sharded N OPTIMIZER S [HOW [DTYPE]]: 20 steps with --parallelism HOW (zero1 by default; zero2,
      fsdp), gradients on the wire as DTYPE (--reduce-dtype, fp32 by default) in both runs:
      the weights are bitwise those of the same run with ddp (nothing sharded), and each rank holds
      its share of the optimizer state (every block once); with zero2 and fsdp the gradients travel
      by reduce-scatters (scatter ops in the plan), with fsdp the weights by gathers before their
      uses (none after the updates).
  resume N OPTIMIZER S [shard|HOW]: 10 steps straight, against 5 steps with a checkpoint every 3
      (refreshes shared, or with shard: state sharded among the ranks, --parallelism zero1; or
      --parallelism HOW) resumed
      from step 3 to 10: every rank's weights and optimizer state digests are bitwise those of the
      straight run.
  disagree 2 OPTIMIZER: ranks started with different --steps, --optimizer or --seed (an MPMD
      command line) or reading different text with --data, and ranks resumed from checkpoints of
      different steps, stop at once with one message naming the option and each rank's value,
      instead of waiting on each other forever; copies of one corpus at two paths run.

Usage: check_data_parallel_train.py ASTERIA MPIRUN WORKDIR CHECK N OPTIMIZER [S [HOW [DTYPE]]]
"""
import json
import os
import shutil
import subprocess
import sys

import numpy as np

# --batch is each rank's: the data-parallel runs below train on GLOBAL_BATCH sequences a step.
GLOBAL_BATCH = 4
COMMON = ["train", "--model", "tiny", "--batch", "4", "--max-corpus-bytes", "1MB", "--host-workers", "1",
          "--blas-threads", "1", "--eval-every", "0", "--eval-sequences", "2", "--seed", "3", "--no-progress"]
# Root in CI: Open MPI refuses it unless told; 2 cores: more ranks than cores.
ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OPENBLAS_NUM_THREADS="1",
           OMPI_MCA_rmaps_base_oversubscribe="1")


def with_batch(flags, batch):
    """flags with --batch BATCH (each rank's sequences per step)."""
    out = list(flags)
    out[out.index("--batch") + 1] = str(batch)
    return out


def run(command, what):
    done = subprocess.run(command, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=600)
    if done.returncode != 0:
        sys.exit(f"FAIL: {what} exited {done.returncode}:\n{done.stdout[-4000:]}")


def weights(out):
    manifest = json.load(open(os.path.join(out, "checkpoint", "manifest.json")))
    return {t["name"]: np.load(os.path.join(out, "checkpoint", t["file"])) for t in manifest["tensors"]}


def resume(asteria, mpirun, work, ranks, optimizer, staleness, how):
    mpi = [mpirun, "--oversubscribe", "--allow-run-as-root", "-np", str(ranks), asteria]
    flags = COMMON + ["--optimizer", optimizer, "--staleness", staleness] + (["--parallelism", how] if how else [])
    straight, stopped, resumed = (os.path.join(work, d) for d in ("straight", "stopped", "resumed"))
    run(mpi + flags + ["--steps", "10", "--out", straight], "the straight run")
    run(mpi + flags + ["--steps", "5", "--checkpoint-every", "3", "--out", stopped], "the stopped run")
    run(mpi + ["train", "--resume", os.path.join(stopped, "resume"), "--steps", "10", "--out", resumed],
        "the resumed run")
    a = json.load(open(os.path.join(straight, "summary.json")))["per_rank"]
    b = json.load(open(os.path.join(resumed, "summary.json")))["per_rank"]
    for r in range(ranks):
        if (a[r]["weights_digest"], a[r]["optimizer_state_digest"]) != (b[r]["weights_digest"], b[r]["optimizer_state_digest"]):
            sys.exit(f"FAIL: rank {r} resumed from step 3 differs from the straight run: {a[r]} vs {b[r]}")
        rank_summary = json.load(open(os.path.join(resumed, f"rank{r}", "summary.json")))
        if rank_summary.get("resumed_from_step") != 3:
            sys.exit(f"FAIL: rank {r} resumed from {rank_summary.get('resumed_from_step')}, expected step 3")
    print(f"OK: {ranks} ranks, {optimizer}, S = {staleness}{', ' + how if how else ''}: resumed = straight on every rank")


def refused(command, what, expected):
    try:
        done = subprocess.run(command, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              timeout=180)
    except subprocess.TimeoutExpired:
        sys.exit(f"FAIL: {what}: still running after 180 s (the ranks wait on each other)")
    if done.returncode == 0:
        sys.exit(f"FAIL: {what} exited 0:\n{done.stdout[-4000:]}")
    for text in expected:
        if text not in done.stdout:
            sys.exit(f"FAIL: {what}: no '{text}' in its output:\n{done.stdout[-4000:]}")
    print(f"OK: {what} refused: {next(l for l in done.stdout.splitlines() if expected[0] in l)}")


def disagree(asteria, mpirun, work, optimizer):
    mpi = [mpirun, "--oversubscribe", "--allow-run-as-root"]
    flags = COMMON + ["--optimizer", optimizer, "--steps", "2"]
    for option, other in (("--steps", "3"), ("--optimizer", "adamw" if optimizer != "adamw" else "soap"),
                          ("--seed", "4")):
        mine = flags + ["--out", os.path.join(work, "mixed" + option)]
        theirs = [a for a in mine]
        at = theirs.index(option) if option in theirs else None
        if at is None:
            theirs += [option, other]
        else:
            theirs[at + 1] = other
        refused(mpi + ["-np", "1", asteria] + mine + [":", "-np", "1", asteria] + theirs,
                f"ranks with different {option}", [option, "the same value on every data-parallel rank", "rank 1 has"])
    # Corpora: a copy at another path is the same corpus; other text is refused by its digest.
    texts = {}
    for name, text in (("a", "the same words again and again. " * 400), ("b", "the same words again and again. " * 400),
                       ("c", "other words entirely, and more of them. " * 400)):
        texts[name] = os.path.join(work, "corpus-" + name)
        os.makedirs(texts[name])
        with open(os.path.join(texts[name], "text.txt"), "w") as f:
            f.write(text)
    same = flags + ["--out", os.path.join(work, "same-corpus")]
    run(mpi + ["-np", "1", asteria] + same + ["--data", texts["a"], ":", "-np", "1", asteria] + same +
        ["--data", texts["b"]], "ranks reading copies of one corpus at different paths")
    other = flags + ["--out", os.path.join(work, "other-corpus")]
    refused(mpi + ["-np", "1", asteria] + other + ["--data", texts["a"], ":", "-np", "1", asteria] + other +
            ["--data", texts["c"]], "ranks reading different corpora",
            ["--data", "digest of the corpus text", "on every data-parallel rank", "rank 1 has"])
    # Checkpoints of different steps: rank 0's from a run checkpointed after step 2, rank 1's after 4.
    early, late, mixed = (os.path.join(work, d) for d in ("early", "late", "mixed-resume"))
    base = mpi + ["-np", "2", asteria] + COMMON + ["--optimizer", optimizer, "--checkpoint-every", "2"]
    run(base + ["--steps", "2", "--out", early], "the run checkpointed at step 2")
    run(base + ["--steps", "4", "--out", late], "the run checkpointed at step 4")
    os.makedirs(mixed)
    shutil.copytree(os.path.join(early, "resume", "rank0"), os.path.join(mixed, "rank0"))
    shutil.copytree(os.path.join(late, "resume", "rank1"), os.path.join(mixed, "rank1"))
    refused(mpi + ["-np", "2", asteria, "train", "--resume", mixed, "--steps", "6", "--out", os.path.join(work, "resumed")],
            "ranks resumed from checkpoints of different steps", ["--resume", "rank 0 has '2', rank 1 has '4'"])


def main():
    asteria, mpirun, work, check, ranks, optimizer = sys.argv[1:7]
    ranks = int(ranks)
    staleness = sys.argv[7] if len(sys.argv) > 7 else "0"
    if os.path.exists(work):
        shutil.rmtree(work)
    os.makedirs(work)
    if check == "disagree":
        disagree(asteria, mpirun, work, optimizer)
        return
    if check == "resume":
        # "shard": the optimizer state sharded (zero1); or a --parallelism value.
        how = sys.argv[8] if len(sys.argv) > 8 else None
        resume(asteria, mpirun, work, ranks, optimizer, staleness, "zero1" if how == "shard" else how)
        return
    steps = {"equals-global-batch": "8", "replicas-bitwise": "50", "sharded": "20"}[check]
    sharded = check == "sharded"
    how = sys.argv[8] if sharded and len(sys.argv) > 8 else "zero1"
    # The sharded check compares two parallel runs: any batch per rank does (3 ranks: 1 each).
    if GLOBAL_BATCH % ranks != 0 and not sharded:
        sys.exit(f"FAIL: {ranks} ranks do not split the global batch of {GLOBAL_BATCH}")
    single_flags = with_batch(COMMON, GLOBAL_BATCH) + ["--optimizer", optimizer, "--staleness", staleness, "--steps", steps]
    flags = with_batch(single_flags, max(1, GLOBAL_BATCH // ranks))
    if sharded and len(sys.argv) > 9:
        flags += ["--reduce-dtype", sys.argv[9]]
    parallel = os.path.join(work, "parallel")
    run([mpirun, "--oversubscribe", "--allow-run-as-root", "-np", str(ranks), asteria] + flags +
        (["--parallelism", how] if sharded else []) + ["--out", parallel], f"mpirun -np {ranks} asteria train")
    summary = json.load(open(os.path.join(parallel, "summary.json")))
    if summary.get("ranks") != ranks:
        sys.exit(f"FAIL: summary.json says ranks {summary.get('ranks')}, expected {ranks}")
    for r in range(ranks):
        plan = open(os.path.join(parallel, f"rank{r}", "plan.txt")).read().splitlines()
        kinds = [line.split()[2] for line in plan if line.startswith("op ")]
        if kinds.count("reduce") + kinds.count("scatter") == 0:
            sys.exit(f"FAIL: rank {r}'s plan reduces no gradient")
        if sharded and how in ("zero2", "fsdp") and kinds.count("scatter") == 0:
            sys.exit(f"FAIL: rank {r}'s {how} plan scatters no gradient")
        if sharded and how == "fsdp" and ("gather" not in kinds or kinds.index("gather") > kinds.index("forward") or
                                          ("update" in kinds and "gather" in kinds[kinds.index("update"):])):
            sys.exit(f"FAIL: rank {r}'s fsdp plan does not gather the weights before their first use (and only then)")
    digests = {(p["weights_digest"], p["optimizer_state_digest"]) for p in summary["per_rank"]}
    if not summary["replicas_identical"] or len(digests) != 1:
        sys.exit(f"FAIL: replicas differ after {steps} steps at S = {staleness}: {summary['per_rank']}")

    if sharded:
        replicated = os.path.join(work, "replicated")
        run([mpirun, "--oversubscribe", "--allow-run-as-root", "-np", str(ranks), asteria] + flags + ["--out", replicated],
            f"mpirun -np {ranks} asteria train (ddp: state not sharded)")
        whole = json.load(open(os.path.join(replicated, "summary.json")))
        if whole["per_rank"][0]["weights_digest"] != summary["per_rank"][0]["weights_digest"]:
            sys.exit(f"FAIL: --parallelism {how} changed the weights")
        shares = [json.load(open(os.path.join(parallel, f"rank{r}", "summary.json")))["state_bytes"] for r in range(ranks)]
        total = json.load(open(os.path.join(replicated, "rank0", "summary.json")))["state_bytes"]
        if sum(shares) != total or max(shares) > 0.75 * total:
            sys.exit(f"FAIL: state shares {shares} of {total} bytes: each block once, spread over the ranks")
        print(f"state per rank {shares} of {total} bytes")

    if check == "equals-global-batch":
        single = os.path.join(work, "single")
        run([asteria] + single_flags + ["--out", single], "asteria train (one process)")
        a, b = weights(single), weights(parallel)
        worst = 0.0
        for name in a:
            scale = max(float(np.max(np.abs(a[name]))), 1e-30)
            worst = max(worst, float(np.max(np.abs(a[name].astype(np.float64) - b[name]))) / scale)
        # Measured: 1.4e-5 to 2.2e-5 (AdamW), 1e-7 (KL-Shampoo) after 8 steps.
        if worst > 1e-4:
            sys.exit(f"FAIL: weights differ from the single process by {worst:.3g} of their largest magnitude")
        single_loss = json.load(open(os.path.join(single, "summary.json")))["final_loss"]
        print(f"max relative weight difference {worst:.3g}; final loss {summary['final_loss']:.6f} "
              f"(one process {single_loss:.6f})")
    print(f"OK: {ranks} ranks, {optimizer}, S = {staleness}{', ' + how if sharded else ''}, replicas identical")


if __name__ == "__main__":
    main()
