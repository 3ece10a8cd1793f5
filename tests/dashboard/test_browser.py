"""The dashboard in a real headless browser (Debian's chromium + chromedriver, driven by selenium)
while another thread appends to the journal, holding the run lock as ``bayestune optimize`` does."""

from __future__ import annotations

import io
import shutil
import threading

import pytest

from bayestune.run import record_budget
from bayestune.storage import Journal
from bayestune.storage.lock import RunLock
from bayestune.trial import Result
from tests.export.conftest import config, write_journal

webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed (pip install selenium)")
Image = pytest.importorskip("PIL.Image", reason="Pillow is not installed")
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
CHROMEDRIVER = shutil.which("chromedriver")
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        CHROMIUM is None or CHROMEDRIVER is None, reason="no headless browser: apt-get install chromium chromium-driver"
    ),
]
WIDTH, HEIGHT = 1280, 900
INITIAL, APPENDED = 4, 6


def browser():
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    options = Options()
    options.binary_location = CHROMIUM
    for arg in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        f"--window-size={WIDTH},{HEIGHT}",
        "--hide-scrollbars",
        "--force-device-scale-factor=1",
    ):
        options.add_argument(arg)
    return webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)


def test_the_page_follows_a_live_run(tmp_path, serve_journal):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    rows = [(config(t, 0.1 * t), {"runtime": 10.0 / t}) for t in range(1, INITIAL + 1)]
    path = write_journal(tmp_path / "live.db", rows)
    with Journal(path) as journal:
        record_budget(journal, INITIAL + APPENDED)
    lock = RunLock.acquire(path)
    may_append, done = threading.Event(), threading.Event()

    def append():  # the run: one evaluation after another, the last one failing
        may_append.wait(120)
        with Journal(path) as journal:
            for t in range(INITIAL + 1, INITIAL + APPENDED + 1):
                trial = journal.start(config(t, 0.05 * t))
                done.wait(0.3)
                journal.finish(
                    trial,
                    Result({"runtime": 10.0 / t})
                    if t < INITIAL + APPENDED
                    else Result.failure("boom: kernel crashed", "crash"),
                )
        lock.release()

    writer = threading.Thread(target=append, daemon=True)
    writer.start()
    server = serve_journal(path, interval=0.3)
    driver = browser()
    try:
        driver.get(server.url)
        rows = "return document.querySelectorAll('#evaluations tbody tr').length"
        WebDriverWait(driver, 120).until(lambda d: d.execute_script(rows) == INITIAL)
        # the page re-renders every refresh: read and click inside the page, where no element goes stale
        text = "return document.getElementById(arguments[0]).textContent"
        assert driver.execute_script(text, "state").strip() == "running"
        may_append.set()
        WebDriverWait(driver, 120).until(
            lambda d: (
                d.execute_script(rows) == INITIAL + APPENDED and d.execute_script(text, "state").strip() == "finished"
            )
        )
        writer.join(30)
        assert "failed 1" in driver.execute_script(text, "counts")
        assert "boom: kernel crashed" in driver.execute_script(text, "failures")
        assert driver.find_elements(By.CSS_SELECTOR, "#convergence svg circle")
        assert driver.find_elements(By.CSS_SELECTOR, "#importance svg rect")
        first = "return document.querySelector('#evaluations tbody tr').dataset.trial"
        assert driver.execute_script(first) == str(INITIAL + APPENDED)  # newest first by default
        driver.execute_script("document.querySelector(\"th[data-column='v:runtime']\").click()")  # best runtime first
        assert driver.execute_script(first) == str(INITIAL + APPENDED - 1)
        png = driver.get_screenshot_as_png()
        (tmp_path / "dashboard.png").write_bytes(png)
        viewport = driver.execute_script("return [window.innerWidth, window.innerHeight]")
    finally:
        done.set()
        may_append.set()
        driver.quit()
    image = Image.open(io.BytesIO(png)).convert("RGB")
    assert image.size == tuple(viewport) and image.size[0] == WIDTH
    colours = image.getcolors(maxcolors=1 << 20)
    assert colours is not None and len(colours) > 50  # text, plots and badges, not a blank page
    dominant = max(colours)[0] / (image.size[0] * image.size[1])
    assert dominant < 0.95
