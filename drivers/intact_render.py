"""Render an Intact output folder: one frame as a PNG, or every frame as a movie (run by pvbatch).

    intact-render OUT [--frame N] [--color rank|body|speed|displacement] [--png FILE | --movie TARGET]
                      [--size WxH] [--fps N] [--title TEXT]

Started by drivers/intact_render.sh (installed as `intact-render`), which checks the arguments and sets up
ParaView. The bodies are drawn with their mesh edges, coloured by the MPI rank or the body (one colour per
value, with a legend naming the ranks or the bodies' scene names; beyond 12, a colour scale of the index) or
by the magnitude of the velocity or the displacement (a colour bar); obstacles are translucent grey. A movie
uses one camera and one colour range for all frames.
"""

import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
from xml.etree import ElementTree
from pathlib import Path

from paraview import servermanager
from paraview.simple import (ColorBy, CreateView, GetColorTransferFunction, GetScalarBar, PVDReader,
                             Render, SaveScreenshot, Show, Text)
from vtkmodules.vtkIOImage import vtkPNGReader

COLORS = {  # --color: (association, array, component, legend title)
    "rank": ("CELLS", "rank", None, "MPI rank"),
    "body": ("CELLS", "body", None, "body"),
    "speed": ("POINTS", "velocity", "Magnitude", "speed (m/s)"),
    "displacement": ("POINTS", "displacement", "Magnitude", "displacement (m)"),
}


def fail(message):
    print(f"[intact-render] error: {message}", file=sys.stderr, flush=True)
    return 1


def split_series(pvd, folder):
    """Two series files in `folder` (a temporary one), bodies.pvd (part 0 of `pvd`) and obstacles.pvd (part
    1; None when the run wrote no obstacles), whose entries name the step files by absolute path, so that
    the bodies and the obstacles are drawn differently (the obstacles translucent)."""
    tree = ElementTree.parse(pvd)
    collection = tree.getroot().find("Collection")
    written = {}
    for part, name in (("0", "bodies.pvd"), ("1", "obstacles.pvd")):
        root = ElementTree.Element("VTKFile", tree.getroot().attrib)
        entries = ElementTree.SubElement(root, "Collection")
        for entry in collection.findall("DataSet"):
            if entry.get("part", "0") == part:
                copy = dict(entry.attrib, part="0", file=str((pvd.parent / entry.get("file")).resolve()))
                ElementTree.SubElement(entries, "DataSet", copy)
        if len(entries):
            ElementTree.ElementTree(root).write(folder / name, xml_declaration=True)
            written[part] = folder / name
    return written.get("0"), written.get("1")


def leaves(data):
    """The non-composite data sets under `data`."""
    if not data.IsA("vtkCompositeDataSet"):
        return [data]
    found = []
    iterator = data.NewIterator()
    iterator.InitTraversal()
    while not iterator.IsDoneWithTraversal():
        found.append(iterator.GetCurrentDataObject())
        iterator.GoToNextItem()
    return found


def frame_extent(reader, time, color):
    """(bounds of the bodies, (min, max) of the coloured quantity, distinct values) at `time`."""
    reader.UpdatePipeline(time)
    association, name, component, _ = COLORS[color]
    bounds = [math.inf, -math.inf] * 3
    low, high, values = math.inf, -math.inf, set()
    for leaf in leaves(servermanager.Fetch(reader)):
        if leaf.GetNumberOfPoints() == 0:
            continue
        b = leaf.GetBounds()
        for i in range(3):
            bounds[2 * i] = min(bounds[2 * i], b[2 * i])
            bounds[2 * i + 1] = max(bounds[2 * i + 1], b[2 * i + 1])
        arrays = leaf.GetPointData() if association == "POINTS" else leaf.GetCellData()
        array = arrays.GetArray(name)
        if array is None:
            continue
        r = array.GetRange(-1 if component else 0)
        low, high = min(low, r[0]), max(high, r[1])
        if component is None:
            values.update(int(array.GetTuple1(i)) for i in range(array.GetNumberOfTuples()))
    return bounds, (low, high), values


def merge_extents(extents):
    bounds = [math.inf, -math.inf] * 3
    low, high, values = math.inf, -math.inf, set()
    for b, (lo, hi), v in extents:
        for i in range(3):
            bounds[2 * i] = min(bounds[2 * i], b[2 * i])
            bounds[2 * i + 1] = max(bounds[2 * i + 1], b[2 * i + 1])
        low, high = min(low, lo), max(high, hi)
        values |= v
    return bounds, (low, high), values


