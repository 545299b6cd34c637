#!/usr/bin/env bash
# Submit one of the project's job scripts, unchanged, to the test cluster of slurm/test_cluster.sh,
# wait for it, and check its accounting state and its output. Used by tests/integration (ctest).
#
#   bash tests/integration/slurm_job.sh CASE STATE_DIR SCENE OUTPUT INTACT_BIN [REFERENCE]
#
# CASE
#   reference  no job: the uninterrupted run that restart and resubmit compare with, made with mpirun
#            on 2 ranks outside Slurm (so it needs no cluster, and STATE_DIR is not used), in
#            OUTPUT/reference, its log OUTPUT/reference.log, and OUTPUT/reference.stamp: the step count
#            it settled on and what it was made from (binary, scene, this script). ctest runs it once,
#            as the fixture of both (integration_slurm_reference), instead of once in each of them
#   run      slurm/run_cpu.sbatch with 2 tasks; expects COMPLETED, OUTPUT/intact.pvd and a
#            metrics.jsonl that says 2 ranks and one record per step
#   scaling  slurm/scaling.sbatch over RANKS="1 2" with 2 tasks; expects COMPLETED, and in OUTPUT
#            scaling.tsv with one row per rank count (1 and 2) and the plot scaling.png
#   failing  slurm/run_cpu.sbatch on a scene override the program rejects; expects FAILED and the
#            program's error in the job log (the check that a failing job fails the tests)
#   restart  slurm/run_cpu.sbatch with 2 tasks, a 1-minute time limit and --signal=B:USR1@45 on a run
#            that needs longer: Slurm signals the job before its limit, the run checkpoints and stops,
#            the job requeues itself and restarts from the checkpoint, until the run is done. Expects
#            COMPLETED after at least one requeue, metrics.jsonl with every step once and the values of
#            the uninterrupted run (case reference), and the final checkpoint byte for byte that run's.
#            The jobs take 1-3 minutes (each runs about a minute).
#   resubmit as restart, but submitted with --no-requeue: Slurm refuses the requeue and the script
#            submits follow-up jobs instead; expects the refusal once and at least one resubmission
# REFERENCE (restart and resubmit) the OUTPUT of a reference case run with the same SCENE and
# INTACT_BIN; its stamp must match them (and this script), or the test fails rather than compare with
# a stale run. Without it, the test first makes its own reference in OUTPUT (1-4 more minutes).
# STATE_DIR is the cluster's (SLURM_CONF=STATE_DIR/slurm.conf). The job log is printed whenever the
# job or a check fails. Exit status 0 on success, 1 on failure, 77 (skipped) when the cluster could
# not be started for want of root.
# Variables: INTACT_JOB_TIMEOUT seconds to wait for the job (default: 300; 600 for restart and
# resubmit), INTACT_RESTART_STEPS the reference's first step count (default: 5000, about 50 s on the
# 2-core development machine, where starting from 120 took four attempts and 97 s; scaled up while the
# run takes under 45 s, see make_reference).
set -euo pipefail

say() { printf '[intact slurm test] %s\n' "$*" >&2; }
(($# == 5 || $# == 6)) || {
  say "usage: bash tests/integration/slurm_job.sh run|scaling|failing|reference|restart|resubmit STATE_DIR SCENE OUTPUT INTACT_BIN [REFERENCE]"
  exit 2
}
case_name=$1 state=$2 scene=$3 output=$4 bin=$5 reference_from=${6:-}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)

# The reference needs no root, but it is made only for the time-limit tests, which do.
if [[ $(id -u) != 0 ]]; then
  say "skipped: the Slurm test cluster needs root (see slurm/test_cluster.sh)"
  exit 77
fi
export SLURM_CONF=$state/slurm.conf
[[ $case_name == reference ]] || bash "$root/slurm/test_cluster.sh" status "$state" >/dev/null ||
  {
    say "the test cluster in $state is not running (its fixture, slurm_cluster_start, failed?)"
    exit 1
  }

