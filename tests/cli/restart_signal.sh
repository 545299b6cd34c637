#!/usr/bin/env bash
# The stop signals and `intact run --restart` end to end, with the real program under mpirun:
#   1. an uninterrupted run (the reference);
#   2. the same run stopped by a signal after a few steps: SIGUSR1 to mpirun (which forwards it to every
#      rank, as srun does), or with SIGNAL=TERM, SIGTERM to ONE rank's process only (the ranks must agree
#      and all stop after the same step). The job must exit 3 (stopped on request) and print the command
#      that continues it;
#   3. a restart with a changed scene key: refused (exit 2, the key named), the output left as it was;
#   4. the restart to the end, given neither the scene nor the first run's --set keys: the checkpoint
#      records them, so it ends at the first run's time.steps (not the scene's own time.end);
#   5. checks: metrics.jsonl holds each step 0..STEPS once with the reference's values, intact.pvd equals
#      the reference's, and the final checkpoints are byte for byte the reference's (same rank count).
#
#   bash tests/cli/restart_signal.sh INTACT_BIN NP OUTPUT SCENE STEPS USR1|TERM MPIEXEC [PREFLAGS...]
set -euo pipefail

say() { printf '[restart test] %s\n' "$*" >&2; }
fail() {
  say "FAIL: $*"
  for log in "$out"/*.log; do
    [[ -f $log ]] && { say "---- $log"; tail -n 30 "$log" >&2; }
  done
  exit 1
}
source "$(dirname "${BASH_SOURCE[0]}")/restart_compare.sh"
(($# >= 7)) || {
  say "usage: restart_signal.sh INTACT_BIN NP OUTPUT SCENE STEPS USR1|TERM MPIEXEC [PREFLAGS...]"
  exit 2
}
bin=$1 np=$2 out=$3 scene=$4 steps=$5 signal=$6 mpiexec=$7
shift 7
launch=("$mpiexec" -n "$np" "$@")
rm -rf "$out"
mkdir -p "$out"
# checkpoint_seconds is long: no periodic checkpoint in a few seconds, but a final one to compare.
common=(--set "time.steps=$steps" --set output.every=4 --set output.checkpoint_seconds=3600)

# 1. The reference.
"${launch[@]}" "$bin" run "$scene" --output "$out/reference" "${common[@]}" >"$out/reference.log" 2>&1 ||
  fail "the uninterrupted run failed"

# 2. The interrupted run: signal once step 2 is in metrics.jsonl.
"${launch[@]}" "$bin" run "$scene" --output "$out/run" "${common[@]}" >"$out/first.log" 2>&1 &
job=$!
for _ in $(seq 1200); do
  [[ -f $out/run/metrics.jsonl && $(wc -l <"$out/run/metrics.jsonl") -ge 3 ]] && break
  kill -0 "$job" 2>/dev/null || break
  sleep 0.05
done
if [[ $signal == USR1 ]]; then
  kill -USR1 "$job" || fail "the run ended before it could be signalled"
  say "sent SIGUSR1 to mpirun (pid $job)"
else
  # One rank only: the first intact process among mpirun's children.
  rank_pid=$(ps -o pid= --ppid "$job" | head -n 1 | tr -d ' ')
  [[ -n $rank_pid ]] || fail "found no rank process under mpirun (pid $job)"
  kill -TERM "$rank_pid" || fail "the run ended before it could be signalled"
  say "sent SIGTERM to one rank (pid $rank_pid of mpirun $job)"
fi
status=0
wait "$job" || status=$?
((status == 3)) || fail "the signalled run exited with status $status, expected 3 (stopped on request)"
grep -q "stopped by SIG$signal after step" "$out/first.log" || fail "no 'stopped by SIG$signal' message"
grep -q -- "continue with: mpirun -n $np .*intact run --restart $out/run\$" "$out/first.log" ||
  fail "the stop message does not give the command that continues the run"
last=$(tail -n 1 "$out/run/metrics.jsonl" | python3 -c 'import json,sys; print(json.load(sys.stdin)["step"])')
((last < steps)) || fail "the run reached its last step ($last) before the signal took effect"
say "stopped after step $last of $steps"

# 3. A changed scene is refused and changes nothing.
cp "$out/run/metrics.jsonl" "$out/metrics.before"
cp "$out/run/intact.pvd" "$out/pvd.before"
status=0
"${launch[@]}" "$bin" run --restart "$out/run" --set contact.friction=0.9 >"$out/changed.log" 2>&1 || status=$?
((status == 2)) || fail "a restart with a changed contact.friction exited with $status, expected 2"
grep -q "key 'contact.friction'" "$out/changed.log" || fail "the error does not name contact.friction"
cmp -s "$out/metrics.before" "$out/run/metrics.jsonl" || fail "the refused restart changed metrics.jsonl"
cmp -s "$out/pvd.before" "$out/run/intact.pvd" || fail "the refused restart changed intact.pvd"

# 4. The restart.
"${launch[@]}" "$bin" run --restart "$out/run" >"$out/restart.log" 2>&1 || fail "the restart failed"
grep -q "restart from .*step $last" "$out/restart.log" || fail "the restart did not start from step $last"

# 5. The same run, the same files.
same_as_reference "$steps"
say "ok: SIG$signal at step $last, restart to $steps: metrics, series and final state equal to the uninterrupted run"
