"""MkDocs hook of the lecture companion: code listings included from the project's own files.

A line of a page that holds only

    --8<-- "solutions/02-transpose/transpose.cu:tiled"

is replaced by the lines of that file between the comments `--8<-- [start:tiled]` and
`--8<-- [end:tiled]` (the syntax of pymdownx.snippets' named sections, which Debian 12's
pymdownx 9.5 predates). Without `:section` the whole file is included. `:before=TEXT` includes the
lines before the first one that starts with TEXT (leading blanks aside), for files students read,
where markers would be noise: `--8<-- "labs/02-transpose/lab.toml:before=# Hidden cases"`. The marker's indentation is
put in front of every included line, so a listing can sit in a content tab. Paths are relative to
the repository root (the folder of mkdocs.yml) and must stay inside it.

Everything that could let a listing drift silently stops the build: a missing file, a missing
section, a section without its end or given twice, an empty section. Marker lines of other
sections inside an included section are dropped.

In the student edition (site_hook.py) a listing from solutions/ becomes a note saying the
reference solution is in the instructor edition: that site carries no solution code. The note
replaces the whole code block (its fences too), so it renders as a note, not as code; a solution
listing must therefore have its code block to itself, or the build stops.

pymdownx.snippets has named sections since 9.7, but not this strictness (it includes an unclosed
section to the end of the file, and an empty one, silently), `before=`, or the editions.
"""

from __future__ import annotations

import os
import re

from mkdocs.exceptions import PluginError

INCLUDE = re.compile(r"^(?P<indent>[ \t]*)-{2,}8<-{2,}[ \t]+\"(?P<spec>[^\"]+)\"[ \t]*$")
SECTION = re.compile(r"-{2,}8<-{2,}[ \t]*\[[ \t]*(?P<kind>start|end)[ \t]*:[ \t]*(?P<name>[A-Za-z0-9_.-]+)[ \t]*\]")
FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})")
SOLUTION_NOTE = ('!!! note "Reference solution"',
                 "    The reference solution's code is in the instructor edition of this site.")


class SnippetError(PluginError):
    pass


def split_spec(spec: str) -> tuple[str, str | None]:
    """'path:section' -> (path, section); 'path' -> (path, None); 'path:before=TEXT' -> (path, 'before=TEXT')."""
    if ":before=" in spec:  # TEXT may hold ':' and '/'
        path, _, text = spec.partition(":before=")
        return path, "before=" + text
    path, sep, section = spec.rpartition(":")
    if sep and section and "/" not in section and path:
        return path, section
    return spec, None


def section_lines(lines: list[str], section: str, where: str) -> list[str]:
    starts = [i for i, l in enumerate(lines) if (m := SECTION.search(l)) and m["kind"] == "start" and m["name"] == section]
    ends = [i for i, l in enumerate(lines) if (m := SECTION.search(l)) and m["kind"] == "end" and m["name"] == section]
    if not starts:
        raise SnippetError(f"{where}: no section '{section}' (no line with '--8<-- [start:{section}]')")
    if len(starts) > 1 or len(ends) > 1:
        raise SnippetError(f"{where}: section '{section}' is marked more than once")
    if not ends or ends[0] < starts[0]:
        raise SnippetError(f"{where}: section '{section}' has no '--8<-- [end:{section}]' after its start")
    return [l for l in lines[starts[0] + 1 : ends[0]] if not SECTION.search(l)]


def lines_before(lines: list[str], text: str, where: str) -> list[str]:
    for i, line in enumerate(lines):
        if line.lstrip().startswith(text):
            return [l for l in lines[:i] if not SECTION.search(l)]
    raise SnippetError(f"{where}: no line starts with '{text}'")


def is_solution(line: str) -> bool:
    m = INCLUDE.match(line)
    return bool(m) and os.path.normpath(split_spec(m["spec"].strip())[0]).split(os.sep)[0] == "solutions"


def code_blocks(lines: list[str]) -> list[tuple[int, int]]:
    """(opening fence, closing fence) line indexes of each fenced code block; an unclosed one runs to the end."""
    blocks, opening = [], None
    for i, line in enumerate(lines):
        m = FENCE.match(line)
        if not m:
            continue
        if opening is None:
            opening, fence = i, m["fence"]
        elif line.strip() == line.strip()[0] * len(line.strip()) and line.strip().startswith(fence):
            blocks.append((opening, i))
            opening = None
    if opening is not None:
        blocks.append((opening, len(lines)))
    return blocks


def solution_blocks(lines: list[str], page: str) -> dict[int, int]:
    """Opening fence -> closing fence of each code block that holds a listing from solutions/."""
    hidden = {}
    for first, last in code_blocks(lines):
        inside = lines[first + 1 : last]
        if not any(is_solution(l) for l in inside):
            continue
        if any(l.strip() and not is_solution(l) for l in inside):
            raise SnippetError(f"{page}:{first + 1}: this code block has a listing from solutions/ and other lines: "
                               "give the solution listing a code block of its own (the student edition replaces "
                               "the block with a note)")
        hidden[first] = last
    return hidden


def expand(markdown: str, root: str, page: str, student_edition: bool = False) -> str:
    lines = markdown.split("\n")
    hidden = solution_blocks(lines, page) if student_edition else {}
    out, skip_to = [], -1
    for number, line in enumerate(lines, start=1):
        if number - 1 <= skip_to:
            continue
        if number - 1 in hidden:  # the block's fences go with its listing: the note is no code
            out.extend(FENCE.match(line)["indent"] + l for l in SOLUTION_NOTE)
            skip_to = hidden[number - 1]
            continue
        m = INCLUDE.match(line)
        if not m:
            out.append(line)
            continue
        if student_edition and is_solution(line):  # outside any code block
            out.extend(m["indent"] + l for l in SOLUTION_NOTE)
            continue
        path, section = split_spec(m["spec"].strip())
        where = f"{page}:{number}: {m['spec']}"
        full = os.path.realpath(os.path.join(root, path))
        if os.path.commonpath([full, os.path.realpath(root)]) != os.path.realpath(root):
            raise SnippetError(f"{where}: the file is outside the repository")
        if not os.path.isfile(full):
            raise SnippetError(f"{where}: no such file")
        with open(full, encoding="utf-8") as f:
            included = f.read().split("\n")
        if included and included[-1] == "":
            included.pop()
        if section is not None and section.startswith("before="):
            included = lines_before(included, section[len("before="):], where)
        elif section is not None:
            included = section_lines(included, section, where)
        while included and not included[0].strip():
            included.pop(0)
        while included and not included[-1].strip():
            included.pop()
        if not included:
            raise SnippetError(f"{where}: the included text is empty")
        out.extend(m["indent"] + l if l.strip() else "" for l in included)
    return "\n".join(out)


def on_page_markdown(markdown, page, config, files):
    root = os.path.dirname(os.path.abspath(config["config_file_path"]))
    student = config.extra.get("gpulab_edition") == "student"
    return expand(markdown, root, page.file.src_path, student_edition=student)
