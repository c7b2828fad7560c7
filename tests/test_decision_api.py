"""The decision API of `dshc serve --http`: a real server subprocess answers like Program.decide, under the
server's own policy and workspace unless started with --caller-context; bad bodies are 400s, never 500s."""

from __future__ import annotations

import json

import httpx
import pytest

from dshc.cli.call_decision import decide_call
from dshc.compiler.program import Program
from dshc.compiler.request import Request
from http_serve import serving

POLICY = """policy apitest {
  sandbox workspace-write
  default deny
  allow read, glob, grep
  ask write
  deny bash
}
"""
CALLS = [  # (tool, args, context): a spread over allow / ask / deny, presets and policies
    ("read", {"file_path": "a.txt"}, {"policy": "apitest"}),
    ("grep", {"pattern": "x"}, {"policy": "apitest", "preset": "standard"}),
    ("write", {"file_path": "a.txt", "content": "x"}, {"policy": "apitest"}),
    ("bash", {"command": "ls", "description": "list"}, {"policy": "apitest"}),
    ("bash", {"command": "ls", "description": "list"}, {"policy": "workspace-write"}),
    ("bash", {"command": "rm -rf /", "description": "remove"}, {"policy": "read-only"}),
    ("write", {"file_path": "/etc/passwd", "content": "x"}, {"policy": "workspace-write"}),
    ("read", {"file_path": "a.txt"}, {"preset": "minimal"}),
    ("web_search", {"query": "x"}, {"policy": "apitest", "scope": "root"}),
]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    ws = tmp_path_factory.mktemp("ws")
    (ws / "policy.dsh").write_text(POLICY)
    with serving(
        [
            "--load",
            str(ws / "policy.dsh"),
            "--workspace",
            str(ws),
            "--log",
            str(ws / "events.jsonl"),
            "--caller-context",
        ],
        ws,
    ) as (base, _):
        program = Program.load([ws / "policy.dsh"])
        with httpx.Client(base_url=base, timeout=30) as client:
            yield client, program, str(ws)


def _request(context: dict) -> Request:
    return Request(**context)


def test_decide_equals_program_decide(server):
    client, program, ws = server
    effects = set()
    for tool, args, context in CALLS:
        answer = client.post("/v1/decide", json={"tool": tool, "args": args, "context": context})
        assert answer.status_code == 200, answer.text
        got = answer.json()
        want = decide_call(program, _request(context), tool, args, ws)
        assert (got["decision"], got["gate"], got["reason"]) == (want.effect, want.gate, want.reason), (tool, context)
        assert [r["rule"] for r in got["decided_by"]] == [rule for rule, _ in want.deciding]
        assert got["policy_effect"] == want.policy_effect
        assert got["fingerprint"] == program.view(_request(context)).fingerprint
        effects.add(got["decision"])
    assert effects == {"allow", "ask", "deny"}


def test_a_write_the_sandbox_refuses_is_not_an_allow_and_keeps_the_policy_word(server):
    client, _, _ = server
    got = client.post(
        "/v1/decide",
        json={
            "tool": "write",
            "args": {"file_path": "/etc/passwd", "content": "x"},
            "context": {"policy": "workspace-write"},
        },
    ).json()
    assert (got["decision"], got["gate"], got["policy_effect"]) == ("ask", "sandbox", "allow")
    assert got["reason"].startswith("the `workspace-write` sandbox refuses writes outside the workspace")
    assert "sandbox_permissions" in got["reason"] and got["sandbox_verdict"]["escalate_to"] == "danger-full-access"
    assert got["decided_by"] == [
        {"rule": "workspace-write/sandbox workspace-write", "source": "policies/permissions.dsh:16:11"}
    ]


def test_arguments_that_miss_the_schema_are_a_400_naming_the_schema_path_and_the_close_key(server):
    client, _, _ = server
    answer = client.post(
        "/v1/decide", json={"tool": "bash", "args": {"comand": "git push"}, "context": {"policy": "workspace-write"}}
    )
    assert answer.status_code == 400
    diagnostic = answer.json()["diagnostics"][0]
    assert "'command' is a required property (schema `/required`)" in diagnostic["message"]
    assert "did you mean `command`" in diagnostic["help"]
    wrong = client.post("/v1/decide", json={"tool": "read", "args": {"file_path": 3}})
    assert wrong.status_code == 400 and "/properties/file_path/type" in wrong.json()["diagnostics"][0]["message"]


def test_a_denial_names_its_rule_and_where(server):
    client, _, _ = server
    got = client.post(
        "/v1/decide",
        json={"tool": "bash", "args": {"command": "ls", "description": "list"}, "context": {"policy": "apitest"}},
    ).json()
    assert got["decision"] == "deny" and got["decided_by"][0]["rule"] == "apitest/deny@6"
    assert got["decided_by"][0]["source"].endswith("policy.dsh:6:3")


def test_view_and_explain(server):
    client, program, _ = server
    context = {"preset": "standard", "policy": "apitest"}
    view = client.post("/v1/view", json={"context": context})
    assert view.status_code == 200 and view.json()["fingerprint"] == program.view(_request(context)).fingerprint
    openai = client.post("/v1/view", json={"context": context, "format": "openai"}).json()
    from dshc.compiler.interop.exports import export

    assert openai["tools"] == json.loads(json.dumps(export(program.view(_request(context)), "openai", False)[0]))
    explained = client.post("/v1/explain", json={"tool": "bash", "context": context}).json()
    assert explained["tool"] == "bash" and "available" in explained


def _codes(answer) -> list[str]:
    assert answer.status_code == 400, answer.text
    return [d["code"] for d in answer.json()["diagnostics"]]


