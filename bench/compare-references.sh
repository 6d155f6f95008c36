#!/usr/bin/env bash
# Asteria's optimizer step benchmark (bench_optimizer_step) side by side with the
# implementations users would otherwise run on the host: DeepSpeed CPUAdam, torch AdamW,
# Distributed Shampoo and nikhilvyas/SOAP, interleaved in rounds on this machine.
#
#   bench/compare-references.sh --shampoo-src DIR --soap-src DIR [--build DIR] [--out DIR]
#                               [--rounds N] [--references-only] [--help for the rest]
#
# The references' dependencies (torch, deepspeed; bench/references/requirements.txt) go into
# their own virtual environment, build/refbench-venv, made on the first run and reused after
# (nothing is downloaded when it is up to date). Distributed Shampoo and SOAP are not on PyPI:
# pass checkouts of facebookresearch/optimizers and nikhilvyas/SOAP. See bench/references/README.md.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
REFS="$ROOT/bench/references"
VENV=${REFBENCH_VENV:-$ROOT/build/refbench-venv}
REQ="$REFS/requirements.txt"

for arg in "$@"; do
  case "$arg" in
    -h|--help) exec python3 "$REFS/driver.py" --help ;;
  esac
done

# Checks the arguments (source folders, Asteria's benchmark) before anything is installed.
python3 "$REFS/driver.py" --validate-only "$@"

# Python for the environment: Distributed Shampoo declares requires-python >= 3.12.
pick_python() {
  if [[ -n ${REFBENCH_PYTHON:-} ]]; then echo "$REFBENCH_PYTHON"; return; fi
  local candidates=(python3.12 python3.13) candidate
  # pyenv's shims only run the versions pyenv selects: look in its versions folder too.
  if command -v pyenv >/dev/null 2>&1; then
    candidates+=("$(pyenv root)"/versions/3.12*/bin/python3.12 "$(pyenv root)"/versions/3.13*/bin/python3.13)
  fi
  candidates+=(python3)
  for candidate in "${candidates[@]}"; do
    if "$candidate" -c 'import sys; sys.exit(sys.version_info < (3, 12))' >/dev/null 2>&1; then
      echo "$candidate"; return
    fi
  done
  echo python3
}
PYTHON=$(pick_python)
PYVER=$("$PYTHON" -c 'import sys; print("%d.%d.%d" % sys.version_info[:3])')
if ! "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 12))'; then
  echo "warning: $PYTHON is Python $PYVER; Distributed Shampoo declares requires-python >= 3.12 (set REFBENCH_PYTHON)" >&2
fi

STAMP="$VENV/.refbench-installed"
WANT="$(sha256sum "$REQ" | cut -d' ' -f1) python $PYVER"
export TORCH_EXTENSIONS_DIR="$VENV/torch_extensions"

if [[ -x $VENV/bin/python ]] && [[ $("$VENV/bin/python" -c 'import sys; print("%d.%d.%d" % sys.version_info[:3])') != "$PYVER" ]]; then
  echo "compare-references: $VENV was made with another Python; making it again with $PYVER" >&2
  rm -rf "$VENV"
fi
if [[ ! -f $STAMP || $(cat "$STAMP") != "$WANT" ]]; then
  echo "compare-references: installing the benchmark environment in $VENV (Python $PYVER)" >&2
  [[ -x $VENV/bin/python ]] || "$PYTHON" -m venv "$VENV"
  grep -v '^deepspeed==' "$REQ" >"$VENV/requirements-stage1.txt"
  "$VENV/bin/python" -m pip install --no-deps -r "$VENV/requirements-stage1.txt"
  # deepspeed's sdist runs setup.py against the torch just installed.
  "$VENV/bin/python" -m pip install --no-deps --no-build-isolation "$(grep '^deepspeed==' "$REQ")"
  rm -f "$VENV/requirements-stage1.txt"
  echo "$WANT" >"$STAMP"
  du -sh "$VENV" >&2
fi

# DeepSpeed JIT-builds its CPU Adam op (g++ and ninja, -march=native) on first use; build it
# here, once, so that no measured process compiles.
if ! compgen -G "$TORCH_EXTENSIONS_DIR/*cpu_adam*/*.so" >/dev/null; then
  echo "compare-references: building DeepSpeed's cpu_adam op (a few minutes, once)" >&2
  (cd "$ROOT" && "$VENV/bin/python" -c 'from deepspeed.ops.op_builder import CPUAdamBuilder; CPUAdamBuilder().load()' 1>&2)
fi

cd "$ROOT"
exec "$VENV/bin/python" -m bench.references.driver "$@"
