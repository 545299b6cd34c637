#!/usr/bin/env bash
# Intact set-up: install what is missing, build, then run the default scene or the test suite.
#
#   bash .ci/setup.sh run    # build the intact program (MPI + OpenMP), run inputs/default.json on 2 ranks
#   bash .ci/setup.sh test   # build everything, compile + link the CUDA/NCCL variant (library, program and
#                            # benchmarks), run ctest, build the documentation strictly and run its
#                            # tutorial's commands
#   bash .ci/setup.sh build  # build everything (program, benchmarks, tests), run nothing
#
# Variables (all optional):
#   Kokkos_ROOT        a Kokkos install to use (any backend); otherwise Kokkos is built from Debian's
#                      trilinos source package into $INTACT_DEPS, once per version and options.
#   INTACT_DEPS        where built dependencies are cached, shared by every clone on the machine
#                      (default: ${XDG_CACHE_HOME:-~/.cache}/intact)
#   INTACT_CCACHE      0: compile without ccache                     (default: 1; its cache is ccache's
#                      own, ${CCACHE_DIR:-~/.cache/ccache}, outside the clone)
#   INTACT_BUILD       the CPU build tree                            (default: <repo>/build)
#   INTACT_BUILD_CUDA  the CUDA compile-and-link build tree          (default: <repo>/build-cuda)
#   INTACT_SKIP_CUDA   1: the test command skips the CUDA build      (default: 0; only when no toolkit)
#   INTACT_CUDA_TESTS  ON: the CUDA build compiles the tests too     (default: OFF; for a machine with a GPU)
#   CUDA_HOME          the CUDA toolkit with NCCL                    (default: /usr/local/cuda)
#   INTACT_JOBS        parallel build jobs                           (default: nproc)
#   INTACT_UNITY       0: compile every source on its own            (default: 1: each target's sources in
#                      batches of 8, CMake's unity build; a fresh build parses the Kokkos headers 8x less often)
# Every step is idempotent: a second run only rebuilds what changed.
set -euo pipefail

mode=${1:-build}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
deps=${INTACT_DEPS:-${XDG_CACHE_HOME:-$HOME/.cache}/intact}
build=${INTACT_BUILD:-$root/build}
build_cuda=${INTACT_BUILD_CUDA:-$root/build-cuda}
cuda_home=${CUDA_HOME:-/usr/local/cuda}
jobs=${INTACT_JOBS:-$(nproc)}
say() { printf '[intact setup] %s\n' "$*" >&2; }
# timed NAME COMMAND...: run COMMAND and say how long it took (the phases of a CI run, for the record).
timed() {
  local name=$1 start=$SECONDS
  shift
  "$@"
  say "$name: $((SECONDS - start)) s"
}

# 1. Debian packages: installed only when missing, so a second run touches nothing.
# paraview, xvfb, xauth and python3-matplotlib serve the integration tests (ParaView checks, scaling
# plot), python3-jsonschema the scene schema check; slurm/test_cluster.sh installs slurm-wlm and munge
# itself. python3-paraview is not listed: it conflicts with libvtk9-dev, so tests/integration/paraview.sh unpacks it privately.
# ccache keeps compiled objects outside the clone, so a fresh clone on a machine that built Intact
# before recompiles only what changed.
packages=(build-essential cmake pkg-config dpkg-dev openmpi-bin libopenmpi-dev libmetis-dev
  libeigen3-dev libvtk9-dev nlohmann-json3-dev libgtest-dev clang-format gmsh patch python3 ccache)
if [[ $mode == test ]]; then
  packages+=(paraview xvfb xauth python3-matplotlib mkdocs python3-jsonschema)
fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  say "installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# Open MPI refuses to start as root unless told; CI and fresh machines run as root.
if [[ $(id -u) == 0 ]]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi

