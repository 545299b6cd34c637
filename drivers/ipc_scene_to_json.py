"""Convert an IPC scene script (the plain-text `.txt` files of github.com/ipc-sim/IPC, `input/paperExamples`)
into an Intact scene (JSON).

Usage:
    ipc_scene_to_json.py SCENE.txt [--output SCENE.json] [--mesh OLD=NEW ...] [--mesh-root DIR]

What is mapped: energy (NH, FCR, SNH), timeIntegration (BE, BDF2, NM with beta and gamma), time (end and
dt), density, stiffness (E, nu), turnOffGravity (IPC is y-up: gravity becomes [0, -9.81, 0]), the shapes
(`.msh` bodies and `.obj`, `.seg` and `.pt` kinematic obstacles, with translate / rotate / scale, `material`,
`initVel`, `linearVelocity` and `angularVelocity` of obstacles, `DBC` boxes as fixed or moving boxes), ground,
halfSpace and meshCO obstacles with their friction (a meshCO placed as IPC's MeshCO places it: centred on its
vertex mean, its largest extent scaled to the line's scale, turned, moved to its origin), selfFric, dHat and
epsv (relative to the bodies' bounding-box diagonal, as in IPC; `tuning` as IPC's Optimizer reads it),
fricIterAmt, `shape input PATH`, `rotateModel`, `size` (the shapes turned, scaled and moved as IPC's main.cpp
places them, from their vertices) and the scripts fall, fallNoShift, dragright, dragdown, twist,
pushRightMost1, DCOFix and DCORotCylinders (raised as AnimScripter raises them; their grips as moving boxes,
their turning cylinders as turning obstacles). Euler angles are converted from IPC's order (a point turns
about z, then y, then x) to Intact's `rotate_deg` (x, then y, then z). Keys that change only IPC's viewer
(zoom, view, ...) are dropped silently; every other key Intact cannot express is reported on stderr as
`warning: LINE: ...` with what was done.

Meshes: IPC's paths are resolved against --mesh-root (default: the folder of SCENE.txt) and written into
the JSON relative to the output file. `--mesh OLD=NEW` replaces a shape path as written in the script:
NEW is a mesh file, or `unit_box:N` for an N×N×N box mesh of the unit cube [0, 1]³ (the shape of IPC's
`input/tetMeshes/cube.msh`). DBC boxes are relative to a mesh's bounding box and IPC places the model by its
vertices, so the converter reads the vertices of `.msh` (gmsh 2 or 4, ASCII), `.mesh` (medit) and `.obj`
files. A `.seg` or `.pt` shape (or the .obj IPC takes in its place) is written as `OUTPUT.NAME.obj` beside
the scene, the form Intact reads obstacle segments and points in.

Exit status: 0 with the scene written (warnings or not), 1 when the script cannot be read.
"""

import argparse
import json
import math
import os
import sys
from pathlib import Path

IPC_GRAVITY = [0.0, -9.81, 0.0]

# Keys that only steer IPC's viewer or its logging: nothing to map and nothing lost.
VIEWER_KEYS = {"zoom", "view", "cameraTracking", "playBackSpeed", "appendStr", "disableCout", "warmStart",
               "selfCollisionOn", "linearSolver", "linSysSolver", "CCDMethod", "ccdMethod",
               "CCDTolerance", "ccdTolerance"}
# IPC's AnimScripter: every script but `null` starts by clearing the Dirichlet nodes, so the shapes' DBC boxes
# and the scripted velocities of .obj shapes act only under `null`; these raise the shapes by half their
# bounding-box diagonal first.
RAISING_SCRIPTS = {"fall", "dragright", "dragdown"}
MAPPED_SCRIPTS = {"null", "fall", "fallNoShift", "dragright", "dragdown", "twist", "pushRightMost1", "DCOFix",
                  "DCORotCylinders"}
# Scripts under which IPC holds the .obj shapes (codimensional kinematic objects) still; under the others
# they are left free.
HOLDING_SCRIPTS = {"null", "DCOFix", "DCORotCylinders"}
MATERIALS = {"NH": "neo_hookean", "FCR": "fixed_corotated", "SNH": "stable_neo_hookean",
             "StVK": "stvk", "LIN": "linear"}
INTEGRATORS = {"BE": "implicit_euler", "BDF2": "bdf2", "NM": "newmark"}


class ConversionError(Exception):
    """The script cannot be read; the message names the file, the line and the fix."""


