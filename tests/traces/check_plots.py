#!/usr/bin/python3
"""Renders a small synthetic study with plots/study_plots.py and checks the PNGs, then checks
that bad input gives exit code 2 with a message naming the file and the column.

Usage: check_plots.py [PLOTS_DIR]   (default: the repository's plots/)
"""
import csv
import os
import struct
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
PLOTS_DIR = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else os.path.join(HERE, "..", "..", "plots")
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
# matplotlib's default colour cycle: the first four series of any plot.
SERIES_COLOURS = [(0x1F, 0x77, 0xB4), (0xFF, 0x7F, 0x0E), (0x2C, 0xA0, 0x2C), (0xD6, 0x27, 0x28)]

TABLE_COLUMNS = [
    "config", "hw", "model", "optimizer", "placement", "staleness", "fits", "p50_step_s", "p99_step_s",
    "mean_step_s", "compute_s", "visible_optimizer_s", "refresh_wait_s", "state_move_wait_s", "run_dir",
]
STEPS_COLUMNS = ["step", "step_time_s", "resident_device_bytes", "resident_host_bytes", "resident_nvme_bytes",
                 "max_staleness"]

failures = []


def check(condition, message):
    if not condition:
        failures.append(message)
        print(f"FAIL: {message}", file=sys.stderr)


def write_csv(path, columns, rows):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(columns)
        writer.writerows(rows)


def table_row(config, fits, run_dir, parts):
    compute, optimizer, refresh, move = parts
    mean = compute + optimizer + refresh + move
    return [config, "gh200", "tiny", "shampoo", "host", 2, "true" if fits else "false",
            mean if fits else "", mean * 1.2 if fits else "", mean if fits else "",
            compute if fits else "", optimizer if fits else "", refresh if fits else "", move if fits else "", run_dir]


def steps_rows(steps, device_gib, offload_from):
    """Device-resident state until `offload_from`, then half of it on the host and NVMe."""
    gib = 1024 ** 3
    rows = []
    for step in range(steps):
        moved = step >= offload_from
        device = device_gib * gib // (2 if moved else 1)
        host = device_gib * gib // 4 if moved else 0
        nvme = device_gib * gib // 4 if moved else 0
        rows.append([step, 0.1, device, host, nvme, step % 3])
    return rows


def make_study(root, table_columns=TABLE_COLUMNS, drop_steps_column=None):
    write_csv(os.path.join(root, "table.csv"), table_columns, [
        [value for column, value in zip(TABLE_COLUMNS, table_row("host-s2", True, "runs/a", (0.5, 0.1, 0.05, 0.02)))
         if column in table_columns],
        [value for column, value in zip(TABLE_COLUMNS, table_row("nvme-s4", True, "runs/b", (0.5, 0.05, 0.1, 0.2)))
         if column in table_columns],
        [value for column, value in zip(TABLE_COLUMNS, table_row("device-only", False, "runs/c", (0, 0, 0, 0)))
         if column in table_columns],
    ])
    steps_columns = [column for column in STEPS_COLUMNS if column != drop_steps_column]
    for run, (device_gib, offload_from) in {"a": (8, 5), "b": (12, 10)}.items():
        rows = [[value for column, value in zip(STEPS_COLUMNS, row) if column in steps_columns]
                for row in steps_rows(20, device_gib, offload_from)]
        write_csv(os.path.join(root, "runs", run, "steps.csv"), steps_columns, rows)


def run(script, *args):
    return subprocess.run([sys.executable, os.path.join(PLOTS_DIR, script), *args],
                          capture_output=True, text=True, timeout=120)


def png_size(path):
    """(width, height) from the IHDR chunk, or None when the file is not a PNG."""
    with open(path, "rb") as handle:
        head = handle.read(24)
    if len(head) < 24 or head[:8] != PNG_SIGNATURE or head[12:16] != b"IHDR":
        return None
    return struct.unpack(">II", head[16:24])


