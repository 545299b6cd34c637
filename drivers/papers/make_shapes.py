"""Write the simple meshes of the paper reproductions (inputs/meshes/papers/) as gmsh 2.2 ASCII files.

Usage:
    make_shapes.py [OUTPUT_DIR]      (default: inputs/meshes/papers next to this repository's drivers/)

unit_tet.msh: the tetrahedron (0,0,0), (1,0,0), (0,0,1), (0,1,0), the shape of IPC's input/tetMeshes/tet.msh,
used by the converted IPC example inputs/papers/ipc/tet_tet.json.
ring.msh: a ring (torus of square cross-section) about the z axis, centre-line radius 0.25, tube 0.05 wide,
24 segments around and 2 x 2 cells across, each hexahedron in six tetrahedra (216 nodes, 576 tets; IPC's
torus.msh has 200 and 491): the links of inputs/papers/ipc/chain_rings.json and
inputs/papers/al/chain_box.json.
holed_plate.obj: an obstacle, a round plate 0.02 thick (z from -0.01 to 0.01) of radius 0.4 with a round hole of
radius 0.07 about the z axis, 32 segments around: the plate of inputs/papers/al/through_hole.json.
rod.obj: an obstacle, a closed cylinder about the z axis from z = 0 to 0.6, radius 0.0525 (0.75 of the hole's,
the paper's 0.18 m rod in its 0.24 m hole), 32 segments around: the rod that pushes the body through the hole.
The obstacles' triangles face outwards.
"""

import math

import sys
from pathlib import Path


def write_msh(path, nodes, tets):
    """A gmsh 2.2 ASCII file of `nodes` (x, y, z) and `tets` (four 0-based node indices each)."""
    lines = ["$MeshFormat", "2.2 0 8", "$EndMeshFormat", "$Nodes", str(len(nodes))]
    lines += [f"{i + 1} {x!r} {y!r} {z!r}" for i, (x, y, z) in enumerate(nodes)]
    lines += ["$EndNodes", "$Elements", str(len(tets))]
    lines += [f"{i + 1} 4 2 0 1 " + " ".join(str(n + 1) for n in tet) for i, tet in enumerate(tets)]
    lines += ["$EndElements"]
    Path(path).write_text("\n".join(lines) + "\n")


def ring(radius=0.25, width=0.05, segments=24, cells=2):
    """Nodes and tets of a ring about the z axis: hexahedra swept around the circle, each split into six
    tetrahedra around its local (0,0,0)-(1,1,1) diagonal (conforming, as every cell is split alike),
    every tetrahedron positively oriented."""
    side = cells + 1
    nodes = []
    for k in range(segments):
        angle = 2.0 * math.pi * k / segments
        c, s = math.cos(angle), math.sin(angle)
        for i in range(side):
            r = radius - 0.5 * width + width * i / cells
            for j in range(side):
                z = -0.5 * width + width * j / cells
                nodes.append((r * c, r * s, z))

    def node(k, i, j):
        return (k % segments) * side * side + i * side + j

    def volume(t):
        a, b, c, d = (nodes[n] for n in t)
        u = [b[m] - a[m] for m in range(3)]
        v = [c[m] - a[m] for m in range(3)]
        w = [d[m] - a[m] for m in range(3)]
        return (u[0] * (v[1] * w[2] - v[2] * w[1]) - u[1] * (v[0] * w[2] - v[2] * w[0]) +
                u[2] * (v[0] * w[1] - v[1] * w[0]))

    # The six tetrahedra of a cube on its corners c[di][dj][dk] around the diagonal c000-c111.
    paths = [((1, 0, 0), (1, 1, 0)), ((1, 0, 0), (1, 0, 1)), ((0, 1, 0), (1, 1, 0)),
             ((0, 1, 0), (0, 1, 1)), ((0, 0, 1), (1, 0, 1)), ((0, 0, 1), (0, 1, 1))]
    tets = []
    for k in range(segments):
        for i in range(cells):
            for j in range(cells):
                corner = lambda d: node(k + d[0], i + d[1], j + d[2])
                for first, second in paths:
                    t = [corner((0, 0, 0)), corner(first), corner(second), corner((1, 1, 1))]
                    if volume(t) < 0.0:
                        t[1], t[2] = t[2], t[1]
                    tets.append(tuple(t))
    return nodes, tets


