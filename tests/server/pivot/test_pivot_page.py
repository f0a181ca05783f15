"""The pivot page of `gpuolap serve`, in headless Chromium: it opens on the
demo cube, drills down twice, rolls up, moves dimensions between the axes,
writes a value, and every number it shows equals the API's answer for the
same cell (POST /cell/values), asked separately."""

from __future__ import annotations

import math
import re
import urllib.request

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select, WebDriverWait


def generation(browser) -> int:
    return browser.execute_script("return window.pivot ? window.pivot.generation : 0")


def wait_for_view(browser, after: int) -> None:
    """Waits until the page has drawn a view newer than `after`; fails on its error."""

    def drawn(driver):
        state = driver.find_element(By.ID, "pivot-table").get_attribute("data-state")
        if state == "error":
            raise AssertionError("the page reports: " + driver.find_element(By.ID, "status").text)
        return state == "ready" and generation(driver) > after

    WebDriverWait(browser, 30).until(drawn)


def row_headers(browser, dimension: str) -> list[str]:
    return browser.execute_script(
        "return Array.from(document.querySelectorAll('#pivot-table tbody th[data-dim=\"' + arguments[0] + '\"]'))"
        ".map(th => th.dataset.element)", dimension)


def column_headers(browser, dimension: str) -> list[str]:
    return browser.execute_script(
        "return Array.from(document.querySelectorAll('#pivot-table thead th[data-dim=\"' + arguments[0] + '\"]'))"
        ".map(th => th.dataset.element)", dimension)


def shown_cells(browser) -> list[tuple[list[str], float | None]]:
    cells = browser.execute_script(
        "return Array.from(document.querySelectorAll('#pivot-table td.value'))"
        ".map(td => [JSON.parse(td.dataset.path), td.dataset.value === undefined ? null : td.dataset.value])")
    return [(path, None if value is None else float(value)) for path, value in cells]


def assert_cells_match_api(server, browser, measure: str = "Revenue", aggregate: str = "sum") -> int:
    """Every cell the page shows equals the API's value of its path; returns the count."""
    cells = shown_cells(browser)
    assert cells, "the page shows no cells"
    answer = server.call("POST", "/cell/values", {"paths": [p for p, _ in cells], "measure": measure, "aggregate": aggregate})
    for (path, shown), expected in zip(cells, answer["cells"]):
        assert expected["path"] == path
        if expected["value"] is None:
            assert shown is None, f"{path}: the page shows {shown}, the API has no value"
        else:
            assert shown is not None and math.isclose(shown, expected["value"], rel_tol=1e-12, abs_tol=1e-9), \
                f"{path}: the page shows {shown}, the API {expected['value']}"
    return len(cells)


def click_element(browser, dimension: str, element: str) -> None:
    """Clicks a header's drill toggle and waits for the new view."""
    before = generation(browser)
    browser.find_element(By.CSS_SELECTOR, f'th[data-dim="{dimension}"][data-element="{element}"] .toggle').click()
    wait_for_view(browser, before)


def expected_rows(elements: dict[str, dict], tops: list[str], expanded: set[str]) -> list[str]:
    out: list[str] = []

    def walk(name: str) -> None:
        out.append(name)
        if name in expanded:
            for child in elements[name]["children"]:
                walk(child["name"])

    for top in tops:
        walk(top)
    return out


def open_page(browser, server) -> None:
    browser.get(server.url + "/")
    wait_for_view(browser, 0)


