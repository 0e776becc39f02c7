#!/usr/bin/env bash
# Installs the Debian packages gpulab needs, and nothing when they are all present.
# Called by `make check` and `make test`; safe to run by hand.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config
  libfmt-dev libcli11-dev nlohmann-json3-dev libtomlplusplus-dev doctest-dev libpng-dev
  libarchive-dev libssl-dev bubblewrap   # batch grading: archives, content hashes, the sandbox
  ocl-icd-opencl-dev opencl-headers pocl-opencl-icd clinfo
  mkdocs mkdocs-material python3-pymdownx   # the lecture companion (make docs)
  python3-matplotlib python3-pil chromium   # plots (docs figures, the batch summary page index.html); its test renders it headless
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

if ! command -v apt-get >/dev/null; then
  echo "gpulab: missing packages (${missing[*]}) and no apt-get: install them with your package manager." >&2
  exit 1
fi
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "gpulab: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
  sudo="sudo"
fi
echo "gpulab: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
