#!/usr/bin/python3
"""Writes OUT/index.html, the instructor's summary page of a `gpulab grade` batch.

    /usr/bin/python3 scripts/grade/summary.py OUT

Reads OUT/batch.json, OUT/calibration.json (optional) and OUT/students/<student>/result.json, and links
each student's OUT/students/<student>/feedback.html. The page is one self-contained HTML file: plots are
inline SVG drawn by matplotlib, no JavaScript, nothing fetched from the network. Every text that comes
from a submission (names, messages, notes) is HTML-escaped.
"""

from __future__ import annotations

import argparse
import collections
import dataclasses
import datetime
import hashlib
import html
import io
import json
import math
import os
import pathlib
import random
import secrets
import statistics
import sys
import urllib.parse

try:
    import matplotlib

    matplotlib.use("svg")
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D
    from matplotlib.ticker import FuncFormatter, MaxNLocator
except ImportError:  # the page is nothing without its plots: say which package brings them
    sys.exit("summary.py: matplotlib is missing: install python3-matplotlib (scripts/install-deps.sh installs it)")

plt.rcParams.update({"svg.fonttype": "none", "font.size": 10, "text.parse_math": False,
                     "axes.spines.top": False, "axes.spines.right": False, "hatch.linewidth": 0.8})

# Pass is dark, failure light and hatched, missing pale and dotted: the three read apart in greyscale too.
PASS, FAIL, MISSING, INK, REFERENCE = "#00695c", "#f4a259", "#d6d6d6", "#263238", "#3949ab"
FAIL_EDGE = "#b4581a"

# The grader writes each task's status and metric in words (status_label, metric_label, metric_unit in
# result.json): the page shows those. A lab absent from a student's result is the page's own case.
NO_RESULT = "no result"
MESSAGE_CHARS = 160
WIDTH = 11.0  # inches: about the width of the page's column, so the plots' text is page-sized


def fail(message: str):
    sys.exit(f"summary.py: {message}")


def read_json(path: pathlib.Path, what: str):
    """The parsed file, None when it is absent, or a string saying why it cannot be read."""
    if not path.exists():
        return None
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        return f"{what} {path.name} cannot be read: {e}"


def number(value, default=0.0) -> float:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) else default


def text(value) -> str:
    return value if isinstance(value, str) else ("" if value is None else str(value))


def esc(value) -> str:
    return html.escape(text(value), quote=True)


def short(message, limit=MESSAGE_CHARS) -> str:
    first = text(message).strip().splitlines()[0] if text(message).strip() else ""
    return first if len(first) <= limit else first[: limit - 1] + "…"


def points(value: float) -> str:
    return f"{value:g}"


def format_ratio(unit: str, ratio: float) -> str:
    """A ratio in its unit as result.json gives it: "%" for a fraction, else a multiple ("×")."""
    return f"{ratio * 100:.0f}%" if unit == "%" else f"{ratio:.2f}×"


def status_label(t: dict) -> str:
    return text(t.get("status_label")) or text(t.get("status"))


# ---------------------------------------------------------------------------------------------- the batch


@dataclasses.dataclass
class Student:
    folder: str
    name: str
    result: dict
    labs: dict  # lab id -> lab record

    @property
    def refused(self) -> str:
        return "" if self.not_graded else text(self.result.get("error"))

    @property
    def not_graded(self) -> bool:
        """The grader itself failed for this student: no score yet, not a zero."""
        return bool(self.result.get("grader_error"))


@dataclasses.dataclass
class TaskInfo:
    lab: str
    task: str
    max_points: float = 0.0
    bonus: bool = False
    metric: str = ""
    metric_label: str = ""
    metric_unit: str = ""
    thresholds: set = dataclasses.field(default_factory=set)


@dataclasses.dataclass
class Batch:
    out: pathlib.Path
    info: dict
    calibration: dict
    students: list
    labs: list  # lab ids in page order
    lab_titles: dict
    lab_max: dict  # lab id -> points without bonus
    lab_bonus: dict  # lab id -> bonus points
    tasks: dict  # lab id -> {task name -> TaskInfo}
    status_labels: dict  # status -> its words, as the records give them
    problems: list  # files that could not be read


