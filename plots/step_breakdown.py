#!/usr/bin/python3
"""Step time per configuration: p50, mean and p99, and where the mean step goes.

Usage: step_breakdown.py STEPS_CSV [STEPS_CSV...] OUT_PNG [--label L]...

Each STEPS_CSV is a run's steps.csv, with the columns warmup, step_time_s, compute_s,
visible_optimizer_s, exposed_communication_s, refresh_wait_s and state_move_wait_s (seconds per
step). Every number is
taken over the measured steps only (warmup = 0). Runs are labelled with --label (one per run, in
order) or by the name of the directory holding their steps.csv.

Left panel: p50, mean and p99 step time on a log axis. Right panel: the mean step split into
compute, the communication it did not hide, the optimizer's refresh wait, its state-move wait and
the rest of its visible time, as shares of the mean step.
"""
import argparse

import numpy

from plot_common import (OKABE_ITO, empty_figure, grouped_rows, non_negative, plt, read_steps,
                         run_labels, run_script, save_png, seconds_text, split_runs_and_output,
                         style_group_labels)
from matplotlib.ticker import FixedLocator, FuncFormatter, LogLocator, NullFormatter  # after plot_common (Agg)

REQUIRED_COLUMNS = ["warmup", "step_time_s", "compute_s", "visible_optimizer_s", "exposed_communication_s",
                    "refresh_wait_s", "state_move_wait_s"]
# The parts of a step, in drawing order: (key in step_stats()["parts"], legend label, colour).
# The visible optimizer time contains both waits, so its rest is
# visible_optimizer_s - refresh_wait_s - state_move_wait_s (clamped at 0, step by step).
PARTS = (
    ("compute_s", "compute", OKABE_ITO["blue"]),
    ("exposed_communication_s", "exposed communication", OKABE_ITO["yellow"]),
    ("other_optimizer_s", "other optimizer time", OKABE_ITO["sky blue"]),
    ("refresh_wait_s", "refresh wait", OKABE_ITO["vermillion"]),
    ("state_move_wait_s", "state-move wait", OKABE_ITO["orange"]),
)
# The step-time markers: (key in step_stats(), legend label, colour, marker).
MARKERS = (
    ("p50_s", "p50", OKABE_ITO["bluish green"], "o"),
    ("mean_s", "mean", OKABE_ITO["black"], "|"),
    ("p99_s", "p99", OKABE_ITO["reddish purple"], "D"),
)
TITLE = "Step time per configuration (measured steps, warm-up excluded)"


def step_stats(steps, path):
    """p50, p99 and mean step time and the mean of each part, over the measured steps of
    read_steps(path, REQUIRED_COLUMNS). Percentiles interpolate linearly between order statistics."""
    for column in REQUIRED_COLUMNS[1:]:
        non_negative(steps[column], column, path)
    measured = steps["measured"]
    step_time = steps["step_time_s"][measured]
    compute = steps["compute_s"][measured]
    exposed = steps["exposed_communication_s"][measured]
    refresh = steps["refresh_wait_s"][measured]
    move = steps["state_move_wait_s"][measured]
    other = numpy.maximum(0.0, steps["visible_optimizer_s"][measured] - refresh - move)
    p50, p99 = numpy.percentile(step_time, [50.0, 99.0])
    return {
        "measured_steps": int(measured.sum()),
        "p50_s": float(p50),
        "p99_s": float(p99),
        "mean_s": float(step_time.mean()),
        "parts": {
            "compute_s": float(compute.mean()),
            "exposed_communication_s": float(exposed.mean()),
            "other_optimizer_s": float(other.mean()),
            "refresh_wait_s": float(refresh.mean()),
            "state_move_wait_s": float(move.mean()),
        },
    }


def load_step_stats(path):
    return step_stats(read_steps(path, REQUIRED_COLUMNS), path)


def shares(stats):
    """Each part's share of the step in percent (of the sum of the parts, which is the step)."""
    total = sum(stats["parts"].values())
    if total <= 0:
        return {key: 0.0 for key, _, _ in PARTS}
    return {key: 100.0 * stats["parts"][key] / total for key, _, _ in PARTS}


def significant(value, digits=3):
    """value with `digits` significant figures, trailing zeros kept: 1.00, 10.2, 145."""
    return f"{value:#.{digits}g}".rstrip(".")


def log_limits(values):
    """Whole decades around the values, at least one: a log axis with labelled ticks."""
    positive = [value for value in values if value > 0]
    if not positive:
        return 0.1, 1.0
    low = 10.0 ** numpy.floor(numpy.log10(min(positive)))
    high = 10.0 ** numpy.ceil(numpy.log10(max(positive)))
    if high <= low * 1.0001:
        high = low * 10.0
    return low, high


