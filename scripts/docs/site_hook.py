"""MkDocs hook of the lecture companion: its two editions, the answers to the questions, KaTeX, and
where long code names in tables may break.

One source, two sites:

- the *instructor* edition (the default where solutions/ exists): the chapters with the reference
  solutions' code, and an answer under every question;
- the *student* edition (the default in the student repository, which has no solutions/; or
  GPULAB_DOCS_EDITION=student): no answers and no solution code. snippets_hook.py replaces each
  listing from solutions/ with a note, and the answers are never inserted.

Answers live outside the chapters, in docs/answers/<chapter path> (the student release leaves the
folder out, as it does solutions/): one `## N` section per question of the chapter's
`<div class="exam" markdown>` list, in order. In the instructor edition each answer becomes a
collapsed `??? answer` block under its question. A chapter whose questions and answers do not pair
up one to one stops the build, naming both files.

Formulas (`$...$`, `$$...$$`, pymdownx.arithmatex) are typeset by KaTeX, served with the site from
Debian's libjs-katex, so the site needs no network.

Search from file://, offline, in a browser started without flags. Material's offline plugin
inlines the index into search/search_index.js (the theme loads it with a script tag from file://),
but the search itself runs in a Web Worker, which a file:// page may not start from a file, and the
plugin's remedy is a shim loaded from a CDN. This hook drops that shim and serves, with the site,
the theme's own search worker as a string (assets/search-worker-source.js) and docs/assets/
file-search.js, which starts that worker from a blob: URL when the page comes from file://.
No page of the site loads anything from the network (tests/docs/site_test.py checks every page).

A code name in a table cell (`cudaDevAttrMaxSharedMemoryPerBlockOptin`) gets break opportunities
(<wbr>) at its word boundaries, so a narrow column breaks it there and nowhere else.
"""

from __future__ import annotations

import json
import os
import re

from mkdocs.exceptions import PluginError
from mkdocs.plugins import event_priority
from mkdocs.structure.files import File

