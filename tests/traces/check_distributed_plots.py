#!/usr/bin/python3
"""Checks the data-parallel plots (plots/distributed_plots.py, drawn through study_plots.py for a
study with data-parallel axes) on synthetic tables: every line and bar is the table's value for
the right run, runs that did not fit are left out with a note, axes left empty read as their
defaults, and bad input gives exit code 2 with a message naming the file, the row and the column.

Usage: check_distributed_plots.py [PLOTS_DIR]   (default: the repository's plots/)
"""
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
PLOTS_DIR = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else os.path.join(HERE, "..", "..", "plots")
sys.path.insert(0, PLOTS_DIR)

sys.path.insert(0, HERE)

import plot_common  # noqa: E402  (selects the Agg backend before pyplot is used)
import distributed_plots  # noqa: E402
import study_plots  # noqa: E402
from plot_checks import *  # noqa: E402,F401,F403  (the shared checks and synthetic studies)


# The data-parallel plots (distributed_plots.py, through study_plots.py)

DISTRIBUTED_AXES = ["nodes", "refresh_sharing", "sync_period", "straggler"]
DISTRIBUTED_COLUMNS = ([column for column in TABLE_COLUMNS if column not in ("steps", "shortfall", "run_dir")] +
                       ["network_bytes", "shortfall", "run_dir"] + DISTRIBUTED_AXES)


def distributed_rows(replicated=True, straggler=True):
    """Rows of a synthetic data-parallel table.csv: SOAP and KL-Shampoo at 4 and 16 nodes,
    S = 0, 1, 3 and sync periods 1 and 5 with owned refreshes; replicated refreshes at S = 1;
    a straggler (rank 1, 3x) for SOAP at S = 0 and 3; one run that did not fit. Every number
    differs between runs, so a value drawn for the wrong run is caught."""
    rows = []

    def add(optimizer, nodes, staleness, period, sharing="owners", slow="", fits=True):
        index = len(rows)
        config = (f"gh200-alps_olmo2-7b_{optimizer}_tiered_s{staleness}_nodes{nodes}"
                  + ("_replicated" if sharing == "replicated" else "") + f"_k{period}"
                  + (f"_slow{slow.replace(':', 'x')}" if slow else ""))
        values = {column: "" for column in DISTRIBUTED_COLUMNS}
        values.update(config=config, hw="gh200-alps", model="olmo2-7b", optimizer=optimizer, placement="tiered",
                      staleness=staleness, fits="true" if fits else "false", run_dir=f"runs/{config}",
                      nodes=nodes, refresh_sharing=sharing, sync_period=period, straggler=slow)
        if fits:
            base = 1.0 + 0.01 * index
            values.update(p50_step_s=base, p99_step_s=2.0 * base + 0.3 / (1 + staleness),
                          visible_optimizer_s=0.2 + 0.003 * index, network_bytes=(12 + 0.05 * index) * GIB)
        else:
            values.update(shortfall="device 3.0 GiB short")
        rows.append(values)

    for optimizer in ("soap", "kl-shampoo"):
        for nodes in (4, 16):
            for staleness in (0, 1, 3):
                for period in (1, 5):
                    add(optimizer, nodes, staleness, period)
            if replicated:
                add(optimizer, nodes, 1, 1, sharing="replicated")
    if straggler:
        for nodes in (4, 16):
            for staleness in (0, 3):
                add("soap", nodes, staleness, 1, slow="1:3")
    add("soap", 16, 10, 1, fits=False)
    return rows


def make_distributed_study(root, rows, columns=DISTRIBUTED_COLUMNS):
    write_csv(os.path.join(root, "table.csv"), columns, [[row.get(column, "") for column in columns] for row in rows])


def line_data(figure, title):
    """{legend label: [(x, y)]} of the lines in the axes titled `title`."""
    axes = next((axes for axes in figure.axes if axes.get_title() == title), None)
    if not check(axes is not None, f"no panel '{title}' among {[a.get_title() for a in figure.axes]}"):
        return {}
    return {line.get_label(): list(zip(line.get_xdata(), line.get_ydata())) for line in axes.get_lines()
            if not line.get_label().startswith("_")}