def test_drill_down_twice_roll_up_and_the_numbers_equal_the_api(demo_server, browser, screenshots):
    server = demo_server
    open_page(browser, server)
    info = server.call("GET", "/cube/info")
    rows_dim, cols_dim, slicer_dim = (d["name"] for d in info["dimensions"])
    years = server.elements(rows_dim)
    tops = [name for name, e in years.items() if not e["parents"]]
    assert row_headers(browser, rows_dim) == tops
    assert column_headers(browser, cols_dim) == [n for n, e in server.elements(cols_dim).items() if not e["parents"]]
    assert assert_cells_match_api(server, browser) > 0

    # Drill down into the top element: its children appear under it.
    top = next(name for name in tops if years[name]["children"])
    click_element(browser, rows_dim, top)
    assert row_headers(browser, rows_dim) == expected_rows(years, tops, {top})
    assert_cells_match_api(server, browser)

    # Again, into a child that has children of its own.
    child = next(c["name"] for c in years[top]["children"] if years[c["name"]]["children"])
    click_element(browser, rows_dim, child)
    shown = row_headers(browser, rows_dim)
    assert shown == expected_rows(years, tops, {top, child})
    assert len(shown) == len(tops) + len(years[top]["children"]) + len(years[child]["children"])
    assert_cells_match_api(server, browser)
    if screenshots:
        browser.save_screenshot(str(screenshots / "pivot-drill-down.png"))

    # Roll up the top element: everything under it goes, its drilled child too.
    click_element(browser, rows_dim, top)
    assert row_headers(browser, rows_dim) == tops
    click_element(browser, rows_dim, top)
    assert row_headers(browser, rows_dim) == expected_rows(years, tops, {top})

    # The bar chart draws one bar per non-empty visible cell; the line chart a line per column.
    bars = browser.find_elements(By.CSS_SELECTOR, "#chart rect[data-series]")
    assert len(bars) == sum(1 for _, v in shown_cells(browser) if v is not None)
    Select(browser.find_element(By.ID, "chart-kind")).select_by_value("line")
    assert len(browser.find_elements(By.CSS_SELECTOR, "#chart polyline")) == len(column_headers(browser, cols_dim))
    assert slicer_dim in browser.find_element(By.ID, "axes").text


def test_axes_slicer_measure_and_aggregate(demo_server, browser):
    server = demo_server
    open_page(browser, server)
    info = server.call("GET", "/cube/info")
    rows_dim, cols_dim, slicer_dim = (d["name"] for d in info["dimensions"])

    # The third dimension joins the columns: two levels of column headers.
    before = generation(browser)
    Select(browser.find_element(By.CSS_SELECTOR, f'.axis-card[data-dim="{slicer_dim}"] select.axis')).select_by_value("columns")
    wait_for_view(browser, before)
    assert column_headers(browser, slicer_dim), "the moved dimension has no headers"
    click_element(browser, slicer_dim, column_headers(browser, slicer_dim)[0])
    assert_cells_match_api(server, browser)

    # The first dimension goes to the slicer, on one of its base elements.
    before = generation(browser)
    Select(browser.find_element(By.CSS_SELECTOR, f'.axis-card[data-dim="{rows_dim}"] select.axis')).select_by_value("slicer")
    wait_for_view(browser, before)
    base = next(name for name, e in server.elements(rows_dim).items() if e["type"] == "base")
    before = generation(browser)
    Select(browser.find_element(By.CSS_SELECTOR, f'.axis-card[data-dim="{rows_dim}"] select.slice')).select_by_value(base)
    wait_for_view(browser, before)
    assert all(path[0] == base for path, _ in shown_cells(browser))
    assert_cells_match_api(server, browser)

    # Another measure and aggregate.
    measure = info["measures"][-1]
    before = generation(browser)
    Select(browser.find_element(By.ID, "measure")).select_by_value(measure)
    wait_for_view(browser, before)
    before = generation(browser)
    Select(browser.find_element(By.ID, "aggregate")).select_by_value("count")
    wait_for_view(browser, before)
    assert_cells_match_api(server, browser, measure=measure, aggregate="count")


