#!/usr/bin/env python3
"""Draws the explanatory figures of the lecture companion into docs/figures/ (SVG, matplotlib).

    scripts/docs/figures.py [OUT_DIR]        default: docs/figures;  `make docs-figures` runs it

The figures are committed; run this after changing it. Measured figures (tables, bars, roofline)
are made by scripts/docs/render_measured.py from benchmark reports instead.
"""

from __future__ import annotations

import pathlib
import sys

import matplotlib

matplotlib.use("svg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import FancyArrowPatch, Rectangle  # noqa: E402

plt.rcParams.update({"svg.hashsalt": "gpulab", "svg.fonttype": "none", "font.size": 10})

TEAL, INDIGO, ORANGE, RED, GREY, LIGHT = "#00897b", "#5c6bc0", "#fb8c00", "#c62828", "#607d8b", "#eceff1"


def canvas(w, h, xlim, ylim):
    fig, ax = plt.subplots(figsize=(w, h))
    ax.set_xlim(*xlim)
    ax.set_ylim(*ylim)
    ax.set_aspect("equal")
    ax.axis("off")
    return fig, ax


def box(ax, x, y, w, h, fc="white", ec="black", lw=1.0, **kw):
    ax.add_patch(Rectangle((x, y), w, h, facecolor=fc, edgecolor=ec, linewidth=lw, **kw))


def arrow(ax, a, b, color="black", lw=1.2, style="-|>", rad=0.0):
    ax.add_patch(FancyArrowPatch(a, b, arrowstyle=style, mutation_scale=12, color=color, linewidth=lw,
                                 connectionstyle=f"arc3,rad={rad}"))


def save(fig, out: pathlib.Path, name: str):
    fig.savefig(out / name, format="svg", bbox_inches="tight", metadata={"Date": None, "Creator": "gpulab figures.py"})
    plt.close(fig)


def hierarchy(out):
    """Grid -> blocks -> threads, with CUDA and OpenCL names."""
    fig, ax = canvas(10, 5.2, (0, 20), (0, 10.4))
    ax.text(0.2, 9.9, "grid (CUDA) = NDRange (OpenCL)\ngridDim = (3, 2) blocks", fontsize=10, weight="bold", va="center")
    for by in range(2):
        for bx in range(3):
            x, y = 0.2 + bx * 3.0, 5.6 - by * 3.0
            hl = (bx, by) == (1, 1)
            box(ax, x, y, 2.7, 2.7, fc="#e0f2f1" if hl else LIGHT, ec=TEAL if hl else GREY, lw=2 if hl else 1)
            ax.text(x + 1.35, y + 1.35, f"block\n({bx}, {by})", ha="center", va="center", fontsize=9)
    ax.text(0.2, 1.9, "blockIdx.x = get_group_id(0) runs left to right,\nblockIdx.y = get_group_id(1) top to bottom",
            fontsize=8.5, color=GREY, va="top")
    # zoom into block (1, 1)
    arrow(ax, (5.85, 4.2), (10.6, 6.0), color=TEAL, rad=-0.2)
    ax.text(10.6, 9.9, "block (1, 1) = work-group\nblockDim = (8, 4) threads", fontsize=10, weight="bold", va="center")
    for ty in range(4):
        for tx in range(8):
            x, y = 10.6 + tx * 1.1, 8.0 - ty * 1.1
            warp = (ty * 8 + tx) // 32
            box(ax, x, y, 1.0, 1.0, fc="#fff3e0" if (tx, ty) == (5, 2) else "white", ec=INDIGO)
            ax.text(x + 0.5, y + 0.5, f"{tx},{ty}", ha="center", va="center", fontsize=7)
    ax.text(10.6, 3.45, "threadIdx = get_local_id: (x, y) in each cell. Thread (5, 2) of block (1, 1):\n"
            "  x = blockIdx.x * blockDim.x + threadIdx.x = 1 * 8 + 5 = 13 = get_global_id(0)\n"
            "  y = blockIdx.y * blockDim.y + threadIdx.y = 1 * 4 + 2 =  6 = get_global_id(1)\n"
            "The 32 threads of this block form one warp (x fastest): warp lane = 8 * ty + tx.\n"
            "A block runs on one SM, all of it at once; blocks run in any order.",
            fontsize=8.5, va="top", family="monospace")
    save(fig, out, "hierarchy.svg")


def latency_hiding(out):
    """One warp stalls on memory; several warps keep the scheduler busy."""
    fig, axes = plt.subplots(2, 1, figsize=(10, 4.6), sharex=True)
    compute, wait = 2, 12
    for ax, warps, title in ((axes[0], 1, "1 warp: the SM idles while the load is in flight"),
                             (axes[1], 6, "6 warps: while one waits, another issues; the memory latency is hidden")):
        for w in range(warps):
            t = w * compute
            while t < 44:
                ax.broken_barh([(t, compute)], (w - 0.35, 0.7), facecolors=TEAL)
                ax.broken_barh([(t + compute, wait)], (w - 0.35, 0.7), facecolors="#cfd8dc")
                t += compute + wait if warps == 1 else max(compute * warps, compute + wait)
        ax.set_yticks(range(warps), [f"warp {w}" for w in range(warps)])
        ax.invert_yaxis()
        ax.set_title(title, fontsize=10, loc="left")
        ax.spines[["top", "right"]].set_visible(False)
    axes[1].set_xlabel("time (clock cycles, schematic)")
    axes[1].set_xlim(0, 44)
    handles = [Rectangle((0, 0), 1, 1, color=TEAL), Rectangle((0, 0), 1, 1, color="#cfd8dc")]
    handles[1].set_edgecolor("#90a4ae")
    fig.legend(handles, ["issuing instructions", "waiting for a global load"], loc="lower center", ncol=2, frameon=False,
               fontsize=8.5, bbox_to_anchor=(0.5, -0.06))
    fig.tight_layout()
    save(fig, out, "latency-hiding.svg")


def coalescing(out):
    """A warp's 32 loads: adjacent (4 sectors) versus a stride of one row (32 sectors)."""
    fig, ax = canvas(10.5, 4.4, (0, 39), (0, 16))
    for row, (title, stride) in enumerate((("coalesced: thread t reads a[t]  ->  128 bytes = 4 sectors of 32 bytes", 1),
                                           ("strided: thread t reads a[t * rows]  ->  32 sectors, 32 bytes moved per 4 used", 8))):
        y0 = 14.6 - row * 7.6
        ax.text(0.2, y0 + 0.6, title, fontsize=9.5, weight="bold")
        for t in range(32):
            box(ax, 0.5 + t * 1.1, y0 - 1.3, 0.9, 0.9, fc="#e8eaf6", ec=INDIGO, lw=0.6)
        ax.text(35.8, y0 - 0.85, "threads 0 .. 31\nof one warp", fontsize=8, color=INDIGO, va="center")
        sectors = 4 if stride == 1 else 32
        for s in range(min(sectors, 32)):
            x = 0.5 + s * (8 * 1.1 if stride == 1 else 1.1)
            w = 8 * 1.1 - 0.2 if stride == 1 else 0.5
            box(ax, x, y0 - 5.2, w, 0.9, fc="#ffe0b2", ec=ORANGE, lw=0.8)
            if stride != 1 and s < 31:
                ax.plot([x + 0.5, x + 1.1], [y0 - 4.75, y0 - 4.75], color=GREY, linewidth=0.8, linestyle=":")
        for t in (0, 1, 2, 31):
            x_thread = 0.95 + t * 1.1
            x_mem = 0.95 + (t * 1.1 if stride == 1 else t * 1.1)
            arrow(ax, (x_thread, y0 - 1.35), (x_mem, y0 - 4.25), color=GREY, lw=0.8)
        ax.text(0.5, y0 - 5.65, f"memory sectors touched: {sectors}" + ("" if stride == 1 else
                " of 32 bytes, each a whole matrix row from the next (dotted: the gaps)"), fontsize=8, color=ORANGE, va="top")
    save(fig, out, "coalescing.svg")


def transpose_tiles(out):
    """Tile (by, bx) of in becomes tile (bx, by) of out, through shared memory."""
    fig, ax = canvas(10.5, 4.6, (0, 31), (0, 13.5))
    ax.text(0.3, 12.8, "in (rows x cols)", weight="bold")
    for r in range(2):
        for c in range(3):
            hl = (r, c) == (0, 2)
            box(ax, 0.3 + c * 3, 9 - r * 3, 3, 3, fc="#e0f2f1" if hl else "white", ec=GREY)
    ax.text(7.8, 10.5, "A", ha="center", va="center", fontsize=14, color=TEAL, weight="bold")
    for j in range(4):
        arrow(ax, (6.5, 11.6 - j * 0.7), (9.0, 11.6 - j * 0.7), color=TEAL, lw=0.8)
    ax.text(0.3, 5.2, "block (bx, by) = (2, 0) reads tile (by, bx)\nrow by row: coalesced", fontsize=8.5, va="top")
    # shared tile
    ax.text(11.3, 12.8, "shared tile[32][33]", weight="bold")
    box(ax, 11.3, 7.5, 4.2, 4.2, fc="#fff3e0", ec=ORANGE, lw=1.5)
    box(ax, 15.5, 7.5, 0.35, 4.2, fc="#eeeeee", ec=ORANGE, lw=0.8, hatch="///")
    ax.text(15.7, 7.1, "padding", fontsize=7.5, ha="center", va="top", color=ORANGE)
    ax.text(13.4, 9.6, "barrier\n(__syncthreads /\nbarrier(LOCAL))", ha="center", va="center", fontsize=8)
    arrow(ax, (9.4, 10.5), (11.2, 10.5), color=TEAL)
    for j in range(4):
        arrow(ax, (11.7 + j * 0.9, 7.4), (11.7 + j * 0.9, 5.6), color=INDIGO, lw=0.8)
    ax.text(11.3, 5.2, "then read tile[tx][ty + j]:\na column of the tile, written\nas a row of out: coalesced", fontsize=8.5,
            va="top")
    ax.text(19.5, 12.8, "out (cols x rows)", weight="bold")
    for r in range(3):
        for c in range(2):
            hl = (r, c) == (2, 0)
            box(ax, 19.5 + c * 3, 9 - r * 3, 3, 3, fc="#e8eaf6" if hl else "white", ec=GREY)
    ax.text(21.0, 4.5, "Aᵀ", ha="center", va="center", fontsize=14, color=INDIGO, weight="bold")
    arrow(ax, (15.9, 6.0), (19.4, 4.6), color=INDIGO, rad=0.2)
    ax.text(25.8, 9.0, "tile (by, bx) of in\nis tile (bx, by) of out", fontsize=8.5, va="top")
    save(fig, out, "transpose-tiles.svg")


def banks(out):
    """Which bank each element of a 32-wide tile lives in, without and with one padding column."""
    n = 8  # draw 8 x 8 of the 32 x 32 to stay readable; the pattern is the same
    fig, axes = plt.subplots(1, 2, figsize=(10, 4.8))
    cmap = plt.get_cmap("tab20")
    for ax, pad, title in ((axes[0], 0, "float tile[32][32]: bank = c\ncolumn 0 is all in bank 0: 32-way conflict"),
                           (axes[1], 1, "float tile[32][33]: bank = (r + c) mod 32\ncolumn 0 covers 32 banks: no conflict")):
        ax.set_xlim(-0.5, n + 0.3)
        ax.set_ylim(n + 0.1, -1.2)
        ax.set_aspect("equal")
        ax.axis("off")
        for r in range(n):
            for c in range(n):
                bank = (r * (32 + pad) + c) % 32
                ax.add_patch(Rectangle((c, r), 1, 1, facecolor=cmap(bank % 20), alpha=0.55,
                                       edgecolor=RED if c == 0 else "white", linewidth=2 if c == 0 else 1))
                ax.text(c + 0.5, r + 0.5, f"{bank}", ha="center", va="center", fontsize=8)
        for c in range(n):
            ax.text(c + 0.5, -0.25, f"c={c}", ha="center", fontsize=7, color=GREY)
        for r in range(n):
            ax.text(-0.1, r + 0.5, f"r={r}", ha="right", va="center", fontsize=7, color=GREY)
        ax.set_title(title, fontsize=9.5)
    fig.text(0.5, 0.02, "numbers: the bank of element [r][c] (first 8 rows and columns shown); red: the column a warp "
             "reads when it writes one row of out", ha="center", fontsize=8.5, color=GREY)
    save(fig, out, "banks.svg")


def matmul_tiles(out):
    """C tile = sum of A row-strip tiles times B column-strip tiles."""
    fig, ax = canvas(9, 6.4, (0, 22), (0, 16))
    T = 2.2
    # B at top right
    ax.text(8.3, 15.4, "B (k x n)", weight="bold")
    for r in range(3):
        for c in range(3):
            hl = c == 1
            box(ax, 8.3 + c * T, 13.5 - (r + 1) * T + 0.1 - 0.0, T, T, fc="#e8eaf6" if hl else "white", ec=GREY)
    for r in range(3):
        ax.text(8.3 + 1.5 * T, 13.5 - (r + 0.5) * T, f"B{r}", ha="center", va="center", color=INDIGO, weight="bold")
        ax.text(8.3 + 3 * T + 0.3, 13.5 - (r + 0.5) * T, f"p0 = {r}T" if r else "p0 = 0", va="center", fontsize=8)
    # A at bottom left
    ax.text(0.3, 6.9, "A (m x k)", weight="bold")
    for r in range(3):
        for c in range(3):
            hl = r == 1
            box(ax, 0.3 + c * T, 6.6 - (r + 1) * T, T, T, fc="#e0f2f1" if hl else "white", ec=GREY)
    for c in range(3):
        ax.text(0.3 + (c + 0.5) * T, 6.6 - 1.5 * T, f"A{c}", ha="center", va="center", color=TEAL, weight="bold")
    # C
    ax.text(8.3, 6.9, "C (m x n)", weight="bold")
    for r in range(3):
        for c in range(3):
            hl = (r, c) == (1, 1)
            box(ax, 8.3 + c * T, 6.6 - (r + 1) * T, T, T, fc="#ffe0b2" if hl else "white", ec=ORANGE if hl else GREY,
                lw=2 if hl else 1)
    ax.text(8.3 + 1.5 * T, 6.6 - 1.5 * T, "C", ha="center", va="center", color=ORANGE, weight="bold")
    arrow(ax, (0.3 + 3 * T + 0.1, 6.6 - 1.5 * T), (8.2, 6.6 - 1.5 * T), color=TEAL)
    arrow(ax, (8.3 + 1.5 * T, 6.7), (8.3 + 1.5 * T, 6.6 - 0.05), color=INDIGO)
    ax.text(0.3, 15.4, "one block, one T x T tile of C:\n\nC = A0·B0 + A1·B1 + A2·B2\n\neach step p0 = 0, T, 2T:\n"
            " 1. load tile Ai and tile Bi into\n    shared memory (one element\n    per thread, coalesced)\n"
            " 2. barrier\n 3. T multiply-adds per thread,\n    all operands from shared memory\n 4. barrier",
            fontsize=8.5, va="top", family="monospace")
    ax.text(8.3 + 3 * T + 0.3, 3.0, "each element of A and B:\nloaded once per block,\nused T times", fontsize=8.5,
            va="center")
    save(fig, out, "matmul-tiles.svg")


def register_tile(out):
    """The fast matmul: a 128 x 128 block tile, 8 x 8 per thread, outer products from shared slices."""
    fig, ax = canvas(9, 4.8, (0, 24), (0, 12.5))
    ax.text(0.2, 12.0, "block tile of C: 128 x 128, 256 threads, each an 8 x 8 sub-tile", weight="bold", fontsize=9.5)
    for r in range(8):
        for c in range(8):
            hl = (r, c) == (2, 5)
            box(ax, 0.5 + c * 1.2, 10.5 - (r + 1) * 1.2, 1.2, 1.2, fc="#ffe0b2" if hl else "white",
                ec=ORANGE if hl else "#b0bec5", lw=1.5 if hl else 0.5)
    ax.text(0.5, 0.6, "(16 x 16 threads; 8 x 8 of them drawn)", fontsize=8, color=GREY)
    arrow(ax, (0.5 + 5.5 * 1.2, 10.5 - 2.5 * 1.2), (13.4, 6.4), color=ORANGE, rad=-0.2)
    # outer product
    ox, oy = 15.0, 2.5
    for i in range(8):
        box(ax, ox - 1.0, oy + i * 0.8, 0.8, 0.8, fc="#e0f2f1", ec=TEAL, lw=0.6)
        box(ax, ox + i * 0.8, oy + 7.0, 0.8, 0.8, fc="#e8eaf6", ec=INDIGO, lw=0.6)
        for j in range(8):
            box(ax, ox + j * 0.8, oy + i * 0.8, 0.8, 0.8, fc="#fff3e0", ec=ORANGE, lw=0.4)
    ax.text(ox - 1.4, oy + 3.2, "av[8]\n(A slice,\ncolumn p)", ha="right", fontsize=8, color=TEAL)
    ax.text(ox + 3.2, oy + 8.3, "bv[8] (B slice, row p)", ha="center", fontsize=8, color=INDIGO)
    ax.text(ox + 3.2, oy - 0.5, "acc[8][8] += av[i] * bv[j]:\n64 FMAs from 16 loaded values", ha="center", va="top",
            fontsize=8.5)
    save(fig, out, "register-tile.svg")


def bitonic_network(out):
    """The bitonic network of this project for 16 keys: mirror steps, then i ^ j steps."""
    n = 16
    steps = []
    k = 2
    while k <= n:
        j = k // 2
        while j >= 1:
            steps.append((k, j))
            j //= 2
        k *= 2
    fig, ax = plt.subplots(figsize=(11, 5.2))
    x = 0.0
    positions = []
    for k, j in steps:
        mirror = j == k // 2
        pairs = []
        for i in range(n):
            partner = i ^ (k - 1) if mirror else i ^ j
            if partner > i:
                pairs.append((i, partner))
        # draw non-overlapping pairs in columns
        columns: list[list[tuple[int, int]]] = []
        for p in pairs:
            for col in columns:
                if all(p[1] < q[0] or p[0] > q[1] for q in col):
                    col.append(p)
                    break
            else:
                columns.append([p])
        x0 = x
        for col in columns:
            for a, b in col:
                ax.plot([x, x], [a, b], color=RED if mirror else INDIGO, linewidth=1.4)
                ax.plot([x], [a], "o", color=RED if mirror else INDIGO, markersize=3.5)
                ax.plot([x], [b], "o", color=RED if mirror else INDIGO, markersize=3.5, mfc="white")
            x += 0.32
        positions.append(((x0 + x - 0.32) / 2, k, j, mirror))
        x += 0.5
        if j == 1:
            ax.axvline(x - 0.45, color="#cfd8dc", linewidth=1)
            x += 0.2
    for i in range(n):
        ax.plot([-0.3, x], [i, i], color="#90a4ae", linewidth=0.6, zorder=0)
        ax.text(-0.5, i, f"{i}", ha="right", va="center", fontsize=8)
    for cx, k, j, mirror in positions:
        ax.text(cx, -1.0, f"j={j}" + ("\nM" if mirror else ""), ha="center", fontsize=7.5, color=RED if mirror else INDIGO,
                va="bottom")
    stage_starts = {}
    for cx, k, j, mirror in positions:
        stage_starts.setdefault(k, []).append(cx)
    for k, xs in stage_starts.items():
        ax.text(sum(xs) / len(xs), 16.2, f"stage k={k}", ha="center", fontsize=8.5, weight="bold", va="top")
    ax.set_ylim(16.6, -2.2)
    ax.set_xlim(-1.2, x)
    ax.axis("off")
    ax.set_title("bitonic network for 16 keys (index top to bottom, time left to right). A line is a compare-exchange: "
                 "the smaller key goes to the filled end (the lower index).\nRed, M: the mirror step of a stage, i with "
                 "i ^ (k - 1); blue: i with i ^ j.", fontsize=9, loc="left")
    save(fig, out, "bitonic-network.svg")


def bitonic_passes(out):
    """How the three sorts split the steps of 2^24 keys into launches."""
    fig, ax = plt.subplots(figsize=(9, 3.0))
    rows = [("global: one launch per step", 300, INDIGO), ("shared: chunk sort + far steps + merges", 105, TEAL),
            ("fast: 16K chunks, 5 steps per pass", 26, ORANGE)]
    for y, (label, launches, color) in enumerate(rows):
        ax.barh(y, launches, color=color, height=0.6)
        ax.text(launches + 4, y, f"{launches} passes over the keys", va="center", fontsize=9)
    ax.set_yticks(range(len(rows)), [r[0] for r in rows])
    ax.invert_yaxis()
    ax.set_xlim(0, 380)
    ax.set_xlabel("launches (each reads every key once) for n = 2^24")
    ax.spines[["top", "right"]].set_visible(False)
    fig.tight_layout()
    save(fig, out, "bitonic-passes.svg")


def hello_grid(out):
    """Blocks of 256 over n = 1000003 characters: the last block overhangs."""
    fig, ax = canvas(10, 2.8, (0, 40), (0, 9.5))
    ax.text(0.2, 8.9, "n = 1 000 003 characters, 256 threads per block  ->  blocks_for(n, 256) = 3907 blocks = "
            "1 000 192 threads", fontsize=9.5, weight="bold")
    xs = [0, 6, 12, 22, 28]
    labels = ["block 0\nthreads 0..255", "block 1\n256..511", "block 2\n512..767", "block 3905\n999 680..999 935",
              "block 3906\n999 936..\n1 000 191"]
    for x, label in zip(xs, labels):
        box(ax, 0.5 + x, 3.5, 5.6, 3.0, fc=LIGHT, ec=GREY)
        ax.text(0.5 + x + 2.8, 5.0, label, ha="center", va="center", fontsize=8)
    ax.text(19.8, 5.0, "...", fontsize=14, ha="center", va="center")
    box(ax, 0.5 + 28 + 5.6 * 67 / 256, 3.5, 5.6 * (256 - 67) / 256, 3.0, fc="#ffcdd2", ec=RED, alpha=0.8)
    ax.text(34.5, 7.0, "i >= n: the last 189 threads", ha="center", va="bottom", fontsize=8, color=RED)
    ax.text(0.5, 2.4, "i = blockIdx.x * blockDim.x + threadIdx.x;   if (i < n) result[i] = text[i] + offsets[i];",
            fontsize=8.5, family="monospace", va="top")
    save(fig, out, "hello-grid.svg")


def memory_spaces(out):
    """Where each memory space lives, who shares it, how long it lives."""
    fig, ax = canvas(10, 5.2, (0, 30), (0, 15.5))
    box(ax, 0.3, 0.3, 29.4, 14.9, fc="white", ec=GREY)
    ax.text(0.8, 14.5, "GPU", weight="bold")
    for s in range(2):
        x = 0.8 + s * 10.2
        box(ax, x, 6.2, 9.6, 7.8, fc="#f1f8e9", ec=TEAL)
        ax.text(x + 0.3, 13.4, f"SM {s} (streaming multiprocessor)", fontsize=9, weight="bold", color=TEAL)
        for b in range(2):
            bx = x + 0.3 + b * 4.6
            box(ax, bx, 9.1, 4.4, 3.9, fc="white", ec=INDIGO)
            ax.text(bx + 0.2, 12.6, f"block {2 * s + b}", fontsize=8, color=INDIGO)
            for t in range(4):
                box(ax, bx + 0.25 + t * 1.02, 10.9, 0.9, 1.3, fc="#e8eaf6", ec=INDIGO, lw=0.5)
                ax.text(bx + 0.7 + t * 1.02, 11.55, "regs", fontsize=6, ha="center", va="center")
            box(ax, bx + 0.25, 9.35, 3.9, 1.2, fc="#fff3e0", ec=ORANGE)
            ax.text(bx + 2.2, 9.95, "shared / __local", fontsize=7.5, ha="center", va="center")
        box(ax, x + 0.3, 6.5, 9.0, 2.2, fc="#eceff1", ec=GREY)
        ax.text(x + 4.8, 7.6, "L1 cache (same SRAM as shared memory);\nconstant and texture caches", fontsize=7.5,
                ha="center", va="center")
    ax.text(21.6, 10.5, "...", fontsize=16)
    box(ax, 0.8, 3.6, 28.4, 2.0, fc="#eceff1", ec=GREY)
    ax.text(15, 4.6, "L2 cache, shared by all SMs", ha="center", va="center", fontsize=9)
    box(ax, 0.8, 0.7, 28.4, 2.3, fc="#ffe0b2", ec=ORANGE)
    ax.text(15, 1.85, "device memory (HBM): global, constant and texture/image data; lives until freed; "
            "every thread of every kernel", ha="center", va="center", fontsize=9)
    ax.text(23.6, 13.0, "registers: one thread,\nthe kernel's lifetime\n\nshared / local memory:\none block, the "
            "block's\nlifetime; on chip", fontsize=8, va="top")
    save(fig, out, "memory-spaces.svg")


def filter_halo(out):
    """A block's 32 x 8 outputs and the tile it loads: the outputs plus a halo of r = 3 on every side."""
    r, bw, bh = 3, 32, 8
    tw, th = bw + 2 * r, bh + 2 * r
    fig, ax = canvas(10.5, 5.0, (-1, tw + 17), (-5.2, th + 2.2))
    for ty in range(th):
        for tx in range(tw):
            inside = r <= tx < r + bw and r <= ty < r + bh
            box(ax, tx, th - 1 - ty, 1, 1, fc="#e0f2f1" if inside else "#ffe0b2", ec="white", lw=0.6)
    box(ax, r, r, bw, bh, fc="none", ec=TEAL, lw=2)
    box(ax, 0, 0, tw, th, fc="none", ec=ORANGE, lw=1.5)
    # the window of thread (5, 2): tile rows 2..8, columns 5..11
    tx0, ty0 = 5, 2
    box(ax, tx0, th - ty0 - 2 * r - 1, 2 * r + 1, 2 * r + 1, fc="none", ec=INDIGO, lw=2)
    box(ax, tx0 + r, th - ty0 - r - 1, 1, 1, fc=INDIGO, ec=INDIGO)
    ax.text(tw / 2, th + 0.6, f"shared tile: (32 + 2r) x (8 + 2r) = {tw} x {th} pixels for r = {r}",
            ha="center", fontsize=9.5, weight="bold")
    ax.text(r + bw / 2, r + bh / 2 - 0.4, "the block's 32 x 8 outputs\n(one per thread)", ha="center", va="center",
            fontsize=9, color=TEAL, weight="bold")
    ax.annotate("", (0, -0.6), (r, -0.6), arrowprops=dict(arrowstyle="<->", color=ORANGE))
    ax.text(r / 2, -1.0, "r", ha="center", va="top", color=ORANGE, fontsize=9)
    ax.annotate("", (tw + 0.6, th), (tw + 0.6, th - r), arrowprops=dict(arrowstyle="<->", color=ORANGE))
    ax.text(tw + 1.0, th - r / 2, "r", va="center", color=ORANGE, fontsize=9)
    ax.text(tw + 2.2, th - 0.5,
            "halo (orange): the pixels within r of the\nblock's outputs that other blocks also load\n\n"
            "indigo: the (2r+1) x (2r+1) window of\nthread (5, 2); the filled cell is its output\n\n"
            "the tile's corner in the image:\n  x0 = blockIdx.x * 32 - r\n  y0 = blockIdx.y * 8 - r\n\n"
            "at the image's border the halo holds\nclamped copies of the edge pixels",
            fontsize=8.5, va="top")
    ax.text(0, -2.0, f"loading: 256 threads, {tw * th} pixels: for (ty = threadIdx.y; ty < {th}; ty += 8) "
            f"for (tx = threadIdx.x; tx < {tw}; tx += 32)\n"
            "a warp reads 32 consecutive pixels of one row (coalesced); then __syncthreads() before any thread "
            f"reads the tile.\n{tw * th} loads for 256 outputs: {tw * th / 256:.2f} per output (a 32 x 32 block: "
            f"{(32 + 2 * r) ** 2 / 1024:.2f}, but fewer blocks per SM)",
            fontsize=8.5, va="top", family="monospace")
    save(fig, out, "filter-halo.svg")


def filter_separable(out):
    """The tiled box: sums of 2r + 1 along each tile row, then 2r + 1 of those down each column."""
    r, bw, bh = 3, 32, 8
    tw, th = bw + 2 * r, bh + 2 * r
    c = 0.42  # cell size
    fig, ax = canvas(11, 4.2, (-0.5, 3 * 17.5), (-4.4, th * c + 1.4))
    panels = ((0.0, tw, th, "tile[14][38] (uchar4)"), (18.5, bw, th, "row_sums[14][32] (uint4)"),
              (34.5, bw, bh, "out: 32 x 8 pixels"))
    for x0, w, h, title in panels:
        for j in range(h):
            for i in range(w):
                box(ax, x0 + i * c, (h - 1 - j) * c, c, c, fc=LIGHT, ec="white", lw=0.4)
        ax.text(x0 + w * c / 2, th * c + 0.5, title, ha="center", fontsize=9, weight="bold")
    tx, ty = 10, 5  # thread x of the highlighted row sum and output
    # step 1: row sum of tile[ty + 2][tx .. tx + 2r] -> row_sums[ty + 2][tx]
    ry = ty + 2
    for k in range(2 * r + 1):
        box(ax, (tx + k) * c, (th - 1 - ry) * c, c, c, fc="#ffe0b2", ec=ORANGE, lw=0.6)
    arrow(ax, ((tx + 2 * r + 1) * c + 0.2, (th - ry - 0.5) * c), (18.5 + tx * c - 0.2, (th - ry - 0.5) * c),
          color=ORANGE, rad=-0.25)
    # step 2: column sum of row_sums[ty .. ty + 2r][tx] -> out[ty][tx]
    for k in range(2 * r + 1):
        box(ax, 18.5 + tx * c, (th - 1 - (ty + k)) * c, c, c, fc="#ffe0b2" if ty + k == ry else "none", ec=INDIGO,
            lw=1.2)
    box(ax, 34.5 + tx * c, (bh - 1 - ty) * c, c, c, fc=INDIGO, ec=INDIGO)
    arrow(ax, (18.5 + (tx + 1) * c + 0.2, (th - ty - r - 0.5) * c), (34.5 + tx * c - 0.2, (bh - ty - 0.5) * c),
          color=INDIGO, rad=0.2)
    ax.text(0, -0.5, "step 1 (orange): each thread sums 2r + 1 = 7 pixels along its tile rows ty = threadIdx.y, "
            "threadIdx.y + 8 (all 14 rows of the tile)\ninto row_sums[ty][threadIdx.x];  __syncthreads()",
            fontsize=8.5, va="top", color=ORANGE)
    ax.text(0, -2.2, "step 2 (indigo): each thread inside the image adds the 7 row sums row_sums[threadIdx.y + dy]"
            "[threadIdx.x], dy = 0..2r, and stores\nrounded_mean(sum, 49).  14 x 7 + 8 x 7 = 154 additions per column "
            "of 8 outputs: about 19 per output instead of 49",
            fontsize=8.5, va="top", color=INDIGO)
    save(fig, out, "filter-separable.svg")


def filter_median9(out):
    """The 19 compare-exchanges of median_of_9: sort the rows, then three candidates, then their median."""
    fig, ax = canvas(10.5, 3.3, (0, 33), (-2.6, 7.6))
    vals = [[7, 2, 9], [4, 8, 1], [6, 3, 5]]
    srt = [sorted(row) for row in vals]
    mins, meds, maxs = [r[0] for r in srt], [r[1] for r in srt], [r[2] for r in srt]
    cand = [max(mins), sorted(meds)[1], min(maxs)]

    def grid(x0, rows, colours, title, note):
        for j, row in enumerate(rows):
            for i, v in enumerate(row):
                fc = colours(i, j)
                box(ax, x0 + i * 1.6, 4.2 - j * 1.6, 1.5, 1.5, fc=fc, ec=GREY, lw=0.8)
                ax.text(x0 + i * 1.6 + 0.75, 4.95 - j * 1.6, str(v), ha="center", va="center", fontsize=10)
        ax.text(x0 + 2.4, 6.4, title, ha="center", fontsize=9, weight="bold")
        ax.text(x0 + 2.4, 0.6, note, ha="center", va="top", fontsize=8)

    grid(0.5, vals, lambda i, j: "white", "the 3x3 window", "v[0..8], one channel\n(all four at once)")
    arrow(ax, (5.6, 3.3), (7.3, 3.3))
    ax.text(6.45, 3.7, "9", ha="center", fontsize=8, color=GREY)
    grid(7.6, srt, lambda i, j: ("#e0f2f1", "#e8eaf6", "#ffe0b2")[i], "each row sorted",
         "3 compare-exchanges per row:\nminima | medians | maxima")
    arrow(ax, (12.7, 3.3), (14.6, 3.3))
    ax.text(13.65, 3.7, "2 + 3 + 2", ha="center", fontsize=8, color=GREY)
    for k, (label, v, fc) in enumerate((("largest minimum", cand[0], "#e0f2f1"),
                                        ("median of the medians", cand[1], "#e8eaf6"),
                                        ("smallest maximum", cand[2], "#ffe0b2"))):
        box(ax, 15.0, 4.2 - k * 1.6, 1.5, 1.5, fc=fc, ec=GREY, lw=0.8)
        ax.text(15.75, 4.95 - k * 1.6, str(v), ha="center", va="center", fontsize=10)
        ax.text(16.8, 4.95 - k * 1.6, label, va="center", fontsize=8.5)
    ax.text(17.4, 6.4, "three candidates", ha="center", fontsize=9, weight="bold")
    arrow(ax, (24.2, 3.3), (26.6, 3.3))
    ax.text(25.4, 3.7, "3", ha="center", fontsize=8, color=GREY)
    med = sorted(cand)[1]
    box(ax, 27.0, 2.6, 1.5, 1.5, fc=INDIGO, ec=INDIGO)
    ax.text(27.75, 3.35, str(med), ha="center", va="center", fontsize=11, color="white", weight="bold")
    ax.text(27.75, 6.4, "the median", ha="center", fontsize=9, weight="bold")
    ax.text(27.75, 2.2, f"= {sorted(sum(vals, []))[4]}, the 5th of 9", ha="center", va="top", fontsize=8)
    ax.text(0.5, -1.6, "9 + 7 + 3 = 19 compare-exchanges (min and max), no branches; a full sort of 9 values "
            "needs 25 in the best known network", fontsize=8.5, va="top", color=GREY)
    save(fig, out, "filter-median9.svg")


def reduction_tree(out):
    """A block's tree in shared memory with sequential addressing, then one atomic per block."""
    fig, ax = canvas(10, 5.0, (0, 34), (-1.2, 16))
    n = 16
    values = [3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9, 3]
    levels = [values]
    while len(levels[-1]) > 1:
        v = levels[-1]
        half = len(v) // 2
        levels.append([v[t] + v[t + half] for t in range(half)])
    for lv, v in enumerate(levels):
        y = 14 - lv * 3.1
        for t, x in enumerate(v):
            box(ax, 1 + t * 1.6, y, 1.4, 1.2, fc="#e0f2f1" if lv else LIGHT, ec=TEAL if lv else GREY)
            ax.text(1.7 + t * 1.6, y + 0.6, str(x), ha="center", va="center", fontsize=8.5)
        label = "s[0 .. 15] after loading" if lv == 0 else f"stride {len(levels[lv - 1]) // 2}: thread t < {len(v)} adds s[t + {len(v)}]"
        ax.text(27.0, y + 0.6, label, fontsize=8.5, va="center")
        if lv:
            prev = levels[lv - 1]
            half = len(v)
            for t in range(len(v)):
                arrow(ax, (1.7 + t * 1.6, y + 3.1), (1.7 + t * 1.6, y + 1.25), color=GREY, lw=0.7)
                arrow(ax, (1.7 + (t + half) * 1.6, y + 3.1), (1.7 + t * 1.6 + 0.3, y + 1.25), color=TEAL, lw=0.7)
            ax.plot([0.6, 26.4], [y + 1.75, y + 1.75], color=RED, lw=0.8, linestyle="--")
    ax.text(26.6, 14 - 3.1 + 1.75, "barrier", color=RED, fontsize=7.5, va="center")
    y_last = 14 - (len(levels) - 1) * 3.1
    arrow(ax, (2.4, y_last + 0.2), (7.5, y_last - 1.0), color=ORANGE, lw=1.2)
    ax.text(7.8, y_last - 1.0, "thread 0 stores the block's sum to scratch, and the next launch sums those (tree);\n"
            "the fast kernel sums its warps with shuffles instead, and adds each block's sum with one atomicAdd",
            fontsize=8.5, color=ORANGE, va="center")
    ax.text(0.6, 15.9, f"one block's tree over {n} values (the lab's blocks: 256 threads add 512 values in pairs while loading, then 8 rounds)",
            fontsize=9.5, weight="bold")
    save(fig, out, "reduction-tree.svg")


def scan_phases(out):
    """any-n's three phases, and fast's single pass with decoupled look-back."""
    fig, ax = canvas(10.5, 6.4, (0, 42), (0, 25.5))
    words = [[1, 2, 0, 3], [2, 2, 1, 1], [0, 4, 1, 2], [3, 0, 0, 1]]
    ax.text(0.3, 25.0, "any-n: three phases (tiles of 4 words here; the lab's: 1024)", fontsize=9.5, weight="bold")

    def row(y, vals, fc, ec, label):
        for b, tile in enumerate(vals):
            for i, x in enumerate(tile):
                box(ax, 1 + b * 7.2 + i * 1.6, y, 1.4, 1.2, fc=fc, ec=ec)
                ax.text(1.7 + b * 7.2 + i * 1.6, y + 0.6, str(x), ha="center", va="center", fontsize=8.5)
        ax.text(30.2, y + 0.6, label, fontsize=8.5, va="center")

    incl = [[sum(t[: i + 1]) for i in range(len(t))] for t in words]
    totals = [t[-1] for t in incl]
    offsets = [sum(totals[:b]) for b in range(len(totals))]
    row(22.4, words, LIGHT, GREY, "input, cut into tiles")
    row(19.4, incl, "#e0f2f1", TEAL, "1: scan each tile; its total to scratch")
    for b, tot in enumerate(totals):
        box(ax, 1 + b * 7.2 + 4.8, 16.6, 1.4, 1.2, fc="#ffe0b2", ec=ORANGE)
        ax.text(1.7 + b * 7.2 + 4.8, 17.2, f"{offsets[b]}", ha="center", va="center", fontsize=8.5)
        arrow(ax, (1.7 + b * 7.2 + 4.8, 19.35), (1.7 + b * 7.2 + 4.8, 17.85), color=ORANGE, lw=0.8)
    ax.text(30.2, 17.2, "2: scan the totals (exclusive),\n    the same function, recursively", fontsize=8.5, va="center")
    row(13.8, [[x + offsets[b] for x in t] for b, t in enumerate(incl)], "#e8eaf6", INDIGO,
        "3: add each tile's offset")
    ax.text(0.3, 11.6, "phases 1 and 3 both read and write the words: 16 bytes a word, twice a copy's 8",
            fontsize=8, color=GREY)

    ax.text(0.3, 9.6, "fast: one pass, decoupled look-back (tiles of 8192 words; CUDA)", fontsize=9.5, weight="bold")
    states = [("P", 6), ("P", 12), ("A", 7), ("A", 4), ("X", None)]
    for b, (flag, value) in enumerate(states):
        fc = {"P": "#e8eaf6", "A": "#ffe0b2", "X": LIGHT}[flag]
        ec = {"P": INDIGO, "A": ORANGE, "X": GREY}[flag]
        box(ax, 1 + b * 6.0, 5.4, 5.0, 2.4, fc=fc, ec=ec, lw=1.2 if b == 4 else 1.0)
        text = f"tile {b}\n{flag}: {value}" if value is not None else f"tile {b}\n(this tile)"
        ax.text(3.5 + b * 6.0, 6.6, text, ha="center", va="center", fontsize=8.5)
    for b in (3, 2, 1):
        arrow(ax, (1.2 + (b + 1) * 6.0, 4.9), (3.5 + b * 6.0, 4.9), color=RED, lw=1.0, rad=-0.35)
    ax.text(1.0, 2.9, "tile 4 has published its aggregate; it looks back, adding aggregates (A: 4, 7) until it meets an\n"
            "inclusive prefix (P: 12): its prefix is 12 + 7 + 4 = 23. It publishes P (23 + its total) and writes its words once.",
            fontsize=8, va="top")
    ax.text(32.0, 6.6, "X: nothing yet\nA: the tile's own total\nP: the sum of every word\n    up to its end",
            fontsize=8, va="center", color=GREY)
    save(fig, out, "scan-phases.svg")


def histogram_privatised(out):
    """Per-block bins in shared memory, merged into the global bins once per block."""
    fig, ax = canvas(10, 4.6, (0, 40), (0, 18.5))
    ax.text(0.3, 18.0, "privatised bins: shared-memory atomics per byte, global atomics per block", fontsize=9.5,
            weight="bold")
    for b in range(3):
        x0 = 1 + b * 12.5
        box(ax, x0, 10.6, 10.8, 5.4, fc=LIGHT, ec=GREY)
        ax.text(x0 + 0.3, 15.4, f"block {b}" if b < 2 else "block B - 1", fontsize=8.5, weight="bold")
        for t in range(6):
            box(ax, x0 + 0.4 + t * 1.3, 13.6, 1.1, 1.1, fc="#e8eaf6", ec=INDIGO, lw=0.6)
        ax.text(x0 + 10.6, 14.15, "threads", fontsize=7.2, color=INDIGO, va="center", ha="right")
        for k in range(6):
            box(ax, x0 + 0.4 + k * 1.3, 10.9, 1.1, 1.1, fc="#e0f2f1", ec=TEAL, lw=0.6)
        ax.text(x0 + 10.6, 11.45, "bins", fontsize=7.2, color=TEAL, va="center", ha="right")
        for t, k in ((0, 2), (3, 2), (5, 6)):
            arrow(ax, (x0 + 0.95 + t * 1.3, 13.55), (x0 + 0.95 + k * 1.3, 12.05), color=TEAL, lw=0.7)
    for k in range(16):
        box(ax, 4 + k * 1.9, 3.0, 1.7, 1.4, fc="#ffe0b2", ec=ORANGE, lw=0.7)
    ax.text(4, 2.6, "256 bins in global memory", fontsize=8, color=ORANGE, va="top")
    for b in range(3):
        arrow(ax, (1 + b * 12.5 + 5.4, 10.5), (8 + b * 10, 4.5), color=ORANGE, lw=1.0)
    ax.text(1.0, 7.6, "each thread: a grid-stride loop over the bytes, one shared atomicAdd per byte into the\n"
            "block's 256 bins; at the end of the block, 256 global atomicAdds, one per bin", fontsize=8,
            color=ORANGE)
    ax.text(27.0, 5.4, "as many blocks as the GPU runs at once\n(8 per SM on the H100)", fontsize=8, color=GREY)
    save(fig, out, "histogram-privatised.svg")


def nbody_tiles(out):
    """Each block walks over all bodies a tile at a time, through shared memory."""
    fig, ax = canvas(10, 4.4, (0, 40), (0, 17))
    ax.text(0.3, 16.5, "block b computes the forces on its T bodies; the bodies pass through shared memory a tile at a time",
            fontsize=9.5, weight="bold")
    tiles = 6
    for j in range(tiles):
        fc = "#ffe0b2" if j == 2 else LIGHT
        box(ax, 2 + j * 5.2, 12.0, 4.8, 1.6, fc=fc, ec=ORANGE if j == 2 else GREY)
        ax.text(4.4 + j * 5.2, 12.8, f"tile {j}" if j < tiles - 1 else "last tile\n(mass 0 past n)",
                ha="center", va="center", fontsize=7.5)
    ax.text(33.6, 12.8, "all n bodies in global\nmemory; tile j: bodies\njT .. jT + T - 1", fontsize=8, va="center")
    box(ax, 12.4, 6.6, 4.8, 1.6, fc="#ffe0b2", ec=ORANGE, lw=1.2)
    ax.text(14.8, 7.4, "tile in shared memory", ha="center", va="center", fontsize=7.5)
    arrow(ax, (14.8, 11.9), (14.8, 8.3), color=ORANGE)
    ax.text(15.3, 10.1, "1. each thread loads one body (coalesced); barrier", fontsize=8, color=ORANGE)
    box(ax, 23.0, 3.6, 15.5, 1.6, fc="#e8eaf6", ec=INDIGO)
    ax.text(30.75, 4.4, "block b: T threads, thread i owns body bT + i", ha="center", va="center", fontsize=7.5)
    arrow(ax, (17.3, 7.0), (23.0, 4.6), color=INDIGO)
    ax.text(18.5, 6.9, "2. every thread adds the T terms\n    of the tile; barrier; next tile", fontsize=8, color=INDIGO)
    ax.text(0.5, 2.2, "each body is loaded from global memory once per block and used by all T threads (T = 256):\n"
            "a thread's n interactions need n / T loads of its own, so the kernel is limited by arithmetic", fontsize=8,
            color=GREY, va="top")
    save(fig, out, "nbody-tiles.svg")


def mandelbrot_warp(out):
    """Escape counts of one warp of the timing spiral: the warp runs as long as its slowest lane."""
    import numpy as np

    size, span, centre, max_iter = 4096, 0.0006, (-0.7453, 0.1127), 2048
    x0, y0 = 2624, 2250  # a warp of 16 x 2 pixels, busy about as much as the window's average
    step = span / size
    px, py = np.meshgrid(np.arange(x0, x0 + 16), np.arange(y0, y0 + 2))
    c = (centre[0] + (px.ravel() - size / 2) * step) + 1j * (centre[1] + (py.ravel() - size / 2) * step)
    z = np.zeros_like(c)
    count = np.zeros(c.shape, int)
    alive = np.ones(c.shape, bool)
    for _ in range(max_iter):
        z[alive] = z[alive] ** 2 + c[alive]
        alive &= np.abs(z) <= 2
        count[alive] += 1
        if not alive.any():
            break
    longest = count.max()
    busy = count.sum() / (32 * longest)
    fig, ax = plt.subplots(figsize=(9.5, 3.6))
    lanes = np.arange(32)
    ax.bar(lanes, count, color=TEAL, width=0.8, label="steps of its own orbit (useful)")
    ax.bar(lanes, longest - count, bottom=count, color="#cfd8dc", width=0.8, label="masked off, waiting for the slowest lane")
    ax.axhline(longest, color=RED, linewidth=1, linestyle="--")
    ax.text(31.6, longest * 1.02, f"the warp runs {longest} steps", color=RED, ha="right", va="bottom", fontsize=8.5)
    ax.set_xlabel("lane of the warp (16 x 2 pixels of the spiral; counts computed here in double precision)")
    ax.set_ylabel("steps")
    ax.set_title(f"one warp of the timing window: its lanes do useful work {100 * busy:.0f} % of the time", fontsize=10,
                 loc="left")
    ax.set_xlim(-0.8, 31.8)
    ax.set_ylim(0, longest * 1.35)
    ax.spines[["top", "right"]].set_visible(False)
    ax.legend(loc="upper left", frameon=False, fontsize=8, ncol=2)
    fig.tight_layout()
    save(fig, out, "mandelbrot-warp.svg")


def amdahl(out):
    """The theory chapter's worked example: a 50x kernel in a 1 s program, with and without the copies."""
    import numpy as np

    fig, (left, right) = plt.subplots(1, 2, figsize=(10.5, 3.6), gridspec_kw={"width_ratios": [1.15, 1]})
    rows = [("CPU", [("host code", 0.05, GREY), ("loop", 0.95, INDIGO)]),
            ("GPU kernel, 50x", [("host code", 0.05, GREY), ("kernel", 0.019, TEAL)]),
            ("GPU kernel + copies", [("host code", 0.05, GREY), ("kernel", 0.019, TEAL), ("copies (3 GB, 50 GB/s)", 0.06, ORANGE)])]
    for y, (label, parts) in enumerate(rows):
        start = 0.0
        for name, t, color in parts:
            left.barh(y, t, left=start, color=color, height=0.55)
            start += t
        left.text(start + 0.015, y, f"{start:.3f} s: {1 / start:.1f}x" if y else "1 s", va="center", fontsize=8.5)
    left.set_yticks(range(len(rows)), [r[0] for r in rows])
    left.invert_yaxis()
    left.set_xlim(0, 1.25)
    left.set_xlabel("time (s)")
    handles = [Rectangle((0, 0), 1, 1, color=c) for c in (GREY, INDIGO, TEAL, ORANGE)]
    left.legend(handles, ["serial host code", "the loop on the CPU", "the kernel", "host-device copies"],
                frameon=False, fontsize=7.5, loc="lower right")
    left.spines[["top", "right"]].set_visible(False)
    s = np.logspace(0, 3, 200)
    right.semilogx(s, 1 / (0.05 + 0.95 / s), color=TEAL, label="kernel only: ceiling 1 / 0.05 = 20")
    right.semilogx(s, 1 / (0.05 + 0.06 + 0.95 / s), color=ORANGE, label="with the copies: ceiling 1 / 0.11 = 9.1")
    right.axhline(20, color=TEAL, linestyle=":", linewidth=1)
    right.axhline(1 / 0.11, color=ORANGE, linestyle=":", linewidth=1)
    right.axvline(50, color=GREY, linestyle="--", linewidth=0.8)
    right.text(52, 1.5, "s = 50", fontsize=8, color=GREY)
    right.set_xlabel("speedup s of the loop (f = 0.95 of the CPU time)")
    right.set_ylabel("speedup of the program")
    right.set_ylim(0, 22)
    right.legend(frameon=False, fontsize=7.5, loc="upper left")
    right.spines[["top", "right"]].set_visible(False)
    fig.suptitle("Amdahl's law: S = 1 / ((1 - f) + f / s), the serial part sets the ceiling", fontsize=10, x=0.02,
                 ha="left")
    fig.tight_layout()
    save(fig, out, "amdahl.svg")


def main() -> int:
    out = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "docs/figures")
    out.mkdir(parents=True, exist_ok=True)
    for draw in (hierarchy, latency_hiding, coalescing, transpose_tiles, banks, matmul_tiles, register_tile,
                 bitonic_network, bitonic_passes, hello_grid, memory_spaces, filter_halo, filter_separable, filter_median9,
                 reduction_tree, scan_phases, histogram_privatised, nbody_tiles, mandelbrot_warp, amdahl):
        draw(out)
    print(f"figures: wrote {', '.join(sorted(p.name for p in out.glob('*.svg')))} into {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
