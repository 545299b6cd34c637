#!/usr/bin/env bash
# Stop and resume a run over and over, each time at a random moment, and require that it always resumes and
# ends bit for bit where an uninterrupted run at the same rank count ends:
#   1. an uninterrupted run (the reference);
#   2. the same run, started and then continued with `intact run --restart DIR` (no scene, no --set: the
#      checkpoint records them): TRIES times it gets SIGTERM, sent to ONE rank's process, at a random moment
#      of up to 60% of the reference's wall time after the program started (during the set-up, a step or a
#      checkpoint write). A try must end with status 3 (stopped, checkpoint written) or 0 (it reached the
#      end first); a last resume without a signal finishes the run;
#   3. checks: metrics.jsonl holds each step once with the reference's values, intact.pvd equals the
#      reference's, and the final checkpoint's rank files are byte for byte the reference's.
#
#   bash tests/cli/restart_loop.sh INTACT_BIN NP OUTPUT SCENE STEPS TRIES SEED MPIEXEC [PREFLAGS...]
#
# SEED makes the moments reproducible (bash's RANDOM); the log names each try's delay.
set -euo pipefail

say() { printf '[restart loop] %s\n' "$*" >&2; }
fail() {
  say "FAIL: $*"
  for log in "$out"/*.log; do
    [[ -f $log ]] && { say "---- $log"; tail -n 20 "$log" >&2; }
  done
  exit 1
}
source "$(dirname "${BASH_SOURCE[0]}")/restart_compare.sh"
(($# >= 8)) || {
  say "usage: restart_loop.sh INTACT_BIN NP OUTPUT SCENE STEPS TRIES SEED MPIEXEC [PREFLAGS...]"
  exit 2
}
bin=$1 np=$2 out=$3 scene=$4 steps=$5 tries=$6 seed=$7 mpiexec=$8
shift 8
launch=("$mpiexec" -n "$np" "$@")
rm -rf "$out"
mkdir -p "$out"
RANDOM=$seed
common=(--set "time.steps=$steps" --set output.every=3 --set output.checkpoint_seconds=3600)

# 1. The reference, timed: the moments of the signals are fractions of its wall time.
started=$(date +%s%N)
"${launch[@]}" "$bin" run "$scene" --output "$out/reference" "${common[@]}" >"$out/reference.log" 2>&1 ||
  fail "the uninterrupted run failed"
reference_ms=$((($(date +%s%N) - started) / 1000000))

# 2. Stop, resume, stop, ... then resume to the end.
stops=0
status=3
for try in $(seq "$((tries + 1))"); do
  last=$((try > tries))
  log=$out/try_$try.log
  if ((try == 1)); then
    "${launch[@]}" "$bin" run "$scene" --output "$out/run" "${common[@]}" >"$log" 2>&1 &
  else
    "${launch[@]}" "$bin" run --restart "$out/run" >"$log" 2>&1 &
  fi
  job=$!
  # The handlers are set before MPI starts; the first line of the log comes after that on every rank.
  for _ in $(seq 600); do
    grep -q "rank(s):" "$log" 2>/dev/null && break
    kill -0 "$job" 2>/dev/null || break
    sleep 0.02
  done
  sent="no signal"
  if ((!last)); then
    delay_ms=$((RANDOM % 1000 * reference_ms * 6 / 10000))
    sleep "$(printf '%d.%03d' $((delay_ms / 1000)) $((delay_ms % 1000)))"
    rank_pid=$(ps -o pid= --ppid "$job" 2>/dev/null | head -n 1 | tr -d ' ' || true)
    if [[ -n $rank_pid ]] && kill -TERM "$rank_pid" 2>/dev/null; then
      sent="SIGTERM to rank process $rank_pid after $delay_ms ms"
    else
      sent="no signal (the try had ended after $delay_ms ms)"
    fi
  fi
  status=0
  wait "$job" || status=$?
  say "try $try: $sent; status $status"
  if ((status == 3)); then
    grep -q "stopped by SIGTERM after step" "$log" || fail "try $try: status 3 without the stop message"
    grep -q -- "continue with: mpirun -n $np .* run --restart $out/run\$" "$log" ||
      fail "try $try: no command to continue"
    stops=$((stops + 1))
  elif ((status == 0)); then
    break
  elif ((last)); then
    fail "the last resume ended with status $status, expected 0"
  else
    fail "try $try ended with status $status (expected 3: stopped, or 0: finished)"
  fi
done
((status == 0)) || fail "the last resume was stopped (status $status) without a signal"
((stops >= 1)) || fail "no try was stopped (the delays are longer than the run)"

# 3. The same run, the same files.
same_as_reference "$steps"
say "ok: $stops stops at random moments, every one resumed; the result is bit for bit the uninterrupted run's"
