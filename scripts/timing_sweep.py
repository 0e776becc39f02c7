#!/usr/bin/env python3
"""How a lab's timing figures move with the size of its timing case: for each size given, the lab's
manifest is changed to it, the reference solutions are checked RUNS times (a new seed each, the
calibration measured afresh), and the table gives each task's ratio (median, range, spread) and
rate, with the seconds the timing case and the whole check took. For choosing a timing case's size
by what its ratio needs to hold still, not by the largest input the GPU holds (issue 40): run it on
each GPU a bound must hold on. The manifest is restored afterwards when the sweep ends, fails or is
stopped (Ctrl-C, TERM, HUP); only a kill -9 leaves it changed (git checkout labs/<lab>/lab.toml).

    scripts/timing_sweep.py LAB CASE SIZE [SIZE...] [--runs 3] [--backend cuda|opencl] [--device D]
                            [--build build] [--source solutions] [--task T ...] [--json FILE]

LAB: folder, name or number; CASE: the timing case's name in lab.toml; SIZE: key=value[,key=value],
integers set in that case's block (e.g. n=67108864, or rows=4096,cols=4096). Writes
BUILD/timing-sweep-<lab>.json unless --json says otherwise.
"""
import argparse
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def find_lab(wanted):
    for folder in sorted((ROOT / "labs").glob("[0-9]*-*")):
        number, name = folder.name.split("-", 1)
        if wanted in (folder.name, name, number, number.lstrip("0")):
            return folder
    names = ", ".join(f.name for f in sorted((ROOT / "labs").glob("[0-9]*-*")))
    sys.exit(f"timing_sweep: no lab matches '{wanted}' (the labs: {names})")


def parse_size(text):
    size = {}
    for part in text.split(","):
        match = re.fullmatch(r"\s*(\w+)\s*=\s*(\d+)\s*", part)
        if not match:
            sys.exit(f"timing_sweep: '{text}' is not a size: write key=value[,key=value] with integer values")
        size[match.group(1)] = int(match.group(2))
    return size


def case_block(lines, case):
    """The first and one-past-last line of the [[cases]] block named `case`."""
    starts = [i for i, line in enumerate(lines) if line.strip() == "[[cases]]"]
    headers = [i for i, line in enumerate(lines) if re.match(r"\s*\[", line)]
    names = []
    for start in starts:
        end = next((h for h in headers if h > start), len(lines))
        for i in range(start + 1, end):
            match = re.match(r'\s*name\s*=\s*"(.*)"', lines[i])
            if match:
                names.append(match.group(1))
                if match.group(1) == case:
                    return start, end
    sys.exit(f"timing_sweep: lab.toml has no case named '{case}' (its cases: {', '.join(names)})")


def with_size(text, case, size):
    """The manifest's text with `size`'s keys set in the case's block; each key must be there already."""
    lines = text.split("\n")
    start, end = case_block(lines, case)
    for key, value in size.items():
        pattern = re.compile(rf"(\s*{re.escape(key)}\s*=\s*)\d+(\s*(#.*)?)$")
        hits = [i for i in range(start, end) if pattern.match(lines[i])]
        if not hits:
            sys.exit(f"timing_sweep: case '{case}' has no integer '{key} = ...' line to change")
        lines[hits[0]] = pattern.sub(rf"\g<1>{value}\g<2>", lines[hits[0]])
    return "\n".join(lines)


def run_check(args, lab, seed, report):
    command = [str(args.build / "gpulab"), "check", "--source", str(args.source), "--lab", lab.name, "--seed",
               str(seed), "--recalibrate", "--json", str(report)]
    if args.backend:
        command += ["--backend", args.backend]
    if args.device:
        command += ["--device", args.device]
    for task in args.task:
        command += ["--task", task]
    started = time.monotonic()
    check = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        stdout, stderr = check.communicate()
    except BaseException:  # a kill of the sweep stops its check too
        check.kill()
        raise
    took = time.monotonic() - started
    done = subprocess.CompletedProcess(command, check.returncode, stdout, stderr)
    if not report.exists():
        sys.exit(f"timing_sweep: the check wrote no report (exit {done.returncode}):\n{done.stdout[-3000:]}{done.stderr}")
    return json.loads(report.read_text()), took, done.returncode