def write_obj(path, title, vertices, triangles):
    """A Wavefront .obj of `vertices` (x, y, z) and `triangles` (three 0-based vertex indices each)."""
    lines = [f"# {title} (drivers/papers/make_shapes.py)"]
    lines += [f"v {x:.12g} {y:.12g} {z:.12g}" for x, y, z in vertices]
    lines += [f"f {a + 1} {b + 1} {c + 1}" for a, b, c in triangles]
    Path(path).write_text("\n".join(lines) + "\n")


def circle(radius, z, segments):
    return [(radius * math.cos(2.0 * math.pi * i / segments), radius * math.sin(2.0 * math.pi * i / segments), z)
            for i in range(segments)]


def wall(first, second, segments, outwards=True):
    """The triangles joining ring `first` (lower) to ring `second` (upper) of `segments` vertices each, facing
    away from the z axis (`outwards`) or towards it."""
    triangles = []
    for i in range(segments):
        a, b = first + i, first + (i + 1) % segments
        c, d = second + (i + 1) % segments, second + i
        triangles += [(a, b, c), (a, c, d)] if outwards else [(a, c, b), (a, d, c)]
    return triangles


def rod(radius=0.0525, length=0.6, segments=32):
    """A closed cylinder about the z axis from z = 0 to `length`: two rings, two cap centres."""
    vertices = circle(radius, 0.0, segments) + circle(radius, length, segments) + [(0.0, 0.0, 0.0),
                                                                                   (0.0, 0.0, length)]
    bottom, top = 2 * segments, 2 * segments + 1
    triangles = wall(0, segments, segments)
    for i in range(segments):
        j = (i + 1) % segments
        triangles += [(bottom, j, i), (top, segments + i, segments + j)]
    return vertices, triangles


def holed_plate(hole=0.07, radius=0.4, thickness=0.02, segments=32):
    """A round plate about the z axis, z from -thickness/2 to thickness/2, with a round hole: the rings of the
    hole (below, above) and of the rim (below, above), joined by the two faces and the two walls."""
    h = 0.5 * thickness
    vertices = (circle(hole, -h, segments) + circle(hole, h, segments) + circle(radius, -h, segments) +
                circle(radius, h, segments))
    hole_below, hole_above, rim_below, rim_above = 0, segments, 2 * segments, 3 * segments
    triangles = wall(rim_below, rim_above, segments) + wall(hole_below, hole_above, segments, outwards=False)
    for i in range(segments):
        j = (i + 1) % segments
        triangles += [(hole_above + i, rim_above + i, rim_above + j), (hole_above + i, rim_above + j, hole_above + j)]
        triangles += [(hole_below + i, rim_below + j, rim_below + i), (hole_below + i, hole_below + j, rim_below + j)]
    return vertices, triangles


def main(argv):
    root = Path(argv[1]) if len(argv) > 1 else Path(__file__).resolve().parents[2] / "inputs/meshes/papers"
    root.mkdir(parents=True, exist_ok=True)
    write_msh(root / "unit_tet.msh", [(0.0, 0.0, 0.0), (1.0, 0.0, 0.0), (0.0, 0.0, 1.0), (0.0, 1.0, 0.0)],
              [(0, 1, 3, 2)])
    print(f"wrote {root / 'unit_tet.msh'}")
    write_msh(root / "ring.msh", *ring())
    print(f"wrote {root / 'ring.msh'}")
    write_obj(root / "holed_plate.obj", "plate of radius 0.4, 0.02 thick, hole of radius 0.07", *holed_plate())
    print(f"wrote {root / 'holed_plate.obj'}")
    write_obj(root / "rod.obj", "closed rod of radius 0.0525 from z = 0 to 0.6", *rod())
    print(f"wrote {root / 'rod.obj'}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
