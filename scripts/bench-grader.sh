#!/usr/bin/env bash
# How fast the grader answers on this machine's best device (or BENCH_BACKEND / BENCH_DEVICE):
#   - per lab, `make check LAB=x` after an edit: every student file the lab lists for the backend gets
#     a comment line more (for OpenCL the host .cpp, compiled and linked, and the .cl, built by the
#     driver at run time), then `gpulab check --reuse` (as make check runs it) builds and runs the lab;
#   - per lab, a re-check with nothing changed (`gpulab check --reuse`: the last results shown again);
#   - per lab, its five slowest cases in the last check, each case's seconds split into inputs and
#     reference, the driver's prepare, launches and checks (the report's prepare_s, launches_s, checks_s,
#     and of those the host-memory checksums, watch_s, and the guards and inputs, buffers_s);
#   - `gpulab grade` throughput: BENCH_SUBMISSIONS copies of solutions/ as one batch, in submissions
#     per hour (each submission has the labs measured above), and where a submission's time went
#     (compile, waiting for the GPU, run, timing cases, sanitizer; per lab too) with the most
#     submissions an hour the GPU-held part allows;
#   - with BENCH_CLEAN_BUILD=1, the harness build from scratch (what the first `make check` builds)
#     in a folder of its own.
# The checks run on a copy of solutions/, BUILD/bench-grader/bench-solutions (the repository is not
# touched). `gpulab check` keys its build cache by the source folder's path (BUILD/students/
# <folder name>-<hash of the path>), so the copy's objects are reused from one check to the next;
# the cache is emptied at the start, so each lab's first check is a cold build of its student files.
# Prints a table and writes it as JSON to BUILD/bench-grader.json.
#
#   scripts/bench-grader.sh                             (make bench-grader builds the harness first)
#   BENCH_LABS="00-hello 02-transpose" BENCH_SUBMISSIONS=2 BENCH_REPEATS=3 BENCH_JOBS=2 scripts/bench-grader.sh
#
# BENCH_REPEATS (default 3): runs of each check measurement, the table gives the median.
# BENCH_JOBS: `gpulab grade --jobs` (default: gpulab's). SEED: one seed for every check.
# Exit status 0 when every measurement ran; a check whose tasks did not all pass is still timed,
# and the table says so.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
export LC_ALL=C
build=${BUILD:-build}
gpulab="$build/gpulab"
[ -x "$gpulab" ] || { echo "bench-grader: $gpulab is missing: build the harness first (make harness)" >&2; exit 2; }
[ -d solutions ] || { echo "bench-grader: it measures the reference solutions, which the student repository does not have" >&2; exit 2; }
submissions=${BENCH_SUBMISSIONS:-4}
repeats=${BENCH_REPEATS:-3}
[[ "$submissions" =~ ^[1-9][0-9]*$ ]] || { echo "bench-grader: BENCH_SUBMISSIONS must be a positive number" >&2; exit 2; }
[[ "$repeats" =~ ^[1-9][0-9]*$ ]] || { echo "bench-grader: BENCH_REPEATS must be a positive number" >&2; exit 2; }

work="$build/bench-grader"
mkdir -p "$work"
work=$(cd "$work" && pwd)
log="$work/bench.log"
: >"$log"
say() { echo "bench-grader: $*"; }

# The labs: BENCH_LABS as folder (02-transpose), name (transpose) or number (2); default: every lab.
all_labs=()
for d in labs/[0-9]*/; do [ -f "$d/lab.toml" ] && all_labs+=("$(basename "$d")"); done
labs=()
for wanted in ${BENCH_LABS:-${all_labs[*]}}; do
  found=""
  for id in "${all_labs[@]}"; do
    num=${id%%-*}
    if [ "$wanted" = "$id" ] || [ "$wanted" = "${id#*-}" ] || [ "$wanted" = "$num" ] || [ "$wanted" = "${num#0}" ]; then found=$id; fi
  done
  [ -n "$found" ] || { echo "bench-grader: BENCH_LABS: no lab matches $wanted (the labs: ${all_labs[*]})" >&2; exit 2; }
  labs+=("$found")
done

