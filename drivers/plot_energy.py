#!/usr/bin/env python3
"""Draw total energy against time for one or more Intact runs, one curve per run, into a PNG.

    python3 drivers/plot_energy.py OUTPUT_DIR [OUTPUT_DIR ...] [--output energy.png]
                                   [--key total_energy] [--labels "IE,BDF2,A-search"]
                                   [--title TEXT] [--relative]

Each OUTPUT_DIR is a run's output folder: its metrics.jsonl (one JSON object per step, with "time" and
the plotted key, by default "total_energy" in J) and, when present, scene.resolved.json, whose
integrator.type names the curve unless --labels gives the names (comma separated, one per folder).
Runs whose metrics carry "energy_target" (A-search) get their target drawn dashed in the same colour.
--relative divides every curve by its first value (E / E0), which compares runs of different scenes.
Default output: energy.png in the working folder. Needs matplotlib (Debian: python3-matplotlib).
Exit status 1 with a message naming the file on a missing, unreadable or malformed metrics file.
"""

import argparse
import sys
from pathlib import Path

from run_metrics import PlotError, curve_labels, pyplot, read_metrics, scene_type


def read_run(directory, key):
    """Return (times, values, targets, integrator) of one output folder."""
    times, values, targets = [], [], []
    for record in read_metrics(directory, ["time", key]):
        if record[key] is None:
            continue  # not finite at that step (e.g. a contact energy at a penetrating state)
        times.append(record["time"])
        values.append(record[key])
        targets.append(record.get("energy_target"))
    if not times:
        raise PlotError(f"'{Path(directory) / 'metrics.jsonl'}' holds no step with a value of \"{key}\"")
    return times, values, targets, scene_type(directory, "integrator")


def main(argv):
    parser = argparse.ArgumentParser(description="Energy against time, one curve per Intact run.")
    parser.add_argument("runs", nargs="+", help="output folders (each with a metrics.jsonl)")
    parser.add_argument("--output", default="energy.png", help="PNG to write (default: energy.png)")
    parser.add_argument("--key", default="total_energy", help="metrics key to plot (default: total_energy)")
    parser.add_argument("--labels", default="", help="curve names, comma separated, one per folder")
    parser.add_argument("--title", default="", help="plot title")
    parser.add_argument("--relative", action="store_true", help="plot E / E0")
    args = parser.parse_args(argv)

    labels = curve_labels(args.labels, args.runs)
    runs = [read_run(directory, args.key) for directory in args.runs]
    plt = pyplot()

    figure, axes = plt.subplots(figsize=(7.5, 4.5))
    for index, (directory, (times, values, targets, integrator)) in enumerate(zip(args.runs, runs)):
        label = labels[index] if labels else (integrator or Path(directory).name)
        scale = values[0] if args.relative and values[0] != 0 else 1.0
        line, = axes.plot(times, [v / scale for v in values], label=label, linewidth=1.6)
        target_points = [(t, e / scale) for t, e in zip(times, targets) if e is not None]
        if target_points and args.key == "total_energy":
            axes.plot([t for t, _ in target_points], [e for _, e in target_points], linestyle="--",
                      linewidth=1.0, color=line.get_color(), label=f"{label} target")
    axes.set_xlabel("time (s)")
    axes.set_ylabel(f"{args.key} / initial" if args.relative else f"{args.key} (J)")
    if args.title:
        axes.set_title(args.title)
    axes.grid(True, alpha=0.3)
    axes.legend()
    figure.tight_layout()
    figure.savefig(args.output, dpi=120)
    print(f"wrote {args.output} ({len(runs)} run(s))")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except PlotError as error:
        print(f"plot_energy: {error}", file=sys.stderr)
        sys.exit(1)
