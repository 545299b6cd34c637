"""drivers/reproduce.py writes the page with a picture per scene and runs the scene's probes.

Usage: test_reproduction_page.py INTACT WORK_DIR

Runs one scene that has a probe (ipc_rods_twist_h0.025) at the tiny size on 1 rank into WORK_DIR and writes
its page there. Checks: the probe ran (its summary.json, with steps); the page links the picture
reproduction/ipc_rods_twist_h0.025.png, which is a 480×320 PNG that is not blank. Exit status 77 (skipped)
when the page says that intact-render found no ParaView (its exit status 77).
"""

import json
import re
import shutil
import struct
import subprocess
import sys
import zlib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCENE = "ipc_rods_twist_h0.025"


def png_size_and_colours(path):
    """(width, height, number of distinct rows) of an 8-bit RGB or RGBA PNG, read with zlib only."""
    data = path.read_bytes()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError(f"{path} is not a PNG")
    width, height, depth, kind = struct.unpack(">IIBB", data[16:26])
    chunks, at = [], 8
    while at < len(data):
        length, name = struct.unpack(">I4s", data[at:at + 8])
        if name == b"IDAT":
            chunks.append(data[at + 8:at + 8 + length])
        at += 12 + length
    raw = zlib.decompress(b"".join(chunks))
    channels = {2: 3, 6: 4}[kind]
    stride = width * channels + 1
    # Filtered rows: distinct filtered rows still tell a blank picture (all rows alike) from a drawn one.
    rows = {raw[r * stride:(r + 1) * stride] for r in range(height)}
    return width, height, len(rows)


def main():
    intact, work = sys.argv[1], Path(sys.argv[2])
    shutil.rmtree(work, ignore_errors=True)
    page = work / "reproduction.md"
    done = subprocess.run([sys.executable, str(ROOT / "drivers/reproduce.py"), "--set", "tiny", "--only", SCENE,
                           "--np", "1", "--intact", intact, "--results", str(work / "runs"), "--page", str(page)],
                          capture_output=True, text=True)
    print(done.stdout + done.stderr)
    failed = []
    if done.returncode != 0:
        failed.append(f"reproduce.py exit status 0, found {done.returncode}")
    probe = work / "runs" / SCENE / "probe_ipc_stopping_rule" / "summary.json"
    if not probe.is_file() or json.loads(probe.read_text()).get("steps", 0) < 1:
        failed.append(f"the probe's run with steps in {probe}, found none")
    text = page.read_text() if page.is_file() else ""
    if "no picture: intact-render exit 77" in text:
        print("skipped: ParaView is not available here")
        return 77
    link = f"![{SCENE}](reproduction/{SCENE}.png)"
    if link not in text:
        failed.append(f"'{link}' on the page, found: {re.findall(r'no picture[^|]*', text) or 'no such line'}")
    picture = work / "reproduction" / f"{SCENE}.png"
    if picture.is_file():
        width, height, rows = png_size_and_colours(picture)
        if (width, height) != (480, 320):
            failed.append(f"a 480x320 picture, found {width}x{height}")
        if rows < 20:
            failed.append(f"a drawn picture (many distinct rows), found {rows} distinct rows")
    else:
        failed.append(f"{picture}, found no such file")
    for message in failed:
        print(f"FAIL: expected {message}")
    if not failed:
        print("all checks passed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
