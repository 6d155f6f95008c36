#!/usr/bin/python3
"""The steps.csv columns README.md documents are the ones the program writes, no more, no fewer.

Usage: check_readme_columns.py README ASTERIA

Reads the `steps.csv` row of README.md's output table: the backticked names before "then the
verb's own columns", outside parentheses, are every verb's columns (`a_{x,y}_b` stands for
a_x_b and a_y_b, `<from>` for any word), the ones after "`train`:" are train's own. Runs a two-step sim and a
one-step train in a temporary directory and compares their steps.csv headers with them, in
order. Exit 1 naming each difference; 2 on bad usage.
"""
import os
import re
import subprocess
import sys
import tempfile

SHARED_END = "then the verb's own columns"


def documented_columns(readme):
    row = next((line for line in open(readme, encoding="utf-8") if line.startswith("| `steps.csv` |")), None)
    if row is None:
        sys.exit(f"check_readme_columns.py: {readme}: no `steps.csv` row in its output table")
    if SHARED_END not in row:
        sys.exit(f"check_readme_columns.py: {readme}: the steps.csv row does not say '{SHARED_END}'")
    shared, own = row.split(SHARED_END, 1)
    while re.search(r"\([^()]*\)", shared):  # what a column means, in parentheses, names no column
        shared = re.sub(r"\([^()]*\)", "", shared)
    names = [n for n in re.findall(r"`([^`]+)`", shared) if n != "steps.csv"]
    train = re.search(r"`train`:(.*?)\)", own)
    train_names = re.findall(r"`([^`]+)`", train.group(1)) if train else []
    return [expand(n) for n in names], [expand(n) for n in train_names]


def expand(name):
    """A documented name as a regular expression over column names."""
    if not re.fullmatch(r"[a-z0-9_{},<>]+", name):
        sys.exit(f"check_readme_columns.py: '{name}' in the steps.csv row is not a column name")
    pattern = re.sub(r"\{([^}]*)\}", lambda m: "(?:" + "|".join(map(re.escape, m.group(1).split(","))) + ")", name)
    pattern = re.sub(r"<[a-z]+>", "[a-z]+", pattern)
    return name, re.compile(pattern + r"\Z")


def header(directory):
    with open(os.path.join(directory, "steps.csv"), encoding="utf-8") as f:
        return f.readline().strip().split(",")


def compare(what, columns, documented, problems):
    """Columns in order: each documented name covers a run of consecutive columns."""
    at = 0
    for name, pattern in documented:
        start = at
        while at < len(columns) and pattern.match(columns[at]):
            at += 1
        if at == start:
            found = columns[at] if at < len(columns) else "the end of the header"
            problems.append(f"{what}: README documents `{name}` here, steps.csv has {found}")
            return
    if at < len(columns):
        problems.append(f"{what}: steps.csv columns the README does not document: {', '.join(columns[at:])}")


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    readme, asteria = sys.argv[1], os.path.abspath(sys.argv[2])
    shared, train_own = documented_columns(readme)
    problems = []
    with tempfile.TemporaryDirectory(prefix="readme-columns-") as work:
        env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
        runs = (("sim", ["sim", "--model", "tiny", "--steps", "2"], shared),
                ("train", ["train", "--model", "tiny", "--steps", "1", "--max-corpus-bytes", "256KB",
                           "--eval-sequences", "1"], shared + train_own))
        for verb, args, documented in runs:
            out = os.path.join(work, verb)
            done = subprocess.run([asteria, *args, "--out", out, "--no-progress"], env=env, capture_output=True,
                                  text=True)
            if done.returncode != 0:
                problems.append(f"{verb}: exit {done.returncode}: {done.stderr[-2000:]}")
                continue
            compare(verb, header(out), documented, problems)
    for problem in problems:
        print("FAIL: " + problem)
    if problems:
        return 1
    print(f"steps.csv: the {len(shared)} shared and {len(train_own)} train names of README.md are the columns written")
    return 0


if __name__ == "__main__":
    sys.exit(main())
