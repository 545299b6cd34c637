#!/usr/bin/env python3
"""Write a roller for inputs/rollers.json: the side of a cylinder about the y axis (an .obj triangle mesh,
no caps), centred at the origin.

    python3 make_roller.py OUT.obj [--radius R] [--length L] [--segments N]

Defaults: radius 0.05 m, length 0.2 m, 48 segments (the facets' mid-points lie 0.21% of R inside the
circle). The scene places two copies with `translate` and turns them with `angular_velocity`.
"""
import math
import sys


def main(argv):
    if len(argv) < 2 or argv[1].startswith("-"):
        sys.exit(__doc__)
    out = argv[1]
    options = {"--radius": 0.05, "--length": 0.2, "--segments": 48}
    args = argv[2:]
    while args:
        key = args.pop(0)
        if key not in options or not args:
            sys.exit(f"make_roller.py: unknown option or missing value: {key}\n{__doc__}")
        options[key] = float(args.pop(0))
    radius, length, segments = options["--radius"], options["--length"], int(options["--segments"])
    lines = [f"# roller: radius {radius} m, length {length} m, {segments} segments (make_roller.py)"]
    for y in (-0.5 * length, 0.5 * length):
        for i in range(segments):
            angle = 2.0 * math.pi * i / segments
            lines.append(f"v {radius * math.cos(angle):.12g} {y:.12g} {radius * math.sin(angle):.12g}")
    for i in range(segments):
        a, b = i + 1, (i + 1) % segments + 1
        c, d = b + segments, a + segments
        lines.append(f"f {a} {b} {c}")
        lines.append(f"f {a} {c} {d}")
    with open(out, "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main(sys.argv)
