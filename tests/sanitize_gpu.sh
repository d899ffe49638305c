#!/usr/bin/env bash
# The GPU tests under compute-sanitizer, on small odd sizes (KS_SMALL_SIZES): every GEMM variant in every
# launch mode at 1x1x1, 17x33x9 and 127x129x131; every reduction variant, type, op and block size at
# n = 1, 33, 4097 (the ladder) and every start offset and boundary length up to 4097 (fast); the integral.
#   tests/sanitize_gpu.sh BUILD_DIR [TOOL ...]     TOOL: memcheck (with leak check), racecheck, synccheck,
#                                                  initcheck; default: all four
# Prints each tool's summary per test program, writes the full reports to $OUT (default ./out)/sanitize-*.log,
# and exits 0 only if every tool found 0 errors. Needs a GPU (the GPU host: see README, "Measuring on a GPU host").
# Two kinds of report come from the tools, not the code (each shown so on the GPU, docs/gemm-notes.md, step 71):
# racecheck flags residue_products_kernel's hand-over of its residue tile by bar.arrive and bar.sync (a probe with
# the same protocol gets the same report), and initcheck (H200, the GPU host's toolkit, 2026-11-29) flags
# ozaki_14_accurate's reads of its coarse product (coarse_row_max_kernel, coarse_col_shift_kernel), which cuBLASLt
# writes in full (a sentinel written before the product is gone from every element after it, in every case).
set -uo pipefail
build=${1:?usage: tests/sanitize_gpu.sh BUILD_DIR [memcheck|racecheck|synccheck|initcheck ...]}
shift
tools=("$@")
[ ${#tools[@]} -eq 0 ] && tools=(memcheck racecheck synccheck initcheck)
out=${OUT:-$PWD/out}
mkdir -p "$out"
export KS_SMALL_SIZES=1
# 17x33x9 and 127x129x131 have odd leading dimensions, which the TMA kernel refuses: its runs are the 33x17x45 ones.
gemm_filter='Variants/GemmCase.*_1x1x1:Variants/GemmCase.*_17x33x9:Variants/GemmCase.*_127x129x131:Variants/GemmCase.*dmma_tma*_33x17x45*:Variants/GemmBlas.*'
programs=(
  "test_gemm_variants --gtest_filter=$gemm_filter"
  "test_reduce --gtest_filter=Variants/*"
  "test_fast_reduce"
)
status=0
for tool in "${tools[@]}"; do
  extra=()
  [ "$tool" = memcheck ] && extra=(--leak-check full)
  for p in "${programs[@]}"; do
    read -r -a cmd <<<"$p"
    log="$out/sanitize-$tool-${cmd[0]}.log"
    compute-sanitizer --tool "$tool" "${extra[@]}" --error-exitcode 99 "$build/tests/${cmd[0]}" "${cmd[@]:1}" \
      >"$log" 2>&1
    rc=$?
    summary=$(grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$log" | tail -1)
    tests=$(grep -E "^\[  PASSED  \]|^\[  FAILED  \]" "$log" | tr '\n' ' ')
    echo "$tool ${cmd[0]}: ${summary:-no summary (see $log)} | ${tests:-no gtest summary} | exit $rc"
    [ "$rc" -ne 0 ] && status=1
  done
done
exit $status