def load(out: pathlib.Path) -> Batch:
    problems = []
    info = read_json(out / "batch.json", "the batch record")
    if isinstance(info, str):
        problems.append(info)
    info = info if isinstance(info, dict) else {}
    calibration = read_json(out / "calibration.json", "the calibration")
    if isinstance(calibration, str):
        problems.append(calibration)
    calibration = calibration if isinstance(calibration, dict) else {}

    students = []
    folders = sorted(p for p in (out / "students").iterdir() if p.is_dir()) if (out / "students").is_dir() else []
    for folder in folders:
        result = read_json(folder / "result.json", "the result")
        if result is None:
            continue  # a folder the grader has not finished: nothing to show yet
        if not isinstance(result, dict):
            problems.append(f"{folder.name}: {result}" if isinstance(result, str) else f"{folder.name}: result.json is not an object")
            result = {"student": folder.name, "error": "result.json cannot be read; see the grader's log"}
        labs = {}
        for lab in result.get("labs") or []:
            if isinstance(lab, dict) and text(lab.get("id")):
                lab["tasks"] = [t for t in lab.get("tasks") or [] if isinstance(t, dict) and text(t.get("task"))]
                labs[text(lab["id"])] = lab
        students.append(Student(folder.name, text(result.get("student")) or folder.name, result, labs))
    students.sort(key=lambda s: (s.name.casefold(), s.name, s.folder))

    order = [text(lab) for lab in info.get("labs") or [] if text(lab)]
    for s in students:
        order += [lab for lab in s.labs if lab not in order]
    tasks, titles, lab_max, lab_bonus, status_labels = {}, {}, {}, {}, {"missing": NO_RESULT}
    for lab in order:
        tasks[lab] = {}
        for s in students:
            record = s.labs.get(lab)
            if not record:
                continue
            titles.setdefault(lab, text(record.get("title")))
            for t in record["tasks"]:
                info_t = tasks[lab].setdefault(t["task"], TaskInfo(lab, t["task"], number(t.get("max_points")),
                                                                   bool(t.get("bonus"))))
                info_t.metric = info_t.metric or text(t.get("metric"))
                info_t.metric_label = info_t.metric_label or text(t.get("metric_label"))
                info_t.metric_unit = info_t.metric_unit or text(t.get("metric_unit"))
                status_labels.setdefault(text(t.get("status")), status_label(t))
                if "threshold" in t and isinstance(t["threshold"], (int, float)):
                    info_t.thresholds.add(float(t["threshold"]))
        lab_max[lab] = sum(t.max_points for t in tasks[lab].values() if not t.bonus)
        lab_bonus[lab] = sum(t.max_points for t in tasks[lab].values() if t.bonus)
    return Batch(out, info, calibration, students, order, titles, lab_max, lab_bonus, tasks, status_labels, problems)


def task_of(student: Student, lab: str, task: str):
    record = student.labs.get(lab)
    return next((t for t in record["tasks"] if t["task"] == task), None) if record else None


def status_of(student: Student, lab: str, task: str) -> str:
    t = task_of(student, lab, task)
    return (text(t.get("status")) or "not_run") if t else "missing"


def ratio_of(record: dict, metric: str):
    ratio = record.get("ratio")
    if not isinstance(ratio, (int, float)):
        ratio = (record.get("ratios") or {}).get(metric)
    return float(ratio) if isinstance(ratio, (int, float)) and math.isfinite(ratio) else None


def total_score(student: Student) -> float:
    if isinstance(student.result.get("score"), (int, float)):
        return number(student.result["score"])
    return sum(number(lab.get("score")) for lab in student.labs.values())


def batch_max(batch: Batch) -> float:
    given = [number(s.result.get("max_score")) for s in batch.students if number(s.result.get("max_score")) > 0]
    return max(given) if given else sum(batch.lab_max.values())


def lab_score(record: dict) -> float:
    if isinstance(record.get("score"), (int, float)):
        return number(record["score"])
    return sum(number(t.get("points")) for t in record["tasks"])


# ---------------------------------------------------------------------------------------------- plots


def svg(fig, name: str, label: str) -> str:
    """The figure as inline SVG. Each figure gets its own id salt: ids must not collide within the page."""
    plt.rcParams["svg.hashsalt"] = f"gpulab-summary-{name}"
    buffer = io.StringIO()
    fig.savefig(buffer, format="svg", bbox_inches="tight", metadata={"Date": None, "Creator": "gpulab summary.py"})
    plt.close(fig)
    code = buffer.getvalue()
    code = code[code.index("<svg"):]
    return code.replace("<svg", f'<svg class="plot" id="plot-{esc(name)}" role="img" aria-label="{esc(label)}"', 1)


