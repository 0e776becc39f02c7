#!/usr/bin/python3
"""The course server's pages in headless Chromium: a student signs in with their token and sees their
own submissions and reports, never another student's; the course staff see the queue and the class,
and regrade a submission with the page's button.

    pages_browser_test.py GPULAB REPO SKELETONS SCRATCH

GPULAB: the built `gpulab` command; SKELETONS: the labs as committed (a skeleton to submit).
Exit 77 (skipped) without Selenium, Chromium or its driver. Run by CTest (tests/CMakeLists.txt).
"""
import re
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

GPULAB, REPO, SKELETONS, SCRATCH = (Path(a) for a in sys.argv[1:5])
sys.path.insert(0, str(REPO / "tests" / "support"))
from chromium import headless_chromium  # noqa: E402
failures = []


def check(condition, what):
    if not condition:
        failures.append(what)
    return condition


def browser():
    return headless_chromium(SCRATCH / "chromium-profile", 1280)


def start_course():
    shutil.rmtree(SCRATCH, ignore_errors=True)
    SCRATCH.mkdir(parents=True)
    (SCRATCH / "roster.csv").write_text("id,name,email\nalice,Alice,a@example.org\nbob,Bob,b@example.org\n")
    subprocess.run([GPULAB, "roster", "--dir", SCRATCH / "server", "--import", SCRATCH / "roster.csv"], check=True,
                   stdout=subprocess.DEVNULL)
    tokens = dict(line.split(",", 1) for line in (SCRATCH / "server/tokens.csv").read_text().split()[1:])
    staff = (SCRATCH / "server/staff-token").read_text().strip()
    log = open(SCRATCH / "serve.log", "w")
    server = subprocess.Popen([GPULAB, "serve", "--dir", SCRATCH / "server", "--listen", "127.0.0.1:0", "--backend",
                               "opencl"], stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    for _ in range(600):
        found = re.search(r"listening on (http://127\.0\.0\.1:\d+)", (SCRATCH / "serve.log").read_text())
        if found:
            return server, found.group(1), tokens, staff
        time.sleep(0.1)
    server.kill()
    sys.exit("FAIL: the server did not start:\n" + (SCRATCH / "serve.log").read_text())


def submit(url, token, source):
    return subprocess.run([GPULAB, "submit", "--server", url, "--token", token, "--lab", "hello", "--poll", "0.2",
                           "--source", source], capture_output=True, text=True, timeout=600).returncode


def body_text(driver):
    from selenium.webdriver.common.by import By
    return driver.find_element(By.TAG_NAME, "body").text


def wait_for_text(driver, text, seconds=30):
    """The page's text once it holds `text` (a click's page load ends), or as it is after `seconds`.
    While the next page loads there may be no body yet, or the old one goes stale: both mean wait."""
    from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            body = body_text(driver)
            if text in body:
                return body
        except (NoSuchElementException, StaleElementReferenceException):
            pass
        time.sleep(0.1)
    try:
        return body_text(driver)
    except (NoSuchElementException, StaleElementReferenceException):
        return ""


def sign_in(driver, url, token, expected):
    from selenium.webdriver.common.by import By
    driver.get(url + "/logout")
    wait_for_text(driver, "Sign in")
    driver.find_element(By.NAME, "token").send_keys(token)
    driver.find_element(By.CSS_SELECTOR, "form button").click()
    return wait_for_text(driver, expected)


def gradings(submission):
    db = sqlite3.connect(SCRATCH / "server/gpulab.sqlite")
    return db.execute("SELECT COUNT(*) FROM gradings WHERE submission = ?", (submission,)).fetchone()[0]


def main():
    server, url, tokens, staff = start_course()
    driver = None
    try:
        check(submit(url, tokens["alice"], REPO / "solutions") == 0, "alice's solution passes through the server")
        check(submit(url, tokens["bob"], SKELETONS) == 1, "bob's skeleton is graded and fails")
        driver = browser()
        from selenium.webdriver.common.by import By
        body = sign_in(driver, url, tokens["bob"], "Signed in as bob")
        check("Signed in as bob" in body, f"bob's page names him: {body[:300]}")
        links = [a.get_attribute("href") for a in driver.find_elements(By.CSS_SELECTOR, "table a")]
        check(links == [url + "/submissions/2"], f"bob's page lists his submission only: {links}")
        driver.find_element(By.LINK_TEXT, "2").click()
        check("not implemented" in wait_for_text(driver, "not implemented"), "bob's report shows his result")
        check(not driver.find_elements(By.XPATH, "//button[text()='Regrade']"), "a student has no regrade button")
        driver.get(url + "/submissions/1")
        body = wait_for_text(driver, "No such submission of yours")
        check("No such submission of yours" in body and "PASSED" not in body, "alice's report is hidden from bob")
        driver.save_screenshot(str(SCRATCH / "student.png"))

        body = sign_in(driver, url, staff, "Queue")
        check("Queue" in body and "alice" in body and "bob" in body, f"the staff page shows the class: {body[:300]}")
        driver.save_screenshot(str(SCRATCH / "staff.png"))
        driver.get(url + "/submissions/1")
        check("PASSED" in wait_for_text(driver, "PASSED"), "the staff see alice's report")
        driver.find_element(By.XPATH, "//button[text()='Regrade']").click()
        deadline = time.monotonic() + 300
        while gradings(1) < 2 and time.monotonic() < deadline:
            time.sleep(0.5)
        check(gradings(1) == 2, "a regrade adds a second grading and keeps the first")
    finally:
        if driver:
            driver.quit()
        server.terminate()
        server.wait(timeout=60)
    if failures:
        print("FAIL:\n  " + "\n  ".join(failures))
        return 1
    print("the course server's pages: student and staff views checked in headless Chromium")
    return 0


if __name__ == "__main__":
    sys.exit(main())