def breakdown_figure(runs, title=TITLE):
    """runs: list of (config, step_stats(...) or None, note). A run without stats (it did not fit,
    or failed) keeps its row with the note written in it. Returns the figure.

    Step times of a study span orders of magnitude (milliseconds for a toy model, minutes for
    state streamed from NVMe), so one linear axis would flatten all but the slowest runs. Times
    are therefore drawn on a log axis, where a p99/p50 ratio is the same length at any scale, and
    the breakdown is drawn as shares of each run's own mean step, readable whatever its size;
    the seconds behind the shares are the mean marker on the left and the columns of table.md."""
    if not runs:
        return empty_figure(title, "no configuration to show")
    rows = grouped_rows([config for config, _, _ in runs])
    positions = list(range(len(rows)))
    height = 1.7 + 0.28 * len(rows)
    figure, (times, parts) = plt.subplots(1, 2, sharey=True, figsize=(12.0, height), constrained_layout=True,
                                          gridspec_kw={"width_ratios": [1.15, 1.0]})
    drawn = [(position, runs[index]) for position, (kind, _, index) in zip(positions, rows) if kind == "run"]
    measured = [(position, stats) for position, (_, stats, _) in drawn if stats is not None]

    # Left: p50 - p99 span, with the mean, on a log axis.
    for position, stats in measured:
        times.plot([stats["p50_s"], stats["p99_s"]], [position, position], color="#999999", linewidth=1.2,
                   zorder=1, label="_span")
    for key, label, colour, marker in MARKERS:
        size = 11 if marker == "|" else 6
        times.plot([stats[key] for _, stats in measured], [position for position, _ in measured],
                   linestyle="none", marker=marker, markersize=size, markeredgewidth=1.6 if marker == "|" else 0.8,
                   color=colour, markeredgecolor=colour if marker == "|" else "white", label=label,
                   zorder=4 if marker == "|" else 3)
    times.set_xscale("log")
    low, high = log_limits([stats[key] for _, stats in measured for key in ("p50_s", "p99_s", "mean_s")])
    times.set_xlim(low, high)
    times.xaxis.set_major_locator(LogLocator(base=10.0, numticks=12))
    times.xaxis.set_major_formatter(FuncFormatter(lambda value, _: seconds_text(value)))
    times.xaxis.set_minor_locator(LogLocator(base=10.0, subs=(2.0, 5.0), numticks=12))
    if numpy.log10(high / low) <= 3.5:  # room for 2x and 5x labels between the decades
        times.xaxis.set_minor_formatter(FuncFormatter(lambda value, _: seconds_text(value)))
        times.tick_params(axis="x", which="minor", labelsize=7, labelcolor="#555555")
    else:
        times.xaxis.set_minor_formatter(NullFormatter())
    times.grid(axis="x", which="major", alpha=0.4)
    times.grid(axis="x", which="minor", alpha=0.15)
    times.set_xlabel("step time (s, log scale)")
    for position, (config, stats, note) in drawn:
        if stats is None:
            times.text(0.02, position, note or "no measured steps", transform=times.get_yaxis_transform(),
                       va="center", ha="left", fontsize=8, style="italic", color="#555555")
    times.legend(loc="lower left", bbox_to_anchor=(0.0, 1.01), ncol=len(MARKERS), frameon=False,
                 borderaxespad=0.0, handletextpad=0.3, columnspacing=1.2)

    # The p99/p50 ratio of each row, as labels on the right of the left panel, under a heading.
    ratios = times.twinx()
    ratios.yaxis.set_major_locator(FixedLocator(positions))
    ratio_text = {position: "×" + significant(stats["p99_s"] / stats["p50_s"]) if stats["p50_s"] > 0 else "—"
                  for position, stats in measured}
    ratios.set_yticklabels([ratio_text.get(position, "") for position in positions], fontsize=8)
    ratios.tick_params(axis="y", length=0, pad=4)
    ratios.text(1.0, 1.0, " p99/p50", transform=times.transAxes, ha="left", va="bottom", fontsize=8,
                fontweight="bold")

    # Right: shares of the mean step.
    lefts = {position: 0.0 for position, _ in measured}
    for key, label, colour in PARTS:
        widths = [shares(stats)[key] for _, stats in measured]
        parts.barh([position for position, _ in measured], widths,
                   left=[lefts[position] for position, _ in measured], height=0.7, color=colour,
                   edgecolor="white", linewidth=0.5, label=label)
        for (position, _), width in zip(measured, widths):
            lefts[position] += width
    parts.set_xlim(0.0, 100.0)
    parts.tick_params(axis="y", left=False)
    parts.set_xlabel("share of the mean step time (%)")
    parts.grid(axis="x", alpha=0.3)
    parts.set_axisbelow(True)
    parts.legend(loc="lower left", bbox_to_anchor=(0.0, 1.01), ncol=2, frameon=False, borderaxespad=0.0,
                 handletextpad=0.4, columnspacing=1.2)

    times.set_yticks(positions)
    times.set_yticklabels([text for _, text, _ in rows])
    style_group_labels(times, rows)
    times.tick_params(axis="y", which="minor", left=False)
    times.yaxis.set_minor_formatter(NullFormatter())
    times.set_ylim(len(rows) - 0.5, -0.5)  # first configuration at the top
    ratios.set_ylim(times.get_ylim())
    figure.suptitle(title)
    return figure


def render_step_breakdown(runs, out_png, title=TITLE):
    """Draws breakdown_figure(runs) into out_png."""
    save_png(breakdown_figure(runs, title), out_png)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="+", metavar="STEPS_CSV... OUT_PNG")
    parser.add_argument("--label", action="append", default=[])
    args = parser.parse_args()
    steps_paths, out_png = split_runs_and_output(args.paths, "step_breakdown.py")
    labels = run_labels(steps_paths, args.label, "step_breakdown.py")
    render_step_breakdown([(label, load_step_stats(path), "") for label, path in zip(labels, steps_paths)], out_png)
    print(out_png)


if __name__ == "__main__":
    run_script(main)
