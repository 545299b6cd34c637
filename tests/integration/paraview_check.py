"""Open an Intact output folder in ParaView, check what a user would see, render the last frame.

    bash tests/integration/paraview.sh tests/integration/paraview_check.py OUTPUT_DIR
        [--steps N] [--nodes N] [--cells N] [--ranks N] [--obstacles N] [--png FILE] [--size WxH]
        [--title TEXT]

Run by pvbatch (ParaView 5.11's Python); tests/integration/paraview.sh sets that up.
Checks, on OUTPUT_DIR/intact.pvd as ParaView's own PVD reader loads it:
  - the number of time steps (--steps; default: not checked);
  - at the last time step: the cell count (--cells, default: "elements" in metrics.jsonl), the
    point count (at least the node count; interface nodes appear once per rank piece) and the
    number of distinct point global_ids (--nodes, default: "nodes" in metrics.jsonl);
  - point arrays displacement and velocity (3 components, finite, something moved), cell arrays
    rank and body (1 component); rank covers 0..ranks-1 (--ranks, default: "ranks" in
    metrics.jsonl), body covers 0..bodies-1 (bodies from scene.resolved.json);
  - when the series has obstacles (part 1 of every step, the second block ParaView shows), at every
    time step: one cell array `obstacle`, the cells of every obstacle of scene.resolved.json, and
    their points where the scene puts them: mesh vertices read from the .obj, placed by scale,
    rotate_deg and translate, then moved rigidly (c + v t + R(w t)(x - c)) to within 1e-9 m; plane
    squares on the plane placed and moved likewise. --obstacles N requires N obstacles.
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
from vtkmodules.vtkFiltersCore import vtkAppendFilter
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


def merged(data):
    """One unstructured grid of all leaves of a (possibly composite) data set."""
    if not data.IsA("vtkCompositeDataSet"):
        return data
    append = vtkAppendFilter()
    iterator = data.NewIterator()
    iterator.InitTraversal()
    while not iterator.IsDoneWithTraversal():
        append.AddInputData(iterator.GetCurrentDataObject())
        iterator.GoToNextItem()
    append.Update()
    return append.GetOutput()


def split_blocks(data):
    """(bodies, obstacles or None): the .pvd's part 0 and part 1 as ParaView loads them."""
    if data.IsA("vtkMultiBlockDataSet") and data.GetNumberOfBlocks() == 2:
        return merged(data.GetBlock(0)), merged(data.GetBlock(1))
    return merged(data), None


def euler(p, degrees):
    """R = Rz Ry Rx applied to p (Intact's rotate_deg)."""
    ax, ay, az = (math.radians(d) for d in degrees)
    x, y, z = p
    y, z = math.cos(ax) * y - math.sin(ax) * z, math.sin(ax) * y + math.cos(ax) * z
    x, z = math.cos(ay) * x + math.sin(ay) * z, -math.sin(ay) * x + math.cos(ay) * z
    x, y = math.cos(az) * x - math.sin(az) * y, math.sin(az) * x + math.cos(az) * y
    return [x, y, z]


def placed(p, obstacle):
    scale = obstacle.get("scale", 1.0)
    scale = [scale] * 3 if isinstance(scale, (int, float)) else scale
    q = euler([p[i] * scale[i] for i in range(3)], obstacle.get("rotate_deg", [0, 0, 0]))
    t = obstacle.get("translate", [0, 0, 0])
    return [q[i] + t[i] for i in range(3)]


def moved(p, obstacle, time):
    """Rodrigues: c + v t + R(w t)(p - c); p + v t without rotation."""
    v = obstacle.get("velocity", [0, 0, 0])
    w = obstacle.get("angular_velocity", [0, 0, 0])
    c = obstacle.get("center", [0, 0, 0])
    angle = math.sqrt(sum(x * x for x in w)) * time
    if angle == 0.0:
        return [p[i] + v[i] * time for i in range(3)]
    k = [x * time / angle for x in w]
    r = [p[i] - c[i] for i in range(3)]
    kxr = [k[1] * r[2] - k[2] * r[1], k[2] * r[0] - k[0] * r[2], k[0] * r[1] - k[1] * r[0]]
    kdr = sum(k[i] * r[i] for i in range(3))
    rot = [r[i] * math.cos(angle) + kxr[i] * math.sin(angle) + k[i] * kdr * (1 - math.cos(angle))
           for i in range(3)]
    return [c[i] + v[i] * time + rot[i] for i in range(3)]


