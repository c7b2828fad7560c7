"""`dshc ui` in headless Chromium: the real server process, the real page, clicked and typed at.

Needs Playwright for Python (the test extra) and a Chromium on the machine (Debian: `apt-get install
chromium`; another binary through DSHC_CHROMIUM); Playwright's own browser download is never used.
With DSHC_UI_SCREENSHOTS=DIR the views are saved there as ui-*.png (how docs/ui-*.png are made).
"""

from __future__ import annotations

import functools
import http.client
import json
import os
import queue
import shutil
import signal
import subprocess
import sys
import threading
import urllib.parse
from pathlib import Path

import pytest

from test_ui import shipped_tree, with_fetch

sync_api = pytest.importorskip(
    "playwright.sync_api", reason="Playwright for Python is not installed: pip install '.[test]'"
)


def _chromium() -> str | None:
    if os.environ.get("DSHC_CHROMIUM"):
        return os.environ["DSHC_CHROMIUM"]
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        found = shutil.which(name)
        if found:
            return found
    return None


CHROMIUM = _chromium()
pytestmark = pytest.mark.skipif(
    CHROMIUM is None,
    reason="no Chromium on this machine (Debian: apt-get install chromium; or point DSHC_CHROMIUM at one)",
)
SHOTS = os.environ.get("DSHC_UI_SCREENSHOTS")
WAIT_MS = 30_000  # only reached on failure; the shared CI machine can be slow


def shot(page, name: str) -> None:
    if SHOTS:
        page.screenshot(path=str(Path(SHOTS) / f"ui-{name}.png"))


class Server:
    """A `dshc ui` process starting in the background; `url` waits for the line announcing it."""

    def __init__(self, proc: subprocess.Popen, work: Path):
        self.proc, self.work = proc, work
        self._first: queue.Queue = queue.Queue()
        threading.Thread(target=lambda: self._first.put(proc.stdout.readline()), daemon=True).start()

    @functools.cached_property
    def url(self) -> str:
        first = self._first.get(timeout=60)
        assert first.startswith("dshc ui: serving http://127.0.0.1:"), (first, (self.work / "server.err").read_text())
        return first.split()[3]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """`dshc ui decls --no-shipped --port 0 --against wider` in a folder of its own; ended by its pid."""
    work = tmp_path_factory.mktemp("ui")
    shipped_tree(work / "decls")
    with_fetch(shipped_tree(work / "wider"))
    log = open(work / "server.err", "w")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys; from dshc.cli.main import main; sys.exit(main())",
            "ui",
            "decls",
            "--no-shipped",
            "--port",
            "0",
            "--against",
            "wider",
        ],
        cwd=work,
        stdout=subprocess.PIPE,
        stderr=log,
        text=True,
    )
    try:
        started = Server(proc, work)
        yield started
        # an open event stream must not hold up shutdown: Ctrl-C ends the server promptly and cleanly
        stream = http.client.HTTPConnection(urllib.parse.urlsplit(started.url).netloc, timeout=10)
        stream.request("GET", "/api/events")
        assert stream.getresponse().readline() == b"event: state\n"
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=10) == 128 + signal.SIGINT
        assert "ERROR" not in (work / "server.err").read_text()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        log.close()


@pytest.fixture(scope="module")
def page(server):
    with sync_api.sync_playwright() as playwright:
        args = ["--no-sandbox"] if os.geteuid() == 0 else []  # Chromium's own sandbox refuses to run as root
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=args)  # while the server starts
        page = browser.new_page(viewport={"width": 1280, "height": 800})
        page.set_default_timeout(WAIT_MS)
        problems: list[str] = []
        page.on("pageerror", lambda exc: problems.append(str(exc)))
        page.on("console", lambda msg: problems.append(msg.text) if msg.type == "error" else None)
        page.goto(server.url)
        page.wait_for_selector('#matrix th[data-col-label="standard"]')
        yield page
        browser.close()
        assert problems == []


def column(page, label: str) -> str:
    return page.get_attribute(f'#matrix th[data-col-label="{label}"]', "data-col")


def cell(page, tool: str, label: str) -> str:
    return f'#matrix td[data-tool="{tool}"][data-col="{column(page, label)}"]'


def test_standard_minimal_and_code_columns_are_what_compile_prints(page, server, cli):
    work = server.work
    for preset in ("standard", "minimal", "code"):
        compiled = cli(
            "compile", preset, "--host", "web", "--json", "--no-shipped", "--load", str(work / "decls")
        ).json()
        col = column(page, preset)
        on_wire = page.eval_on_selector_all(
            f'#matrix td[data-col="{col}"][data-wire="true"]', "cells => cells.map(c => c.dataset.tool)"
        )
        assert sorted(on_wire) == sorted(t["name"] for t in compiled["tools"])
        index = int(col) + 2  # the fingerprint row: the tool header, then one cell per column (1-based)
        assert (
            page.get_attribute(f"#matrix thead tr:nth-child(2) th:nth-child({index})", "title")
            == compiled["fingerprint"]
        )
        assert page.inner_text(f'#matrix th[data-count-col="{col}"]').startswith(
            f"{len(compiled['tools'])} on the wire"
        )
    # readable without colour: every cell carries a text label; and the page fits 1280 px across
    assert page.eval_on_selector_all("#matrix td", "cells => cells.every(c => c.textContent.trim().length > 0)")
    assert page.evaluate("document.documentElement.scrollWidth") <= 1280
    shot(page, "matrix")


