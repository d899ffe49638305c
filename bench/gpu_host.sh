#!/usr/bin/env bash
# One call on a GPU host that has no package registry (see the README, "Measuring on a GPU host"): the
# Debian packages travel in .gpu/ and .gpu/env.sh unpacks them. Runs the steps named on the command line,
# in order, writing logs under $OUT (default ./out):
#   build              configure + build (Release, ninja) into /tmp/ks-build
#   test [ctest args]  the whole test suite
#   cc                 check_cc of this build, and of a CUDAARCHS=75 build (PTX/SASS report)
#   bench [kbench run args]   kbench run, JSON to $OUT/results.json, markdown table to $OUT/table.md
#   autotune [args]    kbench autotune: every dmma configuration against cuBLAS, to $OUT/autotune.md (+ .json)
#   sanitize [tools]   tests/sanitize_gpu.sh: the GPU tests under compute-sanitizer on small odd sizes
#   sass               registers/spills of every kernel and the SASS opcode mix, to $OUT/resources.txt
# Example: bench/gpu_host.sh build test cc bench
# The host copy has no .git: `git describe --always --dirty > .gpu/revision` beforehand records the revision.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-$PWD/out}
mkdir -p "$out"
build=/tmp/ks-build
# shellcheck disable=SC1091
source .gpu/env.sh
status=0
while [ $# -gt 0 ]; do
  step=$1; shift
  args=()
  while [ $# -gt 0 ] && [[ ! "$1" =~ ^(build|test|cc|bench|autotune|sanitize|sass)$ ]]; do args+=("$1"); shift; done
  echo "=== $step ${args[*]:-}"
  case "$step" in
    build)
      rev=$(cat .gpu/revision 2>/dev/null || echo unknown)
      { cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DKS_GIT_REVISION_OVERRIDE="$rev" && cmake --build "$build" -j"$(nproc)"; } \
        >"$out/build.log" 2>&1 || { tail -40 "$out/build.log"; exit 1; }
      grep -E "CUDA architectures" "$out/build.log" ;;
    test)
      rm -rf "$build/tests/gtest"
      ctest --test-dir "$build" -j16 --output-on-failure --timeout 600 --output-junit "$out/ctest-junit.xml" \
        "${args[@]}" >"$out/ctest.log" 2>&1 || status=1
      python3 tests/test_summary.py "$out/ctest-junit.xml" "$build/tests/gtest"
      grep -E "tests passed|tests failed|Total Test time" "$out/ctest.log"
      grep -A30 "The following tests FAILED" "$out/ctest.log" | head -40 ;;
    cc)
      "$build/bench/check_cc" | tee "$out/check_cc.txt"
      { CUDAARCHS=75 cmake -S . -B /tmp/ks-build75 -G Ninja -DCMAKE_BUILD_TYPE=Release -DKS_BUILD_TESTS=OFF \
          && cmake --build /tmp/ks-build75 -j"$(nproc)" --target check_cc; } >"$out/build75.log" 2>&1 \
        || { tail -20 "$out/build75.log"; status=1; }
      /tmp/ks-build75/bench/check_cc | tee "$out/check_cc_75.txt" ;;
    bench)
      "$build/bench/kbench" run --out "$out/results.json" --format md "${args[@]}" >"$out/table.md" \
        2>"$out/bench.log" || status=1
      cat "$out/table.md" ;;
    autotune)
      "$build/bench/kbench" autotune --out "$out/autotune.json" "${args[@]}" >"$out/autotune.md" \
        2>"$out/autotune.log" || status=1
      cat "$out/autotune.md" ;;
    sanitize)
      OUT="$out" tests/sanitize_gpu.sh "$build" "${args[@]}" || status=1 ;;
    sass)
      for o in $(find "$build" -name '*.cu.o'); do
        cuobjdump --dump-resource-usage "$o" 2>/dev/null | grep -E "Function|REG" | sed "s|^|$(basename "$o"): |"
      done >"$out/resources.txt"
      grep -c "STACK:0" "$out/resources.txt" | sed 's/^/kernels without stack frame: /' ;;
    *) echo "unknown step $step"; exit 2 ;;
  esac
done
exit $status
