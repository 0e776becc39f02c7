#!/usr/bin/env bash
# Measures lab 10-streams' pipeline on this machine's CUDA GPU with events and draws it as a
# timeline, docs/measured/streams-timeline.svg, the picture of the chapter docs/labs/streams.md
# (scripts/docs/streams_timeline.cu says what it measures).
#
#   scripts/docs/streams-timeline.sh [OUT.svg]        default: docs/measured/streams-timeline.svg
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:-docs/measured/streams-timeline.svg}
command -v nvcc >/dev/null || { echo "streams-timeline: nvcc is missing: install the CUDA Toolkit" >&2; exit 2; }
mkdir -p build
nvcc -O2 -std=c++17 -o build/streams_timeline scripts/docs/streams_timeline.cu
build/streams_timeline > build/streams-timeline.csv
python3 scripts/docs/streams_timeline.py build/streams-timeline.csv "$out"
echo "streams-timeline: wrote $out (data: build/streams-timeline.csv)"
