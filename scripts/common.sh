# shellcheck shell=bash
# Shared by run.sh and test.sh (sourced, not run): installs what a fresh Debian 12 machine
# lacks, then configures and builds one build directory.

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
REQUIRED_PACKAGES=(build-essential cmake ninja-build libopenmpi-dev openmpi-bin libgtest-dev
                   libfmt-dev libcli11-dev nlohmann-json3-dev pkg-config)

# Runs a command as root: directly when we are root, else through sudo.
as_root() {
  if [[ "$(id -u)" -eq 0 ]]; then
    "$@"
  elif command -v sudo >/dev/null; then
    sudo "$@"
  else
    echo "error: need root (or sudo) to run: $*" >&2
    return 1
  fi
}

# apt-get only when something is missing, so that a ready machine needs no network and no root.
install_missing_packages() {
  if ! command -v dpkg-query >/dev/null; then
    echo "note: not a Debian system; install these yourself: ${REQUIRED_PACKAGES[*]}" >&2
    return 0
  fi
  local missing=() package
  for package in "${REQUIRED_PACKAGES[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q 'install ok installed'; then
      missing+=("$package")
    fi
  done
  [[ ${#missing[@]} -eq 0 ]] && return 0
  echo "== installing: ${missing[*]}"
  as_root env DEBIAN_FRONTEND=noninteractive apt-get update
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
    "${missing[@]}"
}

# CMake finds nvcc only on PATH; a stock CUDA install puts it in /usr/local/cuda/bin.
cuda_compiler_args() {
  local nvcc
  nvcc="$(command -v nvcc || true)"
  if [[ -z "$nvcc" && -x /usr/local/cuda/bin/nvcc ]]; then
    nvcc=/usr/local/cuda/bin/nvcc
  fi
  if [[ -n "$nvcc" ]]; then
    echo "-DCMAKE_CUDA_COMPILER=$nvcc"
  fi
}

# configure DIR [CMAKE_ARGS...]: configures DIR (relative to the repository) with Ninja.
configure() {
  local build_dir="$REPO_ROOT/$1"
  shift
  local generator=()
  # The generator can only be chosen the first time; later runs reuse the cache.
  [[ -f "$build_dir/CMakeCache.txt" ]] || generator=(-G Ninja)
  local cuda_args
  cuda_args="$(cuda_compiler_args)"
  echo "== configuring $build_dir"
  cmake -S "$REPO_ROOT" -B "$build_dir" "${generator[@]}" ${cuda_args:+"$cuda_args"} "$@"
}

# build DIR [TARGET...]: builds the given targets of DIR, or everything.
build() {
  local build_dir="$REPO_ROOT/$1"
  shift
  local targets=()
  [[ $# -gt 0 ]] && targets=(--target "$@")
  echo "== building $build_dir ${*:-(all)}"
  cmake --build "$build_dir" "${targets[@]}"
}

# mpirun refuses root unless told, and may count fewer slots than the ranks a run needs.
MPIRUN_FLAGS=(--oversubscribe)
if [[ "$(id -u)" -eq 0 ]]; then
  MPIRUN_FLAGS+=(--allow-run-as-root)
fi
