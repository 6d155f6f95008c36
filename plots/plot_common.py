"""Shared helpers for the plotting scripts: CSV reading with clear errors, a run's steps.csv
(measured steps told apart from warm-up), the Agg backend, the colour palette, configuration
labels, number and byte formats, and atomic PNG writes.

Every problem with an input file raises InputProblem, whose message names the file, the column
(or row) and what was expected; run_script() turns it into one line on stderr and exit code 2.
"""
import csv
import math
import os
import sys
import tempfile

import matplotlib

matplotlib.use("Agg")  # no display: scripts run in CI and over ssh
import matplotlib.pyplot as plt  # noqa: E402  (must follow matplotlib.use)
import matplotlib.ticker  # noqa: E402
import numpy  # noqa: E402

EXIT_BAD_INPUT = 2

# Okabe & Ito's colour-blind-safe palette (https://jfly.uni-koeln.de/color/): eight colours that
# stay distinct under the common colour-vision deficiencies. Each plot gives every series one of
# them, never the same one twice.
OKABE_ITO = {
    "blue": "#0072B2",
    "orange": "#E69F00",
    "bluish green": "#009E73",
    "vermillion": "#D55E00",
    "sky blue": "#56B4E9",
    "reddish purple": "#CC79A7",
    "yellow": "#F0E442",
    "black": "#000000",
}
PALETTE = tuple(OKABE_ITO.values())

plt.rcParams.update({
    "axes.prop_cycle": matplotlib.cycler(color=list(PALETTE)),
    "font.size": 9,
    "axes.titlesize": 10,
    "axes.labelsize": 9,
    "legend.fontsize": 8.5,
    "figure.titlesize": 11,
    "figure.titleweight": "bold",
})


class InputProblem(Exception):
    """Bad input: the message says which file, which field and what was expected."""


def run_script(main):
    """Runs main(); reports InputProblem as 'error: ...' on stderr with exit code 2."""
    try:
        main()
    except InputProblem as problem:
        print(f"error: {problem}", file=sys.stderr)
        sys.exit(EXIT_BAD_INPUT)


def read_csv(path, required_columns):
    """Rows of a CSV file with a header row, as dicts. Checks the file exists, can be read and has
    every required column."""
    if not os.path.isfile(path):
        raise InputProblem(f"{path}: file: expected a CSV file, found none")
    try:
        with open(path, newline="", encoding="utf-8") as handle:
            reader = csv.DictReader(handle)
            header = reader.fieldnames or []
            missing = [column for column in required_columns if column not in header]
            if missing:
                names = ", ".join(f"'{column}'" for column in missing)
                raise InputProblem(
                    f"{path}: column {names}: missing (expected columns {', '.join(required_columns)}; "
                    f"found {', '.join(header) if header else 'no header'})")
            return list(reader)
    except OSError as error:
        raise InputProblem(f"{path}: file: expected a readable CSV file ({error.strerror or error})") from None
    except (UnicodeDecodeError, csv.Error) as error:
        raise InputProblem(f"{path}: file: expected UTF-8 CSV text ({error})") from None


def number(row, column, path, row_index, allow_empty=False):
    """The value of `column` in `row` as a float; None for an empty cell when allowed.
    row_index counts data rows from 1 (the header is not counted)."""
    text = (row.get(column) or "").strip()
    if text == "" and allow_empty:
        return None
    try:
        return float(text)
    except ValueError:
        raise InputProblem(f"{path}: row {row_index}, column '{column}': expected a number, found '{text}'") from None


def column_numbers(rows, column, path):
    """Every value of a numeric column (no empty cells allowed)."""
    return [number(row, column, path, index + 1) for index, row in enumerate(rows)]


def boolean(row, column, path, row_index):
    """true/false, yes/no, 1/0 (any case)."""
    text = (row.get(column) or "").strip().lower()
    if text in ("true", "yes", "1"):
        return True
    if text in ("false", "no", "0"):
        return False
    raise InputProblem(f"{path}: row {row_index}, column '{column}': expected true or false, found '{text}'")


def is_finite(value):
    return value is not None and math.isfinite(value)


def read_steps(path, columns):
    """A run's steps.csv as {column: numpy array} for `columns`, plus 'measured': a boolean array,
    true for the rows with warmup = 0 (the steps every statistic is taken over). Checks that every
    value is a finite number, that warmup is 0 or 1 and that at least one step is measured."""
    columns = list(dict.fromkeys(["warmup"] + list(columns)))
    rows = read_csv(path, columns)
    if not rows:
        raise InputProblem(f"{path}: rows: expected at least one step, found only the header")
    steps = {}
    for column in columns:
        values = numpy.array(column_numbers(rows, column, path), dtype=float)
        bad = numpy.flatnonzero(~numpy.isfinite(values))
        if bad.size:
            raise InputProblem(
                f"{path}: row {bad[0] + 1}, column '{column}': expected a finite number, found {values[bad[0]]}")
        steps[column] = values
    warmup = steps["warmup"]
    bad = numpy.flatnonzero((warmup != 0) & (warmup != 1))
    if bad.size:
        raise InputProblem(f"{path}: row {bad[0] + 1}, column 'warmup': expected 0 or 1, found {warmup[bad[0]]:g}")
    steps["measured"] = warmup == 0
    if not steps["measured"].any():
        raise InputProblem(f"{path}: column 'warmup': expected at least one measured step (warmup = 0), "
                           f"found {len(rows)} warm-up step(s) only")
    return steps


