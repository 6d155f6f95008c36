#!/usr/bin/env bash
# Writes the placement plans the offload studies use (experiments/studies/plans/*.yaml) with
# `asteria plan`, and each plan's predicted step time next to it (*.txt: the planner's report).
# Usage: scripts/study-plans.sh [ASTERIA_BINARY]   (default: build/release/apps/asteria/asteria)
set -euo pipefail
cd "$(dirname "$0")/.."
asteria=${1:-build/release/apps/asteria/asteria}
out=experiments/studies/plans
mkdir -p "$out"
profiles=hwmodels/profiles

plan() {  # NAME, then asteria plan options; a combination that cannot be placed keeps its reason in NAME.txt
  local name=$1; shift
  rm -f "$out/$name.yaml"
  if "$asteria" plan "$@" --out "$out/$name.yaml" > "$out/$name.txt" 2>&1; then
    echo "$out/$name.yaml"
  else
    echo "$out/$name: no plan ($(tail -1 "$out/$name.txt"))"
  fi
}

# Deep Optimizer States (dos.yaml): AdamW, state resting on the host, weights on the host, one
# A100 with the whole DGX A100 host; DOS's fixed interleaving (every 2nd subgroup on the GPU), our
# planner's optimum and the all-device baseline.
for model in olmo2-7b dos-13b dos-70b; do
  for method in interleaved:2 optimal all-device; do
    plan "dos_${model}_${method/:/}" --hw $profiles/a100-80gb-1gpu-host.yaml --model "$model" --optimizer adamw \
      --weights-on host --method "$method"
  done
done

# Second-order state on GB10 and GH200 (planner.yaml): the planner's placement for SOAP and
# KL-Shampoo on the OLMo-like 1B and 7B models, NVMe allowed.
for hw in gb10 gh200-480gb; do
  for optimizer in soap kl-shampoo; do
    for model in olmo-1b olmo2-7b; do
      plan "planner_${hw}_${optimizer}_${model}" --hw "$hw" --model "$model" --optimizer "$optimizer" \
        --staleness 1 --precondition-frequency 10 --max-precond-dim 2048 --method optimal
    done
  done
done
