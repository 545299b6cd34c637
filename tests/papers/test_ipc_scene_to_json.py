"""drivers/ipc_scene_to_json.py on an IPC scene script written here (no network, no IPC checkout): the keys
it maps land in the right Intact keys, the ones it cannot map are reported as warnings, and a broken script
stops with a message that names the file and the line.

Usage: test_ipc_scene_to_json.py WORK_DIR
"""

import io
import json
import math
import sys
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "drivers"))
import ipc_scene_to_json  # noqa: E402

SCRIPT = """energy NH
warmStart 0
size 2
time 3 0.025
density 500
stiffness 1e6 0.4
script fall

shapes input 3
meshes/block.msh 0 0 0  0 0 0  1 1 1  material 1000 1e5 0.3 initVel 1 0 0 0 0 0
meshes/block.msh 2 0 0  0 0 90  1 1 1  DBC -0.1 0.9 -0.1 1.1 1.1 1.1 0 0 0 0 0 0
meshes/block.msh 0 3 0  0 0 0  1 1 1  NBC 0 0 0 1 1 1 0 -1 0
zoom 0.6
halfSpace 0 -0.5 0  0 1 0  50 0.3
meshCO meshes/cube.obj 0 -1 0.5  0.5  50 0.4 rotate 30 40 50
selfFric 0.2
dHat 2e-3
fricIterAmt -1
shapeMatrix 1
constraintSolver QP
"""

BLOCK = """$MeshFormat
2.2 0 8
$EndMeshFormat
$Nodes
4
1 0.0 0.0 0.0
2 1.0 0.0 0.0
3 0.0 0.0 1.0
4 0.0 1.0 0.0
$EndNodes
$Elements
1
1 4 2 0 1 1 2 4 3
$EndElements
"""


# A cube from (2, 2, 2) to (4, 4, 4): IPC's MeshCO centres it on its vertex mean (3, 3, 3) and scales its
# extent (2) to the line's scale.
CUBE = "".join(f"v {x} {y} {z}\n" for x in (2, 4) for y in (2, 4) for z in (2, 4)) + "f 1 2 3\n"


def rotation(axis, degrees):
    c, s = math.cos(math.radians(degrees)), math.sin(math.radians(degrees))
    i, j = [(1, 2), (2, 0), (0, 1)][axis]
    m = [[1.0 if r == k else 0.0 for k in range(3)] for r in range(3)]
    m[i][i], m[i][j], m[j][i], m[j][j] = c, -s, s, c
    return m


def times(a, b):
    return [[sum(a[r][k] * b[k][c] for k in range(3)) for c in range(3)] for r in range(3)]


def apply(m, p):
    return [sum(m[r][k] * p[k] for k in range(3)) for r in range(3)]


def intact_placement(entry, p):
    """A file vertex where Intact puts it: scale, then rotate_deg (x, then y, then z), then translate."""
    a, b, c = entry.get("rotate_deg", [0.0, 0.0, 0.0])
    turn = times(rotation(2, c), times(rotation(1, b), rotation(0, a)))
    q = apply(turn, [entry.get("scale", 1.0) * x for x in p])
    return [x + t for x, t in zip(q, entry.get("translate", [0.0, 0.0, 0.0]))]


def convert(work, *args):
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        status = ipc_scene_to_json.main([str(a) for a in args])
    return status, out.getvalue(), err.getvalue()


def expect(condition, text):
    if not condition:
        print(f"FAILED: {text}")
        sys.exit(1)


