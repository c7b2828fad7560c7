"""`dshc ui` without a browser: the JSON API against the CLI's own answers, live reload, and bad input."""

from __future__ import annotations

import shutil
import socket
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from dshc.cli.ui import svg
from dshc.cli.ui.live import LiveProgram
from dshc.cli.ui.server import build_app
from dshc.compiler.graph import composition_graph
from dshc.compiler.program import Program
from dshc.compiler.request import Request

ROOT = Path(__file__).resolve().parents[1]
BASE = {
    "preset": "standard",
    "host": "web",
    "platform": "linux",
    "scope": "root",
    "mode": None,
    "policy": None,
    "plan": False,
}


def shipped_tree(folder: Path) -> Path:
    folder.mkdir()
    for source in (*sorted((ROOT / "presets").glob("*.dsh")), *sorted((ROOT / "policies").glob("*.dsh"))):
        shutil.copy(source, folder / source.name)
    return folder


def with_fetch(tree: Path) -> None:
    path = tree / "standard.dsh"
    text = path.read_text()
    assert "fetch = false" in text
    path.write_text(text.replace("fetch = false", "fetch = true"))


@pytest.fixture
def tree(tmp_path) -> Path:
    return shipped_tree(tmp_path / "decls")


@pytest.fixture
def live(tree) -> LiveProgram:
    return LiveProgram(lambda: Program.load([tree], shipped=False), [tree])


@pytest.fixture
def client(live) -> TestClient:
    return TestClient(build_app(live), base_url="http://127.0.0.1")


def post(client, path, body):
    return client.post(path, json=body)


def test_matrix_columns_are_what_compile_prints(client, cli, tree):
    data = post(client, "/api/matrix", {"base": BASE, "vary": ["preset"]}).json()
    by_label = {c["label"]: (i, c) for i, c in enumerate(data["columns"])}
    for preset in ("standard", "minimal", "code"):
        i, column = by_label[preset]
        compiled = cli("compile", preset, "--host", "web", "--json", "--no-shipped", "--load", str(tree)).json()
        wire = sorted(name for name in data["tools"] if data["cells"][name][i]["wire"])
        assert wire == sorted(t["name"] for t in compiled["tools"]) == column["wire"]
        assert column["fingerprint"] == compiled["fingerprint"]
        assert column["counts"]["on the wire"] == len(compiled["tools"])
        if preset == "code":  # the rest is reachable through run_code, and labelled so
            assert wire == ["run_code"]
            sdk = sorted(name for name in data["tools"] if data["cells"][name][i]["label"] == "sdk")
            assert sdk == sorted(t["name"] for t in compiled["sdk"])
    # the host's roster-less preset `base` cannot compose on `web`: the column says why instead of cells
    _, base = by_label["base"]
    assert "DSH401" in base["error"] and "^" in base["error"] and base["counts"] == {}


def test_each_cell_names_the_first_failing_gate_explain_reports(client, program):
    data = post(client, "/api/matrix", {"base": {**BASE, "scope": "child"}, "vary": ["mode"]}).json()
    for i, column in enumerate(data["columns"]):
        request = Request(**{k: v for k, v in column["context"].items() if v is not None})
        table = program.explain_all(request)
        for name in data["tools"]:
            expected = next((r.gate for r in table[name] if r.status == "fail"), None)
            assert data["cells"][name][i]["gate"] == expected, (name, column["label"])


def test_decision_colouring_is_program_decide(client, program):
    args = {"file_path": "/outside-the-workspace/file.txt"}
    data = post(client, "/api/matrix", {"base": BASE, "vary": ["policy"], "colour": "decision", "args": args}).json()
    seen = set()
    for i, column in enumerate(data["columns"]):
        request = Request(**{k: v for k, v in column["context"].items() if v is not None})
        for name in ("write", "read", "web_fetch"):
            decision = program.decide(request, name, args, workspace="/workspace")
            assert data["cells"][name][i]["decision"] == decision.effect
            seen.add((name, decision.effect))
    # read-only denies it; workspace-write lets it run (its sandbox refuses the write at execution)
    assert ("write", "deny") in seen and ("write", "allow") in seen
    assert ("web_fetch", "deny") in seen and data["cells"]["web_fetch"][0]["label"] == "deny @reg"


def test_explain_highlights_the_deciding_line_and_gives_the_fix(client):
    data = post(client, "/api/explain", {"context": BASE, "tool": "web_fetch"}).json()
    assert data["failed_gate"] == "registered" and not data["available"]
    assert [g["status"] for g in data["gates"]] == ["fail", "not-reached", "not-reached", "not-reached", "not-reached"]
    deciding = data["deciding"]
    assert deciding["fix"] == "set `fetch = true` in that mount"
    marked = [line["text"] for line in deciding["excerpt"]["lines"] if line["hl"]]
    assert len(marked) == 1 and "fetch = false" in marked[0]
    assert deciding["source"].endswith(f"standard.dsh:{deciding['excerpt']['line']}:20")


