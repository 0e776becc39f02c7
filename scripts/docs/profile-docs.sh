#!/usr/bin/env bash
# Profiles the reference solutions on this machine's CUDA GPU for the chapter docs/profiling.md:
# `gpulab check --profile` (Nsight Compute) on the transpose (and on a copy whose tile has no
# padding column), on the matmul kernels, and Nsight Systems' kernel summary of the bitonic sort
# where nsys is installed. Writes docs/measured/profiles/*.txt.
#
#   scripts/docs/profile-docs.sh [OUTDIR]        default: docs/measured/profiles
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:-docs/measured/profiles}
gpulab=${GPULAB:-build/gpulab}
[ -x "$gpulab" ] || { echo "profile-docs: $gpulab is missing: build the harness first (make harness)" >&2; exit 2; }
mkdir -p "$out"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

# A check's printed report, without the lines that name this machine's paths.
profile() {
  local name=$1
  shift
  "$gpulab" check --backend cuda --profile "$@" 2>&1 | grep -v -E '^(JSON report|gpulab check): ' >"$out/$name.txt" || true
  echo "profile-docs: $out/$name.txt"
}

profile transpose --source "$PWD/solutions" --lab transpose
# The same tiled kernel without the padding column: the bank conflicts of its column reads.
cp -r solutions/02-transpose "$scratch/"
sed -i 's/__shared__ float tile\[kTile\]\[kTile + 1\];/__shared__ float tile[kTile][kTile];/' "$scratch/02-transpose/transpose.cu"
grep -q 'tile\[kTile\]\[kTile\];' "$scratch/02-transpose/transpose.cu" ||
  { echo "profile-docs: the transpose solution's tile declaration changed: update this script" >&2; exit 1; }
profile transpose-unpadded --source "$scratch" --lab transpose --task optimized
profile matmul --source "$PWD/solutions" --lab matmul

# The launches of the bitonic sort on a timeline: Nsight Systems' summary of the kernels.
if command -v nsys >/dev/null; then
  nsys profile --trace=cuda --output "$scratch/bitonic" --force-overwrite true \
    "$gpulab" check --backend cuda --source "$PWD/solutions" --lab bitonic >/dev/null 2>&1 || true
  nsys stats --report cuda_gpu_kern_sum --format table "$scratch/bitonic.nsys-rep" 2>/dev/null |
    sed -n '/Time (%)/,$p' >"$out/bitonic-nsys.txt" || true
  echo "profile-docs: $out/bitonic-nsys.txt"
else
  echo "profile-docs: nsys (Nsight Systems) is not installed: no timeline summary of the bitonic sort"
fi
