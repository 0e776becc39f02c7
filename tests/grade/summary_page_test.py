#!/usr/bin/python3
"""Tests of scripts/grade/summary.py, the batch summary page (index.html) of `gpulab grade`.

    summary_page_test.py REPO SCRATCH render   the mixed batch, opened in headless Chromium: DOM and screenshot
    summary_page_test.py REPO SCRATCH sizes    one student, 500 students, no students: rows, plots and time

Run by CTest (tests/CMakeLists.txt) with the Python that has Debian's matplotlib (/usr/bin/python3).
"""

from __future__ import annotations

import html.parser
import json
import pathlib
import shutil
import subprocess
import sys
import time
import urllib.parse

REPO, SCRATCH, MODE = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2]), sys.argv[3]
sys.path.insert(0, str(REPO / "tests" / "grade"))
import make_batch  # noqa: E402

failures = []


def check(condition, what):
    if not condition:
        failures.append(what)
    return condition


def need(condition, package):
    if not condition:
        sys.exit(f"FAIL: {package} is missing: install it (scripts/install-deps.sh installs it), "
                 f"e.g. apt-get install {package}")


# ----------------------------------------------------------------------------------------- a small DOM

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


class Node:
    def __init__(self, tag, attrs, parent):
        self.tag, self.attrs, self.parent, self.children, self.texts = tag, dict(attrs), parent, [], []

    def text(self) -> str:
        return "".join(t if isinstance(t, str) else t.text() for t in self.texts)

    def all(self, tag=None, cls=None, **attrs):
        for child in self.children:
            classes = (child.attrs.get("class") or "").split()
            if (tag is None or child.tag == tag) and (cls is None or cls in classes) and \
                    all(child.attrs.get(k.replace("_", "-")) == v for k, v in attrs.items()):
                yield child
            yield from child.all(tag, cls, **attrs)

    def one(self, tag=None, cls=None, **attrs):
        return next(self.all(tag, cls, **attrs), None)


class TreeBuilder(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.root = self.node = Node("#document", [], None)

    def handle_starttag(self, tag, attrs):
        node = Node(tag, attrs, self.node)
        self.node.children.append(node)
        self.node.texts.append(node)
        if tag not in VOID:
            self.node = node

    def handle_startendtag(self, tag, attrs):
        node = Node(tag, attrs, self.node)
        self.node.children.append(node)
        self.node.texts.append(node)

    def handle_endtag(self, tag):
        node = self.node
        while node.parent is not None and node.tag != tag:
            node = node.parent
        if node.parent is not None:
            self.node = node.parent

    def handle_data(self, data):
        self.node.texts.append(data)


def parse(markup: str) -> Node:
    builder = TreeBuilder()
    builder.feed(markup)
    builder.close()
    return builder.root


# ----------------------------------------------------------------------------------------- helpers


def summarize(out: pathlib.Path) -> float:
    start = time.monotonic()
    run = subprocess.run([sys.executable, str(REPO / "scripts" / "grade" / "summary.py"), str(out)],
                         capture_output=True, text=True, timeout=300)
    seconds = time.monotonic() - start
    if run.returncode != 0:
        sys.exit(f"FAIL: summary.py {out} exited with {run.returncode}:\n{run.stdout}{run.stderr}")
    return seconds


def chromium(*args, timeout=60) -> str:
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    # A profile of our own: other Chromium runs (and other tests) must not share its lock.
    command = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--hide-scrollbars",
               f"--user-data-dir={SCRATCH / 'chromium-profile'}", *args]
    try:
        run = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        sys.exit(f"FAIL: Chromium did not finish in {timeout} s: does the page run a script (an alert waits forever)?\n"
                 f"  {' '.join(command)}")
    if run.returncode != 0:
        sys.exit(f"FAIL: {' '.join(command)} exited with {run.returncode}:\n{run.stderr[-3000:]}")
    return run.stdout


def student_rows(dom: Node):
    table = dom.one("table", id="student-table")
    return list(table.one("tbody").all("tr", cls="student")) if check(table is not None, "no student table") else []


def common_checks(dom: Node, students: int, label: str):
    for section in ("overview", "pass-rates", "scores", "performance", "students"):
        check(dom.one("section", id=section) is not None, f"{label}: no section #{section}")
    rows = student_rows(dom)
    check(len(rows) == students, f"{label}: {len(rows)} student rows, expected {students}")
    names = [row.one(cls="name").text() for row in rows]
    check(names == sorted(names, key=lambda n: (n.casefold(), n)), f"{label}: students not sorted by name: {names[:5]}")
    for plot in ("pass-rates", "total-scores", "lab-scores", "performance"):
        svg = dom.one("svg", id=f"plot-{plot}")
        check(svg is not None and sum(1 for _ in svg.all("path")) > 5, f"{label}: no drawn <svg> plot #plot-{plot}")
    check(dom.one("script") is None, f"{label}: the page has a <script> element")
    return rows


# ----------------------------------------------------------------------------------------- the tests


