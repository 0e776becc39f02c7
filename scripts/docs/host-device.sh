#!/usr/bin/env bash
# Measures host-device transfers on this machine's CUDA GPU into docs/measured/host-device.md, the
# figures of the chapter docs/host-device.md (scripts/docs/host_device.cu says what it measures).
#
#   scripts/docs/host-device.sh [OUT.md]        default: docs/measured/host-device.md
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:-docs/measured/host-device.md}
command -v nvcc >/dev/null || { echo "host-device: nvcc is missing: install the CUDA Toolkit" >&2; exit 2; }
mkdir -p build
nvcc -O2 -std=c++17 -o build/host_device scripts/docs/host_device.cu
build/host_device > "$out.tmp"
mv "$out.tmp" "$out"
echo "host-device: wrote $out"
