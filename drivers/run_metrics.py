"""What the plotting scripts share: reading an Intact run's metrics.jsonl and scene.resolved.json, curve
labels, and matplotlib. Every problem with the inputs is a PlotError with one line that names the file and
the fix."""

import json
from pathlib import Path


class PlotError(Exception):
    """A problem with the inputs, reported as one clear line."""


def read_metrics(directory, required):
    """The records of DIRECTORY/metrics.jsonl in order; each must hold every key of `required`."""
    path = Path(directory) / "metrics.jsonl"
    if not path.is_file():
        raise PlotError(f"'{path}' not found; fix: give the output folder of an `intact run`")
    records = []
    with path.open() as lines:
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as error:
                raise PlotError(f"'{path}' line {number}: not JSON ({error})") from None
            missing = [key for key in required if key not in record]
            if missing:
                names = " or ".join(f'"{key}"' for key in missing)
                raise PlotError(f"'{path}' line {number}: no {names}; fix: plot the metrics of an Intact run "
                                "that writes them")
            records.append(record)
    return records


def scene_type(directory, section):
    """The run's `section`.type (e.g. solver.type) from scene.resolved.json, or None."""
    resolved = Path(directory) / "scene.resolved.json"
    if not resolved.is_file():
        return None
    try:
        return json.loads(resolved.read_text()).get(section, {}).get("type")
    except json.JSONDecodeError:
        return None


def curve_labels(text, runs):
    """The --labels option split into one name per run folder (empty: name the curves otherwise)."""
    labels = [label.strip() for label in text.split(",")] if text else []
    if labels and len(labels) != len(runs):
        raise PlotError(f"--labels names {len(labels)} curves for {len(runs)} folders; fix: one per folder")
    return labels


def pyplot():
    """matplotlib.pyplot on the Agg backend (no display needed)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise PlotError("matplotlib is not installed; fix: apt-get install python3-matplotlib") from None
    return plt