class Shape:
    """One line of IPC's shapes block: its Intact entry, its raw vertices, and where IPC puts them. A vertex p
    lands at turn (scale * p) + shift: the line's scale, rotation and translation (main.cpp), then what the
    whole model gets (rotateModel, size, a script's raise)."""

    def __init__(self, entry, points, scale, rotate, translate, is_obstacle):
        self.entry = entry
        self.points = points  # the mesh file's vertices in its order, [] if they could not be read
        self.scale = list(scale)
        self.turn = ipc_matrix(rotate)
        self.shift = list(translate)
        self.is_obstacle = is_obstacle
        self.scripted = False  # an .obj shape with linearVelocity or angularVelocity

    def placed(self):
        """The shape's vertices where IPC puts them, in the file's order."""
        return [[sum(self.turn[r][k] * self.scale[k] * p[k] for k in range(3)) + self.shift[r] for r in range(3)]
                for p in self.points]

    def boxes(self):
        return [item for kind in ("fixed", "moving") for item in self.entry.get(kind, [])]

    def turn_about(self, matrix, center):
        """Turn the shape (and its boxes, as the box around their turned corners) about `center`."""
        def turned(p):
            return [a + c for a, c in zip(matrix_times(matrix, [x - c for x, c in zip(p, center)]), center)]
        for item in self.boxes():
            corners = [turned([item["box"]["max" if (k >> a) & 1 else "min"][a] for a in range(3)])
                       for k in range(8)]
            item["box"] = {"min": [min(c[a] for c in corners) for a in range(3)],
                           "max": [max(c[a] for c in corners) for a in range(3)]}
            if "center" in item:
                item["center"] = turned(item["center"])
        self.turn = [[sum(matrix[r][k] * self.turn[k][c] for k in range(3)) for c in range(3)] for r in range(3)]
        self.shift = turned(self.shift)

    def scale_and_move(self, factor, offset):
        """Scale the shape (and its boxes) by `factor` about the origin, then move it by `offset`."""
        self.scale = [factor * c for c in self.scale]
        self.shift = [factor * c + d for c, d in zip(self.shift, offset)]
        for item in self.boxes():
            for corner in ("min", "max"):
                item["box"][corner] = [factor * c + d for c, d in zip(item["box"][corner], offset)]
            if "center" in item:
                item["center"] = [factor * c + d for c, d in zip(item["center"], offset)]

    def write(self):
        """The placement into the entry: Intact's scale, rotate_deg (converted from IPC's order) and
        translate; an obstacle's turn centre at its vertices' box centre, as IPC turns a scripted one."""
        entry = self.entry
        if any(s != 1.0 for s in self.scale):
            entry["scale"] = self.scale if len(set(self.scale)) > 1 else self.scale[0]
        if any(abs(self.turn[r][c] - (r == c)) > 1e-12 for r in range(3) for c in range(3)):
            entry["rotate_deg"] = intact_angles(self.turn)
        if any(self.shift):
            entry["translate"] = self.shift
        if "angular_velocity" in entry and "center" not in entry:
            box = points_bbox(self.placed())
            entry["center"] = [(l + h) / 2 for l, h in zip(*box)] if box else self.shift


