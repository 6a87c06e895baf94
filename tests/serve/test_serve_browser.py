"""The web page of ``rsp serve`` in a real browser: headless Chromium (Debian's ``chromium`` and
``chromium-driver``, which ``make browser`` installs) driven by Selenium loads the page from a uvicorn
server on 127.0.0.1, registers a query through the page's form, and shows the rows and the plot of the
results of elements POSTed meanwhile; they must be those of ``rsp run`` on the same stream (the reference),
written as a person reads them (literals by their text, IRIs with the query's prefixes), newest first.
A second server with ``--token`` is used through the page's token field, in an 1100 px window: the
plot's axes, its series per group and their legend, the table within the window; its screenshot is
saved under the test's tmp_path.

Outside ``make test`` the test is skipped when no Chromium is installed; under ``make test``
(``RSP_REQUIRE_BROWSER=1``) a missing Chromium is a failure."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

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


@contextlib.contextmanager
def _serving(*options: str) -> Iterator[str]:
    """``rsp serve`` on a free port of 127.0.0.1 with the building ontology (RDFS), once it answers."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = subprocess.Popen(
        [sys.executable, "-m", "rsp", "serve", "--port", str(port), "--quiet", "--entailment", "rdfs",
         "--ontology", str(ROOT / "ontologies" / "building.ttl"), *options], cwd=ROOT, stderr=subprocess.DEVNULL,
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


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    with _serving() as base:
        yield base


def _expected(query: Path = BUILDING / "hot-rooms.rq") -> list[dict]:
    done = subprocess.run(
        [sys.executable, "-m", "rsp", "run", str(query), "--stream",
         str(BUILDING / "temperatures.nt"), "--ontology", str(ROOT / "ontologies" / "building.ttl"),
         "--entailment", "rdfs"], capture_output=True, text=True, check=True, cwd=ROOT, timeout=60,
    )  # fmt: skip
    return [json.loads(line) for line in done.stdout.splitlines()]


def _readable(term: str, prefixes: dict[str, str]) -> str:
    """What the page shows of an N-Triples term: a literal's text, an IRI with a prefix that fits."""
    literal = re.fullmatch(r'"((?:[^"\\]|\\.)*)"(?:\^\^<[^>]*>|@[A-Za-z0-9-]+)?', term)
    if literal:
        return json.loads(f'"{literal.group(1)}"')  # the examples' literals have JSON's escapes only
    for prefix, namespace in prefixes.items():
        if term.startswith(f"<{namespace}") and re.fullmatch(r"[\w.-]*", term[len(namespace) + 1 : -1]):
            return f"{prefix}:{term[len(namespace) + 1 : -1]}"
    return term


def _prefixes(query: Path) -> dict[str, str]:
    return dict(re.findall(r"PREFIX\s+(\w*):\s*<([^>]*)>", query.read_text(encoding="utf-8")))


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
    prefixes = _prefixes(BUILDING / "hot-rooms.rq")
    want = [
        [str(r["time"]), *(_readable(row[n], prefixes) for n in ("room", "max", "readings"))]
        for r in reversed(expected) for row in r["bindings"]
    ]  # fmt: skip
    assert want and rows() == want  # newest instant first
    cells = driver.find_elements(By.CSS_SELECTOR, "#results tbody td")
    full = [row[n] for r in reversed(expected) for row in r["bindings"] for n in ("room", "max", "readings")]
    assert [td.get_attribute("title") for td in cells if td.get_attribute("title")] == full  # on hover
    header = [th.text for th in driver.find_elements(By.CSS_SELECTOR, "#results thead th")]
    assert header == ["time (ms)", "room", "max", "readings"]
    Select(driver.find_element(By.ID, "variable")).select_by_visible_text("max")
    circles = driver.find_elements(By.CSS_SELECTOR, "#plot circle")
    assert len(circles) == len(want)  # one point per answer's ?max
    assert driver.find_element(By.ID, "error").text == ""


ROOMS = """REGISTER QUERY RoomMax AS
PREFIX ex: <http://example.org/building#>
SELECT ?room (MAX(?v) AS ?max) (COUNT(?obs) AS ?readings)
       (CONCAT("the warmest reading of ", STR(?room), " over the last ten seconds, of every sensor it hosts") AS ?note)
FROM STREAM <http://example.org/building/temperatures> [RANGE 10s STEP 5s]
WHERE { ?obs ex:madeBySensor ?sensor ; ex:hasSimpleResult ?v . ?sensor ex:isHostedBy ?room . }
GROUP BY ?room
ORDER BY ?room
"""
"""Every room's warmest reading: a series per room, and a long text column."""


