#!/usr/bin/env bash
# Sourced by restart_signal.sh and restart_loop.sh: the checks that a stopped and resumed run ended as the
# uninterrupted one did. Needs `fail` and the caller's $out (reference/ and run/ in it).
#
#   same_as_reference STEPS: metrics.jsonl holds each step 0..STEPS once with the reference's physics,
#   intact.pvd equals the reference's, and the final checkpoint's rank files are byte for byte the
#   reference's (same rank count).
same_as_reference() {
  local steps=$1
  python3 - "$out/reference/metrics.jsonl" "$out/run/metrics.jsonl" "$steps" <<'PY' || fail "metrics differ"
import json, sys
reference = [json.loads(line) for line in open(sys.argv[1])]
resumed = [json.loads(line) for line in open(sys.argv[2])]
steps = int(sys.argv[3])
assert [r["step"] for r in resumed] == list(range(steps + 1)), [r["step"] for r in resumed]
physics = ["time", "newton_iterations", "linear_iterations", "newton_residual", "contact_pairs",
           "kinetic_energy", "elastic_energy", "gravitational_energy", "barrier_stiffness", "friction_lags"]
for a, b in zip(reference, resumed):
    for key in physics:
        assert a[key] == b[key], f"step {a['step']}: {key} {a[key]} != {b[key]}"
PY
  cmp -s "$out/reference/intact.pvd" "$out/run/intact.pvd" || fail "intact.pvd differs from the reference"
  local final file
  final=$(printf 'checkpoints/step_%09d' "$steps")
  for file in "$out/reference/$final"/rank_*.ckpt; do
    cmp -s "$file" "$out/run/$final/$(basename "$file")" ||
      fail "$(basename "$file") of $final differs from the reference"
  done
}
