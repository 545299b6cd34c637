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


def grid_msh(counts, spacing=1.0):
    """A gmsh 2 file whose nodes are a grid of counts[0] x counts[1] x counts[2] points, x fastest (the converter
    reads nodes only; one tet keeps the file well-formed)."""
    nx, ny, nz = counts
    nodes = [(i * spacing, j * spacing, k * spacing) for k in range(nz) for j in range(ny) for i in range(nx)]
    return ("$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$Nodes\n" + f"{len(nodes)}\n"
            + "".join(f"{n + 1} {x} {y} {z}\n" for n, (x, y, z) in enumerate(nodes))
            + "$EndNodes\n$Elements\n1\n1 4 2 0 1 1 2 3 4\n$EndElements\n"), nodes


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
    scale = entry.get("scale", 1.0)
    scale = scale if isinstance(scale, list) else [scale] * 3
    q = apply(turn, [s * x for s, x in zip(scale, p)])
    return [x + t for x, t in zip(q, entry.get("translate", [0.0, 0.0, 0.0]))]


def bbox(points):
    return [min(p[a] for p in points) for a in range(3)], [max(p[a] for p in points) for a in range(3)]


def ipc_placement(shapes, turn=None, size=0.0, fall=False):
    """Where IPC's main.cpp and `script fall` put the vertices of shapes [(vertices, translate, angles,
    scale)]: each turned by Rx Ry Rz and moved; the whole model turned by `turn` = (axis, degrees) about
    (max - min) / 2, scaled to `size` with its lowest corner at the origin, raised by half its diagonal."""
    placed = [[[a + b for a, b in zip(apply(times(rotation(0, r[0]), times(rotation(1, r[1]), rotation(2, r[2]))),
                                            [s * c for s, c in zip(scale, p)]), t)] for p in points]
              for points, t, r, scale in shapes]
    low, high = bbox([p for points in placed for p in points])
    if turn:
        center = [(h - l) / 2 for l, h in zip(low, high)]
        placed = [[[a + c for a, c in zip(apply(rotation(turn[0], turn[1]), [x - c for x, c in zip(p, center)]),
                                          center)] for p in points] for points in placed]
        low, high = bbox([p for points in placed for p in points])
    if size:
        factor = size / max(h - l for l, h in zip(low, high))
        placed = [[[factor * (x - l) for x, l in zip(p, low)] for p in points] for points in placed]
        low, high = bbox([p for points in placed for p in points])
    if fall:
        rise = 0.5 * math.dist(low, high)
        placed = [[[p[0], p[1] + rise, p[2]] for p in points] for points in placed]
    return placed


def gap(ipc_points, entry, raw):
    """The largest distance between IPC's placement of a shape's vertices and Intact's of the entry."""
    return max(math.dist(p, intact_placement(entry, q)) for p, q in zip(ipc_points, raw))


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
    (work / "meshes/grid.msh").write_text(grid_msh((3, 2, 2))[0])
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
    # IPC's scripts other than null clear the Dirichlet nodes: under `script fall` the DBC box is dropped
    expect("fixed" not in bodies[1] and "script fall: the shapes' DBC boxes" in err,
           f"DBC under script fall: {bodies[1].get('fixed')} {err}")
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

    for check in (check_placement, check_plain, check_grips, check_rollers, check_codim, check_keys):
        check(work)

    (work / "broken.txt").write_text("time 3\n")
    status, _, err = convert(work, work / "broken.txt", "--output", work / "broken.json")
    expect(status == 1 and "broken.txt:1" in err and "fix" in err, f"broken script: {status} {err}")
    status, _, err = convert(work, work / "missing.txt")
    expect(status == 1 and "missing.txt" in err, f"missing script: {status} {err}")
    print("ipc_scene_to_json: all checks passed")


def check_placement(work):
    """rotateModel, size and fall as IPC places the shapes: from their vertices (a turned shape's box of
    corners is larger than its vertices' box), the whole model turned about half its extent."""
    _, nodes = grid_msh((3, 2, 2))
    tet = [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, 1.0, 0.0]]
    (work / "placed.txt").write_text("time 1 0.01\nsize 1.5\nscript fall\nshapes input 1\n"
                                     "meshes/block.msh 0 0 0  0 0 30  1 1 1\n")
    (work / "turned.txt").write_text("time 1 0.01\nshapes input 2\nmeshes/grid.msh 1 2 3  0 0 0  1 1 1\n"
                                     "meshes/block.msh 4 2 3  0 0 0  1 1 1\nrotateModel 1 0 0 -90\n")
    cases = {"placed": ([(tet, [0, 0, 0], [0, 0, 30], [1] * 3)], None, 1.5, True),
             "turned": ([(nodes, [1, 2, 3], [0] * 3, [1] * 3), (tet, [4, 2, 3], [0] * 3, [1] * 3)], (0, -90),
                        0.0, False)}
    for name, (shapes, turn, size, fall) in cases.items():
        status, _, err = convert(work, work / f"{name}.txt", "--output", work / f"{name}.json")
        expect(status == 0 and "rotateModel" not in err, f"{name}: {status} {err}")
        bodies = json.loads((work / f"{name}.json").read_text())["bodies"]
        for ipc, body, (raw, *_) in zip(ipc_placement(shapes, turn, size, fall), bodies, shapes):
            expect(gap(ipc, body, raw) < 1e-9, f"{name}: {body['name']} {gap(ipc, body, raw):g} from IPC's place")