def make_view(reader, obstacles, args, size, bounds, value_range, values, names):
    """A render view with the bodies coloured, the obstacles translucent grey, framed on the bodies; returns
    (view, title text source)."""
    view = CreateView("RenderView")
    view.ViewSize = size
    view.OrientationAxesVisibility = 0
    view.Background = [1.0, 1.0, 1.0]
    if hasattr(view, "UseColorPaletteForBackground"):
        view.UseColorPaletteForBackground = 0

    if obstacles is not None:
        grey = Show(obstacles, view)
        grey.ColorArrayName = [None, ""]
        grey.SetRepresentationType("Surface With Edges")
        grey.DiffuseColor = grey.AmbientColor = [0.72, 0.72, 0.70]
        grey.EdgeColor = [0.55, 0.55, 0.53]
        grey.Opacity = 0.35  # the bodies show through planes and meshes that hide them
    association, name, component, legend = COLORS[args.color]
    shown = Show(reader, view)
    shown.SetRepresentationType("Surface With Edges")
    shown.EdgeColor = [0.15, 0.15, 0.15]
    ColorBy(shown, (association, name, component) if component else (association, name))
    lut = GetColorTransferFunction(name)
    count = max(values) + 1 if component is None and values else 1
    if component is None and count > 12:
        # Too many to name in a legend: a colour scale of the index (bodies[i], or the rank).
        lut.ApplyPreset("Rainbow Uniform", True)
        lut.RescaleTransferFunction(0.0, float(count - 1))
        lut.AutomaticRescaleRangeMode = "Never"
        legend += " (index)"
    elif component is None:
        lut.InterpretValuesAsCategories = 1
        lut.ApplyPreset("Brewer Qualitative Set1" if count <= 9 else "Rainbow Uniform", True)
        label = (lambda v: f"rank {v}") if args.color == "rank" else \
            (lambda v: names[v] if v < len(names) else f"bodies[{v}]")
        lut.Annotations = [x for v in range(count) for x in (str(v), label(v))]
        if len(lut.IndexedColors) >= 3 * count:
            lut.IndexedColors = lut.IndexedColors[:3 * count]
    else:
        low, high = value_range
        if not (math.isfinite(low) and math.isfinite(high)) or high <= low:
            low, high = 0.0, max(high, 0.0) + 1e-12
        lut.ApplyPreset("Viridis (matplotlib)", True)
        lut.RescaleTransferFunction(low, high)
        lut.AutomaticRescaleRangeMode = "Never"
    shown.SetScalarBarVisibility(view, True)
    bar = GetScalarBar(lut, view)
    bar.Title = legend
    bar.ComponentTitle = ""
    bar.TitleColor = bar.LabelColor = [0.1, 0.1, 0.1]
    bar.TitleFontSize = bar.LabelFontSize = 18
    bar.WindowLocation = "Upper Right Corner"

    title = Text(Text="")
    label = Show(title, view)
    label.WindowLocation = "Upper Left Corner"
    label.FontSize = 20
    label.Color = [0.1, 0.1, 0.1]

    center = [(bounds[2 * i] + bounds[2 * i + 1]) / 2 for i in range(3)]
    extent = max(max(bounds[2 * i + 1] - bounds[2 * i] for i in range(3)), 1e-9)
    camera = view.GetActiveCamera()
    camera.SetFocalPoint(center[0], center[1], center[2] - 0.15 * extent)
    camera.SetPosition(center[0] + 1.6 * extent, center[1] - 2.6 * extent, center[2] + 1.4 * extent)
    camera.SetViewUp(0.0, 0.0, 1.0)
    view.ResetCamera(bounds, False)  # the bodies fill the picture, not the (larger) obstacles
    camera.Dolly(1.5)
    return view, title


def draw(view, title, reader, time, heading, path, size):
    view.ViewTime = time
    title.Text = f"{heading}: t = {time:g} s"
    Render(view)
    SaveScreenshot(str(path), view, ImageResolution=size)


