"""Check a picture intact-render wrote: its size, and that it shows something (not one flat colour).

    /usr/bin/python3 tests/integration/render_check.py PICTURE.png --size WxH [--min-colours N]
        [--min-drawn FRACTION]

Reads the PNG with the standard library only (zlib, struct): 8-bit RGB or RGBA, not interlaced, as VTK
writes them. Checks: the width and height; at least --min-colours distinct colours (default 20: a mesh with
shading, edges, legend and title has hundreds, a blank picture one); at least --min-drawn of the pixels
(default 0.01) differ from the most common colour (the background). Prints one "FAIL: expected ..., found
..." line per failed check; exit status 1 if any failed.
"""

import argparse
import struct
import sys
import zlib
from collections import Counter


def read_png(path):
    """(width, height, rows of bytes with `channels` bytes a pixel, channels)."""
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError(f"{path} is not a PNG file")
    pos, idat, header = 8, [], None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat.append(body)
        elif kind == b"IEND":
            break
    width, height, depth, colour_type, _, _, interlace = header
    channels = {2: 3, 6: 4}.get(colour_type)
    if depth != 8 or channels is None or interlace:
        raise ValueError(f"{path}: only 8-bit RGB/RGBA, not interlaced, is read here (found depth {depth}, "
                         f"colour type {colour_type}, interlace {interlace})")
    raw = zlib.decompress(b"".join(idat))
    stride = width * channels
    rows, previous = [], bytearray(stride)
    for y in range(height):
        start = y * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1:start + 1 + stride])
        for i in range(stride):
            left = line[i - channels] if i >= channels else 0
            up = previous[i]
            corner = previous[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + left) & 0xFF
            elif kind == 2:
                line[i] = (line[i] + up) & 0xFF
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 0xFF
            elif kind == 4:
                p = left + up - corner
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
                line[i] = (line[i] + (left if pa <= pb and pa <= pc else up if pb <= pc else corner)) & 0xFF
        rows.append(bytes(line))
        previous = line
    return width, height, rows, channels


def main():
    parser = argparse.ArgumentParser(description=__doc__.partition("\n\n")[0])
    parser.add_argument("png")
    parser.add_argument("--size", required=True, help="expected WIDTHxHEIGHT")
    parser.add_argument("--min-colours", type=int, default=20)
    parser.add_argument("--min-drawn", type=float, default=0.01)
    args = parser.parse_args()

    failures = 0

    def check(condition, message):
        nonlocal failures
        if not condition:
            failures += 1
            print(f"FAIL: expected {message}", flush=True)

    width, height, rows, channels = read_png(args.png)
    expected = tuple(int(v) for v in args.size.split("x"))
    check((width, height) == expected, f"a {expected[0]}x{expected[1]} picture, found {width}x{height}")
    colours = Counter()
    for row in rows:
        for x in range(0, len(row), channels):
            colours[row[x:x + 3]] += 1
    background, count = colours.most_common(1)[0]
    drawn = width * height - count
    print(f"{args.png}: {width}x{height}, {len(colours)} distinct colours, background "
          f"rgb{tuple(background)}, {drawn} other pixels ({drawn / (width * height):.1%})")
    check(len(colours) >= args.min_colours,
          f"at least {args.min_colours} distinct colours (not a blank picture), found {len(colours)}")
    check(drawn >= args.min_drawn * width * height,
          f"at least {args.min_drawn:.0%} of the pixels off the background, found {drawn}")
    print("picture checks: " + ("passed" if failures == 0 else f"{failures} failed"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