EDITIONS = ("instructor", "student")
EXAM_START = re.compile(r'^<div class="exam" markdown(="1")?>\s*$')
EXAM_END = re.compile(r"^</div>\s*$")
QUESTION = re.compile(r"^(?P<number>\d+)\.\s")
ANSWER_HEADING = re.compile(r"^## (?P<number>\d+)\s*$")
FENCE = re.compile(r"^\s*(`{3,}|~{3,})")
TABLE = re.compile(r"<table>.*?</table>", re.S)
CODE = re.compile(r"<code>([^<]*)</code>")
WORD_BOUNDARY = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[_/.,])(?=\w)|(?<=::)(?=\w)|(?<=\()(?=\w)")
KATEX_DIR = "/usr/share/javascript/katex"
KATEX_FILES = ("katex.min.js", "katex.min.css", "contrib/auto-render.js")
SEARCH_WORKER = re.compile(r"^assets/javascripts/workers/search\.[0-9a-f]+\.min\.js$")
SEARCH_WORKER_SOURCE = "assets/search-worker-source.js"  # generated: the theme's worker, as a string
FILE_SEARCH = "assets/file-search.js"  # docs/assets: starts that worker from a blob: URL under file://


class EditionError(PluginError):
    pass


def edition_of(root: str) -> str:
    edition = os.environ.get("GPULAB_DOCS_EDITION", "").strip()
    if not edition:
        return "instructor" if os.path.isdir(os.path.join(root, "solutions")) else "student"
    if edition not in EDITIONS:
        raise EditionError(f"GPULAB_DOCS_EDITION={edition!r}: the editions are {', '.join(EDITIONS)}")
    if edition == "instructor" and not os.path.isdir(os.path.join(root, "solutions")):
        raise EditionError("the instructor edition includes code from solutions/, which this repository does not "
                           "have (a student release): build the student edition")
    return edition


@event_priority(-100)  # after the offline plugin has added its shim to the polyfills
def on_config(config):
    root = os.path.dirname(os.path.abspath(config["config_file_path"]))
    config.extra["gpulab_edition"] = edition_of(root)
    # The theme loads these in the page's head, before its bundle starts the search worker. The offline
    # plugin's iframe-worker shim comes from unpkg.com: without network the search box stays hidden.
    polyfills = [p for p in config.extra.get("polyfills", []) if not re.match(r"^(https?:)?//", str(p))]
    config.extra["polyfills"] = polyfills + [SEARCH_WORKER_SOURCE, FILE_SEARCH]
    return config


def question_items(lines: list[str]) -> list[tuple[int, int]]:
    """(first line, last non-blank line) of each top-level item of the exam lists, in order."""
    items, inside, current = [], False, None
    for i, line in enumerate(lines):
        if EXAM_START.match(line):
            inside = True
        elif inside and EXAM_END.match(line):
            inside = False
            if current:
                items.append(tuple(current))
            current = None
        elif inside and QUESTION.match(line):
            if current:
                items.append(tuple(current))
            current = [i, i]
        elif inside and current and line.strip():
            current[1] = i
    return items


def read_answers(path: str, where: str) -> list[str]:
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    answers: list[list[str]] = []
    fence = None  # the fence of the code block the line is in: its '#' lines are code, not headings
    for number, line in enumerate(lines, start=1):
        m = ANSWER_HEADING.match(line) if fence is None else None
        opening = FENCE.match(line)
        if opening and fence is None:
            fence = opening[1]
        elif opening and line.strip() == opening[1] and opening[1].startswith(fence):  # a bare fence closes
            fence = None
        if fence is not None or opening:
            if answers:
                answers[-1].append(line)
        elif m:
            if int(m["number"]) != len(answers) + 1:
                raise EditionError(f"{where}:{number}: answer '## {m['number']}' where '## {len(answers) + 1}' comes next")
            answers.append([])
        elif line.startswith("#") and not line.startswith("#!"):
            raise EditionError(f"{where}:{number}: an answer has no headings of its own; only '## N' starts an answer")
        elif answers:
            answers[-1].append(line)
    texts = ["\n".join(a).strip("\n") for a in answers]
    for n, text in enumerate(texts, start=1):
        if not text.strip():
            raise EditionError(f"{where}: answer {n} is empty")
    return texts


def with_answers(markdown: str, answers_path: str, page: str) -> str:
    lines = markdown.split("\n")
    items = question_items(lines)
    where = os.path.relpath(answers_path)
    if not os.path.isfile(answers_path):
        if items:
            raise EditionError(f"{page} has {len(items)} questions and no answers: write them in {where}, "
                               "one '## N' section per question")
        return markdown
    answers = read_answers(answers_path, where)
    if len(answers) != len(items):
        raise EditionError(f"{page} has {len(items)} questions and {where} {len(answers)} answers: "
                           "they pair up in order, one '## N' section per question")
    for (_, last), answer in reversed(list(zip(items, answers))):
        block = ["", '    ??? answer "Answer"', ""]
        block += [("        " + l) if l.strip() else "" for l in answer.split("\n")]
        block.append("")  # the next question starts a paragraph of its own, not the answer's last
        lines[last + 1 : last + 1] = block
    return "\n".join(lines)


# The marker lines around a list of labs that scripts/lab_lists.py writes: inside a table (docs/index.md)
# a comment line would end it, so they never reach Markdown.
LAB_LIST_MARKER = re.compile(r"^<!-- (labs: made by scripts/lab_lists\.py .*|/labs) -->\n", re.M)


def on_page_markdown(markdown, page, config, files):
    markdown = LAB_LIST_MARKER.sub("", markdown)
    if config.extra["gpulab_edition"] != "instructor":
        return markdown
    answers = os.path.join(config["docs_dir"], "answers", page.file.src_path)
    return with_answers(markdown, answers, page.file.src_path)


def search_worker_source(files, config) -> File:
    workers = [f for f in files if SEARCH_WORKER.match(f.src_uri)]
    if len(workers) != 1:
        raise EditionError(f"the Material theme has {len(workers)} search workers matching {SEARCH_WORKER.pattern} "
                           "where site_hook.py expects one: has the theme changed how it searches? "
                           "(search from file:// needs its worker as a string)")
    with open(workers[0].abs_src_path, encoding="utf-8") as f:
        source = f.read()
    return File.generated(config, SEARCH_WORKER_SOURCE,
                          content=f"// {workers[0].src_uri}, for {FILE_SEARCH}\n"
                                  f"var __gpulab_search_worker = {json.dumps(source)};\n")


def on_files(files, config):
    files.append(search_worker_source(files, config))
    for name in KATEX_FILES:
        source = os.path.join(KATEX_DIR, name)
        if not os.path.isfile(source):
            raise EditionError(f"{source} is missing: the site's formulas need KaTeX; install libjs-katex "
                               "(scripts/install-deps.sh docs)")
        files.append(File.generated(config, f"assets/katex/{name}", abs_src_path=source))
    fonts = os.path.join(KATEX_DIR, "fonts")
    for name in sorted(os.listdir(fonts)):
        if name.endswith(".woff2"):
            files.append(File.generated(config, f"assets/katex/fonts/{name}",
                                        abs_src_path=os.path.realpath(os.path.join(fonts, name))))
    return files


def breakable(code: str) -> str:
    return "".join(WORD_BOUNDARY.sub("<wbr>", part) if not part.startswith("&") else part
                   for part in re.split(r"(&[a-z#0-9]+;)", code))


def on_page_content(html, page, config, files):
    def in_table(table):
        return CODE.sub(lambda m: f"<code>{breakable(m[1])}</code>", table[0])

    return TABLE.sub(in_table, html)
