#!/usr/bin/python3
"""Checks the scaling plots (plots/scaling_plots.py, drawn through study_plots.py for a
study with a parallelism column and two or more node counts) on synthetic tables: every point is
the table's value for the right run, runs that did not fit leave a gap (with a note), each
parallelism keeps its colour in every plot, a table without tokens_per_s still gets the other two
plots, and bad input gives exit code 2 with a message naming the file, the row and the column.

Usage: check_scaling_plots.py [PLOTS_DIR]   (default: the repository's plots/)
"""
import math
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
PLOTS_DIR = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else os.path.join(HERE, "..", "..", "plots")
sys.path.insert(0, PLOTS_DIR)

sys.path.insert(0, HERE)

import matplotlib.colors  # noqa: E402

import plot_common  # noqa: E402  (selects the Agg backend before pyplot is used)
import distributed_plots  # noqa: E402
import scaling_layout  # noqa: E402
import scaling_plots  # noqa: E402
import study_plots  # noqa: E402
from plot_checks import *  # noqa: E402,F401,F403  (the shared checks and synthetic studies)


SCALING_AXES = ["nodes", "parallelism", "refresh_on"]
SCALING_COLUMNS = ([column for column in TABLE_COLUMNS if column not in ("steps", "shortfall", "run_dir")] +
                   ["network_bytes", "tokens_per_s", "shortfall", "run_dir"] + SCALING_AXES)
MODELS = ("olmo-1b", "olmo2-7b")
NODES = (2, 4, 8)
PARALLELISMS = ("ddp", "zero1", "fsdp")
# (optimizer, refresh_on, staleness): AdamW, SOAP's native synchronous baseline, SOAP in Asteria.
METHODS = (("adamw", "", 0), ("soap", "device", 0), ("soap", "", 0), ("soap", "", 1), ("soap", "", 5))
TOKENS_PER_STEP_PER_NODE = 4 * 32 * 4096  # 4 GPUs a node, 32 sequences of 4096 tokens each
# The runs that did not fit or failed: (model, optimizer, refresh_on, staleness, nodes, parallelism).
NOT_FITTING = {("olmo2-7b", "soap", "device", 0, 2, "ddp"): "device 3.0 GiB short",
               ("olmo2-7b", "soap", "", 1, 4, "fsdp"): "run failed: exit code 1 (log: runs/x/log.txt)"}
PANEL_S1 = "gh200-alps · olmo2-7b\nSOAP, Asteria S=1"


def parallelism_label(value):
    return distributed_plots.setting_text("parallelism", value)


def scaling_rows():
    """Rows of a synthetic scaling table.csv: 2 models x nodes 2, 4, 8 x ddp, zero1, fsdp x
    AdamW, SOAP native synchronous and SOAP at S = 0, 1, 5; two runs that did not fit. Every
    number differs between runs, so a value drawn for the wrong run is caught."""
    rows = []
    for model_index, model in enumerate(MODELS):
        for optimizer, refresh_on, staleness in METHODS:
            for parallelism_index, parallelism in enumerate(PARALLELISMS):
                for nodes in NODES:
                    index = len(rows)
                    config = (f"gh200-alps_{model}_{optimizer}_tiered_s{staleness}_nodes{nodes}"
                              + ("" if parallelism == "ddp" else f"_{parallelism}")
                              + ("_refresh-on-device" if refresh_on else ""))
                    values = {column: "" for column in SCALING_COLUMNS}
                    values.update(config=config, hw="gh200-alps", model=model, optimizer=optimizer,
                                  placement="tiered", staleness=staleness, run_dir=f"runs/{config}", nodes=nodes,
                                  parallelism=parallelism if parallelism != "ddp" or index % 2 else "",
                                  refresh_on=refresh_on)
                    shortfall = NOT_FITTING.get((model, optimizer, refresh_on, staleness, nodes, parallelism))
                    if shortfall:
                        values.update(fits="false", shortfall=shortfall)
                    else:
                        # The batch per GPU is fixed: the step grows slowly with the nodes (collectives).
                        p50 = (2.0 * (1 + 3 * model_index) * (1.0 + 0.08 * math.log2(nodes))
                               * (1.0 + 0.15 * parallelism_index)
                               * (1.0 + 0.3 * (optimizer == "soap") + 0.4 * (refresh_on == "device")
                                  - 0.02 * staleness) + 0.001 * index)
                        visible = (0.05 if optimizer == "adamw" else 1.2 / (1 + staleness) + 0.4 * (refresh_on != "")) \
                            * (1 + model_index) * (1.0 - 0.2 * parallelism_index) / nodes + 0.0007 * index
                        exposed = 0.02 * (1 + parallelism_index) * math.log2(nodes) + 0.0003 * index
                        mean = 1.05 * p50
                        values.update(fits="true", p50_step_s=p50, p99_step_s=1.6 * p50 + 0.002 * index,
                                      p99_over_p50=1.6, mean_step_s=mean, compute_s=0.5 * p50,
                                      visible_optimizer_s=visible, exposed_communication_s=exposed,
                                      refresh_wait_s=0.0, state_move_wait_s=0.0, max_staleness=staleness,
                                      peak_device_bytes=40 * GIB, peak_host_bytes=10 * GIB, peak_nvme_bytes=0,
                                      network_bytes=(3 + 0.01 * index) * GIB,
                                      tokens_per_s=TOKENS_PER_STEP_PER_NODE * nodes / mean)
                    rows.append(values)
    return rows


