#!/usr/bin/env bash
# The host-side tests under AddressSanitizer (with leak checking) and UndefinedBehaviorSanitizer: the `asan`
# preset instruments all host code (C++ and the host side of .cu files); GPU tests in these programs skip
# without a GPU and run sanitized host code with one. Any sanitizer report fails the run.
# Usage: tests/sanitize_host.sh   (from anywhere; builds into build/asan)
set -euo pipefail
cd "$(dirname "$0")/.."
programs=(test_common test_bench test_parsers_fuzz test_gemm_validator test_gemm_modes test_pipelined test_dmma_rule
          test_stream_k test_gemm_variants test_reduce)
# Without a GPU the instrumented programs never run device code: it is built as unoptimised PTX alone (no SASS,
# no ptxas; gemm/07_ozaki/ozaki.cu 37 -> 15 s, the whole step by less than CI's run-to-run spread:
# docs/harness-notes.md). With a GPU, the preset's optimised sm_75 code (the preset sets both again at every
# configure).
if nvidia-smi -L >/dev/null 2>&1; then
  cmake --preset asan >/dev/null
else
  cmake --preset asan -DCMAKE_CUDA_ARCHITECTURES=75-virtual -DKS_DEVICE_CODE_O0=ON >/dev/null
fi
cmake --build --preset asan -j "${JOBS:-$(nproc)}" --target "${programs[@]}"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:halt_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
passed=0 failed=0
for p in "${programs[@]}"; do
  if "build/asan/tests/$p" --gtest_brief=1 >"build/asan/$p.log" 2>&1 \
      && ! grep -qE "ERROR: (Address|Leak)Sanitizer|runtime error:" "build/asan/$p.log"; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    echo "sanitize_host: $p failed:"; tail -40 "build/asan/$p.log"
  fi
done
echo "asan: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