def test_bad_requests_are_400_with_diagnostics(server):
    client, _, _ = server
    assert _codes(client.post("/v1/decide", content=b"{not json")) == ["DSH405"]
    assert _codes(client.post("/v1/decide", json={"tool": "no_such_tool"})) == ["DSH406"]
    unknown_preset = _codes(client.post("/v1/decide", json={"tool": "read", "context": {"preset": "nope"}}))
    assert unknown_preset and unknown_preset[0] != "DSH405"
    assert _codes(client.post("/v1/decide", json={"tool": "read", "context": {"colour": "red"}})) == ["DSH405"]
    assert _codes(client.post("/v1/decide", json={"tool": "read", "context": {"platform": "amiga"}})) == ["DSH405"]
    for field in ("flags", "with", "without"):  # a string is not a set of names ("abc" is not {a, b, c})
        assert _codes(client.post("/v1/decide", json={"tool": "read", "context": {field: "abc"}})) == ["DSH405"]
    deep = '{"tool": "read", "args": ' + '{"a": ' * 1000 + "{}" + "}" * 1000 + "}"  # 1000 levels of args
    assert _codes(client.post("/v1/decide", content=deep.encode())) == ["DSH405"]
    assert _codes(client.post("/v1/decide", content=b"x" * (300 * 1024))) == ["DSH405"]
    assert _codes(client.post("/v1/view", json={"format": "yaml"})) == ["DSH405"]
    assert "Traceback" not in client.post("/v1/decide", json=[1]).text


def test_health_and_metrics_move(server):
    client, _, _ = server
    assert client.get("/healthz").status_code == 200 and client.get("/readyz").json() == {"ready": True}

    def denied_count() -> float:
        total = 0.0
        for line in client.get("/metrics").text.splitlines():
            if line.startswith("dshc_decisions_total{") and 'effect="deny"' in line:
                total += float(line.rsplit(" ", 1)[1])
        return total

    before = denied_count()
    for _ in range(3):
        client.post(
            "/v1/decide",
            json={"tool": "bash", "args": {"command": "ls", "description": "list"}, "context": {"policy": "apitest"}},
        )
    assert denied_count() == before + 3
    assert "dshc_request_seconds_bucket" in client.get("/metrics").text


@pytest.fixture(scope="module")
def own_policy_server(tmp_path_factory):
    """A server started with --policy and no --caller-context: callers cannot pick a wider policy."""
    ws = tmp_path_factory.mktemp("ws-own")
    (ws / "policy.dsh").write_text(POLICY)
    with serving(["--load", str(ws / "policy.dsh"), "--workspace", str(ws), "--policy", "apitest"], ws) as (base, _):
        with httpx.Client(base_url=base, timeout=30) as client:
            yield client, Program.load([ws / "policy.dsh"]), str(ws)


def test_policy_and_workspace_are_the_servers_unless_caller_context(own_policy_server):
    client, program, ws = own_policy_server
    bash = {"tool": "bash", "args": {"command": "ls", "description": "list"}}
    answer = client.post("/v1/decide", json=bash)
    assert answer.status_code == 200 and answer.json()["decision"] == "deny"  # the server's `apitest`
    want = program.decide(Request(policy="apitest"), "bash", bash["args"], ws)
    assert (answer.json()["decision"], answer.json()["reason"]) == (want.effect, want.reason)
    # naming a wider policy or another workspace is refused, not silently obeyed
    wider = _codes(client.post("/v1/decide", json={**bash, "context": {"policy": "danger-full-access"}}))
    assert wider == ["DSH405"]
    assert "--caller-context" in client.post("/v1/decide", json={**bash, "context": {"policy": "x"}}).text
    assert _codes(client.post("/v1/decide", json={**bash, "workspace": "/"})) == ["DSH405"]
    assert _codes(client.post("/v1/view", json={"context": {"policy": "danger-full-access"}})) == ["DSH405"]
    # the other context keys stay the caller's
    assert (
        client.post(
            "/v1/decide", json={"tool": "read", "args": {"file_path": "a"}, "context": {"platform": "darwin"}}
        ).json()["decision"]
        == "allow"
    )


def test_caller_context_lets_the_body_name_policy_and_workspace(server, tmp_path):
    client, program, _ = server
    body = {
        "tool": "write",
        "args": {"file_path": str(tmp_path / "a.txt"), "content": "x"},
        "context": {"policy": "workspace-write"},
        "workspace": str(tmp_path),
    }
    answer = client.post("/v1/decide", json=body)
    want = program.decide(Request(policy="workspace-write"), "write", body["args"], str(tmp_path))
    assert answer.status_code == 200 and answer.json()["decision"] == want.effect


@pytest.mark.parametrize(
    "raw",
    [
        b'{"tool": "read", "args": {"n": ' + b"9" * 5000 + b"}}",  # past Python's int-string limit
        b'{"tool": "read", "args": {"n": 1e999}}',  # infinity
        b'{"tool": "read", "args": {"n": NaN}}',  # not JSON at all, though Python's parser takes it
        b'{"tool": "bash", "args": {"command": "ls\\u0000 /"}}',  # a NUL: no command or path can hold one
        b'{"tool": "bash", "args": {"command": "ls \\ud800"}}',  # a lone surrogate: no UTF-8 bytes for it
        b'{"tool": "bash", "args": {"cmd": ["ok", {"deep": "\\udfff"}]}}',
        b'{"tool": "\\ud800", "args": {}}',  # echoed in the diagnostic: must not break the answer
        b'{"tool": "read", "args": {"\\ud800": "x"}}',
    ],
)
def test_numbers_nul_and_surrogates_are_400_not_500(server, raw):
    client, _, _ = server
    answer = client.post("/v1/decide", content=raw, headers={"content-type": "application/json"})
    assert _codes(answer) == ["DSH405"], raw
