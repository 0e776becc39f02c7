#!/bin/sh
# How the build finds the labs (grader/lab_folders.cmake): each labs/NN-<name>/grader/<name>_lab.cpp
# is lab <name>; a driver not named after its lab folder stops the build with a message that names
# the driver and the folder. Runs the module as a script on scratch course trees.
# Usage: lab_folders_test.sh REPO SCRATCH CMAKE
set -u
repo=$1 scratch=$2 cmake=$3
failed=0
rm -rf "$scratch" && mkdir -p "$scratch" || exit 2
lab() { mkdir -p "$scratch/$1/labs/$2/grader" && touch "$scratch/$1/labs/$2/grader/$3"; }
find_labs() { "$cmake" -DROOT="$scratch/$1" -P "$repo/grader/lab_folders.cmake" >"$scratch/out" 2>&1; }
check() {  # check WHAT: the last command's output holds every further argument
  what=$1; shift
  for text in "$@"; do
    if ! tr '\n' ' ' <"$scratch/out" | tr -s ' ' | grep -qF -- "$text"; then
      echo "FAILED: $what: no '$text' in:"; cat "$scratch/out"; failed=1; return
    fi
  done
  echo "ok: $what"
}

lab good 00-hello hello_lab.cpp
lab good 01-matmul matmul_lab.cpp
lab good 01-matmul matmul_reference.cpp
mkdir -p "$scratch/good/labs/02-notes"  # a folder without a grader is not a lab
if find_labs good; then check "the labs are the drivers' names, sorted" "gpulab labs: hello;matmul"
else echo "FAILED: a course whose drivers match their folders was refused:"; cat "$scratch/out"; failed=1; fi

lab misnamed 00-hello hello_lab.cpp
lab misnamed 01-matmul gemm_lab.cpp
if find_labs misnamed; then echo "FAILED: a driver named gemm_lab.cpp in 01-matmul was accepted"; failed=1
else check "a driver not named after its folder stops the build, naming both" \
  "labs/01-matmul/grader/gemm_lab.cpp" "01-matmul is not NN-gemm" "rename the driver or the folder"; fi

exit $failed
