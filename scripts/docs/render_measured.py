#!/usr/bin/env python3
"""Step (b) of the docs benchmark: saved gpulab reports -> the tables and plots of docs/measured/.

    render_measured.py BENCH_DIR [OUT_DIR]     BENCH_DIR from scripts/bench-docs.sh (default OUT_DIR: docs/measured)
    render_measured.py --check BENCH_DIR [OUT_DIR]

BENCH_DIR holds meta.json and one report per backend (cuda.json, opencl.json). Written:
  device.md            which device, driver, toolkit, date, seeds, commit: included under every table
  <lab>.md             per lab: the timed case of every task on every backend, and the calibrations
  <lab>.svg            per timed lab: the rates as bars, with the calibrations as lines (matplotlib)
  roofline.svg         the matmul kernels on the device's roofline (matplotlib)
The Markdown files are fragments: the chapters include them (scripts/docs/snippets_hook.py).
--check renders the Markdown only and fails if the files in OUT_DIR differ (no matplotlib needed).
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys

BACKEND_NAMES = {"cuda": "CUDA", "opencl": "OpenCL"}
# The words come from the reports (each lab's "labels" and its calibration's "work"); what is chosen
# here is only what fits a page: the one-core CPU speedup is left out, the all-cores one says more.
LEFT_OUT_COLUMNS = {"cpu_speedup"}
# A bound's metric -> the calibration rate it divides by (common/src/metrics.cpp). The runner measures
# that baseline again interleaved with the task's timed launches and divides by that figure instead,
# so a bound's ratio can differ from the rate over the calibration table's figure: the table shows it.
METRIC_BASELINE = {"copy_fraction": "copy", "library_fraction": "library", "peak_fraction": "peak",
                   "naive_speedup": "naive", "staff_fraction": "staff"}
# Below this relative gap the calibration's figure explains the printed ratio and no column is added.
ALONGSIDE_GAP = 0.01


def load(bench: pathlib.Path) -> tuple[dict, dict[str, dict]]:
    meta_path = bench / "meta.json"
    if not meta_path.is_file():
        sys.exit(f"render_measured: {meta_path} is missing (run scripts/bench-docs.sh first)")
    meta = json.loads(meta_path.read_text())
    reports = {}
    for backend in ("cuda", "opencl"):
        path = bench / f"{backend}.json"
        if path.is_file():
            reports[backend] = json.loads(path.read_text())
    if not reports:
        sys.exit(f"render_measured: no cuda.json or opencl.json in {bench}")
    for backend, report in reports.items():
        for lab in report["labs"]:
            if lab.get("calibration") and "labels" not in lab:
                sys.exit(f"render_measured: {bench / (backend + '.json')} was written by a grader older than the labels "
                         "it renders (lab " + lab["id"] + "): measure again with make bench-docs")
    return meta, reports


def labs_by_id(reports: dict[str, dict]) -> dict[str, dict[str, dict]]:
    labs: dict[str, dict[str, dict]] = {}
    for backend, report in reports.items():
        for lab in report["labs"]:
            labs.setdefault(lab["id"], {})[backend] = lab
    return dict(sorted(labs.items()))


def number(x: float) -> str:
    if x >= 1000:
        return f"{x:,.0f}".replace(",", " ")
    if x >= 100:
        return f"{x:.0f}"
    if x >= 10:
        return f"{x:.1f}"
    if x >= 1:
        return f"{x:.2f}"
    return f"{x:.3f}"


def ratio(unit: str, x: float) -> str:
    return f"{100 * x:.0f} %" if unit == "%" else f"{x:.2f}×"


def timing_case(task: dict) -> dict | None:
    return next((c for c in task.get("cases", []) if c.get("timing")), None)


def device_line(meta: dict, reports: dict[str, dict]) -> str:
    first = next(iter(reports.values()))
    device = first["labs"][0]["device"]
    parts = [f"**{device['name']}**"]
    if meta.get("nvidia_driver"):
        parts.append(f"NVIDIA driver {meta['nvidia_driver']}")
    if meta.get("cuda_toolkit") and "cuda" in reports:
        parts.append(f"CUDA {meta['cuda_toolkit']}")
    if "opencl" in reports:
        ocl = reports["opencl"]["labs"][0]["device"]
        parts.append(f"OpenCL: {ocl['platform']} ({ocl['name']})")
    host = f"host CPU {meta.get('cpu', '?')}, {meta.get('cpu_cores', '?')} cores"
    seeds = ", ".join(f"{BACKEND_NAMES[b]} `SEED={r['seed']}`" for b, r in reports.items())
    return (
        f"Measured on {', '.join(parts)}; {host}; {meta['date']}, commit `{meta.get('commit', '?')}`; "
        f"seeds {seeds}. Written by `make bench-docs` (`scripts/bench-docs.sh`, then "
        f"`scripts/docs/render_measured.py`); every figure is the median of the lab's timed launches."
    )


def baseline_alongside(task: dict) -> float | None:
    """The baseline the task's bound ratio divides by: timed interleaved with its launches."""
    if task.get("status") != "passed" or task.get("metric") not in METRIC_BASELINE:
        return None
    rate, x = task.get("rate"), task.get("ratios", {}).get(task["metric"])
    return rate / x if rate and x else None


