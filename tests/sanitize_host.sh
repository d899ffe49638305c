#!/usr/bin/env bash
# The host-side tests under AddressSanitizer (with leak checking) and UndefinedBehaviorSanitizer: the `asan`
# preset instruments all host code (C++ and the host side of .cu files); GPU tests in these programs skip
# without a GPU and run sanitized host code with one. Any sanitizer report fails the run.
# Usage: tests/sanitize_host.sh   (from anywhere; builds into build/asan)
set -euo pipefail
cd "$(dirname "$0")/.."
# Without a GPU the instrumented programs never run device code, and their GPU tests (with the Eigen references
# they check against) skip: the `asan-host` preset builds device code as unoptimised PTX alone (no SASS, no ptxas)
# and host code at -O0 rather than asan's -O1, and the programs run side by side (docs/harness-notes.md: the build
# 254 -> 209 s on CI's kind of machine, the runs 17 s one at a time at -O1, 58 s at -O0, 22 s two at a time). With
# a GPU, the `asan` preset's optimised sm_75 code and -O1, one program at a time. Both presets build in build/asan
# and set these variables at every configure.
if nvidia-smi -L >/dev/null 2>&1; then
  cmake --preset asan >/dev/null
  side_by_side=1
else
  cmake --preset asan-host >/dev/null
  side_by_side=${JOBS:-$(nproc)}
fi
# The programs, in the order they run: tests/CMakeLists.txt lists them (the target sanitized_programs).
read -r -a programs < build/asan/tests/sanitized_programs.txt
cmake --build --preset asan -j "${JOBS:-$(nproc)}" --target sanitized_programs
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:halt_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# One program, its log in build/asan/<program>.log; where it fails (a non-zero exit or a sanitizer's report),
# what to print goes to build/asan/<program>.failed and it returns 1.
run_one() {
  local p=$1
  rm -f "build/asan/$p.failed"
  if "build/asan/tests/$p" --gtest_brief=1 >"build/asan/$p.log" 2>&1 \
      && ! grep -qE "ERROR: (Address|Leak)Sanitizer|runtime error:" "build/asan/$p.log"; then
    return 0
  fi
  { echo "sanitize_host: $p failed:"; tail -40 "build/asan/$p.log"; } >"build/asan/$p.failed"
  return 1
}
source tests/each_at_most.sh
each_at_most "$side_by_side" run_one "${programs[@]}"
for p in "${programs[@]}"; do
  if [ -f "build/asan/$p.failed" ]; then cat "build/asan/$p.failed"; fi
done
echo "asan: $((${#programs[@]} - failed)) passed, $failed failed"
[ "$failed" -eq 0 ]
