#!/usr/bin/env python3
"""Collect the metrics of an Intact scaling sweep into one table (python3, standard library only).

    python3 slurm/collect_scaling.py OUTPUT_ROOT [--mode strong|weak] [--output FILE]
                                     [--ranks "1 2 4"] [--reduce min|median|mean] [--skip-initial]

Input layout (what slurm/scaling.sbatch writes):
    OUTPUT_ROOT/np_<N>/metrics.jsonl            one run with N ranks (REPEATS=1), or
    OUTPUT_ROOT/np_<N>/rep_<R>/metrics.jsonl    repeat R of the run with N ranks (REPEATS>1).
metrics.jsonl holds one JSON object per line (one per step) with at least "step", "wall_seconds"
and "ranks"; one line per step, step 0 (set-up and initial output) included.

Output: OUTPUT_ROOT/scaling.tsv (or --output), tab separated, one row per rank count, sorted by ranks:
    ranks  steps  total_wall_seconds  seconds_per_step  speedup  efficiency
  steps               number of records in metrics.jsonl (step 0 included unless --skip-initial)
  total_wall_seconds  sum of "wall_seconds" over those records; with repeats, the --reduce of the
                      repeats' totals (default: min, the least disturbed run)
  seconds_per_step    total_wall_seconds / steps
  speedup, efficiency relative to the smallest rank count r0 (normally 1), on seconds_per_step
                      (s0 at r0, sN at N ranks):
      strong: speedup = s0 / sN              efficiency = s0 * r0 / (N * sN)
      weak:   speedup = (N / r0) * s0 / sN   efficiency = s0 / sN
Plot: OUTPUT_ROOT/scaling.png (the table's path with .png): seconds per step and parallel efficiency
against the rank count, with the ideal lines (matplotlib, Debian's python3-matplotlib; without it a
warning, and the table alone). --no-plot leaves it out.
The table is printed on stdout as well. Exit status 1 with a message naming the file on any
missing, unreadable, empty or malformed metrics file, or when a file's "ranks" disagrees with np_<N>.
"""

import argparse
import json
import math
import re
import statistics
import sys
from pathlib import Path

COLUMNS = ("ranks", "steps", "total_wall_seconds", "seconds_per_step", "speedup", "efficiency")
RANK_DIR = re.compile(r"^np_(\d+)$")
REPEAT_DIR = re.compile(r"^rep_(\d+)$")
REDUCERS = {"min": min, "median": statistics.median, "mean": statistics.fmean}


class CollectError(Exception):
    """A problem with the inputs, reported as one clear line."""


def read_metrics(path, skip_initial):
    """Return (records, total_wall_seconds, ranks_seen) for one metrics.jsonl."""
    if not path.is_file():
        raise CollectError(f"missing metrics file: {path}")
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as err:
        raise CollectError(f"cannot read metrics file {path}: {err}") from err
    records, total, ranks_seen = 0, 0.0, set()
    for lineno, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as err:
            raise CollectError(f"{path}:{lineno}: not valid JSON ({err.msg})") from err
        if not isinstance(obj, dict):
            raise CollectError(f"{path}:{lineno}: expected a JSON object per line")
        if skip_initial and obj.get("step") == 0:
            continue
        wall = obj.get("wall_seconds")
        if isinstance(wall, bool) or not isinstance(wall, (int, float)) or not math.isfinite(wall):
            raise CollectError(f"{path}:{lineno}: missing or non-numeric \"wall_seconds\"")
        if wall < 0:
            raise CollectError(f"{path}:{lineno}: negative \"wall_seconds\" ({wall})")
        if "ranks" in obj:
            ranks_seen.add(obj["ranks"])
        records += 1
        total += float(wall)
    if records == 0:
        what = "no records after skipping step 0" if skip_initial else "no records"
        raise CollectError(f"empty metrics file: {path} ({what})")
    return records, total, ranks_seen


def find_runs(root, wanted):
    """Map rank count -> list of metrics.jsonl paths (one per repeat)."""
    if not root.is_dir():
        raise CollectError(f"output root is not a directory: {root}")
    found = {}
    for entry in root.iterdir():
        match = RANK_DIR.match(entry.name)
        if entry.is_dir() and match:
            found[int(match.group(1))] = entry
    for n in wanted or ():
        if n not in found:
            raise CollectError(f"missing metrics file: {root / f'np_{n}' / 'metrics.jsonl'} "
                               f"(no run directory for {n} ranks)")
    if wanted:
        found = {n: found[n] for n in wanted}
    if not found:
        raise CollectError(f"no np_<N> run directories under {root}")
    runs = {}
    for n, rank_dir in found.items():
        repeats = sorted((d for d in rank_dir.iterdir() if d.is_dir() and REPEAT_DIR.match(d.name)),
                         key=lambda d: int(REPEAT_DIR.match(d.name).group(1)))
        runs[n] = [d / "metrics.jsonl" for d in repeats] or [rank_dir / "metrics.jsonl"]
    return runs


