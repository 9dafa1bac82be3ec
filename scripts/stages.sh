# Sourced by make_run.sh and make_test.sh: runs named stages, times each, and prints the table of
# stages and times at the end (also on failure), so whoever runs `make run` or `make test` sees
# where the time went and a regression stands out.
#   stage NAME COMMAND...   runs COMMAND as the stage NAME (stops at the first failure)
#   stages_report           the table (called by the EXIT trap)
ZEUS_STAGE_NAMES=()
ZEUS_STAGE_SECONDS=()
ZEUS_STAGE_START=$(date +%s)

stage() {
  local name=$1; shift
  local start=$(date +%s)
  echo "== $name"
  local status=0
  "$@" || status=$?
  ZEUS_STAGE_NAMES+=("$name")
  ZEUS_STAGE_SECONDS+=($(( $(date +%s) - start )))
  if [ $status -ne 0 ]; then
    ZEUS_STAGE_NAMES[-1]="$name (FAILED, exit $status)"
    return $status
  fi
}

stages_report() {
  [ ${#ZEUS_STAGE_NAMES[@]} -gt 0 ] || return 0
  echo
  printf '%-52s %9s\n' "stage" "time"
  local i
  for i in "${!ZEUS_STAGE_NAMES[@]}"; do
    local s=${ZEUS_STAGE_SECONDS[$i]}
    printf '%-52s %5d:%02d\n' "${ZEUS_STAGE_NAMES[$i]}" $((s / 60)) $((s % 60))
  done
  local total=$(( $(date +%s) - ZEUS_STAGE_START ))
  printf '%-52s %5d:%02d\n' "total" $((total / 60)) $((total % 60))
}
trap stages_report EXIT
