#!/usr/bin/python3
"""All plots of a study: step breakdown, tier occupancy and staleness histogram, and for a
data-parallel study the plots of distributed_plots.py.

Usage: study_plots.py STUDY_DIR

Reads STUDY_DIR/table.csv (one row per configuration; the columns config, fits, shortfall and
run_dir) and, for each configuration that fit, its run_dir/steps.csv (run_dir relative to
STUDY_DIR unless absolute). Writes STUDY_DIR/plots/{step_breakdown,tier_occupancy,
staleness_histogram}.png and prints their paths. A configuration that did not fit, failed, or has
no steps.csv keeps its row in the step breakdown, marked as such, and is left out of the other
plots, with a note on stderr. Every statistic is taken over the measured steps (warmup = 0).

When the table has a column of a data-parallel axis (nodes, units, sync_period, parallelism,
refresh_sharing or straggler), the plots of distributed_plots.py follow:
{distributed_step_time,network_bytes,owners_vs_replicated,straggler}.png, drawn from the table.
When it also has a parallelism column and a nodes column with at least two values (a scaling
study), the plots of scaling_plots.py follow those: {scaling_step_time,scaling_throughput,
visible_optimizer_vs_staleness}.png (scaling_throughput only where the table has tokens_per_s).
When it has a schedule and a batch column, schedule_plots.py's schedule_throughput.png follows.
target_plots.py's {time_to_target,energy_to_target}.png follow where the table has
time_to_loss_<L>_s columns (a study with targets), and energy_per_step.png where it has energy.
"""
import argparse
import os
import sys

import distributed_plots
import scaling_plots
import schedule_plots
import target_plots
from plot_common import boolean, read_csv, read_steps, run_script, save_png
from staleness_histogram import REQUIRED_COLUMNS as STALENESS_COLUMNS
from staleness_histogram import measured_staleness, staleness_figure
from step_breakdown import REQUIRED_COLUMNS as BREAKDOWN_COLUMNS
from step_breakdown import breakdown_figure, step_stats
from tier_occupancy import REQUIRED_COLUMNS as OCCUPANCY_COLUMNS
from tier_occupancy import occupancy, occupancy_figure

TABLE_COLUMNS = ["config", "fits", "shortfall", "run_dir"]
STEPS_COLUMNS = list(dict.fromkeys(BREAKDOWN_COLUMNS + OCCUPANCY_COLUMNS + STALENESS_COLUMNS))
PLOTS = ("step_breakdown", "tier_occupancy", "staleness_histogram")


def load_study(study_dir):
    """[(config, steps.csv path, steps or None, note)] in the table's order: steps is
    read_steps(path, STEPS_COLUMNS) for a configuration that fit; otherwise note says why there
    are none ('did not fit', 'run failed', 'no steps.csv')."""
    table_path = os.path.join(study_dir, "table.csv")
    runs = []
    for index, row in enumerate(read_csv(table_path, TABLE_COLUMNS), start=1):
        config = row["config"].strip() or f"row {index}"
        run_dir = row["run_dir"].strip()
        path = os.path.join(run_dir if os.path.isabs(run_dir) else os.path.join(study_dir, run_dir), "steps.csv")
        if not boolean(row, "fits", table_path, index):
            shortfall = (row.get("shortfall") or "").strip()
            note = "run failed" if shortfall.startswith("run failed") else "did not fit"
            print(f"note: {config}: {note}{f' ({shortfall})' if shortfall else ''}; no steps to plot",
                  file=sys.stderr)
            runs.append((config, path, None, note))
        elif not run_dir or not os.path.isfile(path):
            print(f"note: {config}: fits but has no steps.csv at {path}; no steps to plot", file=sys.stderr)
            runs.append((config, path, None, "no steps.csv"))
        else:
            runs.append((config, path, read_steps(path, STEPS_COLUMNS), ""))
    return runs


def study_figures(study_dir):
    """{plot name: figure} of the study in study_dir, in the order they are written (PLOTS, then
    distributed_plots.PLOTS for a data-parallel study, then scaling_plots.PLOTS for a
    scaling one); nothing is written."""
    runs = load_study(study_dir)
    measured = [(config, path, steps) for config, path, steps, _ in runs if steps is not None]
    figures = {
        "step_breakdown": breakdown_figure(
            [(config, step_stats(steps, path) if steps is not None else None, note)
             for config, path, steps, note in runs]),
        "tier_occupancy": occupancy_figure([(config, occupancy(steps, path)) for config, path, steps in measured]),
        "staleness_histogram": staleness_figure(
            [(config, measured_staleness(steps, path)) for config, path, steps in measured]),
    }
    if distributed_plots.is_distributed(distributed_plots.table_columns(os.path.join(study_dir, "table.csv"))):
        figures.update(distributed_plots.distributed_figures(study_dir))
    if scaling_plots.is_scaling_study(study_dir):
        figures.update(scaling_plots.scaling_figures(study_dir))
    if schedule_plots.is_schedule_study(distributed_plots.table_columns(os.path.join(study_dir, "table.csv"))):
        figures.update(schedule_plots.schedule_figures(study_dir))
    figures.update(target_plots.target_figures(study_dir))
    return figures


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("study_dir")
    args = parser.parse_args()
    figures = study_figures(args.study_dir)
    for name, figure in figures.items():
        path = os.path.join(args.study_dir, "plots", name + ".png")
        save_png(figure, path)
        print(path)


if __name__ == "__main__":
    run_script(main)