def pass_rate_plot(batch: Batch, rows) -> str:
    n = len(batch.students)
    labels = [f"{lab} · {task}" + (" (bonus)" if info.bonus else "") for lab, task, info, _ in rows]
    passed = [counts["passed"] / n for *_, counts in rows]
    missing = [counts["missing"] / n for *_, counts in rows]
    failed = [1 - p - m for p, m in zip(passed, missing)]
    fig, ax = plt.subplots(figsize=(WIDTH, 0.9 + 0.36 * len(rows)))
    y = list(range(len(rows)))[::-1]
    ax.barh(y, passed, color=PASS, edgecolor=PASS, label="passed")
    ax.barh(y, failed, left=passed, color=FAIL, edgecolor=FAIL_EDGE, hatch="///", linewidth=0.6, label="failed")
    ax.barh(y, missing, left=[p + f for p, f in zip(passed, failed)], color=MISSING, edgecolor="#9e9e9e",
            hatch="..", linewidth=0.6, label="no result (refused or lab missing)")
    for yy, p, (*_, counts) in zip(y, passed, rows):
        ax.text(p + 0.01 if p < 0.88 else p - 0.01, yy, f"{p * 100:.0f}%", va="center",
                ha="left" if p < 0.88 else "right", color=INK if p < 0.88 else "white", fontweight="bold", fontsize=9)
    ax.set_yticks(y, labels)
    ax.set_xlim(0, 1)
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v * 100:.0f}%"))
    ax.set_xlabel(f"share of the {n} student{'s' if n != 1 else ''}")
    ax.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=3, frameon=False, fontsize=9)
    return svg(fig, "pass-rates", "Pass rate of every task: passed, failed and no result, as shares of the students")


def score_bins(top: float):
    """Bars one point wide while that stays readable, else about 25 bars; edges between whole scores."""
    width = 1.0 if top <= 40 else math.ceil(top / 25)
    edges, edge = [], -width / 2
    while edge <= top + width / 2:
        edges.append(edge)
        edge += width
    return edges


def histogram(ax, scores, full: float, top: float, title: str):
    ax.hist([s for s in scores if s < full], bins=score_bins(top), color=FAIL, edgecolor=FAIL_EDGE, hatch="///",
            linewidth=0.6, label="below full marks")
    ax.hist([s for s in scores if s >= full], bins=score_bins(top), color=PASS, edgecolor="white", linewidth=0.6,
            label="full marks")
    if scores:
        median = statistics.median(scores)
        ax.axvline(median, color=INK, linestyle="--", linewidth=1.2)
        ax.annotate(f"median {points(median)}", (median, 1), xycoords=("data", "axes fraction"), xytext=(3, -2),
                    textcoords="offset points", va="top", fontsize=8, color=INK,
                    bbox={"boxstyle": "square,pad=0.15", "facecolor": "white", "edgecolor": "none", "alpha": 0.85})
    ax.set_title(title, fontsize=10, loc="left")
    ax.set_xlim(-0.5 if top <= 40 else -top / 50, top + 0.5)
    ax.yaxis.set_major_locator(MaxNLocator(nbins=4, integer=True))
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))


def score_plots(batch: Batch):
    full, bonus = batch_max(batch), sum(batch.lab_bonus.values())
    fig, ax = plt.subplots(figsize=(WIDTH, 2.8))
    histogram(ax, [total_score(s) for s in batch.students if not s.not_graded], full, full + bonus,
              f"total score, {points(full)} points" + (f" + {points(bonus)} bonus" if bonus else ""))
    ax.set_xlabel("points")
    ax.set_ylabel("students")
    ax.legend(frameon=False, fontsize=9, loc="lower right", bbox_to_anchor=(1, 1), ncol=2)
    total = svg(fig, "total-scores", "Histogram of the students' total scores")

    labs = [lab for lab in batch.labs if batch.tasks[lab]]
    if not labs:
        return total, ""
    columns = min(3, len(labs))
    rows = math.ceil(len(labs) / columns)
    fig, axes = plt.subplots(rows, columns, figsize=(WIDTH, 2.2 * rows), squeeze=False)
    for ax, lab in zip(axes.flat, labs):
        scores = [lab_score(s.labs[lab]) for s in batch.students if lab in s.labs]
        missing = len(batch.students) - len(scores)
        histogram(ax, scores, batch.lab_max[lab], batch.lab_max[lab] + batch.lab_bonus[lab],
                  lab + (f" ({missing} without result)" if missing else ""))
    for ax in list(axes.flat)[len(labs):]:
        ax.axis("off")
    fig.supxlabel("points", fontsize=9)
    fig.supylabel("students", fontsize=9)
    fig.tight_layout()
    return total, svg(fig, "lab-scores", "Histograms of the students' scores per lab")


LABEL_Y = 0.6  # where the threshold and reference labels sit, above the strip of marks (which spans ±0.35)