class Converter:
    def __init__(self, script, output, mesh_root, substitutes):
        self.script = Path(script)
        self.output = Path(output)
        self.mesh_root = Path(mesh_root) if mesh_root else self.script.parent
        self.substitutes = substitutes
        self.warnings = []
        self.scene = {"$schema": "scene.schema.json", "time": {}, "gravity": list(IPC_GRAVITY),
                      "bodies": [], "obstacles": [], "contact": {"enabled": True}, "solver": {"type": "ipc"}}
        self.material = {"model": "neo_hookean", "youngs_modulus": 1e5, "poisson_ratio": 0.4, "density": 1000.0}
        self.body_materials = []  # per body: the shape's own `material` or None (use the scene's)
        self.shapes = []  # every Shape, in order
        self.size = 0.0  # IPC's `size`: the shapes are scaled so that their largest extent is this
        self.model_turn = None  # IPC's `rotateModel X Y Z DEGREES`: (axis, degrees, line)
        self.anim = "null"  # IPC's `script` (AnimScripter's type)
        self.anim_line = 0
        self.handle_ratio = 0.01  # IPC's `handleRatio`: the share of the x extent that `twist` grips at each end
        self.solver = "interiorPoint"  # IPC's constraintSolver, which decides the `section`s read
        self.dhat = 1e-3  # IPC's final d̂ relative to the bodies' bbox diagonal (tuning[2])
        self.epsv = 1e-3  # IPC's final ε_v relative to the bodies' bbox diagonal, per second (tuning[5])
        self.rest_diagonal = None  # the bodies' rest bbox diagonal in IPC (its Optimizer's reference length)
        self.obstacle_right = -math.inf  # the largest x of the meshCO obstacles' vertices, as placed
        self.extra_files = {}  # path: text of the .obj files written for `.seg` and `.pt` shapes

    def warn(self, number, text):
        self.warnings.append(f"warning: {self.script}:{number}: {text}")

    # --- meshes -------------------------------------------------------------------------------------
    def mesh_entry(self, written, number):
        """(the `mesh` object, the raw mesh's vertices or []) for a shape path."""
        if written in self.substitutes:
            new = self.substitutes[written]
            if new.startswith("unit_box:"):
                cells = int(new.split(":", 1)[1])
                self.warn(number, f"'{written}' replaced by a generated {cells}^3 box mesh of the unit cube")
                return {"box": {"min": [0.0, 0.0, 0.0], "max": [1.0, 1.0, 1.0], "cells": [cells] * 3}}, \
                    [[float((k >> a) & 1) for a in range(3)] for k in range(8)]
            path = Path(new)
        else:
            path = self.mesh_root / written
        if path.suffix in (".seg", ".pt"):
            return self.codim_entry(written, path, number)
        if not path.is_file():
            self.warn(number, f"mesh '{path}' not found; fix: --mesh-root DIR (a checkout of IPC) or "
                              f"--mesh {written}=FILE")
        relative = os.path.relpath(path.resolve(), self.output.resolve().parent)
        return {"file": relative}, vertex_points(path)

    def codim_entry(self, written, path, number):
        """A `.seg` (IPC's segments: `v x y z` and `s i j` lines) or `.pt` (points: an .obj's vertices) shape,
        which IPC holds as a kinematic object. IPC falls back to the .obj beside it of the same name (its
        triangles' edges, or its vertices) when the file cannot be read, as for the paper's rollers. Intact
        reads obstacle segments and points from .obj files: the converter writes one beside the scene,
        `SCENE.NAME.obj` (`l i j` lines, or vertices alone)."""
        lines, source = None, path
        for candidate in (path, path.with_suffix(".obj")):
            try:
                lines, source = candidate.read_text().splitlines(), candidate
                break
            except (OSError, UnicodeDecodeError):
                continue
        if lines is None:
            self.warn(number, f"mesh '{path}' (nor '{path.with_suffix('.obj')}') not found; fix: --mesh-root DIR "
                              f"(a checkout of IPC) or --mesh {written}=FILE")
            return {"file": os.path.relpath(path.resolve(), self.output.resolve().parent)}, []
        points = [[float(v) for v in line.split()[1:4]] for line in lines if line.startswith("v ")]
        edges = []
        if path.suffix == ".seg" and source == path:
            edges = [tuple(int(v) for v in line.split()[1:3]) for line in lines if line.startswith("s ")]
        elif path.suffix == ".seg":
            seen = set()
            for line in lines:
                if line.startswith("f "):
                    corners = [int(word.split("/")[0]) for word in line.split()[1:4]]
                    for a, b in zip(corners, corners[1:] + corners[:1]):
                        if (b, a) not in seen and (a, b) not in seen:
                            seen.add((a, b))
                            edges.append((a, b))
        target = self.output.parent / f"{self.output.stem}.{path.name}.obj"
        self.extra_files[target] = "".join(f"v {x!r} {y!r} {z!r}\n" for x, y, z in points) + \
            "".join(f"l {a} {b}\n" for a, b in edges)
        if source != path:
            self.warn(number, f"'{path.name}' not found: its {'edges' if edges else 'vertices'} taken from "
                              f"'{source}', as IPC does")
        return {"file": os.path.relpath(target.resolve(), self.output.resolve().parent)}, points

    def mesh_obstacle(self, args, number):
        """A `meshCO PATH x y z SCALE STIFFNESS FRICTION [rotate X Y Z]` line as an Intact obstacle. IPC's
        MeshCO moves the mesh's vertex mean to the origin, turns it, scales its largest extent to SCALE and
        moves it to (x, y, z); Intact scales, turns and translates about the file's own origin, so the
        mean's turned and scaled image is taken off the translation."""
        mesh, _ = self.mesh_entry(args[0], number)
        origin, size = [float(a) for a in args[1:4]], float(args[4])
        degrees = [float(a) for a in args[8:11]] if len(args) >= 11 and args[7] == "rotate" else [0.0] * 3
        entry = {"mesh": mesh, "friction": float(args[6])}
        path = self.mesh_root / args[0] if args[0] not in self.substitutes else Path(self.substitutes[args[0]])
        stats = vertex_stats(path)
        if stats is None:
            self.warn(number, "meshCO placed without IPC's centring and scaling (its vertices could not be "
                              "read); fix: --mesh-root DIR or --mesh PATH=FILE")
            mean, factor = [0.0] * 3, size
        else:
            mean, low, high = stats
            factor = size / max(h - l for l, h in zip(low, high))
        turned = matrix_times(ipc_matrix(degrees), [factor * c for c in mean])
        entry["translate"] = [o - t for o, t in zip(origin, turned)]
        for p in vertex_points(path):
            placed = matrix_times(ipc_matrix(degrees), [factor * c for c in p])
            self.obstacle_right = max(self.obstacle_right, placed[0] + entry["translate"][0])
        if factor != 1.0:
            entry["scale"] = factor
        if any(degrees):
            entry["rotate_deg"] = intact_angles(ipc_matrix(degrees))
        return entry

    # --- one shape line -----------------------------------------------------------------------------
    def shape(self, line, number):
        words = line.split()
        path = words[0]
        numbers = [float(w) for w in words[1:10]]
        translate, rotate, scale = numbers[0:3], numbers[3:6], numbers[6:9]
        rest = words[10:]
        mesh, points = self.mesh_entry(path, number)
        bbox = points_bbox(points)
        entry = {"mesh": mesh}
        is_obstacle = path.endswith((".obj", ".seg", ".pt"))  # IPC's kinematic (codimensional) objects
        shape = Shape(entry, points, scale, rotate, translate, is_obstacle)
        material = None
        i = 0
        while i < len(rest):
            word = rest[i]
            args = rest[i + 1:]
            if word == "material":
                rho, E, nu = (float(a) for a in args[:3])
                material = {"density": rho, "youngs_modulus": E, "poisson_ratio": nu}
                i += 4
            elif word in ("linearVelocity", "angularVelocity"):
                v = [float(a) for a in args[:3]]
                if word == "angularVelocity":
                    v = [math.radians(a) for a in v]
                if not is_obstacle:
                    self.warn(number, f"{word} of a deformable shape (scripted motion) is not mapped")
                elif word == "linearVelocity":
                    entry["velocity"] = v
                    shape.scripted = True
                else:
                    entry["angular_velocity"] = v
                    shape.scripted = True
                    self.warn(number, "an obstacle's angularVelocity turns it about its vertices' box centre "
                                      "at the start (IPC: about the box centre of each step)")
                i += 4
            elif word == "initVel":
                v = [float(a) for a in args[:6]]
                if any(v[:3]):
                    entry["velocity"] = v[:3]
                if any(v[3:]):
                    self.warn(number, "initVel's angular part has no Intact key (bodies get one velocity); "
                                      "dropped")
                i += 7
            elif word == "DBC":
                values = [float(a) for a in args[:12]]
                i += 13
                times = []
                while i < len(rest) and is_number(rest[i]) and len(times) < 2:
                    times.append(float(rest[i]))
                    i += 1
                self.dirichlet(entry, values, times, bbox, scale, rotate, translate, number)
            elif word == "NBC":
                self.warn(number, "NBC (IPC's per-node force) is not mapped: Intact's `forces` are totals; "
                                  "fix: add bodies[].forces by hand")
                i += 10
            elif word.startswith("#"):
                break
            else:
                self.warn(number, f"shape keyword '{word}' is not mapped")
                i += 1
        self.shapes.append(shape)
        if is_obstacle:
            entry.pop("fixed", None)
            self.scene["obstacles"].append(entry)
        else:
            entry["name"] = f"shape{len(self.scene['bodies'])}"
            self.scene["bodies"].append(entry)
            self.body_materials.append(material)

    def dirichlet(self, entry, values, times, bbox, scale, rotate, translate, number):
        """A DBC box (relative to the raw mesh's bounding box) as a world-space fixed or moving box."""
        if bbox is None:
            self.warn(number, "DBC dropped: the mesh's vertices could not be read to place its box")
            return
        if any(rotate):
            self.warn(number, "DBC box of a rotated shape placed as the box around its unrotated corners")
        low, high = bbox
        corners = []
        for k in range(2):
            corners.append([(low[a] + (high[a] - low[a]) * values[3 * k + a]) * scale[a] + translate[a]
                            for a in range(3)])
        pad = 1e-9 * max(1.0, max(abs(c) for c in corners[0] + corners[1]))
        box = {"min": [min(corners[0][a], corners[1][a]) - pad for a in range(3)],
               "max": [max(corners[0][a], corners[1][a]) + pad for a in range(3)]}
        velocity, angular = values[6:9], [math.radians(a) for a in values[9:12]]
        if not any(velocity) and not any(angular):
            entry.setdefault("fixed", []).append({"box": box})
            if times:
                self.warn(number, "a fixed box's time range is not mapped (Intact holds it throughout)")
            return
        moving = {"box": box}
        if any(velocity):
            moving["velocity"] = velocity
        if any(angular):
            moving["angular_velocity"] = angular
            moving["center"] = [(box["min"][a] + box["max"][a]) / 2 for a in range(3)]
            self.warn(number, "DBC rotation taken about the centre of its box (IPC: about the box centre "
                              "of the selected nodes)")
        if times:
            moving["start"] = times[0]
            if len(times) > 1 and math.isfinite(times[1]):
                moving["end"] = times[1]
        entry.setdefault("moving", []).append(moving)

    # --- the whole script ---------------------------------------------------------------------------
    def convert(self):
        try:
            lines = self.script.read_text().splitlines()
        except OSError as error:
            raise ConversionError(f"{self.script}: cannot read ({error.strerror}); fix: give an IPC scene "
                                  "script") from None
        i = 0
        while i < len(lines):
            number = i + 1
            words = lines[i].split()
            i += 1
            if not words or words[0].startswith("#"):
                continue
            key, args = words[0], words[1:]
            try:
                i = self.key(key, args, lines, i, number)
            except (ValueError, IndexError):
                raise ConversionError(f"{self.script}:{number}: '{lines[number - 1].strip()}' has missing or "
                                      f"non-numeric values for '{key}'; fix the line") from None
        self.finish()
        return self.scene

    def key(self, key, args, lines, i, number):
        """Apply one key; returns the index of the next line to read."""
        contact = self.scene["contact"]
        if key in VIEWER_KEYS:
            pass
        elif key == "energy":
            if args[0] in MATERIALS:
                self.material["model"] = MATERIALS[args[0]]
            else:
                self.warn(number, f"energy {args[0]} has no Intact model; neo_hookean used")
        elif key == "timeIntegration":
            if args[0] not in INTEGRATORS:
                self.warn(number, f"timeIntegration {args[0]} has no Intact integrator; implicit_euler used")
            else:
                self.scene["integrator"] = {"type": INTEGRATORS[args[0]]}
                if args[0] == "NM" and len(args) >= 3:
                    self.scene["integrator"].update({"beta": float(args[1]), "gamma": float(args[2])})
        elif key == "time":
            self.scene["time"] = {"dt": float(args[1]), "end": float(args[0])}
        elif key == "density":
            self.material["density"] = float(args[0])
        elif key == "stiffness":
            self.material["youngs_modulus"] = float(args[0])
            self.material["poisson_ratio"] = float(args[1])
        elif key == "turnOffGravity":
            self.scene["gravity"] = [0.0, 0.0, 0.0]
        elif key == "shapes":
            count = int(args[1])
            read = 0
            while read < count and i < len(lines):
                text = lines[i].strip()
                i += 1
                if not text or text.startswith("#"):
                    continue
                self.shape(text, i)
                read += 1
        elif key == "shape":
            # `shape TYPE PATH`: one shape as its file has it (IPC: no translation, rotation or scaling)
            self.shape(f"{args[1]} 0 0 0  0 0 0  1 1 1", number)
        elif key == "rotateModel":
            axis, degrees = [float(a) for a in args[0:3]], float(args[3])
            self.model_turn = (axis, degrees, number) if degrees else None
        elif key == "handleRatio":
            self.handle_ratio = float(args[0])
        elif key == "ground":
            self.scene["obstacles"].append({"plane": {"point": [0.0, float(args[1]), 0.0],
                                                      "normal": [0.0, 1.0, 0.0]}, "friction": float(args[0])})
        elif key == "halfSpace":
            origin, normal = [float(a) for a in args[0:3]], [float(a) for a in args[3:6]]
            self.scene["obstacles"].append({"plane": {"point": origin, "normal": normal},
                                            "friction": float(args[7])})
        elif key == "meshCO":
            self.scene["obstacles"].append(self.mesh_obstacle(args, number))
        elif key == "selfFric":
            contact["friction"] = float(args[0])
        elif key == "dHat":
            self.dhat = float(args[0])
        elif key == "epsv":
            self.epsv = float(args[0])
        elif key == "tuning":
            values = []
            while len(values) < int(args[0]) and i < len(lines):
                values += [float(v) for v in lines[i].split()]
                i += 1
            self.tuning(values, number)
        elif key == "fricIterAmt":
            amount = int(args[0])
            if amount > 0:
                contact["friction_iterations"] = amount
            else:
                self.warn(number, f"fricIterAmt {amount} (lag until converged) is not mapped; Intact's "
                                  "default friction lagging is used")
        elif key == "constraintSolver":
            self.solver = "interiorPoint" if args[0] == "IP" else args[0]
            if args[0] not in ("interiorPoint", "IP"):
                self.warn(number, f"constraintSolver {args[0]} has no Intact counterpart; solver.type ipc used")
        elif key == "tol":
            count = int(args[0])
            self.warn(number, "tol (IPC's Newton tolerance × bbox diagonal) is not mapped; Intact's "
                              "solver.newton_tolerance default is used")
            i += count
        elif key == "section":
            # IPC reads a section's lines when it names the constraintSolver chosen so far (or at `section end`)
            names = ["interiorPoint" if a == "IP" else a for a in args]
            if "end" not in names and self.solver not in names:
                self.warn(number, f"section {' '.join(args)} (settings for another solver) skipped")
                while i < len(lines) and lines[i].split()[:2] != ["section", "end"]:
                    i += 1
                i += 1
        elif key == "size":
            self.size = float(args[0])
        elif key == "script":
            self.anim = args[0] if args else "null"
            self.anim_line = number
            if self.anim not in MAPPED_SCRIPTS:
                self.warn(number, f"script {' '.join(args)} (IPC's scripted motion) is not mapped")
        elif key == "selfCollisionOff":
            self.warn(number, "selfCollisionOff is not mapped: Intact always handles self-contact")
        else:
            self.warn(number, f"'{key}' is not mapped")
        return i

    def tuning(self, values, number):
        """IPC's `tuning N` and its N values (Optimizer.cpp): κ, then d̂ at the start of a step's solve, the
        d̂ it halves toward while the active pairs are farther apart, the distance floor, then ε_v likewise
        (start, target); the relative defaults 1e-3 stand for the values not given. Intact keeps one d̂ and
        one ε_v: the targets, IPC's values at convergence."""
        self.dhat = values[2] if len(values) > 2 else 1e-3
        self.epsv = values[5] if len(values) > 5 else 1e-3
        start = values[1] if len(values) > 1 else 1e-3
        if start != self.dhat:
            self.warn(number, f"tuning: IPC starts each step at d̂ = {start:g} × bbox diagonal and halves it "
                              f"toward {self.dhat:g}; Intact keeps d̂ = {self.dhat:g} × bbox diagonal")

    def world_bbox(self, shapes=None):
        """The bounding box of the shapes' vertices as placed (all shapes by default), or None if a mesh's
        vertices are unknown."""
        low, high = [math.inf] * 3, [-math.inf] * 3
        for shape in self.shapes if shapes is None else shapes:
            box = points_bbox(shape.placed())
            if box is None:
                return None
            low = [min(a, b) for a, b in zip(low, box[0])]
            high = [max(a, b) for a, b in zip(high, box[1])]
        return low, high

    def place_shapes(self):
        """What IPC's main.cpp and AnimScripter do to the whole model once its shapes are read, in order:
        `rotateModel` turns it about half its extent ((max - min) / 2, as IPC has it, not the box centre);
        `size` scales it so that its largest extent is `size` and moves its lowest corner to the origin;
        fall, dragright and dragdown raise it by half its bounding-box diagonal. Also the bodies' rest bbox
        diagonal, which IPC's d̂ and ε_v are relative to (its rest shape does not take rotateModel's turn).
        False if a mesh's vertices are unknown."""
        box = self.world_bbox()
        bodies = [shape for shape in self.shapes if not shape.is_obstacle]
        if box is None:
            if self.model_turn or self.size > 0.0 or self.anim != "null":
                self.warn(0, "rotateModel, size and the script's placement not applied: a mesh's vertices "
                             "could not be read; fix: --mesh-root")
            return False
        rest = self.world_bbox(bodies)
        if self.model_turn:
            axis, degrees, number = self.model_turn
            center = [(h - l) / 2 for l, h in zip(*box)]
            for shape in self.shapes:
                shape.turn_about(axis_matrix(axis, degrees), center)
            if any(shape.boxes() for shape in self.shapes):
                self.warn(number, "rotateModel: DBC boxes placed as the box around their turned corners")
            box = self.world_bbox()
        factor = 1.0
        if self.size > 0.0:
            factor = self.size / max(h - l for l, h in zip(*box))
            for shape in self.shapes:
                shape.scale_and_move(factor, [-factor * l for l in box[0]])
            box = self.world_bbox()
        if self.anim in RAISING_SCRIPTS:
            for shape in self.shapes:
                shape.scale_and_move(1.0, [0.0, 0.5 * diagonal(box), 0.0])
        self.rest_diagonal = factor * diagonal(rest)
        return True

    def apply_script(self):
        """IPC's script (AnimScripter's init and step) as Intact's moving boxes and turning obstacles."""
        if self.anim == "null" or self.anim not in MAPPED_SCRIPTS:
            return
        dropped = False
        for shape in self.shapes:
            for kind in ("fixed", "moving"):
                dropped |= bool(shape.entry.pop(kind, None))
            if shape.scripted:
                for key in ("velocity", "angular_velocity", "center"):
                    shape.entry.pop(key, None)
                dropped = True
        if dropped:
            self.warn(self.anim_line, f"script {self.anim}: the shapes' DBC boxes and the .obj shapes' velocities "
                                      "dropped (IPC applies them under script null only)")
        held = self.shapes if self.anim in HOLDING_SCRIPTS else []
        if self.anim == "DCORotCylinders":
            held = self.shapes[:4]
        if any(shape.is_obstacle and shape not in held for shape in self.shapes):
            self.warn(self.anim_line, f"script {self.anim}: IPC leaves the .obj shapes it does not move free; "
                                      "Intact holds them still as obstacles")
        box = self.world_bbox()
        if self.anim == "dragright":
            self.pull_right_end(box)
        elif self.anim == "dragdown":
            self.pull_bottom_middle(box)
        elif self.anim == "twist":
            self.twist_ends(box)
        elif self.anim == "pushRightMost1":
            self.push_right_most(box)
        elif self.anim == "DCORotCylinders":
            self.turn_cylinders()

    def grip(self, moving, note=None):
        """A moving box on every body (IPC's script grips the nodes of the whole model)."""
        for shape in self.shapes:
            if not shape.is_obstacle:
                shape.entry.setdefault("moving", []).append(json.loads(json.dumps(moving)))
        if note:
            self.warn(self.anim_line, f"script {self.anim}: {note}")

    def pull_right_end(self, box):
        """IPC's `script dragright` (AnimScripter): the nodes in the right 4% of the shapes' x extent move
        at 0.5 m/s in +x until every node is right of the meshCO obstacles, then are let go. Intact's window
        ends when the shapes' left end, moving with the grip, would pass the obstacles."""
        low, high = box
        pad = padding(box)
        grip = {"min": [high[0] - 0.04 * (high[0] - low[0]) - pad, low[1] - pad, low[2] - pad],
                "max": [high[0] + pad, high[1] + pad, high[2] + pad]}
        moving = {"box": grip, "velocity": [0.5, 0.0, 0.0]}
        if math.isfinite(self.obstacle_right):
            moving["end"] = max(0.0, (self.obstacle_right - low[0]) / 0.5)
        self.grip(moving, "the right 4% of the shapes pulled at 0.5 m/s in +x"
                  + (f" until t = {moving['end']:g} s (IPC lets go once the shapes are right of the obstacles; "
                     "a body that stretches passes them later)" if "end" in moving else
                     " throughout (no meshCO obstacle to pass)"))

    def pull_bottom_middle(self, box):
        """IPC's `script dragdown`: after fall's raise, the nodes in the lowest 10% of the y extent and between
        42% and 52% of the x extent (ends excluded) move at 1.5 m/s in -y throughout."""
        low, high = box
        pad = padding(box)
        size = [h - l for l, h in zip(low, high)]
        grip = {"min": [low[0] + 0.42 * size[0] + pad, low[1] - pad, low[2] - pad],
                "max": [low[0] + 0.52 * size[0] - pad, low[1] + 0.1 * size[1] - pad, high[2] + pad]}
        self.grip({"box": grip, "velocity": [0.0, -1.5, 0.0]},
                  "the bottom middle (10% of y, 42-52% of x) pulled down at 1.5 m/s throughout")

    def twist_ends(self, box):
        """IPC's `script twist`: the nodes within handleRatio (0.01) of the x extent's ends turn about the x
        axis through the bbox centre, the left end at -0.4π rad/s and the right end at +0.4π rad/s,
        throughout."""
        low, high = box
        pad = padding(box)
        reach = self.handle_ratio * (high[0] - low[0])
        center = [(l + h) / 2 for l, h in zip(low, high)]
        for side, (start, end) in ((-1.0, (low[0] - pad, low[0] + reach - pad)),
                                   (1.0, (high[0] - reach + pad, high[0] + pad))):
            grip = {"min": [start, low[1] - pad, low[2] - pad], "max": [end, high[1] + pad, high[2] + pad]}
            self.grip({"box": grip, "angular_velocity": [side * 0.4 * math.pi, 0.0, 0.0], "center": center})
        self.warn(self.anim_line, f"script twist: the ends ({self.handle_ratio:g} of the x extent each) turned "
                                  "about x at -0.4π (left) and +0.4π (right) rad/s throughout")

    def push_right_most(self, box):
        """IPC's `script pushRightMost1`: the first node (in the mesh files' order) within 0.1% of the x
        extent's right end moves at 0.15 m/s in -x throughout; Intact's box holds that node alone."""
        low, high = box
        limit = high[0] - 1e-3 * (high[0] - low[0])
        for shape in self.shapes:
            points = shape.placed()
            chosen = next((p for p in points if p[0] > limit), None)
            if chosen is None:
                continue
            if shape.is_obstacle:
                self.warn(self.anim_line, "script pushRightMost1: its node is an .obj shape's; not mapped")
                return
            pad = padding(box)
            grip = {"min": [c - pad for c in chosen], "max": [c + pad for c in chosen]}
            inside = sum(all(abs(a - b) <= pad for a, b in zip(p, chosen)) for p in points)
            shape.entry.setdefault("moving", []).append({"box": grip, "velocity": [-0.15, 0.0, 0.0]})
            self.warn(self.anim_line, f"script pushRightMost1: the node at {[round(c, 9) for c in chosen]} pushed "
                                      "at 0.15 m/s in -x throughout"
                      + (f" (its box holds {inside} coincident nodes)" if inside > 1 else ""))
            return

    def turn_cylinders(self):
        """IPC's `script DCORotCylinders`: the first four shapes turn about their vertices' box centres at
        π/2 rad/s, about +x, -x, -z and +z, throughout (an .obj shape as a turning obstacle, a body by a
        moving box around it)."""
        if len(self.shapes) < 5:
            self.warn(self.anim_line, "script DCORotCylinders needs five shapes (four cylinders, then the rest); "
                                      "not mapped")
            return
        rates = ([0.5 * math.pi, 0.0, 0.0], [-0.5 * math.pi, 0.0, 0.0], [0.0, 0.0, -0.5 * math.pi],
                 [0.0, 0.0, 0.5 * math.pi])
        for shape, rate in zip(self.shapes, rates):
            low, high = points_bbox(shape.placed())
            center = [(l + h) / 2 for l, h in zip(low, high)]
            if shape.is_obstacle:
                shape.entry["angular_velocity"] = rate
                shape.entry["center"] = center
            else:
                pad = padding((low, high))
                grip = {"min": [c - pad for c in low], "max": [c + pad for c in high]}
                shape.entry.setdefault("moving", []).append({"box": grip, "angular_velocity": rate,
                                                             "center": center})

    def finish(self):
        if not self.scene["time"]:
            raise ConversionError(f"{self.script}: no 'time END DT' line; fix: add one")
        if not self.scene["bodies"]:
            raise ConversionError(f"{self.script}: no deformable shape (.msh); fix: add a shapes block")
        if self.place_shapes():
            self.apply_script()
        for shape in self.shapes:
            shape.write()
        for body, material in zip(self.scene["bodies"], self.body_materials):
            body["material"] = dict(self.material)
            if material:
                body["material"].update(material)
        if not self.scene["obstacles"]:
            del self.scene["obstacles"]
        contact = self.scene["contact"]
        contact["dhat_relative"] = self.dhat  # IPC's d̂ is relative to the bodies' bbox diagonal, as Intact's
        frictions = [contact.get("friction", 0.0)] + [o.get("friction", 0.0) for o in
                                                      self.scene.get("obstacles", [])]
        if any(frictions):
            if self.rest_diagonal:
                contact["epsv"] = self.epsv * self.rest_diagonal  # IPC's ε_v is relative to it too, per second
            else:
                self.warn(0, f"epsv = {self.epsv:g} × bbox diagonal not mapped (a mesh's vertices could not be "
                             "read); fix: --mesh-root, or set contact.epsv (m/s) by hand")


