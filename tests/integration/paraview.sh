#!/usr/bin/env bash
# Run a ParaView Python script with Debian's ParaView (pvbatch), off screen.
#
#   bash tests/integration/paraview.sh tests/integration/paraview_check.py OUTPUT_DIR [options]
#
# What it sets up, once, when missing:
#   - Debian's `paraview` (pvbatch), `xvfb` and `xauth`, with apt-get (needs root);
#   - ParaView's Python modules. Debian ships them in python3-paraview, which conflicts with
#     python3-vtk9, a dependency of libvtk9-dev that Intact builds against; installing it would
#     remove libvtk9-dev. So the package is downloaded and unpacked into
#     $INTACT_DEPS/paraview-python-<version> instead, and pvbatch gets it through PYTHONPATH.
# Debian's pvbatch renders through X only (no EGL/OSMesa; --force-offscreen-rendering still needs
# an X server), so without a DISPLAY it runs under xvfb-run.
# Exit status: the script's, or 77 (skipped) when ParaView cannot be installed (not root, no apt).
#
# Variables: INTACT_DEPS (default: ${XDG_CACHE_HOME:-~/.cache}/intact), DISPLAY (set: no xvfb-run).
set -euo pipefail

say() { printf '[intact paraview] %s\n' "$*" >&2; }
skip() {
  say "skipped: $*"
  exit 77
}

(($# >= 1)) || {
  say "usage: bash tests/integration/paraview.sh SCRIPT.py [ARGS...]"
  exit 2
}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
deps=${INTACT_DEPS:-${XDG_CACHE_HOME:-$HOME/.cache}/intact}

installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }

missing=()
for p in paraview xvfb xauth; do
  installed "$p" || missing+=("$p")
done
if ((${#missing[@]})); then
  if [[ $(id -u) != 0 ]] || ! command -v apt-get >/dev/null; then
    skip "Debian packages ${missing[*]} are missing and installing them needs root and apt-get"
  fi
  say "installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
command -v pvbatch >/dev/null || skip "pvbatch not found although paraview is installed"

# ParaView's Python modules, unpacked privately (see the header for why not installed).
version=$(dpkg-query -W -f='${Version}' paraview)
modules=$deps/paraview-python-$version/usr/lib/python3/dist-packages
if [[ ! -d $modules/paraview ]]; then
  command -v apt-get >/dev/null || skip "no apt-get to download python3-paraview"
  say "unpacking python3-paraview $version into $deps/paraview-python-$version"
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  # An explicit version: this works even where python3-paraview is pinned away from installation.
  (cd "$work" && apt-get download -qq "python3-paraview=$version" 2>/dev/null) || {
    apt-get update -qq
    (cd "$work" && apt-get download -qq "python3-paraview=$version")
  }
  mkdir -p "$deps"
  rm -rf "$deps/paraview-python-$version.tmp"
  dpkg-deb -x "$work"/python3-paraview_*.deb "$deps/paraview-python-$version.tmp"
  mv "$deps/paraview-python-$version.tmp" "$deps/paraview-python-$version"
  rm -rf "$work"
  trap - EXIT
fi
export PYTHONPATH=$modules${PYTHONPATH:+:$PYTHONPATH}

# pvbatch is an MPI program: as root, Open MPI's singleton start needs these.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
if [[ -n ${DISPLAY:-} ]]; then
  exec pvbatch "$@"
fi
# `-a` takes the first free display from `-n` on; starting from a number of this process's own (not 99
# every time) keeps a run from taking the display of the previous one's X server while that one is
# still shutting down (seen in ctest: "bad X server connection. DISPLAY=:99" right after another check).
# A virtual X server that is slow to start makes pvbatch abort ("bad X server connection", seen on a loaded
# machine): that is tried again, on another display, up to five times (as drivers/intact_render.sh does).
log=$(mktemp)
trap 'rm -f "$log"' EXIT
for try in 1 2 3 4 5; do
  status=0
  xvfb-run -a -n $((100 + ($$ + 97 * try) % 800)) -s "-screen 0 1920x1200x24" pvbatch "$@" 2>"$log" || status=$?
  cat "$log" >&2
  if ((status == 0)) || ! grep -q "bad X server connection" "$log"; then
    exit "$status"
  fi
  say "the virtual X server was not ready (pvbatch aborted, status $status); try $try of 5"
done
exit 1
