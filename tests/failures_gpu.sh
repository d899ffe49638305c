#!/usr/bin/env bash
# kbench's failure paths on a GPU (issue: failures that lose nothing). Exits 77 (ctest: skipped) without one.
#   tests/failures_gpu.sh KBENCH CHECK_CC WORKDIR
# 1. SIGINT during a sweep: exit 130, the JSON file is valid, says "interrupted", keeps the finished rows.
# 2. A size that fits the device but not its free memory (KS_BENCH_RESERVE_GIB holds the rest): that row
#    fails with the allocation error, the other rows are measured, exit 1. The row's size comes from the
#    device's memory: the largest power of two of int64 within a quarter of it.
# 3. A sticky CUDA error in one row (KS_BENCH_FAULT): that row fails, the rest are reported as not run, the
#    JSON says "stopped_early", exit 1.
# 4. An invalid --device: the check_cc message, exit 1.
set -u
kbench=${1:?}; check_cc=${2:?}; work=${3:?}
mkdir -p "$work"
"$check_cc" >/dev/null 2>&1 || { echo "no usable GPU: skipped"; exit 77; }
fail=0
check() { if eval "$2"; then echo "ok: $1"; else echo "FAILED: $1"; fail=1; fi; }
json() { python3 - "$@" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
ctx, rows = doc["context"], doc["benchmarks"]
err = lambda r: r.get("error") or r.get("error_message") or r.get("skip_message") or ""
ok = [r for r in rows if r.get("status", "ok") == "ok" and not err(r)]
print(sys.argv[2].format(ctx=ctx, ok=len(ok), total=len(rows),
      errors=" | ".join(sorted({err(r)[:60] for r in rows if err(r)}))))
PY
}

# 1. interrupt
out=$work/interrupted.json
"$kbench" run --suite reduce --sizes 2^20,2^22,2^24,2^26,2^27 --types int32,int64,float,double --skip-ceilings \
  --out "$out" >"$work/interrupted.txt" 2>"$work/interrupted.err" &
pid=$!
for _ in $(seq 1 600); do grep -q '^\[6/' "$work/interrupted.err" 2>/dev/null && break; sleep 0.1; done
kill -INT $pid
wait $pid
rc=$?
check "SIGINT exits 130 (got $rc)" '[ $rc -eq 130 ]'
summary=$(json "$out" '{ctx[interrupted]} {ok} of {total} rows measured; {errors}' 2>&1)
echo "  $summary"
check "SIGINT leaves valid JSON marked interrupted with measured rows" \
  '[[ "$summary" =~ ^SIGINT\ [1-9][0-9]*\ of ]] && [[ "$summary" == *"not run: interrupted"* ]]'

# 2. out of memory in one row
total_mib=$(nvidia-smi --query-gpu=memory.total --format=csv,noheader,nounits -i 0 | head -1)
exp=20
while [ $(( (1 << (exp + 1)) * 8 )) -le $(( total_mib * 1024 * 1024 / 4 )) ]; do exp=$((exp + 1)); done
big_mib=$(( (1 << exp) * 8 / 1048576 ))
# Hold all but half the big row: 2^20 elements still fit, 2^exp do not.
reserve=$(python3 -c "print(round(($total_mib - $big_mib / 2) / 1024, 3))")
out=$work/oom.json
KS_BENCH_RESERVE_GIB=$reserve "$kbench" run --suite reduce --variants fast --sizes 2^20,2^$exp --types int64 \
  --skip-ceilings --repetitions 3 --out "$out" >"$work/oom.txt" 2>"$work/oom.err"
rc=$?
summary=$(json "$out" '{ok} of {total} rows measured; {errors}' 2>&1)
echo "  2^$exp int64 ($big_mib MiB) with $reserve of $total_mib MiB held: exit $rc; $summary"
check "OOM row fails, the others are measured, exit 1" \
  '[ $rc -eq 1 ] && [[ "$summary" == *"out of memory"* ]] && [[ "$summary" =~ ^[1-9] ]]'

# 3. sticky error
out=$work/sticky.json
KS_BENCH_FAULT='reduce/shuffle/' "$kbench" run --suite reduce --sizes 2^20 --types int64 --skip-ceilings \
  --repetitions 3 --out "$out" >"$work/sticky.txt" 2>"$work/sticky.err"
rc=$?
summary=$(json "$out" '{ok} of {total} rows measured; stopped_early: {ctx[stopped_early]}; {errors}' 2>&1)
echo "  exit $rc; $summary"
check "sticky error: row failed, rest not run, JSON says so, exit 1" \
  '[ $rc -eq 1 ] && [[ "$summary" == *"not run: an earlier row left a sticky CUDA error"* ]] && [[ "$summary" =~ ^[1-9] ]]'

# 4. invalid device
"$kbench" run --device 99 >"$work/device.txt" 2>&1
rc=$?
check "kbench --device 99 exits 1 naming the visible devices (got $rc: $(cat "$work/device.txt"))" \
  '[ $rc -eq 1 ] && grep -q "does not exist" "$work/device.txt"'
"$check_cc" --device 99 >"$work/device_cc.txt" 2>&1
rc=$?
check "check_cc --device 99 exits 1 (got $rc)" '[ $rc -eq 1 ] && grep -q "does not exist" "$work/device_cc.txt"'
exit $fail