# A lab's student files for a backend, from its manifest's [files] table.
student_files() {  # lab backend
  sed -n '/^\[files\]/,/^\[\[/p' "labs/$1/lab.toml" | sed -n "s/^$2 *= *\[\(.*\)\].*/\1/p" | tr -d '" ' | tr ',' ' '
}
json_field() {  # file python-expression-on-d
  python3 -c "import json, sys; d = json.load(open(sys.argv[1])); print($2)" "$1" 2>/dev/null
}
list() { local IFS=,; echo "$*" | sed 's/,/, /g'; }  # JSON array items
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
seconds() { awk -v s="$1" 'BEGIN { if (s < 10) printf "%.2f s", s; else if (s < 120) printf "%.1f s", s; else printf "%d min %02d s", int(s / 60), s % 60 }'; }

# Runs a command with its output in the log; sets `took` (seconds) and returns its status.
took=0
timed() {
  echo "\$ $*" >>"$log"
  local start=$EPOCHREALTIME status=0
  "$@" >>"$log" 2>&1 || status=$?
  took=$(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.3f", b - a }')
  echo "(exit status $status, $took s)" >>"$log"
  return $status
}

backend_args=()
[ -n "${BENCH_BACKEND:-}" ] && backend_args+=(--backend "$BENCH_BACKEND")
[ -n "${BENCH_DEVICE:-}" ] && backend_args+=(--device "$BENCH_DEVICE")
seed_args=()
[ -n "${SEED:-}" ] && seed_args+=(--seed "$SEED")

# The lab's slowest cases in a check's report, as JSON: where its time goes (issue 40), each case's
# seconds split as the runner measured them (prepare_s, launches_s, checks_s; the rest is inputs
# and the reference).
slowest_cases() {  # report
  python3 - "$1" <<'PY' 2>/dev/null
import json, sys
cases = []
for lab in json.load(open(sys.argv[1])).get("labs", []):
    for task in lab.get("tasks", []):
        for c in task.get("cases", []):
            parts = {k: round(c.get(k, 0.0), 3) for k in ("prepare_s", "launches_s", "checks_s")}
            rest = max(0.0, c.get("seconds", 0.0) - sum(c.get(k, 0.0) for k in parts))
            parts.update({k: round(c.get(k, 0.0), 3) for k in ("watch_s", "buffers_s")})  # of the above
            cases.append({"task": task.get("task", ""), "case": c.get("name", ""),
                          "seconds": round(c.get("seconds", 0.0), 3), **parts, "inputs_reference_s": round(rest, 3)})
cases.sort(key=lambda c: -c["seconds"])
print(json.dumps(cases[:5]))
PY
}
slowest_line() {  # json
  python3 -c '
import json, sys
print("; ".join("{} ({}) {:.2f} s (inputs and reference {:.2f}, prepare {:.2f}, launches {:.2f}, checks {:.2f}; "
      "of prepare and checks, host-memory checksums {:.2f}, guards and inputs {:.2f})".format(
      c["case"], c["task"], c["seconds"], c["inputs_reference_s"], c["prepare_s"], c["launches_s"], c["checks_s"],
      c["watch_s"], c["buffers_s"]) for c in json.loads(sys.argv[1])[:3]))' "$1"
}

# The copy of solutions/ that the checks build, and no cache of it yet.
copy="$work/bench-solutions"
rm -rf "$copy" "$build"/students/bench-solutions-* && cp -a solutions "$copy"

backend="" device="" device_class=""
lab_rows=()
lab_json=()
for lab in "${labs[@]}"; do
  report="$work/check-$lab.json"
  check=("$gpulab" check --source "$copy" --lab "$lab" "${backend_args[@]}" "${seed_args[@]}" --json "$report")
  say "$lab: first check of the copy (builds what is not cached yet)…"
  failed=0
  timed "${check[@]}" || failed=$((failed + 1))
  first=$took
  if [ -z "$backend" ]; then
    backend=$(json_field "$report" "d['backend']")
    device=$(json_field "$report" "d['labs'][0]['device']['name']")
    device_class=$(json_field "$report" "d['labs'][0]['device']['class']")
    [ -n "$backend" ] || { echo "bench-grader: the first check wrote no report; its output ($log):" >&2; tail -40 "$log" >&2; exit 1; }
    [ -n "${BENCH_BACKEND:-}" ] || backend_args+=(--backend "$backend")  # the same backend for every lab and the batch
    check=("$gpulab" check --source "$copy" --lab "$lab" "${backend_args[@]}" "${seed_args[@]}" --json "$report")
  fi
  files=$(student_files "$lab" "$backend")
  [ -n "$files" ] || { echo "bench-grader: labs/$lab/lab.toml lists no $backend files" >&2; exit 1; }
  edits=() rechecks=()
  for ((i = 1; i <= repeats; i++)); do
    for f in $files; do printf '\n// bench-grader: edit %s\n' "$i" >>"$copy/$lab/$f"; done
    timed "${check[@]}" --reuse || failed=$((failed + 1))
    edits+=("$took")
  done
  for ((i = 1; i <= repeats; i++)); do
    timed "${check[@]}" --reuse || failed=$((failed + 1))
    rechecks+=("$took")
  done
  edit=$(median "${edits[@]}")
  recheck=$(median "${rechecks[@]}")
  runs=$((1 + 2 * repeats))
  note=""
  [ $failed -eq 0 ] || note="$failed of $runs checks: a task did not pass"
  say "$lab: after an edit $(seconds "$edit"), nothing changed $(seconds "$recheck")${note:+; $note}"
  lab_rows+=("$(printf '  %-14s %12s %15s %17s  %s' "$lab" "$(seconds "$first")" "$(seconds "$edit")" "$(seconds "$recheck")" "$note")")
  slowest=$(slowest_cases "$report")
  [ -z "$slowest" ] || say "$lab: slowest cases: $(slowest_line "$slowest")"
  lab_json+=("$(printf '{"lab": "%s", "touched": "%s", "first_check_s": %s, "after_edit_s": %s, "after_edit_runs_s": [%s], "recheck_s": %s, "recheck_runs_s": [%s], "checks_not_passed": %d, "slowest_cases": %s}' \
    "$lab" "$files" "$first" "$edit" "$(list "${edits[@]}")" "$recheck" "$(list "${rechecks[@]}")" "$failed" "${slowest:-[]}")")
done

# Batch grading: N copies of solutions/ as N students, graded from scratch.
say "grade: $submissions submissions × ${#labs[@]} labs (gpulab grade)…"
batch="$work/submissions"
out="$work/grade-out"
rm -rf "$batch" "$out" && mkdir -p "$batch"
for ((i = 1; i <= submissions; i++)); do cp -a solutions "$batch/student-$i"; done
lab_args=()
for lab in "${labs[@]}"; do lab_args+=(--lab "$lab"); done
jobs_args=()
[ -n "${BENCH_JOBS:-}" ] && jobs_args+=(--jobs "$BENCH_JOBS")
grade_status=0
timed "$gpulab" grade --submissions "$batch" --out "$out" "${lab_args[@]}" "${backend_args[@]}" "${jobs_args[@]}" --force --quiet || grade_status=$?
grade_s=$took
graded=$(json_field "$out/batch.json" "d['graded']")
jobs=$(json_field "$out/batch.json" "d['jobs']")
isolation=$(json_field "$out/batch.json" "d['isolation']")
if [ -z "$graded" ]; then
  echo "bench-grader: gpulab grade wrote no batch.json (exit status $grade_status); its output ($log):" >&2
  tail -40 "$log" >&2
  exit 1
fi
per_hour=$(awk -v n="$graded" -v s="$grade_s" 'BEGIN { printf "%.1f", n * 3600 / s }')
say "grade: $graded of $submissions graded in $(seconds "$grade_s"): $per_hour submissions per hour"

# Where a submission's time went (batch.json's phases over the graded students, and each lab's from
# the students' result.json), and what that allows per GPU: a batch holds the GPU for the runs and
# the sanitizer gate only, so with compilation overlapped, 3600 s / (run + sanitize) is the most
# submissions an hour one GPU can grade.
budget_json=$(python3 - "$out" <<'PY'
import json, pathlib, sys
out = pathlib.Path(sys.argv[1])
batch = json.loads((out / "batch.json").read_text())
n = max(1, batch.get("phases_students", 0))
mean = {k: round(v / n, 3) for k, v in batch.get("phases_total", {}).items()}
labs = {}
for record in sorted(out.glob("students/*/result.json")):
    for lab in json.loads(record.read_text()).get("labs", []):
        into = labs.setdefault(lab["id"], {"students": 0})
        into["students"] += 1
        for k, v in lab.get("phases", {}).items():
            into[k] = into.get(k, 0) + v
for lab in labs.values():
    count = lab.pop("students")
    for k in lab:
        lab[k] = round(lab[k] / count, 3)
locked = mean.get("run_s", 0) + mean.get("sanitize_s", 0)
print(json.dumps({"per_submission": mean, "per_lab": labs, "gpu_locked_s": round(locked, 3),
                  "gpu_bound_per_hour": round(3600 / locked, 1) if locked > 0 else None}))
PY
) || budget_json=null
budget_line=$(python3 -c '
import json, sys
b = json.loads(sys.argv[1])
if b:
    p = b["per_submission"]
    print("compile {:.1f} s, waiting for the GPU {:.1f} s, run {:.1f} s (timing cases {:.1f} s; launches {:.1f} s, "
          "checks after them {:.1f} s), sanitizer {:.1f} s; the device held {:.1f} s a submission: at most {} "
          "submissions an hour per device".format(
              p.get("compile_s", 0), p.get("wait_for_gpu_s", 0), p.get("run_s", 0), p.get("timing_s", 0),
              p.get("launches_s", 0), p.get("checks_s", 0), p.get("sanitize_s", 0), b["gpu_locked_s"],
              b["gpu_bound_per_hour"]))' "$budget_json" 2>/dev/null)

# The harness from scratch, in a folder of its own (configure and build, as a student's first make
# check: without the instructor's command, which make bench-grader itself asks for).
clean_s=null
if [ "${BENCH_CLEAN_BUILD:-0}" = 1 ]; then
  clean="$work/clean-build"
  rm -rf "$clean"
  say "harness build from scratch in $clean (minutes)…"
  timed env -u GPULAB_INSTRUCTOR scripts/build-harness.sh "$clean" "${JOBS:-$(nproc)}" || { echo "bench-grader: the clean build failed; its output ($log):" >&2; tail -40 "$log" >&2; exit 1; }
  clean_s=$took
  rm -rf "$clean"
fi

# The table, and the same as JSON.
cores=$(nproc)
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
dirty=$(git status --porcelain --untracked-files=no 2>/dev/null | grep -q . && echo " (with uncommitted changes)")
echo
echo "gpulab bench-grader · $backend on $device ($device_class) · $cores cores ($cpu) · commit $commit$dirty"
printf '  %-14s %12s %15s %17s\n' "lab" "first check" "after an edit" "nothing changed"
printf '%s\n' "${lab_rows[@]}"
printf '  grade: %d submissions × %d labs in %s = %s submissions per hour (--jobs %s)%s\n' "$graded" "${#labs[@]}" \
  "$(seconds "$grade_s")" "$per_hour" "$jobs" "$([ "$grade_status" -eq 0 ] || echo "; exit status $grade_status")"
echo "         isolation: $isolation"
[ -n "$budget_line" ] && echo "         per submission: $budget_line"
if [ "$clean_s" = null ]; then
  echo "  harness build from scratch: not measured (BENCH_CLEAN_BUILD=1 measures it)"
else
  echo "  harness build from scratch: $(seconds "$clean_s") on $cores cores"
fi
echo "  (after an edit, nothing changed: median of $repeats runs; first check: a cold build of the lab's files and a run)"
echo "  the output of every run: $log"

esc() { python3 -c 'import json, sys; print(json.dumps(sys.argv[1]))' "$1"; }
{
  echo "{"
  echo "  \"date\": \"$(date -u +%Y-%m-%dT%H:%M:%SZ)\", \"commit\": \"$commit\", \"uncommitted_changes\": $([ -n "$dirty" ] && echo true || echo false),"
  echo "  \"backend\": \"$backend\", \"device\": $(esc "$device"), \"device_class\": \"$device_class\", \"cores\": $cores, \"cpu\": $(esc "$cpu"),"
  echo "  \"repeats\": $repeats,"
  echo "  \"labs\": ["
  for ((i = 0; i < ${#lab_json[@]}; i++)); do echo "    ${lab_json[$i]}$([ $i -lt $((${#lab_json[@]} - 1)) ] && echo ,)"; done
  echo "  ],"
  echo "  \"grade\": {\"submissions\": $submissions, \"graded\": $graded, \"labs\": ${#labs[@]}, \"jobs\": ${jobs:-null}, \"wall_s\": $grade_s, \"per_hour\": $per_hour, \"exit_status\": $grade_status, \"isolation\": $(esc "$isolation")},"
  echo "  \"budget\": $budget_json,"
  echo "  \"clean_build_s\": $clean_s"
  echo "}"
} >"$build/bench-grader.json"
python3 -m json.tool "$build/bench-grader.json" >/dev/null || { echo "bench-grader: wrote invalid JSON to $build/bench-grader.json" >&2; exit 1; }
echo "  written to $build/bench-grader.json"
