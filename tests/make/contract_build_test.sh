#!/bin/sh
# A lab's contract at build time (grader/contract/): gpulab-contract makes the header the bindings
# compile against from lab.toml; a signature the compiler cannot read stops the build at lab.toml's
# line, a task naming no declared signature stops gpulab-contract at its line, and a header that
# would not change is not rewritten (no bindings recompile).
# Usage: contract_build_test.sh REPO SCRATCH GPULAB_CONTRACT CXX
set -u
repo=$1 scratch=$2 contract=$3 cxx=$4
failed=0
rm -rf "$scratch" && mkdir -p "$scratch/labs/07-example" "$scratch/out" || exit 2
manifest="$scratch/labs/07-example/lab.toml"
write_lab() {  # write_lab CUDA_TYPE FILL_SIGNATURE
  cat >"$manifest" <<TOML
name = "example"
title = "An example lab"

[files]
cuda = ["example.cu"]
opencl = ["example.cl", "example_opencl.cpp"]

[signatures.copy]
cuda = "$1"
opencl = "void(const gpulab::OpenCLLab& lab, cl_mem in, cl_mem out, int n)"

[[tasks]]
name = "copy"
function = "copy_naive"
signature = "$2"

[[cases]]
name = "tiny"
n = 3
TOML
}
# What a lab's bindings do with the header: look a task's function up and call it.
cat >"$scratch/bindings.cpp" <<'CPP'
#include "lab_contract.hpp"
void copy_naive(const gpulab::OpenCLLab&, cl_mem, cl_mem, int) {}
int main() { gpulab::contract::copy_functions().at("copy_naive")(*static_cast<gpulab::OpenCLLab*>(nullptr), nullptr, nullptr, 0); }
CPP
compile() { "$cxx" -std=c++20 -fsyntax-only -DCL_TARGET_OPENCL_VERSION=120 -I"$repo/common/include" -I"$scratch/out" \
  "$scratch/bindings.cpp" >"$scratch/log" 2>&1; }
has() {  # has WHAT TEXT: the last log holds TEXT
  if grep -qF -- "$2" "$scratch/log"; then echo "ok: $1"; else echo "FAILED: $1: no '$2' in:"; cat "$scratch/log"; failed=1; fi
}

write_lab "void(const float* in, float* out, int n)" copy
if "$contract" "$manifest" opencl "$scratch/out/lab_contract.hpp" >"$scratch/log" 2>&1 && compile; then
  echo "ok: a lab's contract compiles with bindings that call its functions"
else echo "FAILED: a valid contract did not compile:"; cat "$scratch/log"; failed=1; fi

touch -d 2001-01-01 "$scratch/out/lab_contract.hpp"
"$contract" "$manifest" opencl "$scratch/out/lab_contract.hpp" >"$scratch/log" 2>&1
if [ "$(stat -c %Y "$scratch/out/lab_contract.hpp")" = "$(date -d 2001-01-01 +%s)" ]; then
  echo "ok: a header that would not change is not rewritten"
else echo "FAILED: an unchanged contract was rewritten"; failed=1; fi

write_lab "void(const floatt* in, float* out, int n)" copy
"$contract" "$manifest" cuda "$scratch/out/cuda.hpp" >"$scratch/log" 2>&1 || { echo "FAILED: gpulab-contract refused a type only the compiler can judge"; cat "$scratch/log"; failed=1; }
sed -i 's/cuda_runtime.h/cstddef/' "$scratch/out/cuda.hpp"  # no CUDA toolkit needed to compile it
"$cxx" -std=c++20 -fsyntax-only -x c++ "$scratch/out/cuda.hpp" >"$scratch/log" 2>&1 && { echo "FAILED: a misspelt type compiled"; failed=1; }
has "a type the compiler cannot read stops the build at its line of lab.toml" "07-example/lab.toml:9"

write_lab "void(const float* in, float* out, int n)" kopy
if "$contract" "$manifest" opencl "$scratch/out/lab_contract.hpp" >"$scratch/log" 2>&1; then
  echo "FAILED: a task naming an undeclared signature made a contract"; failed=1
else has "a task naming an undeclared signature stops gpulab-contract at its line" \
  "07-example/lab.toml:15: task 'copy': 'signature' must name a table of [signatures]"; fi
exit $failed