def collect(root, mode, wanted=None, reduce="min", skip_initial=False):
    """Return the table rows (dicts keyed by COLUMNS), sorted by ranks."""
    rows = []
    for n, paths in sorted(find_runs(root, wanted).items()):
        steps, totals = None, []
        for path in paths:
            records, total, ranks_seen = read_metrics(path, skip_initial)
            bad = sorted(str(r) for r in ranks_seen if r != n)
            if bad:
                raise CollectError(
                    f"{path}: \"ranks\" is {', '.join(bad)} but the run was launched with {n} ranks "
                    "(is the launcher wired to the MPI library, e.g. srun --mpi=pmix?)")
            if steps is not None and records != steps:
                print(f"collect_scaling: warning: {path} has {records} records, an earlier repeat "
                      f"had {steps}", file=sys.stderr)
            steps = records if steps is None else max(steps, records)
            totals.append(total)
        total = REDUCERS[reduce](totals)
        rows.append({"ranks": n, "steps": steps, "total_wall_seconds": total,
                     "seconds_per_step": total / steps})
    base = rows[0]
    r0, s0 = base["ranks"], base["seconds_per_step"]
    for row in rows:
        n, sn = row["ranks"], row["seconds_per_step"]
        if sn <= 0 or s0 <= 0:
            row["speedup"] = row["efficiency"] = float("nan")
        elif mode == "strong":
            row["speedup"] = s0 / sn
            row["efficiency"] = s0 * r0 / (n * sn)
        else:
            row["speedup"] = (n / r0) * s0 / sn
            row["efficiency"] = s0 / sn
    return rows


def format_cell(key, value):
    if key in ("ranks", "steps"):
        return str(value)
    if isinstance(value, float) and math.isnan(value):
        return "nan"
    return f"{value:.6g}" if key in ("total_wall_seconds", "seconds_per_step") else f"{value:.4f}"


def write_tsv(rows, path):
    lines = ["\t".join(COLUMNS)]
    lines += ["\t".join(format_cell(k, row[k]) for k in COLUMNS) for row in rows]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def print_table(rows, mode, out=sys.stdout):
    cells = [list(COLUMNS)] + [[format_cell(k, row[k]) for k in COLUMNS] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(COLUMNS))]
    print(f"# {mode} scaling", file=out)
    for r in cells:
        print("  ".join(c.rjust(w) for c, w in zip(r, widths)), file=out)


def write_plot(rows, mode, path, title):
    """A PNG of seconds per step (left) and parallel efficiency (right) against the rank count,
    each with the ideal line. Imports matplotlib here, so the table never depends on it."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ranks = [row["ranks"] for row in rows]
    per_step = [row["seconds_per_step"] for row in rows]
    efficiency = [row["efficiency"] for row in rows]
    r0, s0 = ranks[0], per_step[0]
    ideal = [s0 * r0 / n for n in ranks] if mode == "strong" else [s0] * len(ranks)

    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4.2), constrained_layout=True)
    left.plot(ranks, per_step, "o-", color="tab:blue", label="measured")
    left.plot(ranks, ideal, "--", color="gray", label="ideal")
    left.set_xscale("log", base=2)
    left.set_yscale("log")
    left.set_xlabel("MPI ranks")
    left.set_ylabel("wall time per step (s)")
    left.set_title("time per step")
    left.legend()
    right.plot(ranks, efficiency, "o-", color="tab:orange", label="measured")
    right.axhline(1.0, linestyle="--", color="gray", label="ideal")
    right.set_xscale("log", base=2)
    right.set_ylim(0.0, max(1.1, max((e for e in efficiency if math.isfinite(e)), default=1.0) * 1.05))
    right.set_xlabel("MPI ranks")
    right.set_ylabel("parallel efficiency")
    right.set_title("strong: t1 / (N tN)" if mode == "strong" else "weak: t1 / tN")
    right.legend()
    for axis in (left, right):
        axis.set_xticks(ranks)
        axis.set_xticklabels([str(n) for n in ranks])
        axis.grid(True, which="both", alpha=0.3)
    fig.suptitle(f"Intact {mode} scaling: {title}")
    fig.savefig(path, dpi=100)
    plt.close(fig)


def parse_ranks(text):
    if text is None:
        return None
    try:
        values = [int(v) for v in re.split(r"[\s,:]+", text.strip()) if v]
    except ValueError as err:
        raise CollectError(f"--ranks must be integers: {text!r}") from err
    if not values or any(v < 1 for v in values):
        raise CollectError(f"--ranks must list positive integers: {text!r}")
    return sorted(set(values))


def main(argv=None):
    summary, _, details = __doc__.partition("\n\n")
    parser = argparse.ArgumentParser(description=summary, epilog=details,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("root", type=Path, help="sweep output root holding np_<N>/ directories")
    parser.add_argument("--mode", choices=("strong", "weak"), default="strong",
                        help="how speedup and efficiency are defined (default: strong)")
    parser.add_argument("--output", type=Path, help="table path (default: ROOT/scaling.tsv)")
    parser.add_argument("--ranks", help="only these rank counts, e.g. \"1 2 4\"; each must exist "
                        "(default: every np_<N> found)")
    parser.add_argument("--reduce", choices=sorted(REDUCERS), default="min",
                        help="how repeats (np_<N>/rep_<R>/) are combined (default: min)")
    parser.add_argument("--skip-initial", action="store_true",
                        help="leave out step-0 records (set-up and initial output)")
    parser.add_argument("--no-plot", action="store_true",
                        help="do not write the plot (default: the table's path with .png, "
                        "when matplotlib is available)")
    parser.add_argument("--title", help="plot title (default: the name of ROOT)")
    args = parser.parse_args(argv)
    try:
        rows = collect(args.root, args.mode, parse_ranks(args.ranks), args.reduce,
                       args.skip_initial)
        table = args.output or args.root / "scaling.tsv"
        write_tsv(rows, table)
    except (CollectError, OSError) as err:
        print(f"collect_scaling: error: {err}", file=sys.stderr)
        return 1
    print_table(rows, args.mode)
    print(f"# table written to {table}")
    if not args.no_plot:
        plot = table.with_suffix(".png")
        try:
            write_plot(rows, args.mode, plot, args.title or args.root.resolve().name)
        except ImportError:
            print("collect_scaling: warning: no plot: matplotlib is missing (Debian: apt-get install "
                  "python3-matplotlib; or set PYTHON to a python3 that has it)", file=sys.stderr)
            return 0
        print(f"# plot written to {plot}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