def diagonal(box):
    """The length of a box's diagonal."""
    return math.sqrt(sum((h - l) ** 2 for l, h in zip(*box)))


def padding(box):
    """A length far below any mesh feature of the box's scale: what a grip box reaches past its nodes."""
    return 1e-9 * max(1.0, max(abs(c) for c in box[0] + box[1]))


def points_bbox(points):
    """([min x, y, z], [max x, y, z]) of points, or None if there are none."""
    if not points:
        return None
    return [min(p[a] for p in points) for a in range(3)], [max(p[a] for p in points) for a in range(3)]


def axis_matrix(axis, degrees):
    """The rotation by `degrees` about `axis` (normalised), right-handed, row-major."""
    length = math.sqrt(sum(a * a for a in axis))
    x, y, z = (a / length for a in axis)
    c, s = math.cos(math.radians(degrees)), math.sin(math.radians(degrees))
    t = 1.0 - c
    return [[t * x * x + c, t * x * y - s * z, t * x * z + s * y],
            [t * x * y + s * z, t * y * y + c, t * y * z - s * x],
            [t * x * z - s * y, t * y * z + s * x, t * z * z + c]]


def ipc_matrix(degrees):
    """IPC's rotation of Euler angles in degrees, R = Rx Ry Rz (a point turns about z first), row-major."""
    def about(axis, angle):
        c, s = math.cos(math.radians(angle)), math.sin(math.radians(angle))
        i, j = [(1, 2), (2, 0), (0, 1)][axis]
        m = [[1.0 if r == k else 0.0 for k in range(3)] for r in range(3)]
        m[i][i], m[i][j], m[j][i], m[j][j] = c, -s, s, c
        return m
    result = about(0, degrees[0])
    for axis in (1, 2):
        turn = about(axis, degrees[axis])
        result = [[sum(result[r][k] * turn[k][c] for k in range(3)) for c in range(3)] for r in range(3)]
    return result


