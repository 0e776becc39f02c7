#!/usr/bin/env python3
"""The docs site in a real browser (headless Chromium, driven by Selenium), opened from file://.

    browser_test.py MKDOCS REPO SCRATCH

Chromium is started as a student's browser is: without flags that widen what a file:// page may do
(no --allow-file-access-from-files), and without network. The test runs itself in a network namespace
of its own (`unshare -rn`, only the loopback up, which Selenium needs); where namespaces are not
allowed, Chromium resolves no host name and its proxy is a port that refuses (--host-resolver-rules,
--proxy-server). Either way every request the pages make is logged, and an http(s) one fails the test.

Builds both editions of the site (the student one only in the student repository) and checks, in each:
- search works from the file system: the search box is shown, typing a query lists matching pages and
  the first result opens the page that explains it;
- formulas are typeset by KaTeX (the copy served with the site), without errors;
- no page it opens asks the network for anything.
And in the instructor edition (the student one in the student repository):
- at a 1280 px wide window no table and no code listing of the pages it looks at is wider than its
  column (the element's scrollWidth against its clientWidth, measured in the page); a screenshot of
  each page is left in SCRATCH/screenshots for a look.
Exit 77 (skipped) when the site generator, Chromium, chromedriver or Selenium is missing.
"""

import json
import os
import pathlib
import shutil
import socket
import subprocess
import sys
import time

mkdocs, repo, scratch = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2]), pathlib.Path(sys.argv[3])
sys.path.insert(0, str(repo / "tests" / "support"))
from chromium import headless_chromium  # noqa: E402
PAGES = ["index.html", "why-gpus.html", "programming-model.html", "memory.html", "theory.html", "performance.html",
         "profiling.html", "host-device.html", "other-platforms.html", "glossary.html", "instructors.html",
         "labs/hello.html", "labs/matmul.html", "labs/transpose.html", "labs/bitonic.html", "labs/filter.html",
         "labs/reduction.html", "labs/scan.html", "labs/histogram.html"]
WIDTH = 1280
OFFLINE = "GPULAB_BROWSER_TEST_NETWORK_NAMESPACE"  # set in the namespace the test re-runs itself in
# A query, and the page (and the title of the section) its first result must be.
QUERY, ANSWER_PAGE, ANSWER_SECTION = "bank conflicts", "memory.html", "Shared memory and bank conflicts"
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


def without_network():
    """Re-runs this test in a network namespace of its own, with only the loopback up; returns how the browser
    is kept off the network (the Chromium flags of the fallback where namespaces are not allowed)."""
    if os.environ.get(OFFLINE):
        return "a network namespace with only the loopback (unshare -rn)", []
    unshare, ip = shutil.which("unshare"), shutil.which("ip") or "/usr/sbin/ip"
    if unshare and os.path.exists(ip):
        probe = subprocess.run([unshare, "-rn", ip, "link", "set", "lo", "up"], capture_output=True)
        if probe.returncode == 0:
            env = dict(os.environ, **{OFFLINE: "1"})
            command = f'"{ip}" link set lo up && exec "$0" "$@"'
            sys.stdout.flush()
            os.execve(unshare, [unshare, "-rn", "sh", "-c", command, sys.executable, __file__, *sys.argv[1:]], env)
    # A port that is bound and not listening refuses every connection: the proxy of every request.
    refuser = socket.socket()
    refuser.bind(("127.0.0.1", 0))
    without_network.refuser = refuser  # kept open as long as the test runs
    port = refuser.getsockname()[1]
    return (f"no name resolution and a proxy that refuses (127.0.0.1:{port}): unshare -rn is not allowed here",
            ["--host-resolver-rules=MAP * ~NOTFOUND", f"--proxy-server=http://127.0.0.1:{port}",
             "--proxy-bypass-list=<-loopback>"])


def build_site(edition: str) -> pathlib.Path:
    site = scratch / f"site-{edition}"
    shutil.rmtree(site, ignore_errors=True)
    env = dict(os.environ, GPULAB_DOCS_EDITION=edition, NO_MKDOCS_2_WARNING="1")
    run = subprocess.run([str(mkdocs), "build", "--strict", "--quiet", "--config-file", str(repo / "mkdocs.yml"),
                          "--site-dir", str(site)], capture_output=True, text=True, env=env)
    if run.returncode != 0:
        sys.exit(f"FAIL: the site does not build:\n{run.stdout[-3000:]}{run.stderr[-3000:]}")
    return site


