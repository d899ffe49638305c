# Sourced by the test scripts (tests/sanitize_host.sh, tests/fuzz/run.sh).
# each_at_most N COMMAND ITEM...: runs COMMAND ITEM for every ITEM in the background, in order, at most N at a time
# (the next starts as soon as any one ends); how many of them exited non-zero goes to $failed. The caller has no
# other background jobs (wait -n would count them).
each_at_most() {
  local jobs=$1 command=$2 item running=0
  shift 2
  failed=0
  for item in "$@"; do
    if [ "$running" -ge "$jobs" ]; then
      wait -n || failed=$((failed + 1))
      running=$((running - 1))
    fi
    "$command" "$item" &
    running=$((running + 1))
  done
  while [ "$running" -gt 0 ]; do
    wait -n || failed=$((failed + 1))
    running=$((running - 1))
  done
}
