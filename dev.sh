#!/usr/bin/env bash
# dev.sh: the suite's two entry points. Each is complete by itself: it installs what is missing (Debian or
# Ubuntu packages, with sudo when not root), configures a Release build in build/, builds, and then
#   ./dev.sh bench [kbench run options]   runs the default benchmark suite (and check_cc first)
#   ./dev.sh test  [ctest options]        runs the test suite through ctest
# Environment: CUDAARCHS or CMAKE_CUDA_ARCHITECTURES picks the GPU architectures (default: the visible
# GPU's, else 75;86;90); BUILD_DIR (default build); JOBS (default: all cores); CI=true makes warnings errors
# and forbids downloads.
set -euo pipefail
cd "$(dirname "$0")"

usage() { echo "usage: ./dev.sh bench|test [args...]" >&2; exit 2; }
[ $# -ge 1 ] || usage
what=$1; shift
case "$what" in bench|test) ;; *) usage ;; esac

packages=(libeigen3-dev libcli11-dev libbenchmark-dev libgtest-dev)
install_missing() {
  command -v dpkg-query >/dev/null 2>&1 || { echo "dev.sh: not Debian/Ubuntu; install ${packages[*]} yourself"; return 0; }
  local missing=()
  for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo=sudo
  echo "dev.sh: installing ${missing[*]}"
  $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" \
    || echo "dev.sh: could not install ${missing[*]}; CMake will say what is missing"
}

install_missing
build=${BUILD_DIR:-build}
jobs=${JOBS:-$(nproc)}
cmake_args=(-S . -B "$build" -DCMAKE_BUILD_TYPE=Release)
if [ "${CI:-}" = true ]; then cmake_args+=(-DKS_WERROR=ON -DKS_FETCH_MISSING=OFF); fi
cmake "${cmake_args[@]}"
cmake --build "$build" -j "$jobs"

if [ "$what" = test ]; then
  log="$build/ctest.log"
  set +e
  ctest --test-dir "$build" --output-on-failure -j "$jobs" "$@" 2>&1 | tee "$log"
  rc=${PIPESTATUS[0]}
  set -e
  # "100% tests passed, 0 tests failed out of N" (CMake 3) or "100% tests passed out of N" (CMake 4)
  total=$(sed -n 's/.*tests passed.* out of \([0-9]*\).*/\1/p' "$log" | tail -1)
  failed=$(sed -n 's/.* \([0-9]*\) tests failed out of.*/\1/p' "$log" | tail -1)
  failed=${failed:-0}
  skipped=$(grep -c '(Skipped)$' "$log" || true)
  if [ -n "$total" ]; then
    echo "tests: $((total - failed - skipped)) passed, $failed failed, $skipped skipped"
  fi
  exit "$rc"
fi
"$build/bench/check_cc" || exit $?
exec "$build/bench/kbench" run "$@"
