#!/usr/bin/env bash
# intact-render as a user gets it: installed with `cmake --install`, run on a 2-rank output folder.
#
#   bash tests/integration/render_test.sh BUILD_DIR OUTPUT_DIR WORK_DIR
#
# 1. Installs the build into WORK_DIR/prefix and checks that bin/intact, bin/intact-render and
#    share/intact/intact_render.py are there.
# 2. Mistakes are refused before ParaView starts (exit status 2), naming the argument and the fix: a
#    missing folder, an unknown array, a frame out of range.
# 3. Renders the last frame coloured by speed (800x600) and every frame coloured by body into a folder of
#    PNGs; each picture must have the size asked for and not be blank (tests/integration/render_check.py).
# Exit status 77 (skipped) when ParaView cannot be installed here (intact-render's own 77).
set -euo pipefail

build=$1 out=$2 work=$3
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
say() { printf '[render test] %s\n' "$*"; }
fail() {
  say "FAIL: $*"
  exit 1
}

rm -rf "$work"
mkdir -p "$work"
cmake --install "$build" --prefix "$work/prefix" >/dev/null
for f in bin/intact bin/intact-render share/intact/intact_render.py; do
  [[ -f $work/prefix/$f ]] || fail "expected $work/prefix/$f after cmake --install, found none"
done
render=$work/prefix/bin/intact-render
frames=$(grep -c 'part="0"' "$out/intact.pvd")
say "installed $render; $out has $frames frames"

refused() { # refused PATTERN ARGS...: exit status 2 and PATTERN in the message
  local pattern=$1 status=0
  shift
  "$render" "$@" >"$work/refused.txt" 2>&1 || status=$?
  ((status == 2)) || fail "exit status 2 for intact-render $*, found $status: $(cat "$work/refused.txt")"
  grep -q -- "$pattern" "$work/refused.txt" ||
    fail "'$pattern' in the message of intact-render $*, found: $(cat "$work/refused.txt")"
  say "refused as expected: $(head -1 "$work/refused.txt")"
}
refused "the output folder '$work/missing' does not exist; fix:" "$work/missing"
refused "\-\-color 'pressure' is not an array Intact writes; fix: one of rank, body, speed" "$out" --color pressure
refused "\-\-frame $frames is out of range: '$out' has $frames frames; fix: give 0..$((frames - 1)) or last" \
  "$out" --frame "$frames"

status=0
"$render" "$out" --frame last --color speed --size 800x600 --png "$work/last_speed.png" || status=$?
((status == 77)) && exit 77
((status == 0)) || fail "intact-render exit status 0, found $status"
/usr/bin/python3 "$here/render_check.py" "$work/last_speed.png" --size 800x600

"$render" "$out" --color body --size 640x480 --movie "$work/movie/"
found=$(find "$work/movie" -name 'frame_*.png' | wc -l)
((found == frames)) || fail "$frames movie frames in $work/movie, found $found"
for png in "$work"/movie/frame_*.png; do
  /usr/bin/python3 "$here/render_check.py" "$png" --size 640x480
done
say "all checks passed"
