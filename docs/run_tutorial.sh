#!/usr/bin/env bash
# Run the tutorial of docs/getting-started.md as a reader would: the shell blocks of its sections 2 to 4
# (write the scene, run it, check it, render a picture), in a scratch home folder, against a built intact.
#
#   bash docs/run_tutorial.sh [INTACT_BIN]     # default: <repo>/build/drivers/intact
#
# Each block runs as written, with `set -e`; the tutorial's INTACT_SRC and INTACT point at this clone and the
# program. The picture block needs ParaView (drivers/intact_render.sh installs it as root); where that
# script reports 77 (cannot install: not root, no apt-get), the picture is skipped with a message.
# Exit status: 0 when every block passed (the picture maybe skipped), 1 otherwise.
set -euo pipefail

say() { printf '[intact tutorial] %s\n' "$*" >&2; }

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bin=${1:-${INTACT_BIN:-$root/build/drivers/intact}}
[[ -x $bin ]] || {
  say "no intact program at $bin (bash .ci/setup.sh build, or give its path)"
  exit 1
}
bin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
blocks=$scratch/blocks
mkdir -p "$blocks"

# The ```bash blocks between "## 2." and "## 5." of the tutorial, one file each.
python3 - "$root/docs/getting-started.md" "$blocks" <<'PY'
import re
import sys

text = open(sys.argv[1], encoding="utf-8").read()
start, end = text.index("\n## 2."), text.index("\n## 5.")
for n, block in enumerate(re.findall(r"```bash\n(.*?)```", text[start:end], re.S)):
    with open(f"{sys.argv[2]}/{n:02d}.sh", "w", encoding="utf-8") as f:
        f.write(block)
PY

# The reader's environment: a home of their own, the clone and the program named as in section 1. The
# dependency cache stays where it is (the picture step keeps ParaView's Python modules there).
export INTACT_DEPS=${INTACT_DEPS:-${XDG_CACHE_HOME:-$HOME/.cache}/intact}
export HOME=$scratch/home
mkdir -p "$HOME"
export INTACT_SRC=$root INTACT=$bin
if [[ $(id -u) == 0 ]]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
# Small machines: one thread per rank, and Open MPI may place 2 ranks on fewer cores.
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1} OMP_PROC_BIND=${OMP_PROC_BIND:-false}
export OMPI_MCA_rmaps_base_oversubscribe=1

# The blocks share one shell, so a `cd` in one holds for the next, as in a reader's terminal.
script=$scratch/tutorial.sh
{
  echo 'set -euo pipefail'
  echo 'cd "$HOME"'
  for block in "$blocks"/*.sh; do
    printf 'echo "[intact tutorial] block %s" >&2\n' "$(basename "$block" .sh)"
    if grep -q 'intact_render.sh' "$block"; then
      # The picture: 77 means ParaView could not be installed here.
      printf 'status=0\n(\n%s\n) || status=$?\n' "$(cat "$block")"
      echo 'if ((status == 77)); then echo "[intact tutorial] picture skipped (no ParaView)" >&2;'
      echo 'elif ((status != 0)); then exit "$status"; else test -s cube.png; fi'
    else
      cat "$block"
    fi
  done
} >"$script"

if bash "$script"; then
  say "every block of docs/getting-started.md sections 2-4 passed"
else
  say "a block of docs/getting-started.md failed (see above)"
  exit 1
fi