def performance_plot(batch: Batch):
    """One strip per thresholded task: every student's ratio, the threshold, the reference solution's ratio."""
    measured = [info for lab in batch.labs for info in batch.tasks[lab].values() if info.metric]
    if not measured:
        return ""
    jitter = random.Random(0)  # fixed: the same batch draws the same page
    height = 0.4 + 1.35 * len(measured)
    fig, axes = plt.subplots(len(measured), 1, figsize=(WIDTH, height), squeeze=False)
    reference_labs = batch.calibration.get("labs") if isinstance(batch.calibration.get("labs"), dict) else {}
    for ax, info in zip(axes[:, 0], measured):
        ok, slow = [], []
        for s in batch.students:
            record = task_of(s, info.lab, info.task)
            ratio = ratio_of(record, info.metric) if record else None
            if ratio is not None:
                (ok if record.get("status") == "passed" else slow).append(ratio)
        ys = lambda values: [jitter.uniform(-0.35, 0.35) for _ in values]
        size = 22 if len(ok) + len(slow) < 100 else 10
        ax.scatter(ok, ys(ok), s=size, color=PASS, marker="o", alpha=0.8, linewidths=0, label="passed")
        ax.scatter(slow, ys(slow), s=size + 6, color=FAIL_EDGE, marker="x", alpha=0.9, linewidths=1.2,
                   label="measured, not passed")
        values = ok + slow
        for threshold in sorted(info.thresholds):
            ax.axvline(threshold, color=INK, linewidth=1.6)
            # Labels in a band above the marks: the threshold's to the left of its line, the reference's to the right.
            ax.annotate(f"needs {format_ratio(info.metric_unit, threshold)}", (threshold, LABEL_Y), xytext=(-4, 0),
                        textcoords="offset points", va="center", ha="right", fontsize=8.5, fontweight="bold", color=INK)
            values.append(threshold)
        reference = (reference_labs.get(info.lab) or {}).get(info.task) or {}
        if isinstance(reference.get("ratio"), (int, float)):
            ref = float(reference["ratio"])
            ax.axvline(ref, color=REFERENCE, linestyle=(0, (4, 2)), linewidth=1.4)
            ax.annotate(f"reference {format_ratio(info.metric_unit, ref)}", (ref, LABEL_Y), xytext=(4, 0),
                        textcoords="offset points", va="center", ha="left", fontsize=8.5, color=REFERENCE)
            values.append(ref)
        high = max(values) if values else 1.0
        fraction = info.metric_unit == "%"
        ax.set_xlim(0, max(1.0, high * 1.05) if fraction else high * 1.1)
        ax.set_ylim(-0.45, 0.8)
        ax.set_yticks([])
        ax.spines["left"].set_visible(False)
        if fraction:
            ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v * 100:.0f}%"))
        else:
            ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}×"))
        n = len(ok) + len(slow)
        ax.set_title(f"{info.lab} · {info.task}{' (bonus)' if info.bonus else ''}: "
                     f"{info.metric_label or info.metric}  ({n} of {len(batch.students)} measured)",
                     fontsize=9.5, loc="left")
    handles = [Line2D([], [], color=PASS, marker="o", linestyle="", label="passed"),
               Line2D([], [], color=FAIL_EDGE, marker="x", linestyle="", label="measured, not passed"),
               Line2D([], [], color=INK, linewidth=1.6, label="threshold"),
               Line2D([], [], color=REFERENCE, linestyle=(0, (4, 2)), linewidth=1.4,
                      label="reference solution (calibration)")]
    fig.legend(handles=handles, loc="upper center", ncol=4, frameon=False, fontsize=9, bbox_to_anchor=(0.5, 1.0))
    fig.tight_layout(rect=(0, 0, 1, 1 - 0.35 / height))
    return svg(fig, "performance", "Each student's achieved ratio per thresholded task, with the threshold and the "
                                   "reference solution's ratio")


# ---------------------------------------------------------------------------------------------- page

CSS = """
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", "DejaVu Sans", sans-serif; color: #263238;
       margin: 0; background: #fafafa; }
main { max-width: 1180px; margin: 0 auto; padding: 24px 28px 48px; background: white; }
h1 { margin: 0 0 4px; font-size: 26px; } h2 { margin: 36px 0 8px; padding-bottom: 4px; border-bottom: 2px solid #cfd8dc; }
h3 { margin: 20px 0 6px; font-size: 16px; }
.sub { color: #546e7a; margin: 0 0 16px; } .muted { color: #607d8b; font-size: 13px; }
nav a { margin-right: 14px; }
.cards { display: flex; flex-wrap: wrap; gap: 10px; margin: 14px 0; }
.card { border: 1px solid #cfd8dc; border-radius: 6px; padding: 8px 14px; min-width: 110px; }
.card b { display: block; font-size: 22px; } .card span { color: #546e7a; font-size: 13px; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: 3px 16px; margin: 8px 0; }
dl.facts dt { font-weight: 600; } dl.facts dd { margin: 0; }
table { border-collapse: collapse; margin: 8px 0 16px; font-size: 14px; }
th, td { padding: 4px 10px; border-bottom: 1px solid #eceff1; text-align: left; vertical-align: top; }
th { background: #eceff1; } td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
tbody tr:nth-child(even) { background: #f7f9fa; }
svg.plot { display: block; max-width: 100%; height: auto; margin: 8px 0; }
.full { background: #00695c; color: white; font-weight: 600; }
.partial { background: #fde3cc; color: #5d2c0a; }
.zero { background: repeating-linear-gradient(135deg, #fde3cc 0 4px, #f6c69f 4px 6px); color: #5d2c0a; font-weight: 600; }
.missing { background: radial-gradient(#a8a8a8 1px, transparent 1.5px) 0 0 / 6px 6px, #f2f2f2; color: #424242; }
.refused { color: #8e2a0b; font-weight: 600; }
.issues { max-width: 430px; font-size: 13px; } .issues ul { margin: 0; padding-left: 16px; }
.note { color: #607d8b; }
.bar-bg { display: inline-block; width: 80px; height: 10px; background: #f4a259; vertical-align: middle; margin-right: 6px; }
.bar { display: block; height: 100%; background: #00695c; }
th.lab { white-space: nowrap; }
"""


