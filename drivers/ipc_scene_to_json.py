"""Convert an IPC scene script (the plain-text `.txt` files of github.com/ipc-sim/IPC, `input/paperExamples`)
into an Intact scene (JSON).

Usage:
    ipc_scene_to_json.py SCENE.txt [--output SCENE.json] [--mesh OLD=NEW ...] [--mesh-root DIR]

What is mapped: energy (NH, FCR, SNH), timeIntegration (BE, BDF2, NM with beta and gamma), time (end and
dt), density, stiffness (E, nu), turnOffGravity (IPC is y-up: gravity becomes [0, -9.81, 0]), the shapes
(`.msh` bodies and `.obj` kinematic obstacles, with translate / rotate / scale, `material`, `initVel`,
`linearVelocity` and `angularVelocity` of obstacles, `DBC` boxes as fixed or moving boxes), ground,
halfSpace and meshCO obstacles with their friction (a meshCO placed as IPC's MeshCO places it: centred on its
vertex mean, its largest extent scaled to the line's scale, turned, moved to its origin), selfFric, dHat
(relative to the bounding-box diagonal, as in IPC), fricIterAmt, `size` and `script fall` or `dragright` (the
shapes scaled and raised as IPC's main.cpp and AnimScripter place them; dragright's pull as a moving box).
Euler angles are converted from IPC's order (a point turns about z, then y, then x) to Intact's `rotate_deg`
(x, then y, then z). Keys that change only IPC's viewer (zoom, view, ...) are dropped silently;
every other key Intact cannot express is reported on stderr as `warning: LINE: ...` with what was done.

Meshes: IPC's paths are resolved against --mesh-root (default: the folder of SCENE.txt) and written into
the JSON relative to the output file. `--mesh OLD=NEW` replaces a shape path as written in the script:
NEW is a mesh file, or `unit_box:N` for an N×N×N box mesh of the unit cube [0, 1]³ (the shape of IPC's
`input/tetMeshes/cube.msh`). DBC boxes are relative to a mesh's bounding box, so the converter reads the
vertices of `.msh` (gmsh 2 or 4, ASCII), `.mesh` (medit) and `.obj` files to place them.

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
MATERIALS = {"NH": "neo_hookean", "FCR": "fixed_corotated", "SNH": "stable_neo_hookean",
             "StVK": "stvk", "LIN": "linear"}
INTEGRATORS = {"BE": "implicit_euler", "BDF2": "bdf2", "NM": "newmark"}


class ConversionError(Exception):
    """The script cannot be read; the message names the file, the line and the fix."""


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
        self.shapes = []  # (entry, raw bbox or None, scale, rotate, translate) of every shape, in order
        self.size = 0.0  # IPC's `size`: the shapes are scaled so that their largest extent is this
        self.fall = False  # IPC's `script fall` (and dragright): the shapes start raised by half their bbox diagonal
        self.drag_right = 0  # the line of IPC's `script dragright` (0: none): the right end is pulled at 0.5 m/s
        self.obstacle_right = -math.inf  # the largest x of the meshCO obstacles' vertices, as placed

    def warn(self, number, text):
        self.warnings.append(f"warning: {self.script}:{number}: {text}")

    # --- meshes -------------------------------------------------------------------------------------
    def mesh_entry(self, written, number):
        """(the `mesh` object, the raw mesh's vertex bounding box or None) for a shape path."""
        if written in self.substitutes:
            new = self.substitutes[written]
            if new.startswith("unit_box:"):
                cells = int(new.split(":", 1)[1])
                self.warn(number, f"'{written}' replaced by a generated {cells}^3 box mesh of the unit cube")
                return {"box": {"min": [0.0, 0.0, 0.0], "max": [1.0, 1.0, 1.0], "cells": [cells] * 3}}, \
                    ([0.0, 0.0, 0.0], [1.0, 1.0, 1.0])
            path = Path(new)
        else:
            path = self.mesh_root / written
        if not path.is_file():
            self.warn(number, f"mesh '{path}' not found; fix: --mesh-root DIR (a checkout of IPC) or "
                              f"--mesh {written}=FILE")
        relative = os.path.relpath(path.resolve(), self.output.resolve().parent)
        return {"file": relative}, vertex_bbox(path)

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
        mesh, bbox = self.mesh_entry(path, number)
        entry = {"mesh": mesh}
        if any(s != 1.0 for s in scale):
            entry["scale"] = scale if len(set(scale)) > 1 else scale[0]
        if any(rotate):
            entry["rotate_deg"] = intact_angles(ipc_matrix(rotate))
        if any(translate):
            entry["translate"] = translate
        is_obstacle = path.endswith(".obj")
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
                else:
                    entry["angular_velocity"] = v
                    entry["center"] = translate
                    self.warn(number, "an obstacle's angularVelocity turns it about its translate point")
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
        self.shapes.append((entry, bbox, scale, rotate, translate))
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
            contact["dhat_relative"] = float(args[0])
        elif key == "tuning":
            values = []
            while len(values) < int(args[0]) and i < len(lines):
                values += [float(v) for v in lines[i].split()]
                i += 1
            if len(values) > 1:
                contact["dhat_relative"] = values[1]
            if len(values) > 4:
                self.warn(number, f"tuning's epsv = {values[4]:g} × bbox diagonal is not mapped (Intact's "
                                  "contact.epsv is in m/s); fix: set contact.epsv by hand")
        elif key == "epsv":
            self.warn(number, "epsv (relative to the bbox diagonal) is not mapped; fix: set contact.epsv by hand")
        elif key == "fricIterAmt":
            amount = int(args[0])
            if amount > 0:
                contact["friction_iterations"] = amount
            else:
                self.warn(number, f"fricIterAmt {amount} (lag until converged) is not mapped; Intact's "
                                  "default friction lagging is used")
        elif key == "constraintSolver":
            if args[0] not in ("interiorPoint", "IP"):
                self.warn(number, f"constraintSolver {args[0]} has no Intact counterpart; solver.type ipc used")
        elif key == "tol":
            count = int(args[0])
            self.warn(number, "tol (IPC's Newton tolerance × bbox diagonal) is not mapped; Intact's "
                              "solver.newton_tolerance default is used")
            i += count
        elif key == "section":
            self.warn(number, f"section {' '.join(args)} (settings for another solver) skipped")
            while i < len(lines) and lines[i].split()[:2] != ["section", "end"]:
                i += 1
            i += 1
        elif key == "size":
            self.size = float(args[0])
        elif key == "script":
            self.fall = bool(args) and args[0] in ("fall", "dragright")
            self.drag_right = number if args and args[0] == "dragright" else 0
            if args and args[0] not in ("fall", "dragright", "null"):
                self.warn(number, f"script {' '.join(args)} (IPC's scripted motion) is not mapped")
        elif key == "selfCollisionOff":
            self.warn(number, "selfCollisionOff is not mapped: Intact always handles self-contact")
        else:
            self.warn(number, f"'{key}' is not mapped")
        return i

    def world_bbox(self):
        """The bounding box of every shape as placed, or None if a mesh's vertices are unknown."""
        low, high = [math.inf] * 3, [-math.inf] * 3
        for entry, bbox, _, rotate, _ in self.shapes:
            if bbox is None:
                return None
            scale = entry.get("scale", 1.0)
            scale = scale if isinstance(scale, list) else [scale] * 3
            shift = entry.get("translate", [0.0, 0.0, 0.0])
            for corner in range(8):
                p = [bbox[(corner >> a) & 1][a] * scale[a] for a in range(3)]
                p = ipc_rotate(p, rotate)
                for a in range(3):
                    low[a] = min(low[a], p[a] + shift[a])
                    high[a] = max(high[a], p[a] + shift[a])
        return low, high

    def transform_shapes(self, factor, shift):
        """Scale every shape (and its boxes) by `factor` about the origin, then move it by `shift`."""
        for entry, _, _, _, _ in self.shapes:
            scale = entry.get("scale", 1.0)
            scale = [factor * c for c in scale] if isinstance(scale, list) else factor * scale
            if scale != 1.0:
                entry["scale"] = scale
            entry["translate"] = [factor * c + d for c, d in zip(entry.get("translate", [0.0] * 3), shift)]
            for kind in ("fixed", "moving"):
                for item in entry.get(kind, []):
                    for corner in ("min", "max"):
                        item["box"][corner] = [factor * c + d for c, d in zip(item["box"][corner], shift)]
                    if "center" in item:
                        item["center"] = [factor * c + d for c, d in zip(item["center"], shift)]
            if "center" in entry:
                entry["center"] = entry["translate"]

    def place_shapes(self):
        """IPC's `size` (scale the shapes to that largest extent, lowest corner at the origin) and
        `script fall` (raise them by half their bbox diagonal), as IPC's main.cpp and AnimScripter do."""
        if self.size <= 0.0 and not self.fall:
            return
        box = self.world_bbox()
        if box is None:
            self.warn(0, "size / script fall not applied: a mesh's vertices could not be read; fix: --mesh-root")
            return
        if self.size > 0.0:
            factor = self.size / max(h - l for l, h in zip(*box))
            self.transform_shapes(factor, [-factor * l for l in box[0]])
            box = self.world_bbox()
        if self.fall:
            diagonal = math.sqrt(sum((h - l) ** 2 for l, h in zip(*box)))
            self.transform_shapes(1.0, [0.0, 0.5 * diagonal, 0.0])
        if self.drag_right:
            self.pull_right_end(self.world_bbox())

    def pull_right_end(self, box):
        """IPC's `script dragright` (AnimScripter): the nodes in the right 4% of the shapes' x extent move
        at 0.5 m/s in +x until every node is right of the meshCO obstacles, then are let go. Intact's window
        ends when the shapes' left end, moving with the grip, would pass the obstacles."""
        low, high = box
        pad = 1e-9 * max(1.0, max(abs(c) for c in low + high))
        grip = {"min": [high[0] - 0.04 * (high[0] - low[0]) - pad, low[1] - pad, low[2] - pad],
                "max": [high[0] + pad, high[1] + pad, high[2] + pad]}
        moving = {"box": grip, "velocity": [0.5, 0.0, 0.0]}
        if math.isfinite(self.obstacle_right):
            moving["end"] = max(0.0, (self.obstacle_right - low[0]) / 0.5)
        for entry, _, _, _, _ in self.shapes:
            entry.setdefault("moving", []).append(dict(moving))
        self.warn(self.drag_right, "script dragright: the right 4% of the shapes pulled at 0.5 m/s in +x"
                  + (f" until t = {moving['end']:g} s (IPC lets go once the shapes are right of the obstacles; "
                     "a body that stretches passes them later)" if "end" in moving else
                     " throughout (no meshCO obstacle to pass)"))

    def finish(self):
        if not self.scene["time"]:
            raise ConversionError(f"{self.script}: no 'time END DT' line; fix: add one")
        if not self.scene["bodies"]:
            raise ConversionError(f"{self.script}: no deformable shape (.msh); fix: add a shapes block")
        self.place_shapes()
        for body, material in zip(self.scene["bodies"], self.body_materials):
            body["material"] = dict(self.material)
            if material:
                body["material"].update(material)
        if not self.scene["obstacles"]:
            del self.scene["obstacles"]
        if "dhat_relative" not in self.scene["contact"]:
            self.scene["contact"]["dhat_relative"] = 1e-3  # IPC's default d̂ = 1e-3 × bbox diagonal



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


def ipc_rotate(p, degrees):
    """p turned as IPC turns a shape: R = Rx Ry Rz (about z first), angles in degrees."""
    for axis in (2, 1, 0):
        angle = math.radians(degrees[axis])
        if not angle:
            continue
        c, s = math.cos(angle), math.sin(angle)
        i, j = [(1, 2), (2, 0), (0, 1)][axis]
        p = list(p)
        p[i], p[j] = c * p[i] - s * p[j], s * p[i] + c * p[j]
    return p


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


def vertex_bbox(path):
    """([min x, y, z], [max x, y, z]) of a mesh file's vertices, or None if it cannot be read."""
    stats = vertex_stats(path)
    return None if stats is None else (stats[1], stats[2])


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
    for warning in converter.warnings:
        print(warning, file=sys.stderr)
    print(f"wrote {output} ({len(scene['bodies'])} bodies, {len(scene.get('obstacles', []))} obstacles, "
          f"{len(converter.warnings)} warnings)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
