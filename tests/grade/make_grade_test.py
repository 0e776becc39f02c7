#!/usr/bin/python3
"""`make grade` and `make check` pass their variables on to gpulab (make -n: nothing is built or run).

    make_grade_test.py REPO
"""

import subprocess
import sys

REPO = sys.argv[1]
failures = []


def command_of(*args: str) -> str:
    out = subprocess.run(["make", "-n", "-C", REPO, *args], capture_output=True, text=True).stdout
    return next((line for line in out.splitlines() if "gpulab grade" in line or "gpulab check" in line), "")


def expect(line: str, *parts: str) -> None:
    for part in parts:
        if part not in line:
            failures.append(f"{part!r} not in {line!r}")


grade = command_of("grade", "SUBMISSIONS=subs", "LAB=transpose scan", "LEADERBOARD=1", "DEADLINES=due.csv",
                   "HIDDEN_VISIBILITY=after_due_date", "SANITIZE=0", "TIME_LIMIT=60", "MEMORY=4", "QUIET=1",
                   "SLURM=1", "PARTITION=gpu", "MAX_RUNNING=4")
expect(grade, "--lab transpose --lab scan", "--leaderboard", '--deadlines "due.csv"',
       "--hidden-visibility after_due_date", "--no-sanitize", "--time-limit 60", "--memory 4", "--quiet",
       "--slurm", '--partition "gpu"', "--max-running 4")
expect(command_of("grade", "SUBMISSIONS=subs", "LAB=transpose,scan", "SANITIZE=1"), "--lab transpose --lab scan",
       "--sanitize")
expect(command_of("check", "LAB=transpose,scan"), "--lab transpose --lab scan", "--reuse")
fresh = command_of("check", "FRESH=1")
if "--reuse" in fresh:
    failures.append(f"FRESH=1 still reuses: {fresh!r}")
for failure in failures:
    print(f"FAIL: {failure}")
sys.exit(1 if failures else 0)
