#!/usr/bin/python3
"""Runs every shell block of README.md as written, with small step counts, and checks each ran.

Usage: check_readme_commands.py README ASTERIA [--only LINE]...

Each ```sh block runs in a fresh directory under bash with `set -e`, after these rewrites only:
`asteria` at the start of a command and `build/release/apps/asteria/asteria` become ASTERIA;
the repository's own paths (`experiments/`, `bench/`, `plots/`, `build/release/python`) become
absolute, and `python3` starting a command is the interpreter running this check;
`--steps N` becomes at most --steps 4 (and a sim, synth or train command without --steps gets
it) and `--checkpoint-every N` at most 2 (so that a resumed run still finds its checkpoints); `mpirun` gets --allow-run-as-root when run as root. A block
the README marks with the comment line `<!-- readme-check: skip (REASON) -->` right above it is
not run (a synopsis with placeholders, the set-up commands CI itself runs, a device machine's
commands); the reason is printed. Blocks run in order: a later block of the same directory
name sees nothing of an earlier one.

Checks: every command exits 0, and every summary.json a block wrote says the run fitted (an
example that does not fit its machine is a broken example). Exit 1 naming the README line of
each failing block; 2 on bad usage.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

BINARY_PATH = "build/release/apps/asteria/asteria"
MAX_STEPS = 4
MAX_CHECKPOINT_EVERY = 2
STEPPING_VERBS = ("sim", "synth", "train")
SKIP = re.compile(r"<!--\s*readme-check:\s*skip\s*\((?P<reason>[^)]+)\)\s*-->")
BLOCK_TIMEOUT_S = 900


def blocks_of(readme):
    """[(line of the opening fence, text, skip reason or None)] of every ```sh block."""
    lines = open(readme, encoding="utf-8").read().split("\n")
    out = []
    i = 0
    while i < len(lines):
        if lines[i].strip() == "```sh":
            start = i + 1
            indent = len(lines[i]) - len(lines[i].lstrip())
            body = []
            i += 1
            while i < len(lines) and lines[i].strip() != "```":
                body.append(lines[i][indent:] if lines[i][:indent].strip() == "" else lines[i])
                i += 1
            previous = next((lines[k] for k in range(start - 2, -1, -1) if lines[k].strip()), "")
            skip = SKIP.search(previous)
            out.append((start, "\n".join(body), skip.group("reason") if skip else None))
        i += 1
    return out


def rewritten(text, asteria, root):
    """The block with the binary's and the repository's paths and small step counts (the only
    rewrites)."""
    text = text.replace(BINARY_PATH, asteria)
    text = re.sub(r"(?<![\w/.-])(experiments/|bench/|plots/|build/release/python(?=[/\s]|$))",
                  lambda m: os.path.join(root, m.group(1)), text)
    text = re.sub(r"(^|\n)(\s*)python3(?=\s)", lambda m: m.group(1) + m.group(2) + sys.executable, text)
    text = re.sub(r"(^|\n)(\s*)asteria(?=\s)", lambda m: m.group(1) + m.group(2) + asteria, text)
    text = re.sub(r"--steps(\s+|=)(\d+)", lambda m: f"--steps{m.group(1)}{min(int(m.group(2)), MAX_STEPS)}", text)
    text = re.sub(r"--checkpoint-every(\s+|=)(\d+)",
                  lambda m: f"--checkpoint-every{m.group(1)}{min(int(m.group(2)), MAX_CHECKPOINT_EVERY)}", text)
    # A run of the verbs that step, written without --steps, gets the small count too.
    commands = re.split(r"(?<!\\)\n", text)
    for i, command in enumerate(commands):
        words = command.split()
        if len(words) >= 2 and words[0] == asteria and words[1] in STEPPING_VERBS and "--steps" not in command:
            code, hash_mark, comment = command.partition(" #")
            commands[i] = code.rstrip() + f" --steps {MAX_STEPS}" + (f"  #{comment}" if hash_mark else "")
    text = "\n".join(commands)
    if os.geteuid() == 0:
        text = re.sub(r"(^|\n)(\s*)mpirun(?=\s)", lambda m: m.group(1) + m.group(2) + "mpirun --allow-run-as-root",
                      text)
    return text


def summaries_that_did_not_fit(directory):
    found = []
    for root, _, files in os.walk(directory):
        if "summary.json" not in files:
            continue
        path = os.path.join(root, "summary.json")
        try:
            summary = json.load(open(path, encoding="utf-8"))
        except (OSError, ValueError) as error:
            found.append(f"{os.path.relpath(path, directory)}: unreadable ({error})")
            continue
        if summary.get("fits") is False:
            found.append(f"{os.path.relpath(path, directory)}: did not fit ({summary.get('shortfall')})")
    return found


def main():
    args = sys.argv[1:]
    only = set()
    while "--only" in args:
        at = args.index("--only")
        if at + 1 >= len(args):
            print("check_readme_commands.py: --only takes a README line number", file=sys.stderr)
            return 2
        only.add(int(args[at + 1]))
        del args[at:at + 2]
    if len(args) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    readme, asteria = os.path.abspath(args[0]), os.path.abspath(args[1])
    if not os.access(asteria, os.X_OK):
        print(f"check_readme_commands.py: {asteria}: not an executable asteria program", file=sys.stderr)
        return 2
    name = os.path.basename(readme)
    blocks = blocks_of(readme)
    if not blocks:
        print(f"check_readme_commands.py: {readme}: no ```sh block", file=sys.stderr)
        return 2
    failures = []
    ran = 0
    for line, text, skip in blocks:
        if only and line not in only:
            continue
        if skip:
            print(f"{name}:{line}: not run ({skip})")
            continue
        directory = tempfile.mkdtemp(prefix="readme-check-")
        script = "set -e\n" + rewritten(text, asteria, os.path.dirname(readme)) + "\n"
        env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
        started = time.monotonic()
        try:
            result = subprocess.run(["bash", "-c", script], cwd=directory, env=env, capture_output=True, text=True,
                                    timeout=BLOCK_TIMEOUT_S)
            code, output = result.returncode, result.stdout + result.stderr
        except subprocess.TimeoutExpired as expired:
            code, output = "timeout", f"ran past {BLOCK_TIMEOUT_S} s: {expired}"
        ran += 1
        seconds = time.monotonic() - started
        problems = [] if code == 0 else [f"exit {code}"]
        problems += summaries_that_did_not_fit(directory)
        if problems:
            failures.append(line)
            print(f"FAIL: {name}:{line}: {'; '.join(problems)}\n--- as run:\n{script}--- output (tail):\n"
                  f"{output[-3000:]}")
        else:
            print(f"{name}:{line}: ok ({seconds:.0f} s)")
        shutil.rmtree(directory, ignore_errors=True)
    if ran == 0:
        print("check_readme_commands.py: no block was run", file=sys.stderr)
        return 2 if only else 1
    if failures:
        print(f"{len(failures)} block(s) of {name} failed: lines {', '.join(map(str, failures))}")
        return 1
    print(f"{name}: all {ran} blocks ran")
    return 0


if __name__ == "__main__":
    sys.exit(main())