def measure(args, lab, case, runs):
    """Per task: ratios, rates and the timing case's seconds over `runs` checks; and each check's seconds."""
    tasks, checks = {}, []
    with tempfile.TemporaryDirectory() as scratch:
        for run in range(runs):
            report, took, status = run_check(args, lab, 1000 + run, Path(scratch) / f"run{run}.json")
            checks.append({"seconds": round(took, 3), "exit_status": status})
            for t in report["labs"][0]["tasks"]:
                timed = [c for c in t.get("cases", []) if c.get("timing") and c["name"].startswith(case)]
                if not timed:
                    continue
                entry = tasks.setdefault(t["task"], {"ratios": [], "rates": [], "case_s": [], "statuses": [],
                                                     "metric": t.get("metric")})
                ratio = t.get("ratio", t.get("ratios", {}).get(t.get("metric") or "", None))
                if ratio is not None:
                    entry["ratios"].append(ratio)
                entry["rates"].append(timed[0].get("rate"))
                entry["case_s"].append(timed[0].get("seconds"))
                entry["statuses"].append(t["status"])
    return tasks, checks


def summary(values):
    values = [v for v in values if v is not None]
    if not values:
        return None
    median = statistics.median(values)
    return {"median": median, "min": min(values), "max": max(values),
            "spread": (max(values) - min(values)) / median if median else None}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("lab")
    parser.add_argument("case")
    parser.add_argument("sizes", nargs="+")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--backend", default="")
    parser.add_argument("--device", default="")
    parser.add_argument("--build", type=Path, default=ROOT / "build")
    parser.add_argument("--source", type=Path, default=ROOT / "solutions")
    parser.add_argument("--task", action="append", default=[])
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    if args.runs < 1:
        sys.exit("timing_sweep: --runs must be at least 1")
    args.build = args.build.resolve()
    if not (args.build / "gpulab").exists():
        sys.exit(f"timing_sweep: {args.build / 'gpulab'} is missing: build the harness first (make harness)")
    require_build_of_this_repository(args.build)
    lab = find_lab(args.lab)
    manifest = lab / "lab.toml"
    original_bytes = manifest.read_bytes()
    original = original_bytes.decode()
    sizes = [parse_size(s) for s in args.sizes]
    for size in sizes:
        with_size(original, args.case, size)  # every size is checked before the first run
    # A stop (Ctrl-C, TERM, HUP) still restores the manifest: the signal becomes an exception.
    for number in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(number, lambda received, _: sys.exit(128 + received))
    results = []
    try:
        for size in sizes:
            replace_file(manifest, with_size(original, args.case, size).encode())
            tasks, checks = measure(args, lab, args.case, args.runs)
            results.append({"size": size, "checks": checks,
                            "tasks": {name: dict(t, ratio=summary(t["ratios"]), rate=summary(t["rates"]))
                                      for name, t in tasks.items()}})
            print_size(results[-1])
    finally:
        for number in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):  # a second signal must not cut the restore
            signal.signal(number, signal.SIG_IGN)
        replace_file(manifest, original_bytes)
    out = args.json or args.build / f"timing-sweep-{lab.name}.json"
    out.write_text(json.dumps({"lab": lab.name, "case": args.case, "runs": args.runs, "sizes": results}, indent=1))
    print(f"timing_sweep: {out}")


def replace_file(path, data):
    """Writes `data` to `path` whole or not at all (a temporary file renamed over it)."""
    temporary = path.with_name(path.name + ".sweep")
    temporary.write_bytes(data)
    os.replace(temporary, path)


def require_build_of_this_repository(build):
    """The build's runner reads the manifests of the repository it was configured from: this one."""
    cache = build / "CMakeCache.txt"
    home = re.search(r"^CMAKE_HOME_DIRECTORY:INTERNAL=(.*)$", cache.read_text(), re.M) if cache.exists() else None
    if not home or Path(home.group(1)).resolve() != ROOT:
        found = home.group(1) if home else "no CMakeCache.txt"
        sys.exit(f"timing_sweep: {build} is not a build of {ROOT} ({found}): its runner would read another "
                 "repository's lab.toml; give --build a build of this repository")


def print_size(result):
    size = ", ".join(f"{k} = {v}" for k, v in result["size"].items())
    seconds = statistics.median(c["seconds"] for c in result["checks"])
    print(f"{size}: a check takes {seconds:.1f} s (median of {len(result['checks'])})")
    for name, t in result["tasks"].items():
        ratio, rate = t["ratio"], t["rate"]
        spread = f"{100 * ratio['spread']:.1f} %" if ratio and ratio["spread"] is not None else "-"
        ratio_text = (f"{t['metric']} {ratio['median']:.3f} ({ratio['min']:.3f}-{ratio['max']:.3f}, spread "
                      f"{spread})" if ratio else "no ratio")
        rate_text = f"rate {rate['median']:.4g}" if rate else "no rate"
        case_s = statistics.median(s for s in t["case_s"] if s is not None) if any(t["case_s"]) else 0
        print(f"  {name:12} {ratio_text}; {rate_text}; timing case {case_s:.2f} s; {', '.join(t['statuses'])}")


if __name__ == "__main__":
    main()