def browser(offline_flags: list[str]):
    return headless_chromium(scratch / "chromium-profile", WIDTH, extra_args=offline_flags, log_requests=True)


def wait_for(condition, seconds: float = 20):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.2)
    return condition()


def check_no_requests(b, label: str):
    """Every network request the pages opened since the last call made: none may leave the machine."""
    for entry in b.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        if message["method"] == "Network.requestWillBeSent":
            url = message["params"]["request"]["url"]
            failure = f"{label}: a page asked the network for {url[:120]} (the site must work offline)"
            local = url.startswith(("file:", "blob:", "data:", "about:", "chrome:", "devtools:"))
            if not local and failure not in failures:
                failures.append(failure)


def page_of(url: str) -> str:
    """The page of an address, without the query (the theme's ?h= highlight) and the section."""
    return url.split("#")[0].split("?")[0]


def check_search(b, site: pathlib.Path, label: str):
    from selenium.webdriver.common.by import By

    b.get((site / "labs" / "transpose.html").as_uri())  # a page in a folder: result links are relative
    box = wait_for(lambda: [e for e in b.find_elements(By.CSS_SELECTOR, "input.md-search__input")
                            if e.is_displayed()], 5)
    if not check(bool(box), f"{label}: the search box is hidden on a page opened from file:// without network "
                 "(the theme hides it when its search worker does not start: site_hook.py, "
                 "docs/assets/file-search.js)"):
        return
    box[0].click()
    box[0].send_keys(QUERY)
    # A result is a page, with the sections that match under it.
    items = wait_for(lambda: b.find_elements(By.CSS_SELECTOR, ".md-search-result__item"))
    if not check(bool(items), f"{label}: search from file:// lists no result for {QUERY!r}"):
        return
    link = items[0].find_element(By.CSS_SELECTOR, "a.md-search-result__link")
    first, text = page_of(link.get_attribute("href")), items[0].text
    check(first == (site / ANSWER_PAGE).as_uri() and ANSWER_SECTION in text,
          f"{label}: the first result for {QUERY!r} is {first} ({text[:80]!r}), not {ANSWER_PAGE}: {ANSWER_SECTION!r}")
    link.click()
    opened = wait_for(lambda: page_of(b.current_url) == (site / ANSWER_PAGE).as_uri(), 5)
    check(opened and ANSWER_SECTION in b.find_element(By.TAG_NAME, "article").text,
          f"{label}: clicking the first result for {QUERY!r} opens {b.current_url}, not {ANSWER_PAGE}")


def check_formulas(b, site: pathlib.Path, label: str):
    from selenium.webdriver.common.by import By

    b.get((site / "performance.html").as_uri())
    typeset = wait_for(lambda: b.find_elements(By.CSS_SELECTOR, ".arithmatex .katex"), 10)
    check(bool(typeset), f"{label}: performance.html: no formula was typeset by KaTeX (assets/katex, katex-init.js)")
    errors = b.find_elements(By.CSS_SELECTOR, ".katex-error")
    check(not errors, f"{label}: performance.html: KaTeX could not typeset {[e.text[:60] for e in errors[:3]]}")
    fonts = wait_for(lambda: b.execute_script(
        "return [...document.fonts].filter(f => f.family.includes('KaTeX_Main') && f.status === 'loaded').length"), 5)
    check(bool(fonts), f"{label}: performance.html: KaTeX's fonts did not load from the site (assets/katex/fonts)")


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
    offline, offline_flags = without_network()
    scratch.mkdir(parents=True, exist_ok=True)
    editions = ["student", "instructor"] if (repo / "solutions").is_dir() else ["student"]
    sites = {edition: build_site(edition) for edition in editions}
    b = browser(offline_flags)
    try:
        for edition, site in sites.items():
            label = f"{edition} edition"
            check_search(b, site, label)
            check_formulas(b, site, label)
            check_no_requests(b, label)
        check_overflow(b, sites[editions[-1]])
        check_no_requests(b, f"{editions[-1]} edition")
    finally:
        b.quit()
    print(f"offline: {offline}")
    for f in failures:
        print("FAIL:", f)
    if failures:
        sys.exit(1)
    print(f"ok: from file://, offline and without browser flags, search finds {ANSWER_PAGE} for {QUERY!r} and "
          f"formulas are typeset in the {' and '.join(editions)} editions; {len(PAGES)} pages fit a {WIDTH} px window")


main()