def make_scaling_study(root, rows, columns=SCALING_COLUMNS):
    write_csv(os.path.join(root, "table.csv"), columns, [[row.get(column, "") for column in columns] for row in rows])


def panel(figure, title):
    axes = next((axes for axes in figure.axes if axes.get_title() == title), None)
    check(axes is not None, f"no panel '{title}' among {[a.get_title() for a in figure.axes if a.get_title()]}")
    return axes


def line_points(axes, label):
    """[(x, y)] of the line labelled `label` in axes (NaN y where the line has a gap)."""
    line = next((line for line in axes.get_lines() if line.get_label() == label), None) if axes else None
    if not check(line is not None, f"no line '{label}' in '{axes.get_title() if axes else None}' among "
                                   f"{[l.get_label() for l in axes.get_lines()] if axes else []}"):
        return []
    return [(float(x), float(y)) for x, y in zip(line.get_xdata(), line.get_ydata())]


def same_points(got, expected):
    """Points equal, NaN (a gap) where expected is None."""
    return len(got) == len(expected) and all(
        close(a[0], b[0]) and (math.isnan(a[1]) if b[1] is None else close(a[1], b[1])) for a, b in zip(got, expected))


def find(rows, model, optimizer, refresh_on, staleness, nodes, parallelism):
    return next(row for row in rows if row["model"] == model and row["optimizer"] == optimizer
                and row["refresh_on"] == refresh_on and row["staleness"] == staleness and row["nodes"] == nodes
                and (row["parallelism"] or "ddp") == parallelism)


def expected_line(rows, column, model, optimizer, refresh_on, staleness, parallelism, scale=1.0):
    points = []
    for nodes in NODES:
        row = find(rows, model, optimizer, refresh_on, staleness, nodes, parallelism)
        points.append((float(nodes), row[column] / scale if row["fits"] == "true" else None))
    return points


def test_scaling_helpers():
    check(scaling_plots.is_scaling(["config", "nodes", "parallelism"]), "nodes and parallelism make a scaling table")
    check(not scaling_plots.is_scaling(["config", "nodes"]), "nodes alone is not a scaling table")
    check(not scaling_plots.is_scaling(TABLE_COLUMNS), "the default study is not a scaling study")
    ticks = scaling_layout.log_ticks(0.9, 11.0)
    check(ticks == [1.0, 2.0, 5.0, 10.0], f"1-2-5 ticks: {ticks}")
    fine = scaling_layout.log_ticks(1.1, 1.9)
    check(len(fine) >= 3 and all(1.1 <= tick <= 1.9 for tick in fine), f"ticks of a narrow range: {fine}")
    # Nine methods: AdamW, then each optimizer's four on a row of their own (never split).
    methods = ["adamw"] + [f"{optimizer} {mode}" for optimizer in ("soap", "kl") for mode in ("native", 0, 1, 5)]
    figure_rows, columns, slots = scaling_layout.layout([("g", methods)], block=lambda method: method.split()[0])
    check((figure_rows, columns) == (2, 5) and [slot[:2] for slot in slots][4:6] == [(0, 4), (1, 0)],
          f"nine methods wrap between optimizers: {figure_rows} x {columns}, {slots}")
    with tempfile.TemporaryDirectory(prefix="asteria-plots-") as root:
        rows = [row for row in scaling_rows() if row["nodes"] == 4]
        make_scaling_study(root, rows)
        check(not scaling_plots.is_scaling_study(root), "one node count is not a scaling study")
        make_scaling_study(root, scaling_rows())
        check(scaling_plots.is_scaling_study(root), "nodes 2, 4, 8 and a parallelism column make a scaling study")


