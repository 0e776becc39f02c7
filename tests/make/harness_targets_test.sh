#!/bin/sh
# What scripts/build-harness.sh builds: the gpulab command and the harness of the labs the check
# names (GPULAB_LABS, the Makefile's LAB: folder, name or number, several with commas or spaces);
# every lab's harness without a name or with one it cannot resolve; the instructor's command only
# for the Makefile's instructor targets (GPULAB_INSTRUCTOR). It runs in a scratch copy whose
# build folder lists three labs' targets, with a stub cmake that records what it was asked to build.
# Usage: harness_targets_test.sh REPO SCRATCH
set -u
repo=$1 scratch=$2
command -v bash >/dev/null || { echo "skipped: bash is not installed"; exit 77; }
failed=0
rm -rf "$scratch" && mkdir -p "$scratch/scripts" "$scratch/build" "$scratch/bin" || exit 2
cp "$repo/scripts/build-harness.sh" "$scratch/scripts/" || exit 2
for lab in 00-hello 01-matmul 02-transpose; do mkdir -p "$scratch/labs/$lab"; done
touch "$scratch/build/CMakeCache.txt"
printf '#!/bin/sh\nexit 0\n' >"$scratch/build/gpulab"
{
  echo "build gpulab: phony bin/gpulab"
  echo "build gpulab-instructor: phony bin/gpulab-instructor"
  for name in hello matmul transpose; do
    for backend in cuda opencl; do echo "build gpulab_harness_${name}_${backend}: phony lib"; done
  done
} >"$scratch/build/build.ninja"
cat >"$scratch/bin/cmake" <<'STUB'
#!/bin/sh
# cmake --build BUILD --parallel N --target T...: the targets, one line.
shift 4
[ "${1:-}" = --target ] && shift
echo "$*" >"$RECORD"
STUB
chmod +x "$scratch/build/gpulab" "$scratch/bin/cmake"

# expect CASE LABS TARGETS: build-harness with GPULAB_LABS=LABS (and GPULAB_INSTRUCTOR=$INSTRUCTOR)
# asks cmake for exactly TARGETS.
expect() {
  RECORD="$scratch/record" GPULAB_LABS="$2" GPULAB_INSTRUCTOR="${INSTRUCTOR:-}" PATH="$scratch/bin:$PATH" bash "$scratch/scripts/build-harness.sh" \
    "$scratch/build" 2 >"$scratch/out" 2>&1
  got=$(cat "$scratch/record" 2>/dev/null)
  if [ "$got" = "$3" ]; then echo "ok: $1"; else
    echo "FAILED: $1: asked cmake for '$got', expected '$3'"; cat "$scratch/out"; failed=1
  fi
  rm -f "$scratch/record"
}
all="gpulab gpulab_harness_hello_cuda gpulab_harness_hello_opencl gpulab_harness_matmul_cuda gpulab_harness_matmul_opencl gpulab_harness_transpose_cuda gpulab_harness_transpose_opencl"
expect "no lab named: every lab's harness" "" "$all"
expect "a lab by name" "hello" "gpulab gpulab_harness_hello_cuda gpulab_harness_hello_opencl"
expect "a lab by folder" "01-matmul" "gpulab gpulab_harness_matmul_cuda gpulab_harness_matmul_opencl"
expect "a lab by number, with or without its zero" "2" "gpulab gpulab_harness_transpose_cuda gpulab_harness_transpose_opencl"
expect "two labs, with a comma" "transpose,00" \
  "gpulab gpulab_harness_transpose_cuda gpulab_harness_transpose_opencl gpulab_harness_hello_cuda gpulab_harness_hello_opencl"
expect "a name no lab has: every lab's harness (gpulab check names the mistake)" "hello bogus" "$all"
INSTRUCTOR=1 expect "an instructor target: the instructor's command too" "hello" \
  "gpulab gpulab-instructor gpulab_harness_hello_cuda gpulab_harness_hello_opencl"
exit $failed
