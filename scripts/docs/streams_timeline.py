#!/usr/bin/env python3
"""Draws the timeline that scripts/docs/streams_timeline.cu measured (CSV) as an SVG in the style of
Nsight Systems: per run, one row per engine (copy to the device, kernels, copy to the host), one bar
per step of a chunk, coloured by stream. Standard library only: it runs on the GPU machine as is.

    scripts/docs/streams_timeline.py TIMELINE.csv OUT.svg
"""

from __future__ import annotations

import csv
import sys
from collections import defaultdict
from html import escape

ROWS = ("copy to device", "kernel", "copy to host")
STREAM_COLOURS = ("#00897b", "#5c6bc0", "#fb8c00", "#8e24aa", "#c62828", "#607d8b")
LEFT, RIGHT, ROW_H, GAP, TOP = 120, 20, 22, 4, 40


def read(path: str):
    """The title (the CSV's comment line) and the steps of each run, in file order."""
    title, runs = "", defaultdict(list)
    with open(path, encoding="utf-8") as f:
        lines = [line for line in f if line.strip()]
    if lines and lines[0].startswith("#"):
        title = lines.pop(0)[1:].strip()
    for r in csv.DictReader(lines):
        runs[r["run"]].append((int(r["row"]), int(r["chunk"]), int(r["stream"]), float(r["start_ms"]),
                               float(r["end_ms"])))
    return title, runs


def draw(title: str, runs: dict, width: int = 900) -> str:
    end = max(step[4] for steps in runs.values() for step in steps)
    scale = (width - LEFT - RIGHT) / end
    panel_h = len(ROWS) * (ROW_H + GAP) + 28
    height = TOP + len(runs) * panel_h + 40
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" '
           f'font-size="11">', f'<text x="{LEFT}" y="18" font-weight="bold">{escape(title)}</text>']
    y = TOP
    for name, steps in runs.items():
        total = max(s[4] for s in steps)
        out.append(f'<text x="4" y="{y + 12}" font-weight="bold">{escape(name)}: {total:.1f} ms</text>')
        y += 18
        for row, label in enumerate(ROWS):
            ry = y + row * (ROW_H + GAP)
            out.append(f'<text x="4" y="{ry + ROW_H * 0.7:.1f}">{label}</text>')
            out.append(f'<rect x="{LEFT}" y="{ry}" width="{width - LEFT - RIGHT}" height="{ROW_H}" fill="#eceff1"/>')
            for r, chunk, stream, start, stop in steps:
                if r != row:
                    continue
                x, w = LEFT + start * scale, max((stop - start) * scale, 0.8)
                colour = STREAM_COLOURS[stream % len(STREAM_COLOURS)]
                out.append(f'<rect x="{x:.2f}" y="{ry + 2}" width="{w:.2f}" height="{ROW_H - 4}" fill="{colour}" '
                           f'stroke="white" stroke-width="0.5"><title>chunk {chunk}, stream {stream}: '
                           f'{start:.3f}-{stop:.3f} ms</title></rect>')
                if w > 14:
                    out.append(f'<text x="{x + w / 2:.2f}" y="{ry + ROW_H * 0.7:.1f}" fill="white" '
                               f'text-anchor="middle" font-size="9">{chunk}</text>')
        y += panel_h - 18
    # The time axis, shared by the runs.
    step = next(s for s in (0.5, 1, 2, 5, 10, 20, 50, 100) if end / s <= 12)
    out.append(f'<line x1="{LEFT}" y1="{y}" x2="{width - RIGHT}" y2="{y}" stroke="black"/>')
    t = 0.0
    while t <= end + 1e-9:
        x = LEFT + t * scale
        out.append(f'<line x1="{x:.2f}" y1="{y}" x2="{x:.2f}" y2="{y + 4}" stroke="black"/>')
        out.append(f'<text x="{x:.2f}" y="{y + 16}" text-anchor="middle">{t:g}</text>')
        t += step
    out.append(f'<text x="{width - RIGHT}" y="{y + 30}" text-anchor="end">ms (bars: chunks, numbered; colour: '
               f'stream)</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main() -> int:
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    title, runs = read(sys.argv[1])
    if not runs:
        print(f"streams_timeline: no steps in {sys.argv[1]}", file=sys.stderr)
        return 1
    with open(sys.argv[2], "w", encoding="utf-8") as f:
        f.write(draw(title, runs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