def need_browser_and_plots():
    need(shutil.which("chromium") or shutil.which("chromium-browser"), "chromium")
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        need(False, "python3-matplotlib")
    try:
        import PIL  # noqa: F401
    except ImportError:
        need(False, "python3-pil")


def check_pass_rates(dom: Node, expected: dict):
    for key, (passed, total) in expected["pass"].items():
        lab, task = key.split("/")
        row = dom.one("tr", data_lab=lab, data_task=task)
        if check(row is not None, f"no pass-rate row for {key}"):
            shown = row.one("td", cls="passed").text().strip()
            check(shown == f"{passed}/{total}", f"{key}: pass count {shown!r}, expected {passed}/{total}")
            rate = f"{round(100 * passed / total)}%"
            check(rate in row.one("td", cls="rate").text(), f"{key}: pass rate {row.one('td', cls='rate').text()!r}, expected {rate}")
    # What went wrong, in the grader's words (result.json's status_label).
    row = dom.one("tr", data_lab="02-transpose", data_task="optimized")
    words = list(row.all("td"))[-1].text() if row is not None else ""
    for phrase in ("1 too slow", "1 kernel fault", "1 no result"):
        check(phrase in words, f"02-transpose/optimized: {phrase!r} not among what went wrong ({words!r})")


def check_student_rows(dom: Node, out: pathlib.Path, rows, expected: dict):
    by_name = {row.one(cls="name").text(): row for row in rows}
    for name, score in expected["score"].items():
        row = by_name.get(name)
        if check(row is not None, f"no row for student {name!r} (the names shown: {list(by_name)})"):
            shown = row.one("td", cls="score").text().strip()
            check(shown == f"{score:g}/{expected['max_score']:g}", f"{name}: score {shown!r}, expected {score:g}/20")
    # Student-controlled text is text: no element was made from it, and it reads as written.
    check(dom.one("img") is None, "a student's message became an <img> element")
    script_row = by_name.get(make_batch.SCRIPT_NAME)
    if script_row is not None:
        issues = script_row.one("td", cls="issues")
        check("<img src=x onerror=alert(1)>" in issues.text() and "<b>extra</b>" in issues.text(),
              "the messages and notes with HTML in them are not shown as text")
        check(issues.one("b") is None and issues.one("i") is None, "a student's note became <b> or <i> elements")
        link = script_row.one("a")
        href = link.attrs.get("href", "") if link is not None else ""
        folder = make_batch.folder_name(make_batch.SCRIPT_NAME)
        check(urllib.parse.unquote(href) == f"students/{folder}/feedback.html" and "<" not in href and '"' not in href,
              f"the feedback link of {make_batch.SCRIPT_NAME!r} is {href!r}")
        check((out / urllib.parse.unquote(href)).is_file(), f"the feedback link {href!r} points to no file")
    dave = by_name.get("dave")
    if dave is not None:
        check("escapes the submission folder" in dave.one("td", cls="issues").text(), "the refused submission's reason is not shown")
        check(len(list(dave.all("td", cls="missing"))) == 3, "the refused submission's labs are not marked as missing")
    bob = by_name.get("bob")
    if bob is not None:
        check("(hidden case) 12 of 4096 elements" in bob.one("td", cls="issues").text(),
              "a failure in a hidden case is not marked so in the student's issues")
    erin = by_name.get("erin")
    if erin is not None:
        check(len(list(erin.all("td", cls="missing"))) == 1, "erin's missing lab is not marked as missing")


def check_performance_and_overview(dom: Node):
    performance = dom.one("svg", id="plot-performance")
    words = performance.text() if performance is not None else ""
    for label in ("needs 60%", "reference 93%", "needs 1.60×", "reference 2.33×", "reference 5.29×",
                  "fraction of the device's copy bandwidth", "multiple of the speed of the harness's naive kernel"):
        check(label in words, f"the performance plot has no label {label!r}")
    overview = dom.one("section", id="overview").text()
    for fact in ("0.1.0+3f2a9c1d4e5b", "NVIDIA H100 80GB HBM3", "bubblewrap", "240"):
        check(fact in overview, f"the overview does not show {fact!r}")