def alongside_metric(runs: dict[str, dict]) -> str | None:
    """The bound metric whose interleaved baseline differs from the calibration's, if any lab's task has one."""
    for run in runs.values():
        rates = (run.get("calibration") or {}).get("rates", {})
        for t in run["tasks"]:
            b = baseline_alongside(t)
            c = rates.get(METRIC_BASELINE.get(t.get("metric"), ""))
            if b and c and abs(b / c - 1) > ALONGSIDE_GAP:
                return t["metric"]
    return None


def lab_table(lab_id: str, runs: dict[str, dict]) -> str:
    backends = list(runs)
    first = runs[backends[0]]
    unit = (first.get("calibration") or {}).get("unit")
    lines = []
    if not unit:  # an untimed lab: correctness only
        lines.append("| task | " + " | ".join(f"{BACKEND_NAMES[b]} cases | {BACKEND_NAMES[b]} result" for b in backends) + " |")
        lines.append("| --- |" + " ---: | --- |" * len(backends))
        for i, task in enumerate(first["tasks"]):
            cells = []
            for b in backends:
                t = runs[b]["tasks"][i]
                cells += [f"{t['cases_passed']}/{t['cases_total']}", t["status"]]
            lines.append(f"| `{task['task']}` | " + " | ".join(cells) + " |")
        return "\n".join(lines) + "\n"

    # One row per task and backend (a column per backend would make the table twice as wide as a page).
    columns = [("time", "ms", ""), ("rate", unit, "")]  # (key, title, unit)
    for b in backends:
        present = {k for t in runs[b]["tasks"] for k in t.get("ratios", {})}
        columns += [(c["metric"], c["label"], c["unit"]) for c in runs[b]["labels"]["columns"]
                    if c["metric"] in present and c["metric"] not in LEFT_OUT_COLUMNS
                    and c["metric"] not in [k for k, _, _ in columns]]
    alongside = alongside_metric(runs)
    if alongside:
        baseline = METRIC_BASELINE[alongside]
        baseline_name = next((c["label"] for b in backends for c in runs[b]["labels"]["calibrations"]
                              if c["rate"] == baseline), baseline)
        columns.append(("alongside", f"{baseline_name} alongside, {unit}", ""))
    case_names = [timing_case(t)["name"] if timing_case(t) else "" for t in first["tasks"]]
    # One timed case for every timed task (untimed ones, correctness only, aside): it goes in the header.
    one_case = len(set(n for n in case_names if n)) <= 1
    case_names = [next((n for n in case_names if n), "")] * len(case_names) if one_case else case_names
    header = f"task ({case_names[0]})" if one_case and case_names[0] else "task | timed case" if not one_case else "task"
    lines.append(f"| {header} | backend | " + " | ".join(c[1] for c in columns) + " |")
    lines.append("| --- |" + ("" if one_case else " --- |") + " --- |" + " ---: |" * len(columns))
    for i, task in enumerate(first["tasks"]):
        name = f"`{task['task']}`" + (" (bonus)" if task.get("bonus") else "")
        if not one_case:
            name += f" | {case_names[i]}"
        for b in backends:
            t = runs[b]["tasks"][i]
            cells = []
            for key, _, ratio_unit in columns:
                if t["status"] != "passed":
                    cells.append(t["status"] if key == "rate" else "")
                elif key == "time":
                    cells.append(f"{t['time_ms']:.3f}" if "time_ms" in t else "—")
                elif key == "rate":
                    cells.append(number(t["rate"]) if "rate" in t else "—")
                elif key == "alongside":
                    b_rate = baseline_alongside(t) if t.get("metric") == alongside else None
                    cells.append(number(b_rate) if b_rate else "")
                else:
                    x = t.get("ratios", {}).get(key)
                    cells.append(ratio(ratio_unit, x) if x is not None else "")
            lines.append(f"| {name} | {BACKEND_NAMES[b]} | " + " | ".join(cells) + " |")

    lines.append("")
    lines.append(f"| calibration, same run | " + " | ".join(f"{BACKEND_NAMES[b]} {unit}" for b in backends) + " |")
    lines.append("| --- |" + " ---: |" * len(backends))
    names = {}  # rate -> label, in report order, from every backend
    for b in backends:
        for c in runs[b]["labels"]["calibrations"]:
            names.setdefault(c["rate"], c["label"])
    for key, what in names.items():
        values = [(runs[b].get("calibration") or {}).get("rates", {}).get(key) for b in backends]
        cells = [number(v) if v is not None else "—" for v in values]
        lines.append(f"| {what} | " + " | ".join(cells) + " |")
    lines.append("")
    work = first["calibration"].get("work", "the work of one launch")
    lines.append(f"{unit}: {work}, divided by the median time of the timed launches.")
    if alongside:
        lines.append("")
        label = next(c["label"] for b in backends for c in runs[b]["labels"]["columns"] if c["metric"] == alongside)
        lines.append(f"*{label}* of a task with a bound: its {unit} divided by the *{baseline_name} alongside*, the "
                     f"{baseline_name} timed again interleaved with the task's timed launches (the bound is judged on "
                     f"that ratio); of a task without a bound: divided by the calibration's {baseline_name} above, "
                     f"timed before the tasks.")
    return "\n".join(lines) + "\n"


