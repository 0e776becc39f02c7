#!/usr/bin/env python3
"""The history of `make check` as plots: one SVG per lab and backend, each task's figure per check.

    history_plot.py HISTORY_JSONL OUT_DIR [LAB]

HISTORY_JSONL is build/history.jsonl (`gpulab history` prints the same as tables). A task with a
bound is drawn as its ratio (the metric its threshold uses, with the bound as a dashed line); one
without, as its rate. A check where the task failed is a cross at zero. Without matplotlib the script
says so and exits 0: the tables are the history; the plots only draw it.
"""

from __future__ import annotations

import json
import pathlib
import sys


def load(path: pathlib.Path) -> list[dict]:
    entries = []
    for line in path.read_text(encoding="utf-8").splitlines() if path.is_file() else []:
        try:
            entry = json.loads(line)
        except json.JSONDecodeError:
            continue  # a torn line: the C++ reader skips it too
        if isinstance(entry, dict) and isinstance(entry.get("labs"), list):
            entries.append(entry)
    return entries


def matches(lab: dict, wanted: str | None) -> bool:
    """LAB= as `gpulab history` reads it (lab_named in grader/cli/run/lab_run.cpp): folder, name or number."""
    if not wanted:
        return True
    lab_id = lab.get("id", "")
    number = lab_id.split("-", 1)[0]
    return wanted in (lab_id, lab.get("name"), number) or (len(number) > 1 and number[0] == "0" and wanted == number[1:])


def series(entries: list[dict], wanted: str | None) -> dict[tuple[str, str], dict[str, list]]:
    """(lab id, backend) -> task -> [(check number, value or None, bound or None, label)]."""
    out: dict[tuple[str, str], dict[str, list]] = {}
    for entry in entries:
        for lab in entry["labs"]:
            if not matches(lab, wanted):
                continue
            tasks = out.setdefault((lab.get("id", "?"), entry.get("backend", "?")), {})
            number = 1 + max((p[0] for points in tasks.values() for p in points), default=0)
            for task in lab.get("tasks", []):
                passed = task.get("status") == "passed"
                value = task.get("ratio", task.get("rate"))
                label = task.get("metric") or task.get("unit") or ""
                tasks.setdefault(task.get("task", "?"), []).append(
                    (number, value if passed else None, task.get("threshold"), label))
    return out


def main() -> int:
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    history, out_dir = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
    wanted = sys.argv[3] if len(sys.argv) > 3 else None
    try:
        import matplotlib

        matplotlib.use("svg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("history: no plots (python3-matplotlib is not installed; the tables above are the history)")
        return 0
    out_dir.mkdir(parents=True, exist_ok=True)
    for (lab_id, backend), tasks in series(load(history), wanted).items():
        fig, axes = plt.subplots(len(tasks), 1, figsize=(7, 1.8 * len(tasks) + 0.6), squeeze=False)
        for ax, (task, points) in zip(axes[:, 0], tasks.items()):
            xs = [p[0] for p in points if p[1] is not None]
            ax.plot(xs, [p[1] for p in points if p[1] is not None], "o-", color="#00897b")
            ax.plot([p[0] for p in points if p[1] is None], [0] * sum(p[1] is None for p in points), "x", color="#c62828")
            bounds = [p[2] for p in points if p[2] is not None]
            if bounds:
                ax.axhline(bounds[-1], color="#c62828", linestyle="--", linewidth=1)
            ax.set_ylabel(f"{task}\n{points[-1][3]}", fontsize=8)
            ax.set_ylim(bottom=0)
        axes[-1, 0].set_xlabel("check")
        fig.suptitle(f"{lab_id} ({backend}): your checks, oldest first", fontsize=10)
        path = out_dir / f"{lab_id}-{backend}.svg"
        fig.savefig(path, format="svg", bbox_inches="tight")
        plt.close(fig)
        print(f"history: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