# The time-limit tests' run of STEPS steps: bigger bodies than the scene's, output every 50th step, and
# no checkpoints by wall time (only the final one and the one the signal asks for).
restart_sets_for() {
  printf '%s' "time.steps=$1 bodies.0.mesh.box.cells=[5,5,5] bodies.1.mesh.box.cells=[5,5,5]"
  printf '%s' " output.every=50 output.checkpoint_seconds=3600"
}
# What a reference was made from: the binary (path, size, modification time), the scene (path and
# content) and this script (which chooses the options). A reference whose stamp says otherwise is stale.
reference_origin() {
  printf 'binary %s %s\n' "$(realpath "$bin")" "$(stat -L -c '%s %Y' "$bin")"
  printf 'scene %s %s\n' "$(realpath "$scene")" "$(sha256sum <"$scene" | cut -d' ' -f1)"
  printf 'script %s\n' "$(sha256sum <"${BASH_SOURCE[0]}" | cut -d' ' -f1)"
}
# make_reference DIR: the uninterrupted run in DIR/reference (log DIR/reference.log) with mpirun on 2
# ranks (the same partition as the job's); sets restart_steps and, last, writes DIR/reference.stamp
# ("steps N", then reference_origin), so a stamp means a finished reference.
# It must take longer than a job's signal window. slurmctld checks time limits about every 30 s and
# sends the signal at the first check within its lead of the limit: with --time=1 --signal=B:USR1@45
# at least one check falls in that 45 s window, so the signal comes 15-45 s into each job. (With a
# 30 s lead the window is as long as the check period, and a job was seen to get no signal at all
# before its kill at the limit.) While the reference takes under 45 s, its steps are scaled up (aiming
# at 60 s) and it runs again, up to four times: a step's cost is not uniform (the bodies come to rest),
# so one scaling was seen to leave a 21 s reference whose job ended before its signal.
make_reference() {
  local dir=$1 attempt began took words w reference factor
  rm -f "$dir/reference.stamp"
  restart_steps=${INTACT_RESTART_STEPS:-5000}
  for attempt in 1 2 3 4; do
    read -ra words <<<"$(restart_sets_for "$restart_steps")"
    reference=()
    for w in "${words[@]}"; do reference+=(--set "$w"); done
    say "reference run (uninterrupted, mpirun -n 2): $bin run $scene ${reference[*]}"
    rm -rf "$dir/reference"
    began=$SECONDS
    OMP_NUM_THREADS=1 OMP_PROC_BIND=false OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
      mpirun -n 2 --oversubscribe "$bin" run "$scene" \
      --output "$dir/reference" "${reference[@]}" >"$dir/reference.log" 2>&1 ||
      {
        tail -n 30 "$dir/reference.log" >&2
        say "FAIL: the reference run failed"
        exit 1
      }
    took=$((SECONDS - began))
    say "reference: $restart_steps steps in $took s"
    ((took >= 45)) && break
    ((attempt < 4)) || {
      say "FAIL: the reference still takes $took s after $attempt runs (at least 45 s are needed)"
      exit 1
    }
    # Aim at 60 s, with at most 4× the steps per attempt: later steps cost more than early ones (more
    # contact), so a bigger jump overshot to 140-190 s on a busy machine.
    factor=$((6000 / (took > 0 ? took : 1)))
    ((factor <= 400)) || factor=400
    restart_steps=$((restart_steps * factor / 100 + 1))
  done
  {
    echo "steps $restart_steps"
    reference_origin
  } >"$dir/reference.stamp"
}
# use_reference DIR: a reference made by the reference case (for the fixture, run just before); sets
# restart_steps from its stamp. Fails when there is none, or when it was made from another binary,
# scene or script (a stale one from an earlier run).
use_reference() {
  local stamp=$1/reference.stamp
  [[ -f $stamp ]] || {
    say "FAIL: no reference in $1 (no $stamp: its fixture, integration_slurm_reference, failed or did not run)"
    exit 1
  }
  [[ $(tail -n +2 "$stamp") == "$(reference_origin)" ]] || {
    say "FAIL: the reference in $1 is stale; it was made from"
    tail -n +2 "$stamp" >&2
    say "and this test runs"
    reference_origin >&2
    exit 1
  }
  restart_steps=$(sed -n 's/^steps \([0-9][0-9]*\)$/\1/p' "$stamp")
  [[ -n $restart_steps ]] || {
    say "FAIL: no step count in $stamp"
    exit 1
  }
  say "reference: $restart_steps steps, in $1/reference (made by integration_slurm_reference)"
}

rm -rf "$output"
mkdir -p "$output"
log=$output/slurm-%j.out
submit=(sbatch --parsable --time=10 --output="$log" --job-name="intact-test-$case_name")
case $case_name in
run)
  job=$(cd "$root" && SCENE=$scene OUTPUT=$output INTACT_BIN=$bin "${submit[@]}" -n 2 slurm/run_cpu.sbatch)
  expect=COMPLETED
  ;;
scaling)
  # Debian's python3, where apt puts python3-matplotlib (a python3 earlier in PATH may lack it).
  python=python3
  [[ -x /usr/bin/python3 ]] && python=/usr/bin/python3
  job=$(cd "$root" && SCENE=$scene OUTPUT=$output INTACT_BIN=$bin RANKS="1 2" PYTHON=$python \
    "${submit[@]}" -n 2 slurm/scaling.sbatch)
  expect=COMPLETED
  ;;
