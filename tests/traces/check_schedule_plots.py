#!/usr/bin/python3
"""Checks the schedule throughput plot (plots/schedule_plots.py) on a synthetic table: one panel
per (hw, model, units), one line per schedule and setting, each point the batch over the run's
mean step time; runs that did not fit are left out; bad input gives exit code 2 naming the file,
row and column.

Usage: check_schedule_plots.py [PLOTS_DIR]   (default: the repository's plots/)
"""
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
PLOTS_DIR = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else os.path.join(HERE, "..", "..", "plots")
sys.path.insert(0, PLOTS_DIR)
sys.path.insert(0, HERE)

import plot_common  # noqa: E402,F401  (selects the Agg backend before pyplot is used)
import schedule_plots  # noqa: E402
from plot_checks import check, expect_bad_input, run, write_csv  # noqa: E402

COLUMNS = ["config", "hw", "model", "fits", "mean_step_s", "schedule", "batch", "defer_fraction", "gradients_on"]


def rows():
    out = []
    for model, scale in (("m65", 1.0), ("m175", 3.0)):
        for batch in (8, 16, 32):
            out.append([f"{model}_h_b{batch}", "a100", model, "true", str(scale * batch * 1.5), "horizontal", str(batch),
                        "", "host"])
            for defer in ("0", "0.25"):
                step = scale * batch * (0.8 if defer == "0" else 0.7)
                out.append([f"{model}_v{defer}_b{batch}", "a100", model, "true", str(step), "vertical", str(batch),
                            defer, ""])
    out.append(["m65_h_b64", "a100", "m65", "false", "", "horizontal", "64", "", "host"])
    return out


def main():
    with tempfile.TemporaryDirectory() as root:
        write_csv(os.path.join(root, "table.csv"), COLUMNS, rows())
        panels = schedule_plots.throughput_points(os.path.join(root, "table.csv"))
        check(sorted(panels) == ["a100 / m175", "a100 / m65"], f"panels {sorted(panels)}")
        series = panels["a100 / m65"]
        check(sorted(series) == ["horizontal, gradients_on host", "vertical, defer_fraction 0",
                                 "vertical, defer_fraction 0.25"], f"series {sorted(series)}")
        # batch / (scale · batch · 0.8) = 1.25 sequences per second at every batch; the run that
        # did not fit (batch 64) is left out.
        check(sorted(series["vertical, defer_fraction 0"]) == [(8.0, 1.25), (16.0, 1.25), (32.0, 1.25)],
              f"points {series['vertical, defer_fraction 0']}")
        check(all(b != 64.0 for b, _ in series["horizontal, gradients_on host"]), "a run that did not fit is drawn")
        check(abs(panels["a100 / m175"]["horizontal, gradients_on host"][0][1] - 1 / 4.5) < 1e-12, "m175 horizontal")
        result = run("schedule_plots.py", root)
        check(result.returncode == 0, f"exit {result.returncode}: {result.stderr}")
        check(os.path.getsize(os.path.join(root, "plots", "schedule_throughput.png")) > 10000, "no png")
        check("m65_h_b64: did not fit" in result.stderr, f"no note for the run that did not fit: {result.stderr!r}")
        bad = rows()
        bad[2][4] = "fast"
        write_csv(os.path.join(root, "table.csv"), COLUMNS, bad)
        expect_bad_input(root, "a step time that is not a number", run("schedule_plots.py", root), "table.csv",
                         "row 3", "mean_step_s")
        write_csv(os.path.join(root, "table.csv"), [c for c in COLUMNS if c != "batch"], [r[:6] + r[7:] for r in rows()])
        expect_bad_input(root, "no batch column", run("schedule_plots.py", root), "table.csv", "'batch'")
    print("schedule plots: ok")


if __name__ == "__main__":
    main()
