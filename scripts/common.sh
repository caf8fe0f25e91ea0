# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) the tca authors
# shellcheck shell=bash
# Shared by run.sh and test.sh (sourced, not run). Finds what the build needs by capability —
# the tools on PATH, and the packages as CMake itself finds them — whatever installed them
# (distribution packages, pip, conda, modules, CMAKE_PREFIX_PATH). Installs only what is missing
# and only where it can: apt-get on Debian-like systems as root or through sudo, pip for the
# Python pieces and for cmake and ninja where apt cannot. What is still missing is named with
# the ways to provide it. Then configures and builds one build directory.

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CMAKE_MINIMUM="$(sed -n 's/^cmake_minimum_required(VERSION \([0-9.]*\).*/\1/p' "$REPO_ROOT/CMakeLists.txt" | head -n 1)"
APT_STATE=""      # "", "ready" (updated once), "unusable"
PROBE_LINES=""    # the last probe's "tca-probe: <name> found|missing" lines

say() { echo "== $*"; }
note() { echo "note: $*" >&2; }

# Runs a command as root: directly when we are root, else through sudo (asking for the password
# only on a terminal).
as_root() {
  if [[ "$(id -u)" -eq 0 ]]; then
    "$@"
  elif command -v sudo >/dev/null && [[ -t 0 ]]; then
    sudo "$@"  # may ask for the password once
  elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
    sudo -n "$@"
  else
    return 1
  fi
}

version_at_least() {  # HAVE NEED
  [[ "$(printf '%s\n%s\n' "$2" "$1" | sort -V | head -n 1)" == "$2" ]]
}

# apt-get install PACKAGES..., where apt-get exists, we can be root and the archive answers.
apt_install() {
  [[ "$APT_STATE" == "unusable" ]] && return 1
  if [[ -z "$APT_STATE" ]]; then
    if ! command -v apt-get >/dev/null || ! as_root true 2>/dev/null; then
      APT_STATE=unusable
      return 1
    fi
    say "apt-get update"
    local log
    # apt-get update exits 0 when it reaches no archive: its "Failed to fetch" lines tell.
    if ! log="$(as_root env DEBIAN_FRONTEND=noninteractive timeout 180 apt-get update -q \
                  -o Acquire::Retries=1 -o Acquire::http::Timeout=20 2>&1)" ||
       grep -q 'Failed to fetch\|Temporary failure resolving' <<<"$log"; then
      note "apt-get update reached no package archive (no network?): nothing is installed with apt-get"
      APT_STATE=unusable
      return 1
    fi
    APT_STATE=ready
  fi
  say "apt-get install $*"
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$@"
}

# python3 -m pip install PACKAGES..., then the folders pip puts programs in go onto PATH.
pip_install() {
  command -v python3 >/dev/null && python3 -m pip --version >/dev/null 2>&1 || return 1
  say "python3 -m pip install $*"
  python3 -m pip install -q --disable-pip-version-check --retries 1 --timeout 20 "$@" || return 1
  local folder
  for folder in "$(python3 -c 'import sysconfig; print(sysconfig.get_path("scripts"))')" \
                "$(python3 -m site --user-base 2>/dev/null)/bin"; do
    [[ -d "$folder" && ":$PATH:" != *":$folder:"* ]] && PATH="$folder:$PATH"
  done
  hash -r
  return 0
}

have_cmake() {
  command -v cmake >/dev/null &&
    version_at_least "$(cmake --version | sed -n 's/^cmake version \([0-9.]*\).*/\1/p')" "$CMAKE_MINIMUM"
}
have_build_tool() { command -v ninja >/dev/null || command -v make >/dev/null; }
have_compilers() {
  { command -v c++ || command -v g++ || command -v clang++; } >/dev/null &&
    { command -v cc || command -v gcc || command -v clang; } >/dev/null
}
have_mpi_tools() {
  { command -v mpicc || command -v mpicxx || command -v mpic++; } >/dev/null &&
    { command -v mpirun || command -v mpiexec; } >/dev/null
}
mpi_launcher() { command -v mpirun || command -v mpiexec; }