def test_writing_a_cell_needs_the_token_and_shows_the_new_value(demo_server, browser, screenshots):
    server = demo_server
    open_page(browser, server)
    info = server.call("GET", "/cube/info")
    rows_dim = info["dimensions"][0]["name"]
    top = row_headers(browser, rows_dim)[0]
    click_element(browser, rows_dim, top)
    target = browser.find_elements(By.CSS_SELECTOR, "#pivot-table td.value")[1]
    path = target.get_attribute("data-path")

    def write(value: str) -> None:
        cell = browser.find_element(By.CSS_SELECTOR, f"#pivot-table td.value[data-path='{path}']")
        cell.click()
        field = cell.find_element(By.TAG_NAME, "input")
        field.send_keys(Keys.CONTROL, "a")
        field.send_keys(value, Keys.ENTER)

    # Without the token the server refuses, and the page says so.
    write("12345.5")
    WebDriverWait(browser, 30).until(lambda d: "unauthorized" in d.find_element(By.ID, "status").text)
    assert server.call("GET", "/cell/value?path=" + urllib.request.quote(path))["value"] != 12345.5

    token = browser.find_element(By.ID, "token")
    token.send_keys(server.token)
    before = generation(browser)
    write("12345.5")
    wait_for_view(browser, before)
    assert re.search(r"^wrote .*base cell", browser.find_element(By.ID, "status").text)
    value = server.call("GET", "/cell/value?path=" + urllib.request.quote(path))["value"]
    assert math.isclose(value, 12345.5, rel_tol=1e-12)
    cell = browser.find_element(By.CSS_SELECTOR, f"#pivot-table td.value[data-path='{path}']")
    assert math.isclose(float(cell.get_attribute("data-value")), 12345.5, rel_tol=1e-12)
    assert_cells_match_api(server, browser)
    if screenshots:
        browser.save_screenshot(str(screenshots / "pivot-after-write.png"))


def test_the_page_is_in_the_binary_and_fetches_nothing_from_elsewhere(demo_server):
    for path, media in (("/", "text/html"), ("/pivot.js", "text/javascript"), ("/pivot.css", "text/css")):
        with urllib.request.urlopen(demo_server.url + path, timeout=30) as response:
            assert response.headers["Content-Type"].startswith(media)
            body = response.read().decode()
        assert not re.search(r"(src|href)\s*=\s*[\"']?(https?:)?//", body), f"{path} loads something from elsewhere"
        assert "fetch('http" not in body and 'fetch("http' not in body


def test_a_view_the_server_refuses_leaves_the_last_one_and_its_controls(gpuolap_bin, tmp_path, browser):
    from conftest import start_server, stop_server
    import subprocess

    cube = tmp_path / "demo"
    subprocess.run([str(gpuolap_bin), "generate", "--kind", "demo", "--format", "store", "--out", str(cube)],
                   check=True, capture_output=True)
    server = start_server(gpuolap_bin, cube, "--max-cells", "8")
    try:
        open_page(browser, server)
        info = server.call("GET", "/cube/info")
        rows_dim, _, slicer_dim = (d["name"] for d in info["dimensions"])
        years = server.elements(rows_dim)
        top = row_headers(browser, rows_dim)[0]
        click_element(browser, rows_dim, top)  # 4 years x 2 products: 8 cells, at the limit
        drilled = row_headers(browser, rows_dim)
        # Drilling a year too asks for more than 8 cells: refused; the view and its toggle stay.
        year = next(c["name"] for c in years[top]["children"] if years[c["name"]]["children"])
        browser.find_element(By.CSS_SELECTOR, f'th[data-dim="{rows_dim}"][data-element="{year}"] .toggle').click()
        WebDriverWait(browser, 30).until(lambda d: "too_many_cells" in d.find_element(By.ID, "status").text)
        assert row_headers(browser, rows_dim) == drilled
        toggle = browser.find_element(By.CSS_SELECTOR, f'th[data-dim="{rows_dim}"][data-element="{year}"] .toggle')
        assert toggle.get_attribute("data-expanded") == "false"

        def move(dimension: str, axis: str) -> None:
            before = generation(browser)
            Select(browser.find_element(By.CSS_SELECTOR, f'.axis-card[data-dim="{dimension}"] select.axis')).select_by_value(axis)
            wait_for_view(browser, before)

        # The years to the slicer, the regions to the rows, drilled: 4 regions x 2 products.
        move(rows_dim, "slicer")
        move(slicer_dim, "rows")
        click_element(browser, slicer_dim, row_headers(browser, slicer_dim)[0])
        # The drilled years back onto the rows would make 32 cells: refused, their card goes back to the slicer.
        Select(browser.find_element(By.CSS_SELECTOR, f'.axis-card[data-dim="{rows_dim}"] select.axis')).select_by_value("rows")
        WebDriverWait(browser, 30).until(lambda d: "too_many_cells" in d.find_element(By.ID, "status").text)
        WebDriverWait(browser, 30).until(lambda d: d.find_element(
            By.CSS_SELECTOR, f'.axis-card[data-dim="{rows_dim}"]').get_attribute("data-axis") == "slicer")
        # The view that fits still works, and its numbers are the API's.
        before = generation(browser)
        Select(browser.find_element(By.ID, "aggregate")).select_by_value("max")
        wait_for_view(browser, before)
        assert_cells_match_api(server, browser, aggregate="max")
    finally:
        stop_server(server)


