#!/bin/sh
# scripts/timing_sweep.py on the first OpenCL device (PoCL in CI): the transpose lab's CPU timing
# case at two sizes, one check each: a table and a JSON report with each size's tasks, rates and
# copy ratios, and lab.toml as it was, also after the sweep is stopped; a case or key the manifest
# does not have is named. Run serially: it changes lab.toml while it runs. Exit 77 (skipped) where
# the first OpenCL device is not a CPU (the case measured is the CPU's timing case).
#   timing_sweep_test.sh REPOSITORY BUILD SCRATCH
set -u
repo=$1 build=$2 scratch=$3
rm -rf "$scratch" && mkdir -p "$scratch" || exit 1
manifest="$repo/labs/02-transpose/lab.toml"
cp "$manifest" "$scratch/lab.toml.before"
fail() { echo "FAIL: $*"; cp "$scratch/lab.toml.before" "$manifest"; exit 1; }

python3 "$repo/scripts/timing_sweep.py" transpose 2048x2048 rows=512,cols=512 rows=1024,cols=768 --runs 1 \
  --backend opencl --build "$build" --json "$scratch/sweep.json" >"$scratch/out.txt" 2>&1 ||
  fail "the sweep failed: $(cat "$scratch/out.txt")"
cmp -s "$manifest" "$scratch/lab.toml.before" || fail "lab.toml was not restored after the sweep"
if grep -q '"tasks": {}' "$scratch/sweep.json"; then
  echo "skipped: the first OpenCL device is not a CPU, so the transpose lab's CPU timing case did not run"
  exit 77
fi
grep -q "^rows = 1024, cols = 768: a check takes" "$scratch/out.txt" || fail "no line for the second size: $(cat "$scratch/out.txt")"
grep -q "optimized    copy_fraction" "$scratch/out.txt" || fail "no copy ratio of optimized: $(cat "$scratch/out.txt")"
python3 - "$scratch/sweep.json" <<'PY' || fail "the JSON report is not as expected"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["lab"] == "02-transpose" and d["case"] == "2048x2048" and d["runs"] == 1, d
assert [s["size"] for s in d["sizes"]] == [{"rows": 512, "cols": 512}, {"rows": 1024, "cols": 768}], d["sizes"]
for s in d["sizes"]:
    assert set(s["tasks"]) == {"naive", "optimized"}, s["tasks"].keys()
    assert s["tasks"]["optimized"]["ratio"]["median"] > 0 and s["tasks"]["naive"]["rate"]["median"] > 0
    assert all(t["statuses"] == ["passed"] for t in s["tasks"].values())
PY

# Stopped (TERM) while it checks, with lab.toml changed: lab.toml as it was.
python3 "$repo/scripts/timing_sweep.py" transpose 2048x2048 rows=1024,cols=1024 --runs 20 \
  --backend opencl --build "$build" --json "$scratch/killed.json" >/dev/null 2>&1 &
sweep=$!
tries=0
while cmp -s "$manifest" "$scratch/lab.toml.before"; do
  tries=$((tries + 1))
  [ $tries -le 200 ] || { kill $sweep; fail "the sweep did not change lab.toml within 20 s"; }
  sleep 0.1
done
kill -TERM $sweep
wait $sweep
status=$?
[ $status -eq 143 ] || fail "the stopped sweep exited with $status, not 143 (128 + TERM)"
cmp -s "$manifest" "$scratch/lab.toml.before" || fail "lab.toml was not restored after a stop"

python3 "$repo/scripts/timing_sweep.py" transpose nosuch rows=1 --build "$build" >"$scratch/bad.txt" 2>&1 &&
  fail "a missing case was accepted"
grep -q "no case named 'nosuch' (its cases: .*2048x2048" "$scratch/bad.txt" || fail "$(cat "$scratch/bad.txt")"
python3 "$repo/scripts/timing_sweep.py" transpose 2048x2048 n=5 --build "$build" >"$scratch/bad.txt" 2>&1 &&
  fail "a key the case does not have was accepted"
grep -q "has no integer 'n = ...' line" "$scratch/bad.txt" || fail "$(cat "$scratch/bad.txt")"
cmp -s "$manifest" "$scratch/lab.toml.before" || fail "lab.toml changed by a refused sweep"
echo "timing sweep: sizes measured, reported, and lab.toml restored"
