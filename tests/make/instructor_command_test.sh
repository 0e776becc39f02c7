#!/bin/sh
# The student's `gpulab` hands the instructor's commands (grade, audit, similarity, release) on to
# gpulab-instructor beside it, with their own options and exit status; where that command is not
# built (a student's build), it says how to build it and exits 2, and its own commands still work.
# Usage: instructor_command_test.sh GPULAB SCRATCH
set -u
gpulab=$1 scratch=$2
failed=0
rm -rf "$scratch" && mkdir -p "$scratch/alone" || exit 2
# expect CASE STATUS PATTERN COMMAND...: COMMAND exits with STATUS (any but 0 for "fail") and prints a
# line matching PATTERN.
expect() {
  name=$1 status=$2 pattern=$3
  shift 3
  "$@" >"$scratch/out" 2>&1
  got=$?
  if { [ "$status" = fail ] && [ "$got" -ne 0 ] || [ "$got" = "$status" ]; } && grep -q -- "$pattern" "$scratch/out"; then echo "ok: $name"; else
    echo "FAILED: $name: exit status $got (expected $status), output:"; cat "$scratch/out"; failed=1
  fi
}
for command in grade audit similarity release; do
  expect "gpulab $command --help shows gpulab-instructor's options" 0 "Usage: .*gpulab $command" "$gpulab" $command --help
done
expect "grade without its required option fails in grade's own words" fail "--submissions is required" \
  "$gpulab" grade --out "$scratch/results"
expect "gpulab --help lists the instructor's commands" 0 "grade .*instructors:" "$gpulab" --help
cp "$gpulab" "$scratch/alone/gpulab" || exit 2
expect "without gpulab-instructor, grade says how to build it" 2 "make instructor" "$scratch/alone/gpulab" grade --help
expect "without gpulab-instructor, the student's commands still run" 0 "Usage: .*check" "$scratch/alone/gpulab" check --help
exit $failed
