"""Fixtures of the pivot page's browser tests: `gpuolap serve` over a fresh
copy of the demo cube (with a write token), headless Chromium driven by
Selenium, and the API called directly to check what the page shows."""

from __future__ import annotations

import json
import os
import queue
import shutil
import subprocess
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
TOKEN = "pivot-test-token"


def find_gpuolap() -> Path:
    given = os.environ.get("GPUOLAP_BIN")
    if given:
        return Path(given)
    for build in ("build", "build-cpu", "build-demo"):
        candidate = ROOT / build / "src" / "gpuolap"
        if candidate.exists():
            return candidate
    pytest.fail("no gpuolap command: build it (scripts/build.sh) or set GPUOLAP_BIN")


class Server:
    """A running `gpuolap serve`; its API called as a client would."""

    def __init__(self, process: subprocess.Popen, url: str, token: str | None = None):
        self.process = process
        self.url = url
        self.token = token  # the bearer token writes need, if any

    def call(self, method: str, path: str, body: dict | None = None, token: str | None = None) -> dict:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.url + path, data=data, method=method)
        if token:
            request.add_header("Authorization", f"Bearer {token}")
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return json.loads(response.read())
        except urllib.error.HTTPError as e:
            raise AssertionError(f"{method} {path}: {e.code} {e.read().decode()}") from None

    def elements(self, dimension: str) -> dict[str, dict]:
        answer = self.call("GET", "/dimension/elements?dimension=" + urllib.request.quote(dimension))
        return {e["name"]: e for e in answer["elements"]}


def start_server(gpuolap: Path, cube: Path, *extra: str) -> Server:
    """Starts `gpuolap serve --cube CUBE --port 0 EXTRA...` and waits for its address."""
    process = subprocess.Popen([str(gpuolap), "serve", "--cube", str(cube), "--port", "0", *extra],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    # Its lines are read by a thread of their own, so that a server that
    # hangs before saying anything fails the suite at the deadline instead
    # of blocking it in a read.
    lines: queue.Queue = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in process.stderr] + [lines.put(None)],
                     daemon=True).start()
    seen = []
    deadline = time.monotonic() + 60
    while (left := deadline - time.monotonic()) > 0:
        try:
            line = lines.get(timeout=left)
        except queue.Empty:
            break
        if line is None:
            break
        if line.startswith("listening on "):
            return Server(process, line.split()[2].rstrip("/"))
        seen.append(line)
    process.kill()
    pytest.fail(f"gpuolap serve did not start within 60 s: {''.join(seen)}")


def stop_server(server: Server) -> None:
    server.process.terminate()
    try:
        server.process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        server.process.kill()


@pytest.fixture(scope="session")
def gpuolap_bin() -> Path:
    return find_gpuolap()


@pytest.fixture
def demo_server(gpuolap_bin, tmp_path):
    """The demo cube, generated as a store, served with the write token TOKEN."""
    cube = tmp_path / "demo"
    subprocess.run([str(gpuolap_bin), "generate", "--kind", "demo", "--format", "store", "--out", str(cube)],
                   check=True, capture_output=True)
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN + "\n")
    server = start_server(gpuolap_bin, cube, "--token-file", str(token_file))
    server.token = TOKEN
    yield server
    stop_server(server)


def chromium_driver():
    """Headless Chromium through chromedriver (Debian's chromium and chromium-driver)."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1400,1000"):
        options.add_argument(argument)
    binary = shutil.which("chromium") or shutil.which("chromium-browser")
    if binary:
        options.binary_location = binary
    driver_path = shutil.which("chromedriver")
    if not binary or not driver_path:
        pytest.fail("the browser tests need chromium and chromedriver (scripts/setup.sh installs Debian's)")
    return webdriver.Chrome(service=Service(driver_path), options=options)


@pytest.fixture
def browser():
    driver = chromium_driver()
    yield driver
    driver.quit()


@pytest.fixture
def screenshots() -> Path | None:
    """Where to keep screenshots (GPUOLAP_PIVOT_SCREENSHOTS, e.g. docs/), or None."""
    given = os.environ.get("GPUOLAP_PIVOT_SCREENSHOTS")
    return Path(given) if given else None