def colours_present(path, colours, tolerance=12):
    """Which of `colours` (RGB 0-255) appear on some pixel of the PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.image
    import numpy

    pixels = (matplotlib.image.imread(path)[:, :, :3] * 255.0).reshape(-1, 3)
    return [bool((numpy.abs(pixels - numpy.array(colour)).max(axis=1) <= tolerance).any()) for colour in colours]


def check_png(path, series):
    check(os.path.isfile(path), f"{path} was not written")
    if not os.path.isfile(path):
        return
    size = png_size(path)
    check(size is not None, f"{path} is not a PNG (signature or IHDR)")
    check(size is not None and size[0] >= 200 and size[1] >= 200, f"{path}: image too small: {size}")
    check(os.path.getsize(path) > 5000, f"{path}: only {os.path.getsize(path)} bytes")
    present = colours_present(path, SERIES_COLOURS[:series])
    check(all(present), f"{path}: expected {series} drawn series, colours present: {present}")


def test_study_renders(root):
    make_study(root)
    result = run("study_plots.py", root)
    check(result.returncode == 0, f"study_plots.py failed ({result.returncode}): {result.stderr}")
    expected = [os.path.join(root, "plots", name + ".png")
                for name in ("step_breakdown", "tier_occupancy", "staleness_histogram")]
    printed = [os.path.abspath(line) for line in result.stdout.split()]
    check(printed == [os.path.abspath(path) for path in expected], f"printed paths: {result.stdout!r}")
    check("device-only" in result.stderr and "did not fit" in result.stderr,
          f"no note about the configuration that did not fit: {result.stderr!r}")
    check_png(expected[0], 4)  # four stacked parts
    check_png(expected[1], 2)  # two runs
    check_png(expected[2], 2)  # two runs
    plots_dir = os.path.join(root, "plots")
    leftovers = [name for name in os.listdir(plots_dir) if not name.endswith(".png")] if os.path.isdir(plots_dir) else []
    check(not leftovers, f"temporary files left in plots/: {leftovers}")


def test_missing_table_column(root):
    make_study(root, table_columns=[column for column in TABLE_COLUMNS if column != "refresh_wait_s"])
    result = run("study_plots.py", root)
    check(result.returncode == 2, f"missing table column: exit {result.returncode}, expected 2")
    check("refresh_wait_s" in result.stderr and "table.csv" in result.stderr,
          f"missing table column not named with its file: {result.stderr!r}")


def test_missing_steps_column(root):
    make_study(root, drop_steps_column="resident_host_bytes")
    result = run("study_plots.py", root)
    check(result.returncode == 2, f"missing steps column: exit {result.returncode}, expected 2")
    check("resident_host_bytes" in result.stderr and "steps.csv" in result.stderr,
          f"missing steps column not named with its file: {result.stderr!r}")


def test_single_scripts(root):
    make_study(root)
    steps_a = os.path.join(root, "runs", "a", "steps.csv")
    steps_b = os.path.join(root, "runs", "b", "steps.csv")
    out = os.path.join(root, "tiers.png")
    result = run("tier_occupancy.py", steps_a, steps_b, out, "--label", "A", "--label", "B")
    check(result.returncode == 0, f"tier_occupancy.py failed: {result.stderr}")
    check_png(out, 2)
    result = run("staleness_histogram.py", steps_a, out, "--label", "A", "--label", "B")
    check(result.returncode == 2 and "--label" in result.stderr,
          f"label count mismatch: exit {result.returncode}, {result.stderr!r}")


def test_counting_helpers(root):
    """The binning and row filtering, called in-process on hand-made values."""
    sys.path.insert(0, PLOTS_DIR)
    import staleness_histogram
    import step_breakdown

    # 0,1,2,0,1 -> two steps at 0, two at 1, one at 2; 1.0 rounds to bin 1; nothing at 3.
    check(staleness_histogram.staleness_counts([0, 1, 2, 0, 1.0], 3) == [2, 2, 1, 0],
          "staleness_counts bins whole steps")
    rows = [
        {"config": "a", "fits": "true", "compute_s": "1", "visible_optimizer_s": "0.5", "refresh_wait_s": "0",
         "state_move_wait_s": "0.25"},
        {"config": "b", "fits": "false", "compute_s": "", "visible_optimizer_s": "", "refresh_wait_s": "",
         "state_move_wait_s": ""},
        {"config": "c", "compute_s": "2", "visible_optimizer_s": "", "refresh_wait_s": "1",
         "state_move_wait_s": "0"},
    ]
    drawable = step_breakdown.breakdown_rows(rows, os.path.join(root, "table.csv"))
    check([config for config, _ in drawable] == ["a"], f"only the complete fitting row is drawn: {drawable}")
    check(drawable and drawable[0][1]["state_move_wait_s"] == 0.25, "values are read as numbers")


def main():
    for test in (test_counting_helpers, test_study_renders, test_missing_table_column, test_missing_steps_column, test_single_scripts):
        with tempfile.TemporaryDirectory(prefix="asteria-plots-") as root:
            test(root)
    if failures:
        print(f"{len(failures)} check(s) failed", file=sys.stderr)
        sys.exit(1)
    print("plots: all checks passed")


if __name__ == "__main__":
    main()
