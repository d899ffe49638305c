#!/usr/bin/env bash
# The C++ fuzz targets (libFuzzer, clang, with AddressSanitizer and UndefinedBehaviorSanitizer): each parser of
# untrusted text kbench has (tests/fuzz/{lists,cuobjdump,pattern}.cpp) runs first over its kept inputs
# (tests/fuzz/corpus/TARGET: seeds and every input that ever found something, as regression cases), then for
# SECONDS of new inputs. A crash, a sanitizer report, an input that takes over 2 s or 2 GiB fails the run; the
# input is saved as build/fuzz/TARGET-crash-* (fix the parser, then keep the input in the corpus).
# Usage: tests/fuzz/run.sh [SECONDS per target, default 20]   (CI runs it; clang and libFuzzer come from
# Debian's clang and libclang-rt-dev, installed here when missing)
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds=${1:-20}
out=build/fuzz
mkdir -p "$out"

probe="$out/probe.cpp"
echo 'extern "C" int LLVMFuzzerTestOneInput(const unsigned char*, unsigned long) { return 0; }' > "$probe"
if ! clang++ -fsanitize=fuzzer "$probe" -o "$out/probe" >/dev/null 2>&1; then
  source cmake/apt_install.sh
  echo "fuzz: installing clang and libclang-rt-dev (libFuzzer)"
  ks_apt_install clang libclang-rt-dev >/dev/null
fi

flags=(-std=c++20 -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -I.
       -isystem /usr/include/eigen3)
declare -A sources=(
  [lists]="tests/fuzz/lists.cpp bench/parse.cpp common/random.cpp gemm/host/operands.cpp"
  [cuobjdump]="tests/fuzz/cuobjdump.cpp bench/resources.cpp bench/pattern.cpp -lre2"
  [pattern]="tests/fuzz/pattern.cpp bench/pattern.cpp -lre2")
cuda_include=$(dirname "$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)")/../include
flags+=(-isystem "$cuda_include")

# The three targets are compiled side by side, then fuzzed as many at a time as there are cores (each for SECONDS
# on a core of its own: libFuzzer runs one process).
targets=(lists cuobjdump pattern)
jobs=$(nproc 2>/dev/null || echo 1)
source tests/each_at_most.sh

compile() {
  # shellcheck disable=SC2086  # the source list is words
  clang++ "${flags[@]}" ${sources[$1]} -o "$out/$1"
}
each_at_most "$jobs" compile "${targets[@]}"
[ "$failed" -eq 0 ] || { echo "fuzz: $failed of ${#targets[@]} targets did not compile"; exit 1; }

# One target's run; its summary line (and a finding's report) go to $out/TARGET.summary, printed in order below.
fuzz() {
  local target=$1 work="$out/$1-corpus"  # new inputs go to work; the kept ones are read, never written
  mkdir -p "$work"
  if "$out/$target" "$work" "tests/fuzz/corpus/$target" -max_total_time="$seconds" -timeout=2 -rss_limit_mb=2048 \
      -max_len=65536 -artifact_prefix="$out/$target-" -print_final_stats=1 >"$out/$target.log" 2>&1; then
    echo "fuzz $target: $(grep -m1 -o 'stat::number_of_executed_units: *[0-9]*' "$out/$target.log" | grep -o '[0-9]*$') inputs in ${seconds} s, no finding"
  else
    echo "fuzz $target: FINDING (input saved as $out/$target-*):"
    grep -E "fuzz finding|ERROR|SUMMARY|Test unit written" "$out/$target.log" | head -8
    return 1
  fi >"$out/$target.summary"
}
each_at_most "$jobs" fuzz "${targets[@]}"
for target in "${targets[@]}"; do cat "$out/$target.summary"; done
[ "$failed" -eq 0 ]
