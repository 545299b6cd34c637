"""Open an Intact output folder in ParaView, check what a user would see, render the last frame.

    bash tests/integration/paraview.sh tests/integration/paraview_check.py OUTPUT_DIR
        [--steps N] [--nodes N] [--cells N] [--ranks N] [--png FILE] [--size WxH] [--title TEXT]

Run by pvbatch (ParaView 5.11's Python); tests/integration/paraview.sh sets that up.
Checks, on OUTPUT_DIR/intact.pvd as ParaView's own PVD reader loads it:
  - the number of time steps (--steps; default: not checked);
  - at the last time step: the cell count (--cells, default: "elements" in metrics.jsonl), the
    point count (at least the node count; interface nodes appear once per rank piece) and the
    number of distinct point global_ids (--nodes, default: "nodes" in metrics.jsonl);
  - point arrays displacement and velocity (3 components, finite, something moved), cell arrays
    rank and body (1 component); rank covers 0..ranks-1 (--ranks, default: "ranks" in
    metrics.jsonl), body covers 0..bodies-1 (bodies from scene.resolved.json).
With --png, renders the last frame coloured by rank, with the mesh edges, the scene's obstacle
planes, a rank legend and a title, and checks that the picture shows the mesh.
Every failed check prints one line "FAIL: expected <what>, found <what>"; exit status 1 if any failed.
"""

import argparse
import json
import math
import os
import sys
from pathlib import Path

from paraview import servermanager
from paraview.simple import (ColorBy, GetColorTransferFunction, GetScalarBar, Plane, PVDReader,
                             Render, SaveScreenshot, Show, Text, CreateView)
from vtkmodules.util.numpy_support import vtk_to_numpy
from vtkmodules.vtkIOImage import vtkPNGReader

failures = []


def check(condition, message):
    """Record a failed check; message says what was expected and what was found."""
    if not condition:
        failures.append(message)
        print(f"FAIL: expected {message}", flush=True)
    return condition


def read_output_info(out):
    """The last metrics.jsonl record and scene.resolved.json of a run (empty dicts if absent)."""
    metrics, scene = {}, {}
    lines = [l for l in (out / "metrics.jsonl").read_text().splitlines() if l.strip()] \
        if (out / "metrics.jsonl").is_file() else []
    if check(lines, f"records in {out / 'metrics.jsonl'}, found none"):
        metrics = json.loads(lines[-1])
    if check((out / "scene.resolved.json").is_file(),
             f"{out / 'scene.resolved.json'}, found no such file"):
        scene = json.loads((out / "scene.resolved.json").read_text())
    return metrics, scene


def array_values(data, association, name, components):
    """The named array as a numpy array, or None (with a failure) if absent or misshapen."""
    arrays = data.GetPointData() if association == "point" else data.GetCellData()
    array = arrays.GetArray(name)
    if not check(array is not None, f"a {association} array '{name}', found {association} arrays "
                 f"{sorted(arrays.GetArrayName(i) for i in range(arrays.GetNumberOfArrays()))}"):
        return None
    if not check(array.GetNumberOfComponents() == components,
                 f"{association} array '{name}' with {components} component(s), found "
                 f"{array.GetNumberOfComponents()}"):
        return None
    return vtk_to_numpy(array)


def check_data(data, expected):
    """The counts and arrays of the last frame."""
    cells, points = data.GetNumberOfCells(), data.GetNumberOfPoints()
    print(f"last frame: {points} points, {cells} cells")
    check(cells == expected["cells"], f"{expected['cells']} cells, found {cells}")
    check(points >= expected["nodes"], f"at least {expected['nodes']} points, found {points}")
    ids = array_values(data, "point", "global_id", 1)
    if ids is not None:
        distinct = len(set(ids.tolist()))
        check(distinct == expected["nodes"], f"{expected['nodes']} distinct point global_ids "
              f"(scene nodes), found {distinct}")
    for name in ("displacement", "velocity"):
        values = array_values(data, "point", name, 3)
        if values is None:
            continue
        largest = float(abs(values).max()) if len(values) else 0.0
        print(f"  {name}: largest component {largest:.6g}")
        check(math.isfinite(largest), f"finite {name}, found {largest}")
        check(largest > 0.0, f"a non-zero {name} at the last step (the bodies fall), found 0")
    for name, count in (("rank", expected["ranks"]), ("body", expected["bodies"])):
        values = array_values(data, "cell", name, 1)
        if values is None:
            continue
        found = sorted(set(int(v) for v in values))
        print(f"  {name}: values {found}")
        check(found == list(range(count)), f"cell array '{name}' with values 0..{count - 1}, "
              f"found {found}")