def check_plain(work):
    """`shape input PATH`, sections, rotateModel by 0 and DBC boxes under script null."""
    # `shape input PATH`: one shape as its file has it; a section naming the constraintSolver is read, one
    # naming another is skipped; rotateModel by 0 degrees does nothing; under script null DBC boxes hold.
    (work / "plain.txt").write_text("time 1 0.01\nconstraintSolver IP\nshape input meshes/grid.msh\n"
                                    "shapes input 1\nmeshes/block.msh 5 0 0  0 0 0  1 1 1  "
                                    "DBC -0.1 -0.1 -0.1 1.1 0.1 1.1 0 0 0 0 0 0\n"
                                    "section interiorPoint\ndHat 5e-3\nsection end\n"
                                    "section SQP QP\ndHat 7e-3\nsection end\nrotateModel 1 0 0 0\n")
    status, _, err = convert(work, work / "plain.txt", "--output", work / "plain.json")
    expect(status == 0 and "rotateModel" not in err and "section interiorPoint" not in err, f"plain: {err}")
    plain = json.loads((work / "plain.json").read_text())
    first = plain["bodies"][0]
    expect(len(plain["bodies"]) == 2 and first["mesh"] == {"file": "meshes/grid.msh"}
           and not {"scale", "rotate_deg", "translate"} & set(first), f"shape input: {plain['bodies']}")
    expect(len(plain["bodies"][1].get("fixed", [])) == 1, "DBC without velocity becomes a fixed box (script null)")
    expect(plain["contact"]["dhat_relative"] == 5e-3, f"section interiorPoint read: {plain['contact']}")


def check_grips(work):
    """AnimScripter's scripts that grip nodes, as moving boxes where IPC's init and step put them."""
    _, nodes = grid_msh((3, 2, 2))
    script = "time 1 0.01\nscript {}\nshapes input 1\nmeshes/grid.msh 0 0 0  0 0 0  1 1 1\n"
    outputs = {}
    for name in ("twist", "dragdown", "pushRightMost1", "fallNoShift"):
        (work / f"{name}.txt").write_text(script.format(name))
        status, _, err = convert(work, work / f"{name}.txt", "--output", work / f"{name}.json")
        expect(status == 0 and "is not mapped" not in err, f"script {name}: {status} {err}")
        outputs[name] = json.loads((work / f"{name}.json").read_text())["bodies"][0]

    def held(item, body):
        return [n for n, p in enumerate(nodes) if all(item["box"]["min"][a] <= c <= item["box"]["max"][a]
                                                      for a, c in enumerate(intact_placement(body, p)))]
    left, right = outputs["twist"]["moving"]
    expect(held(left, outputs["twist"]) == [0, 3, 6, 9] and held(right, outputs["twist"]) == [2, 5, 8, 11],
           f"twist grips the ends: {left} {right}")
    expect(left["angular_velocity"] == [-0.4 * math.pi, 0.0, 0.0] and right["angular_velocity"] ==
           [0.4 * math.pi, 0.0, 0.0] and left["center"] == [1.0, 0.5, 0.5], f"twist turns: {left} {right}")
    drag = outputs["dragdown"]
    (grip,) = drag["moving"]
    expect(drag["translate"][1] > 1.0 and grip["velocity"] == [0.0, -1.5, 0.0], f"dragdown: {drag}")
    expect(held(grip, drag) == [1, 7], f"dragdown grips the bottom middle (x = 1 of 0..2, y = 0): {grip}")
    (grip,) = outputs["pushRightMost1"]["moving"]
    expect(held(grip, outputs["pushRightMost1"]) == [2] and grip["velocity"] == [-0.15, 0.0, 0.0],
           f"pushRightMost1 pushes the first rightmost node alone: {grip}")
    expect("translate" not in outputs["fallNoShift"], "fallNoShift does not raise the shapes")