def test_scaling_plots_draw_the_table(root):
    rows = scaling_rows()
    make_scaling_study(root, rows)
    figures = study_plots.study_figures(root)
    check(list(figures) == list(study_plots.PLOTS) + list(distributed_plots.PLOTS) + list(scaling_plots.PLOTS),
          f"a scaling study's plots: {list(figures)}")
    colours = {}
    for name in scaling_plots.PLOTS:
        for label, colour in check_figure_style(figures[name], name):
            colours.setdefault(label, set()).add(tuple(round(c, 3) for c in colour))
    # One colour per parallelism in all three plots: ddp, zero1, (zero2,) fsdp in the palette's order.
    for value, position in (("ddp", 0), ("zero1", 1), ("fsdp", 3)):
        palette = tuple(round(c, 3) for c in matplotlib.colors.to_rgb(plot_common.PALETTE[position]))
        check(colours.get(parallelism_label(value)) == {palette},
              f"{value}: colours {colours.get(parallelism_label(value))}, expected PALETTE[{position}] in every plot")

    # Step time: p50 (solid) and p99 (dashed) per parallelism; the failed fsdp run at 4 nodes is a gap.
    step = figures["scaling_step_time"]
    check(len([axes for axes in step.axes if axes.get_lines()]) == len(MODELS) * len(METHODS),
          "one panel per model and method")
    axes = panel(step, PANEL_S1)
    for parallelism in PARALLELISMS:
        for column, label in (("p50_step_s", parallelism_label(parallelism)),
                              ("p99_step_s", f"_p99_step_s: {parallelism_label(parallelism)}")):
            got = line_points(axes, label)
            expected = expected_line(rows, column, "olmo2-7b", "soap", "", 1, parallelism)
            check(same_points(got, expected), f"S=1 {label}: drawn {got}, table {expected}")
    styles = {line.get_label(): line.get_linestyle() for line in axes.get_lines()}
    check(styles.get("zero1 (sharded state)") == "-" and styles.get("_p99_step_s: zero1 (sharded state)") == "--",
          f"p50 solid, p99 dashed: {styles}")
    check(axes.get_xscale() == "log" and [float(t) for t in axes.get_xticks()] == [2.0, 4.0, 8.0],
          f"nodes axis: {axes.get_xscale()} ticks {list(axes.get_xticks())}")
    native = panel(step, "gh200-alps · olmo2-7b\nSOAP, native synchronous")
    got = line_points(native, parallelism_label("ddp"))
    check(same_points(got, expected_line(rows, "p50_step_s", "olmo2-7b", "soap", "device", 0, "ddp")),
          f"native ddp (2 nodes did not fit): {got}")
    adamw = panel(step, "gh200-alps · olmo-1b\nAdamW")
    check(same_points(line_points(adamw, parallelism_label("fsdp")),
                      expected_line(rows, "p50_step_s", "olmo-1b", "adamw", "", 0, "fsdp")), "AdamW fsdp")

    # Throughput: tokens per second in millions; the ideal line from the smallest node count.
    throughput = figures["scaling_throughput"]
    axes = panel(throughput, PANEL_S1)
    check(axes.get_ylabel() == "throughput (million tokens/s)", f"throughput label '{axes.get_ylabel()}'")
    for parallelism in PARALLELISMS:
        expected = expected_line(rows, "tokens_per_s", "olmo2-7b", "soap", "", 1, parallelism, scale=1e6)
        got = line_points(axes, parallelism_label(parallelism))
        check(same_points(got, expected), f"throughput {parallelism}: drawn {got}, table {expected}")
        ideal = line_points(axes, f"_ideal: {parallelism_label(parallelism)}")
        start = expected[0][1]
        check(same_points(ideal, [(x, start * x / 2.0) for x, _ in expected]),
              f"ideal scaling {parallelism}: {ideal} (from {start} at 2 nodes)")
    axes = panel(throughput, "gh200-alps · olmo2-7b\nSOAP, native synchronous")
    ideal = line_points(axes, f"_ideal: {parallelism_label('ddp')}")
    start = find(rows, "olmo2-7b", "soap", "device", 0, 4, "ddp")["tokens_per_s"] / 1e6
    check(same_points(ideal, [(4.0, start), (8.0, 2.0 * start)]),
          f"ideal scaling of a line without 2 nodes starts at 4: {ideal}")

    # Visible optimizer and exposed communication against S; native synchronous as stars at S = 0.
    staleness = figures["visible_optimizer_vs_staleness"]
    check(len([axes for axes in staleness.axes if axes.get_lines()]) == len(MODELS) * len(NODES),
          "one panel per model, matrix optimizer and node count (AdamW has none)")
    axes = panel(staleness, "gh200-alps · olmo2-7b\nSOAP, 4 nodes")
    for parallelism in PARALLELISMS:
        label = parallelism_label(parallelism)
        for column, name in (("visible_optimizer_s", label),
                             ("exposed_communication_s", f"_exposed_communication_s: {label}")):
            expected = []
            for s in (0, 1, 5):
                row = find(rows, "olmo2-7b", "soap", "", s, 4, parallelism)
                expected.append((float(s), row[column] if row["fits"] == "true" else None))
            got = line_points(axes, name)
            check(same_points(got, expected), f"{parallelism} {column} against S: drawn {got}, table {expected}")
            star = line_points(axes, f"_native {column}: {label}")
            row = find(rows, "olmo2-7b", "soap", "device", 0, 4, parallelism)
            check(same_points(star, [(0.0, row[column])]), f"native {parallelism} {column}: {star}")
    axes = panel(staleness, "gh200-alps · olmo2-7b\nSOAP, 2 nodes")
    check(not any(line.get_label() == f"_native visible_optimizer_s: {parallelism_label('ddp')}"
                  for line in axes.get_lines()), "the native run that did not fit has a star")
    check(axes.get_xlabel() == "allowed staleness S (steps)", f"staleness label '{axes.get_xlabel()}'")
    for figure in figures.values():
        plot_common.plt.close(figure)


