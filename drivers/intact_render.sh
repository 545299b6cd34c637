#!/usr/bin/env bash
# intact-render: a picture (PNG) or a movie of an Intact output folder, without a display, with Debian's ParaView.
#
#   intact-render OUT [--frame N|last] [--color rank|body|speed|displacement] [--png FILE]
#                     [--movie FILE.ogv|FILE.avi|FILE.mp4|DIR/] [--size WxH] [--fps N] [--title TEXT]
#
# OUT is a folder `intact run` wrote (it holds intact.pvd). Without --movie it writes one PNG of frame N
# (0 is the initial state, `last` the default) to --png (default: OUT/render/frame_<N>_<color>.png).
# With --movie it renders every frame with one fixed camera and colour range into DIR/ (numbered PNGs,
# when the argument ends with / or is a folder), FILE.ogv (Theora) or FILE.avi (MJPEG), both written by
# ParaView's own libraries, or FILE.mp4 (H.264, needs the `ffmpeg` program: apt-get install ffmpeg).
#
# What it sets up, once, when missing:
#   - Debian's `paraview` (pvbatch), `xvfb` and `xauth`: installed with apt-get when run as root,
#     otherwise it says which command to run;
#   - ParaView's Python modules: Debian ships them in python3-paraview, which conflicts with
#     python3-vtk9 (a dependency of libvtk9-dev that Intact builds against), so the package is downloaded
#     and unpacked into $INTACT_DEPS/paraview-python-<version> instead of being installed.
# Nothing is written beside the program or into a source checkout.
#
# Sourced (`source intact_render.sh`), it only defines paraview_setup and paraview_batch (below), which
# tests/integration/paraview.sh uses to run its ParaView checks.
#
# Variables: INTACT_DEPS (default ${XDG_CACHE_HOME:-~/.cache}/intact), DISPLAY (set: no xvfb-run).
# Exit status: 0 done; 1 rendering failed; 2 bad arguments (the message names the argument and the fix);
# 77 ParaView is not available and cannot be installed here.
set -euo pipefail

say() { printf '[%s] %s\n' "${say_as:-intact-render}" "$*" >&2; }
usage_error() {
  say "error: $*"
  say "usage: intact-render OUT [--frame N|last] [--color rank|body|speed|displacement] [--png FILE]"
  say "       [--movie FILE.ogv|FILE.avi|FILE.mp4|DIR/] [--size WxH] [--fps N] [--title TEXT]  (--help: more)"
  exit 2
}
unavailable() {
  say "ParaView is not available: $*"
  exit 77
}

# paraview_setup: Debian's ParaView, xvfb and xauth, and ParaView's Python modules on PYTHONPATH (see the
# header); exits with status 77 (unavailable) where they cannot be had.
installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }

paraview_setup() {
  command -v dpkg-query >/dev/null || unavailable "this is not a Debian system (no dpkg-query); render with your own ParaView"
  local p missing=()
  for p in paraview xvfb xauth; do
    installed "$p" || missing+=("$p")
  done
  if [[ -n ${DISPLAY:-} ]] && installed paraview; then
    missing=()
  fi
  if ((${#missing[@]})); then
    if [[ $(id -u) != 0 ]] || ! command -v apt-get >/dev/null; then
      unavailable "Debian packages ${missing[*]} are missing; fix: sudo apt-get install ${missing[*]}"
    fi
    say "installing ${missing[*]} (once)"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null ||
      unavailable "apt-get install ${missing[*]} failed"
  fi
  command -v pvbatch >/dev/null || unavailable "pvbatch not found although paraview is installed"

  deps=${INTACT_DEPS:-${XDG_CACHE_HOME:-$HOME/.cache}/intact}
  version=$(dpkg-query -W -f='${Version}' paraview)
  modules=$deps/paraview-python-$version/usr/lib/python3/dist-packages
  if [[ ! -d $modules/paraview ]]; then
    command -v apt-get >/dev/null || unavailable "no apt-get to download python3-paraview"
    say "unpacking python3-paraview $version into $deps/paraview-python-$version (once)"
    work=$(mktemp -d)
    trap 'rm -rf "$work"' EXIT
    # An explicit version: this works even where python3-paraview is pinned away from installation.
    (cd "$work" && apt-get download -qq "python3-paraview=$version" 2>/dev/null) ||
      { [[ $(id -u) == 0 ]] && apt-get update -qq && (cd "$work" && apt-get download -qq "python3-paraview=$version"); } ||
      unavailable "cannot download python3-paraview $version (try: sudo apt-get update)"
    mkdir -p "$deps" || unavailable "cannot create '$deps'; fix: set INTACT_DEPS to a writable folder"
    rm -rf "$deps/paraview-python-$version.tmp.$$"
    dpkg-deb -x "$work"/python3-paraview_*.deb "$deps/paraview-python-$version.tmp.$$"
    mv -T "$deps/paraview-python-$version.tmp.$$" "$deps/paraview-python-$version" 2>/dev/null ||
      rm -rf "$deps/paraview-python-$version.tmp.$$" # another render unpacked it first
    rm -rf "$work"
    trap - EXIT
  fi
  export PYTHONPATH=$modules${PYTHONPATH:+:$PYTHONPATH}
}

# paraview_batch ARGS...: pvbatch ARGS, under a virtual X server unless DISPLAY is set; its exit status.
paraview_batch() {
  # pvbatch is an MPI program: as root, Open MPI's singleton start needs these.
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  if [[ -n ${DISPLAY:-} ]]; then
    exec pvbatch "$@"
  fi
  # Debian's pvbatch renders through X only (no EGL/OSMesa), so it runs under a virtual X server. `-a` takes
  # the first free display from `-n` on; starting from a number of this process's own keeps two renders
  # started together from racing for the same display. A virtual X server that is slow to start makes pvbatch
  # abort ("bad X server connection"), and xvfb-run sometimes fails to remove its temporary folder when the
  # server exits ("problem while cleaning up"): both are tried again, on another display, up to five times. pvbatch's
  # messages are shown when it fails (on success they are only the movie encoder's notes).
  log=$(mktemp)
  trap 'rm -f "$log"' EXIT
  for try in 1 2 3 4 5; do
    status=0
    xvfb-run -a -n $((100 + ($$ + 97 * try) % 800)) -s "-screen 0 1920x1200x24" pvbatch "$@" 2>"$log" || status=$?
    if ((status == 0)) || ! grep -q -e "bad X server connection" -e "problem while cleaning up" "$log"; then
      ((status == 0)) || cat "$log" >&2
      return "$status"
    fi
    say "the virtual X server failed (status $status); try $try of 5"
  done
  cat "$log" >&2
  return 1
}

main() {
  here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
  script=""
  for candidate in "$here/intact_render.py" "$here/../share/intact/intact_render.py"; do
    if [[ -f $candidate ]]; then
      script=$candidate
      break
    fi
  done
  [[ -n $script ]] || {
    say "error: intact_render.py is neither beside this script nor in ../share/intact; reinstall Intact"
    exit 1
  }


  # ---- arguments: checked here, before ParaView starts, so that a mistake costs no time --------------------
  out="" frame=last color=rank png="" movie="" size=1200x800 fps=10 title=""
  need_value() { (($# >= 2)) && [[ -n $2 ]] || usage_error "$1 needs a value"; }
  while (($#)); do
    case $1 in
      -h | --help)
        sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d' | sed 's/^# \{0,1\}//'
        exit 0
        ;;
      --frame) need_value "$@"; frame=$2; shift 2 ;;
      --color | --colour) need_value "$@"; color=$2; shift 2 ;;
      --png) need_value "$@"; png=$2; shift 2 ;;
      --movie) need_value "$@"; movie=$2; shift 2 ;;
      --size) need_value "$@"; size=$2; shift 2 ;;
      --fps) need_value "$@"; fps=$2; shift 2 ;;
      --title) need_value "$@"; title=$2; shift 2 ;;
      -*) usage_error "unknown option '$1'" ;;
      *)
        [[ -z $out ]] || usage_error "one output folder, got '$out' and '$1'"
        out=$1
        shift
        ;;
    esac
  done
  [[ -n $out ]] || usage_error "no output folder given; fix: name the folder \`intact run --output\` wrote"
  [[ -d $out ]] || usage_error "the output folder '$out' does not exist; fix: give the folder \`intact run --output\` wrote"
  [[ -f $out/intact.pvd ]] ||
    usage_error "'$out' holds no intact.pvd; fix: give the folder \`intact run --output\` wrote" \
      "(the run writes intact.pvd at its start)"
  case $color in
    rank | body | speed | displacement) ;;
    *) usage_error "--color '$color' is not an array Intact writes;" \
      "fix: one of rank, body, speed (|velocity|), displacement (|displacement|)" ;;
  esac
  frames=$(grep -c 'part="0"' "$out/intact.pvd" || true)
  ((frames > 0)) || usage_error "'$out/intact.pvd' lists no time step; fix: let the run write at least its first step"
  if [[ $frame == last ]]; then
    frame=$((frames - 1))
  elif [[ $frame =~ ^[0-9]+$ ]]; then
    ((10#$frame < frames)) ||
      usage_error "--frame $frame is out of range: '$out' has $frames frames; fix: give 0..$((frames - 1)) or last"
    frame=$((10#$frame))
  else
    usage_error "--frame '$frame' is not a frame number; fix: give 0..$((frames - 1)) or last"
  fi
  [[ $size =~ ^[1-9][0-9]*x[1-9][0-9]*$ ]] || usage_error "--size '$size' is not WIDTHxHEIGHT; fix: e.g. --size 1200x800"
  [[ $fps =~ ^[1-9][0-9]*$ ]] || usage_error "--fps '$fps' is not a positive whole number; fix: e.g. --fps 10"
  [[ -n $png && -n $movie ]] && usage_error "--png and --movie both given; fix: give one (a movie renders every frame)"
  if [[ -n $movie ]]; then
    if [[ $movie == */ || -d $movie ]]; then
      :
    else
      case ${movie##*.} in
        ogv | avi) ;;
        mp4)
          command -v ffmpeg >/dev/null ||
            usage_error "--movie '$movie': an .mp4 needs the ffmpeg program, which is not installed;" \
              "fix: apt-get install ffmpeg, or write '${movie%.*}.ogv', '${movie%.*}.avi' or a folder of PNGs" \
              "('${movie%.*}/')"
          ;;
        *) usage_error "--movie '$movie': unknown kind; fix: end it with .ogv, .avi, .mp4, or / for a folder of PNGs" ;;
      esac
    fi
  fi
  [[ -n $png || -n $movie ]] || png=$out/render/frame_${frame}_${color}.png

  paraview_setup
  args=("$out" --frame "$frame" --color "$color" --size "$size" --fps "$fps")
  [[ -n $png ]] && args+=(--png "$png")
  [[ -n $movie ]] && args+=(--movie "$movie")
  [[ -n $title ]] && args+=(--title "$title")

  paraview_batch "$script" "${args[@]}"
}

if [[ ${BASH_SOURCE[0]} == "$0" ]]; then
  main "$@"
fi