def facts_section(batch: Batch) -> str:
    info, n = batch.info, len(batch.students)
    refused = sum(1 for s in batch.students if s.refused)
    not_graded = sum(1 for s in batch.students if s.not_graded)
    scores = [total_score(s) for s in batch.students if not s.not_graded]
    devices = collections.Counter()
    device = batch.calibration.get("device")
    for record in [device] + [lab.get("device") for s in batch.students for lab in s.labs.values()]:
        if isinstance(record, dict) and text(record.get("name")):
            devices[(text(record.get("name")), text(record.get("platform")), text(record.get("class")),
                     text(record.get("details")))] += 1
    device_lines = "<br>".join(
        f"{esc(name)} <span class=muted>({esc(', '.join(x for x in (platform, cls) if x))}"
        f"{'; ' + esc(details) if details else ''})</span>" for name, platform, cls, details in devices) or "not recorded"
    backends = sorted({text(info.get("backend"))} | {text(lab.get("backend")) for s in batch.students
                                                       for lab in s.labs.values()} - {""})
    when = esc(info.get("started", "")) or "?"
    if info.get("finished"):
        when += f" → {esc(info['finished'])}"
        try:
            parse = lambda v: datetime.datetime.fromisoformat(text(v).replace("Z", "+00:00"))
            seconds = (parse(info["finished"]) - parse(info["started"])).total_seconds()
            when += f" ({seconds / 60:.1f} min)"
        except (KeyError, ValueError, TypeError):
            pass
    facts = [("grader version", esc(info.get("grader_version") or next(
                  (s.result.get("grader_version") for s in batch.students if s.result.get("grader_version")), "?"))),
             ("run", when), ("backend", esc(", ".join(backends)) or "?"), ("device", device_lines),
             ("isolation", esc(info.get("isolation", "")) or "not recorded"),
             ("parallel jobs", esc(info.get("jobs", "?")))]
    cards = [(info.get("submissions", n), "submissions"), (info.get("graded", "?"), "graded in this run"),
             (info.get("skipped_unchanged", 0), "unchanged, kept"), (refused, "refused"),
             *([(not_graded, "not graded: grader failed")] if not_graded else []),
             (f"{number(info['throughput_per_hour']):.0f}" if "throughput_per_hour" in info else "?", "graded per hour"),
             (points(round(statistics.median(scores), 1)) if scores else "–", f"median score of {points(batch_max(batch))}")]
    out = ['<section id="overview">', "<h2>Overview</h2>", '<div class="cards">']
    out += [f'<div class="card"><b>{esc(value)}</b><span>{esc(label)}</span></div>' for value, label in cards]
    out += ["</div>", '<dl class="facts">'] + [f"<dt>{esc(k)}</dt><dd>{v}</dd>" for k, v in facts] + ["</dl>"]
    if batch.problems:
        out += ["<p class=refused>Some files could not be read:</p><ul>"] + [f"<li>{esc(p)}</li>" for p in batch.problems] + ["</ul>"]
    out.append("</section>")
    return "\n".join(out)


def pass_rate_rows(batch: Batch):
    rows = []
    for lab in batch.labs:
        for task, info in batch.tasks[lab].items():
            counts = collections.Counter(status_of(s, lab, task) for s in batch.students)
            rows.append((lab, task, info, counts))
    return rows