def render_markdown(meta: dict, reports: dict[str, dict]) -> dict[str, str]:
    files = {"device.md": device_line(meta, reports) + "\n"}
    for lab_id, runs in labs_by_id(reports).items():
        name = next(iter(runs.values()))["name"]
        files[f"{name}.md"] = lab_table(lab_id, runs)
    return files


# ---------------------------------------------------------------- plots (matplotlib)

COLORS = {"cuda": "#00897b", "opencl": "#5c6bc0"}


def setup_matplotlib():
    import matplotlib

    matplotlib.use("svg")
    import matplotlib.pyplot as plt

    plt.rcParams.update({"svg.hashsalt": "gpulab", "svg.fonttype": "none", "font.size": 10,
                         "axes.spines.top": False, "axes.spines.right": False})
    return plt


def save(fig, path: pathlib.Path):
    fig.savefig(path, format="svg", bbox_inches="tight", metadata={"Date": None, "Creator": "gpulab render_measured.py"})


def plot_lab(plt, lab_id: str, runs: dict[str, dict], meta: dict, path: pathlib.Path):
    backends = [b for b in runs if (runs[b].get("calibration") or {}).get("unit")]
    if not backends:
        return False
    first = runs[backends[0]]
    unit = first["calibration"]["unit"]
    tasks = [t["task"] + (" (bonus)" if t.get("bonus") else "") for t in first["tasks"]]
    import numpy as np

    y = np.arange(len(tasks))
    height = 0.8 / len(backends)
    fig, ax = plt.subplots(figsize=(7.5, 0.6 + 0.55 * len(tasks) * len(backends) ** 0.5 + 0.8))
    top = 0.0
    for n, b in enumerate(backends):
        rates = [t.get("rate", 0.0) if t["status"] == "passed" else 0.0 for t in runs[b]["tasks"]]
        top = max(top, *rates)
        bars = ax.barh(y + (n - (len(backends) - 1) / 2) * height, rates, height * 0.92, color=COLORS[b],
                       label=BACKEND_NAMES[b])
        for bar, r in zip(bars, rates):
            ax.text(bar.get_width(), bar.get_y() + bar.get_height() / 2, " " + number(r), va="center", fontsize=8)
    cal = first["calibration"]["rates"]
    # The ceilings a kernel is held against, named as the report names them.
    references = [(cal[c["rate"]], c["label"]) for c in first["labels"]["calibrations"]
                  if c["rate"] in ("copy", "library", "peak")]
    for value, label in references:
        top = max(top, value)
        ax.axvline(value, color="#c62828", linestyle="--", linewidth=1)
        ax.text(value, len(tasks) + 0.35, f"{label} {number(value)} ", color="#c62828", fontsize=8, va="bottom", ha="right")
    ax.set_yticks(y, tasks)
    ax.invert_yaxis()
    ax.set_ylim(len(tasks) - 0.5 + 0.9, -0.6)
    ax.set_xlim(0, top * 1.12)
    ax.set_xlabel(f"{unit} (higher is better)")
    device = first["device"]["name"]
    cases = {timing_case(t)["name"] for t in first["tasks"] if timing_case(t)}
    case = cases.pop() if len(cases) == 1 else ""
    ax.set_title(f"{first['name']} {case}: {device}, {meta['date']}", fontsize=10)
    ax.legend(loc="lower right", frameon=False)
    save(fig, path)
    plt.close(fig)
    return True


