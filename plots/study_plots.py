#!/usr/bin/python3
"""All plots of a study: step breakdown, tier occupancy and staleness histogram.

Usage: study_plots.py STUDY_DIR

Reads STUDY_DIR/table.csv (one row per configuration) and, for each configuration that fit,
its run_dir/steps.csv (run_dir relative to STUDY_DIR unless absolute). Writes
STUDY_DIR/plots/{step_breakdown,tier_occupancy,staleness_histogram}.png and prints their paths.
Configurations that did not fit, or whose steps.csv is missing, are skipped with a note.
"""
import argparse
import os
import sys

from plot_common import boolean, column_numbers, read_csv, run_script
from staleness_histogram import REQUIRED_COLUMNS as STALENESS_COLUMNS
from staleness_histogram import load_staleness, render_staleness_histogram
from step_breakdown import breakdown_rows, render_step_breakdown
from tier_occupancy import REQUIRED_COLUMNS as OCCUPANCY_COLUMNS
from tier_occupancy import render_tier_occupancy

TABLE_COLUMNS = [
    "config", "hw", "model", "optimizer", "placement", "staleness", "fits", "p50_step_s", "p99_step_s",
    "mean_step_s", "compute_s", "visible_optimizer_s", "refresh_wait_s", "state_move_wait_s", "run_dir",
]


def fitting_runs(table_path, rows, study_dir):
    """(config, steps.csv path) for each configuration that fit and has its steps."""
    runs = []
    for index, row in enumerate(rows, start=1):
        config = row["config"].strip() or f"row {index}"
        if not boolean(row, "fits", table_path, index):
            print(f"note: {config}: did not fit, skipped", file=sys.stderr)
            continue
        run_dir = row["run_dir"].strip()
        steps = os.path.join(run_dir if os.path.isabs(run_dir) else os.path.join(study_dir, run_dir), "steps.csv")
        if not run_dir or not os.path.isfile(steps):
            print(f"note: {config}: no steps.csv at {steps}, skipped", file=sys.stderr)
            continue
        runs.append((config, steps))
    return runs


def load_steps(path):
    """The columns both per-run plots need, read once."""
    rows = read_csv(path, list(dict.fromkeys(OCCUPANCY_COLUMNS + STALENESS_COLUMNS)))
    occupancy = {column: column_numbers(rows, column, path) for column in OCCUPANCY_COLUMNS}
    return occupancy, load_staleness(path)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("study_dir")
    args = parser.parse_args()
    study_dir = args.study_dir
    table_path = os.path.join(study_dir, "table.csv")
    rows = read_csv(table_path, TABLE_COLUMNS)
    runs = fitting_runs(table_path, rows, study_dir)
    loaded = [(config, load_steps(steps)) for config, steps in runs]

    plots_dir = os.path.join(study_dir, "plots")
    outputs = {
        "step_breakdown": os.path.join(plots_dir, "step_breakdown.png"),
        "tier_occupancy": os.path.join(plots_dir, "tier_occupancy.png"),
        "staleness_histogram": os.path.join(plots_dir, "staleness_histogram.png"),
    }
    fitting = [row for index, row in enumerate(rows, start=1) if boolean(row, "fits", table_path, index)]
    render_step_breakdown(breakdown_rows(fitting, table_path), outputs["step_breakdown"])
    render_tier_occupancy([(config, occupancy) for config, (occupancy, _) in loaded], outputs["tier_occupancy"])
    render_staleness_histogram([(config, staleness) for config, (_, staleness) in loaded],
                               outputs["staleness_histogram"])
    for path in outputs.values():
        print(path)


if __name__ == "__main__":
    run_script(main)
