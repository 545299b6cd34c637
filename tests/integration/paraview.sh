#!/usr/bin/env bash
# Run a ParaView Python script with Debian's ParaView (pvbatch), off screen.
#
#   bash tests/integration/paraview.sh tests/integration/paraview_check.py OUTPUT_DIR [options]
#
# The set-up (Debian's paraview, xvfb and xauth; ParaView's Python modules unpacked privately, as they
# conflict with the VTK that Intact builds against) and the virtual X server with its retries are
# intact-render's: drivers/intact_render.sh, sourced, gives paraview_setup and paraview_batch.
# Exit status: the script's, or 77 (skipped) when ParaView cannot be installed (not root, no apt).
#
# Variables: INTACT_DEPS (default: ${XDG_CACHE_HOME:-~/.cache}/intact), DISPLAY (set: no xvfb-run).
set -euo pipefail

say_as="intact paraview"
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source=../../drivers/intact_render.sh
source "$root/drivers/intact_render.sh"

(($# >= 1)) || {
  say "usage: bash tests/integration/paraview.sh SCRIPT.py [ARGS...]"
  exit 2
}
paraview_setup
paraview_batch "$@"