def check_rollers(work):
    """IPC's DCO scripts: turning and held kinematic (.obj) shapes."""
    # DCORotCylinders: the first four shapes turn about their vertices' box centres; DCOFix holds .obj shapes
    cylinders = "".join(f"meshes/cube.obj {x} 0 0  0 0 0  1 1 1\n" for x in (0, 3, 6, 9))
    (work / "rollers.txt").write_text("time 1 0.01\nscript DCORotCylinders\nshapes input 5\n" + cylinders
                                      + "meshes/block.msh 0 5 0  0 0 0  1 1 1\n")
    status, _, err = convert(work, work / "rollers.txt", "--output", work / "rollers.json")
    expect(status == 0 and "not mapped" not in err, f"DCORotCylinders: {status} {err}")
    rollers = json.loads((work / "rollers.json").read_text())["obstacles"]
    rates = [[0.5 * math.pi, 0, 0], [-0.5 * math.pi, 0, 0], [0, 0, -0.5 * math.pi], [0, 0, 0.5 * math.pi]]
    for roller, x, rate in zip(rollers, (0, 3, 6, 9), rates):
        expect(roller["angular_velocity"] == rate and roller["center"] == [x + 3.0, 3.0, 3.0],
               f"DCORotCylinders roller {roller}")
    (work / "knives.txt").write_text("time 1 0.01\nscript DCOFix\nshapes input 2\n"
                                     "meshes/block.msh 0 5 0  0 0 0  1 1 1\n"
                                     "meshes/cube.obj 0 0 0  0 0 0  1 1 1  linearVelocity 1 0 0\n")
    status, _, err = convert(work, work / "knives.txt", "--output", work / "knives.json")
    knife = json.loads((work / "knives.json").read_text())["obstacles"][0]
    expect(status == 0 and "not mapped" not in err and "velocity" not in knife, f"DCOFix: {err} {knife}")


def check_codim(work):
    """IPC's .seg and .pt shapes as obstacles, and an obstacle's angularVelocity."""
    # .seg and .pt shapes are kinematic like .obj ones; absent, IPC takes the .obj beside them (edges, vertices)
    (work / "codim.txt").write_text("time 1 0.01\nshapes input 3\nmeshes/block.msh 0 5 0  0 0 0  1 1 1\n"
                                    "meshes/cube.seg 0 0 0  0 0 0  1 1 1\nmeshes/cube.pt 0 0 0  0 0 0  1 1 1\n")
    status, _, err = convert(work, work / "codim.txt", "--output", work / "codim.json")
    codim = json.loads((work / "codim.json").read_text())
    expect(status == 0 and len(codim["bodies"]) == 1 and len(codim["obstacles"]) == 2, f"codim shapes: {err}")
    edges = (work / codim["obstacles"][0]["mesh"]["file"]).read_text().splitlines()
    points = (work / codim["obstacles"][1]["mesh"]["file"]).read_text().splitlines()
    expect(sorted(l for l in edges if l[0] == "l") == ["l 1 2", "l 2 3", "l 3 1"] and
           sum(l[0] == "v" for l in edges) == 8, f".seg from the .obj's edges: {edges}")
    expect(len(points) == 8 and all(l[0] == "v" for l in points), f".pt from the .obj's vertices: {points}")

    # an obstacle's angularVelocity (script null) turns it about its vertices' box centre, as IPC's step does
    (work / "spin.txt").write_text("time 1 0.01\nshapes input 2\nmeshes/block.msh 0 5 0  0 0 0  1 1 1\n"
                                   "meshes/cube.obj 1 0 0  0 0 0  1 1 1  angularVelocity 0 0 90\n")
    convert(work, work / "spin.txt", "--output", work / "spin.json")
    spin = json.loads((work / "spin.json").read_text())["obstacles"][0]
    expect(spin["center"] == [4.0, 3.0, 3.0] and spin["angular_velocity"] == [0.0, 0.0, 0.5 * math.pi],
           f"angularVelocity centre {spin}")


def check_keys(work):
    """`tuning` as IPC's Optimizer reads it: the d̂ and ε_v it converges to (their targets, defaults 1e-3),
    ε_v times the bodies' bbox diagonal in m/s."""
    shapes = "shapes input 1\nmeshes/grid.msh 0 0 0  0 0 0  1 1 1\nselfFric 0.2\n"
    (work / "tuning2.txt").write_text("time 1 0.01\n" + shapes + "tuning 2\n1e-4\n5e-1\n")
    (work / "tuning6.txt").write_text("time 1 0.01\n" + shapes + "tuning 6\n0\n1e-3\n2e-4\n1e-9\n1e-5\n3e-6\n")
    expected = {"tuning2": (1e-3, 1e-3), "tuning6": (2e-4, 3e-6)}
    for name, (dhat, epsv) in expected.items():
        status, _, err = convert(work, work / f"{name}.txt", "--output", work / f"{name}.json")
        contact = json.loads((work / f"{name}.json").read_text())["contact"]
        expect(status == 0 and contact["dhat_relative"] == dhat and math.isclose(contact["epsv"], epsv * 6 ** 0.5),
               f"{name}: {contact} {err}")


if __name__ == "__main__":
    main()
