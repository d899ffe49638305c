#!/usr/bin/env bash
# dev.sh: the suite's two entry points. Each is complete by itself: it installs what is missing (Debian or
# Ubuntu packages, with sudo when not root), configures a Release build in build/, builds, and then
#   ./dev.sh bench [kbench run options]   runs the default benchmark suite (and check_cc first)
#   ./dev.sh test  [ctest options]        runs the test suite through ctest
# Environment: CUDAARCHS or CMAKE_CUDA_ARCHITECTURES picks the GPU architectures (default: the visible
# GPU's, else 75;86;90); BUILD_DIR (default build); JOBS (default: all cores); CI=true makes warnings errors
# and forbids downloads; KS_GIT_REVISION names the revision where the tree has no .git.
# PRESET=hip builds for AMD GPUs instead (the `hip` preset: HIP, gfx906 and gfx90a; BUILD_DIR default build/hip;
# Debian's HIP packages installed where missing): the harness, the reduction ladder, DGEMM steps 01-05, kbench,
# check_cc and their tests. KS_HIP_TARGETS names other wave64 gfx9 targets (gfx908: MI100).
set -euo pipefail
cd "$(dirname "$0")"

usage() { echo "usage: ./dev.sh bench|test [args...]" >&2; exit 2; }
[ $# -ge 1 ] || usage
what=$1; shift
case "$what" in bench|test) ;; *) usage ;; esac

# Each Debian/Ubuntu package and the CMake config file that shows it is usable.
# libbenchmark-tools: Google Benchmark's compare.py, which a test runs on kbench's results files. libre2-dev has
# no CMake config: its library shows it.
packages=(libeigen3-dev:Eigen3Config.cmake libcli11-dev:CLI11Config.cmake libbenchmark-dev:benchmarkConfig.cmake
          libgtest-dev:GTestConfig.cmake libbenchmark-tools:compare.py libre2-dev:libre2.so)

# True when CMake will find the config file: under /usr, /usr/local or a CMAKE_PREFIX_PATH entry (packages
# unpacked by hand, as on a GPU host without a registry, count).
findable() {
  local prefix
  local IFS=:
  for prefix in ${CMAKE_PREFIX_PATH:-} /usr /usr/local; do
    [ -n "$prefix" ] && [ -d "$prefix" ] || continue
    find "$prefix/lib" "$prefix/lib64" "$prefix/share" -maxdepth 5 -name "$1" 2>/dev/null | grep -q . && return 0
  done
  return 1
}

# matplotlib draws `kbench compare --plots`; CMake looks for a Python that imports it (cmake/KsPython.cmake).
# scipy: Google Benchmark's compare.py imports it. Hypothesis: the results-file fuzz target
# (tests/fuzz/results_fuzz.py).
has_module() {
  local py
  for py in python3 /usr/bin/python3; do
    command -v "$py" >/dev/null 2>&1 && "$py" -c "import $1" >/dev/null 2>&1 && return 0
  done
  return 1
}

# The HIP build's packages (Debian 12's ROCm 5.2 stack; clang-15 comes with hipcc).
hip_packages=(libamdhip64-dev:hip-config.cmake librocprim-dev:rocprim-config.cmake rocm-device-libs:ocml.bc
              hipcc:hipcc)
hip=false
case "${PRESET:-}" in
  "") ;;
  hip) hip=true; packages+=("${hip_packages[@]}") ;;
  *) echo "dev.sh: unknown PRESET '${PRESET}' (hip, or none for CUDA)" >&2; exit 2 ;;
esac

source cmake/apt_install.sh
install_missing() {
  local missing=() entry
  for entry in "${packages[@]}"; do
    findable "${entry#*:}" || missing+=("${entry%%:*}")
  done
  has_module matplotlib || missing+=(python3-matplotlib)
  has_module scipy || missing+=(python3-scipy)
  has_module hypothesis || missing+=(python3-hypothesis)
  [ ${#missing[@]} -eq 0 ] && return 0
  command -v apt-get >/dev/null 2>&1 || { echo "dev.sh: not Debian/Ubuntu; install ${missing[*]} yourself"; return 0; }
  echo "dev.sh: installing ${missing[*]}"
  ks_apt_install "${missing[@]}" || echo "dev.sh: could not install ${missing[*]}; CMake will say what is missing"
}

install_missing
if $hip; then
  build=${BUILD_DIR:-build/hip}
else
  build=${BUILD_DIR:-build}
fi
jobs=${JOBS:-$(nproc)}
cmake_args=(-S . -B "$build" -DCMAKE_BUILD_TYPE=Release)
if $hip; then
  cmake_args+=(--preset hip)
  if [ -n "${KS_HIP_TARGETS:-}" ]; then cmake_args+=(-DKS_HIP_TARGETS="$KS_HIP_TARGETS"); fi
fi
if [ "${CI:-}" = true ]; then cmake_args+=(-DKS_WERROR=ON -DKS_FETCH_MISSING=OFF); fi
# A source tree without .git (a copy on a GPU host) records KS_GIT_REVISION in the results instead; passed
# every time (empty: use git), so that a value from an earlier run does not linger in the CMake cache.
cmake_args+=(-DKS_GIT_REVISION_OVERRIDE="${KS_GIT_REVISION:-}")
cmake "${cmake_args[@]}"
cmake --build "$build" -j "$jobs"

if [ "$what" = test ]; then
  log="$build/ctest.log"
  junit="$(cd "$build" && pwd)/ctest-junit.xml"
  gtest="$(cd "$build" && pwd)/tests/gtest"
  rm -rf "$gtest"  # each GoogleTest program writes its cases there (tests/CMakeLists.txt): this run's only
  set +e
  ctest --test-dir "$build" --output-on-failure --output-junit "$junit" -j "$jobs" "$@" 2>&1 | tee "$log"
  rc=${PIPESTATUS[0]}
  set -e
  # Per case: why tests were skipped (no GPU, no cuobjdump, ...), one line per reason with the count, the failed
  # cases by name, then "tests: N passed, N failed, N skipped".
  python3 tests/test_summary.py "$junit" "$gtest" || true
  exit "$rc"
fi
"$build/bench/check_cc" || exit $?
exec "$build/bench/kbench" run "$@"