def main():
    work = Path(sys.argv[1])
    (work / "meshes").mkdir(parents=True, exist_ok=True)
    (work / "meshes/block.msh").write_text(BLOCK)
    (work / "meshes/cube.obj").write_text(CUBE)
    (work / "scene.txt").write_text(SCRIPT)
    status, out, err = convert(work, work / "scene.txt", "--output", work / "scene.json")
    expect(status == 0, f"status {status}: {err}")
    scene = json.loads((work / "scene.json").read_text())
    expect(scene["time"] == {"dt": 0.025, "end": 3.0}, f"time {scene['time']}")
    expect(scene["gravity"] == [0.0, -9.81, 0.0], "IPC is y-up")
    bodies = scene["bodies"]
    expect(len(bodies) == 3, f"{len(bodies)} bodies")
    expect(bodies[0]["material"] == {"model": "neo_hookean", "youngs_modulus": 1e5, "poisson_ratio": 0.3,
                                     "density": 1000.0}, f"shape material {bodies[0]['material']}")
    expect(bodies[1]["material"]["density"] == 500.0, "scene density for shapes without their own")
    expect(bodies[0]["velocity"] == [1.0, 0.0, 0.0], "initVel")
    expect(bodies[1]["rotate_deg"] == [0.0, 0.0, 90.0], "rotate")
    # size 2: the shapes span x in [0, 3] before (the turned block reaches x = 1..2), so the factor is 2/4
    # (y spans 0..4); script fall then raises them by half the new bbox diagonal.
    factor = 2.0 / 4.0
    expect(math.isclose(bodies[0]["scale"], factor), f"scale {bodies[0].get('scale')}")
    expect(math.isclose(bodies[2]["translate"][1] - bodies[0]["translate"][1], 3 * factor), "spacing scaled")
    expect(bodies[0]["translate"][1] > 0.5, "script fall raised the shapes")
    expect(len(bodies[1].get("fixed", [])) == 1, "DBC without velocity becomes a fixed box")
    # meshCO: every vertex where IPC's MeshCO puts it, R (v - mean) (0.5 / 2) + origin, R = Rx Ry Rz of the
    # line's angles (IPC turns about z first, Intact about x first: the angles are converted).
    cube = scene["obstacles"][1]
    ipc_turn = times(rotation(0, 30), times(rotation(1, 40), rotation(2, 50)))
    for x in (2, 4):
        for y in (2, 4):
            for z in (2, 4):
                ipc = [c + o for c, o in zip(apply(ipc_turn, [0.25 * (v - 3) for v in (x, y, z)]), (0, -1, 0.5))]
                ours = intact_placement(cube, [x, y, z])
                expect(max(abs(i - j) for i, j in zip(ipc, ours)) < 1e-9, f"meshCO vertex {ours} != {ipc}")
    expect(cube["friction"] == 0.4, "meshCO friction")
    plane = scene["obstacles"][0]
    expect(plane["plane"] == {"point": [0.0, -0.5, 0.0], "normal": [0.0, 1.0, 0.0]} and plane["friction"] == 0.3,
           f"halfSpace {plane}")
    expect(scene["contact"]["friction"] == 0.2 and scene["contact"]["dhat_relative"] == 2e-3, "contact")
    for text in ("NBC", "fricIterAmt -1", "'shapeMatrix' is not mapped", "constraintSolver QP",
                 "DBC box of a rotated shape"):
        expect(text in err, f"no warning about {text!r} in:\n{err}")
    expect("zoom" not in err, "viewer keys are dropped silently")
    expect("scene.txt:10:" in err or "scene.txt:12:" in err, "warnings name the line")

    # script dragright: raised as by fall, the right 4% of the shapes' x extent pulled at 0.5 m/s until the
    # left end would pass the meshCO's right end (the cube placed at x = 2 with extent 1: right end 2.5).
    (work / "drag.txt").write_text("script dragright\ntime 1 0.01\nshapes input 1\n"
                                   "meshes/block.msh 0 0 0  0 0 0  1 1 1\n"
                                   "meshCO meshes/cube.obj 2 0 0  1  50 0.1\n")
    status, _, err = convert(work, work / "drag.txt", "--output", work / "drag.json")
    expect(status == 0 and "dragright" in err, f"dragright: {status} {err}")
    drag = json.loads((work / "drag.json").read_text())["bodies"][0]
    grip = drag["moving"][0]
    expect(grip["velocity"] == [0.5, 0.0, 0.0], f"dragright velocity {grip}")
    expect(abs(grip["box"]["min"][0] - 0.96) < 1e-6 and abs(grip["box"]["max"][0] - 1.0) < 1e-6,
           f"dragright grips the right 4%: {grip['box']}")
    expect(abs(grip["end"] - 2.5 / 0.5) < 1e-9, f"dragright lets go at {grip.get('end')}")
    expect(drag["translate"][1] > 0.5, "dragright raised the shapes as fall does")

    (work / "broken.txt").write_text("time 3\n")
    status, _, err = convert(work, work / "broken.txt", "--output", work / "broken.json")
    expect(status == 1 and "broken.txt:1" in err and "fix" in err, f"broken script: {status} {err}")
    status, _, err = convert(work, work / "missing.txt")
    expect(status == 1 and "missing.txt" in err, f"missing script: {status} {err}")
    print("ipc_scene_to_json: all checks passed")


if __name__ == "__main__":
    main()
