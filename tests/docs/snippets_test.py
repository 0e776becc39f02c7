#!/usr/bin/env python3
"""Tests of the docs' code-listing hook (scripts/docs/snippets_hook.py) through real `mkdocs build --strict` runs.

    snippets_test.py MKDOCS REPO SCRATCH

Each case is a tiny site in SCRATCH that uses the project's hook: a listing of an existing section
builds and holds exactly that section's code; a missing section, a missing file, a section without
its end, an empty section and a `before=` line that is not there each stop the build with a message that names the problem.
In the student edition a solution listing's code block becomes a note (an admonition, no code), also in a
content tab, and a code block that mixes a solution listing with other lines stops the build.
"""

import pathlib
import shutil
import subprocess
import sys

mkdocs, repo, scratch = sys.argv[1], pathlib.Path(sys.argv[2]), pathlib.Path(sys.argv[3])
if not pathlib.Path(mkdocs).is_file():
    print(f"skipped: the docs site generator is not installed at {mkdocs} (make test installs it: scripts/docs/venv.sh)")
    sys.exit(77)
hook = repo / "scripts" / "docs" / "snippets_hook.py"

SOURCE = """\
// a file in the course layout
// --8<-- [start:kernel]
__global__ void k(int* x) {
  // --8<-- [start:inner]
  x[threadIdx.x] = 1;
  // --8<-- [end:inner]
}
// --8<-- [end:kernel]
int outside_every_section;
// --8<-- [start:unfinished]
int never_closed;
// --8<-- [start:empty]
// --8<-- [end:empty]
"""


def build(name: str, page: str, config: str = "") -> tuple[int, str, pathlib.Path]:
    site = scratch / name
    shutil.rmtree(site, ignore_errors=True)
    (site / "docs").mkdir(parents=True)
    (site / "solutions").mkdir()
    (site / "solutions" / "lab.cu").write_text(SOURCE)
    (site / "labs").mkdir()
    (site / "labs" / "visible.cu").write_text("int visible_to_students;\n")
    (site / "mkdocs.yml").write_text(f"site_name: t\nhooks:\n  - {hook}\nmarkdown_extensions:\n"
                                     "  - pymdownx.superfences\n" + config)
    (site / "docs" / "index.md").write_text(page)
    run = subprocess.run([mkdocs, "build", "--strict", "--quiet"], cwd=site, capture_output=True, text=True)
    return run.returncode, run.stdout + run.stderr, site / "site"


failures = []


def expect(condition: bool, what: str, output: str = ""):
    print(("ok    " if condition else "FAIL  ") + what)
    if not condition:
        failures.append(what)
        if output:
            print("      " + output.replace("\n", "\n      "))


rc, out, site = build("good", '# Page\n\n```cuda\n--8<-- "solutions/lab.cu:kernel"\n```\n\n=== "tab"\n\n    ```cuda\n    --8<-- "solutions/lab.cu:inner"\n    ```\n')
html = (site / "index.html").read_text() if (site / "index.html").is_file() else ""
expect(rc == 0, "an existing section builds", out)
expect("__global__" in html and "threadIdx" in html, "the section's code is in the page", out)
expect("outside_every_section" not in html, "only the section is included, not the rest of the file")
expect("8&lt;" not in html and "[start:inner]" not in html, "marker lines of nested sections are dropped")

rc, out, site = build("before", '```cuda\n--8<-- "solutions/lab.cu:before=int outside"\n```\n')
html = (site / "index.html").read_text() if (site / "index.html").is_file() else ""
expect(rc == 0 and "threadIdx" in html and "outside_every_section" not in html,
       "a listing of the lines before a given one holds exactly those", out)

for name, spec, message in (
    ("missing-section", "solutions/lab.cu:naive", "no section 'naive'"),
    ("missing-file", "solutions/none.cu:kernel", "no such file"),
    ("unfinished-section", "solutions/lab.cu:unfinished", "has no '--8<-- [end:unfinished]'"),
    ("empty-section", "solutions/lab.cu:empty", "the included text is empty"),
    ("outside-the-repository", "../outside.cu", "outside the repository"),
    ("missing-line", "solutions/lab.cu:before=// no such line", "no line starts with '// no such line'"),
):
    rc, out, _ = build(name, f'```cuda\n--8<-- "{spec}"\n```\n')
    expect(rc != 0 and message in out, f"{name.replace('-', ' ')} stops the build ({message})", out)

STUDENT = "  - admonition\n  - pymdownx.tabbed\nextra:\n  gpulab_edition: student\n"
rc, out, site = build("student", '# Page\n\n```cuda title="k"\n--8<-- "solutions/lab.cu:kernel"\n```\n\n'
                      '=== "tab"\n\n    ```cuda\n    --8<-- "solutions/lab.cu:inner"\n    ```\n\n'
                      '```cuda\n--8<-- "labs/visible.cu"\n```\n', STUDENT)
html = (site / "index.html").read_text() if (site / "index.html").is_file() else ""
expect(rc == 0, "the student edition builds", out)
expect(html.count('<div class="admonition note">') == 2 and "instructor edition" in html,
       "in the student edition each solution listing, in a tab or not, is a note (an admonition)", html[-2000:])
expect("threadIdx" not in html and "!!!" not in html and html.count("<code") == 1 and "visible_to_students" in html,
       "the student edition shows neither solution code nor the note's markup as code, and still lists labs/",
       html[-2000:])
rc, out, _ = build("student-mixed", '```cuda\n--8<-- "solutions/lab.cu:inner"\nint more;\n```\n', STUDENT)
expect(rc != 0 and "a listing from solutions/ and other lines" in out,
       "a student-edition code block that mixes a solution listing with other lines stops the build", out)

sys.exit(1 if failures else 0)
