#!/usr/bin/env python3
"""The course's lists of labs, made from the labs' manifests (labs/NN-name/lab.toml), so that adding a
lab edits no shared file: the table of README.md, the table of docs/index.md and the Labs section of
mkdocs.yml's nav. Each list sits between two marker lines and is rewritten whole; the rest of each file
is left as it is.

A manifest gives `name`, `short_title` (the chapter's name in the nav and the index), `summary` (what a
student learns, in the README) and `chapter_summary` (what the chapter gives, in the index). A lab's
chapter is docs/labs/<name>.md.

    scripts/lab_lists.py           rewrite the lists (make lab-lists)
    scripts/lab_lists.py --check   exit 1, naming each file, when a list differs from the manifests
"""

from __future__ import annotations

import argparse
import sys
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
KEYS = ("name", "short_title", "summary", "chapter_summary")


def manifests(repo: Path) -> list[tuple[str, dict]]:
    """(folder, manifest) of every lab, in folder order; a manifest without a key the lists need stops."""
    labs = []
    for toml in sorted(repo.glob("labs/[0-9]*-*/lab.toml")):
        with toml.open("rb") as f:
            manifest = tomllib.load(f)
        missing = [k for k in KEYS if not isinstance(manifest.get(k), str) or not manifest[k]]
        if missing:
            raise SystemExit(f"{toml.relative_to(repo)}: add {', '.join(missing)} (scripts/lab_lists.py says what each is)")
        labs.append((toml.parent.name, manifest))
    return labs


def readme_rows(labs) -> list[str]:
    # The whole table: GitHub ends a table at a comment line, so the markers go around it.
    header = ["| lab | what you learn |", "| --- | --- |"]
    return header + [f"| [`{folder}`](labs/{folder}/README.md) | {m['summary']} |" for folder, m in labs]


def index_rows(labs) -> list[str]:
    # Rows in the middle of the chapters' table; the site's hook drops the marker lines around them.
    return [
        f"| [Lab {folder[:2]} · {m['short_title']}](labs/{m['name']}.md) | {m['chapter_summary']} |"
        for folder, m in labs
    ]


def nav_rows(labs) -> list[str]:
    return [f'      - "{folder[:2]} · {m["short_title"]}": labs/{m["name"]}.md' for folder, m in labs]


# file: (start marker, end marker, rows)
LISTS = {
    "README.md": ("<!-- labs: made by scripts/lab_lists.py from labs/*/lab.toml -->", "<!-- /labs -->", readme_rows),
    "docs/index.md": ("<!-- labs: made by scripts/lab_lists.py from labs/*/lab.toml -->", "<!-- /labs -->", index_rows),
    "mkdocs.yml": ("      # labs: made by scripts/lab_lists.py from labs/*/lab.toml", "      # /labs", nav_rows),
}


def with_list(text: str, start: str, end: str, rows: list[str], file: str) -> str:
    lines = text.split("\n")
    try:
        first, last = lines.index(start), lines.index(end)
    except ValueError:
        raise SystemExit(f"{file}: the lines {start!r} and {end!r} around the list of labs are missing")
    if last < first:
        raise SystemExit(f"{file}: {end!r} comes before {start!r}")
    return "\n".join(lines[: first + 1] + rows + lines[last:])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="only say which lists differ from the manifests")
    parser.add_argument("--repo", type=Path, default=REPO)
    args = parser.parse_args()
    labs = manifests(args.repo)
    stale = []
    for file, (start, end, rows) in LISTS.items():
        path = args.repo / file
        text = path.read_text(encoding="utf-8")
        made = with_list(text, start, end, rows(labs), file)
        if made == text:
            continue
        stale.append(file)
        if not args.check:
            path.write_text(made, encoding="utf-8")
    if args.check and stale:
        print(f"the lists of labs in {', '.join(stale)} differ from labs/*/lab.toml: run `make lab-lists`", file=sys.stderr)
        return 1
    if not args.check:
        print(f"lab lists: {', '.join(stale) if stale else 'nothing'} rewritten from {len(labs)} labs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
