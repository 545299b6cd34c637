"""MkDocs hook: read lists the way GitHub does.

GitHub starts a list right after a paragraph line ("Methods:" followed by "- setup: ..."); Python-Markdown,
which MkDocs uses, needs a blank line first and otherwise prints the items as one paragraph. Files that are
read on GitHub as well as on this site (slurm/README.md, shown as the Slurm script reference) are written
GitHub's way, so this hook inserts the blank line before such a list, outside fenced code blocks.
"""
import re

ITEM = re.compile(r"^\s{0,3}([-*+]|\d+\.)\s")
FENCE = re.compile(r"^\s*(```|~~~)")


def on_page_markdown(markdown, **kwargs):
    out = []
    in_fence = False
    in_list = False
    previous = ""
    for line in markdown.split("\n"):
        if FENCE.match(line):
            in_fence = not in_fence
        elif not in_fence:
            if not line.strip():
                in_list = False
            elif ITEM.match(line):
                if previous.strip() and not in_list and not previous.lstrip().startswith("|"):
                    out.append("")
                in_list = True
        out.append(line)
        previous = line
    return "\n".join(out)