def test_clicking_a_cell_shows_the_gate_trace_source_and_fix(page):
    page.click(cell(page, "web_fetch", "standard"))
    page.wait_for_selector('#explain tr[data-gate="registered"][data-status="fail"]')
    assert "gate `registered` fails" in page.inner_text("#explain-title")
    statuses = page.eval_on_selector_all("#explain tr[data-gate]", "rows => rows.map(r => r.dataset.status)")
    assert statuses == ["fail", "not-reached", "not-reached", "not-reached", "not-reached"]
    assert "fetch = false" in page.inner_text("#explain .excerpt .ln.hl")
    assert "set `fetch = true` in that mount" in page.inner_text("#explain .fix")
    shot(page, "explain")


def test_the_matrix_and_tabs_work_from_the_keyboard(page):
    first = cell(page, "bash", "standard")
    page.focus(first)
    below = page.get_attribute(first, "data-row")
    page.keyboard.press("ArrowDown")
    tool = page.evaluate("document.activeElement.dataset.tool")
    assert page.evaluate("document.activeElement.dataset.row") == str(int(below) + 1)
    page.keyboard.press("Enter")
    page.wait_for_function(
        "t => document.querySelector('#explain-title')?.textContent.includes('`' + t + '`')", arg=tool
    )
    page.focus("#tab-matrix")
    page.keyboard.press("ArrowRight")
    assert page.get_attribute("#tab-diff", "aria-selected") == "true" and page.is_visible("#view-diff")
    page.keyboard.press("ArrowLeft")
    assert page.is_visible("#view-matrix")


def test_cells_coloured_by_the_decision_for_an_argument_class(page, server):
    work = server.work
    from dshc.compiler.program import Program
    from dshc.compiler.request import Request

    program = Program.load([work / "decls"], shipped=False)
    args = {"sandbox_permissions": "value"}  # an escalation: asked under two policies, allowed under one
    page.uncheck("#vary-preset")
    page.check("#vary-policy")
    page.wait_for_selector('#matrix th[data-col-label="read-only"]')
    page.check('input[name="colour"][value="decision"]')
    page.select_option("#arg-class", value=json.dumps(args, separators=(",", ":")))
    page.wait_for_selector("#matrix td.d-ask")
    for policy in ("read-only", "workspace-write", "danger-full-access"):
        for tool in ("write", "read"):
            expected = program.decide(Request(preset="standard", policy=policy), tool, args, workspace="/workspace")
            assert page.inner_text(cell(page, tool, policy)) == expected.effect
    page.click(cell(page, "write", "read-only"))
    page.wait_for_selector('#explain .decision[data-effect="ask"]')
    assert "read-only" in page.inner_text("#explain .hint")
    shot(page, "decision")
    page.check('input[name="colour"][value="gate"]')
    page.uncheck("#vary-policy")
    page.check("#vary-preset")
    page.wait_for_selector('#matrix th[data-col-label="standard"]')


def test_graph_draws_the_composition_with_cuts_dashed(page):
    page.click("#tab-graph")
    page.wait_for_selector("#graph svg g.node")
    dashed = page.eval_on_selector_all(
        "#graph g.edge.cut path", "ps => ps.map(p => p.getAttribute('stroke-dasharray'))"
    )
    assert dashed and all(dashed)
    assert "web_fetch: removed by `fetch = false`" in page.inner_text("#cuts")
    shot(page, "graph")


def test_a_diff_of_two_trees_shows_the_fetch_widening(page):
    page.click("#tab-diff")
    page.fill("#diff-old", "@current")
    page.fill("#diff-new", "wider")  # the tree with `fetch = true`, beside the served one
    page.check("#diff-only")  # the matrix's context alone: every cell is the API test's (and `dshc diff`'s) work
    page.click("#diff-form button[type=submit]")
    change = page.wait_for_selector('#diff-result .change.widening[data-tool="web_fetch"]')
    text = change.inner_text()
    assert "WIDENS" in text and "fetch = false" in text and "witness: call web_fetch in standard · web · linux" in text
    assert page.get_attribute("#diff-result .summary", "data-widening") == "true"
    shot(page, "diff")


def test_editing_a_file_updates_the_page_and_shows_errors(page, server):
    work = server.work
    path = work / "decls" / "standard.dsh"
    original = path.read_text()
    page.click("#tab-matrix")
    page.wait_for_selector(cell(page, "web_fetch", "standard") + '[data-wire="false"]')
    try:
        path.write_text(original.replace("fetch = false", "fetch = true"))
        page.wait_for_selector(cell(page, "web_fetch", "standard") + '[data-wire="true"]')
        path.write_text(original.replace("mount tool-fs\n", "mount tool-fss\n", 1))
        page.wait_for_selector("#errors:not([hidden])")
        error = page.inner_text("#error-text")
        assert "error[DSH201]" in error and "^" in error and "did you mean `tool-fs`" in error
        assert "last version that loaded" in page.inner_text("#errors")
        shot(page, "live")
    finally:
        path.write_text(original)
    page.wait_for_selector("#errors", state="hidden")
    page.wait_for_selector(cell(page, "web_fetch", "standard") + '[data-wire="false"]')
