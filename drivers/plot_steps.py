#!/usr/bin/env python3
"""Draw the work of every time step for one or more Intact runs into a PNG: the method's iterations per step,
the PCG iterations per step and the wall time per step, one curve per run, against the step number.

    python3 drivers/plot_steps.py OUTPUT_DIR [OUTPUT_DIR ...] [--output steps.png] [--labels "ipc,bal"]
                                  [--title TEXT]

Each OUTPUT_DIR is a run's output folder: its metrics.jsonl (one JSON object per step). The iterations are
"newton_iterations" (ipc, bal; al's inner Newton iterations), "outer_iterations" for al and "sweeps" for
stencil_descent, whichever the run writes; steps not certified ("converged": false) are marked with a
cross. A curve is named by its folder and the run's solver.type (scene.resolved.json) unless --labels gives
the names. Step 0 (the initial state) is left out. Default output: steps.png in the working folder. Needs
matplotlib (Debian: python3-matplotlib). Exit status 1 with a message naming the file on a missing or
malformed metrics file.
"""

import argparse
import sys
from pathlib import Path

from run_metrics import PlotError, curve_labels, pyplot, read_metrics, scene_type

# The iteration count of each method, in the order they are looked for in a step's metrics.
ITERATIONS = [("sweeps", "sweeps"), ("outer_iterations", "outer iterations"),
              ("newton_iterations", "Newton iterations")]


def read_run(directory):
    """Return (steps, iterations, iteration name, pcg iterations, wall seconds, unconverged steps, solver)."""
    records = [r for r in read_metrics(directory, ["step", "wall_seconds"]) if r["step"] > 0]
    if not records:
        raise PlotError(f"'{Path(directory) / 'metrics.jsonl'}' holds no time step (only the initial state)")
    key, name = next(((k, n) for k, n in ITERATIONS if records[0].get(k) is not None), ITERATIONS[-1])
    steps = [r["step"] for r in records]
    iterations = [r.get(key) or 0 for r in records]
    pcg = [r.get("linear_iterations") or 0 for r in records]
    wall = [r["wall_seconds"] for r in records]
    unconverged = [(r["step"], r.get(key) or 0) for r in records if r.get("converged") is False]
    return steps, iterations, name, pcg, wall, unconverged, scene_type(directory, "solver")


def main(argv):
    parser = argparse.ArgumentParser(description="Iterations and wall time per step, one curve per Intact run.")
    parser.add_argument("runs", nargs="+", help="output folders (each with a metrics.jsonl)")
    parser.add_argument("--output", default="steps.png", help="PNG to write (default: steps.png)")
    parser.add_argument("--labels", default="", help="curve names, comma separated, one per folder")
    parser.add_argument("--title", default="", help="plot title")
    args = parser.parse_args(argv)

    labels = curve_labels(args.labels, args.runs)
    runs = [read_run(directory) for directory in args.runs]
    plt = pyplot()

    figure, (top, middle, bottom) = plt.subplots(3, 1, sharex=True, figsize=(7.5, 7.0))
    names = set()
    for index, (directory, run) in enumerate(zip(args.runs, runs)):
        steps, iterations, name, pcg, wall, unconverged, solver = run
        folder = Path(directory).resolve().name
        label = labels[index] if labels else (f"{folder} ({solver})" if solver else folder)
        line, = top.plot(steps, iterations, label=label, linewidth=1.4)
        names.add(name)
        if unconverged:
            top.plot([s for s, _ in unconverged], [i for _, i in unconverged], "x", color=line.get_color(),
                     label=f"{label}: not certified")
        middle.plot(steps, pcg, linewidth=1.4, color=line.get_color())
        bottom.plot(steps, wall, linewidth=1.4, color=line.get_color())
    top.set_ylabel(" / ".join(sorted(names)))
    middle.set_ylabel("PCG iterations")
    bottom.set_ylabel("wall time (s)")
    bottom.set_xlabel("step")
    for axes in (top, middle, bottom):
        axes.grid(True, alpha=0.3)
    top.legend()
    if args.title:
        top.set_title(args.title)
    figure.tight_layout()
    figure.savefig(args.output, dpi=120)
    print(f"wrote {args.output} ({len(runs)} run(s), {sum(len(r[0]) for r in runs)} steps)")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except PlotError as error:
        print(f"plot_steps: {error}", file=sys.stderr)
        sys.exit(1)