def encode(frames, target, fps):
    """Frames (PNG paths, all one size) into target: .ogv (Theora) or .avi (MJPEG) with VTK's writers, .mp4
    with the ffmpeg program."""
    if target.suffix == ".mp4":
        pattern = str(frames[0].parent / "frame_%05d.png")
        subprocess.run(["ffmpeg", "-loglevel", "error", "-y", "-framerate", str(fps), "-i", pattern,
                        "-vf", "pad=ceil(iw/2)*2:ceil(ih/2)*2", "-c:v", "libx264", "-pix_fmt", "yuv420p",
                        str(target)], check=True)
        return
    if target.suffix == ".ogv":
        from vtkmodules.vtkIOOggTheora import vtkOggTheoraWriter
        writer = vtkOggTheoraWriter()
        writer.SetQuality(2)
    else:
        from vtkmodules.vtkIOFFMPEG import vtkFFMPEGWriter
        writer = vtkFFMPEGWriter()
        writer.SetQuality(2)
    image = vtkPNGReader()
    image.SetFileName(str(frames[0]))
    image.Update()
    writer.SetInputConnection(image.GetOutputPort())
    writer.SetFileName(str(target))
    writer.SetRate(fps)
    writer.Start()
    for frame in frames:
        image.SetFileName(str(frame))
        image.Modified()
        writer.Write()
    writer.End()
    if writer.GetError():
        raise RuntimeError(f"the movie writer failed on {target}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.partition("\n\n")[0])
    parser.add_argument("output", type=Path)
    parser.add_argument("--frame", type=int, required=True)
    parser.add_argument("--color", choices=sorted(COLORS), default="rank")
    parser.add_argument("--png", type=Path)
    parser.add_argument("--movie", type=Path)
    parser.add_argument("--size", default="1200x800")
    parser.add_argument("--fps", type=int, default=10)
    parser.add_argument("--title")
    args = parser.parse_args()

    out = args.output.resolve()
    scene_file = out / "scene.resolved.json"
    scene = json.loads(scene_file.read_text()) if scene_file.is_file() else {}
    names = [b.get("name", f"bodies[{i}]") for i, b in enumerate(scene.get("bodies", []))]

    series = Path(tempfile.mkdtemp(prefix="intact-render-series-"))
    try:
        return render(args, out, series, names)
    finally:
        shutil.rmtree(series, ignore_errors=True)


def render(args, out, series, names):
    size = [int(v) for v in args.size.lower().split("x")]
    bodies, obstacle_series = split_series(out / "intact.pvd", series)
    if bodies is None:
        return fail(f"{out / 'intact.pvd'} lists no bodies (part 0); fix: give a folder `intact run` wrote")
    reader = PVDReader(FileName=str(bodies))
    obstacles = PVDReader(FileName=str(obstacle_series)) if obstacle_series else None
    times = reader.TimestepValues
    times = [times] if isinstance(times, float) else list(times or [0.0])
    if not 0 <= args.frame < len(times):
        return fail(f"--frame {args.frame} is out of range: {out} has {len(times)} frames; "
                    f"fix: give 0..{len(times) - 1} or last")
    shown_times = times if args.movie else [times[args.frame]]
    bounds, value_range, values = merge_extents([frame_extent(reader, t, args.color) for t in shown_times])
    if not math.isfinite(bounds[0]):
        return fail(f"{out}: the bodies have no points at the frame(s) asked for")
    association, name, _, _ = COLORS[args.color]
    if not math.isfinite(value_range[0]):
        return fail(f"--color {args.color}: {out} has no {association.lower()[:-1]} array '{name}'; fix: "
                    f"render it with an array it has (rank, body, speed, displacement)")
    view, title = make_view(reader, obstacles, args, size, bounds, value_range, values, names)
    heading = args.title or out.name

    if args.png:
        args.png.parent.mkdir(parents=True, exist_ok=True)
        draw(view, title, reader, times[args.frame], heading, args.png, size)
        print(f"wrote {args.png} (frame {args.frame} of {len(times)}, t = {times[args.frame]:g} s, "
              f"{size[0]}x{size[1]}, colour: {args.color})", flush=True)
        return 0

    folder = args.movie.suffix not in (".ogv", ".avi", ".mp4")
    frames_dir = args.movie if folder else Path(tempfile.mkdtemp(prefix="intact-render-"))
    frames_dir.mkdir(parents=True, exist_ok=True)
    try:
        frames = []
        for i, time in enumerate(times):
            frames.append(frames_dir / f"frame_{i:05d}.png")
            draw(view, title, reader, time, heading, frames[-1], size)
        if not folder:
            args.movie.parent.mkdir(parents=True, exist_ok=True)
            encode(frames, args.movie, args.fps)
    finally:
        if not folder:
            shutil.rmtree(frames_dir, ignore_errors=True)
    print(f"wrote {args.movie} ({len(times)} frames, {size[0]}x{size[1]}, "
          f"{'numbered PNGs' if folder else f'{args.fps} frames/s'}, colour: {args.color})", flush=True)
    return 0


if __name__ == "__main__":
    status = main()
    sys.stdout.flush()
    sys.stderr.flush()
    # Leave without ParaView's teardown: under Xvfb, Debian's pvbatch can abort with GLXBadContext while
    # destroying the render window, after the picture is written, which would mask the status.
    os._exit(status)