failing)
  job=$(cd "$root" && SCENE=$scene OUTPUT=$output INTACT_BIN=$bin INTACT_SET="time.dt=-1" \
    "${submit[@]}" -n 2 slurm/run_cpu.sbatch)
  expect=FAILED
  ;;
reference)
  make_reference "$output"
  say "ok: reference of $restart_steps steps in $output/reference, stamp $output/reference.stamp"
  exit 0
  ;;
restart | resubmit)
  # The reference: the same run, uninterrupted (see make_reference); the fixture's, or made here.
  if [[ -n $reference_from ]]; then
    use_reference "$reference_from"
  else
    reference_from=$output
    make_reference "$reference_from"
  fi
  restart_sets=$(restart_sets_for "$restart_steps")
  # Each job may do little before its signal: allow many requeues.
  # restart: the job requeues itself (scontrol requeue). resubmit: the job is submitted with --no-requeue,
  # so Slurm refuses the requeue (as a cluster with JobRequeue=0 does) and the script submits follow-up
  # jobs instead.
  requeue_option=$([[ $case_name == resubmit ]] && echo --no-requeue || echo --requeue)
  job=$(cd "$root" && SCENE=$scene OUTPUT=$output/run INTACT_BIN=$bin INTACT_SET="$restart_sets" INTACT_MAX_RESTARTS=60 \
    INTACT_SIGNAL=B:USR1@45 sbatch --parsable --output="$log" --job-name="intact-test-$case_name" --time=1 \
    --signal=B:USR1@45 "$requeue_option" -n 2 slurm/run_cpu.sbatch)
  expect=COMPLETED
  ;;
*)
  say "unknown case '$case_name'"
  exit 2
  ;;
esac
log=${log//%j/$job}
say "submitted job $job ($case_name), log $log"

show_log() {
  say "---- job $job log ($log)"
  cat "$log" >&2 2>/dev/null || say "(no log written)"
  say "---- end of job $job log"
}
# The reason comes again after the log, so that the end of the test's output (all a CI summary may
# keep) names it.
fail() {
  say "FAIL: $*"
  show_log
  say "FAIL: $*"
  exit 1
}

# Wait until the job has left the queue, then for its record in the job completion log.
timeout=${INTACT_JOB_TIMEOUT:-$([[ $case_name == restart || $case_name == resubmit ]] && echo 600 || echo 300)}
start=$SECONDS
# A resubmitting job is followed by new jobs of the same name; the last one ends the run.
chain_left() {
  if [[ $case_name == resubmit ]]; then
    squeue -h -n "intact-test-$case_name" -o %i 2>/dev/null
  else
    squeue -h -j "$job" -o %T 2>/dev/null
  fi
}
released=0
while [[ -n $(chain_left) ]]; do
  # Slurm holds a requeued job for about two minutes; the test need not wait for that, but releases it
  # 3 s later, once per requeue: a job started in the second of its requeue was killed with "Job
  # credential revoked" (the requeue revokes the old run's credential at one-second resolution).
  if [[ $case_name == restart && $(squeue -h -j "$job" -o %r 2>/dev/null) == BeginTime ]]; then
    if ((!released)); then
      scontrol update JobId="$job" StartTime=now+3 2>/dev/null || true
      released=1
    fi
  else
    released=0
  fi
  if ((SECONDS - start > timeout)); then
    scancel "$job" || true
    [[ $case_name == resubmit ]] && scancel -n "intact-test-$case_name" || true
    fail "job $job still queued or running after $timeout s: $(squeue -h -j "$job" -o '%T %R')"
  fi
  sleep 1
done
if [[ $case_name == resubmit ]]; then
  first_job=$job
  last=$(grep -o 'resubmitted as job [0-9]*' "$log" | tail -n 1 | grep -o '[0-9]*$' || true)
  job=${last:-$job}
fi
state_line=""
for _ in $(seq 20); do
  # A requeued job has one record per run; the last one is the job's final state.
  state_line=$(sacct -c -j "$job" -n -P -o State,ExitCode,Elapsed 2>/dev/null | tail -n 1)
  [[ -n $state_line ]] && break
  sleep 0.5
done
IFS='|' read -r job_state exit_code elapsed <<<"$state_line"
say "sacct: job $job state ${job_state:-none}, exit code ${exit_code:-?}, elapsed ${elapsed:-?} (after $((SECONDS - start)) s)"
[[ $job_state == "$expect" ]] || fail "expected sacct state $expect for job $job, found '${job_state:-no record}'"

case $case_name in
run)
  [[ -f $output/intact.pvd ]] || fail "expected $output/intact.pvd, found no such file"
  records=$(grep -c '"step"' "$output/metrics.jsonl" || true)
  steps=$(grep -o '"steps": *[0-9]*' "$output/scene.resolved.json" | grep -o '[0-9]*$' || true)
  [[ $records == $((steps + 1)) ]] ||
    fail "expected $((steps + 1)) records in metrics.jsonl (steps 0..$steps), found $records"
  ranks=$(grep -o '"ranks": *[0-9]*' "$output/metrics.jsonl" | grep -o '[0-9]*$' | sort -u | paste -sd, -)
  [[ $ranks == 2 ]] || fail "expected \"ranks\": 2 in every metrics record (srun wired to MPI), found $ranks"
  say "ok: $output/intact.pvd, $records metrics records at 2 ranks"
  ;;