def matrix_times(m, p):
    return [sum(m[r][k] * p[k] for k in range(3)) for r in range(3)]


def intact_angles(m):
    """Intact's `rotate_deg` [a, b, c] (about x, then y, then z: R = Rz(c) Ry(b) Rx(a)) of the rotation m,
    rounded to 1e-9 degrees so that single-axis turns keep their written angles."""
    sin_b = max(-1.0, min(1.0, -m[2][0]))
    b = math.asin(sin_b)
    if abs(math.cos(b)) > 1e-12:
        a = math.atan2(m[2][1], m[2][2])
        c = math.atan2(m[1][0], m[0][0])
    else:  # b = ±90°: only a ∓ c is defined; c = 0
        a = math.atan2(-m[1][2], m[1][1])
        c = 0.0
    return [round(math.degrees(v), 9) + 0.0 for v in (a, b, c)]


def gmsh_nodes(lines):
    """The node coordinates of an ASCII gmsh file, format 2 (`id x y z`), 4.0 (blocks of `id x y z`) or 4.1
    (blocks of ids, then their coordinates); [] when the section is not as the format says."""
    version = float(lines[lines.index("$MeshFormat") + 1].split()[0]) if "$MeshFormat" in lines else 2.0
    words = " ".join(lines[lines.index("$Nodes") + 1:lines.index("$EndNodes")]).split()
    try:
        if version < 4.0:
            count = int(words[0])
            return [[float(w) for w in words[2 + 4 * k:5 + 4 * k]] for k in range(count)]
        points, at = [], 4 if version >= 4.1 else 2
        for _ in range(int(words[0])):
            parametric, count = int(words[at + 2]), int(words[at + 3])
            at += 4
            if version >= 4.1:
                at += count  # the block's node tags
                width = 3 + (int(words[at - count - 4]) if parametric else 0)  # x y z (+ u v by dimension)
                points += [[float(w) for w in words[at + width * k:at + width * k + 3]] for k in range(count)]
                at += width * count
            else:
                width = 4 + (int(words[at - 3]) if parametric else 0)  # tag x y z (+ u v by dimension)
                points += [[float(w) for w in words[at + width * k + 1:at + width * k + 4]] for k in range(count)]
                at += width * count
        return points
    except (IndexError, ValueError):
        return []