def test_scaling_plots_render(root):
    make_scaling_study(root, scaling_rows())
    figures = scaling_plots.scaling_figures(root)
    colours = {name: [colour for _, colour in series_colours(figure)] for name, figure in figures.items()}
    for figure in figures.values():
        plot_common.plt.close(figure)
    result = run("scaling_plots.py", root)
    check(result.returncode == 0, f"scaling_plots.py failed ({result.returncode}): {result.stderr}")
    expected = [os.path.abspath(os.path.join(root, "plots", name + ".png")) for name in scaling_plots.PLOTS]
    check([os.path.abspath(line) for line in result.stdout.split()] == expected, f"printed paths: {result.stdout!r}")
    for name, path in zip(scaling_plots.PLOTS, expected):
        check_png(path, colours[name])
        size = os.path.getsize(path) if os.path.isfile(path) else 0
        check(size > 20000, f"{path}: {size} bytes, expected a drawn plot")
    for fragment in ("gh200-alps_olmo2-7b_soap_tiered_s0_nodes2_refresh-on-device: did not fit; left out of the "
                     "scaling plots",
                     "gh200-alps_olmo2-7b_soap_tiered_s1_nodes4_fsdp: run failed; left out of the scaling plots",
                     "scaling_step_time: gh200-alps · olmo2-7b · SOAP, Asteria S=1, fsdp: no point at 4 (run failed) "
                     "nodes; a gap in its line"):
        check(fragment in result.stderr, f"no note '{fragment}': {result.stderr!r}")
    # Through study_plots.py: the study's plots, the data-parallel ones, then these.
    result = run("study_plots.py", root)
    check(result.returncode == 0, f"study_plots.py on a scaling study failed ({result.returncode}): {result.stderr}")
    names = list(study_plots.PLOTS) + list(distributed_plots.PLOTS) + list(scaling_plots.PLOTS)
    check([os.path.basename(line) for line in result.stdout.split()] == [name + ".png" for name in names],
          f"study_plots.py printed {result.stdout!r}")


def test_scaling_without_tokens(root):
    """A table written before tokens_per_s existed: the throughput plot is skipped with a note."""
    columns = [column for column in SCALING_COLUMNS if column != "tokens_per_s"]
    make_scaling_study(root, scaling_rows(), columns)
    for script in ("scaling_plots.py", "study_plots.py"):
        result = run(script, root)
        check(result.returncode == 0, f"{script} without tokens_per_s: exit {result.returncode}: {result.stderr}")
        printed = [os.path.basename(line) for line in result.stdout.split()]
        check("scaling_step_time.png" in printed and "visible_optimizer_vs_staleness.png" in printed
              and "scaling_throughput.png" not in printed, f"{script} without tokens_per_s printed {printed}")
        check("no tokens_per_s column" in result.stderr, f"{script}: no note about tokens_per_s: {result.stderr!r}")
    for name in ("scaling_step_time", "visible_optimizer_vs_staleness"):
        path = os.path.join(root, "plots", name + ".png")
        check(os.path.isfile(path) and os.path.getsize(path) > 20000, f"{path} missing or trivial without tokens_per_s")
    check(not os.path.exists(os.path.join(root, "plots", "scaling_throughput.png")),
          "scaling_throughput.png written without tokens_per_s")


