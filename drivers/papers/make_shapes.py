"""Write the simple meshes of the paper reproductions (inputs/meshes/papers/) as gmsh 2.2 ASCII files.

Usage:
    make_shapes.py [OUTPUT_DIR]      (default: inputs/meshes/papers next to this repository's drivers/)

unit_tet.msh: the tetrahedron (0,0,0), (1,0,0), (0,0,1), (0,1,0), the shape of IPC's input/tetMeshes/tet.msh,
used by the converted IPC example inputs/papers/ipc/tet_tet.json.
ring.msh: a ring (torus of square cross-section) about the z axis, centre-line radius 0.25, tube 0.05 wide,
24 segments around and 2 x 2 cells across, each hexahedron in six tetrahedra (216 nodes, 576 tets; IPC's
torus.msh has 200 and 491): the links of inputs/papers/ipc/chain_rings.json.
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


def main(argv):
    root = Path(argv[1]) if len(argv) > 1 else Path(__file__).resolve().parents[2] / "inputs/meshes/papers"
    root.mkdir(parents=True, exist_ok=True)
    write_msh(root / "unit_tet.msh", [(0.0, 0.0, 0.0), (1.0, 0.0, 0.0), (0.0, 0.0, 1.0), (0.0, 1.0, 0.0)],
              [(0, 1, 3, 2)])
    print(f"wrote {root / 'unit_tet.msh'}")
    write_msh(root / "ring.msh", *ring())
    print(f"wrote {root / 'ring.msh'}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