def non_negative(values, column, path):
    """Checks a column of seconds, bytes or counts has no negative value."""
    bad = numpy.flatnonzero(numpy.asarray(values) < 0)
    if bad.size:
        raise InputProblem(
            f"{path}: row {bad[0] + 1}, column '{column}': expected a value >= 0, found {values[bad[0]]:g}")


def byte_unit(largest):
    """(divisor, name) of the binary unit that keeps `largest` readable."""
    for power, name in ((4, "TiB"), (3, "GiB"), (2, "MiB"), (1, "KiB")):
        if largest >= 1024 ** power:
            return 1024 ** power, name
    return 1, "B"


def seconds_text(value):
    """A time in seconds with 3 significant figures, for tick labels: 0.0001, 0.5, 20, 1000."""
    if value == 0:
        return "0"
    if 1e-3 <= abs(value) < 1e5:
        digits = max(0, 2 - int(math.floor(math.log10(abs(value)))))
        text = f"{value:.{digits}f}"
        return text.rstrip("0").rstrip(".") if "." in text else text
    return f"{value:.2g}"


class SecondsTicks(matplotlib.ticker.Formatter):
    """Tick labels in seconds with 3 significant figures, or as many decimals as the spacing of the
    ticks needs to tell them apart (0.6131, 0.6132, ... on a narrow axis, never 0.613 twice)."""

    def __call__(self, value, pos=None):
        locs = sorted(self.locs) if len(self.locs) > 1 else []
        steps = [b - a for a, b in zip(locs, locs[1:]) if b > a]
        if not steps or value == 0:
            return seconds_text(value)
        needed = max(0, -int(math.floor(math.log10(min(steps)))))
        text = seconds_text(value)
        decimals = len(text.split(".")[1]) if "." in text and "e" not in text else 0
        if decimals >= needed or "e" in text:
            return text
        text = f"{value:.{needed}f}"
        return text.rstrip("0").rstrip(".") if "." in text else text


def split_config(config):
    """(group, rest) of a study run name `<hw>_<model>_<optimizer>_<placement>_s<S>...`: the group
    is '<hw> · <model>', rest the name without `<hw>_<model>_`. Names with fewer than three
    '_'-separated parts have no group: ('', config)."""
    parts = config.split("_")
    if len(parts) < 3 or not all(parts[:3]):
        return "", config
    return f"{parts[0]} · {parts[1]}", "_".join(parts[2:])


def grouped_rows(configs):
    """The rows of a plot with one row per configuration, grouped by hw and model in first-seen
    order: a list of (kind, text, index) with kind 'group' (a heading row, index None) or 'run'
    (text: the name without its group, index: its position in `configs`). Without any group (names
    that are not run names) every row is a run row with its full name."""
    groups = {}
    for index, config in enumerate(configs):
        group, rest = split_config(config)
        groups.setdefault(group, []).append((rest if group else config, index))
    rows = []
    for group, members in groups.items():
        if group:
            rows.append(("group", group, None))
        rows.extend(("run", text, index) for text, index in members)
    return rows


def style_group_labels(axes, rows):
    """Bold tick labels on the heading rows of grouped_rows(...) on axes' y axis."""
    for label, (kind, _, _) in zip(axes.get_yticklabels(), rows):
        if kind == "group":
            label.set_fontweight("bold")


def wrap_name(name, width=26):
    """A long run name on several lines, broken after '_' (the name reads back by joining them)."""
    lines, line = [], ""
    for part in name.split("_"):
        piece = part if not line else "_" + part
        if line and len(line) + len(piece) > width:
            lines.append(line + "_")
            line = part
        else:
            line += piece
    lines.append(line)
    return "\n".join(lines)


def empty_figure(title, message, size=(6.0, 2.5)):
    """A figure that says there is nothing to show (every configuration skipped)."""
    figure, axes = plt.subplots(figsize=size)
    axes.text(0.5, 0.5, message, ha="center", va="center", transform=axes.transAxes)
    axes.set_axis_off()
    axes.set_title(title)
    return figure


def save_png(figure, out_png):
    """Writes the figure to out_png through a temporary file and a rename, so a reader never
    sees half a PNG; creates the parent directory; closes the figure."""
    directory = os.path.dirname(os.path.abspath(out_png))
    os.makedirs(directory, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=".plot-", suffix=".png", dir=directory)
    os.close(handle)
    try:
        figure.savefig(temporary, format="png", dpi=150, bbox_inches="tight")
        os.replace(temporary, out_png)
    except BaseException:
        if os.path.exists(temporary):
            os.remove(temporary)
        raise
    finally:
        plt.close(figure)


def split_runs_and_output(paths, script):
    """`A.csv B.csv ... OUT.png` -> ([A.csv, B.csv, ...], OUT.png)."""
    if len(paths) < 2:
        raise InputProblem(f"{script}: arguments: expected at least one steps CSV and an output PNG")
    return paths[:-1], paths[-1]


def run_labels(steps_paths, labels, script):
    """Labels given with --label (one per run), or each run's directory name."""
    if labels:
        if len(labels) != len(steps_paths):
            raise InputProblem(
                f"{script}: --label: expected one label per run ({len(steps_paths)}), found {len(labels)}")
        return list(labels)
    names = []
    for path in steps_paths:
        directory = os.path.basename(os.path.dirname(os.path.abspath(path)))
        names.append(directory or os.path.splitext(os.path.basename(path))[0])
    return names
