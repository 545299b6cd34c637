#!/usr/bin/env python3
"""Write a semicircular stone arch: N voussoirs (MEDIT .mesh, 8 vertices / 6 tetrahedra each) on two
knife-edge supports (an .obj obstacle), and its scene file.

    python3 make_arch.py N SCENE.json [--friction MU] [--steps STEPS] [--scale S]

The arch lies in the x-z plane, centred at the origin, inner radius 1 m, outer 1.3 m, 0.2 m deep (y).
Neighbouring voussoirs are `gap` apart (their joint faces shifted by gap/2 each, so the gap is uniform),
and the springers stand gap/2 above the knife edges (z = 0 at x = +-1.15 m, the middle of their bottom
faces). Stone: E = 20 GPa, nu = 0.2, 2300 kg/m^3; d_hat = 1 um, gap = 0.5 um.
Meshes go to meshes/arch/N/ next to this script, the supports to knife_edges.obj; the scene names them
relative to its own folder. --scale S (> 0) multiplies every length but the gap and d_hat (S = 15: IPC's
20 m high masonry arch, Fig. 7 of the IPC paper) and writes meshes/arch/N_xS/, knife_edges_xS.obj and the
output folder output/stone_arch_N_xS.
"""
import json
import math
import os
import sys

INNER, OUTER, DEPTH = 1.0, 1.3, 0.2
GAP = 5e-7
# Hexahedron corners 0..7 (bit 0: angle end, bit 1: outer radius, bit 2: depth), split into 6 tetrahedra
# around the 0-7 diagonal, all positively oriented for the corner layout below.
TETS = [(0, 1, 3, 7), (0, 3, 2, 7), (0, 2, 6, 7), (0, 6, 4, 7), (0, 4, 5, 7), (0, 5, 1, 7)]


def voussoir(k, n, scale):
    """The 8 corners of voussoir k of n (angles from pi down to 0, so k = 0 is the left springer)."""
    a = math.pi * (1.0 - k / n)
    b = math.pi * (1.0 - (k + 1) / n)
    corners = []
    for depth in (0.0, scale * DEPTH):
        for radius in (scale * INNER, scale * OUTER):
            for angle, sign in ((a, -1.0), (b, 1.0)):
                # Shift the joint face at `angle` by gap/2 along its tangent into the voussoir.
                tx, tz = -math.sin(angle), math.cos(angle)
                x = radius * math.cos(angle) + sign * 0.5 * GAP * tx
                z = radius * math.sin(angle) + sign * 0.5 * GAP * tz
                corners.append((x, depth, z))
    # Reorder to bit layout: bit0 = angle end (a/b), bit1 = radius, bit2 = depth.
    return corners


def signed_volume(p, t):
    a, b, c, d = (p[i] for i in t)
    u = [b[i] - a[i] for i in range(3)]
    v = [c[i] - a[i] for i in range(3)]
    w = [d[i] - a[i] for i in range(3)]
    return (u[0] * (v[1] * w[2] - v[2] * w[1]) - u[1] * (v[0] * w[2] - v[2] * w[0]) +
            u[2] * (v[0] * w[1] - v[1] * w[0])) / 6.0


def write_mesh(path, corners):
    tets = [t if signed_volume(corners, t) > 0 else (t[0], t[2], t[1], t[3]) for t in TETS]
    with open(path, "w") as f:
        f.write("MeshVersionFormatted 2\nDimension 3\nVertices\n8\n")
        for x, y, z in corners:
            f.write(f"{x:.17g} {y:.17g} {z:.17g} 0\n")
        f.write("Tetrahedra\n6\n")
        for t in tets:
            f.write(" ".join(str(i + 1) for i in t) + " 0\n")
        f.write("End\n")


def write_supports(path, scale):
    """Two knife edges along y at x = +-(INNER + OUTER) / 2, apex at z = 0, 0.1 m high (times scale)."""
    verts, faces = [], []
    s = scale
    for x0 in (-s * (INNER + OUTER) / 2, s * (INNER + OUTER) / 2):
        base = len(verts)
        for y in (-0.05 * s, s * (DEPTH + 0.05)):
            verts += [(x0, y, 0.0), (x0 - 0.05 * s, y, -0.1 * s), (x0 + 0.05 * s, y, -0.1 * s)]
        # apex 0/3, left foot 1/4, right foot 2/5 (at y0 / y1)
        for a, b, c in ((0, 1, 2), (3, 5, 4), (0, 3, 4), (0, 4, 1), (0, 2, 5), (0, 5, 3), (1, 4, 5), (1, 5, 2)):
            faces.append((base + a, base + b, base + c))
    with open(path, "w") as f:
        for v in verts:
            f.write("v %.17g %.17g %.17g\n" % v)
        for t in faces:
            f.write("f %d %d %d\n" % (t[0] + 1, t[1] + 1, t[2] + 1))


def main():
    n = int(sys.argv[1])
    scene_path = sys.argv[2]
    friction = float(sys.argv[sys.argv.index("--friction") + 1]) if "--friction" in sys.argv else 0.5
    steps = int(sys.argv[sys.argv.index("--steps") + 1]) if "--steps" in sys.argv else 60
    scale = float(sys.argv[sys.argv.index("--scale") + 1]) if "--scale" in sys.argv else 1.0
    if not scale > 0.0:
        sys.exit(f"make_arch.py: --scale must be positive, got {scale}")
    here = os.path.dirname(os.path.abspath(__file__))
    suffix = "" if scale == 1.0 else f"_x{scale:g}"
    folder = os.path.join(here, str(n) + suffix)
    os.makedirs(folder, exist_ok=True)
    scene_dir = os.path.dirname(os.path.abspath(scene_path))
    bodies = []
    for k in range(n):
        mesh = os.path.join(folder, f"voussoir_{k:02d}.mesh")
        write_mesh(mesh, voussoir(k, n, scale))
        bodies.append({
            "name": f"voussoir{k}",
            "mesh": {"file": os.path.relpath(mesh, scene_dir)},
            "material": {"model": "neo_hookean", "youngs_modulus": 2e10, "poisson_ratio": 0.2, "density": 2300.0},
        })
    supports = os.path.join(here, f"knife_edges{suffix}.obj")
    write_supports(supports, scale)
    scene = {
        "time": {"dt": 1.0 / 30.0, "steps": steps},
        "gravity": [0.0, 0.0, -9.81],
        "bodies": bodies,
        "obstacles": [{"mesh": {"file": os.path.relpath(supports, scene_dir)}}],
        "contact": {"enabled": True, "dhat": 1e-6, "friction": friction},
        "solver": {"type": "bal"},
        "output": {"dir": f"output/stone_arch_{n}{suffix}", "every": 10},
    }
    with open(scene_path, "w") as f:
        json.dump(scene, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