def bar_data(figure, title):
    """{legend label: [height]} of the bar groups in the axes titled `title`, and its x tick labels."""
    axes = next((axes for axes in figure.axes if axes.get_title() == title), None)
    if not check(axes is not None, f"no panel '{title}' among {[a.get_title() for a in figure.axes]}"):
        return {}, []
    bars = {container.get_label(): [patch.get_height() for patch in container.patches]
            for container in axes.containers}
    return bars, [label.get_text() for label in axes.get_xticklabels()]


def test_distributed_plots_draw_the_table(root):
    rows = distributed_rows()
    make_distributed_study(root, rows)
    figures = study_plots.study_figures(root)
    check(list(figures) == list(study_plots.PLOTS) + list(distributed_plots.PLOTS),
          f"a data-parallel study's plots: {list(figures)}")
    for name in distributed_plots.PLOTS:
        check_figure_style(figures[name], name)
    fitting = [row for row in rows if row["fits"] == "true"]
    baseline = [row for row in fitting if row["refresh_sharing"] == "owners" and not row["straggler"]]

    # Step time against S: one line per (nodes, K) of the baseline runs, per optimizer and metric.
    drawn_step = figures["distributed_step_time"]
    for optimizer in ("soap", "kl-shampoo"):
        for column, title in (("p50_step_s", "p50 step time"), ("p99_step_s", "p99 step time"),
                              ("visible_optimizer_s", "visible optimizer time (mean)")):
            drawn = line_data(drawn_step, f"{optimizer}: {title}")
            expected = {}
            for row in baseline:
                if row["optimizer"] == optimizer:
                    expected.setdefault(f"{row['nodes']} nodes, K={row['sync_period']}", []).append(
                        (float(row["staleness"]), float(row[column])))
            check(set(drawn) == set(expected), f"{optimizer} {title}: lines {sorted(drawn)}, expected "
                                               f"{sorted(expected)} (no replicated or straggler run)")
            for label, points in expected.items():
                got = drawn.get(label, [])
                check(len(got) == len(points) and all(close(a[0], b[0]) and close(a[1], b[1])
                                                      for a, b in zip(got, sorted(points))),
                      f"{optimizer} {title} {label}: drawn {got}, table {sorted(points)}")

    # Network bytes: every run that fit, in GiB, one line per setting (variants included).
    drawn_network = line_data(figures["network_bytes"], "soap: network per rank per step")
    replicated = [row for row in fitting if row["optimizer"] == "soap" and row["refresh_sharing"] == "replicated"
                  and row["nodes"] == 16]
    label = "16 nodes, K=1, replicated refresh, no straggler"
    check(drawn_network.get(label) == [(1.0, replicated[0]["network_bytes"] / GIB)],
          f"network bytes of the replicated run: {drawn_network.get(label)} (lines {sorted(drawn_network)})")
    check("16 nodes, K=1, owners refresh, rank 1 3x slower" in drawn_network,
          f"no straggler line among {sorted(drawn_network)}")
    axes = next(axes for axes in figures["network_bytes"].axes if axes.get_title().startswith("soap"))
    check(axes.get_ylabel() == "network per rank per step (GiB)", f"network axis label '{axes.get_ylabel()}'")
    check(not any(10.0 in [x for x, _ in points] for points in drawn_network.values()),
          "the run that did not fit (S = 10) is drawn")

    # Owned against replicated: the pairs that differ only in refresh_sharing.
    bars, ticks = bar_data(figures["owners_vs_replicated"], "p99 step time")
    check(set(bars) == {"owners refresh", "replicated refresh"}, f"owners/replicated bars: {sorted(bars)}")
    check(ticks == ["soap, S=1\n4 nodes", "soap, S=1\n16 nodes", "kl-shampoo, S=1\n4 nodes",
                    "kl-shampoo, S=1\n16 nodes"], f"owners/replicated groups: {ticks}")
    for index, tick in enumerate(ticks):
        optimizer, rest = tick.split(", S=1\n")
        nodes = int(rest.split()[0])
        for sharing in ("owners", "replicated"):
            row = next(row for row in fitting if row["optimizer"] == optimizer and row["nodes"] == nodes
                       and row["staleness"] == 1 and row["sync_period"] == 1 and row["refresh_sharing"] == sharing
                       and not row["straggler"])
            got = bars.get(f"{sharing} refresh", [])
            check(index < len(got) and close(got[index], row["p99_step_s"]),
                  f"{tick} {sharing}: p99 bar {got[index] if index < len(got) else None}, table {row['p99_step_s']}")

    # A straggler against none: SOAP at S = 0 and 3 on 4 and 16 nodes.
    bars, ticks = bar_data(figures["straggler"], "network per rank per step")
    check(set(bars) == {"no straggler", "rank 1 3x slower"}, f"straggler bars: {sorted(bars)}")
    check(len(ticks) == 4 and all(tick.startswith("soap, S=") for tick in ticks), f"straggler groups: {ticks}")
    for index, tick in enumerate(ticks):
        staleness = int(tick.split("S=")[1].split("\n")[0])
        nodes = int(tick.split("\n")[1].split()[0])
        for slow, label in (("", "no straggler"), ("1:3", "rank 1 3x slower")):
            row = next(row for row in fitting if row["optimizer"] == "soap" and row["nodes"] == nodes
                       and row["staleness"] == staleness and row["sync_period"] == 1
                       and row["refresh_sharing"] == "owners" and row["straggler"] == slow)
            got = bars.get(label, [])
            check(index < len(got) and close(got[index], row["network_bytes"] / GIB),
                  f"{tick} {label}: network bar {got[index] if index < len(got) else None}, "
                  f"table {row['network_bytes'] / GIB} GiB")
    for figure in figures.values():
        plot_common.plt.close(figure)