def plane_corners(point, normal, center, half):
    """Origin, Point1, Point2 of a square of side 2*half on the plane, centred near center."""
    n = [c / math.sqrt(sum(x * x for x in normal)) for c in normal]
    offset = sum((center[i] - point[i]) * n[i] for i in range(3))
    mid = [center[i] - offset * n[i] for i in range(3)]
    helper = [1.0, 0.0, 0.0] if abs(n[0]) < 0.9 else [0.0, 1.0, 0.0]
    u = [n[1] * helper[2] - n[2] * helper[1], n[2] * helper[0] - n[0] * helper[2],
         n[0] * helper[1] - n[1] * helper[0]]
    norm = math.sqrt(sum(x * x for x in u))
    u = [x / norm for x in u]
    v = [n[1] * u[2] - n[2] * u[1], n[2] * u[0] - n[0] * u[2], n[0] * u[1] - n[1] * u[0]]
    origin = [mid[i] - half * (u[i] + v[i]) for i in range(3)]
    return origin, [origin[i] + 2 * half * u[i] for i in range(3)], \
        [origin[i] + 2 * half * v[i] for i in range(3)]


def render(reader, time, data, scene, ranks, png, size, title):
    """The last frame coloured by rank, with edges, obstacle planes, a legend and a title."""
    view = CreateView("RenderView")
    view.ViewSize = size
    view.ViewTime = time
    view.OrientationAxesVisibility = 0
    view.Background = [1.0, 1.0, 1.0]
    if hasattr(view, "UseColorPaletteForBackground"):
        view.UseColorPaletteForBackground = 0

    bounds = data.GetBounds()
    center = [(bounds[2 * i] + bounds[2 * i + 1]) / 2 for i in range(3)]
    extent = max(bounds[2 * i + 1] - bounds[2 * i] for i in range(3))
    for obstacle in scene.get("obstacles", []):
        plane = obstacle.get("plane")
        if not plane:
            continue
        origin, p1, p2 = plane_corners(plane["point"], plane["normal"], center, 0.9 * extent)
        shown = Show(Plane(Origin=origin, Point1=p1, Point2=p2, XResolution=8, YResolution=8), view)
        shown.DiffuseColor = [0.78, 0.78, 0.75]
        shown.AmbientColor = [0.78, 0.78, 0.75]
        shown.SetRepresentationType("Surface With Edges")
        shown.EdgeColor = [0.6, 0.6, 0.58]

    mesh = Show(reader, view)
    mesh.SetRepresentationType("Surface With Edges")
    mesh.EdgeColor = [0.15, 0.15, 0.15]
    ColorBy(mesh, ("CELLS", "rank"))
    lut = GetColorTransferFunction("rank")
    lut.InterpretValuesAsCategories = 1
    lut.ApplyPreset("Brewer Qualitative Set1" if ranks <= 9 else "Rainbow Uniform", True)
    lut.Annotations = [x for r in range(ranks) for x in (str(r), f"rank {r}")]
    lut.IndexedColors = lut.IndexedColors[:3 * ranks] if len(lut.IndexedColors) >= 3 * ranks \
        else lut.IndexedColors
    mesh.SetScalarBarVisibility(view, True)
    bar = GetScalarBar(lut, view)
    bar.Title = "MPI rank"
    bar.ComponentTitle = ""
    bar.TitleColor = bar.LabelColor = [0.1, 0.1, 0.1]
    bar.TitleFontSize = bar.LabelFontSize = 18
    bar.WindowLocation = "Upper Right Corner"

    label = Show(Text(Text=title), view)
    label.WindowLocation = "Upper Left Corner"
    label.FontSize = 20
    label.Color = [0.1, 0.1, 0.1]

    camera = view.GetActiveCamera()
    camera.SetFocalPoint(center[0], center[1], center[2] - 0.15 * extent)
    camera.SetPosition(center[0] + 1.6 * extent, center[1] - 2.6 * extent,
                       center[2] + 1.4 * extent)
    camera.SetViewUp(0.0, 0.0, 1.0)
    view.ResetCamera(False)
    camera.Dolly(1.25)
    Render(view)
    SaveScreenshot(str(png), view, ImageResolution=size)

    # The picture must show the mesh: enough pixels differ from the white background.
    image = vtkPNGReader()
    image.SetFileName(str(png))
    image.Update()
    pixels = vtk_to_numpy(image.GetOutput().GetPointData().GetScalars())[:, :3]
    drawn = int((pixels.min(axis=1) < 240).sum())
    print(f"wrote {png}: {size[0]}x{size[1]}, {drawn} non-background pixels")
    check(drawn > 0.01 * size[0] * size[1],
          f"a picture showing the mesh (over 1% non-background pixels), found {drawn} pixels")


