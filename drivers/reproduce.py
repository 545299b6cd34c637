"""Run the papers' experiments (inputs/papers/) and write docs/reproduction.md: the papers' figures beside
ours with the paper's method and with Intact's default.

Usage:
    reproduce.py [--set small|full|tiny] [--only NAME[,NAME...]] [--np N] [--mpiexec CMD]
                 [--intact build/drivers/intact] [--results DIR] [--page docs/reproduction.md]
                 [--check] [--timeout SECONDS] [--no-page]
    reproduce.py --collect DIR [--page docs/reproduction.md]

The scenes, their sizes and the papers' figures (typed from the papers, with the table and row) are listed in
drivers/papers/catalogue.json. Each scene runs with the paper's method (`method`) and with the default
(`default`; once when they are the same), and once per probe (`probes`: the paper's method, or the default,
with one setting changed, to measure the cause of a difference; the page sets its figures beside the run it
varies). The page shows each scene's last frame with the paper's method as a PNG beside it (PAGE_STEM/NAME.png,
drawn by drivers/intact_render.sh; a scene whose output is gone or where ParaView is missing gets a line
saying so). Each run's summary is written to
DIR/NAME/VARIANT/summary.json next to its output, so an array job can run one scene per task and a last
step (`--collect DIR`) writes the same page from all of them. `--check` passes every output through
`intact check`. Exit status: 0 when every run ended and (with --check) every check was clean, 1 otherwise.
"""

import argparse
import json
import math
import re
import shlex
import struct
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CATALOGUE = ROOT / "drivers/papers/catalogue.json"
RENDER = ROOT / "drivers/intact_render.sh"
PICTURE_SIZE = "480x320"


class ReproduceError(Exception):
    """A problem with the inputs, reported as one line that names the file and the fix."""


# --- reading a run ------------------------------------------------------------------------------------------
def read_metrics(directory):
    path = Path(directory) / "metrics.jsonl"
    if not path.is_file():
        return []
    records = []
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if line.strip():
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError:
                raise ReproduceError(f"'{path}' line {number} is not JSON; fix: rerun the scene") from None
    return records


def read_vtu(path):
    """The arrays of one piece written by Intact (appended raw data, UInt64 headers) as lists."""
    data = Path(path).read_bytes()
    start = data.index(b'<AppendedData encoding="raw">')
    base = data.index(b"_", start) + 1
    formats = {"Float64": "d", "Int64": "q", "Int32": "i", "UInt8": "B"}
    arrays = {}
    section = None
    for raw in data[:start].split(b"<"):
        tag = raw.decode(errors="replace")
        for name in ("PointData", "CellData", "Points", "Cells"):
            if tag.startswith(name):
                section = name
        if not tag.startswith("DataArray"):
            continue
        fields = {k: v.strip() for k, v in re.findall(r'(\w+)="([^"]*)"', tag)}
        offset = base + int(fields["offset"])
        size = struct.unpack_from("<Q", data, offset)[0]
        code = formats.get(fields["type"])
        if code is None:
            continue
        count = size // struct.calcsize(code)
        values = struct.unpack_from("<" + code * count, data, offset + 8)
        arrays[(section, fields["Name"])] = (values, int(fields.get("NumberOfComponents", "1")))
    return arrays


def read_step(directory, step_dir):
    """Nodes {global id: (reference position, position, velocity)} and tets [(body, 4 global ids)]."""
    nodes, tets, seen = {}, [], set()
    for piece in sorted(step_dir.glob("piece_*.vtu")):
        a = read_vtu(piece)
        points = a[("Points", "Points")][0]
        disp = a[("PointData", "displacement")][0]
        vel = a[("PointData", "velocity")][0]
        gid = a[("PointData", "global_id")][0]
        for i, g in enumerate(gid):
            x = points[3 * i:3 * i + 3]
            u = disp[3 * i:3 * i + 3]
            nodes[g] = ([x[k] - u[k] for k in range(3)], x, vel[3 * i:3 * i + 3])
        conn = a[("Cells", "connectivity")][0]
        offsets = a[("Cells", "offsets")][0]
        body = a[("CellData", "body")][0]
        cell_gid = a[("CellData", "global_id")][0]
        begin = 0
        for c, end in enumerate(offsets):
            if end - begin == 4 and cell_gid[c] not in seen:
                seen.add(cell_gid[c])
                tets.append((body[c], [gid[k] for k in conn[begin:end]]))
            begin = end
    return nodes, tets