def test_distributed_plots_render(root):
    make_distributed_study(root, distributed_rows())
    figures = study_plots.study_figures(root)
    colours = {name: [colour for _, colour in series_colours(figure)] for name, figure in figures.items()}
    for figure in figures.values():
        plot_common.plt.close(figure)
    result = run("study_plots.py", root)
    check(result.returncode == 0, f"study_plots.py on a data-parallel study failed ({result.returncode}): "
                                  f"{result.stderr}")
    names = list(study_plots.PLOTS) + list(distributed_plots.PLOTS)
    expected = [os.path.abspath(os.path.join(root, "plots", name + ".png")) for name in names]
    check([os.path.abspath(line) for line in result.stdout.split()] == expected, f"printed paths: {result.stdout!r}")
    check("_s10_nodes16_k1: did not fit; left out of the data-parallel plots" in result.stderr,
          f"no note about the run that did not fit: {result.stderr!r}")
    for name, path in zip(names, expected):
        if name in distributed_plots.PLOTS:
            check_png(path, colours[name])
    # Alone, the script writes the data-parallel plots only.
    result = run("distributed_plots.py", root)
    check(result.returncode == 0, f"distributed_plots.py failed ({result.returncode}): {result.stderr}")
    check(len(result.stdout.split()) == len(distributed_plots.PLOTS), f"distributed_plots.py printed {result.stdout!r}")


def test_distributed_plots_without_pairs(root):
    """No replicated and no straggler runs: those two plots say so; the others still draw."""
    make_distributed_study(root, distributed_rows(replicated=False, straggler=False))
    figures = distributed_plots.distributed_figures(root)
    for name, fragment in (("owners_vs_replicated", "no configuration run both with owned and with replicated"),
                           ("straggler", "no configuration run both with and without a straggler")):
        texts = [text.get_text() for axes in figures[name].axes for text in axes.texts]
        check(any(fragment in text for text in texts), f"{name} without pairs says {texts}")
    check(len(line_data(figures["distributed_step_time"], "soap: p50 step time")) == 4,
          "the step-time plot draws the four (nodes, K) lines")
    for figure in figures.values():
        plot_common.plt.close(figure)
    result = run("study_plots.py", root)
    check(result.returncode == 0, f"no pairs: exit {result.returncode}: {result.stderr}")


