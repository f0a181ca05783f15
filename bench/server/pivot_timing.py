#!/usr/bin/env python3
"""The pivot page's times as a browser sees them (issue 25's targets).

Starts `gpuolap serve` on a generated cube store and drives the page in
headless Chromium (Selenium, Debian's chromium and chromedriver):

- first paint: the page loaded --loads times in a fresh tab each; per load
  the browser's first contentful paint and the `pivot-ready` mark (the first
  table drawn, after GET /cube/info, every dimension's elements and one
  POST /cell/area), both from the start of navigation;
- drill-down: --drills times, a click on the first row dimension's first
  consolidated element (drill down), then again (roll up), after the
  dimensions named by --rows and --columns were put there (a cube given as
  kind:scale:rows:columns, e.g. biker:0.01:Customers:Years); per click the
  time from the click to the new view drawn (the page's own clock, from the
  handler to the table and chart drawn: window.pivot.last.total_ms) and the
  part of it the server's answer took (answer_ms).

Prints a markdown table with the median, the 90th percentile and the
maximum of each, for each cube.

    python3 bench/server/pivot_timing.py [--bin build/src/gpuolap]
        [--cubes demo,biker:0.01,biker:0.01:Customers:Years] [--loads 20] [--drills 20] [--label TEXT]
"""
import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select, WebDriverWait


def start_server(gpuolap, cube):
    process = subprocess.Popen([gpuolap, "serve", "--cube", str(cube), "--port", "0"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    for line in process.stderr:
        if line.startswith("listening on "):
            return process, line.split()[2].rstrip("/")
    sys.exit("gpuolap serve did not start")


def browser():
    options = webdriver.ChromeOptions()
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1400,1000"):
        options.add_argument(argument)
    options.binary_location = shutil.which("chromium") or shutil.which("chromium-browser")
    return webdriver.Chrome(service=Service(shutil.which("chromedriver")), options=options)


def wait_for_view(driver, after):
    WebDriverWait(driver, 60).until(lambda d: d.execute_script(
        "const t = document.getElementById('pivot-table');"
        "if (t.dataset.state === 'error') throw new Error(document.getElementById('status').textContent);"
        "return t.dataset.state === 'ready' && window.pivot.generation > arguments[0]", after))


def summary(values):
    values = sorted(values)
    p90 = values[min(len(values) - 1, int(round(0.9 * (len(values) - 1))))]
    return f"{statistics.median(values):.1f} | {p90:.1f} | {values[-1]:.1f}"


def put_on_axis(driver, dimension, axis):
    select = driver.find_element(By.CSS_SELECTOR, f'.axis-card[data-dim={json.dumps(dimension)}] select.axis')
    if select.get_attribute("value") == axis:
        return
    for card in driver.find_elements(By.CSS_SELECTOR, f'.axis-card[data-axis="{axis}"]'):
        before = driver.execute_script("return window.pivot.generation")
        Select(card.find_element(By.CSS_SELECTOR, "select.axis")).select_by_value("slicer")
        wait_for_view(driver, before)
    before = driver.execute_script("return window.pivot.generation")
    Select(driver.find_element(By.CSS_SELECTOR, f'.axis-card[data-dim={json.dumps(dimension)}] select.axis')).select_by_value(axis)
    wait_for_view(driver, before)


def measure(gpuolap, cube, loads, drills, rows_dim, columns_dim):
    process, url = start_server(gpuolap, cube)
    driver = browser()
    rows = []
    try:
        paint, ready = [], []
        for _ in range(loads):
            driver.get("about:blank")
            driver.get(url + "/")
            wait_for_view(driver, 0)
            times = driver.execute_script(
                "return [performance.getEntriesByName('first-contentful-paint')[0].startTime,"
                " performance.getEntriesByName('pivot-ready')[0].startTime]")
            paint.append(times[0])
            ready.append(times[1])
        rows.append(("first contentful paint", paint))
        rows.append(("first table drawn (pivot-ready)", ready))
        if rows_dim:
            put_on_axis(driver, rows_dim, "rows")
        if columns_dim:
            put_on_axis(driver, columns_dim, "columns")
        # The first row dimension's first consolidated element, drilled and rolled up.
        toggle = "#pivot-table tbody th[data-element] .toggle"
        element = driver.find_element(By.CSS_SELECTOR, toggle).find_element(By.XPATH, "..").get_attribute("data-element")
        shown = {"drill down": [], "roll up": []}
        answered = {"drill down": [], "roll up": []}
        cells = 0
        for i in range(2 * drills):
            kind = "drill down" if i % 2 == 0 else "roll up"
            before = driver.execute_script("return window.pivot.generation")
            driver.find_element(By.CSS_SELECTOR, f'th[data-element={json.dumps(element)}] .toggle').click()
            wait_for_view(driver, before)
            last = driver.execute_script("return window.pivot.last")
            shown[kind].append(last["total_ms"])
            answered[kind].append(last["answer_ms"])
            if kind == "drill down":
                cells = last["target_cells"]
        for kind in ("drill down", "roll up"):
            rows.append((f"{kind} '{element}': click to view drawn", shown[kind]))
            rows.append((f"{kind} '{element}': of which the answer", answered[kind]))
        return rows, cells
    finally:
        driver.quit()
        process.terminate()
        process.wait()


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bin", default="build/src/gpuolap")
    parser.add_argument("--cubes", default="demo,biker:0.01,biker:0.01:Customers:Years",
                        help="kind[:scale[:rows[:columns]]],...: gpuolap generate's kind and scale, the dimensions put on the axes")
    parser.add_argument("--loads", type=int, default=20)
    parser.add_argument("--drills", type=int, default=20)
    parser.add_argument("--label", default="")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as work:
        print(f"{args.label}\n" if args.label else "", end="")
        print("| cube | measurement | median ms | p90 ms | max ms |\n|---|---|---:|---:|---:|")
        for spec in args.cubes.split(","):
            kind, scale, rows_dim, columns_dim = (spec.split(":") + ["", "", ""])[:4]
            cube = Path(work) / f"{kind}-{scale}"
            if not cube.exists():
                command = [args.bin, "generate", "--kind", kind, "--format", "store", "--out", str(cube)]
                subprocess.run(command + (["--scale", scale] if scale else []), check=True, capture_output=True)
            started = time.monotonic()
            rows, cells = measure(args.bin, cube, args.loads, args.drills, rows_dim, columns_dim)
            for name, values in rows:
                print(f"| {spec} | {name} | {summary(values)} |")
            print(f"<!-- {spec}: the drilled view has {cells} target cells; {time.monotonic() - started:.0f} s -->")


if __name__ == "__main__":
    main()
