#!/usr/bin/env python3
"""Every GPU bound of a lab's manifest is the one its chapter's "Both GPUs" table states, and sits at
least 10 % below every reference figure and 10 % above every weaker kernel's figure measured there
(H100 CUDA · H100 OpenCL · H200 CUDA · H200 OpenCL), as the GPU test requires of a run
(tests/integration/gpu_test.cpp, kMargin). A bound changed in lab.toml without its chapter, or a
measured figure that leaves a bound too little room, fails here, on any machine.

    bounds_test.py REPOSITORY
"""
import re
import sys
import tomllib
from pathlib import Path

MARGIN = 1.1
BACKENDS = ["cuda", "opencl", "cuda", "opencl"]  # the cells' order: H100 CUDA, H100 OpenCL, H200 CUDA, H200 OpenCL
NUMBER = r"(\d+(?:\.\d+)?)"


def manifest_bounds(lab_toml):
    """{task: (metric, {backend: bound or None})} for the tasks with a GPU threshold."""
    manifest = tomllib.loads(lab_toml.read_text())
    bounds = {}
    for task in manifest.get("tasks", []):
        threshold = task.get("threshold", {})
        per_backend = {b: threshold.get(f"{b}_gpu", threshold.get("gpu")) for b in ("cuda", "opencl")}
        if any(v is not None for v in per_backend.values()):
            bounds[task["name"]] = (threshold["metric"], per_backend)
    return manifest["name"], bounds


def both_gpus_rows(chapter):
    """The rows of the chapter's "### Both GPUs" table: (task cell, bound cell, reference cell, weaker cell)."""
    section = re.search(r"^### Both GPUs\n(.*?)(?=^#)", chapter.read_text(), re.S | re.M)
    if not section:
        return []
    rows = []
    for line in section.group(1).splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if cells[0].startswith("`"):
            if len(cells) != 4:
                raise ValueError(f"{chapter}: a Both GPUs row has {len(cells)} cells, not 4: {line.strip()}")
            rows.append(cells)
    return rows


def stated_bounds(cell):
    """{backend: bound or None} and the metric from "1.3 CUDA / 1.12 OpenCL (`naive_speedup`)" or "0.8 (`m`)"."""
    metric = re.search(r"\(`(\w+)`\)", cell)
    text = cell[: metric.start()] if metric else cell
    per_backend = re.fullmatch(rf"\s*(?:{NUMBER}|none) CUDA / (?:{NUMBER}|none) OpenCL\s*", text)
    if per_backend:
        values = [float(v) if v else None for v in per_backend.groups()]
        return {"cuda": values[0], "opencl": values[1]}, metric and metric.group(1)
    single = re.fullmatch(rf"\s*{NUMBER}\s*", text)
    if not single:
        raise ValueError(f"cannot read the bound '{cell}'")
    return {"cuda": float(single.group(1)), "opencl": float(single.group(1))}, metric and metric.group(1)


NOT_MEASURED = re.compile(r"not run|not timed|.*\(no bound\)")
FIGURE = re.compile(rf"{NUMBER}(?:\s*[-–]\s*{NUMBER})?[¹²³]*")


def figures(cell):
    """The four cells' measured figures: (low, high) of a figure or range, None where not measured or unbound."""
    cell = cell.split(": ", 1)[1] if ": " in cell else cell  # "`scan_any_n`: 0.57 · ..."
    parts = [p.strip() for p in cell.split("·")]
    if len(parts) != 4:
        raise ValueError(f"expected four figures (H100 CUDA · H100 OpenCL · H200 CUDA · H200 OpenCL) in '{cell}'")
    out = []
    for part in parts:
        if NOT_MEASURED.fullmatch(part):
            out.append(None)
            continue
        m = FIGURE.fullmatch(part)
        if not m:
            raise ValueError(f"cannot read the figure '{part}' in '{cell}': write 0.57, 0.54-0.57, not run or not timed")
        out.append((float(m.group(1)), float(m.group(2) or m.group(1))))
    return out


def check_lab(lab_toml, root):
    name, bounds = manifest_bounds(lab_toml)
    chapter = root / "docs" / "labs" / f"{name}.md"
    rows = both_gpus_rows(chapter) if chapter.exists() else []
    problems = [f"{chapter}: {r[0]}: the table states a bound, {lab_toml} has none for that task: update the chapter"
                for r in rows if r[0].strip("`").split("`")[0] not in bounds]
    for task, (metric, bound) in bounds.items():
        task_rows = [r for r in rows if r[0].startswith(f"`{task}`")]
        if not task_rows:
            problems.append(f"{chapter}: no row for task '{task}' in its \"### Both GPUs\" table")
        for first, bound_cell, reference, weaker in task_rows:
            stated, stated_metric = stated_bounds(bound_cell)
            if stated_metric != metric or any(
                (stated[b] is None) != (bound[b] is None) or (bound[b] is not None and abs(stated[b] - bound[b]) > 1e-9)
                for b in bound
            ):
                problems.append(
                    f"{chapter}: {first}: the table states {bound_cell}, {lab_toml} says {metric} {bound}: "
                    "update the chapter with the manifest"
                )
                continue
            for which, cell, ok, rule in (
                ("reference", reference, lambda low, high, b: low >= b * MARGIN, f"at least {MARGIN}x the bound"),
                ("weaker", weaker, lambda low, high, b: high * MARGIN <= b, f"at most the bound / {MARGIN}"),
            ):
                for index, figure in enumerate(figures(cell)):
                    b = bound[BACKENDS[index]]
                    if figure is not None and b is not None and not ok(*figure, b):
                        gpu = ["H100 CUDA", "H100 OpenCL", "H200 CUDA", "H200 OpenCL"][index]
                        problems.append(
                            f"{chapter}: {first}: the {which} figure on the {gpu} ({figure[0]:g}-{figure[1]:g}) is not "
                            f"{rule} ({b:g}): the bound leaves the run-to-run spread no room; move the bound "
                            "(lab.toml and the chapter) or say why the figure is wrong"
                        )
    return len(bounds), problems


def main():
    root = Path(sys.argv[1])
    checked, problems = 0, []
    for lab_toml in sorted(root.glob("labs/*/lab.toml")):
        count, found = check_lab(lab_toml, root)
        checked += count
        problems += found
    for p in problems:
        print(p)
    if checked == 0:
        print("no lab has a GPU bound: nothing was checked")
        return 1
    print(f"{checked} GPU bounds checked against their chapters' measured figures: {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