# The tools: cmake >= the required version, ninja or make, C and C++ compilers, MPI's
# compiler wrapper and launcher.
ensure_tools() {
  local apt=()
  have_cmake || apt+=(cmake)
  have_build_tool || apt+=(ninja-build)
  have_compilers || apt+=(build-essential)
  have_mpi_tools || apt+=(libopenmpi-dev openmpi-bin)
  [[ ${#apt[@]} -gt 0 ]] && apt_install "${apt[@]}"
  have_cmake || pip_install "cmake>=$CMAKE_MINIMUM" || true
  have_build_tool || pip_install ninja || true
  local missing=()
  have_cmake || missing+=("cmake >= $CMAKE_MINIMUM on PATH (apt-get install cmake, or python3 -m pip install cmake, or a release from cmake.org)")
  have_build_tool || missing+=("a build tool: ninja or make on PATH (apt-get install ninja-build, or python3 -m pip install ninja)")
  have_compilers || missing+=("C and C++17 compilers: cc and c++ on PATH (apt-get install build-essential)")
  have_mpi_tools || missing+=("MPI's compiler wrapper (mpicc, mpicxx) and launcher (mpirun or mpiexec) on PATH (apt-get install libopenmpi-dev openmpi-bin, or load your site's MPI module)")
  if [[ ${#missing[@]} -gt 0 ]]; then
    echo "error: missing, and not installable here (needs root or sudo, and a network for apt-get or pip):" >&2
    printf '  - %s\n' "${missing[@]}" >&2
    return 1
  fi
}

# Asks CMake what it finds (scripts/probe): fills PROBE_LINES.
probe_packages() {
  local dir
  dir="$(mktemp -d)"
  PROBE_LINES="$(cmake -S "$REPO_ROOT/scripts/probe" -B "$dir" -DTCA_SOURCE_DIR="$REPO_ROOT" 2>&1 |
                 sed -n 's/^-- tca-probe: //p')"
  rm -rf "$dir"
}
probe_found() { grep -qx "$1 found" <<<"$PROBE_LINES"; }

# The packages CMake looks for. MODE run: MPI, fmt, CLI11, nlohmann-json; MODE test: and
# GoogleTest and pkg-config. SimGrid (for tca-sim) where apt-get can install it.
ensure_packages() {
  local mode=$1 required=(mpi fmt cli11 nlohmann_json) name apt=()
  [[ "$mode" == test ]] && required+=(gtest pkg_config)
  declare -A debian=([mpi]="libopenmpi-dev openmpi-bin" [fmt]=libfmt-dev [cli11]=libcli11-dev
                     [nlohmann_json]=nlohmann-json3-dev [gtest]=libgtest-dev [pkg_config]=pkg-config
                     [simgrid]=libsimgrid-dev)
  declare -A how=([mpi]="MPI with its development files (apt-get install libopenmpi-dev openmpi-bin; or load your site's MPI module)"
                  [fmt]="fmt's CMake package (apt-get install libfmt-dev; conda install fmt; or CMAKE_PREFIX_PATH=<its prefix>)"
                  [cli11]="CLI11's CMake package (apt-get install libcli11-dev; conda install cli11; or CMAKE_PREFIX_PATH=<its prefix>)"
                  [nlohmann_json]="nlohmann-json 3's CMake package (apt-get install nlohmann-json3-dev; conda install nlohmann_json; or CMAKE_PREFIX_PATH=<its prefix>)"
                  [gtest]="GoogleTest (apt-get install libgtest-dev; conda install gtest; or CMAKE_PREFIX_PATH=<its prefix>)"
                  [pkg_config]="pkg-config or pkgconf on PATH (apt-get install pkg-config)")
  probe_packages
  local more=()
  for name in "${required[@]}" simgrid; do
    if ! probe_found "$name"; then
      read -r -a more <<<"${debian[$name]}"
      apt+=("${more[@]}")
    fi
  done
  # ccache (optional): build trees of one configuration share their compiled objects.
  command -v ccache >/dev/null || apt+=(ccache)
  if [[ ${#apt[@]} -gt 0 ]]; then
    apt_install "${apt[@]}" || true
    probe_packages
  fi
  local missing=()
  for name in "${required[@]}"; do
    probe_found "$name" || missing+=("${how[$name]}")
  done
  probe_found simgrid || note "SimGrid not found: tca-sim is not built (apt-get install libsimgrid-dev, or CMAKE_PREFIX_PATH=<its prefix>)"
  if [[ ${#missing[@]} -gt 0 ]]; then
    echo "error: CMake does not find, and this machine cannot install (needs root or sudo, and a network):" >&2
    printf '  - %s\n' "${missing[@]}" >&2
    return 1
  fi
}

python_has() { command -v python3 >/dev/null && python3 -c "import $1" 2>/dev/null; }

# python3 with matplotlib for tca-report (optional: without it the figures are not drawn).
ensure_matplotlib() {
  python_has matplotlib && return 0
  if command -v python3 >/dev/null; then
    pip_install matplotlib 2>/dev/null || apt_install python3-matplotlib || true
  else
    apt_install python3 python3-matplotlib || true
  fi
  python_has matplotlib && return 0
  note "python3 with matplotlib is missing, so tca-report draws no figures (python3 -m pip install matplotlib, or apt-get install python3-matplotlib)"
  return 1
}

# What the Python package's build and tests need (nanobind, scikit-build-core, pytest, numpy):
# installed with pip where missing. Prints the CMake option that turns the package on
# (-DTCA_PYTHON=ON), or nothing, with a note, where they cannot be had.
ensure_python_package() {
  local need=()
  python_has nanobind || need+=(nanobind)
  python_has scikit_build_core || need+=(scikit-build-core)
  python_has pytest || need+=(pytest)
  python_has numpy || need+=(numpy)
  if [[ ${#need[@]} -gt 0 ]]; then pip_install "${need[@]}" >&2 2>/dev/null || true; fi
  if python_has nanobind && python_has pytest && python_has numpy; then
    echo "-DTCA_PYTHON=ON"
  else
    note "python3 with nanobind, pytest and numpy is missing: the Python package is not built or tested (python3 -m pip install nanobind scikit-build-core pytest numpy)"
  fi
}

# UCX for the UCX transport (optional): the libucx-cu13 wheel where CMake finds no UCX and pip
# can install it; its prefix (lib/cmake/ucx) goes onto CMAKE_PREFIX_PATH.
ensure_ucx() {
  local find_wheel='import importlib.util as u; s = u.find_spec("libucx"); print(s.submodule_search_locations[0] if s else "")'
  local prefix=""
  if command -v python3 >/dev/null; then
    prefix="$(python3 -c "$find_wheel" 2>/dev/null || true)"
    if [[ -z "$prefix" ]] && ! probe_found ucx; then
      pip_install libucx-cu13 2>/dev/null && prefix="$(python3 -c "$find_wheel" 2>/dev/null || true)"
    fi
  fi
  if [[ -n "$prefix" && -d "$prefix/lib/cmake/ucx" ]]; then
    export CMAKE_PREFIX_PATH="$prefix${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}"
  elif ! probe_found ucx; then
    note "UCX not found: the UCX transport is not built (python3 -m pip install libucx-cu13, or CMAKE_PREFIX_PATH=<a UCX prefix>)"
  fi
}

# Everything run.sh (MODE run) or test.sh (MODE test) needs, found or installed.
ensure_prerequisites() {
  ensure_tools || exit 1
  ensure_packages "$1" || exit 1
  ensure_matplotlib || true
  ensure_ucx
  set_mpirun
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

# configure DIR [CMAKE_ARGS...]: configures DIR (relative to the repository), with Ninja where
# it is on PATH, else make.
configure() {
  local build_dir="$REPO_ROOT/$1"
  shift
  local generator=()
  # The generator can only be chosen the first time; later runs reuse the cache.
  if [[ ! -f "$build_dir/CMakeCache.txt" ]]; then
    if command -v ninja >/dev/null; then generator=(-G Ninja); else generator=(-G "Unix Makefiles"); fi
  fi
  local cuda_args launcher=()
  cuda_args="$(cuda_compiler_args)"
  # Where ccache is on PATH, every compiler goes through it: trees built with the same flags (the
  # release tree and the minimal one, say) compile each object once.
  if command -v ccache >/dev/null; then
    launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache
              -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
  fi
  say "configuring $build_dir"
  cmake -S "$REPO_ROOT" -B "$build_dir" "${generator[@]}" ${cuda_args:+"$cuda_args"} \
    "${launcher[@]}" "$@"
}

# build DIR [TARGET...]: builds the given targets of DIR, or everything.
build() {
  local build_dir="$REPO_ROOT/$1"
  shift
  local targets=()
  [[ $# -gt 0 ]] && targets=(--target "$@")
  say "building $build_dir ${*:-(all)}"
  cmake --build "$build_dir" --parallel "$(nproc 2>/dev/null || echo 2)" "${targets[@]}"
}

# MPIRUN and MPIRUN_FLAGS: the launcher, and for Open MPI the flags for root and for more ranks
# than cores.
set_mpirun() {
  MPIRUN="$(mpi_launcher)"
  MPIRUN_FLAGS=()
  if "$MPIRUN" --version 2>/dev/null | grep -q 'Open MPI\|OpenRTE'; then
    MPIRUN_FLAGS=(--oversubscribe)
    [[ "$(id -u)" -eq 0 ]] && MPIRUN_FLAGS+=(--allow-run-as-root)
    # An image that turns Open MPI's single-copy mechanism off (in its environment or its
    # configuration) leaves it no component for the RMA windows of tca's MPI transport: use CMA.
    if [[ "${OMPI_MCA_btl_vader_single_copy_mechanism:-}" == none ]] ||
       { [[ -z "${OMPI_MCA_btl_vader_single_copy_mechanism:-}" ]] && command -v ompi_info >/dev/null &&
         ompi_info --param btl vader --level 9 --parsable 2>/dev/null |
           grep -q 'btl_vader_single_copy_mechanism:value:none$'; }; then
      export OMPI_MCA_btl_vader_single_copy_mechanism=cma
      note "Open MPI's single-copy mechanism is off here: using OMPI_MCA_btl_vader_single_copy_mechanism=cma"
    fi
  fi
}
