#!/usr/bin/env python3
"""Run bench_step on the benchmark scenes with each method and write the table (and a bar plot) of the
"The pile with each method" section of docs/benchmarks.md.

    /usr/bin/python3 drivers/bench_table.py [--bench build/drivers/bench_step] [--mpiexec mpirun]
        [--doc docs/benchmarks.md] [--plot docs/img/bench_pile.png] [--quick]

Each case runs once per rank count (1 and 2) with one OpenMP thread per rank, every method in one
bench_step call (`--solver ipc,al,bal`), so the methods of a line share the machine's state. The table
lies between the lines `<!-- bench_table: begin -->` and `<!-- bench_table: end -->` of the document and
is replaced whole; each cell is s/step (median), Newton iterations and the steps certified. --quick runs
2 steps of each case (for a test of the script, not for figures). Needs matplotlib for the plot (Debian:
python3-matplotlib); without it the table is still written. Exit status 1 with a message on a failed run
or a document without the markers.
"""

import argparse
import os
import re
import subprocess
import sys
from pathlib import Path

from run_metrics import PlotError, pyplot

BEGIN = "<!-- bench_table: begin -->"
END = "<!-- bench_table: end -->"
METHODS = ["ipc", "al", "bal"]
# (name in the table, bench_step arguments, steps)
CASES = [
    ("10 368-tet pile", ["--cubes", "8", "--cells", "6"], 20),
    ("216 one-cell cubes", ["--cubes", "216", "--cells", "1"], 20),
    ("stone arch (`inputs/stone_arch.json`)", ["--scene", "inputs/stone_arch.json"], 60),
]
RUN_LINE = re.compile(r"^(\w+)\s.*ranks (\d+): ([\d.e+-]+) / ([\d.e+-]+) / ([\d.e+-]+) s/step.*Newton (\d+), "
                      r"PCG (\d+) in (\d+) steps")
CERTIFIED_LINE = re.compile(r"^\s+converged (\d+) of (\d+) steps")


class BenchError(Exception):
    """A failed run or a malformed document, reported as one line."""


def run_case(bench, mpiexec, ranks, arguments, steps):
    """{method: (median s/step, Newton, PCG, certified, steps)} of one bench_step call."""
    command = ([mpiexec, "--oversubscribe", "--bind-to", "none", "-n", str(ranks)] if ranks > 1 else []) + [
        bench, *arguments, "--steps", str(steps), "--repeats", "1", "--alone", "0", "--solver", ",".join(METHODS)]
    environment = dict(os.environ, OMP_NUM_THREADS="1", OMP_PROC_BIND="false")
    if os.geteuid() == 0:  # Open MPI refuses root without these (containers, CI machines)
        environment.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    done = subprocess.run(command, capture_output=True, text=True, env=environment)
    if done.returncode != 0:
        raise BenchError(f"'{' '.join(command)}' failed with status {done.returncode}: "
                         f"{done.stderr.strip().splitlines()[-1] if done.stderr.strip() else ''}")
    results, last = {}, None
    for line in done.stdout.splitlines():
        match = RUN_LINE.match(line)
        if match:
            last = match.group(1)
            results[last] = [float(match.group(4)), int(match.group(6)), int(match.group(7)), None,
                             int(match.group(8))]
            continue
        match = CERTIFIED_LINE.match(line)
        if match and last:
            results[last][3] = int(match.group(1))
    missing = [m for m in METHODS if m not in results]
    if missing:
        raise BenchError(f"'{' '.join(command)}' printed no line for {', '.join(missing)}")
    return results


def table(rows):
    lines = ["| scene | ranks | " + " | ".join(f"`{m}`" for m in METHODS) + " |",
             "| --- | --- | " + " | ".join("---" for _ in METHODS) + " |"]
    for name, ranks, steps, results in rows:
        cells = []
        for method in METHODS:
            seconds, newton, _, certified, total = results[method]
            ratio = "" if method == "ipc" else f" ({seconds / results['ipc'][0]:.2f}×)"
            cells.append(f"{seconds:.4g}{ratio}; {newton}; {certified} of {total}")
        lines.append(f"| {name}, {steps} steps | {ranks} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def plot(rows, path):
    try:
        plt = pyplot()
    except PlotError as error:
        print(f"bench_table: {error}; no plot")
        return
    figure, axes = plt.subplots(figsize=(8, 3.8))
    width = 0.8 / len(METHODS)
    labels = [f"{name.split(' (')[0]}\n{ranks} rank{'s' if ranks > 1 else ''}" for name, ranks, _, _ in rows]
    for k, method in enumerate(METHODS):
        values = [results[method][0] / results["ipc"][0] for _, _, _, results in rows]
        axes.bar([i + (k - 1) * width for i in range(len(rows))], values, width, label=method)
    axes.axhline(1.0, color="grey", linewidth=0.8)
    axes.set_xticks(range(len(rows)))
    axes.set_xticklabels(labels, fontsize=8)
    axes.set_ylabel("s/step relative to ipc")
    axes.legend()
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    print(f"wrote {path}")


def main(argv):
    parser = argparse.ArgumentParser(description="Regenerate the method table of docs/benchmarks.md.")
    parser.add_argument("--bench", default="build/drivers/bench_step", help="the bench_step binary")
    parser.add_argument("--mpiexec", default="mpirun", help="MPI launcher for the 2-rank runs")
    parser.add_argument("--doc", default="docs/benchmarks.md", help="the document whose table is replaced")
    parser.add_argument("--plot", default="docs/img/bench_pile.png", help="PNG of s/step relative to ipc")
    parser.add_argument("--quick", action="store_true", help="2 steps per case (tests the script only)")
    args = parser.parse_args(argv)

    doc = Path(args.doc)
    if not doc.is_file():
        raise BenchError(f"'{doc}' not found; fix: give --doc the benchmarks page")
    text = doc.read_text()
    if BEGIN not in text or END not in text:
        raise BenchError(f"'{doc}' lacks the lines {BEGIN} and {END}; fix: put them around the table")
    if not Path(args.bench).is_file():
        raise BenchError(f"'{args.bench}' not found; fix: build it (cmake --build build --target bench_step)")
    rows = []
    for name, arguments, steps in CASES:
        steps = 2 if args.quick else steps
        for ranks in (1, 2):
            print(f"bench_table: {name}, {ranks} rank(s), {steps} steps", flush=True)
            rows.append((name, ranks, steps, run_case(args.bench, args.mpiexec, ranks, arguments, steps)))
    before, rest = text.split(BEGIN, 1)
    after = rest.split(END, 1)[1]
    doc.write_text(f"{before}{BEGIN}\n{table(rows)}\n{END}{after}")
    print(f"wrote the table of {doc}")
    plot(rows, args.plot)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except BenchError as error:
        print(f"bench_table: {error}", file=sys.stderr)
        sys.exit(1)
