# Sourced by make_run.sh and make_test.sh: runs named stages, times each, and prints the table of
# stages and times at the end (also on failure), so whoever runs `make run` or `make test` sees
# where the time went and a regression stands out. Beside each time, how busy the machine's CPUs
# were during the stage (all processes, from /proc/stat): a stage near 100 % is bound by work, one
# far below it by waiting.
#   stage NAME COMMAND...   runs COMMAND as the stage NAME (stops at the first failure)
#   stages_report           the table (called by the EXIT trap)
ZEUS_STAGE_NAMES=()
ZEUS_STAGE_SECONDS=()
ZEUS_STAGE_BUSY=()
ZEUS_STAGE_START=$(date +%s)

# "busy total" jiffies of all CPUs so far (busy: user, nice, system, irq, softirq, steal).
cpu_jiffies() {
  awk '/^cpu / { busy = $2 + $3 + $4 + $7 + $8 + $9; print busy, busy + $5 + $6 }' /proc/stat 2> /dev/null || echo "0 0"
}
ZEUS_STAGE_JIFFIES=$(cpu_jiffies)

# The share of busy jiffies between two "busy total" readings, as "N %".
busy_share() {
  local b0 t0 b1 t1
  read -r b0 t0 <<< "$1"
  read -r b1 t1 <<< "$2"
  [ $(( t1 - t0 )) -gt 0 ] && echo "$(( 100 * (b1 - b0) / (t1 - t0) )) %" || echo ""
}

stage() {
  local name=$1; shift
  local start=$(date +%s) jiffies0=$(cpu_jiffies)
  echo "== $name"
  local status=0
  "$@" || status=$?
  ZEUS_STAGE_NAMES+=("$name")
  ZEUS_STAGE_SECONDS+=($(( $(date +%s) - start )))
  ZEUS_STAGE_BUSY+=("$(busy_share "$jiffies0" "$(cpu_jiffies)")")
  if [ $status -ne 0 ]; then
    ZEUS_STAGE_NAMES[-1]="$name (FAILED, exit $status)"
    return $status
  fi
}

stages_report() {
  [ ${#ZEUS_STAGE_NAMES[@]} -gt 0 ] || return 0
  echo
  printf '%-60s %8s %7s\n' "stage" "time" "CPU"
  local i
  for i in "${!ZEUS_STAGE_NAMES[@]}"; do
    local s=${ZEUS_STAGE_SECONDS[$i]}
    printf '%-60s %5d:%02d %7s\n' "${ZEUS_STAGE_NAMES[$i]}" $((s / 60)) $((s % 60)) "${ZEUS_STAGE_BUSY[$i]}"
  done
  local total=$(( $(date +%s) - ZEUS_STAGE_START ))
  printf '%-60s %5d:%02d %7s\n' "total" $((total / 60)) $((total % 60)) \
    "$(busy_share "$ZEUS_STAGE_JIFFIES" "$(cpu_jiffies)")"
}
trap stages_report EXIT
