#!/usr/bin/env python3
"""The docs site's two editions, built with `mkdocs build --strict` (no broken link, every listing found).

    site_test.py MKDOCS REPO SCRATCH

- The student edition builds in every repository (it is what `make docs` builds in the student
  release), with no answer and no line of solution code: every line of a file under solutions/
  that no student-visible file (labs/, grader/) also has is looked for in the text of every page.
- In the instructor repository the instructor edition builds too, with an answer under every
  question of every chapter, and the student edition is also built from a copy of the repository
  laid out as the student release is (no solutions/, no docs/answers/), as `make docs` does there.
- In the student edition a listing of solution code renders as a note (an admonition saying the code is
  in the instructor edition), not as a code box holding the note's markup.
- No page of either edition loads anything from the network: no script, stylesheet, icon, frame,
  image or other resource with an http(s) or protocol-relative address, in the HTML or in the site's CSS
  (the site must work offline from file://; links a reader follows are fine).
Exit 77 (skipped) when the site generator is not installed (scripts/docs/venv.sh installs it).
"""

import html
import html.parser
import os
import pathlib
import re
import shutil
import subprocess
import sys

mkdocs, repo, scratch = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2]), pathlib.Path(sys.argv[3])
failures: list[str] = []
SOURCE_SUFFIXES = {".cu", ".cl", ".cpp", ".hpp", ".h", ".cuh"}


def check(condition: bool, message: str) -> bool:
    if not condition:
        failures.append(message)
    return condition


def build(edition: str, root: pathlib.Path, site: pathlib.Path) -> bool:
    shutil.rmtree(site, ignore_errors=True)
    env = dict(os.environ, GPULAB_DOCS_EDITION=edition, NO_MKDOCS_2_WARNING="1")
    run = subprocess.run([str(mkdocs), "build", "--strict", "--quiet", "--config-file", str(root / "mkdocs.yml"),
                          "--site-dir", str(site)], capture_output=True, text=True, env=env)
    return check(run.returncode == 0, f"the {edition} edition does not build strictly from {root}:\n"
                 f"{run.stdout[-3000:]}{run.stderr[-3000:]}")


def page_texts(site: pathlib.Path) -> dict[str, str]:
    """Each page's text as a reader sees it (tags removed, entities decoded), by path."""
    texts = {}
    for page in site.rglob("*.html"):
        text = re.sub(r"<[^>]+>", "", page.read_text(encoding="utf-8"))
        texts[str(page.relative_to(site))] = html.unescape(text)
    return texts


REMOTE = re.compile(r"^\s*(https?:)?//", re.I)
CSS_REMOTE = re.compile(r"(url\(\s*['\"]?|@import\s+['\"])\s*((https?:)?//[^'\")\s]*)", re.I)
NOT_FETCHED_LINKS = {"canonical", "alternate", "author", "license", "help", "next", "prev", "search"}


class RemoteResources(html.parser.HTMLParser):
    """The addresses a browser would fetch from the network while showing a page (not links a reader follows)."""

    def __init__(self):
        super().__init__()
        self.found: list[str] = []

    def handle_starttag(self, tag, attrs):
        a = {k: v or "" for k, v in attrs}
        loaded = []
        if tag == "link" and not set(a.get("rel", "").lower().split()) <= NOT_FETCHED_LINKS:
            loaded.append(a.get("href", ""))
        if tag in ("script", "iframe", "img", "source", "audio", "video", "embed", "track", "input", "frame"):
            loaded.append(a.get("src", ""))
        if tag in ("img", "source"):
            loaded += [part.split()[0] for part in a.get("srcset", "").split(",") if part.split()]
        if tag == "object":
            loaded.append(a.get("data", ""))
        if tag in ("image", "use", "feimage"):  # SVG
            loaded += [a.get("href", ""), a.get("xlink:href", "")]
        if tag == "video":
            loaded.append(a.get("poster", ""))
        loaded += [m[2] for m in CSS_REMOTE.finditer(a.get("style", ""))]
        self.found += [f"<{tag}> {url}" for url in loaded if REMOTE.match(url)]

    def handle_data(self, data):  # a <style> block; a script's text is not fetched by the parser
        self.found += [f"in a style: {m[2]}" for m in CSS_REMOTE.finditer(data)]


def check_offline(site: pathlib.Path, label: str):
    pages = sorted(site.rglob("*.html"))
    check(len(pages) > 20, f"{label}: only {len(pages)} pages: the offline check would see nothing")
    for page in pages:
        parser = RemoteResources()
        parser.feed(page.read_text(encoding="utf-8"))
        for what in parser.found[:3]:
            failures.append(f"{label}: {page.relative_to(site)} loads {what} from the network (the site must work "
                            "offline from file://)")
    for sheet in sorted(site.rglob("*.css")):
        for m in list(CSS_REMOTE.finditer(sheet.read_text(encoding="utf-8", errors="replace")))[:3]:
            failures.append(f"{label}: {sheet.relative_to(site)} loads {m[2]} from the network")


CODE_ELEMENT = re.compile(r"<code[^>]*>(.*?)</code>", re.S)
SOLUTION_NOTE = re.compile(r'<div class="admonition note">\s*<p class="admonition-title">Reference solution</p>'
                           r"\s*<p>[^<]*code is in the instructor edition[^<]*</p>\s*</div>")


