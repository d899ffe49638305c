#!/usr/bin/env bash
# The host-side tests under AddressSanitizer (with leak checking) and UndefinedBehaviorSanitizer: the `asan`
# preset instruments all host code (C++ and the host side of .cu files); GPU tests in these programs skip
# without a GPU and run sanitized host code with one. Any sanitizer report fails the run.
# Usage: tests/sanitize_host.sh   (from anywhere; builds into build/asan)
set -euo pipefail
cd "$(dirname "$0")/.."
# The two longest-running first, so that they overlap the others where several run at once.
programs=(test_pipelined test_stream_k test_common test_bench test_parsers_fuzz test_gemm_validator test_gemm_modes
          test_dmma_rule test_gemm_variants test_reduce)
# Without a GPU the instrumented programs never run device code, and their GPU tests (with the Eigen references
# they check against) skip: device code is built as unoptimised PTX alone (no SASS, no ptxas), host code at -O0
# rather than the preset's -O1, and the programs run side by side (docs/harness-notes.md: the build 254 -> 209 s
# on CI's kind of machine, the runs 17 s one at a time at -O1, 58 s at -O0, 22 s two at a time). With a GPU,
# the preset's optimised sm_75 code and -O1, one program at a time (the preset sets all of these again at every
# configure).
if nvidia-smi -L >/dev/null 2>&1; then
  cmake --preset asan >/dev/null
  side_by_side=1
else
  cmake --preset asan -DCMAKE_CUDA_ARCHITECTURES=75-virtual -DKS_DEVICE_CODE_O0=ON \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O0 -g1 -DNDEBUG" -DCMAKE_CUDA_FLAGS_RELWITHDEBINFO="-O0 -Xcompiler=-g1 -DNDEBUG" \
    >/dev/null
  side_by_side=${JOBS:-$(nproc)}
fi
cmake --build --preset asan -j "${JOBS:-$(nproc)}" --target "${programs[@]}"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:halt_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# One program: its log, and build/asan/<program>.status with "passed" only where it exited 0 without a report.
run_one() {
  local p=$1 status=failed
  if "build/asan/tests/$p" --gtest_brief=1 >"build/asan/$p.log" 2>&1 \
      && ! grep -qE "ERROR: (Address|Leak)Sanitizer|runtime error:" "build/asan/$p.log"; then
    status=passed
  fi
  echo "$status" >"build/asan/$p.status"
}
running=0
for p in "${programs[@]}"; do
  rm -f "build/asan/$p.status"
  if [ "$running" -ge "$side_by_side" ]; then
    wait -n || true
    running=$((running - 1))
  fi
  run_one "$p" &
  running=$((running + 1))
done
wait
passed=0 failed=0
for p in "${programs[@]}"; do
  if [ "$(cat "build/asan/$p.status" 2>/dev/null)" = passed ]; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    echo "sanitize_host: $p failed:"; tail -40 "build/asan/$p.log"
  fi
done
echo "asan: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