def pass_rate_section(batch: Batch) -> str:
    n = len(batch.students)
    rows = pass_rate_rows(batch)
    out = ['<section id="pass-rates">', "<h2>Pass rates per task</h2>",
           f'<p class="muted">Out of all {n} students; a refused submission or a lab missing from a result counts '
           "as “no result”. Bonus tasks add points on top of the maximum.</p>"]
    if not rows:
        return "\n".join(out + ["<p>No task results.</p>", "</section>"])
    out.append(pass_rate_plot(batch, rows))
    out += ['<table id="pass-rate-table"><thead><tr><th>lab</th><th>task</th><th class=num>points</th>'
            "<th class=num>passed</th><th>pass rate</th><th>what went wrong</th></tr></thead><tbody>"]
    for lab, task, info, counts in rows:
        rate = counts["passed"] / n
        failures = ", ".join(f"{count} {batch.status_labels.get(status, status)}"
                             for status, count in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])) if status != "passed")
        out.append(f'<tr data-lab="{esc(lab)}" data-task="{esc(task)}"><td>{esc(lab)}</td><td>{esc(task)}</td>'
                   f"<td class=num>{points(info.max_points)}{' bonus' if info.bonus else ''}</td>"
                   f'<td class="num passed">{counts["passed"]}/{n}</td>'
                   f'<td class="rate"><span class=bar-bg><span class=bar style="width:{rate * 80:.0f}px"></span></span>'
                   f"{rate * 100:.0f}%</td><td>{esc(failures) or '—'}</td></tr>")
    out += ["</tbody></table>", "</section>"]
    return "\n".join(out)


def score_section(batch: Batch) -> str:
    total, per_lab = score_plots(batch)
    out = ['<section id="scores">', "<h2>Score distribution</h2>", total]
    if per_lab:
        out += ["<h3>Per lab</h3>", per_lab,
                '<table id="lab-score-table"><thead><tr><th>lab</th><th class=num>students with a result</th>'
                "<th class=num>mean</th><th class=num>median</th><th class=num>full marks</th><th class=num>zero</th>"
                "</tr></thead><tbody>"]
        for lab in batch.labs:
            scores = [lab_score(s.labs[lab]) for s in batch.students if lab in s.labs]
            full = batch.lab_max[lab]
            stats = (f"<td class=num>{statistics.mean(scores):.1f}</td><td class=num>{points(statistics.median(scores))}</td>"
                     if scores else "<td class=num>–</td><td class=num>–</td>")
            out.append(f"<tr><td>{esc(lab)} <span class=muted>{esc(batch.lab_titles.get(lab, ''))}</span></td>"
                       f"<td class=num>{len(scores)}/{len(batch.students)}</td>{stats}"
                       f"<td class=num>{sum(1 for s in scores if s >= full and full > 0)}</td>"
                       f"<td class=num>{sum(1 for s in scores if s <= 0)}</td></tr>")
        out.append("</tbody></table>")
    out.append("</section>")
    return "\n".join(out)


def performance_section(batch: Batch) -> str:
    plot = performance_plot(batch)
    out = ['<section id="performance">', "<h2>Performance</h2>"]
    if not plot:
        return "\n".join(out + ["<p>No task of these labs has a performance threshold.</p>", "</section>"])
    note = ("The reference solutions' ratios come from <code>calibration.json</code>, measured on the grading machine."
            if batch.calibration.get("labs") else
            "No <code>calibration.json</code>: run <code>gpulab grade --calibrate</code> to show the reference solutions' ratios.")
    out += [f'<p class="muted">Each mark is one student\'s achieved ratio on the timing case, measured against the '
            f"same device's calibration; a task that did not compile or run has no mark. {note}</p>", plot, "</section>"]
    return "\n".join(out)


def lab_cell(batch: Batch, student: Student, lab: str) -> str:
    record = student.labs.get(lab)
    if not record:
        why = "submission refused" if student.refused else "no result for this lab"
        return f'<td class="num missing" title="{esc(why)}">—</td>'
    score, full = lab_score(record), batch.lab_max[lab]
    kind = "full" if full > 0 and score >= full else ("zero" if score <= 0 else "partial")
    words = []
    for t in record["tasks"]:
        ratio = ratio_of(t, text(t.get("metric"))) if t.get("metric") else None
        shown = f" ({format_ratio(text(t.get('metric_unit')), ratio)})" if ratio is not None else ""
        words.append(f"{t['task']}: {status_label(t)}{shown}")
    mark = "✔ " if kind == "full" else ("✘ " if kind == "zero" else "")
    return f'<td class="num {kind}" title="{esc("; ".join(words))}">{mark}{points(score)}/{points(full)}</td>'