# 2. Kokkos: the user's (Kokkos_ROOT) or one built here from Debian's trilinos source package.
kokkos_source() {
  local src=$deps/src/kokkos-$(kokkos_version)
  if [[ ! -f $src/CMakeLists.txt ]]; then
    if ! compgen -G "/etc/apt/sources.list.d/*" >/dev/null ||
      ! grep -rqs "deb-src" /etc/apt/sources.list /etc/apt/sources.list.d/; then
      say "adding a deb-src entry mirroring Debian's source list"
      if [[ -f /etc/apt/sources.list.d/debian.sources ]]; then
        sed -e 's/^Types: deb$/Types: deb-src/' /etc/apt/sources.list.d/debian.sources \
          >/etc/apt/sources.list.d/intact-debian-src.sources
      else
        sed -n -e 's/^deb \(.*\)/deb-src \1/p' /etc/apt/sources.list \
          >/etc/apt/sources.list.d/intact-debian-src.list
      fi
    fi
    if ! ls "$deps"/src/trilinos_*.orig.tar.* >/dev/null 2>&1; then
      say "fetching Debian's trilinos source package (Kokkos lives in packages/kokkos)"
      apt-get update -qq
      mkdir -p "$deps/src"
      (cd "$deps/src" && apt-get source --download-only -qq trilinos >/dev/null 2>&1)
    fi
    local tarball
    tarball=$(ls "$deps"/src/trilinos_*.orig.tar.* | head -n 1)
    rm -rf "$deps/src/unpack" && mkdir -p "$deps/src/unpack"
    tar xf "$tarball" -C "$deps/src/unpack" --wildcards '*/packages/kokkos/*'
    mv "$deps"/src/unpack/*/packages/kokkos "$src"
    rm -rf "$deps/src/unpack"
  fi
  printf '%s\n' "$src"
}

# The Kokkos source version: Debian's trilinos, read from the package index (no download needed to
# know whether the cached build is current).
# With no package lists yet (a machine that has every package but an emptied apt cache), they are
# fetched once.
kokkos_version() {
  local v
  v=$(apt-cache show --no-all-versions libtrilinos-kokkos-dev 2>/dev/null | sed -n 's/^Version: //p' || true)
  if [[ -z $v ]]; then
    apt-get update -qq >/dev/null 2>&1 || true
    v=$(apt-cache show --no-all-versions libtrilinos-kokkos-dev 2>/dev/null | sed -n 's/^Version: //p' || true)
  fi
  printf '%s\n' "${v%%$'\n'*}" | tr -c 'A-Za-z0-9.\n' '_'
}

# build_kokkos NAME CMAKE_ARGS...: configure, build and install Kokkos into $deps/NAME-VERSION-KEY,
# once; KEY hashes the CMake options and the CUDA patch, so a changed option builds a new install
# beside the old one. Sets kokkos_prefix.
build_kokkos() {
  local name=$1
  shift
  local version key
  version=$(kokkos_version)
  key=$({
    printf '%s\n' "$@"
    [[ $name != kokkos-cuda ]] || cat "$root/.ci/kokkos-3.4-cuda13.patch"
  } | sha256sum | cut -c1-12)
  kokkos_prefix=$deps/$name-${version:-unknown}-$key
  local prefix=$kokkos_prefix
  if [[ -f $prefix/.intact-stamp ]]; then
    say "Kokkos ($name) cached in $prefix"
    return 0
  fi
  # The cache is shared by every clone on the machine: one build at a time (the second waits, then
  # finds the stamp).
  mkdir -p "$deps"
  exec 9>"$deps/.lock"
  flock 9
  if [[ -f $prefix/.intact-stamp ]]; then
    flock -u 9
    say "Kokkos ($name) cached in $prefix"
    return 0
  fi
  local src
  src=$(kokkos_source)
  local work=$deps/work/$name
  rm -rf "$work" && mkdir -p "$work" && cp -r "$src" "$work/src"
  if [[ $name == kokkos-cuda ]]; then
    patch -s -d "$work/src" -p1 <"$root/.ci/kokkos-3.4-cuda13.patch"
  fi
  say "building Kokkos ($name) into $prefix"
  cmake -S "$work/src" -B "$work/build" -DCMAKE_INSTALL_PREFIX="$prefix" \
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_STANDARD=17 "$@" >"$work/configure.log"
  cmake --build "$work/build" -j "$jobs" >"$work/build.log"
  cmake --install "$work/build" >/dev/null
  touch "$prefix/.intact-stamp"
  rm -rf "$work"
  flock -u 9
}

if [[ -n ${Kokkos_ROOT:-} ]]; then
  kokkos_cpu=$Kokkos_ROOT
  say "using the Kokkos given in Kokkos_ROOT=$Kokkos_ROOT"
else
  timed "Kokkos (OpenMP)" build_kokkos kokkos-openmp -DKokkos_ENABLE_OPENMP=ON -DKokkos_ENABLE_SERIAL=ON
  kokkos_cpu=$kokkos_prefix
fi

# 3. The CPU build (MPI + whatever backend that Kokkos has).
launcher=()
if [[ ${INTACT_CCACHE:-1} == 1 ]] && command -v ccache >/dev/null; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  # Objects are keyed by content, not by path or time: a fresh clone in another folder hits the
  # cache left by an earlier one (no -g in Release builds, so the folder is not part of the key).
  export CCACHE_BASEDIR=$root CCACHE_NOHASHDIR=1
  [[ -n ${CCACHE_MAXSIZE:-} ]] || export CCACHE_MAXSIZE=8G
else
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=)
fi

# A unity build compiles each target's sources 8 to a file: nvcc spends about 13 s of every file on the
# Kokkos and CUDA headers alone (the CUDA variant, cold, 2 cores: 1318 s one file at a time, 675 s as a
# unity build). It pays on a fresh build (CI, a new machine); by hand, for
# edit-compile cycles, configure without it (one edit then recompiles its batch of 8).
if [[ ${INTACT_UNITY:-1} == 1 ]]; then
  launcher+=(-DCMAKE_UNITY_BUILD=ON)
else
  launcher+=(-DCMAKE_UNITY_BUILD=OFF)
fi

# configure_and_build DIR TARGET CMAKE_ARGS...: TARGET "all" builds everything.
configure_and_build() {
  local dir=$1 target=$2
  shift 2
  # Configuring again is cheap and picks up a changed Kokkos_ROOT or CMake option.
  mkdir -p "$dir"
  cmake -S "$root" -B "$dir" "${launcher[@]}" "$@" >"$dir/configure.log" 2>&1 || {
    cat "$dir/configure.log" >&2
    exit 1
  }
  grep -E "^-- (Intact|  )" "$dir/configure.log" >&2 || true
  cmake --build "$dir" -j "$jobs" --target "$target"
}
# The run command builds the program alone; tests and benchmarks come with build and test.
if [[ $mode == run ]]; then
  timed "CPU build (intact)" configure_and_build "$build" intact -DKokkos_ROOT="$kokkos_cpu"
else
  timed "CPU build (all targets)" configure_and_build "$build" all -DKokkos_ROOT="$kokkos_cpu"
fi

# 4. The CUDA + NCCL variant, compiled and linked only: these machines have the toolkit, not a GPU.
build_cuda_variant() {
  if [[ ${INTACT_SKIP_CUDA:-0} == 1 ]]; then
    say "INTACT_SKIP_CUDA=1: not building the CUDA variant"
    return 0
  fi
  if [[ ! -x $cuda_home/bin/nvcc ]]; then
    say "error: no CUDA toolkit at $cuda_home (set CUDA_HOME, or INTACT_SKIP_CUDA=1 to skip)" >&2
    exit 1
  fi
  export PATH=$cuda_home/bin:$PATH
  timed "Kokkos (CUDA)" build_kokkos kokkos-cuda -DKokkos_ENABLE_CUDA=ON -DKokkos_ENABLE_CUDA_LAMBDA=ON \
    -DKokkos_ENABLE_SERIAL=ON -DKokkos_ARCH_AMPERE80=ON \
    -DCMAKE_CXX_COMPILER="$deps/work/kokkos-cuda/src/bin/nvcc_wrapper"
  # The library, the program and the benchmark drivers: every device kernel is in the library. The tests
  # (49 of the 148 objects of a build with them) only matter where a GPU runs them: INTACT_CUDA_TESTS=ON.
  timed "CUDA build (library, program, benchmarks)" configure_and_build "$build_cuda" all \
    -DKokkos_ROOT="$kokkos_prefix" -DCMAKE_CXX_COMPILER="$kokkos_prefix/bin/nvcc_wrapper" \
    -DINTACT_ENABLE_NCCL=ON -DNCCL_ROOT="$cuda_home" -DINTACT_ENABLE_TESTS="${INTACT_CUDA_TESTS:-OFF}"
  say "CUDA + NCCL variant compiled and linked in $build_cuda (it runs on a machine with a GPU)"
}

case $mode in
build) ;;
run)
  out=$root/out/default
  mpirun --oversubscribe -n 2 -x OMP_NUM_THREADS=1 -x OMP_PROC_BIND=false "$build/drivers/intact" run \
    "$root/inputs/default.json" --output "$out"
  say "open this in ParaView: $out/intact.pvd"
  ;;
test)
  build_cuda_variant
  # ctest starts the longest tests first when it knows their times (its cost data); a fresh build tree
  # takes them from the machine's last run (measured: 679 s against 711 s for the suite).
  costs=$build/Testing/Temporary/CTestCostData.txt
  if [[ ! -f $costs && -f $deps/ctest-cost-data.txt ]]; then
    mkdir -p "$(dirname "$costs")" && cp "$deps/ctest-cost-data.txt" "$costs"
  fi
  timed "ctest" ctest --test-dir "$build" --output-on-failure -j "$jobs"
  mkdir -p "$deps" && cp "$costs" "$deps/ctest-cost-data.txt" 2>/dev/null || true
  timed "docs (strict build)" bash "$root/docs/build.sh" "$build/site"
  timed "docs (tutorial's commands)" bash "$root/docs/run_tutorial.sh" "$build/drivers/intact"
  ;;
*)
  say "usage: bash .ci/setup.sh [build|run|test]" >&2
  exit 2
  ;;
esac
