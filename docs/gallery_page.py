"""Write docs/gallery.md from the runs docs/gallery.sh made (run by it; standard library only).

    /usr/bin/python3 docs/gallery_page.py ROOT WORK RESULTS TABLE

RESULTS: one line per scene run now (scene, colour, extra arguments, milliseconds, what it shows; tab
separated); TABLE: gallery.sh's table of scenes (scene|colour|extra|what it shows). Scenes not run now keep
their row of the existing page.
"""

import json
import re
import sys
from pathlib import Path

root, work, results, table = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3]), sys.argv[4]
scenes = [line.split("|", 3) for line in table.splitlines() if line.strip()]
page = root / "docs" / "gallery.md"
rows = {}
if page.is_file():
    for line in page.read_text().splitlines():
        match = re.match(r"\| \[`(\w+)`\]", line)
        if match:
            rows[match.group(1)] = line
for line in results.read_text().splitlines():
    scene, colour, extra, milliseconds, _ = line.split("\t")
    records = [json.loads(l) for l in (work / scene / "metrics.jsonl").read_text().splitlines() if l.strip()]
    last = records[-1]
    rows[scene] = (f"| [`{scene}`](#{scene}) | {last['elements']} tets, {last['nodes']} nodes "
                   f"| {last['step']} to t = {last['time']:.3g} s | {int(milliseconds) / 1000:.1f} s "
                   f"| {'`' + extra + '`' if extra else ''} |")

text = ["# Gallery", "",
        "Every scene of `inputs/`, run on 2 ranks and pictured at its last written step by",
        "[`intact-render`](output.md#pictures-without-a-display). The run time is the wall time of the whole",
        "`mpirun -n 2 intact run` command (start-up and output included) on a 2-core machine that was running",
        "other jobs at the same time, so they are upper bounds: an idle machine is faster. A scene whose run",
        "takes more than about a minute is run shorter here, by the override in the last column.",
        "`bash docs/gallery.sh` reruns the scenes and regenerates the pictures and this page;",
        "`bash docs/gallery.sh SCENE ...` redoes some.", "",
        "| scene | size | steps | run time, 2 ranks | shortened by |", "| --- | --- | --- | --- | --- |"]
text += [rows[scene] for scene, *_ in scenes if scene in rows]
text.append("")
for scene, colour, extra, what in scenes:
    what = what.replace("\\`", "`")
    text += [f"## {scene}", "", f"{what[0].upper()}{what[1:]}. Coloured by {colour}.", "",
             f"![{scene}](img/gallery/{scene}.png)", "", "```bash",
             f"mpirun -n 2 intact run inputs/{scene}.json --output out/{scene}{' ' + extra if extra else ''}",
             f"intact-render out/{scene} --color {colour} --png {scene}.png", "```", ""]
page.write_text("\n".join(text).rstrip() + "\n")
print(f"wrote {page}")
