"""The web page in headless Chromium against a live server on 127.0.0.1 (marker ``browser``).

Skipped when Chromium or chromedriver is missing, unless ``XLNEL_REQUIRE_BROWSER=1`` (CI),
where that fails instead. With ``XLNEL_SCREENSHOTS=DIR`` the screenshots go to DIR
(``docs/img`` for the documentation), otherwise to a temporary folder.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")
uvicorn = pytest.importorskip("uvicorn")
webdriver = pytest.importorskip("selenium.webdriver")
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

from xlnel.defaults import default_pipeline_dir  # noqa: E402
from xlnel.serve.app import create_app  # noqa: E402

pytestmark = pytest.mark.browser

EN = "The patient had seizures, hypertension and type 2 diabetes."
HE = "הוא חולה בסוכרת ויתר לחץ דם, ומקבל Insulin בבוקר."


def _browser_paths() -> tuple[str, str]:
    chrome = next((p for p in map(shutil.which, ("chromium", "chromium-browser",
                                                 "google-chrome")) if p), None)
    driver = shutil.which("chromedriver")
    if chrome is None or driver is None:
        message = "headless Chromium and chromedriver are not installed"
        if os.environ.get("XLNEL_REQUIRE_BROWSER") == "1":
            pytest.fail(message)
        pytest.skip(message)
    return chrome, driver


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    chrome, driver_path = _browser_paths()
    options = webdriver.ChromeOptions()
    options.binary_location = chrome
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage",
                "--window-size=1100,800", "--disable-gpu"):
        options.add_argument(arg)
    driver = webdriver.Chrome(options=options,
                              service=webdriver.ChromeService(executable_path=driver_path))
    yield driver
    driver.quit()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _live(pipeline: Path) -> Iterator[str]:
    port = _free_port()
    server = uvicorn.Server(uvicorn.Config(create_app(pipeline), host="127.0.0.1", port=port,
                                           log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError(f"the test server did not start on port {port}")
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(10)


@pytest.fixture(scope="module")
def en_server() -> Iterator[str]:
    yield from _live(default_pipeline_dir())


@pytest.fixture(scope="module")
def he_server(he_pipeline: Path) -> Iterator[str]:
    yield from _live(he_pipeline)


def _link(browser: Any, url: str, text: str) -> list[dict[str, str]]:
    browser.get(url)
    box = browser.find_element(By.ID, "text")
    browser.execute_script("arguments[0].value = arguments[1];", box, text)
    browser.find_element(By.ID, "link").click()
    # "linking…" shows while the request runs; wait for "N link(s)" or an error.
    WebDriverWait(browser, 30).until(
        lambda d: re.fullmatch(r"\d+ links?", d.find_element(By.ID, "status").text)
        or "error" in d.find_element(By.ID, "status").text)
    assert "error" not in browser.find_element(By.ID, "status").text
    marks = browser.find_elements(By.CSS_SELECTOR, "#highlighted mark.mention")
    return [{"concept": m.get_attribute("data-concept"), "start": m.get_attribute("data-start"),
             "end": m.get_attribute("data-end"),
             "href": m.find_element(By.CSS_SELECTOR, ".concept-id").get_attribute("href"),
             "name": m.find_element(By.CSS_SELECTOR, ".concept-name").text} for m in marks]


def _table(browser: Any) -> list[list[str]]:
    browser.find_element(By.ID, "show-table").click()
    rows = browser.find_elements(By.CSS_SELECTOR, "#links tbody tr")
    out = [[td.text for td in row.find_elements(By.TAG_NAME, "td")] for row in rows]
    browser.find_element(By.ID, "show-text").click()
    return out


def _screenshot(browser: Any, name: str, tmp_path: Path) -> None:
    folder = Path(os.environ.get("XLNEL_SCREENSHOTS") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    assert browser.save_screenshot(str(folder / name))


def _direction(browser: Any) -> str:
    return str(browser.execute_script(
        "return getComputedStyle(document.getElementById('highlighted')).direction;"))


def test_english_text_on_the_default_pipeline(browser: Any, en_server: str,
                                              tmp_path: Path) -> None:
    import xlnel

    expected = xlnel.load("default").link(EN)
    marks = _link(browser, en_server, EN)
    assert [(m["concept"], int(m["start"]), int(m["end"])) for m in marks] == [
        (x.concept_id, x.start, x.end) for x in expected]
    assert "HP:0001250" in [m["concept"] for m in marks]
    seizure = next(m for m in marks if m["concept"] == "HP:0001250")
    assert seizure["name"] == "Seizure"
    assert seizure["href"] == "https://hpo.jax.org/browse/term/HP:0001250"
    table = _table(browser)
    assert [row[2] for row in table] == [x.text for x in expected]
    assert [row[5] for row in table] == [x.type or x.concept_type or "" for x in expected]
    assert _direction(browser) == "ltr"
    _screenshot(browser, "serve.png", tmp_path)


def test_hebrew_text_reads_right_to_left(browser: Any, he_server: str, tmp_path: Path) -> None:
    marks = _link(browser, he_server, HE)
    assert [(m["concept"], m["name"]) for m in marks] == [
        ("C1", "Diabetes mellitus"), ("C2", "Hypertension"), ("C3", "Insulin")]
    assert [HE[int(m["start"]):int(m["end"])] for m in marks] == [
        "סוכרת", "ויתר לחץ דם", "Insulin"]
    highlighted = browser.find_element(By.ID, "highlighted").text
    assert "סוכרת" in highlighted and "Insulin" in highlighted
    assert _direction(browser) == "rtl"
    table = _table(browser)
    assert [row[3] for row in table] == ["C1", "C2", "C3"]
    _screenshot(browser, "serve-he.png", tmp_path)
