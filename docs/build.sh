#!/usr/bin/env bash
# Build the documentation site from docs/ with MkDocs, strictly, and check every link in it.
#
#   bash docs/build.sh [OUTPUT_DIR]      # default: <repo>/site (ignored by git)
#
# - Installs Debian's `mkdocs` package with apt-get when mkdocs is missing (needs root; no PyPI).
# - `mkdocs build --strict`: a link to a missing page or file, or a nav entry without its page, fails.
# - Fails too on what MkDocs 1.4 only reports: a page under docs/ left out of the nav, and a link to an
#   anchor (#section) that the target page does not have. README.md's links into docs/ are checked as well.
# Exit status: 0 when the site built without a warning, 1 otherwise (2: mkdocs cannot be installed).
set -euo pipefail

say() { printf '[intact docs] %s\n' "$*" >&2; }

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=${1:-$root/site}
mkdir -p "$out"
out=$(cd "$out" && pwd)

if ! command -v mkdocs >/dev/null; then
  if [[ $(id -u) != 0 ]] || ! command -v apt-get >/dev/null; then
    say "mkdocs is missing; install Debian's package as root: apt-get install --no-install-recommends mkdocs"
    exit 2
  fi
  say "installing Debian's mkdocs"
  export DEBIAN_FRONTEND=noninteractive
  apt_install() {
    apt-get install -y -qq --no-install-recommends -o DPkg::Lock::Timeout=600 mkdocs >/dev/null
  }
  apt_install || { apt-get update -qq -o DPkg::Lock::Timeout=600 && apt_install; }
fi

log=$(mktemp)
trap 'rm -f "$log"' EXIT
status=0
mkdocs build --strict --clean -f "$root/mkdocs.yml" -d "$out" >"$log" 2>&1 || status=$?
cat "$log" >&2
if ((status != 0)); then
  say "mkdocs build --strict failed (status $status)"
  exit 1
fi
if grep -q "WARNING" "$log"; then
  say "mkdocs reported warnings"
  exit 1
fi
if grep -q "not included in the \"nav\"" "$log"; then
  say "pages under docs/ are missing from the nav in mkdocs.yml"
  exit 1
fi

# Anchors and local targets in the built HTML, and README.md's links into docs/.
python3 - "$out" "$root" <<'PY'
import html.parser
import os
import re
import sys
import urllib.parse

site, root = sys.argv[1], sys.argv[2]


class Page(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.ids, self.links = set(), []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if "id" in a:
            self.ids.add(a["id"])
        if tag == "a" and "name" in a:
            self.ids.add(a["name"])
        for key in ("href", "src"):
            if a.get(key):
                self.links.append(a[key])


pages = {}
for folder, _, files in os.walk(site):
    for name in files:
        if name.endswith(".html"):
            path = os.path.join(folder, name)
            parser = Page()
            with open(path, encoding="utf-8") as f:
                parser.feed(f.read())
            pages[os.path.normpath(path)] = parser

problems = []
for path, page in sorted(pages.items()):
    if os.path.basename(path) in ("search.html", "404.html"):
        continue
    for link in page.links:
        parts = urllib.parse.urlsplit(link)
        if parts.scheme or parts.netloc or link.startswith("mailto:"):
            continue
        target = path if not parts.path else os.path.normpath(
            os.path.join(os.path.dirname(path), urllib.parse.unquote(parts.path)))
        if parts.path and not os.path.exists(target):
            problems.append(f"{os.path.relpath(path, site)}: link to missing {link}")
            continue
        if parts.fragment and target in pages and parts.fragment not in pages[target].ids:
            problems.append(f"{os.path.relpath(path, site)}: link to missing anchor {link}")

readme = os.path.join(root, "README.md")
with open(readme, encoding="utf-8") as f:
    text = f.read()
for link in re.findall(r"\]\(([^)\s]+)\)", text):
    parts = urllib.parse.urlsplit(link)
    if parts.scheme or not parts.path:
        continue
    if not os.path.exists(os.path.join(root, parts.path)):
        problems.append(f"README.md: link to missing {link}")

for p in problems:
    print(f"[intact docs] broken: {p}", file=sys.stderr)
sys.exit(1 if problems else 0)
PY

say "site built in $out (open $out/index.html)"