def test_strong_scaling_batches_follow_the_nodes(root):
    """A strong scaling: the per-GPU batch and micro-batches halve as the nodes double. They follow
    the nodes, so they split no panels (one per model and method, as in weak scaling); a setting
    that varies otherwise (the placement) still does."""
    columns = SCALING_COLUMNS + ["batch", "micro_batches"]
    rows = scaling_rows()
    for row in rows:
        row["batch"] = 64 // row["nodes"]
        row["micro_batches"] = 16 // row["nodes"]
    make_scaling_study(root, rows, columns)
    figures = scaling_plots.scaling_figures(root)
    step = figures["scaling_step_time"]
    check(len([axes for axes in step.axes if axes.get_lines()]) == len(MODELS) * len(METHODS),
          f"strong scaling: one panel per model and method, found "
          f"{[axes.get_title() for axes in step.axes if axes.get_lines()]}")
    got = line_points(panel(step, PANEL_S1), parallelism_label("zero1"))
    check(same_points(got, expected_line(rows, "p50_step_s", "olmo2-7b", "soap", "", 1, "zero1")),
          f"strong scaling zero1 line: {got}")
    for figure in figures.values():
        plot_common.plt.close(figure)
    for row in rows:
        if row["optimizer"] == "adamw" and row["nodes"] == 4:
            row["placement"] = "host"
    make_scaling_study(root, rows, columns)
    figures = scaling_plots.scaling_figures(root)
    titles = [axes.get_title() for axes in figures["scaling_step_time"].axes if axes.get_lines()]
    check(any(title.endswith("\nhost") for title in titles) and any(title.endswith("\ntiered") for title in titles),
          f"a placement that does not follow the nodes splits panels: {titles}")
    for figure in figures.values():
        plot_common.plt.close(figure)


def test_scaling_nothing_to_draw(root):
    """Only AdamW runs: no matrix optimizer to plot against S; the figure says so."""
    make_scaling_study(root, [row for row in scaling_rows() if row["optimizer"] == "adamw"])
    figures = scaling_plots.scaling_figures(root)
    texts = [text.get_text() for axes in figures["visible_optimizer_vs_staleness"].axes for text in axes.texts]
    check(any("no run of a matrix optimizer" in text for text in texts), f"AdamW only: the S plot says {texts}")
    check(len([axes for axes in figures["scaling_step_time"].axes if axes.get_lines()]) == len(MODELS),
          "AdamW only: one step-time panel per model")
    for figure in figures.values():
        plot_common.plt.close(figure)


def test_scaling_bad_input(root):
    for what, column, value, script in (("a word for tokens per second", "tokens_per_s", "abc", "scaling_plots.py"),
                                        ("a word for tokens per second", "tokens_per_s", "abc", "study_plots.py"),
                                        ("a fraction of a node", "nodes", "2.5", "scaling_plots.py"),
                                        ("an unknown refresh site", "refresh_on", "gpu", "scaling_plots.py")):
        rows = scaling_rows()
        rows[3][column] = value
        directory = os.path.join(root, f"{column}-{script}")
        make_scaling_study(directory, rows)
        expect_bad_input(directory, what, run(script, directory), "table.csv", "row 4", f"'{column}'", value)
    directory = os.path.join(root, "no-parallelism")
    make_scaling_study(directory, scaling_rows(), [column for column in SCALING_COLUMNS if column != "parallelism"])
    expect_bad_input(directory, "a table without parallelism", run("scaling_plots.py", directory),
                     "table.csv", "'parallelism'", "missing")


def main():
    test_scaling_helpers()
    for test in (test_scaling_plots_draw_the_table, test_scaling_plots_render, test_scaling_without_tokens,
                 test_strong_scaling_batches_follow_the_nodes, test_scaling_nothing_to_draw, test_scaling_bad_input):
        with tempfile.TemporaryDirectory(prefix="asteria-plots-") as root:
            test(root)
            print(f"OK {test.__name__}")
    if failures:
        print(f"{len(failures)} check(s) failed", file=sys.stderr)
        sys.exit(f"FAIL: {len(failures)} check(s) of the scaling plots failed")
    print("scaling plots: all checks passed")


if __name__ == "__main__":
    main()
