#!/bin/sh
# The projection of time to a target loss checked against a data-true simulation that trains:
# 1. measures gpt-mini's loss curves with `asteria train` on this machine (AdamW, and SOAP at
#    S = 5 with deterministic publication) into experiments/studies/curves/projection-check/;
# 2. runs studies/projection-check.yaml, whose rows pair each run simulated data-true on the
#    corpus (its own loss against simulated time) with the same run simulated data-free and
#    joined with the measured curve (the projection).
# Both read the same corpus (the built-in one: this machine's Python sources), so the curves and
# the study are remade together. Usage: projection-check.sh [ASTERIA] [STUDY_OUT]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
asteria=${1:-$here/../../build/release/apps/asteria/asteria}
out=${2:-$here/results/projection-check}
curves=$here/curves/projection-check
common="--model gpt-mini --steps 150 --eval-every 10 --eval-sequences 32 --blas-threads 1 --seed 1 --no-progress --overwrite"
"$asteria" train $common --optimizer adamw --lr 3e-4 --out "$curves/adamw"
"$asteria" train $common --optimizer soap --lr 3e-3 --staleness 5 --precondition-frequency 10 --out "$curves/soap-s5"
# The final weights are not part of the check.
rm -rf "$curves/adamw/checkpoint" "$curves/soap-s5/checkpoint"
"$asteria" study "$here/projection-check.yaml" --out "$out" --jobs 2