def obj_vertices(path):
    return [[float(x) for x in line.split()[1:4]] for line in Path(path).read_text().splitlines()
            if line.startswith("v ")]


def check_obstacles(grid, scene, time):
    """The obstacle block at `time` against the scene's placement and rigid motion."""
    ids = array_values(grid, "cell", "obstacle", 1)
    if ids is None:
        return
    obstacles = scene.get("obstacles", [])
    points = vtk_to_numpy(grid.GetPoints().GetData())
    of = {}
    for cell in range(grid.GetNumberOfCells()):
        pts = grid.GetCell(cell).GetPointIds()
        of.setdefault(int(ids[cell]), set()).update(pts.GetId(j) for j in range(pts.GetNumberOfIds()))
    check(sorted(of) == list(range(len(obstacles))),
          f"cells of obstacles 0..{len(obstacles) - 1} at t = {time:g}, found {sorted(of)}")
    worst = 0.0
    for k, obstacle in enumerate(obstacles):
        mine = sorted(of.get(k, []))
        if "mesh" in obstacle:
            rest = obj_vertices(obstacle["mesh"]["file"])
            if not check(len(mine) == len(rest), f"{len(rest)} points of obstacles[{k}], found {len(mine)}"):
                continue
            for p, x in zip(mine, rest):
                expected = moved(placed(x, obstacle), obstacle, time)
                worst = max(worst, max(abs(points[p][i] - expected[i]) for i in range(3)))
        else:
            point = moved(placed(obstacle["plane"]["point"], obstacle), obstacle, time)
            n = euler([obstacle["plane"]["normal"][i] / (obstacle.get("scale", [1, 1, 1])[i]
                       if isinstance(obstacle.get("scale", 1.0), list) else obstacle.get("scale", 1.0))
                       for i in range(3)], obstacle.get("rotate_deg", [0, 0, 0]))
            length = math.sqrt(sum(x * x for x in n))
            for p in mine:
                worst = max(worst, abs(sum((points[p][i] - point[i]) * n[i] for i in range(3))) / length)
    print(f"  obstacles at t = {time:g}: {len(obstacles)}, largest distance from their place {worst:.3g} m")
    check(worst < 1e-9, f"obstacles where the scene puts them at t = {time:g} (1e-9 m), "
          f"found {worst:.3g} m off")


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


def render(reader, time, data, scene, ranks, png, size, title, draw_planes):
    """The last frame coloured by rank, with edges, obstacle planes (drawn here for a series without
    its own obstacle block), a legend and a title."""
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
    for obstacle in scene.get("obstacles", []) if draw_planes else []:
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
    parser.add_argument("--obstacles", type=int, help="expected obstacles shown at every time step")
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
    obstacle_frames = 0
    for time in times:
        reader.UpdatePipeline(time)
        bodies, obstacles = split_blocks(servermanager.Fetch(reader))
        if obstacles is not None:
            obstacle_frames += 1
            check_obstacles(obstacles, scene, time)
    if args.obstacles is not None:
        check(obstacle_frames == len(times) and len(scene.get("obstacles", [])) == args.obstacles,
              f"{args.obstacles} obstacles at each of {len(times)} time steps, found "
              f"{len(scene.get('obstacles', []))} obstacles at {obstacle_frames}")
    reader.UpdatePipeline(times[-1])
    data, _ = split_blocks(servermanager.Fetch(reader))
    check_data(data, expected)

    if args.png:
        width, height = (int(v) for v in args.size.lower().split("x"))
        title = f"{args.title or out.name}: t = {times[-1]:g} s, {expected['ranks']} ranks"
        args.png.parent.mkdir(parents=True, exist_ok=True)
        render(reader, times[-1], data, scene, max(expected["ranks"], 1), args.png,
               [width, height], title, obstacle_frames == 0)

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