def test_distributed_axes_left_empty_read_as_their_defaults(root):
    """A row that leaves an axis empty ran with asteria sim's default (owners, K = 1): replicated
    runs that name no sync period still pair with owned runs at K = 1, and owned runs that name no
    sharing still count as owned."""
    rows = distributed_rows(straggler=False)
    for row in rows:
        if row["refresh_sharing"] == "replicated":
            row["sync_period"] = ""
        elif row["sync_period"] == 1:
            row["refresh_sharing"] = ""
    make_distributed_study(root, rows)
    figures = distributed_plots.distributed_figures(root)
    bars, ticks = bar_data(figures["owners_vs_replicated"], "p99 step time")
    check(set(bars) == {"owners refresh", "replicated refresh"} and len(ticks) == 4,
          f"owners/replicated with empty defaults: bars {sorted(bars)}, groups {ticks}")
    check(len(line_data(figures["distributed_step_time"], "soap: p50 step time")) == 4,
          "runs naming no sharing are owned runs: four (nodes, K) lines")
    for figure in figures.values():
        plot_common.plt.close(figure)


def test_distributed_bad_input(root):
    rows = distributed_rows()
    directory = os.path.join(root, "no-network")
    make_distributed_study(directory, rows, [column for column in DISTRIBUTED_COLUMNS if column != "network_bytes"])
    expect_bad_input(directory, "a data-parallel table without network_bytes", run("study_plots.py", directory),
                     "table.csv", "'network_bytes'", "missing")
    directory = os.path.join(root, "word")
    rows[3]["network_bytes"] = "lots"
    make_distributed_study(directory, rows)
    expect_bad_input(directory, "a word for network bytes", run("study_plots.py", directory),
                     "table.csv", "row 4", "'network_bytes'", "expected a number", "lots")
    directory = os.path.join(root, "negative")
    rows[3]["network_bytes"] = -5
    make_distributed_study(directory, rows)
    expect_bad_input(directory, "negative network bytes", run("distributed_plots.py", directory),
                     "table.csv", "row 4", "'network_bytes'", ">= 0")


def test_distributed_helpers():
    check(distributed_plots.setting_text("straggler", "1:3") == "rank 1 3x slower", "straggler text")
    check(distributed_plots.setting_text("nodes", "1") == "1 node", "one node")
    check(distributed_plots.setting_text("parallelism", "zero1") == "zero1 (sharded state)", "zero1 text")
    check(distributed_plots.setting_text("parallelism", "ddp") == "ddp (replicated)", "ddp text")
    check(distributed_plots.setting_text("parallelism", "") == "ddp (replicated)", "empty parallelism reads as ddp")
    check(distributed_plots.setting_text("parallelism", "fsdp") == "fsdp (sharded state, gradients, weights)",
          "fsdp text")
    check(distributed_plots.is_distributed(["config", "fits", "nodes"]), "nodes makes a data-parallel study")
    check(not distributed_plots.is_distributed(TABLE_COLUMNS), "the default study is not data-parallel")
    # A narrow axis of step times: every tick its own label (once "0.613" five times).
    ticks = plot_common.SecondsTicks()
    ticks.set_locs([0.6130, 0.6131, 0.6132, 0.6133])
    labels = [ticks(v) for v in (0.6130, 0.6131, 0.6132, 0.6133)]
    check(len(set(labels)) == 4, f"narrow-axis tick labels differ: {labels}")
    ticks.set_locs([0.5, 1.0, 1.5])
    check([ticks(v) for v in (0.5, 1.0, 1.5)] == ["0.5", "1", "1.5"], "wide-axis tick labels stay short")


def main():
    test_distributed_helpers()
    for test in (test_distributed_plots_draw_the_table, test_distributed_plots_render,
                 test_distributed_plots_without_pairs, test_distributed_bad_input,
                 test_distributed_axes_left_empty_read_as_their_defaults):
        with tempfile.TemporaryDirectory(prefix="asteria-plots-") as root:
            test(root)
    if failures:
        print(f"{len(failures)} check(s) failed", file=sys.stderr)
        sys.exit(1)
    print("distributed plots: all checks passed")


if __name__ == "__main__":
    main()
