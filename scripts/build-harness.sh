#!/usr/bin/env bash
# Configures (once) and builds the harness into BUILD, saying what it does: a line before cmake
# configures, cmake's whole output when it fails, a progress count while it compiles, and every
# compiler message in full. Quiet when nothing changed. Exit status: cmake's, when it fails.
# Called by the Makefile (make harness, check, grade, test...); safe to run by hand.
#
#   scripts/build-harness.sh BUILD [JOBS] [--all]
#
# Without --all it builds what `gpulab check` uses (the gpulab command and each lab's harness
# libraries), and with GPULAB_INSTRUCTOR set the instructor's command as well (gpulab-instructor:
# grade, audit, similarity, release); --all builds the tests too (make test).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:?usage: scripts/build-harness.sh BUILD [JOBS] [--all]}
jobs=${2:-$(nproc 2>/dev/null || echo 2)}
all=${3:-}
mkdir -p "$build"

# Configure when the build folder has no generated build files yet (first run, or a configure
# that failed). A failed configure leaves no cache behind, so no choice it made (a backend found
# missing before its package was installed) sticks.
if [ ! -f "$build/CMakeCache.txt" ] || { [ ! -f "$build/build.ninja" ] && [ ! -f "$build/Makefile" ]; }; then
  echo "gpulab: configuring the build (cmake)…"
  generator=()
  [ -f "$build/CMakeCache.txt" ] || ! command -v ninja >/dev/null || generator=(-G Ninja)
  status=0
  cmake -S . -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release >"$build/configure.log" 2>&1 || status=$?
  if [ $status -ne 0 ]; then
    cat "$build/configure.log"
    rm -f "$build/CMakeCache.txt"
    echo "gpulab: cmake could not configure the build (exit status $status): its output is above, and in $build/configure.log" >&2
    exit $status
  fi
  sed -n 's/^-- \(gpulab.*\)/\1/p' "$build/configure.log"   # which backends: "gpulab backends: OpenCL=ON CUDA=OFF"
fi

# What to build: everything, or the gpulab command and the libraries student files link with
# (the gpulab_harness_<lab>_<backend> targets of grader/CMakeLists.txt; Ninja only, else all).
# GPULAB_LABS (the Makefile's LAB: folders, names or numbers) narrows them to those labs, so that a
# first `make check LAB=hello` compiles no other lab's harness (nvcc's CUB kernels take minutes); a
# lab it cannot name keeps every lab, and `gpulab check` then says what is wrong with the name.
lab_names() {
  local token folder names=()
  for token in ${GPULAB_LABS//,/ }; do
    local found=""
    for folder in labs/[0-9]*-*/; do
      folder=$(basename "$folder")
      if [ "$token" = "$folder" ] || [ "$token" = "${folder#*-}" ] || [ "$token" = "${folder%%-*}" ] ||
        [ "0$token" = "${folder%%-*}" ]; then
        found=${folder#*-}
      fi
    done
    [ -n "$found" ] || return 1
    names+=("$found")
  done
  echo "${names[@]}"
}
harness_targets() {
  [ -f "$build/build.ninja" ] || return 0
  echo gpulab
  [ -z "${GPULAB_INSTRUCTOR:-}" ] || echo gpulab-instructor
  local all_targets names
  all_targets=$(sed -n 's/^build \(gpulab_harness_[A-Za-z0-9_]*\): phony.*/\1/p' "$build/build.ninja")
  if [ -z "${GPULAB_LABS:-}" ] || ! names=$(lab_names); then
    echo "$all_targets"
    return 0
  fi
  local name
  for name in $names; do grep -E "^gpulab_harness_${name}_[a-z]+$" <<<"$all_targets" || true; done
}

first=""
if [ ! -x "$build/gpulab" ]; then
  first=1
  if [ -n "$all" ]; then
    echo "gpulab: building the grader and its tests once (about 8 minutes on 2 cores)…"
  else
    echo "gpulab: building the grader once (about 2 minutes on 2 cores for one lab, more for every lab)…"
  fi
fi

# Ninja's progress lines ("[12/82] Building CXX object ...") become one status line on a terminal
# and stay one line each in a log. Left out: the glob check CMake runs on every build and
# "ninja: no work to do." (a check with nothing to rebuild prints nothing), and, while it is
# routine, the "-- ..." chatter of a cmake re-run; it is printed as soon as anything else (a
# warning, an error) follows it.
tty=0
[ -t 1 ] && tty=1
columns=$( { [ $tty -eq 1 ] && tput cols 2>/dev/null; } || echo 100)
filter() {  # a loop of the shell's own: awk (mawk) would hold lines back until its buffer fills
  local line status=0 steps=0 held=()
  while IFS= read -r line; do
    case "$line" in
      "ninja: no work to do." | \[*\]\ Re-checking\ globbed\ directories*) ;;
      \[[0-9]*/[0-9]*\]\ * | \[*%\]\ *)
        steps=$((steps + 1))
        if [ $tty -eq 1 ]; then printf '\r\033[Kgpulab: %s' "${line:0:columns-10}"; status=1; else echo "gpulab: $line"; fi ;;
      "-- "*) held+=("$line") ;;
      *)
        [ $status -eq 0 ] || { printf '\r\033[K'; status=0; }
        [ ${#held[@]} -eq 0 ] || { printf '%s\n' "${held[@]}"; held=(); }
        printf '%s\n' "$line" ;;
    esac
  done
  [ $status -eq 0 ] || printf '\r\033[K'
  echo $steps >"$build/.steps"
}

start=$(date +%s)
targets=()
[ -n "$all" ] || mapfile -t targets < <(harness_targets)
build_once() {
  local target_args=()
  [ ${#targets[@]} -eq 0 ] || target_args=(--target "${targets[@]}")
  NINJA_STATUS='[%f/%t] ' cmake --build "$build" --parallel "$jobs" "${target_args[@]}" 2>&1 | filter
}
status=0
build_once || status=$?
# A cmake re-run during the build (a CMakeLists.txt changed) may add a lab: build its libraries too.
if [ $status -eq 0 ] && [ -z "$all" ]; then
  mapfile -t now < <(harness_targets)
  if [ "${now[*]}" != "${targets[*]}" ]; then targets=("${now[@]}"); build_once || status=$?; fi
fi
steps=$(cat "$build/.steps" 2>/dev/null || echo 0)
rm -f "$build/.steps"
if [ $status -ne 0 ]; then
  echo "gpulab: the harness did not build (cmake --build exit status $status): the messages above say why" >&2
  exit $status
fi
if [ ! -x "$build/gpulab" ]; then
  echo "gpulab: the build finished but $build/gpulab is missing" >&2
  exit 2
fi
elapsed=$(($(date +%s) - start))
if [ -n "$first" ]; then
  echo "gpulab: built in $((elapsed / 60)) min $((elapsed % 60)) s ($steps steps)"
elif [ "$steps" -gt 0 ] && [ $tty -eq 1 ]; then
  echo "gpulab: harness rebuilt ($steps steps, $elapsed s)"
fi