def test_the_page_with_a_token_shows_axes_a_series_per_group_and_fits_the_window(driver, tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    (tmp_path / "rooms.rq").write_text(ROOMS, encoding="utf-8")
    expected = _expected(tmp_path / "rooms.rq")
    rooms = sorted({row["room"] for r in expected for row in r["bindings"]})
    assert len(rooms) > 1
    driver.set_window_size(1100, 900)
    with _serving("--token", "s3cret") as base:
        driver.get(base + "/")
        driver.execute_script("sessionStorage.clear()")
        driver.get(base + "/")
        driver.find_element(By.ID, "query").send_keys(ROOMS)
        driver.find_element(By.ID, "register").click()  # no token yet: refused, and the page says why
        _wait_for(lambda: "Token" in driver.find_element(By.ID, "error").text, "the token is needed")
        driver.find_element(By.ID, "token").send_keys("s3cret")
        driver.refresh()  # the token is kept for the tab (sessionStorage)
        assert driver.find_element(By.ID, "token").get_attribute("value") == "s3cret"
        driver.find_element(By.ID, "query").send_keys(ROOMS)
        driver.find_element(By.ID, "register").click()
        _wait_for(lambda: driver.find_element(By.ID, "status").text == "live: RoomMax", "the live status")
        auth = {"Authorization": "Bearer s3cret"}
        text = (BUILDING / "temperatures.nt").read_text()
        reply = httpx.post(base + "/streams/elements", params={"stream": STREAM}, content=text, headers=auth, timeout=10)
        assert reply.status_code == 200
        assert httpx.post(base + "/streams/advance", headers=auth, timeout=10).status_code == 200

        def rows() -> list:
            return driver.find_elements(By.CSS_SELECTOR, "#results tbody tr")

        answers = sum(len(r["bindings"]) for r in expected)
        _wait_for(lambda: len(rows()) == answers, f"{answers} rows")
        Select(driver.find_element(By.ID, "variable")).select_by_visible_text("max")
        prefixes = _prefixes(tmp_path / "rooms.rq")
        legend = [e.text for e in driver.find_elements(By.CSS_SELECTOR, "#legend .series")]
        assert legend == [_readable(room, prefixes) for room in rooms]  # a series per room, in order
        assert len(driver.find_elements(By.CSS_SELECTOR, "#plot polyline")) == len(rooms)
        colours = {e.get_attribute("stroke") for e in driver.find_elements(By.CSS_SELECTOR, "#plot polyline")}
        assert len(colours) == len(rooms)
        x_ticks = [e.text for e in driver.find_elements(By.CSS_SELECTOR, "#plot text.tick.x")]
        y_ticks = [e.text for e in driver.find_elements(By.CSS_SELECTOR, "#plot text.tick.y")]
        titles = [e.text for e in driver.find_elements(By.CSS_SELECTOR, "#plot text.title")]
        last = expected[-1]["time"] / 1000
        assert len(x_ticks) >= 3 and all(float(t) <= last for t in x_ticks), x_ticks  # seconds of event time
        values = [float(_readable(row["max"], prefixes)) for r in expected for row in r["bindings"]]
        ticks = sorted(map(float, y_ticks))  # the value axis spans the values, a few ticks apart
        assert len(ticks) >= 3 and ticks[0] <= min(values) < ticks[1] and ticks[-2] < max(values) <= ticks[-1], y_ticks
        assert titles == ["event time (s)", "?max"]
        first = [td.text for td in rows()[0].find_elements(By.TAG_NAME, "td")]
        assert first[0] == str(expected[-1]["time"])  # the newest row first
        cells = [td.text for td in driver.find_elements(By.CSS_SELECTOR, "#results tbody td")]
        assert "33.4" in cells and not any("^^" in cell for cell in cells)
        width = driver.execute_script("return [document.documentElement.scrollWidth, window.innerWidth]")
        assert width[0] <= width[1], width  # no horizontal scroll bar at 1100 px
        table = driver.execute_script("const t = document.getElementById('table'); return [t.scrollWidth, t.clientWidth]")
        assert table[0] <= table[1], table  # the long column is cut (its full text on hover), not scrolled
        driver.save_screenshot(str(tmp_path / "page.png"))
        assert (tmp_path / "page.png").stat().st_size > 10_000
        assert driver.find_element(By.ID, "error").text == ""
    driver.find_element(By.ID, "register").click()  # the service has stopped: the page says so
    _wait_for(lambda: driver.find_element(By.ID, "error").text.startswith("no answer from the service"),
              "that the service does not answer")  # fmt: skip


def test_a_page_kept_open_keeps_the_last_rows_and_instants(server, driver) -> None:
    """The table keeps the newest 1,000 rows and the plot the last 600 instants, however long it runs."""
    from selenium.webdriver.common.by import By

    query = """REGISTER QUERY Count AS SELECT (COUNT(*) AS ?n)
FROM STREAM <http://ex.org/long> [RANGE 1s STEP 1s] WHERE { ?s ?p ?o }"""
    driver.get(server + "/")
    driver.find_element(By.ID, "query").send_keys(query)
    driver.find_element(By.ID, "register").click()
    _wait_for(lambda: driver.find_element(By.ID, "status").text == "live: Count", "the live status")
    lines = "".join(f"<http://ex.org/a> <http://ex.org/p> <http://ex.org/b> . # {t * 1000 + 500}\n" for t in range(1200))
    reply = httpx.post(server + "/streams/elements", params={"stream": "http://ex.org/long"}, content=lines, timeout=30)
    assert reply.status_code == 200 and reply.json()["elements"] == 1200
    assert httpx.post(server + "/streams/advance", timeout=30).status_code == 200
    instants = len(httpx.get(server + "/queries/Count/results", timeout=10).text.splitlines())  # the last 100
    assert instants == 100

    def newest() -> str:
        cells = driver.find_elements(By.CSS_SELECTOR, "#results tbody tr:first-child td")
        return cells[0].text if cells else ""

    _wait_for(lambda: newest() == "1200000", "the last instant first")
    assert len(driver.find_elements(By.CSS_SELECTOR, "#results tbody tr")) == 1000
    points = driver.find_element(By.CSS_SELECTOR, "#plot polyline").get_attribute("points").split()
    assert len(points) == 600


ASK = """REGISTER QUERY Any AS ASK FROM STREAM <http://ex.org/forms> [RANGE 1s STEP 1s]
WHERE { ?s <http://ex.org/p> ?o }"""
CONSTRUCT = """REGISTER QUERY Copy AS PREFIX ex: <http://ex.org/>
CONSTRUCT { ?s ex:said ?o } FROM STREAM <http://ex.org/forms> [RANGE 1s STEP 1s] WHERE { ?s ex:p ?o }"""
FORMS = ['<http://ex.org/a> <http://ex.org/p> "two words, \\"quoted\\""@en . # 500\n',
         '<http://ex.org/b> <http://ex.org/p> <http://ex.org/c> . # 2500\n']  # fmt: skip


def test_ask_and_construct_results_are_shown_readable(server, driver, tmp_path: Path) -> None:
    """An ASK's answer per instant (true/false, plotted 1/0) and a CONSTRUCT's triples, each term
    readable (a literal with spaces and quotes stays one term), as rsp run gives them."""
    from selenium.webdriver.common.by import By

    (tmp_path / "s.nt").write_text("".join(FORMS), encoding="utf-8")
    for query, name in ((ASK, "Any"), (CONSTRUCT, "Copy")):
        (tmp_path / "q.rq").write_text(query, encoding="utf-8")
        done = subprocess.run(
            [sys.executable, "-m", "rsp", "run", "q.rq", "--stream", "s.nt", "--entailment", "rdfs", "--ontology",
             str(ROOT / "ontologies" / "building.ttl")], cwd=tmp_path, capture_output=True, text=True, check=True,
            timeout=60,
        )  # the server's options  # fmt: skip
        expected = [json.loads(line) for line in done.stdout.splitlines()]
        driver.get(server + "/")
        driver.find_element(By.ID, "query").send_keys(query)
        driver.find_element(By.ID, "register").click()
        _wait_for(lambda name=name: driver.find_element(By.ID, "status").text == f"live: {name}", "the live status")
        for line in FORMS:
            reply = httpx.post(server + "/streams/elements", params={"stream": "http://ex.org/forms"}, content=line)
            assert reply.status_code == 200
        httpx.post(server + "/queries/" + name + "/advance", timeout=10)

        def rows() -> list[list[str]]:
            return [[td.text for td in tr.find_elements(By.TAG_NAME, "td")]
                    for tr in driver.find_elements(By.CSS_SELECTOR, "#results tbody tr")]  # fmt: skip

        if name == "Any":
            want = [[str(r["time"]), str(r["boolean"]).lower()] for r in reversed(expected)]
            _wait_for(lambda want=want: rows() == want, f"the ASK's answers {want}")
            points = driver.find_element(By.CSS_SELECTOR, "#plot polyline").get_attribute("points").split()
            assert len(points) == len(expected) and "true" in str(want) and "false" in str(want)
        else:
            prefixes = {"ex": "http://ex.org/"}
            want = [[str(r["time"]), " ".join(_readable(term, prefixes) for term in _terms(triple))]
                    for r in reversed(expected) for triple in r["triples"]]  # fmt: skip
            _wait_for(lambda want=want: rows() == want, f"the CONSTRUCT's triples {want}")
            assert 'two words, "quoted"' in str(want)


def _terms(triple: str) -> list[str]:
    """The terms of a CONSTRUCT's triple as rsp writes it (an N-Triples line)."""
    from rsp.io.ntriples import parse_line

    return list(parse_line(triple if triple.rstrip().endswith(".") else triple + " .")[0])