def check_solution_notes(site: pathlib.Path, label: str):
    """Each hidden listing is an admonition element, and no code element holds admonition markup."""
    notes = 0
    for page in sorted(site.rglob("*.html")):
        raw = page.read_text(encoding="utf-8")
        notes += len(SOLUTION_NOTE.findall(raw))
        for code in CODE_ELEMENT.findall(raw):
            text = html.unescape(re.sub(r"<[^>]+>", "", code))
            if "!!!" in text or "Reference solution" in text:
                failures.append(f"{label}: {page.relative_to(site)} shows the solution note as code: "
                                f"{text.strip()[:80]!r} (snippets_hook.py must replace the whole code block)")
                break
    check(notes >= 20, f"{label}: {notes} listings render as the note 'Reference solution' (an admonition saying the "
          "code is in the instructor edition); the chapters have dozens of solution listings (snippets_hook.py)")


def source_lines(folder: pathlib.Path) -> set[str]:
    lines = set()
    for f in folder.rglob("*"):
        if f.is_file() and f.suffix in SOURCE_SUFFIXES:
            lines.update(l.strip() for l in f.read_text(encoding="utf-8", errors="replace").splitlines())
    return lines


def solution_only_lines() -> dict[str, str]:
    """Lines of solution code (30 characters or more) that no student-visible file has: line -> its file.
    The chapters' own text is student-visible too (a question may quote a line the solution also has)."""
    visible = source_lines(repo / "labs") | source_lines(repo / "grader")
    chapters = "\n".join(p.read_text(encoding="utf-8") for p in (repo / "docs").rglob("*.md")
                         if "answers" not in p.relative_to(repo / "docs").parts)
    found = {}
    for f in sorted((repo / "solutions").rglob("*")):
        if f.is_file() and f.suffix in SOURCE_SUFFIXES:
            for line in f.read_text(encoding="utf-8", errors="replace").splitlines():
                line = line.strip()
                if len(line) >= 30 and line not in visible and "--8<--" not in line and line not in chapters:
                    found.setdefault(line, str(f.relative_to(repo)))
    return found


def check_student_site(site: pathlib.Path, label: str):
    texts = page_texts(site)
    raw = "".join(p.read_text(encoding="utf-8") for p in site.rglob("*.html"))
    check('class="answer"' not in raw, f"{label}: the student edition shows answers")
    check_solution_notes(site, label)
    check_offline(site, label)
    if (repo / "solutions").is_dir():
        lines = solution_only_lines()
        check(len(lines) > 100, f"only {len(lines)} solution-only lines found: the test would not see a leak")
        leaks = [(page, line, lines[line]) for page, text in texts.items() for line in lines if line in text]
        for page, line, source in leaks[:5]:
            failures.append(f"{label}: {page} shows a line of {source}: {line!r}")


def check_instructor_site(site: pathlib.Path):
    sys.path.insert(0, str(repo / "scripts" / "docs"))
    from site_hook import question_items  # the hook's own reading of a chapter's questions

    total = 0
    for chapter in sorted((repo / "docs").rglob("*.md")):
        relative = chapter.relative_to(repo / "docs")
        if relative.parts[0] in ("answers", "measured"):
            continue
        questions = len(question_items(chapter.read_text(encoding="utf-8").split("\n")))
        page = site / relative.with_suffix(".html")
        answers = page.read_text(encoding="utf-8").count('<details class="answer">') if page.is_file() else 0
        check(questions == answers, f"instructor edition, {page.relative_to(site)}: {questions} questions, "
              f"{answers} answers")
        total += questions
    check(total >= 40, f"the chapters have only {total} questions: the exam lists were not found")
    labs = site / "labs" / "transpose.html"
    check(labs.is_file() and "__syncthreads" in labs.read_text(encoding="utf-8"),
          "instructor edition: the transpose chapter shows no solution code")


def student_release_copy() -> pathlib.Path:
    """The repository as the student release has it, for what the site needs: no solutions, no answers."""
    copy = scratch / "student-repo"
    shutil.rmtree(copy, ignore_errors=True)
    copy.mkdir(parents=True)
    for name in ("mkdocs.yml", "docs", "labs", "grader", "scripts"):
        source = repo / name
        if source.is_dir():
            shutil.copytree(source, copy / name, ignore=shutil.ignore_patterns("answers", "__pycache__"))
        else:
            shutil.copy2(source, copy / name)
    return copy


def main():
    if not mkdocs.is_file():
        print(f"skipped: the docs site generator is not installed at {mkdocs} (make test and make docs install it "
              "with scripts/docs/venv.sh)")
        sys.exit(77)
    venv_python = mkdocs.parent / "python"
    if pathlib.Path(sys.prefix) != venv_python.parent.parent:  # the hook's module needs the generator's Python
        os.execv(venv_python, [str(venv_python), __file__, *sys.argv[1:]])
    scratch.mkdir(parents=True, exist_ok=True)
    instructor_repository = (repo / "solutions").is_dir()
    if build("student", repo, scratch / "student"):
        check_student_site(scratch / "student", "student edition")
    if instructor_repository:
        if build("instructor", repo, scratch / "instructor"):
            check_instructor_site(scratch / "instructor")
            check_offline(scratch / "instructor", "instructor edition")
        copy = student_release_copy()
        if build("student", copy, scratch / "release-student"):
            check_student_site(scratch / "release-student", "student edition in the release layout")
    for f in failures:
        print("FAIL:", f)
    if failures:
        sys.exit(1)
    print("ok: both editions build strictly and load nothing from the network; the student edition has no answers "
          "and no solution code, and says so in notes")


main()
