#!/usr/bin/python3
"""Writes a synthetic `gpulab grade` output folder (batch.json, calibration.json, students/*/result.json)
for the tests of scripts/grade/summary.py.

    make_batch.py OUT                  the hand-made batch of seven students (see MIXED_EXPECTED)
    make_batch.py OUT --students N     N random students (seeded), for size and speed tests

The mixed batch has a passing student, failing ones, a refused submission, a student with a lab missing
and a student whose name and messages are HTML; MIXED_EXPECTED says what the summary must show for it.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import random

DEVICE = {"backend": "cuda", "index": 0, "name": "NVIDIA H100 80GB HBM3", "platform": "CUDA 13.0",
          "class": "gpu", "details": "132 SMs, 79.1 GiB, compute capability 9.0"}

# lab id -> (name, title, calibration, [(task, function, max_points, bonus, metric, threshold)])
LABS = {
    "00-hello": ("hello", "Hello, device memory", None,
                 [("hello", "hello", 2.0, False, "", None)]),
    "02-transpose": ("transpose", "Matrix transpose: coalescing, shared-memory tiles and bank conflicts",
                     {"unit": "GB/s", "library": "", "rates": {"copy": 2925.1}},
                     [("naive", "transpose_naive", 3.0, False, "", None),
                      ("optimized", "transpose_optimized", 7.0, False, "copy_fraction", 0.6)]),
    "03-bitonic": ("bitonic", "Bitonic sort: sorting networks and synchronisation",
                   {"unit": "Gkeys/s", "library": "CUB radix sort", "rates": {"library": 34.8, "naive": 1.29}},
                   [("global", "bitonic_global", 3.0, False, "", None),
                    ("shared", "bitonic_shared", 5.0, False, "naive_speedup", 1.6),
                    ("fast", "bitonic_fast", 2.0, True, "naive_speedup", 3.0)]),
}
CALIBRATION = {"device": DEVICE, "labs": {
    "02-transpose": {"naive": {"metric": "copy_fraction", "ratio": 0.31},
                     "optimized": {"metric": "copy_fraction", "ratio": 0.93}},
    "03-bitonic": {"shared": {"metric": "naive_speedup", "ratio": 2.33},
                   "fast": {"metric": "naive_speedup", "ratio": 5.29}}}}

SCRIPT_NAME = '<script>alert("pwned")</script>'
IMG_MESSAGE = 'no progress for 10 s <img src=x onerror=alert(1)> (a barrier not every thread reaches?)'

# student -> {"lab/task": (status, ratio or None)}; a lab absent from the dict is missing from result.json.
MIXED = {
    "alice": {"00-hello/hello": ("passed", None), "02-transpose/naive": ("passed", 0.30),
              "02-transpose/optimized": ("passed", 0.93), "03-bitonic/global": ("passed", 1.0),
              "03-bitonic/shared": ("passed", 2.3), "03-bitonic/fast": ("passed", 5.1)},
    "bob": {"00-hello/hello": ("passed", None), "02-transpose/naive": ("passed", 0.28),
            "02-transpose/optimized": ("too_slow", 0.41), "03-bitonic/global": ("passed", 1.0),
            "03-bitonic/shared": ("wrong_result", None), "03-bitonic/fast": ("not_implemented", None)},
    "carol": {"00-hello/hello": ("passed", None), "02-transpose/naive": ("compile_error", None),
              "02-transpose/optimized": ("compile_error", None), "03-bitonic/global": ("passed", 0.98),
              "03-bitonic/shared": ("passed", 1.9), "03-bitonic/fast": ("too_slow", 2.1)},
    "dave": {},  # refused: his archive escapes the submission folder
    "erin": {"00-hello/hello": ("wrong_result", None), "02-transpose/naive": ("passed", 0.31),
             "02-transpose/optimized": ("passed", 0.71)},  # no 03-bitonic in her result
    SCRIPT_NAME: {"00-hello/hello": ("passed", None), "02-transpose/naive": ("passed", 0.29),
                  "02-transpose/optimized": ("passed", 0.88), "03-bitonic/global": ("passed", 1.01),
                  "03-bitonic/shared": ("timeout", None), "03-bitonic/fast": ("not_run", None)},
    "frank": {"00-hello/hello": ("not_implemented", None), "02-transpose/naive": ("passed", 0.33),
              "02-transpose/optimized": ("kernel_fault", None), "03-bitonic/global": ("passed", 0.97),
              "03-bitonic/shared": ("crashed", None), "03-bitonic/fast": ("not_run", None)},
}
REFUSED = {"dave": "dave.zip: entry ../../etc/x escapes the submission folder"}

# What the summary of the mixed batch must show: passed/total per task (missing or refused counts as not run),
# and each student's total score out of 20.
MIXED_EXPECTED = {
    "students": 7,
    "pass": {"00-hello/hello": (4, 7), "02-transpose/naive": (5, 7), "02-transpose/optimized": (3, 7),
             "03-bitonic/global": (5, 7), "03-bitonic/shared": (2, 7), "03-bitonic/fast": (1, 7)},
    "score": {"alice": 22.0, "bob": 8.0, "carol": 10.0, "dave": 0.0, "erin": 10.0, SCRIPT_NAME: 15.0,
              "frank": 6.0},
    "max_score": 20.0,
}

MESSAGES = {
    "passed": "",
    "wrong_result": "12 of 4096 elements are wrong; first: [17] expected 3.5, got 0",
    "too_slow": "correct, but reached {ratio}; the threshold is {threshold}",
    "not_implemented": "GPULAB_NOT_IMPLEMENTED is still there (line 42)",
    "compile_error": "transpose.cu:31: error: expected ';' before '}}' token",
    "kernel_fault": "illegal memory access: a thread read or wrote outside its buffer (check the bounds test)",
    "timeout": IMG_MESSAGE,
    "crashed": "the lab's process died: segmentation fault",
    "not_run": "not run: an earlier task of this lab timed out",
}
# The words the grader writes next to each status and metric (status_label, metric_label, metric_unit in
# result.json; common/src/results.cpp): the summary shows them and knows no words of its own.
STATUS_LABELS = {"passed": "passed", "wrong_result": "wrong result", "too_slow": "too slow",
                 "not_implemented": "not implemented", "compile_error": "compile error", "kernel_fault": "kernel fault",
                 "timeout": "timed out", "crashed": "crashed", "not_run": "not run"}
METRIC_LABELS = {"copy_fraction": ("fraction of the device's copy bandwidth", "%"),
                 "naive_speedup": ("multiple of the speed of the harness's naive kernel", "×")}


def task_record(lab_id, spec, status, ratio, rng):
    task, function, max_points, bonus, metric, threshold = spec
    calibration = LABS[lab_id][2]
    ran = status in ("passed", "wrong_result", "too_slow")
    record = {"task": task, "function": function, "status": status, "details": "",
              "message": MESSAGES[status].format(ratio=ratio, threshold=threshold),
              "cases_passed": 11 if status in ("passed", "too_slow") else (7 if ran else 0), "cases_total": 11,
              "points": max_points if status == "passed" else 0.0, "max_points": max_points, "bonus": bonus,
              "metric": metric, "ratios": {}, "cases": [], "status_label": STATUS_LABELS[status]}
    if metric:
        record["metric_label"], record["metric_unit"] = METRIC_LABELS[metric]
    if status == "wrong_result" and task == "shared":  # bob's, in the mixed batch: a hidden case failed
        record["hidden_case"] = True
    if threshold is not None:
        record["threshold"] = threshold
    if ratio is not None and calibration:
        base = next(iter(calibration["rates"].values()))
        record["time_ms"] = round(rng.uniform(0.2, 3.0), 3)
        record["rate"] = ratio * base
        name = metric or ("copy_fraction" if "copy" in calibration["rates"] else "naive_speedup")
        record["ratios"] = {name: ratio}
        if metric:
            record["ratio"] = ratio
    record["cases"] = [{"name": f"case {i}", "passed": i < record["cases_passed"], "hidden": i >= 9, "message": ""}
                       for i in range(record["cases_total"])]
    return record


def student_result(name, outcomes, rng, error=""):
    labs = []
    for lab_id, (lab_name, title, calibration, specs) in LABS.items():
        if not any(key.startswith(lab_id + "/") for key in outcomes):
            continue
        tasks = [task_record(lab_id, spec, *outcomes[f"{lab_id}/{spec[0]}"], rng) for spec in specs]
        lab = {"id": lab_id, "name": lab_name, "title": title, "backend": "cuda", "device": DEVICE, "error": "",
               "score": sum(t["points"] for t in tasks), "max_score": sum(t["max_points"] for t in tasks if not t["bonus"]),
               "tasks": tasks}
        if calibration:
            lab["calibration"] = calibration
        labs.append(lab)
    notes = ["found Transpose.cu, expected transpose.cu"] if name == "erin" else []
    if name == SCRIPT_NAME:
        notes = ["ignored <b>extra</b> file: notes & <i>thoughts</i>.txt"]
    return {"student": name, "submission": f"{name}.zip", "content_hash": "sha256:" + f"{rng.getrandbits(256):064x}",
            "grader_version": "0.1.0+3f2a9c1d4e5b", "graded_at": "2026-11-23T10:05:00Z", "seed": rng.randrange(1 << 31),
            "backend": "cuda", "isolation": "bubblewrap", "duration_s": round(rng.uniform(5, 40), 1), "error": error,
            "notes": notes, "score": sum(lab["score"] for lab in labs), "max_score": 20.0, "labs": labs}


def folder_name(student: str) -> str:
    """The grader names a student's folder after the submission; a name cannot hold '/'."""
    return student.replace("/", "_")