def issues(batch: Batch, student: Student) -> str:
    items = []
    if student.not_graded:
        items.append(f'<li class="refused">not graded: the grader failed; the next run grades it again — '
                     f'{esc(short(text(student.result.get("error"))))}</li>')
    elif student.refused:
        items.append(f'<li class="refused">refused: {esc(short(student.refused))}</li>')
    for lab in batch.labs:
        record = student.labs.get(lab)
        if record is None:
            if not student.refused and student.labs:
                items.append(f"<li>{esc(lab)}: no result</li>")
            continue
        if text(record.get("error")):
            items.append(f"<li>{esc(lab)}: {esc(short(record['error']))}</li>")
        for t in record["tasks"]:
            status = text(t.get("status"))
            # A finding (a timed launch faster than the device, a buffer violation) is flagged even
            # on a bonus task: it says the code tried to game the grader.
            finding = text(t.get("finding"))
            if (status and status != "passed" and not t.get("bonus")) or finding:
                # A hidden case's failure is the instructor's to know: the record marks it (hidden_case).
                message = short(("(hidden case) " if t.get("hidden_case") else "") + text(t.get("message")), 100)
                flag = "⚑ flagged for review: " if finding else ""
                items.append(f"<li>{flag}{esc(lab)} · {esc(t['task'])}: {esc(status_label(t))}"
                             + (f' <span class="note">— {esc(message)}</span>' if message else "") + "</li>")
    shown = items[:6]
    if len(items) > 6:
        shown.append(f'<li class="note">and {len(items) - 6} more in the feedback</li>')
    for note in (student.result.get("notes") or [])[:3]:
        shown.append(f'<li class="note">note: {esc(short(note))}</li>')
    return f'<ul>{"".join(shown)}</ul>' if shown else "—"


def student_section(batch: Batch) -> str:
    full = batch_max(batch)
    out = ['<section id="students">', "<h2>Students</h2>",
           '<p class="muted">Sorted by name. ✔ full marks, ✘ no points, — no result; hover a lab score for its tasks. '
           "Bonus points count on top of the maximum.</p>",
           '<table id="student-table"><thead><tr><th>student</th><th class=num>score</th>']
    out += [f'<th class="num lab" title="{esc(batch.lab_titles.get(lab, ""))}">{esc(lab)}</th>' for lab in batch.labs]
    out.append("<th>issues</th><th>feedback</th></tr></thead><tbody>")
    for s in batch.students:
        score = total_score(s)
        max_score = number(s.result.get("max_score")) or full
        score_text = "not graded" if s.not_graded else f"{points(score)}/{points(max_score)}"
        href = "students/" + urllib.parse.quote(s.folder, safe="") + "/feedback.html"
        link = (f'<a href="{esc(href)}">feedback</a>' if (batch.out / "students" / s.folder / "feedback.html").exists()
                else '<span class="muted">none</span>')
        submission = text(s.result.get("submission"))
        out.append(f'<tr class="student"><td><b class="name">{esc(s.name)}</b>'
                   + (f'<br><span class="muted">{esc(submission)}</span>' if submission else "") + "</td>"
                   f'<td class="num score">{score_text}</td>'
                   + "".join(lab_cell(batch, s, lab) for lab in batch.labs)
                   + f'<td class="issues">{issues(batch, s)}</td><td>{link}</td></tr>')
    out += ["</tbody></table>", "</section>"]
    return "\n".join(out)


def pseudonym(batch: Batch, student: str) -> str:
    """A name for a public board: stable across runs of this OUT (its key, OUT/.leaderboard-key, is
    made once), and not the student's."""
    key_file = batch.out / ".leaderboard-key"
    if not key_file.exists():
        key_file.write_text(secrets.token_hex(16), encoding="utf-8")
    key = key_file.read_text(encoding="utf-8").strip()
    return "anon-" + hashlib.sha256(f"{key}:{student}".encode()).hexdigest()[:6]


def leaderboard_rows(batch: Batch, lab: str, task: str, top: int = 10):
    """The best rates of a task: passed, no integrity finding, one per student, best first."""
    rows = []
    for s in batch.students:
        t = task_of(s, lab, task)
        if not t or t.get("status") != "passed" or text(t.get("finding")) or not isinstance(t.get("rate"), (int, float)):
            continue
        rows.append((float(t["rate"]), pseudonym(batch, s.name)))
    return sorted(rows, key=lambda r: (-r[0], r[1]))[:top]


def leaderboard_section(batch: Batch) -> str:
    out = ['<section id="leaderboard">', "<h2>Leaderboard</h2>",
           '<p class="muted">Per task, the ten best rates of submissions that passed every case with no integrity '
           "finding, under pseudonyms (the same student has the same one in every table and every run of this "
           "folder). The rates are the timing case's, on the grading machine.</p>"]
    for lab in batch.labs:
        unit = next((text(s.labs[lab].get("calibration", {}).get("unit")) for s in batch.students
                     if lab in s.labs and isinstance(s.labs[lab].get("calibration"), dict)), "")
        for task in batch.tasks.get(lab, {}):
            rows = leaderboard_rows(batch, lab, task)
            if not rows:
                continue
            out.append(f"<h3>{esc(lab)} · {esc(task)}</h3><table class=leaderboard><thead><tr><th class=num>#</th>"
                       f"<th>pseudonym</th><th class=num>{esc(unit) or 'rate'}</th></tr></thead><tbody>")
            out += [f"<tr><td class=num>{i}</td><td>{esc(name)}</td><td class=num>{rate:.4g}</td></tr>"
                    for i, (rate, name) in enumerate(rows, 1)]
            out.append("</tbody></table>")
    if len(out) == 3:
        out.append("<p>No task has an honest passing rate yet.</p>")
    out.append("</section>")
    return "\n".join(out)