scaling)
  table=$output/scaling.tsv
  [[ -f $table ]] || fail "expected $table, found no such file"
  rows=$(tail -n +2 "$table" | cut -f 1 | paste -sd' ' -)
  [[ $rows == "1 2" ]] || fail "expected one row per rank count (ranks 1 2) in $table, found ranks '$rows'"
  [[ $(head -c 8 "$output/scaling.png" 2>/dev/null | od -An -tx1 | tr -d ' \n') == 89504e470d0a1a0a ]] ||
    fail "expected a PNG plot $output/scaling.png next to the table, found none"
  say "ok: $table rows for ranks $rows, plot $output/scaling.png"
  cat "$table" >&2
  ;;
restart | resubmit)
  if [[ $case_name == restart ]]; then
    requeues=$(grep -c "requeueing job $job" "$log" || true)
    ((requeues >= 1)) || fail "expected the job to be stopped by its time-limit signal and requeued, found no requeue"
  else
    grep -q "scontrol requeue $first_job was refused" "$log" ||
      fail "expected Slurm to refuse requeueing job $first_job (--no-requeue) and the script to say so"
    requeues=$(grep -c "resubmitted as job" "$log" || true)
    ((requeues >= 1)) || fail "expected job $first_job to be stopped by its time-limit signal and resubmitted, found no resubmission"
    refusals=$(grep -c "was refused" "$log" || true)
    ((refusals == 1)) || fail "expected one refused requeue (later jobs resubmit without asking), found $refusals"
  fi
  grep -q "received SIGUSR1" "$log" || fail "expected the time-limit signal SIGUSR1 in the job log"
  grep -q "restart from .*checkpoints/step_" "$log" || fail "expected a restart from a checkpoint in the job log"
  python3 - "$reference_from/reference/metrics.jsonl" "$output/run/metrics.jsonl" "$restart_steps" <<'EOF' ||
import json, sys
reference = [json.loads(line) for line in open(sys.argv[1])]
restarted = [json.loads(line) for line in open(sys.argv[2])]
steps = int(sys.argv[3])
assert [r["step"] for r in restarted] == list(range(steps + 1)), "steps are not 0..%d once each" % steps
assert len(reference) == steps + 1, "the reference has %d records, not %d" % (len(reference), steps + 1)
for a, b in zip(reference, restarted):
    for key in ("time", "newton_iterations", "linear_iterations", "kinetic_energy", "elastic_energy",
                "gravitational_energy", "contact_pairs", "barrier_stiffness"):
        assert a[key] == b[key], "step %d: %s %r != %r" % (a["step"], key, a[key], b[key])
EOF
    fail "metrics.jsonl of the restarted job differs from the uninterrupted run's"
  final=$(printf 'checkpoints/step_%09d' "$restart_steps")
  for file in "$reference_from/reference/$final"/rank_*.ckpt; do
    cmp -s "$file" "$output/run/$final/$(basename "$file")" ||
      fail "$final/$(basename "$file") differs from the uninterrupted run's"
  done
  cmp -s "$reference_from/reference/intact.pvd" "$output/run/intact.pvd" || fail "intact.pvd differs from the uninterrupted run's"
  say "ok: stopped by the time-limit signal and restarted $requeues time(s); the final state equals the uninterrupted run's"
  sacct -c -j "$job" -n -P -o JobID,State,ExitCode,Elapsed >&2 || true
  ;;
failing)
  grep -q "key 'time.dt'" "$log" || fail "expected the program's error (key 'time.dt') in the job log"
  say "ok: the failing job is FAILED and its log names the cause:"
  show_log
  ;;
esac
