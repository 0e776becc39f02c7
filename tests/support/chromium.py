"""Headless Chromium through Selenium for the project's browser tests (the docs site, the course
server's pages). Exits 77 (skipped, saying why) where Selenium, Chromium or its driver is missing."""
import shutil
import sys


def headless_chromium(profile, width, height=1000, extra_args=(), log_requests=False):
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        print("skipped: Selenium is not installed (python3-selenium; scripts/install-deps.sh test installs it)")
        sys.exit(77)
    binary = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    if not binary or not driver:
        print("skipped: Chromium or its driver is not installed (chromium, chromium-driver; scripts/install-deps.sh test)")
        sys.exit(77)
    options = webdriver.ChromeOptions()
    options.binary_location = binary
    # --no-sandbox: the tests may run as root. No flag here lets a page do more than in a student's browser.
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", f"--window-size={width},{height}",
                f"--user-data-dir={profile}", *extra_args):
        options.add_argument(arg)
    if log_requests:
        options.set_capability("goog:loggingPrefs", {"performance": "ALL"})  # the requests, to see none leaves
    return webdriver.Chrome(service=Service(driver), options=options)