def first_full_pass(history: list, lab: str, tasks) -> tuple:
    """When the student's own checks first had every task of the lab passed (each task's latest
    result counts, as TASK= checks run only some), and how many checks of the lab came before."""
    latest, checks = {}, 0
    for entry in history if isinstance(history, list) else []:
        labs = entry.get("labs") if isinstance(entry, dict) else None
        for record in labs if isinstance(labs, list) else []:
            if not isinstance(record, dict) or record.get("id") != lab:
                continue
            checks += 1
            tasks_run = record.get("tasks")
            for t in tasks_run if isinstance(tasks_run, list) else []:
                if isinstance(t, dict) and text(t.get("task")):
                    latest[text(t["task"])] = t.get("status") == "passed"
            if tasks and all(latest.get(t) for t in tasks):
                return text(entry.get("when")) if isinstance(entry, dict) else "", checks
    return "", checks


def history_section(batch: Batch) -> str:
    with_history = [s for s in batch.students if s.result.get("history")]
    if not with_history:
        return ""
    out = ['<section id="history">', "<h2>History</h2>",
           f'<p class="muted">{len(with_history)} of {len(batch.students)} submissions brought their '
           "<code>make check</code> history (written by the student's machine: it informs, it never grades). "
           "Per lab: when every task, bonus and speed thresholds included, first passed on their own machine, "
           "after how many checks of that lab.</p>",
           "<table><thead><tr><th>student</th>"
           + "".join(f"<th>{esc(lab)}</th>" for lab in batch.labs) + "</tr></thead><tbody>"]
    for s in with_history:
        cells = []
        for lab in batch.labs:
            when, checks = first_full_pass(s.result["history"], lab, list(batch.tasks.get(lab, {})))
            cells.append(f"<td>all passed {esc(when.replace('T', ' ').rstrip('Z'))} UTC, check {checks}</td>" if when
                         else f'<td class="muted">not all ({checks} check{"s" if checks != 1 else ""})</td>')
        out.append(f"<tr><td><b>{esc(s.name)}</b></td>{''.join(cells)}</tr>")
    out += ["</tbody></table>", "</section>"]
    return "\n".join(out)


def page(batch: Batch) -> str:
    title = "gpulab batch summary"
    n = len(batch.students)
    body = [f"<h1>{title}</h1>",
            f'<p class="sub">{n} student{"s" if n != 1 else ""}, labs {esc(", ".join(batch.labs)) or "none"}; '
            f"written {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC by scripts/grade/summary.py</p>",
            '<nav><a href="#overview">Overview</a><a href="#pass-rates">Pass rates</a><a href="#scores">Scores</a>'
            '<a href="#performance">Performance</a><a href="#students">Students</a>'
            + ('<a href="#leaderboard">Leaderboard</a>' if batch.info.get("leaderboard") else "")
            + ('<a href="#history">History</a>' if any(s.result.get("history") for s in batch.students) else "")
            # `gpulab similarity` writes its report into the same OUT and draws this page again.
            + ('<a href="similarity/index.html">Similar submissions</a>'
               if (batch.out / "similarity" / "index.html").exists() else "") + '</nav>',
            facts_section(batch)]
    if batch.students:
        body += [pass_rate_section(batch), score_section(batch), performance_section(batch), student_section(batch)]
        if batch.info.get("leaderboard"):
            body.append(leaderboard_section(batch))
        body.append(history_section(batch))
    else:
        body.append(f'<section id="students"><h2>Students</h2><p>No student results in '
                    f"<code>{esc(batch.out / 'students')}</code> yet.</p></section>")
    return ("<!doctype html>\n<html lang=en>\n<head>\n<meta charset=utf-8>\n"
            '<meta name=viewport content="width=device-width, initial-scale=1">\n'
            f"<title>{title}</title>\n<style>{CSS}</style>\n</head>\n<body>\n<main>\n"
            + "\n".join(body) + "\n</main>\n</body>\n</html>\n")


def main():
    parser = argparse.ArgumentParser(description="Writes OUT/index.html, the summary page of a gpulab grade batch.")
    parser.add_argument("out", type=pathlib.Path, help="the folder `gpulab grade` wrote (batch.json, students/)")
    args = parser.parse_args()
    if not args.out.is_dir():
        fail(f"{args.out} is not a folder: pass the output folder of `gpulab grade`")
    batch = load(args.out)
    target = args.out / "index.html"
    partial = args.out / ".index.html.partial"
    partial.write_text(page(batch), encoding="utf-8")
    os.replace(partial, target)  # a reader never sees half a page
    print(f"summary.py: wrote {target} ({len(batch.students)} students)")


if __name__ == "__main__":
    main()