def check_screenshot(page: pathlib.Path):
    """A page was drawn, with the pass colour and the fail colour in it."""
    from PIL import Image
    shot = SCRATCH / "mixed.png"
    shot.unlink(missing_ok=True)
    chromium(f"--screenshot={shot}", "--window-size=1280,4400", page.as_uri())
    if not check(shot.is_file(), "Chromium wrote no screenshot"):
        return
    image = Image.open(shot).convert("RGB")
    small = image.resize((image.width // 4, image.height // 4))
    colours = small.getcolors(maxcolors=1 << 20) or []
    check(len(colours) > 50, f"the screenshot has {len(colours)} colours: blank or nearly so")
    background = max(colours)[1]
    drawn = sum(count for count, colour in colours if colour != background) / (small.width * small.height)
    check(drawn > 0.08, f"only {drawn:.0%} of the screenshot differs from the background")
    near = lambda target: sum(count for count, c in colours if max(abs(a - b) for a, b in zip(c, target)) < 12)
    check(near((0x00, 0x69, 0x5C)) > 200, "the screenshot shows no pass colour")
    check(near((0xF4, 0xA2, 0x59)) > 200, "the screenshot shows no fail colour")
    print(f"screenshot {shot}: {image.width}×{image.height}, {len(colours)} colours, {drawn:.0%} drawn")


def render():
    """The mixed batch: what Chromium sees, and what its screenshot shows."""
    need_browser_and_plots()
    out = SCRATCH / "mixed"
    shutil.rmtree(out, ignore_errors=True)
    make_batch.mixed(out)
    summarize(out)
    page = out / "index.html"
    # Before a browser sees it: an unescaped name would run as a script (and its alert would hang Chromium).
    if "<script" in page.read_text(encoding="utf-8").lower():
        sys.exit(f"FAIL: {page} has a <script> tag: a student's name or message was not escaped")
    dom = parse(chromium("--dump-dom", page.as_uri()))
    expected = make_batch.MIXED_EXPECTED
    rows = common_checks(dom, expected["students"], "mixed batch")
    check_pass_rates(dom, expected)
    check_student_rows(dom, out, rows, expected)
    check_performance_and_overview(dom)
    check_screenshot(page)


def relabel(out: pathlib.Path):
    """Gives every task of every record other words for its status and metric, as another grader might."""
    for record_file in (out / "students").glob("*/result.json"):
        record = json.loads(record_file.read_text(encoding="utf-8"))
        for lab in record.get("labs") or []:
            for t in lab.get("tasks") or []:
                t["status_label"] = f"status «{t['status']}»"
                if t.get("metric"):
                    t["metric_label"] = f"metric «{t['metric']}»"
        record_file.write_text(json.dumps(record), encoding="utf-8")


def check_labels_from_records(out: pathlib.Path):
    """The page's words for statuses and metrics are the records' own: other words in, other words out."""
    relabel(out)
    summarize(out)
    shown = parse((out / "index.html").read_text(encoding="utf-8")).text()
    for words in ("status «", "metric «"):
        check(words in shown, f"the page does not show the records' own label {words!r}…")


def check_similarity_link(out: pathlib.Path):
    """The page links the similarity report when `gpulab similarity` wrote one into the same folder."""
    summarize(out)
    nav = parse((out / "index.html").read_text(encoding="utf-8")).one("nav")
    check(not list(nav.all("a", href="similarity/index.html")), "the page links a similarity report that does not exist")
    (out / "similarity").mkdir(exist_ok=True)
    (out / "similarity" / "index.html").write_text("<!doctype html><title>pairs</title>", encoding="utf-8")
    summarize(out)
    nav = parse((out / "index.html").read_text(encoding="utf-8")).one("nav")
    check(len(list(nav.all("a", href="similarity/index.html"))) == 1, "the page does not link OUT/similarity/index.html")


def sizes():
    """One student, 500 students and none: the rows and the plots (the time it took is printed, not judged)."""
    for count in (1, 500):
        out = SCRATCH / f"students-{count}"
        shutil.rmtree(out, ignore_errors=True)
        make_batch.random_students(out, count, seed=count, calibration=count != 1)
        seconds = summarize(out)
        markup = (out / "index.html").read_text(encoding="utf-8")
        dom = parse(markup)
        common_checks(dom, count, f"{count} student(s)")
        rows = list(dom.one("table", id="pass-rate-table").one("tbody").all("tr"))
        check(len(rows) == 6, f"{count} student(s): {len(rows)} pass-rate rows, expected 6")
        check(all(row.one("td", cls="passed").text().endswith(f"/{count}") for row in rows),
              f"{count} student(s): pass counts are not out of {count}")
        if count == 1:
            check_similarity_link(out)
            check_labels_from_records(out)
            check("No calibration.json" in dom.one("section", id="performance").text(),
                  "without calibration.json the page does not say how to get the reference ratios")
        print(f"{count} student(s): {seconds:.2f} s, {len(markup) / 1e6:.2f} MB")

    empty = SCRATCH / "students-0"
    shutil.rmtree(empty, ignore_errors=True)
    make_batch.write_batch(empty, [])
    (empty / "students" / "broken").mkdir(parents=True)
    (empty / "students" / "broken" / "result.json").write_text("{ not json")
    summarize(empty)
    dom = parse((empty / "index.html").read_text(encoding="utf-8"))
    check("result.json cannot be read" in dom.one("section", id="overview").text(),
          "an unreadable result.json is not reported on the page")
    check(len(student_rows(dom)) == 1, "the student with an unreadable result.json has no row")


SCRATCH.mkdir(parents=True, exist_ok=True)
{"render": render, "sizes": sizes}[MODE]()
if failures:
    sys.exit("FAIL:\n  " + "\n  ".join(failures))
print("ok")