def test_an_element_under_two_parents_is_drilled_and_rolled_up_where_it_is_shown(gpuolap_bin, tmp_path, browser):
    # Org: A = {x, S}, B = {S, z}, S = {y}: S shows under A and under B, and
    # each of its places is drilled and rolled up apart (the page keeps the
    # drill state by path; kept by name, rolling up A rolled up S under B).
    import json
    import subprocess

    from conftest import start_server, stop_server

    schema = {"name": "Shared", "measures": ["Revenue"], "dimensions": [
        {"name": "Org", "elements": [
            {"name": "x"}, {"name": "y"}, {"name": "z"},
            {"name": "S", "children": [{"name": "y"}]},
            {"name": "A", "children": [{"name": "x"}, {"name": "S"}]},
            {"name": "B", "children": [{"name": "S"}, {"name": "z"}]}]},
        {"name": "Product", "elements": [{"name": "p1"}, {"name": "p2"},
                                         {"name": "All", "children": [{"name": "p1"}, {"name": "p2"}]}]},
        {"name": "Region", "elements": [{"name": "r1"}]}]}
    (tmp_path / "schema.json").write_text(json.dumps(schema))
    (tmp_path / "facts.csv").write_text(
        "Org,Product,Region,Revenue\nx,p1,r1,1\ny,p1,r1,20\ny,p2,r1,300\nz,p2,r1,4000\n")
    cube = tmp_path / "shared"
    subprocess.run([str(gpuolap_bin), "create", "--schema", str(tmp_path / "schema.json"), "--facts",
                    str(tmp_path / "facts.csv"), "--out", str(cube)], check=True, capture_output=True)
    server = start_server(gpuolap_bin, cube)
    try:
        open_page(browser, server)

        def click(element: str, nth: int) -> None:
            before = generation(browser)
            browser.find_elements(By.CSS_SELECTOR, f'th[data-dim="Org"][data-element="{element}"] .toggle')[nth].click()
            wait_for_view(browser, before)

        assert row_headers(browser, "Org") == ["A", "B"]
        click("A", 0)
        click("S", 0)
        assert row_headers(browser, "Org") == ["A", "x", "S", "y", "B"]
        click("B", 0)  # S under B shows rolled up
        assert row_headers(browser, "Org") == ["A", "x", "S", "y", "B", "S", "z"]
        click("S", 1)
        assert row_headers(browser, "Org") == ["A", "x", "S", "y", "B", "S", "y", "z"]
        click("A", 0)  # A and the S under it roll up; the S under B stays drilled
        assert row_headers(browser, "Org") == ["A", "B", "S", "y", "z"]
        click("A", 0)  # drilled again, the S under A comes back rolled up
        assert row_headers(browser, "Org") == ["A", "x", "S", "B", "S", "y", "z"]
        assert assert_cells_match_api(server, browser) > 0
    finally:
        stop_server(server)