def test_explain_with_arguments_shows_the_deciding_rule(client):
    args = {
        "file_path": "/outside-the-workspace/file.txt",
        "sandbox_permissions": "danger-full-access",
        "justification": "write outside",
    }
    data = post(
        client, "/api/explain", {"context": {**BASE, "policy": "workspace-write"}, "tool": "write", "args": args}
    ).json()
    assert data["decision"]["effect"] == "ask"
    rule = data["decision"]["rules"][0]
    assert any("has args.sandbox_permissions" in line["text"] for line in rule["excerpt"]["lines"] if line["hl"])


def test_diff_of_two_trees_shows_the_fetch_widening(live, tmp_path):
    wider = shipped_tree(tmp_path / "wider")
    with_fetch(wider)
    client = TestClient(build_app(live, trees=[wider]), base_url="http://127.0.0.1")
    data = post(client, "/api/diff", {"old": "@current", "new": str(wider)}).json()
    assert data["widening"] and data["kind"] == "trees"
    [change] = data["changes"]
    assert (change["tool"], change["kind"], change["widening"]) == ("web_fetch", "added", True)
    assert "fetch = false" in change["old"]["reason"] and change["new"]["source"].startswith(str(wider))
    assert change["witness_text"].startswith("call web_fetch in ")
    assert change["cells_total"] > len(change["cells"]) == 6  # every cell compared, a few shown


def test_diff_of_two_contexts_gives_witness_calls(client):
    data = post(client, "/api/diff", {"old": "policy=read-only", "new": "policy=workspace-write"}).json()
    widened = {c["tool"]: c for c in data["changes"] if c["widening"]}
    assert "write" in widened and widened["write"]["witness_text"].startswith("call write(")


@pytest.mark.parametrize(
    "body, message",
    [
        ({"old": "@current", "new": "policy=read-only"}, "both be trees or both contexts"),
        ({"old": "@current"}, "give both sides"),
        ({"old": "policy=nope", "new": "policy=read-only"}, "DSH207"),
    ],
)
def test_diff_refuses_what_it_cannot_compare(client, body, message):
    response = post(client, "/api/diff", body)
    assert response.status_code == 400 and message in response.json()["error"]


def test_graph_svg_dashes_exactly_the_gate_cuts(client, program):
    data = post(client, "/api/graph", {"context": BASE}).json()
    root = ET.fromstring(data["svg"])  # well-formed: every label was escaped
    ns = {"s": "http://www.w3.org/2000/svg"}
    dashed = root.findall(".//s:g[@class='edge cut']/s:path[@stroke-dasharray]", ns)
    solid = root.findall(".//s:g[@class='edge']/s:path", ns)
    g = composition_graph(program.gate_context(Request(preset="standard")))
    cuts = [d for *_, d in g.edges(data=True) if d["cut"]]
    assert len(dashed) == len(cuts) == len(data["cuts"]) > 0
    assert len(solid) == g.number_of_edges() - len(cuts) and not any(p.get("stroke-dasharray") for p in solid)
    assert any(c["to"] == "web_fetch" and "fetch = false" in c["why"] for c in data["cuts"])


def test_svg_layout_keeps_nodes_apart_and_in_kind_columns(program):
    g = composition_graph(program.gate_context(Request(preset="cordis", scope="continuable-child")))
    positions = svg.layout(g)
    assert len({(x, y) for x, y, _ in positions.values()}) == g.number_of_nodes()
    for a, b, _ in g.edges(data=True):
        if svg.COLUMN[g.nodes[a]["kind"]] < svg.COLUMN[g.nodes[b]["kind"]]:
            assert positions[a][0] + positions[a][2] < positions[b][0]


def test_a_broken_edit_keeps_the_last_good_program_and_shows_the_caret(live, tree):
    good = live.program
    assert live.poll() is False and live.state()["version"] == 1
    path = tree / "standard.dsh"
    text = path.read_text()
    path.write_text(text.replace("mount tool-fs\n", "mount tool-fss\n", 1))
    assert live.poll() is True
    state = live.state()
    assert state["version"] == 2 and state["stale"] and live.program is good
    assert "error[DSH201]" in state["error"] and "^^^" in state["error"] and "did you mean `tool-fs`" in state["error"]
    path.write_text(text.replace("fetch = false", "fetch = true"))
    assert live.poll() is True
    state = live.state()
    assert state["error"] is None and not state["stale"] and live.program is not good
    assert "web_fetch" in live.program.view(Request(preset="standard")).names


def test_a_page_served_before_the_first_good_load_reports_the_error(tmp_path):
    broken = tmp_path / "broken.dsh"
    broken.write_text("preset p {\n  mount tool-fss\n}\n")
    live = LiveProgram(lambda: Program.load([broken]), [broken])
    client = TestClient(build_app(live), base_url="http://127.0.0.1")
    response = client.get("/api/meta")
    assert response.status_code == 400 and "DSH201" in response.json()["error"]
    assert client.get("/api/state").json()["error"].count("^") >= 1


def test_the_page_and_its_assets_are_served_from_the_package(client):
    page = client.get("/")
    assert page.status_code == 200 and '<script src="/static/app.js">' in page.text
    for asset in ("app.js", "app.css"):
        assert client.get(f"/static/{asset}").status_code == 200
    assert "http" not in page.text.replace("http-equiv", "")  # nothing fetched from elsewhere


