#!/usr/bin/env bash
# Intact set-up: install what is missing, build, then run the default scene or the test suite.
#
#   bash .ci/setup.sh run    # build (MPI + OpenMP) and run inputs/default.json on 2 ranks
#   bash .ci/setup.sh test   # build, also compile + link the CUDA/NCCL variant, run ctest
#   bash .ci/setup.sh build  # build only
#
# Variables (all optional):
#   Kokkos_ROOT        a Kokkos install to use (any backend); otherwise Kokkos is built from Debian's
#                      trilinos source package into $INTACT_DEPS, once.
#   INTACT_DEPS        where built dependencies are cached          (default: <repo>/.deps)
#   INTACT_BUILD       the CPU build tree                            (default: <repo>/build)
#   INTACT_BUILD_CUDA  the CUDA compile-and-link build tree          (default: <repo>/build-cuda)
#   INTACT_SKIP_CUDA   1: the test command skips the CUDA build      (default: 0; only when no toolkit)
#   CUDA_HOME          the CUDA toolkit with NCCL                    (default: /usr/local/cuda)
#   INTACT_JOBS        parallel build jobs                           (default: nproc)
# Every step is idempotent: a second run only rebuilds what changed.
set -euo pipefail

mode=${1:-build}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
deps=${INTACT_DEPS:-$root/.deps}
build=${INTACT_BUILD:-$root/build}
build_cuda=${INTACT_BUILD_CUDA:-$root/build-cuda}
cuda_home=${CUDA_HOME:-/usr/local/cuda}
jobs=${INTACT_JOBS:-$(nproc)}
say() { printf '[intact setup] %s\n' "$*" >&2; }

# 1. Debian packages: installed only when missing, so a second run touches nothing.
# paraview, xvfb, xauth and python3-matplotlib serve the integration tests (ParaView checks, scaling
# plot); slurm/test_cluster.sh installs slurm-wlm and munge itself. python3-paraview is not listed:
# it conflicts with libvtk9-dev, so tests/integration/paraview.sh unpacks it privately.
packages=(build-essential cmake pkg-config dpkg-dev openmpi-bin libopenmpi-dev libmetis-dev
  libeigen3-dev libvtk9-dev nlohmann-json3-dev libgtest-dev clang-format gmsh patch python3
  paraview xvfb xauth python3-matplotlib)
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
  local src=$deps/src/kokkos
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

# build_kokkos NAME CMAKE_ARGS...: configure, build and install Kokkos into $deps/NAME, once.
build_kokkos() {
  local name=$1
  shift
  local prefix=$deps/$name
  [[ -f $prefix/.intact-stamp ]] && return 0
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
}

if [[ -n ${Kokkos_ROOT:-} ]]; then
  kokkos_cpu=$Kokkos_ROOT
  say "using the Kokkos given in Kokkos_ROOT=$Kokkos_ROOT"
else
  build_kokkos kokkos-openmp -DKokkos_ENABLE_OPENMP=ON -DKokkos_ENABLE_SERIAL=ON
  kokkos_cpu=$deps/kokkos-openmp
fi

# 3. The CPU build (MPI + whatever backend that Kokkos has).
configure_and_build() {
  local dir=$1
  shift
  # Configuring again is cheap and picks up a changed Kokkos_ROOT or CMake option.
  mkdir -p "$dir"
  cmake -S "$root" -B "$dir" "$@" >"$dir/configure.log" 2>&1 || {
    cat "$dir/configure.log" >&2
    exit 1
  }
  grep -E "^-- (Intact|  )" "$dir/configure.log" >&2 || true
  cmake --build "$dir" -j "$jobs"
}
configure_and_build "$build" -DKokkos_ROOT="$kokkos_cpu"

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
  build_kokkos kokkos-cuda -DKokkos_ENABLE_CUDA=ON -DKokkos_ENABLE_CUDA_LAMBDA=ON \
    -DKokkos_ENABLE_SERIAL=ON -DKokkos_ARCH_AMPERE80=ON \
    -DCMAKE_CXX_COMPILER="$deps/work/kokkos-cuda/src/bin/nvcc_wrapper"
  configure_and_build "$build_cuda" -DKokkos_ROOT="$deps/kokkos-cuda" \
    -DCMAKE_CXX_COMPILER="$deps/kokkos-cuda/bin/nvcc_wrapper" -DINTACT_ENABLE_NCCL=ON \
    -DNCCL_ROOT="$cuda_home" -DINTACT_ENABLE_TESTS=ON
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
  ctest --test-dir "$build" --output-on-failure -j 2
  ;;
*)
  say "usage: bash .ci/setup.sh [build|run|test]" >&2
  exit 2
  ;;
esac
