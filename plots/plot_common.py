"""Shared helpers for the plotting scripts: CSV reading with clear errors, the Agg backend,
byte units and atomic PNG writes.

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

EXIT_BAD_INPUT = 2


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
    """Rows of a CSV file with a header row, as dicts. Checks the file exists and has every
    required column."""
    if not os.path.isfile(path):
        raise InputProblem(f"{path}: file: expected a CSV file, found none")
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


def byte_unit(largest):
    """(divisor, name) of the binary unit that keeps `largest` readable."""
    for power, name in ((4, "TiB"), (3, "GiB"), (2, "MiB"), (1, "KiB")):
        if largest >= 1024 ** power:
            return 1024 ** power, name
    return 1, "B"


def save_png(figure, out_png):
    """Writes the figure to out_png through a temporary file and a rename, so a reader never
    sees half a PNG; creates the parent directory."""
    directory = os.path.dirname(os.path.abspath(out_png))
    os.makedirs(directory, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=".plot-", suffix=".png", dir=directory)
    os.close(handle)
    try:
        figure.savefig(temporary, format="png", dpi=120, bbox_inches="tight")
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
