#!/usr/bin/env bash
# Regenerate the README picture: inputs/default.json on 4 MPI ranks, the last frame in ParaView,
# coloured by rank (tests/integration/paraview_check.py, which also checks the output).
#
#   bash tests/integration/readme_picture.sh            # writes inputs/default.png
#
# Variables: INTACT_BIN (default: <repo>/build/drivers/intact), NP (default: 4),
# OUTPUT (default: <repo>/out/readme_default), PNG (default: <repo>/inputs/default.png).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
bin=${INTACT_BIN:-$root/build/drivers/intact}
np=${NP:-4}
output=${OUTPUT:-$root/out/readme_default}
png=${PNG:-$root/inputs/default.png}
[[ -x $bin ]] || {
  echo "no intact program at $bin (bash .ci/setup.sh build, or set INTACT_BIN)" >&2
  exit 1
}

[[ $(id -u) == 0 ]] && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# More ranks than cores is fine here: the picture is about the partition, not the speed.
OMP_NUM_THREADS=1 OMP_PROC_BIND=false mpirun --oversubscribe -n "$np" -x OMP_NUM_THREADS \
  -x OMP_PROC_BIND "$bin" run "$root/inputs/default.json" --output "$output"
bash "$root/tests/integration/paraview.sh" "$root/tests/integration/paraview_check.py" "$output" \
  --ranks "$np" --png "$png" --size 1200x800 --title inputs/default.json
echo "README picture: $png"
