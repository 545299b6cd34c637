#!/usr/bin/env bash
# Regenerates the gallery: runs every scene of inputs/ on 2 ranks, renders its last frame with intact-render
# into docs/img/gallery/SCENE.png and writes docs/gallery.md with each scene's size and measured run time.
#
#   bash docs/gallery.sh [SCENE ...]        (default: every scene the table below lists)
#
# Variables: INTACT (default build/drivers/intact), RENDER (default drivers/intact_render.sh), MPIRUN (default
# "mpirun -n 2"), GALLERY_OUT (the runs' output folders, default ${TMPDIR:-/tmp}/intact-gallery; nothing but
# the pictures and the page is written into the checkout), GALLERY_RENDER_ONLY=1 (render the pictures again
# from the runs already in GALLERY_OUT and keep the times on the page). Scenes not run keep the row they have
# in docs/gallery.md. The run time is the wall time of the whole `mpirun ... intact run`
# command (start-up, partitioning and output included).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
intact=${INTACT:-$root/build/drivers/intact}
render=${RENDER:-$root/drivers/intact_render.sh}
read -r -a mpirun <<<"${MPIRUN:-mpirun -n 2}"
work=${GALLERY_OUT:-${TMPDIR:-/tmp}/intact-gallery}
pictures=$root/docs/img/gallery
[[ -x $intact ]] || {
  echo "docs/gallery.sh: no program at $intact; fix: build it (cmake --build build) or set INTACT" >&2
  exit 2
}

# scene | colour | extra arguments of `intact run` | what it shows
table="default|rank||two soft jelly cubes thrown onto each other and a ground plane, μ = 0.3; each element in the colour of the rank that owned it
two_blocks_impact|speed||a head-on impact at 8 m/s closing speed, no gravity
stack|body||three boxes settling on a plane, frictionless
thin_plate|speed||a 20 m/s bullet against a 1 cm plate held at two edges: no tunnelling
squeeze|displacement||a soft body squeezed between two plates driven by moving boxes, with friction
ball_squeeze|displacement||a soft ball (a gmsh mesh) squeezed to 65% of its diameter between two moving planes
paddle|speed||a block pushed across a triangle-mesh floor by a moving triangle-mesh paddle
rollers|speed||a soft slab drawn between two turning rollers by friction (μ = 0.8), with \`bal\`
stone_arch|body||25 stone voussoirs (E = 20 GPa) standing on two knife edges, with \`bal\`
bouncing_block|speed||a block bouncing on a plane with the energy-keeping A-search integrator
beam_stencil_descent|displacement|--set time.steps=1|a cantilever beam held at one end, sagging under gravity, with stencil descent; its first step of 20 only: a step takes minutes here, and where stencil descent's 2000 sweeps do not certify a step, \`ipc\` solves it again (the step line says \`solved by ipc\`)"

export OMPI_ALLOW_RUN_AS_ROOT=${OMPI_ALLOW_RUN_AS_ROOT:-1} OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=${OMPI_ALLOW_RUN_AS_ROOT_CONFIRM:-1}
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}
mkdir -p "$work" "$pictures"
wanted=("$@")
results=$work/results.tsv
: >"$results"
while IFS='|' read -r scene colour extra shows; do
  if ((${#wanted[@]})) && [[ " ${wanted[*]} " != *" $scene "* ]]; then
    continue
  fi
  if [[ ${GALLERY_RENDER_ONLY:-0} == 1 ]]; then
    bash "$render" "$work/$scene" --frame last --color "$colour" --size 800x600 --title "$scene" \
      --png "$pictures/$scene.png" </dev/null
    continue
  fi
  read -r -a extra_args <<<"$extra"
  echo "== $scene: ${mpirun[*]} intact run inputs/$scene.json $extra" >&2
  rm -rf "${work:?}/$scene"
  start=$(date +%s%N)
  "${mpirun[@]}" "$intact" run "$root/inputs/$scene.json" --output "$work/$scene" "${extra_args[@]}" \
    </dev/null >"$work/$scene.log" 2>&1 || {
    tail -20 "$work/$scene.log" >&2
    echo "docs/gallery.sh: $scene failed (log: $work/$scene.log)" >&2
    exit 1
  }
  milliseconds=$((($(date +%s%N) - start) / 1000000))
  bash "$render" "$work/$scene" --frame last --color "$colour" --size 800x600 --title "$scene" \
    --png "$pictures/$scene.png" </dev/null
  printf '%s\t%s\t%s\t%s\t%s\n' "$scene" "$colour" "$extra" "$milliseconds" "$shows" >>"$results"
done <<<"$table"

/usr/bin/python3 "$root/docs/gallery_page.py" "$root" "$work" "$results" "$table"
