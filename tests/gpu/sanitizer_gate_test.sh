#!/bin/sh
# The sanitizer gate on a CUDA GPU (`gpulab check --sanitize`): planted mistakes in copies of the
# reference solutions are reported as unsafe code with the kind of error and the student's file:line,
# and the solutions themselves are clean. Exit 77 (skipped) without a CUDA device.
# Usage: sanitizer_gate_test.sh GPULAB REPO SCRATCH
set -u
gpulab=$1 repo=$2 scratch=$3
"$gpulab" devices | grep -q '^cuda: $' || { echo "skipped: no CUDA device"; exit 77; }
failed=0

# plant NAME LAB FILE FROM TO: a copy of solutions/LAB with FROM replaced by TO in FILE.
plant() {
  rm -rf "$scratch/$1" && mkdir -p "$scratch/$1" && cp -r "$repo/solutions/$2" "$scratch/$1/" || exit 2
  python3 - "$scratch/$1/$2/$3" "$4" "$5" <<'PY' || exit 2
import sys
path, old, new = sys.argv[1:]
text = open(path).read()
assert text.count(old) == 1, f"{old!r} does not occur once in {path}"
open(path, "w").write(text.replace(old, new))
PY
}

# expect NAME LAB PATTERN...: the gate's report for the planted copy contains every PATTERN.
expect() {
  name=$1 lab=$2; shift 2
  out=$("$gpulab" check --sanitize --source "$scratch/$name" --lab "$lab" --backend cuda 2>&1)
  for pattern in "$@"; do
    if ! printf '%s\n' "$out" | grep -qF -- "$pattern"; then
      echo "FAILED: $name: the report does not say '$pattern':"; printf '%s\n' "$out"; failed=1
    fi
  done
  echo "ok: $name"
}

plant hello-off-by-one 00-hello hello.cu 'if (i < n)' 'if (i <= n)'
expect hello-off-by-one 00-hello "unsafe code" "out-of-bounds global" "00-hello/hello.cu:7" "bounds test"
plant transpose-no-barrier 02-transpose transpose.cu '  __syncthreads();  // the whole tile' '  // no barrier'
expect transpose-no-barrier 02-transpose "unsafe code" "shared-memory data race" "02-transpose/transpose.cu:34" "02-transpose/transpose.cu:42"
# A barrier under a condition on the thread's index is proven divergent before anything runs (the
# static barrier check); one under a condition on data only the sanitizer's synccheck finds.
plant transpose-barrier-in-if 02-transpose transpose.cu '  __syncthreads();  // the whole tile' '  if (col < cols && row < rows) __syncthreads();  // the whole tile'
expect transpose-barrier-in-if 02-transpose "unsafe code" "__syncthreads() under \`if (col < cols && row < rows)\`" "02-transpose/transpose.cu:36"
plant transpose-barrier-on-data 02-transpose transpose.cu '  __syncthreads();  // the whole tile' '  if (tile[threadIdx.y][threadIdx.x] >= 0.0f) __syncthreads();  // the whole tile'
expect transpose-barrier-on-data 02-transpose "unsafe code" "barrier not reached by all threads" "02-transpose/transpose.cu:36"

out=$("$gpulab" check --sanitize --source "$repo/solutions" --backend cuda 2>&1)
if printf '%s\n' "$out" | grep -q "unsafe code\|✘"; then echo "FAILED: the solutions are not clean:"; printf '%s\n' "$out"; failed=1; fi
echo "ok: the solutions are clean"
exit $failed