def write_batch(out: pathlib.Path, results, calibration=True):
    out.mkdir(parents=True, exist_ok=True)
    batch = {"grader_version": "0.1.0+3f2a9c1d4e5b", "started": "2026-11-23T10:00:00Z",
             "finished": "2026-11-23T10:03:00Z", "backend": "cuda",
             "isolation": "bubblewrap: no network, read-only filesystem except the scratch folder, own PID namespace; "
                          "rlimits: 2 GiB memory, 256 processes",
             "jobs": 2, "submissions": len(results) + 1, "graded": len(results), "skipped_unchanged": 1,
             "throughput_per_hour": 240.5, "labs": list(LABS)}
    (out / "batch.json").write_text(json.dumps(batch, indent=1))
    if calibration:
        (out / "calibration.json").write_text(json.dumps(CALIBRATION, indent=1))
    for result in results:
        folder = out / "students" / folder_name(result["student"])
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "result.json").write_text(json.dumps(result, indent=1))
        (folder / "feedback.html").write_text("<!doctype html><title>feedback</title><p>feedback</p>\n")


def mixed(out: pathlib.Path):
    rng = random.Random(6)
    results = [student_result(name, outcomes, rng, REFUSED.get(name, "")) for name, outcomes in MIXED.items()]
    for result in results:  # optional fields left out, as when a run stops early or an older grader wrote them
        for lab in result["labs"]:
            if result["student"] == "frank":
                lab.pop("device"), lab.pop("calibration", None)
            if result["student"] == "erin":
                for task in lab["tasks"]:
                    task.pop("ratio", None)
                    task.pop("cases")
    write_batch(out, results)


