#!/usr/bin/env bash
# Installs the Debian packages a gpulab command needs, and nothing when they are all present.
# Each make target asks for its own groups; safe to run by hand.
#
#   scripts/install-deps.sh check       make check, make devices, make student-release (the default)
#   scripts/install-deps.sh grade       make grade, make similarity, make bench-grader (add `check`: the harness)
#   scripts/install-deps.sh docs        make docs
#   scripts/install-deps.sh plots       make docs-figures, make docs-measured, make bench-docs
#   scripts/install-deps.sh test        make test, make format: everything its tests use (all of the above,
#                                       chromium, clang-format)
set -euo pipefail

# Building the harness (CMakeLists.txt: find_package ... REQUIRED) and running the labs on OpenCL.
# libarchive, OpenSSL and ICU are here too: the build configures both commands (grader/CMakeLists.txt:
# gpulab hashes with OpenSSL; gpulab-instructor unpacks archives and ICU puts students' Unicode names
# in one normal form), so configuring fails without them, though a student's build compiles only the
# first. cpp-httplib (gpulab submit, gpulab serve), SQLiteCpp and libpqxx (the server's store in
# SQLite or PostgreSQL) are optional to CMake, but a course's students submit with the first. python3: the
# configure step looks for it (tests/CMakeLists.txt). PoCL runs OpenCL on the CPU when there is no GPU.
group_check=(
  build-essential cmake ninja-build pkg-config python3
  libfmt-dev libcli11-dev nlohmann-json3-dev libtomlplusplus-dev doctest-dev libpng-dev
  libarchive-dev libssl-dev libicu-dev libcpp-httplib-dev libsqlitecpp-dev libpqxx-dev
  ocl-icd-opencl-dev opencl-headers pocl-opencl-icd
)
# Batch grading: the sandbox around each submission, the summary page OUT/index.html
# (scripts/grade/summary.py draws its plots with matplotlib), and sim_c++ for `gpulab similarity`.
group_grade=(bubblewrap python3-matplotlib similarity-tester)
# The lecture companion: a virtual environment for the pinned MkDocs Material from PyPI
# (scripts/docs/venv.sh), and KaTeX for its formulas, served with the site.
group_docs=(python3-venv libjs-katex)
# The figures and measured plots of docs/ (scripts/docs/figures.py, render_measured.py).
group_plots=(python3-matplotlib)
# make test: everything above, the headless browser and image reader of the summary page test
# (tests/grade/summary_page_test.py), Selenium and chromedriver for the docs site in a browser
# (tests/docs/browser_test.py), clang-format for the house-style check (make format too), and a
# Slurm the cluster test starts on this machine (tests/integration/slurm_test.cpp: the daemons and
# munge, with a configuration of its own; the packages' slurmctld and slurmd services do not start
# without /etc/slurm/slurm.conf, and munge's is a local authentication daemon), and PostgreSQL 15, which
# the course server's test starts in a folder of its own (tests/integration/server_test.cpp).
group_test=("${group_check[@]}" "${group_grade[@]}" "${group_docs[@]}" "${group_plots[@]}" chromium python3-pil
            slurmctld slurmd slurm-client munge postgresql-15
            chromium-driver python3-selenium clang-format)

[ $# -gt 0 ] || set -- check
packages=()
for group in "$@"; do
  case "$group" in
    check) packages+=("${group_check[@]}") ;;
    grade) packages+=("${group_grade[@]}") ;;
    docs) packages+=("${group_docs[@]}") ;;
    plots) packages+=("${group_plots[@]}") ;;
    test | all) packages+=("${group_test[@]}") ;;
    *) echo "usage: scripts/install-deps.sh [check|grade|docs|plots|test]... (unknown group: $group)" >&2; exit 2 ;;
  esac
done

# One dpkg-query for all of them: a check with everything installed stays quick (make check runs it).
mapfile -t packages < <(printf '%s\n' "${packages[@]}" | sort -u)
# (dpkg-query fails when one of them was never installed: that one is missing, the rest are listed.)
installed=" $({ dpkg-query -W -f='${Package}=${Status}\n' "${packages[@]}" 2>/dev/null || :; } | sed -n 's/=install ok installed$//p' | tr '\n' ' ') "
missing=()
for p in "${packages[@]}"; do
  [[ "$installed" == *" $p "* ]] || missing+=("$p")
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
echo "gpulab: installing ${missing[*]} (apt-get; this takes a few minutes the first time)"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
