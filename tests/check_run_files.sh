#!/bin/sh
# ifa-run's files: a folder without cases, a folder named like a case, a FIFO (it blocked in fopen forever), and
# --out all or nothing (an earlier run's outputs do not outlive a failed run; a run that completes leaves no
# partial file); paths joined without a double slash.
#   check_run_files.sh IFA_RUN EXAMPLES_DIR SCRATCH_DIR
set -u
run=$1 examples=$2 dir=$3
rm -rf "$dir" && mkdir -p "$dir/empty" "$dir/nested/x.json" "$dir/out" || exit 1
fail() { echo "FAIL: $*"; exit 1; }
# expect STATUS NEEDLE ARGS...: ifa-run ARGS exits STATUS and prints NEEDLE
expect() {
  want=$1 needle=$2
  shift 2
  out=$(timeout 120 "$run" "$@" 2>&1)
  rc=$?
  [ "$rc" = "$want" ] || fail "ifa-run $*: exit $rc, want $want: $out"
  printf '%s' "$out" | grep -qF -- "$needle" || fail "ifa-run $*: no \"$needle\" in: $out"
}
expect 2 "is a folder with no *.json cases" "$dir/empty"
expect 2 "is a folder, not a case file" "$dir/nested"
mkfifo "$dir/fifo.json" || exit 1
expect 2 "not a regular file" "$dir/fifo.json"
echo stale > "$dir/out/attention_out.npy"
echo stale > "$dir/out/softmax_lse.npy"
printf '{"op": "IncreFlashAttention", "attrs": {"num_heads": 2}, "inputs": {}}' > "$dir/bad.json"
expect 2 "inputs.query is missing" "$dir/bad.json" --out "$dir/out"
[ ! -e "$dir/out/attention_out.npy" ] && [ ! -e "$dir/out/softmax_lse.npy" ] ||
  fail "an earlier run's output stayed beside a failed run"
expect 0 "wrote $dir/out/attention_out.npy" "$examples/sample_case.json" --out "$dir/out"
ls "$dir/out" | grep -q partial && fail "a .partial file stayed: $(ls "$dir/out")"
expect 0 "== $examples/sample_case.json" "$examples/" --mode support
echo "ifa-run files: all checks passed"
