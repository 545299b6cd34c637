"""Write the stacked-cloth scenes of the barrier-free AL paper's Table 2 ("Stacked cloth easy, 50 layers on
sphere", Fig. 23) as Intact scenes: square sheets stacked above a fixed sphere, falling onto it and onto each
other under gravity.

Usage:
    make_stacked_cloth.py [OUTPUT_DIR]   (default: inputs/papers/al next to this repository's drivers/)

stacked_cloth.json: this machine's size, 10 layers of 44 x 44 cells (2025 vertices each, 20 250 in all).
stacked_cloth_full.json: the paper's size, 50 layers of 65 x 65 cells (4356 vertices each, 217 800 in all;
the paper: 213.8k vertices).

The paper gives the cloth's membrane stiffness mu_mem = 30 N/m and no bending (k_bend = 0), h = 0.02 s,
delta = 2 mm, frictionless. Here: a neo-Hookean membrane 1 mm thick with E = 7.8e4 Pa and nu = 0.3, so that
mu h = E h / (2 (1 + nu)) = 30 N/m, and a bending stiffness of 1e-6 J (almost none; 0 would take the default
E h^3 / (12 (1 - nu^2)) = 7.1e-6 J). The paper does not give the sheets' size, density, spacing or the
sphere's size: 0.6 m sheets of 200 kg/m^3, 1 cm apart, the lowest 2 cm above a sphere of radius 0.2 m (the
project's inputs/meshes/ball.msh, 207 nodes, scaled 2x and held fixed; the paper's sphere is smooth, this
one faceted).
"""

import json
import sys
from pathlib import Path

SIZE = 0.6  # m, the sheets' side
RADIUS = 0.2  # m, the sphere's (ball.msh has 0.1)
SPACING = 0.01  # m between layers
FIRST = 0.02  # m from the sphere's top to the lowest sheet


def sheet(layer, cells):
    z = RADIUS + FIRST + layer * SPACING
    return {
        "name": f"cloth_{layer}",
        "type": "shell",
        "mesh": {"sheet": {"length": SIZE, "width": SIZE, "cells_x": cells, "cells_y": cells}},
        "translate": [-SIZE / 2, -SIZE / 2, z],
        "material": {"model": "neo_hookean", "youngs_modulus": 7.8e4, "poisson_ratio": 0.3,
                     "density": 200.0, "thickness": 1e-3, "bending_stiffness": 1e-6},
    }


def scene(layers, cells, steps, name):
    sphere = {
        "name": "sphere",
        "mesh": {"file": "../../meshes/ball.msh"},
        "scale": 2.0,
        "material": {"model": "neo_hookean", "youngs_modulus": 1e6, "poisson_ratio": 0.3, "density": 1000.0},
        "fixed": [{"box": {"min": [-1.0, -1.0, -1.0], "max": [1.0, 1.0, 1.0]}}],
    }
    return {
        "$schema": "../../../docs/scene.schema.json",
        "time": {"dt": 0.02, "steps": steps},
        "gravity": [0.0, 0.0, -9.81],
        "bodies": [sphere] + [sheet(layer, cells) for layer in range(layers)],
        "contact": {"enabled": True, "dhat": 2e-3},
        "solver": {"type": "ipc"},
        "output": {"dir": f"output/papers/al/{name}", "every": 5},
    }


def main(argv):
    out = Path(argv[1]) if len(argv) > 1 else Path(__file__).resolve().parents[2] / "inputs" / "papers" / "al"
    for name, layers, cells, steps in (("stacked_cloth", 10, 44, 50), ("stacked_cloth_full", 50, 65, 150)):
        path = out / f"{name}.json"
        path.write_text(json.dumps(scene(layers, cells, steps, name), indent=1) + "\n")
        print(f"wrote {path}: {layers} layers of {(cells + 1) ** 2} vertices")


if __name__ == "__main__":
    main(sys.argv)
