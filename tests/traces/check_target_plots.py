#!/usr/bin/python3
"""Checks the time-, energy-to-target and energy-per-step plots (plots/target_plots.py) on a
synthetic table: the bars are the table's values, one per configuration and target loss; a run
without a value or that did not fit has no bar and is named on stderr; a table without those
columns gets no plot; bad input gives exit code 2 naming the file, row and column. The loss
against time from loss_curves.csv: one line per configuration, solid where simulated, dashed
where projected, through the file's points (those at time 0 left off the log axis).

Usage: check_target_plots.py [PLOTS_DIR]   (default: the repository's plots/)
"""
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
PLOTS_DIR = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else os.path.join(HERE, "..", "..", "plots")
sys.path.insert(0, PLOTS_DIR)
sys.path.insert(0, HERE)

import plot_common  # noqa: E402,F401  (selects the Agg backend before pyplot is used)
import target_plots  # noqa: E402
from plot_checks import check, expect_bad_input, run, write_csv  # noqa: E402

COLUMNS = ["config", "fits", "energy_per_step_j", "loss_curve", "time_to_loss_2_s", "energy_to_loss_2_j",
           "time_to_loss_1.5_s", "energy_to_loss_1.5_j"]
ROWS = [["adamw", "true", "100", "a", "10", "1000", "40", "4000"],
        ["soap", "true", "150", "b", "8", "1200", "", ""],  # never reaches 1.5
        ["big", "false", "", "", "", "", "", ""]]


def bar_heights(figure):
    return sorted(round(p.get_height(), 9) for p in figure.axes[0].patches)


def main():
    with tempfile.TemporaryDirectory() as root:
        write_csv(os.path.join(root, "table.csv"), COLUMNS, ROWS)
        figures = target_plots.target_figures(root)
        check(sorted(figures) == ["energy_per_step", "energy_to_target", "time_to_target"], f"plots {sorted(figures)}")
        # Two configurations fit, two losses: soap has no bar height for 1.5 (drawn as 0).
        check(bar_heights(figures["time_to_target"]) == [0.0, 8.0, 10.0, 40.0], f"{bar_heights(figures['time_to_target'])}")
        check(bar_heights(figures["energy_to_target"]) == [0.0, 1000.0, 1200.0, 4000.0], "energy bars")
        check(bar_heights(figures["energy_per_step"]) == [100.0, 150.0], "energy per step bars")
        result = run("target_plots.py", root)
        check(result.returncode == 0, f"exit {result.returncode}: {result.stderr}")
        for name in ("time_to_target", "energy_to_target", "energy_per_step"):
            check(os.path.getsize(os.path.join(root, "plots", name + ".png")) > 10000, f"no {name}.png")
        check("big: did not fit" in result.stderr, f"no note for the run that did not fit: {result.stderr!r}")
        check("soap: no value for loss 1.5" in result.stderr, f"no note for the loss never reached: {result.stderr!r}")
        write_csv(os.path.join(root, "table.csv"), ["config", "fits", "mean_step_s"], [["a", "true", "1"]])
        check(target_plots.target_figures(root) == {}, "a table without targets or energy drew a plot")
        write_csv(os.path.join(root, "table.csv"), COLUMNS, ROWS)
        write_csv(os.path.join(root, "loss_curves.csv"), ["config", "kind", "tokens", "time_s", "energy_j", "loss"],
                  [["adamw", "projected", "0", "0", "0", "5"], ["adamw", "projected", "100", "2", "", "4"],
                   ["adamw", "projected", "300", "6", "", "3"], ["soap", "simulated", "20", "2", "40", "4.5"],
                   ["soap", "simulated", "40", "5", "80", "3.5"]])
        lines = target_plots.target_figures(root)["loss_vs_time"].axes[0].get_lines()
        check([(line.get_linestyle(), list(line.get_xdata()), list(line.get_ydata())) for line in lines] ==
              [("--", [2.0, 6.0], [4.0, 3.0]), ("-", [2.0, 5.0], [4.5, 3.5])],
              f"loss-against-time lines {[(l.get_linestyle(), list(l.get_xdata())) for l in lines]}")
        result = run("target_plots.py", root)
        check(os.path.getsize(os.path.join(root, "plots", "loss_vs_time.png")) > 10000, "no loss_vs_time.png")
        write_csv(os.path.join(root, "loss_curves.csv"), ["config", "kind", "tokens", "time_s", "energy_j", "loss"],
                  [["adamw", "guessed", "0", "1", "0", "5"]])
        expect_bad_input(root, "an unknown kind of curve", run("target_plots.py", root), "loss_curves.csv", "row 1",
                         "kind")
        os.remove(os.path.join(root, "loss_curves.csv"))
        bad = [list(r) for r in ROWS]
        bad[1][4] = "soon"
        write_csv(os.path.join(root, "table.csv"), COLUMNS, bad)
        expect_bad_input(root, "a time that is not a number", run("target_plots.py", root), "table.csv", "row 2",
                         "time_to_loss_2_s")
    print("target plots: ok")


if __name__ == "__main__":
    main()
