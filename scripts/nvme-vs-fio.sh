#!/usr/bin/env bash
# NvmeStore's sustained sequential bandwidth next to fio's on the same directory, with the same
# request size and queue depth, O_DIRECT on both sides:
#   fio:       64 files × 16 MiB, bs = chunk, iodepth = queue depth, ioengine=io_uring, direct=1,
#              one file after the other (file_service_type=sequential), files deleted before the
#              write pass (NvmeStore writes each block to a new file too)
#   NvmeStore: bench_nvme_bandwidth's BM_Write and BM_Read, direct:1 aligned:1, one thread
# Rounds alternate which side goes first (disks drift); each round's NvmeStore/fio ratio is
# taken and the median ratio reported, with the median bandwidths.
#
# Usage: scripts/nvme-vs-fio.sh [build-dir]      (default build/release)
# Environment: ASTERIA_NVME_DIR (default <build-dir>/nvme-bench), ASTERIA_NVME_BLOCKS (64),
#   ASTERIA_NVME_BLOCK_MIB (16), ASTERIA_NVME_CHUNK_KIB (1024), ASTERIA_NVME_QUEUE_DEPTH (8),
#   ASTERIA_NVME_PASSES (1: passes over all blocks per measurement, fio --loops alike), ROUNDS (3).
set -euo pipefail

build="${1:-build/release}"
bench="$build/bench/bench_nvme_bandwidth"
[ -x "$bench" ] || { echo "nvme-vs-fio: $bench not built (cmake --build $build --target bench_nvme_bandwidth)" >&2; exit 1; }
command -v fio >/dev/null || { echo "nvme-vs-fio: fio not installed (scripts/install-deps.sh)" >&2; exit 1; }

export ASTERIA_NVME_DIR="${ASTERIA_NVME_DIR:-$build/nvme-bench}"
export ASTERIA_NVME_BLOCKS="${ASTERIA_NVME_BLOCKS:-64}"
export ASTERIA_NVME_BLOCK_MIB="${ASTERIA_NVME_BLOCK_MIB:-16}"
export ASTERIA_NVME_CHUNK_KIB="${ASTERIA_NVME_CHUNK_KIB:-1024}"
export ASTERIA_NVME_QUEUE_DEPTH="${ASTERIA_NVME_QUEUE_DEPTH:-8}"
export ASTERIA_NVME_PASSES="${ASTERIA_NVME_PASSES:-1}"
rounds="${ROUNDS:-3}"

fio_dir="$ASTERIA_NVME_DIR/fio"
work="$(mktemp -d)"
trap 'rm -rf "$work" "$fio_dir"; rmdir "$ASTERIA_NVME_DIR" 2>/dev/null || true' EXIT
mkdir -p "$fio_dir"

echo "directory:  $ASTERIA_NVME_DIR ($(findmnt -n -o FSTYPE -T "$ASTERIA_NVME_DIR" 2>/dev/null || echo '?'))"
echo "workload:   $ASTERIA_NVME_BLOCKS blocks × $ASTERIA_NVME_BLOCK_MIB MiB × $ASTERIA_NVME_PASSES passes, ${ASTERIA_NVME_CHUNK_KIB} KiB requests, queue depth $ASTERIA_NVME_QUEUE_DEPTH, O_DIRECT"

# Prints bytes/s of one fio pass (rw = write | read).
fio_pass() {
  local rw="$1"
  if [ "$rw" = write ]; then rm -f "$fio_dir"/*; sync; fi
  fio --name=asteria --directory="$fio_dir" --rw="$rw" --bs="${ASTERIA_NVME_CHUNK_KIB}k" \
      --iodepth="$ASTERIA_NVME_QUEUE_DEPTH" --ioengine=io_uring --direct=1 --loops="$ASTERIA_NVME_PASSES" \
      --nrfiles="$ASTERIA_NVME_BLOCKS" --filesize="${ASTERIA_NVME_BLOCK_MIB}m" --file_service_type=sequential \
      --output-format=json > "$work/fio.json"
  python3 -c "import json,sys; j=json.load(open(sys.argv[1]))['jobs'][0]; print(j[sys.argv[2]]['bw_bytes'])" \
      "$work/fio.json" "$rw"
}

# Prints "write_bytes_per_s read_bytes_per_s" of one NvmeStore pass.
store_pass() {
  "$bench" --benchmark_filter='BM_(Write|Read)/direct:1/aligned:1/(durable|cold):0/threads:1/' \
           --benchmark_out="$work/store.json" --benchmark_out_format=json >"$work/store.log" 2>&1 ||
    { cat "$work/store.log" >&2; return 1; }
  python3 - "$work/store.json" <<'PY'
import json, sys
rates = {b["name"].split("/")[0]: b["bytes_per_second"] for b in json.load(open(sys.argv[1]))["benchmarks"]}
print(rates["BM_Write"], rates["BM_Read"])
PY
}

for round in $(seq 1 "$rounds"); do
  # Alternate who goes first, so a drifting disk favours neither side.
  if [ $((round % 2)) -eq 1 ]; then
    fw="$(fio_pass write)"; fr="$(fio_pass read)"; read -r sw sr < <(store_pass)
  else
    read -r sw sr < <(store_pass); fw="$(fio_pass write)"; fr="$(fio_pass read)"
  fi
  echo "$fw $fr $sw $sr" >> "$work/rounds"
  python3 -c "import sys; v=[float(x)/1e9 for x in sys.argv[2:]]; print(f'round {sys.argv[1]}: fio write {v[0]:.3f} read {v[1]:.3f} GB/s | NvmeStore write {v[2]:.3f} read {v[3]:.3f} GB/s | ratio write {v[2]/v[0]:.2f} read {v[3]/v[1]:.2f}')" \
      "$round" $fw $fr $sw $sr
done

python3 - "$work/rounds" <<'PY'
import statistics, sys
rows = [list(map(float, line.split())) for line in open(sys.argv[1])]
fw, fr, sw, sr = (statistics.median(col) / 1e9 for col in zip(*rows))
rw = statistics.median(r[2] / r[0] for r in rows)
rr = statistics.median(r[3] / r[1] for r in rows)
print(f"median of {len(rows)} rounds (GB/s = 1e9 B/s); ratio = NvmeStore / fio, median of per-round ratios:")
print(f"  write: NvmeStore {sw:.3f}  fio {fw:.3f}  ratio {rw:.2f}")
print(f"  read:  NvmeStore {sr:.3f}  fio {fr:.3f}  ratio {rr:.2f}")
PY