def is_number(text):
    try:
        float(text)
        return True
    except ValueError:
        return False


def vertex_stats(path):
    """(vertex mean, bbox min, bbox max) of a mesh file, or None if it cannot be read."""
    points = vertex_points(path)
    if not points:
        return None
    mean = [sum(p[a] for p in points) / len(points) for a in range(3)]
    return mean, [min(p[a] for p in points) for a in range(3)], [max(p[a] for p in points) for a in range(3)]


def vertex_points(path):
    """A mesh file's vertices (.obj, gmsh 2 or 4 .msh, MEDIT .mesh), or [] if it cannot be read."""
    try:
        lines = Path(path).read_text().splitlines()
    except (OSError, UnicodeDecodeError):
        return []
    points = []
    suffix = Path(path).suffix
    if suffix == ".obj":
        points = [[float(v) for v in l.split()[1:4]] for l in lines if l.startswith("v ")]
    elif suffix == ".msh" and "$Nodes" in lines:
        points = gmsh_nodes(lines)
    elif suffix == ".mesh" and "Vertices" in [l.strip() for l in lines]:
        start = [l.strip() for l in lines].index("Vertices") + 1
        for l in lines[start + 1:start + 1 + int(lines[start])]:
            points.append([float(w) for w in l.split()[:3]])
    return points


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("script", help="an IPC scene script (.txt)")
    parser.add_argument("--output", help="the Intact scene to write (default: SCRIPT with .json)")
    parser.add_argument("--mesh-root", help="folder IPC's mesh paths are relative to (default: the script's)")
    parser.add_argument("--mesh", action="append", default=[], metavar="OLD=NEW",
                        help="replace a shape path: a mesh file, or unit_box:N")
    parser.add_argument("--schema", default=None, help="the $schema value to write (default: none)")
    args = parser.parse_args(argv)
    substitutes = {}
    for item in args.mesh:
        if "=" not in item:
            print(f"error: --mesh '{item}' is not OLD=NEW; fix: e.g. --mesh input/tetMeshes/cube.msh=unit_box:3",
                  file=sys.stderr)
            return 1
        old, new = item.split("=", 1)
        substitutes[old] = new
    output = Path(args.output) if args.output else Path(args.script).with_suffix(".json")
    converter = Converter(args.script, output, args.mesh_root, substitutes)
    try:
        scene = converter.convert()
    except ConversionError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    if args.schema:
        scene["$schema"] = args.schema
    else:
        del scene["$schema"]
    scene["output"] = {"dir": f"output/{output.stem}"}
    output.write_text(json.dumps(scene, indent=2) + "\n")
    for path, text in converter.extra_files.items():
        path.write_text(text)
        print(f"wrote {path} (an obstacle's segments or points)")
    for warning in converter.warnings:
        print(warning, file=sys.stderr)
    print(f"wrote {output} ({len(scene['bodies'])} bodies, {len(scene.get('obstacles', []))} obstacles, "
          f"{len(converter.warnings)} warnings)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
