"""The web page of ``rsp serve`` in a real browser: headless Chromium (Debian's ``chromium`` and
``chromium-driver``, which ``make browser`` installs) driven by Selenium loads the page from a uvicorn
server on 127.0.0.1, registers a query through the page's form, and shows the rows and the plot of the
results of elements POSTed meanwhile; they must be those of ``rsp run`` on the same stream (the reference).

Outside ``make test`` the test is skipped when no Chromium is installed; under ``make test``
(``RSP_REQUIRE_BROWSER=1``) a missing Chromium is a failure."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator

import httpx
import pytest
from paths import ROOT

BUILDING = ROOT / "examples" / "building"
STREAM = "http://example.org/building/temperatures"
WAIT = 15.0  # seconds the page has to show what is expected

pytestmark = pytest.mark.browser


def _browser_paths() -> tuple[str, str] | None:
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    return (chromium, driver) if chromium and driver else None


@pytest.fixture(scope="module")
def driver() -> Iterator:
    paths = _browser_paths()
    if paths is None:
        message = "no chromium and chromedriver on PATH: make browser installs them (apt-get install chromium chromium-driver)"
        if os.environ.get("RSP_REQUIRE_BROWSER"):
            pytest.fail(message)
        pytest.skip(message)
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service as DriverService

    options = webdriver.ChromeOptions()
    options.binary_location = paths[0]
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu"):
        options.add_argument(argument)
    browser = webdriver.Chrome(service=DriverService(executable_path=paths[1]), options=options)
    try:
        yield browser
    finally:
        browser.quit()


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = subprocess.Popen(
        [sys.executable, "-m", "rsp", "serve", "--port", str(port), "--quiet", "--entailment", "rdfs",
         "--ontology", str(ROOT / "ontologies" / "building.ttl")], cwd=ROOT, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(150):
            try:
                httpx.get(base + "/queries", timeout=1)
                break
            except httpx.TransportError:
                time.sleep(0.1)
        yield base
    finally:
        process.terminate()
        process.wait(timeout=10)


def _expected() -> list[dict]:
    done = subprocess.run(
        [sys.executable, "-m", "rsp", "run", str(BUILDING / "hot-rooms.rq"), "--stream",
         str(BUILDING / "temperatures.nt"), "--ontology", str(ROOT / "ontologies" / "building.ttl"),
         "--entailment", "rdfs"], capture_output=True, text=True, check=True, cwd=ROOT, timeout=60,
    )  # fmt: skip
    return [json.loads(line) for line in done.stdout.splitlines()]


def _wait_for(check, what: str):
    """``check()`` once it is truthy, polled until WAIT seconds are up."""
    deadline = time.monotonic() + WAIT
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"the page did not show {what} within {WAIT} s")
        time.sleep(0.05)


def test_the_page_registers_a_query_and_shows_live_rows_and_plot(server, driver) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    expected = _expected()
    driver.get(server + "/")
    assert driver.title == "rsp serve"
    driver.find_element(By.ID, "query").send_keys((BUILDING / "hot-rooms.rq").read_text())
    driver.find_element(By.ID, "register").click()
    _wait_for(lambda: driver.find_element(By.ID, "status").text == "live: HotRooms", "the live status")
    options = [o.text for o in Select(driver.find_element(By.ID, "variable")).options]
    assert options == ["answers per instant", "room", "max", "readings"]

    def rows() -> list[list[str]]:
        return [[td.text for td in tr.find_elements(By.TAG_NAME, "td")]
                for tr in driver.find_elements(By.CSS_SELECTOR, "#results tbody tr")]  # fmt: skip

    def plotted() -> int:
        """The points plotted so far: none before the first answers draw the line (the page has no
        polyline yet), and none while the page redraws it (the element found is replaced)."""
        from selenium.common.exceptions import StaleElementReferenceException

        try:
            found = driver.find_elements(By.CSS_SELECTOR, "#plot polyline")
            return len(found[0].get_attribute("points").split()) if found else 0
        except StaleElementReferenceException:
            return 0

    lines = (BUILDING / "temperatures.nt").read_text().splitlines(keepends=True)
    half = len(lines) // 2
    post = {"params": {"stream": STREAM}, "timeout": 10}
    assert httpx.post(server + "/streams/elements", content="".join(lines[:half]), **post).status_code == 200
    first_instants = [r for r in expected if r["time"] <= int(lines[half - 1].rpartition("#")[2])]
    _wait_for(lambda: plotted() == len(first_instants), f"{len(first_instants)} instants plotted")
    assert httpx.post(server + "/streams/elements", content="".join(lines[half:]), **post).status_code == 200
    assert httpx.post(server + "/streams/advance", timeout=10).status_code == 200  # the end of the stream
    _wait_for(lambda: plotted() == len(expected), f"{len(expected)} instants plotted")  # the plot grew
    want = [
        [str(r["time"]), row["room"], row["max"], row["readings"]] for r in expected for row in r["bindings"]
    ]
    assert want and rows() == want
    header = [th.text for th in driver.find_elements(By.CSS_SELECTOR, "#results thead th")]
    assert header == ["time", "room", "max", "readings"]
    Select(driver.find_element(By.ID, "variable")).select_by_visible_text("max")
    circles = driver.find_elements(By.CSS_SELECTOR, "#plot circle")
    assert len(circles) == len(want)  # one point per answer's ?max
    assert driver.find_element(By.ID, "error").text == ""