def random_students(out: pathlib.Path, count: int, seed: int = 6, calibration: bool = True):
    rng = random.Random(seed)
    statuses = ["passed"] * 6 + ["too_slow", "wrong_result", "compile_error", "kernel_fault", "not_implemented"]
    results = []
    for i in range(count):
        outcomes = {}
        for lab_id, (_, _, _, specs) in LABS.items():
            for spec in specs:
                status = rng.choice(statuses if spec[5] else [s for s in statuses if s != "too_slow"])
                ratio = None
                if status in ("passed", "too_slow", "wrong_result"):
                    threshold = spec[5] or 1.0
                    low, high = (threshold * 1.02, threshold * 1.8) if status == "passed" else (threshold * 0.3, threshold)
                    ratio = round(rng.uniform(low, high), 3)
                    if status == "passed" and spec[4] == "copy_fraction":
                        ratio = min(ratio, 0.99)
                outcomes[f"{lab_id}/{spec[0]}"] = (status, ratio)
        results.append(student_result(f"student{i:04d}", outcomes, rng))
    write_batch(out, results, calibration)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=pathlib.Path)
    parser.add_argument("--students", type=int, help="write this many random students instead of the mixed batch")
    args = parser.parse_args()
    if args.students is None:
        mixed(args.out)
    else:
        random_students(args.out, args.students)


if __name__ == "__main__":
    main()