def plot_roofline(plt, runs: dict[str, dict], meta: dict, path: pathlib.Path):
    """The matmul kernels on the roofline of the device: FP32 peak and measured copy bandwidth."""
    import numpy as np

    lab = runs.get("cuda") or next(iter(runs.values()))
    cal = lab["calibration"]["rates"]
    peak = cal.get("peak")
    if peak is None:
        return False
    bandwidth = None
    for report_lab in ALL_LABS:
        rates = (report_lab.get("calibration") or {}).get("rates", {})
        if report_lab["backend"] == lab["backend"] and "copy" in rates:
            bandwidth = rates["copy"]
    if bandwidth is None:
        return False
    # Global-memory traffic each kernel asks for (loads per multiply-add, 4 bytes each), as in the
    # matmul chapter: naive 2, tiled 2/32 (32 x 32 tiles); fast: a block tile of M x N loads M + N
    # floats per M * N multiply-adds: 128 x 256 in the CUDA reference (3/256), 128 x 128 in the
    # OpenCL one (2/128). The problem itself: 2 n^3 flops on 3 n^2 floats.
    def loads_per_mad(m, n):
        return (m + n) / (m * n)

    intensity = {(task, b): 2 / (loads * 4)
                 for b in ("cuda", "opencl")
                 for task, loads in (("naive", 2.0), ("tiled", 2 / 32),
                                     ("fast", loads_per_mad(128, 256 if b == "cuda" else 128)))}
    x = np.logspace(-2, 4, 400)
    fig, ax = plt.subplots(figsize=(7.5, 4.6))
    ax.loglog(x, np.minimum(peak, bandwidth * x), color="#37474f", linewidth=2)
    ridge = peak / bandwidth
    ax.axvline(ridge, color="#90a4ae", linestyle=":", linewidth=1)
    ax.text(ridge * 1.1, peak * 0.004, f"ridge point\n{ridge:.0f} flop/byte", fontsize=8, color="#546e7a")
    ax.text(0.015, bandwidth * 0.015 * 2.6, f"memory bound: {number(bandwidth)} GB/s × intensity", rotation=33,
            fontsize=8, color="#37474f")
    ax.text(300, peak * 1.15, f"FP32 peak {number(peak)} GFLOP/s", fontsize=8, color="#37474f")
    for b, lab_run in runs.items():
        for t in lab_run["tasks"]:
            if (t["task"], b) in intensity and t["status"] == "passed":
                xi = intensity[(t["task"], b)]
                ax.plot(xi, t["rate"], "o", color=COLORS[b], markersize=7)
                ax.annotate(f"{t['task']} ({BACKEND_NAMES[b]})", (xi, t["rate"]), textcoords="offset points",
                            xytext=(8, -12 if b == "opencl" else 5), fontsize=8, color=COLORS[b])
    if "library" in cal:
        ax.axhline(cal["library"], color="#c62828", linestyle="--", linewidth=1)
        ax.text(0.012, cal["library"] * 1.08, f"{lab['calibration']['library']} {number(cal['library'])} GFLOP/s",
                fontsize=8, color="#c62828")
    problem = 2 * 4096**3 / (3 * 4096**2 * 4)
    ax.axvline(problem, color="#c62828", linestyle=":", linewidth=1)
    ax.text(problem * 0.9, 30, f"4096³ problem: {problem:.0f} flop/byte\nif every value moved once", fontsize=8,
            color="#c62828", ha="right")
    ax.set_xlim(0.01, 10000)
    ax.set_ylim(10, peak * 2.5)
    ax.set_xlabel("arithmetic intensity (flop per byte of global-memory traffic the kernel asks for)")
    ax.set_ylabel("GFLOP/s")
    ax.set_title(f"matmul 4096³ on the roofline: {lab['device']['name']}, {meta['date']}", fontsize=10)
    save(fig, path)
    plt.close(fig)
    return True


ALL_LABS: list[dict] = []


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("bench", type=pathlib.Path)
    parser.add_argument("out", type=pathlib.Path, nargs="?", default=pathlib.Path("docs/measured"))
    parser.add_argument("--check", action="store_true", help="fail if the Markdown in OUT differs; write nothing")
    args = parser.parse_args()
    meta, reports = load(args.bench)
    markdown = render_markdown(meta, reports)
    if args.check:
        stale = [n for n, text in markdown.items() if not (args.out / n).is_file() or (args.out / n).read_text() != text]
        for n in stale:
            print(f"render_measured: {args.out / n} is not what {args.bench} renders to (run make docs-measured)")
        return 1 if stale else 0
    args.out.mkdir(parents=True, exist_ok=True)
    for n, text in markdown.items():
        (args.out / n).write_text(text)
    plt = setup_matplotlib()
    ALL_LABS.extend(lab for r in reports.values() for lab in r["labs"])
    written = list(markdown)
    for lab_id, runs in labs_by_id(reports).items():
        name = next(iter(runs.values()))["name"]
        if plot_lab(plt, lab_id, runs, meta, args.out / f"{name}.svg"):
            written.append(f"{name}.svg")
        if name == "matmul" and plot_roofline(plt, runs, meta, args.out / "roofline.svg"):
            written.append("roofline.svg")
    print(f"render_measured: wrote {', '.join(written)} into {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
