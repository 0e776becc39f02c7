#!/usr/bin/env bash
# Measures the reference solutions for the lecture companion (docs/), step (a) of two:
# runs `gpulab check --source solutions` on this machine's device for each usable backend and
# saves the JSON reports, the printed reports and a description of the machine into OUTDIR.
# Step (b), scripts/docs/render_measured.py, turns a saved OUTDIR into the tables and plots of
# docs/measured/; it needs matplotlib, this step only the built harness (build/gpulab).
#
#   scripts/bench-docs.sh [OUTDIR]        default OUTDIR: build/bench
#   BACKENDS="cuda opencl" SEED=123 DEVICE=0 LAB=transpose scripts/bench-docs.sh
#
# `make bench-docs` runs both steps. Exit status: 0 when every backend ran and every task passed.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-build/bench}
gpulab=${GPULAB:-build/gpulab}
[ -x "$gpulab" ] || { echo "bench-docs: $gpulab is missing: build the harness first (make harness)" >&2; exit 2; }
mkdir -p "$out"

devices=$("$gpulab" devices 2>&1 || true)
if [ -z "${BACKENDS:-}" ]; then
  BACKENDS=""
  grep -q '^cuda: no device' <<<"$devices" || ! grep -q '^cuda:' <<<"$devices" || BACKENDS="cuda"
  grep -q '^opencl: no device' <<<"$devices" || ! grep -q '^opencl:' <<<"$devices" || BACKENDS="$BACKENDS opencl"
fi
[ -n "${BACKENDS// /}" ] || { echo "bench-docs: no CUDA or OpenCL device found" >&2; echo "$devices" >&2; exit 2; }

# What the figures were measured on: written before the runs, so a partial run still says.
driver=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null | head -1 || true)
cuda_version=$(nvcc --version 2>/dev/null | sed -n 's/.*release \([0-9.]*\).*/\1/p' || true)
commit=${COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}
json_string() { local s=${1//\\/\\\\}; s=${s//\"/\\\"}; printf '"%s"' "${s//$'\n'/\\n}"; }
{
  echo "{"
  echo "  \"date\": $(json_string "$(date -u +%Y-%m-%d)"),"
  echo "  \"time_utc\": $(json_string "$(date -u +%H:%M)"),"
  echo "  \"nvidia_driver\": $(json_string "$driver"),"
  echo "  \"cuda_toolkit\": $(json_string "$cuda_version"),"
  echo "  \"cpu\": $(json_string "$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo 2>/dev/null | head -1)"),"
  echo "  \"cpu_cores\": $(nproc 2>/dev/null || echo 0),"
  echo "  \"commit\": $(json_string "$commit"),"
  echo "  \"backends\": $(json_string "${BACKENDS# }"),"
  echo "  \"devices\": $(json_string "$devices")"
  echo "}"
} >"$out/meta.json"

status=0
for backend in $BACKENDS; do
  echo "bench-docs: $backend"
  args=(--source "$PWD/solutions" --backend "$backend" --json "$out/$backend.json")
  [ -n "${SEED:-}" ] && args+=(--seed "$SEED")
  [ -n "${DEVICE:-}" ] && args+=(--device "$DEVICE")
  [ -n "${LAB:-}" ] && args+=(--lab "$LAB")
  "$gpulab" check "${args[@]}" 2>&1 | tee "$out/$backend.log" || status=1
done
echo "bench-docs: reports in $out; render them with: make docs-measured BENCH=$out"
exit $status
