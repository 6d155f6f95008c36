#!/usr/bin/python3
"""Stacked bars of where a training step's time goes, one bar per configuration of a study.

Usage: step_breakdown.py TABLE_CSV OUT_PNG

TABLE_CSV has (at least) the columns config, compute_s, visible_optimizer_s, refresh_wait_s,
state_move_wait_s: mean seconds per step. The visible optimizer time already contains both
waits, so a bar stacks compute, the waits, and the rest of the visible optimizer time (its
device work and bookkeeping): the bar's height is the mean step time. Rows whose `fits` column
(if present) is false, or whose parts are empty, are skipped with a note on stderr.
"""
import argparse
import sys

from plot_common import InputProblem, boolean, is_finite, number, plt, read_csv, run_script, save_png

PARTS = (
    ("compute_s", "compute"),
    ("visible_optimizer_s", "visible optimizer"),
    ("refresh_wait_s", "refresh wait"),
    ("state_move_wait_s", "state-move wait"),
)
REQUIRED_COLUMNS = ["config"] + [column for column, _ in PARTS]
# What is drawn: the visible optimizer time less the waits it contains.
STACK = (
    ("compute_s", "compute"),
    ("optimizer_work_s", "optimizer work (visible, not waiting)"),
    ("refresh_wait_s", "refresh wait"),
    ("state_move_wait_s", "state-move wait"),
)


def breakdown_rows(rows, path):
    """(config, {column: seconds}) for each row that can be drawn; notes the others."""
    drawable = []
    for index, row in enumerate(rows, start=1):
        config = (row.get("config") or "").strip() or f"row {index}"
        if "fits" in row and row["fits"] is not None and row["fits"].strip() != "":
            if not boolean(row, "fits", path, index):
                print(f"note: {path}: {config}: did not fit, no bar", file=sys.stderr)
                continue
        values = {column: number(row, column, path, index, allow_empty=True) for column, _ in PARTS}
        if not all(is_finite(value) for value in values.values()):
            print(f"note: {path}: {config}: step breakdown incomplete, no bar", file=sys.stderr)
            continue
        for column, value in values.items():
            if value < 0:
                raise InputProblem(f"{path}: row {index}, column '{column}': expected seconds >= 0, found {value}")
        values["optimizer_work_s"] = max(
            0.0, values["visible_optimizer_s"] - values["refresh_wait_s"] - values["state_move_wait_s"])
        drawable.append((config, values))
    return drawable


def render_step_breakdown(drawable, out_png, title="Mean step time by part"):
    """Draws the stacked bars of breakdown_rows(...) output."""
    width = min(24.0, max(6.0, 0.6 * len(drawable) + 2.0))
    figure, axes = plt.subplots(figsize=(width, 4.5))
    if not drawable:
        axes.text(0.5, 0.5, "no configuration to show", ha="center", va="center", transform=axes.transAxes)
        axes.set_axis_off()
    else:
        positions = list(range(len(drawable)))
        bottoms = [0.0] * len(drawable)
        for column, label in STACK:
            heights = [values[column] for _, values in drawable]
            axes.bar(positions, heights, bottom=bottoms, label=label, width=0.7)
            bottoms = [bottom + height for bottom, height in zip(bottoms, heights)]
        axes.set_xticks(positions)
        axes.set_xticklabels([config for config, _ in drawable], rotation=45 if len(drawable) > 4 else 0,
                             ha="right" if len(drawable) > 4 else "center")
        axes.set_ylabel("seconds per step")
        axes.legend(loc="upper left", fontsize="small")
        axes.grid(axis="y", alpha=0.3)
    axes.set_title(title)
    save_png(figure, out_png)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("table_csv")
    parser.add_argument("out_png")
    args = parser.parse_args()
    rows = read_csv(args.table_csv, REQUIRED_COLUMNS)
    render_step_breakdown(breakdown_rows(rows, args.table_csv), args.out_png)
    print(args.out_png)


if __name__ == "__main__":
    run_script(main)
