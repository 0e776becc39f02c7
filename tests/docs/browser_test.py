#!/usr/bin/env python3
"""The docs site in a real browser (headless Chromium, driven by Selenium), opened from file://.

    browser_test.py MKDOCS REPO SCRATCH

Builds the site (the instructor edition where solutions/ exists, else the student edition) and checks:
- search works from the file system: typing a query into the search box lists matching pages;
- formulas are typeset by KaTeX (the copy served with the site), without errors;
- at a 1280 px wide window no table and no code listing of the pages it looks at is wider than its
  column (the element's scrollWidth against its clientWidth, measured in the page); a screenshot of
  each page is left in SCRATCH/screenshots for a look.
Exit 77 (skipped) when the site generator, Chromium, chromedriver or Selenium is missing.
"""

import os
import pathlib
import shutil
import subprocess
import sys
import time

mkdocs, repo, scratch = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2]), pathlib.Path(sys.argv[3])
PAGES = ["index.html", "why-gpus.html", "programming-model.html", "memory.html", "theory.html", "performance.html",
         "profiling.html", "host-device.html", "other-platforms.html", "glossary.html", "instructors.html",
         "labs/hello.html", "labs/matmul.html", "labs/transpose.html", "labs/bitonic.html", "labs/filter.html",
         "labs/reduction.html", "labs/scan.html", "labs/histogram.html"]
WIDTH = 1280
failures: list[str] = []

# Every table and listing of the article whose content is wider than the box it is shown in.
OVERFLOWS = """
const wide = [];
for (const el of document.querySelectorAll('article .md-typeset__scrollwrap, article pre > code')) {
  if (el.closest('details:not([open])')) continue;   // a collapsed answer is not laid out
  if (el.scrollWidth > el.clientWidth + 1)
    wide.push([el.tagName.toLowerCase(), el.scrollWidth, el.clientWidth, el.innerText.trim().slice(0, 70)]);
}
return wide;
"""


def skip(why: str):
    print(f"skipped: {why}")
    sys.exit(77)


def check(condition: bool, message: str) -> bool:
    if not condition:
        failures.append(message)
    return condition


def build_site() -> pathlib.Path:
    site = scratch / "site"
    shutil.rmtree(site, ignore_errors=True)
    edition = "instructor" if (repo / "solutions").is_dir() else "student"
    env = dict(os.environ, GPULAB_DOCS_EDITION=edition, NO_MKDOCS_2_WARNING="1")
    run = subprocess.run([str(mkdocs), "build", "--strict", "--quiet", "--config-file", str(repo / "mkdocs.yml"),
                          "--site-dir", str(site)], capture_output=True, text=True, env=env)
    if run.returncode != 0:
        sys.exit(f"FAIL: the site does not build:\n{run.stdout[-3000:]}{run.stderr[-3000:]}")
    return site


def browser():
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        skip("Selenium is not installed (python3-selenium; scripts/install-deps.sh test installs it)")
    binary = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    if not binary or not driver:
        skip("Chromium or its driver is not installed (chromium, chromium-driver; scripts/install-deps.sh test)")
    options = webdriver.ChromeOptions()
    options.binary_location = binary
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--allow-file-access-from-files",
                f"--window-size={WIDTH},1000", f"--user-data-dir={scratch / 'chromium-profile'}"):
        options.add_argument(arg)
    return webdriver.Chrome(service=Service(driver), options=options)


def wait_for(condition, seconds: float = 20):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.2)
    return condition()


def check_search(b, site: pathlib.Path):
    from selenium.webdriver.common.by import By

    b.get((site / "index.html").as_uri())
    box = b.find_element(By.CSS_SELECTOR, "input.md-search__input")  # in the header at this width
    box.click()
    box.send_keys("bank conflicts")
    items = wait_for(lambda: b.find_elements(By.CSS_SELECTOR, ".md-search-result__item"))
    if check(bool(items), "search from file:// lists no result for 'bank conflicts' (is the offline plugin on?)"):
        text = " ".join(i.text for i in items[:5]).lower()
        check("bank" in text, f"search results for 'bank conflicts' do not mention banks: {text[:200]!r}")


def check_formulas(b, site: pathlib.Path):
    from selenium.webdriver.common.by import By

    b.get((site / "performance.html").as_uri())
    typeset = wait_for(lambda: b.find_elements(By.CSS_SELECTOR, ".arithmatex .katex"), 10)
    check(bool(typeset), "performance.html: no formula was typeset by KaTeX (assets/katex, katex-init.js)")
    errors = b.find_elements(By.CSS_SELECTOR, ".katex-error")
    check(not errors, f"performance.html: KaTeX could not typeset {[e.text[:60] for e in errors[:3]]}")


def check_overflow(b, site: pathlib.Path):
    shots = scratch / "screenshots"
    shots.mkdir(parents=True, exist_ok=True)
    for page in PAGES:
        if not (site / page).is_file():
            failures.append(f"{page} is not in the site")
            continue
        b.get((site / page).as_uri())
        for tag, scroll, client, text in b.execute_script(OVERFLOWS):
            failures.append(f"{page}: a {'table' if tag == 'div' else 'listing'} is {scroll} px wide in a {client} px "
                            f"column at a {WIDTH} px window: {text!r}")
        height = b.execute_script("return document.body.scrollHeight")
        b.set_window_size(WIDTH, min(max(height, 800), 16000))
        b.save_screenshot(str(shots / (page.replace("/", "-").replace(".html", ".png"))))
        b.set_window_size(WIDTH, 1000)


def main():
    if not mkdocs.is_file():
        skip(f"the docs site generator is not installed at {mkdocs} (make test and make docs install it with "
             "scripts/docs/venv.sh)")
    scratch.mkdir(parents=True, exist_ok=True)
    site = build_site()
    b = browser()
    try:
        check_search(b, site)
        check_formulas(b, site)
        check_overflow(b, site)
    finally:
        b.quit()
    for f in failures:
        print("FAIL:", f)
    if failures:
        sys.exit(1)
    print(f"ok: search from file:// finds pages, formulas are typeset, and {len(PAGES)} pages fit a {WIDTH} px window")


main()