def test_only_loopback_hosts_and_json_bodies_are_answered(live, client):
    foreign = TestClient(build_app(live), base_url="http://attacker.example")
    assert foreign.get("/api/state").status_code == 400
    other_site = {"origin": "http://attacker.example"}  # a page elsewhere posting to the local server
    assert client.post("/api/matrix", json={"base": {}}, headers=other_site).status_code == 403
    assert client.get("/api/state", headers={"origin": "http://127.0.0.1"}).status_code == 200
    response = client.post("/api/matrix", content='{"base": {}}', headers={"content-type": "text/plain"})
    assert response.status_code == 415


@pytest.mark.parametrize(
    "body, message",
    [
        ({"base": {**BASE, "preset": "standrd"}, "vary": []}, "did you mean `standard`"),
        ({"base": {**BASE, "platform": "beos"}, "vary": []}, "invalid context: platform"),
        ({"base": {**BASE, "colour": 1}, "vary": []}, "unknown context key `colour`"),
        ({"base": BASE, "vary": ["preset", "platform", "scope", "mode"]}, "more than 48"),
        ({"base": BASE, "vary": [], "colour": "rainbow"}, "colour is"),
        ({"base": BASE, "vary": [], "args": [1]}, "args must be a JSON object"),
        ({"base": "standard"}, "base must be a JSON object"),
        ({"base": BASE, "vary": "preset"}, "vary is a list of axes"),
        ({"base": BASE, "vary": ["presets"]}, "vary is a list of axes"),
    ],
)
def test_bad_matrix_requests_are_explained_not_crashed(client, body, message):
    response = post(client, "/api/matrix", body)
    if response.status_code == 200:  # an unknown name is one column's error, not the request's
        assert message in response.json()["columns"][0]["error"]
    else:
        assert response.status_code == 400 and message in response.json()["error"]
    assert client.post("/api/matrix", content="{", headers={"content-type": "application/json"}).status_code == 400


def test_cli_refuses_an_unusable_port_or_path(cli, tmp_path):
    assert cli("ui", "--port", "70000").code == 2
    missing = cli("ui", str(tmp_path / "nope.dsh"), "--port", "0")
    assert missing.code == 2 and "does not exist" in missing.err
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        busy = cli("ui", "--port", str(taken.getsockname()[1]))
    assert busy.code == 2 and "cannot listen" in busy.err


def test_diff_reads_no_file_the_page_was_not_given(client, tmp_path, monkeypatch):
    """A local page (or any local client) named an arbitrary path as a diff side and got its text back."""
    secret = tmp_path / "secret.txt"
    secret.write_text("SECRET-TOKEN-4711 lives here\n")
    monkeypatch.setenv("DSHC_UI_TEST_SECRET", "SECRET-ENV-4712")
    for path in (str(secret), "/proc/self/environ", str(tmp_path), "/"):  # a folder used to hang the server
        answer = post(client, "/api/diff", {"old": "@current", "new": path})
        assert answer.status_code == 400, path
        assert "SECRET" not in answer.text and "not a tree this page was given" in answer.json()["error"]


def test_diff_compares_the_loaded_tree_and_the_trees_named_with_against(live, tree, tmp_path):
    wider = shipped_tree(tmp_path / "wider")
    with_fetch(wider)
    refused = post(
        TestClient(build_app(live), base_url="http://127.0.0.1"), "/api/diff", {"old": "@current", "new": str(wider)}
    )
    assert refused.status_code == 400
    # named with --against, the same diff answers: test_diff_of_two_trees_shows_the_fetch_widening reads it
    client = TestClient(build_app(live, trees=[wider]), base_url="http://127.0.0.1")
    same = post(client, "/api/diff", {"old": str(tree), "new": "@current"}).json()
    assert same["changes"] == []


@pytest.mark.parametrize(
    "raw",
    [
        b'{"tool": "read", "args": {"n": ' + b"9" * 5000 + b"}}",  # past Python's int-string limit
        b'{"tool": "read", "args": {"n": NaN}}',
        b'{"tool": "\\ud800"}',  # a lone surrogate, echoed by the answer's error text
    ],
)
def test_bodies_no_answer_could_carry_are_400(live, raw):
    client = TestClient(build_app(live), base_url="http://127.0.0.1", raise_server_exceptions=False)
    answer = client.post("/api/explain", content=raw, headers={"content-type": "application/json"})
    assert answer.status_code == 400 and "error" in answer.json()


def test_explain_of_a_process_tool_shows_what_holds_the_policy(client):
    data = post(client, "/api/explain", {"context": {**BASE, "policy": "guarded"}, "tool": "bash"}).json()
    layers = {row["rule"]: row["layer"] for row in data["enforcement"]}
    assert layers["guarded/guard:ssh-keys"] == "os" and layers["guarded/guard:dotenv"] == "os-in-workspace"
    assert (
        post(client, "/api/explain", {"context": {**BASE, "policy": "guarded"}, "tool": "read"}).json()["enforcement"]
        is None
    )
