#!/bin/sh
# The end of `make check` (check and check-run of the top-level Makefile and of grader/lab.mk): a
# failed check ends with gpulab's own line and a non-zero exit status, never make's "make: *** [...]
# Error 1", which reads like a failed build. The real Makefiles run in a scratch folder with stubs
# for the scripts they call and for build/gpulab, whose behaviour each case picks (STUB_GPULAB).
# Usage: check_outcome_test.sh REPO SCRATCH
set -u
repo=$1 scratch=$2
command -v make >/dev/null || { echo "skipped: GNU make is not installed"; exit 77; }
# Run by `make test`, the outer make's settings and variables would reach the inner one.
unset MAKEFLAGS MFLAGS MAKELEVEL BUILD SOURCE LAB TASK BACKEND DEVICE SEED TIMEOUT SANITIZE RECALIBRATE PROFILE \
  CHECK_OUTCOME JOBS
failed=0

rm -rf "$scratch" && mkdir -p "$scratch/scripts" "$scratch/build" "$scratch/grader" "$scratch/labs/00-hello" || exit 2
cp "$repo/Makefile" "$scratch/" && cp "$repo/grader/lab.mk" "$repo/grader/check-outcome.mk" "$scratch/grader/" &&
  cp "$repo/labs/00-hello/Makefile" "$scratch/labs/00-hello/" || exit 2
printf '#!/bin/sh\nexit 0\n' >"$scratch/scripts/install-deps.sh"
printf '#!/bin/sh\n[ "${STUB_HARNESS:-}" != fail ] || { echo "stub: the harness does not build"; exit 3; }\n' \
  >"$scratch/scripts/build-harness.sh"
cat >"$scratch/build/gpulab" <<'STUB'
#!/bin/sh
# gpulab check as the Makefile sees it: a report, maybe an --outcome line, an exit status.
outcome=
while [ $# -gt 0 ]; do
  [ "$1" = --outcome ] && outcome=$2
  shift
done
case $STUB_GPULAB in
  pass) echo "PASSED: 5 of 5 tasks passed, 20 of 20 points"; exit 0 ;;
  fail) echo "FAILED: 3 of 5 tasks passed, 12 of 20 points"
        echo "2 of 5 tasks failed: the report above says which and why" >"$outcome"; exit 1 ;;
  crash) echo "FAILED halfway"; exit 139 ;;
esac
STUB
chmod +x "$scratch/scripts/install-deps.sh" "$scratch/scripts/build-harness.sh" "$scratch/build/gpulab"

# run CASE [VAR=value...]: make check in the scratch folder (in $folder under it); sets $status and $out.
folder=. make_args=
run() {
  name=$1; shift
  out=$(cd "$scratch/$folder" && env "$@" make $make_args check 2>&1)
  status=$? case_failed=0
}
fail() {
  echo "FAILED: $name: $1 (make exited with $status):"; printf '%s\n' "$out"; failed=1 case_failed=1
}
done_case() { [ $case_failed -ne 0 ] || echo "ok: $name"; }
says() { printf '%s\n' "$out" | grep -qF -- "$1"; }

# The same failed and passed checks, from the top and from a lab's folder (grader/lab.mk).
expect_failed_check() {
  run "$1" STUB_GPULAB=fail
  [ $status -ne 0 ] || fail "make succeeded"
  says "FAILED: 3 of 5 tasks passed" || fail "the report is missing"
  says "*** 2 of 5 tasks failed: the report above says which and why" || fail "the last line is not gpulab's outcome"
  ! says "make: ***" || fail "make's error echo is there"
  ! says "Error" || fail "make's Error line is there"
  ! ls -a "$scratch/build" | grep -q check-outcome || fail "the outcome file stayed behind"
  done_case
}
expect_passed_check() {
  run "$1" STUB_GPULAB=pass
  [ $status -eq 0 ] || fail "make failed"
  says "PASSED" || fail "the report is missing"
  ! says "***" || fail "an error line is there"
  done_case
}
expect_failed_check "a failed check"
expect_passed_check "a passed check after a failed one"

echo "a line from a run before this one" >"$scratch/build/stale-outcome"
run "a passed check with a stale outcome file" STUB_GPULAB=pass CHECK_OUTCOME=build/stale-outcome
[ $status -eq 0 ] || fail "make failed"
! says "***" || fail "the stale outcome stopped make"
done_case

echo "a line from a run before this one" >"$scratch/build/stale-outcome"
make_args=-n
run "a dry run with an outcome file there" STUB_GPULAB=fail CHECK_OUTCOME=build/stale-outcome
make_args=
[ $status -eq 0 ] || fail "the dry run failed"
! says "***" || fail "the dry run stopped on the outcome file"
! says "FAILED" || fail "the dry run ran the check"
done_case

# What a make older than 4.2 (no $(file <)) does, by clearing the flag the Makefile derives from
# MAKE_VERSION: the check still fails, with make's own error line.
make_args=outcome_readable=
run "a failed check under a make too old to read the outcome" STUB_GPULAB=fail
make_args=
[ $status -ne 0 ] || fail "make succeeded"
says "check-run] Error 1" || fail "make's own error line is missing"
! ls -a "$scratch/build" | grep -q check-outcome || fail "the outcome file stayed behind"
done_case

run "a crashed check" STUB_GPULAB=crash
[ $status -ne 0 ] || fail "make succeeded"
says "*** gpulab check exited with status 139 (the messages above say why)" || fail "the exit status is not named"
! says "make: ***" || fail "make's error echo is there"
done_case

run "a harness that does not build" STUB_GPULAB=pass STUB_HARNESS=fail
[ $status -ne 0 ] || fail "make succeeded"
says "stub: the harness does not build" || fail "the harness's message is missing"
says "harness] Error 3" || fail "make does not name the failed harness"
! says "PASSED" || fail "the check ran anyway"
done_case

folder=labs/00-hello
expect_failed_check "a failed check in a lab's folder"
expect_passed_check "a passed check in a lab's folder"
exit $failed