def main():
    summary, _, details = __doc__.partition("\n\n")
    parser = argparse.ArgumentParser(description=summary, epilog=details,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("output", type=Path, help="an intact output folder (holds intact.pvd)")
    parser.add_argument("--steps", type=int, help="expected number of time steps in intact.pvd")
    parser.add_argument("--nodes", type=int, help="expected distinct nodes (default: metrics)")
    parser.add_argument("--cells", type=int, help="expected cells (default: metrics)")
    parser.add_argument("--ranks", type=int, help="expected ranks (default: metrics)")
    parser.add_argument("--png", type=Path, help="render the last frame coloured by rank here")
    parser.add_argument("--size", default="1200x800", help="picture size WxH (default: 1200x800)")
    parser.add_argument("--title", help="picture title, followed by the time and the ranks "
                        "(default: the output folder's name)")
    args = parser.parse_args()

    out = args.output.resolve()
    pvd = out / "intact.pvd"
    if not pvd.is_file():
        print(f"FAIL: expected {pvd}, found no such file")
        return 1
    metrics, scene = read_output_info(out)
    expected = {"nodes": args.nodes or metrics.get("nodes", -1),
                "cells": args.cells or metrics.get("elements", -1),
                "ranks": args.ranks or metrics.get("ranks", -1),
                "bodies": len(scene.get("bodies", []))}
    print(f"{pvd}: expecting {expected}")

    reader = PVDReader(FileName=str(pvd))
    times = list(reader.TimestepValues) if reader.TimestepValues else []
    if isinstance(reader.TimestepValues, float):
        times = [reader.TimestepValues]
    print(f"time steps: {len(times)} ({', '.join(f'{t:g}' for t in times)})")
    if args.steps is not None:
        check(len(times) == args.steps, f"{args.steps} time steps, found {len(times)}")
    if not check(times, "at least one time step, found none"):
        return 1
    reader.UpdatePipeline(times[-1])
    data = servermanager.Fetch(reader)
    check_data(data, expected)

    if args.png:
        width, height = (int(v) for v in args.size.lower().split("x"))
        title = f"{args.title or out.name}: t = {times[-1]:g} s, {expected['ranks']} ranks"
        args.png.parent.mkdir(parents=True, exist_ok=True)
        render(reader, times[-1], data, scene, max(expected["ranks"], 1), args.png,
               [width, height], title)

    if failures:
        print(f"{len(failures)} check(s) failed for {pvd}")
        return 1
    print(f"all checks passed for {pvd}")
    return 0


if __name__ == "__main__":
    status = main()
    sys.stdout.flush()
    # Leave without ParaView's teardown: under Xvfb, Debian's pvbatch can abort with GLXBadContext
    # while destroying the render window, after the picture is written, which would mask status.
    os._exit(status)
