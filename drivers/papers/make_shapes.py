"""Write the simple meshes of the paper reproductions (inputs/meshes/papers/) as gmsh 2.2 ASCII files.

Usage:
    make_shapes.py [OUTPUT_DIR]      (default: inputs/meshes/papers next to this repository's drivers/)

unit_tet.msh: the tetrahedron (0,0,0), (1,0,0), (0,0,1), (0,1,0), the shape of IPC's input/tetMeshes/tet.msh,
used by the converted IPC example inputs/papers/ipc/tet_tet.json.
"""

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


def main(argv):
    root = Path(argv[1]) if len(argv) > 1 else Path(__file__).resolve().parents[2] / "inputs/meshes/papers"
    root.mkdir(parents=True, exist_ok=True)
    write_msh(root / "unit_tet.msh", [(0.0, 0.0, 0.0), (1.0, 0.0, 0.0), (0.0, 0.0, 1.0), (0.0, 1.0, 0.0)],
              [(0, 1, 3, 2)])
    print(f"wrote {root / 'unit_tet.msh'}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