def lumped_masses(nodes, tets, densities):
    mass = dict.fromkeys(nodes, 0.0)
    for body, ids in tets:
        p = [nodes[i][0] for i in ids]
        e = [[p[k][d] - p[0][d] for d in range(3)] for k in (1, 2, 3)]
        volume = abs(e[0][0] * (e[1][1] * e[2][2] - e[1][2] * e[2][1])
                     - e[0][1] * (e[1][0] * e[2][2] - e[1][2] * e[2][0])
                     + e[0][2] * (e[1][0] * e[2][1] - e[1][1] * e[2][0])) / 6.0
        for i in ids:
            mass[i] += densities[body] * volume / 4.0
    return mass


def centre_and_momentum(directory, step_dir, densities):
    nodes, tets = read_step(directory, step_dir)
    mass = lumped_masses(nodes, tets, densities)
    total = sum(mass.values())
    com = [sum(mass[i] * nodes[i][1][d] for i in nodes) / total for d in range(3)]
    momentum = [sum(mass[i] * nodes[i][2][d] for i in nodes) for d in range(3)]
    return com, momentum, total


def step_dirs(directory):
    return sorted(p for p in (Path(directory) / "steps").glob("step_*") if p.is_dir())


# --- one run's figures --------------------------------------------------------------------------------------
def summarise(entry, directory, wall, rc):
    records = read_metrics(directory)
    steps = [r for r in records if r.get("step", 0) > 0]
    summary = {"rc": rc, "wall_seconds": wall, "steps": len(steps)}
    if not steps:
        return summary
    first = records[0]
    summary["nodes"] = first.get("nodes")
    summary["elements"] = first.get("elements")
    sweeps = [r["sweeps"] for r in steps if r.get("sweeps") is not None]
    newton = sweeps if sweeps else [r.get("newton_iterations") or 0 for r in steps]
    summary["iteration_kind"] = "sweeps" if sweeps else "newton"
    summary["newton"] = [sum(newton) / len(newton), max(newton)]
    linear = sum(r.get("linear_iterations") or 0 for r in steps)
    solves = sum(r.get("newton_iterations") or 0 for r in steps)
    summary["cg"] = linear / solves if solves and not sweeps else None
    pairs = [r.get("contact_pairs") or 0 for r in steps]
    summary["contacts"] = [sum(pairs) / len(pairs), max(pairs)]
    outer = [r["outer_iterations"] for r in steps if r.get("outer_iterations") is not None]
    summary["outer"] = sum(outer) / len(outer) if outer else None
    summary["not_converged"] = sum(1 for r in steps if not r.get("converged", False))
    summary["repaired"] = sum(1 for r in steps if r.get("repair"))
    if summary["repaired"]:
        # The paper's method alone: its own iterations in a repaired step (before ipc solved it again), and
        # how far from force balance its result was.
        alone = [r["repair"].get("method_iterations", 0) if r.get("repair") else n for r, n in zip(steps, newton)]
        summary["method_alone"] = [sum(alone) / len(alone), max(alone)]
        residuals = sorted(r["repair"]["method_residual_acceleration"] for r in steps
                           if r.get("repair") and r["repair"].get("method_residual_acceleration") is not None)
        summary["repair_residual"] = residuals[len(residuals) // 2] if residuals else None
        summary["repair_failed"] = sorted({f for r in steps if r.get("repair") for f in r["repair"].get("failed", [])})
        # Who repaired: ipc (the fallback, solving the step again) or the method itself (going on).
        summary["repaired_by"] = "/".join(sorted({r["repair"].get("by", "?") for r in steps if r.get("repair")}))
    if sweeps:
        scene = Path(directory) / "scene.resolved.json"
        settings = json.loads(scene.read_text()).get("solver", {}) if scene.is_file() else {}
        summary["sweep_cap"] = settings.get("stencil_descent", {}).get("max_sweeps")
    summary["seconds_per_step"] = sum(r.get("wall_seconds") or 0.0 for r in steps) / len(steps)
    e0, e1 = records[0].get("total_energy"), steps[-1].get("total_energy")
    summary["energy_start"], summary["energy_end"] = e0, e1
    summary["end_time"] = steps[-1].get("time")
    summary["outcome"] = outcome(entry, directory, records)
    return summary


def outcome(entry, directory, records):
    """The scene's outcome figure, measured from its output: {"text", "value"[, "reference"]}. Kinds read from
    metrics.jsonl (intact, energy) or from the written steps (momentum, slide, stands, exit_speed); a run
    without what its kind needs gives its step count only."""
    kind = entry["outcome"]
    steps = [r for r in records if r.get("step", 0) > 0]
    fallback = {"text": f"{len(steps)} steps", "value": None}
    if kind == "intact":
        distances = [r["min_contact_distance"] for r in steps if r.get("min_contact_distance") is not None]
        if not distances:
            return fallback
        return {"text": f"{len(steps)} steps, min distance {min(distances):.1e} m", "value": min(distances)}
    if kind == "energy":
        e = [r["total_energy"] for r in records if r.get("total_energy") is not None]
        if not e:
            return fallback
        return {"text": f"total energy: lowest {min(e) / e[0] - 1:+.1%}, highest {max(e) / e[0] - 1:+.1%}, "
                        f"end {e[-1] / e[0] - 1:+.1%} of the start",
                "value": e[-1] / e[0] - 1}
    dirs = step_dirs(directory)
    resolved = Path(directory) / "scene.resolved.json"
    if not dirs or not resolved.is_file():
        return fallback
    scene = json.loads(resolved.read_text())
    densities = [b["material"]["density"] for b in scene["bodies"]]
    try:
        if kind == "momentum":
            _, p0, _ = centre_and_momentum(directory, dirs[0], densities)
            _, p1, _ = centre_and_momentum(directory, dirs[-1], densities)
            change = math.dist(p0, p1) / math.hypot(*p0)
            return {"text": f"‖ΔP‖ / ‖P₀‖ = {change:.2e}", "value": change}
        if kind == "slide":
            c0, _, _ = centre_and_momentum(directory, dirs[0], densities)
            c1, _, _ = centre_and_momentum(directory, dirs[-1], densities)
            angle = math.radians(entry["slide"]["angle_deg"])
            mu = entry["slide"]["friction"]
            g = math.hypot(*scene["gravity"])
            t = records[-1]["time"]
            analytic = max(0.0, 0.5 * g * (math.sin(angle) - mu * math.cos(angle)) * t * t)
            slid = c1[0] - c0[0]
            return {"text": f"slid {slid * 1000:.2f} mm in {t:.2f} s (rigid analytic {analytic * 1000:.2f} mm)",
                    "value": slid, "reference": analytic}
        if kind == "stands":
            nodes, _ = read_step(directory, dirs[-1])
            moved = max(math.dist(x0, x) for x0, x, _ in nodes.values())
            return {"text": f"largest displacement {moved:.2e} m after {records[-1]['time']:.3f} s",
                    "value": moved}
        if kind == "exit_speed":
            _, p, m = centre_and_momentum(directory, dirs[-1], densities)
            speed = math.hypot(*p) / m
            return {"text": f"final centre-of-mass speed {speed:.3f} m/s", "value": speed}
    except (KeyError, ValueError, struct.error):
        return fallback
    raise ReproduceError(f"'{CATALOGUE}': scene '{entry['name']}' has outcome '{kind}'; fix: one of intact, "
                         "energy, momentum, slide, stands, exit_speed")


# --- running -----------------------------------------------------------------------------------------------
def load_catalogue(path=CATALOGUE):
    try:
        return json.loads(Path(path).read_text())["scenes"]
    except (OSError, json.JSONDecodeError, KeyError) as error:
        raise ReproduceError(f"'{path}': cannot read the scene list ({error}); fix the file") from None


def variants(entry):
    """{variant: --set overrides}: the paper's method, the default (when it differs) and each probe (a run
    with one setting changed that measures the cause of a difference; catalogue field `probes`)."""
    found = {"method": entry["method"]}
    if entry["default"] != entry["method"]:
        found["default"] = entry["default"]
    for probe in entry.get("probes", []):
        found["probe_" + probe["name"]] = entry[probe.get("base", "method")] + probe["set"]
    return found


def run_one(entry, variant, size, args):
    out = Path(args.results) / entry["name"] / variant
    overrides = entry.get(size, []) if size != "small" else entry.get("small", [])
    if size == "tiny":
        overrides = entry.get("small", []) + entry.get("tiny", [])
    command = shlex.split(args.mpiexec) + ["-n", str(args.np)] if args.mpiexec else []
    # A scene whose full size is another file (more bodies than an override can add): `full_scene`.
    scene = entry.get("full_scene", entry["scene"]) if size == "full" else entry["scene"]
    command += [args.intact, "run", str(ROOT / scene), "--output", str(out)]
    for item in overrides + variants(entry)[variant]:
        command += ["--set", item]
    out.mkdir(parents=True, exist_ok=True)
    began = time.monotonic()
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=args.timeout)
        rc, log = done.returncode, done.stdout + done.stderr
    except subprocess.TimeoutExpired as expired:
        rc, log = "timeout", f"stopped after {args.timeout} s\n" + str(expired.stdout or "")
    wall = time.monotonic() - began
    (out / "run.log").write_text(" ".join(shlex.quote(c) for c in command) + "\n" + log)
    summary = summarise(entry, out, wall, rc)
    summary.update({"name": entry["name"], "variant": variant, "size": size, "ranks": args.np,
                    "output": str(out), "command": " ".join(shlex.quote(c) for c in command)})
    if args.check and summary["steps"]:
        checked = subprocess.run([args.intact, "check", str(out)], capture_output=True, text=True)
        lines = (checked.stdout + checked.stderr).strip().splitlines()
        summary["check"] = "clean" if checked.returncode == 0 else (lines[-1] if lines else "failed")
    (out / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")
    print(f"{entry['name']} [{variant}]: rc {rc}, {summary['steps']} steps, {wall:.1f} s"
          + (f", check: {summary['check']}" if "check" in summary else ""), flush=True)
    return summary


# --- the page ----------------------------------------------------------------------------------------------
def figure(pair, digits=1):
    if not pair or pair[0] is None:
        return "–"
    avg, peak = pair
    text = f"{avg:.{digits}f}" if avg < 1e4 else f"{avg:.3g}"
    if peak is not None:
        text += f" ({peak:.0f})" if peak < 1e4 else f" ({peak:.3g})"
    return text


def ratio(ours, theirs):
    if not ours or not theirs or ours[0] is None or not theirs[0]:
        return "–"
    return f"{ours[0] / theirs[0]:.2f}×"


def said(run):
    """A run's outcome figure as text (its step count where the run wrote none)."""
    return (run.get("outcome") or {}).get("text", f"{run['steps']} steps")


def repaired_by(run):
    """' by al', ' by ipc', ...: who repaired the run's repaired steps (empty for an older summary)."""
    return f" by {run['repaired_by']}" if run.get("repaired_by") else ""


def explain(entry, runs):
    """Measured facts behind a difference over 2× or in outcome, and the probes' runs that measure its cause;
    'not yet explained' where a difference has neither (`open` counts those)."""
    paper = entry["paper_figures"]
    facts, differs, open_ = [], False, 0
    for variant in ("method", "default"):
        run = runs.get(variant)
        if not run:
            continue
        label = "paper's method" if variant == "method" else "default"
        if run["rc"] != 0:
            differs, open_ = True, open_ + 1
            facts.append(f"{label}: run did not finish (exit {run['rc']})")
        if run.get("not_converged"):
            differs, open_ = True, open_ + 1
            facts.append(f"{label}: {run['not_converged']} of {run['steps']} steps not converged")
        if run.get("repaired"):
            differs = True
            text = (f"{label}: {run['repaired']} of {run['steps']} steps failed the step certificate "
                    f"({', '.join(run.get('repair_failed') or ['?'])}) and were solved again with ipc")
            if run.get("repair_residual") is not None:
                text += f" (median residual acceleration of the failed results {run['repair_residual']:.3g} m/s²)"
            if run.get("method_alone"):
                text += f"; the paper's method alone took {figure(run['method_alone'])} iterations / step"
                if paper.get("newton"):
                    text += f" ({run['method_alone'][0] / paper['newton'][0]:.2f}× the paper's)"
            facts.append(text)
        if run.get("check") not in (None, "clean"):
            differs, open_ = True, open_ + 1
            facts.append(f"{label}: intact check: {run['check']}")
        if paper.get("newton") and run.get("newton"):
            r = run["newton"][0] / paper["newton"][0]
            if r > 2 or (r < 0.5 and variant == "method"):
                differs = True
                alone = run["method_alone"][0] / paper["newton"][0] if run.get("method_alone") else None
                if alone is not None and 0.5 <= alone <= 2:
                    facts.append(f"{label}: {r:.1f}× the paper's iterations per step, from the ipc repairs "
                                 f"(alone {alone:.2f}×)")
                else:
                    open_ += 1
                    facts.append(f"{label}: {r:.1f}× the paper's iterations per step")
                if run.get("iteration_kind") == "sweeps" and run["newton"][0] == run.get("sweep_cap"):
                    facts.append(f"every step ran the {run['sweep_cap']} sweeps of the cap without reaching "
                                 "the tolerance")
        out = run.get("outcome") or {}
        if "reference" in out and out["reference"] > 0:
            if not 0.5 <= out["value"] / out["reference"] <= 2:
                differs, open_ = True, open_ + 1
                facts.append(f"{label}: slide {out['value'] / out['reference']:.2f}× the rigid analytic "
                             "distance")
        if "outcome_value" in paper and out.get("value") is not None:
            if abs(out["value"] - paper["outcome_value"]) > 0.1 * paper["outcome_value"]:
                differs, open_ = True, open_ + 1
                facts.append(f"{label}: {out['value']:.3g} against the paper's {paper['outcome_value']:.3g}")
                if run.get("energy_start") and run.get("energy_end") is not None:
                    facts.append(f"{label}: total energy {run['energy_start']:.3g} → {run['energy_end']:.3g} J")
    if paper.get("vertices") and runs.get("method") and runs["method"].get("nodes"):
        scale = runs["method"]["nodes"] / paper["vertices"]
        if differs and scale < 0.5:
            facts.append(f"our mesh has {runs['method']['nodes']} nodes, the paper's {paper['vertices']}")
    if not differs:
        return "–"
    probed, moved = [], False
    for probe in entry.get("probes", []):
        run, base = runs.get("probe_" + probe["name"]), runs.get(probe.get("base", "method"))
        if not run or not base or not run.get("steps"):
            continue
        label = "paper's method" if probe.get("base", "method") == "method" else "default"
        changed = ", ".join(f"`{item}`" for item in probe["set"])
        text = (f"**measured: {probe['about']}** ({label} with {changed}): {figure(run.get('newton'))} "
                f"iterations / step against {figure(base.get('newton'))}")
        if run.get("repaired") or base.get("repaired"):
            text += (f", {run.get('repaired', 0)} of {run['steps']} steps repaired{repaired_by(run)} against "
                     f"{base.get('repaired', 0)}{repaired_by(base)}")
        if run.get("not_converged") or base.get("not_converged"):
            text += (f", {run.get('not_converged', 0)} of {run['steps']} steps not converged against "
                     f"{base.get('not_converged', 0)}")
        if run.get("outcome") and base.get("outcome") and run["outcome"]["text"] != base["outcome"]["text"]:
            text += f", {said(run)} against {said(base)}"
        if run["rc"] != 0:
            text += f" (the run did not finish: exit {run['rc']})"
        probed.append(text)
        # A probe explains a difference only where its setting changed the figures.
        if run.get("newton") and base.get("newton") and base["newton"][0]:
            moved = moved or not 2 / 3 <= run["newton"][0] / base["newton"][0] <= 1.5
        a, b = (run.get("outcome") or {}).get("value"), (base.get("outcome") or {}).get("value")
        if a is not None and b is not None:
            moved = moved or abs(a - b) > 0.1 * max(abs(a), abs(b))
        moved = moved or any(run.get(k) != base.get(k) for k in ("repaired", "not_converged"))
    if moved or not open_:
        return "; ".join(facts + probed)
    return "; ".join(facts + probed) + "; rest not yet explained"


def render(name, run, page):
    """The last frame of a run's output, coloured by body, as PAGE_FOLDER/PAGE_STEM/NAME.png (480×320) with
    drivers/intact_render.sh; (link relative to the page, None) or (None, why there is no picture)."""
    folder = Path(run.get("output", ""))
    if not (folder / "intact.pvd").is_file():
        return None, "no picture: the run's output is gone"
    target = Path(page).parent / Path(page).stem / f"{name}.png"
    target.parent.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(["bash", str(RENDER), str(folder), "--frame", "last", "--color", "body",
                           "--size", PICTURE_SIZE, "--title", name, "--png", str(target)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        target.unlink(missing_ok=True)
        lines = (done.stdout + done.stderr).strip().splitlines()
        return None, f"no picture: intact-render exit {done.returncode} ({lines[-1] if lines else ''})"
    return f"{Path(page).stem}/{name}.png", None


def write_page(summaries, page, command):
    catalogue = {e["name"]: e for e in load_catalogue()}
    by_scene = {}
    for s in summaries:
        by_scene.setdefault(s["name"], {})[s["variant"]] = s
    sizes = sorted({s["size"] for s in summaries})
    ranks = sorted({s["ranks"] for s in summaries})
    lines = [
        "# Reproducing the papers",
        "",
        "Intact implements five papers. This page puts their own experiments, rebuilt as Intact scenes in "
        "`inputs/papers/`, beside the figures the papers report. The papers' figures are typed from the papers "
        "(the citation names the table and row); ours are read from each run's `metrics.jsonl` and output "
        "by `drivers/reproduce.py`, which wrote this page:",
        "",
        "```bash",
        command,
        "```",
        "",
        f"Size: `{', '.join(sizes)}` (the scene files as committed are sized for a 2-core machine; "
        "`--set full` gives the papers' sizes, for a cluster: `slurm/reproduce_papers.sbatch`). "
        f"Ranks: {', '.join(map(str, ranks))}. Our meshes are much smaller than the papers', so counts of "
        "contacts and time per step are not comparable; iterations per step are the closest comparison.",
        "",
        "Columns: *iterations / step* are Newton iterations (all inner iterations of `al`'s and `bal`'s outer "
        "loops; sweeps for stencil descent), average (peak); *CG / solve* is linear iterations per Newton "
        "iteration; *contacts* are contact pairs per step, average (peak). *Paper's method* is the method the "
        "paper used (`al`, `bal`, `stencil_descent`, `ipc`, or the `a_search` integrator); *default* is Intact's "
        "default (`ipc` with implicit Euler). Ratios are ours / paper's.",
        "",
        "A step whose result fails Intact's step certificate (force balance, energy) with the paper's method is "
        "solved again from its start with `ipc`; the *steps repaired by ipc* column counts them, and their "
        "iterations include both solves; *alone* gives the paper's method's own iterations (in a repaired "
        "step, those before the repair), the figure to set beside the paper's. Times depend on the machine and "
        "are not shown; the runs here shared 2 cores with other work, so iteration counts are the figures to "
        "compare.",
        "",
        "Not reproduced here: the hard twisting-cloth row, the barrier-free AL paper's twisting rods, and the "
        "scenes that need the papers' large meshes.",
        "",
        "## Iterations",
        "",
        "| scene | paper, row | nodes (paper) | iterations / step: paper | ours, paper's method | ratio "
        "| ours, default | ratio | CG / solve: paper | ours | contacts: paper | ours |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name, entry in catalogue.items():
        runs = by_scene.get(name)
        if not runs:
            continue
        paper = entry["paper_figures"]
        m, d = runs.get("method") or runs.get("default"), runs.get("default") or runs.get("method")
        nodes = f"{m.get('nodes', '–')} ({paper['vertices']})" if paper.get("vertices") else str(m.get("nodes", "–"))
        cg = f"{m['cg']:.1f}" if m.get("cg") is not None else "–"
        alone = f"; alone {figure(m['method_alone'])}" if m.get("method_alone") else ""
        alone_ratio = f"; alone {ratio(m['method_alone'], paper.get('newton'))}" \
            if m.get("method_alone") and paper.get("newton") else ""
        lines.append(
            f"| {name} | {entry['paper']}: {entry['citation']} | {nodes} | {figure(paper.get('newton'), 2)} "
            f"| {figure(m.get('newton'))}{alone} | {ratio(m.get('newton'), paper.get('newton'))}{alone_ratio} "
            f"| {figure(d.get('newton'))} | {ratio(d.get('newton'), paper.get('newton'))} "
            f"| {figure(paper.get('cg'))} | {cg} | {figure(paper.get('contacts'))} | {figure(m.get('contacts'))} |")
    lines += [
        "",
        "## Outcomes",
        "",
        "| scene | paper's outcome | ours, paper's method | ours, default | total energy, start → end (paper's method) "
        "| steps not converged | steps repaired by ipc | `intact check` | differs by >2× or in outcome: why |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name, entry in catalogue.items():
        runs = by_scene.get(name)
        if not runs:
            continue
        m, d = runs.get("method") or runs.get("default"), runs.get("default") or runs.get("method")

        energy = "–"
        if m.get("energy_start") is not None and m.get("energy_end") is not None:
            e0, e1 = m["energy_start"], m["energy_end"]
            energy = f"{e0:.3g} → {e1:.3g} J" + (f" ({(e1 - e0) / abs(e0):+.1%})" if abs(e0) > 1e-6 else "")
        failed = f"{m.get('not_converged', '–')} / {d.get('not_converged', '–')}"
        repaired = f"{m.get('repaired', '–')} / {d.get('repaired', '–')}"
        checks = f"{m.get('check', '–')} / {d.get('check', '–')}"
        lines.append(f"| {name} | {entry['paper_figures'].get('outcome', '–')} | {said(m)} | {said(d)} | {energy} "
                     f"| {failed} | {repaired} | {checks} | {explain(entry, runs)} |")
    lines += ["", "In the last columns, *a / b* is paper's method / default. *measured* names a probe: the "
              "paper's method (or the default) run again with one setting changed, which measures the cause of "
              "a difference."]
    lines += ["", "## Final states", "",
              f"The last frame of each run with the paper's method, coloured by body ({PICTURE_SIZE}, "
              "rendered headless by `drivers/intact_render.sh`).", "",
              "| | |", "|---|---|"]
    cells = []
    for name, entry in catalogue.items():
        runs = by_scene.get(name)
        if not runs:
            continue
        m = runs.get("method") or runs.get("default")
        link, why = render(name, m, page)
        t = f", t = {m['end_time']:g} s" if m.get("end_time") is not None else ""
        caption = f"{name} (paper's method{t})"
        cells.append(f"![{name}]({link})<br>{caption}" if link else f"{caption}: {why}")
    cells += [""] * (len(cells) % 2)
    lines += [f"| {a} | {b} |" for a, b in zip(cells[::2], cells[1::2])]
    Path(page).write_text("\n".join(lines) + "\n")
    print(f"wrote {page} ({len(by_scene)} scenes)")


def collect(directory):
    """The runs' summaries; figures are read again from each run's output when it is still there."""
    catalogue = {e["name"]: e for e in load_catalogue()}
    summaries = []
    for path in sorted(Path(directory).glob("*/*/summary.json")):
        stored = json.loads(path.read_text())
        if stored.get("name") in catalogue and (path.parent / "metrics.jsonl").is_file():
            fresh = summarise(catalogue[stored["name"]], path.parent, stored["wall_seconds"], stored["rc"])
            stored.update(fresh)
        stored["output"] = str(path.parent)
        summaries.append(stored)
    if not summaries:
        raise ReproduceError(f"'{directory}': no NAME/VARIANT/summary.json; fix: run reproduce.py --results "
                             f"{directory} first")
    return summaries


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", dest="size", choices=("small", "full", "tiny"), default="small")
    parser.add_argument("--only", help="comma-separated scene names (drivers/papers/catalogue.json)")
    parser.add_argument("--np", type=int, default=1, help="MPI ranks per run")
    parser.add_argument("--mpiexec", default=None, help="launcher, e.g. 'mpirun --oversubscribe' or srun")
    parser.add_argument("--intact", default=str(ROOT / "build/drivers/intact"), help="the intact binary")
    parser.add_argument("--results", default=str(ROOT / "build/reproduction"), help="folder of the runs")
    parser.add_argument("--page", default=str(ROOT / "docs/reproduction.md"))
    parser.add_argument("--no-page", action="store_true", help="run only (an array task)")
    parser.add_argument("--check", action="store_true", help="pass every output through `intact check`")
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds per run")
    parser.add_argument("--collect", metavar="DIR", help="write the page from DIR's summaries; run nothing")
    args = parser.parse_args(argv)
    try:
        if args.collect:
            summaries = collect(args.collect)
            first = summaries[0]
            shown = ["--set", first["size"], "--np", str(first["ranks"])]
            shown += ["--check"] if any("check" in s for s in summaries) else []
            write_page(summaries, args.page, "drivers/reproduce.py " + " ".join(shown))
            return 0
        if args.np > 1 and not args.mpiexec:
            args.mpiexec = "mpirun --oversubscribe"
        if not Path(args.intact).is_file():
            raise ReproduceError(f"'{args.intact}' not found; fix: build it (cmake --build build --target "
                                 "intact) or give --intact PATH")
        scenes = load_catalogue()
        if args.only:
            wanted = args.only.split(",")
            unknown = [w for w in wanted if w not in {e["name"] for e in scenes}]
            if unknown:
                raise ReproduceError(f"--only: no scene {', '.join(unknown)} in '{CATALOGUE}'; fix: use one of "
                                     + ", ".join(e["name"] for e in scenes))
            scenes = [e for e in scenes if e["name"] in wanted]
        summaries, ok = [], True
        for entry in scenes:
            for variant in variants(entry):
                s = run_one(entry, variant, args.size, args)
                ok = ok and s["rc"] == 0 and s.get("check", "clean") == "clean"
                summaries.append(s)
        if not args.no_page:
            shown = ["--set", args.size, "--np", str(args.np)] + (["--check"] if args.check else [])
            write_page(summaries, args.page,
                       "drivers/reproduce.py " + " ".join(shown))
        return 0 if ok else 1
    except ReproduceError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
