"""A search reads every file below its path, so the policy's read rules hold for each file it comes upon:
`deny read … "*.env"` keeps `grep KEY .` from printing a `.env`'s lines. The call itself is decided as the
search plus a read of the path it names (`split.search_parts`); the files below are judged where the search
runs (`ToolContext.may_read`), and the result names the files withheld.

Reports: anomalyco/opencode#17073 (`grep "TEST_DB_URL" .` returns `.env` matches under a read rule on
`*.env`), anomalyco/opencode#35503 (an `include` filter naming the denied file), odysseus-dev/odysseus#5011
(the walk does not re-apply the deny list to the files it opens), anthropics/claude-code#57525 (a read deny
is walked around by a search)."""

from __future__ import annotations

import json
import os
import threading

import pytest

from dshc.cli.host import session
from dshc.compiler.program import Program
from dshc.compiler.request import Request
from dshc.runtime.scheduler import run_batch
from dshc.runtime.tools import IMPLEMENTATIONS, ToolContext
from dshc.runtime.tools.search import render_grep
from dshc.runtime.types import ToolCall

GREP = IMPLEMENTATIONS["tool-fs-search/grep"]


@pytest.fixture
def tree(workspace):
    """A workspace with secrets beside code, each holding the line `KEY=…`."""
    (workspace / ".env").write_text("KEY=root-secret\n")
    (workspace / "config").mkdir()
    (workspace / "config" / ".env").write_text("KEY=nested-secret\n")
    (workspace / "secrets").mkdir()
    (workspace / "secrets" / "token.txt").write_text("KEY=token-secret\n")
    (workspace / "src").mkdir()
    (workspace / "src" / "app.py").write_text("KEY = os.environ['KEY']\n")
    (workspace / "server.pem").write_text("KEY=pem-secret\n")
    return workspace


def _grep(workspace, state, args, may_read=None):
    ctx = ToolContext(
        workspace=str(workspace),
        sandbox="workspace-write",
        owner="agent-1",
        state=state,
        abort=threading.Event(),
        may_read=may_read,
    )
    return GREP({"pattern": "KEY", **args}, ctx)


def _not_env(path: str) -> bool:
    return not path.endswith(".env")


def test_a_file_the_policy_keeps_from_reading_is_not_searched(tree, state):
    value = _grep(tree, state, {"path": "."}, _not_env)
    assert [m["path"] for m in value["matches"]] == ["server.pem", "secrets/token.txt", "src/app.py"]
    assert value["withheld"] == [".env", "config/.env"]
    shown = render_grep({}, value)
    assert "root-secret" not in shown and "nested-secret" not in shown
    assert "[not searched, the policy does not allow reading them: .env, config/.env]" in shown


def test_an_include_filter_naming_the_file_finds_nothing_in_it(tree, state):
    value = _grep(tree, state, {"path": ".", "include": ".env"}, _not_env)
    assert value["matches"] == [] and value["withheld"] == [".env", "config/.env"]


def test_a_link_is_judged_by_the_file_it_reads_too(tree, state):
    os.symlink(tree / ".env", tree / "src" / "notes.txt")
    value = _grep(tree, state, {"path": "src"}, _not_env)
    assert [m["path"] for m in value["matches"]] == ["src/app.py"]
    assert value["withheld"] == ["src/notes.txt"]


def test_a_path_that_walks_up_is_still_judged_file_by_file(tree, state):
    value = _grep(tree, state, {"path": "src/.."}, _not_env)
    assert "root-secret" not in json.dumps(value) and value["withheld"] == [".env", "config/.env"]


def test_the_file_named_by_the_path_is_judged_too(tree, state):
    value = _grep(tree, state, {"path": ".env"}, _not_env)
    assert value["matches"] == [] and value["withheld"] == [".env"]


def test_without_read_rules_every_file_is_searched(tree, state):
    value = _grep(tree, state, {"path": "."})
    assert len(value["matches"]) == 5 and "withheld" not in value


def test_a_judge_that_fails_fails_the_search(tree, state):
    def broken(path):
        raise RuntimeError("no answer")

    with pytest.raises(RuntimeError):
        _grep(tree, state, {"path": "."}, broken)


POLICY = """
policy secrets "Secrets stay unread" {
  default allow
  deny read when args.file_path matches "*.env"
  deny read when args.file_path matches "secrets/**"
  ask read when args.file_path matches "*.pem"
}
preset searcher "Searches, and has no read tool of its own" {
  mount tool-fs-search { sampleOverCapGlobResults = false }
}
policy silent "Says nothing of reads" {
  default deny
  allow grep
}
"""


@pytest.fixture(scope="module")
def program() -> Program:
    return Program.load(texts={"p.dsh": POLICY})


def _session_grep(program, policy, workspace, args, preset="standard"):
    ctx, state = session(program, Request(preset=preset, policy=policy), str(workspace))
    try:
        outcomes, _ = run_batch([ToolCall.from_model("c1", "grep", json.dumps(args))], ctx)
    finally:
        state.close()
        ctx.log.close()
    return outcomes[0].result


def test_a_session_withholds_what_the_policy_denies_or_would_ask(program, tree):
    result = _session_grep(program, "secrets", tree, {"pattern": "KEY", "path": "."})
    text = json.dumps(result.content)
    assert not result.is_error and "src/app.py" in text
    for secret in ("root-secret", "nested-secret", "token-secret", "pem-secret"):
        assert secret not in text, secret
    # an ask cannot be put to anyone file by file: the file is withheld, as a deny is
    assert ".env, server.pem, config/.env, secrets/token.txt" in text


def test_a_session_whose_policy_says_nothing_of_reads_searches_every_file(program, tree):
    # its default would deny the read tool; a search it allows is left to its rules on the search, as the
    # call's own decision is
    result = _session_grep(program, "silent", tree, {"pattern": "KEY", "path": "."})
    assert "root-secret" in json.dumps(result.content) and "not searched" not in json.dumps(result.content)


def test_the_read_rules_hold_where_the_agent_has_no_read_tool(program, tree):
    result = _session_grep(program, "secrets", tree, {"pattern": "KEY", "path": "."}, preset="searcher")
    text = json.dumps(result.content)
    assert not result.is_error and "KEY = os.environ" in text and "root-secret" not in text
