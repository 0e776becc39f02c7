#!/usr/bin/env bash
# Formats the harness's C++, CUDA and OpenCL sources (common/, grader/, tests/, each lab's grader/)
# in place with .clang-format, or with --check lists the files that differ from it and fails. Left
# alone: the students' files in labs/ and solutions/, whose layout is part of what students read (TODO blocks, aligned comments) and whose
# exact text the mutation audit and the tests address; and fixtures, planted submissions whose tests
# point at their file:line positions.
#
#   scripts/format.sh            format every source
#   scripts/format.sh --check    exit 1 when a source differs (77: no clang-format 14 to check with)
set -euo pipefail
cd "$(dirname "$0")/.."

# The style is fixed with Debian 12's clang-format 14; other versions break some lines differently.
readonly style_version=14
check=false
case "${1:-}" in
  --check) check=true ;;
  "") ;;
  *) echo "usage: scripts/format.sh [--check]" >&2; exit 2 ;;
esac

formatter=""
for candidate in clang-format-$style_version clang-format; do
  command -v "$candidate" >/dev/null || continue
  version=$("$candidate" --version | sed -n 's/.*version \([0-9]*\)\..*/\1/p')
  if [ "$version" = "$style_version" ]; then formatter=$candidate; break; fi
done
if [ -z "$formatter" ]; then
  echo "skipped: no clang-format $style_version (the version .clang-format is fixed with; other versions" \
       "break some lines differently): install it with scripts/install-deps.sh test"
  exit 77
fi

# The tracked sources when this is a git checkout, otherwise (a release's tarball) the files there.
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  mapfile -t sources < <(git ls-files -- common grader tests ':(glob)labs/*/grader/**' | grep -E '\.(cpp|hpp|h|cu|cuh|cl)$')
else
  mapfile -t sources < <(find common grader tests labs/*/grader -type f \
    \( -name '*.cpp' -o -name '*.hpp' -o -name '*.h' -o -name '*.cu' -o -name '*.cuh' -o -name '*.cl' \))
fi
mapfile -t sources < <(printf '%s\n' "${sources[@]}" | grep -v -e '/fixtures/' | sort)

if ! $check; then
  "$formatter" -i --style=file "${sources[@]}"
  echo "formatted ${#sources[@]} files with $formatter"
  exit 0
fi
differing=()
for f in "${sources[@]}"; do
  "$formatter" --style=file --dry-run --Werror "$f" >/dev/null 2>&1 || differing+=("$f")
done
if [ ${#differing[@]} -gt 0 ]; then
  echo "${#differing[@]} of ${#sources[@]} sources differ from .clang-format; run scripts/format.sh (or make format):"
  printf '  %s\n' "${differing[@]}"
  exit 1
fi
echo "all ${#sources[@]} sources follow .clang-format"
