"""`dshc export codex` held to Codex's own engine: the exported execpolicy rules, checked by `codex execpolicy
check` of the pinned npm package (tests/engines), give dshc's decisions on a table of shell lines, or differ in
the direction and for the reason each row states; a public-corpus table stays as recorded. The engine tests
skip, saying why, where the package is not installed (.ci/run installs it; the tests never do)."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from dshc.compiler.interop.codex_export import export_codex
from dshc.compiler.program import Program
from engines.codex_engine import FALLBACK, codex_binary, codex_sees, decide_lines
from engines.differential import CORPUS_POLICIES, REGRESSION, TABLE, dshc_decisions, policy as _policy, relation, tables


@pytest.fixture(scope="module")
def codex():
    binary, why = codex_binary()
    if binary is None:
        pytest.skip(why)
    return binary


def _decided(table: dict, codex, tmp_path: Path, name: str, policies: str | None = None):
    """(row, dshc's effect, Codex's effect on the export) for each row of `table` under policy `name`."""
    program, rows = tables(table, policies)
    commands = [row["command"] for row in rows[name]]
    exported = export_codex(_policy(program, name))
    rules = tmp_path / f"{name}.rules"
    rules.write_text(exported.rules)
    fallback = FALLBACK[tomllib.loads(exported.config)["approval_policy"]]
    theirs = decide_lines(codex, rules, commands, fallback)
    return list(zip(rows[name], dshc_decisions(program, name, commands), theirs))


@pytest.mark.parametrize("policy", sorted({row["policy"] for row in TABLE["rows"]}))
def test_the_engine_decides_the_export_as_each_row_says(codex, tmp_path, policy):
    wrong = [
        f"{row['command']!r}: dshc {ours}, codex {theirs}, expected {row['codex']} ({row['why']})"
        for row, ours, theirs in _decided(TABLE, codex, tmp_path, policy)
        if relation(ours, theirs) != row["codex"]
    ]
    assert wrong == []


def test_the_table_agrees_on_most_rows_and_every_difference_has_a_reason():
    relations = [row["codex"] for row in TABLE["rows"]]
    assert all(row["why"] for row in TABLE["rows"])
    assert relations.count("same") >= 35 and len(relations) >= 45


@pytest.mark.parametrize("policy", sorted({row["policy"] for row in REGRESSION["rows"]}))
def test_public_corpus_rows_keep_their_recorded_decisions(codex, tmp_path, policy):
    changed = [
        f"{row['command'][:60]!r} ({row['source'][:50]}): now dshc {ours}, codex {theirs}; recorded "
        f"dshc {row['dshc']}, codex {row['codex']}"
        for row, ours, theirs in _decided(REGRESSION, codex, tmp_path, policy, CORPUS_POLICIES)
        if (ours, theirs) != (row["dshc"], row["codex"])
    ]
    assert changed == []


@pytest.mark.parametrize("agent", ["codex", "gemini"])
def test_the_corpus_rows_are_sourced_and_every_difference_explained(agent):
    rows = REGRESSION["rows"]
    assert len(rows) >= 200 and all(row["source"] for row in rows)
    assert all((row["dshc"] == row[agent]) == (not row[agent + "_why"]) for row in rows)


# codex-rs/shell-command/src/bash.rs tests: what Codex's core hands execpolicy for `bash -lc SCRIPT`
SPLITS = [
    ("ls -1", [["ls", "-1"]]),
    ("ls && pwd; echo 'hi there' | wc -l", [["ls"], ["pwd"], ["echo", "hi there"], ["wc", "-l"]]),
    ('echo "hello world"', [["echo", "hello world"]]),
    ('git commit -m "line1\nline2"', [["git", "commit", "-m", "line1\nline2"]]),
    ('echo "/usr"\'/\'"local"/bin', [["echo", "/usr/local/bin"]]),
    ('rg -n "foo" -g"*.py"', [["rg", "-n", "foo", "-g*.py"]]),
    ("echo 123 456", [["echo", "123", "456"]]),
    ('echo "hi ${USER}"', None),
    ("(ls)", None),
    ("ls || (pwd && echo hi)", None),
    ("ls > out.txt", None),
    ("echo hi & echo bye", None),
    ("echo $(pwd)", None),
    ("echo `pwd`", None),
    ("echo $HOME", None),
    ("FOO=bar ls", None),
    ("ls &&", None),
    ("&& ls", None),
    ("ls ;; pwd", None),
    ("ls | | wc", None),
]


@pytest.mark.parametrize("script,commands", SPLITS)
def test_the_split_is_codex_own(script, commands):
    argv = ["bash", "-lc", script]
    assert codex_sees(argv) == (commands if commands is not None else [argv])


# --- the export itself, without the engine ---------------------------------------------------------------
def _export(text: str, name: str = "p"):
    return export_codex(_policy(Program.load(texts={"p.dsh": text}), name))


def _kinds(result) -> list[str]:
    return [note.kind for note in result.notes]


def test_a_deny_written_with_options_is_exported_as_its_program_and_said_stricter():
    result = _export('policy p { default allow\n deny bash when args.command matches "rm -rf /*" }')
    assert 'prefix_rule(pattern=[["rm", ' in result.rules and 'decision="forbidden"' in result.rules
    assert _kinds(result) == ["stricter"] and not result.weaker


def test_an_allow_with_no_prefix_form_is_left_out_never_widened():
    result = _export(
        'policy p { default ask\n allow bash when args.command matches "make"\n'
        ' allow bash when args.command matches "git branch *" except "-D" }'
    )
    assert "prefix_rule" not in result.rules
    assert _kinds(result) == ["dropped", "dropped"]


def test_a_deny_codex_cannot_hold_is_reported_weaker_never_dropped_silently():
    result = _export(
        'policy p { default allow\n deny read when args.file_path matches "*.env"\n'
        ' deny bash when args.command matches "*--force*" }'
    )
    assert result.weaker and _kinds(result) == ["weaker", "weaker"]
    assert "read" in result.notes[0].message and "*--force*" in result.notes[1].message


def test_a_deny_on_one_conjunct_is_exported_wider():
    result = _export('policy p { default allow\n deny bash when args.command matches "git push *" and flag beta }')
    assert '"push"], decision="forbidden"' in result.rules and _kinds(result) == ["stricter"]


def test_the_config_carries_sandbox_approval_network_and_the_shell_switch():
    result = _export("policy p { sandbox workspace-write\n approval ask\n network allow\n default deny\n deny bash }")
    config = tomllib.loads(result.config)
    assert config == {
        "sandbox_mode": "workspace-write",
        "approval_policy": "untrusted",
        "sandbox_workspace_write": {"network_access": True},
        "features": {"shell_tool": False},
    }
    assert _kinds(result) == ["weaker"]  # the default deny: Codex asks
    never = tomllib.loads(_export("policy p { approval never\n default allow }").config)
    assert never["approval_policy"] == "never" and never["sandbox_mode"] == "read-only"


def test_the_shipped_permission_policies_export_exactly():
    program = Program.load()
    for name in ("read-only", "workspace-write", "danger-full-access"):
        result = export_codex(_policy(program, name))
        # `str_replace_editor` is no Codex tool: its deny has nothing to hold
        assert [n.kind for n in result.notes] in ([], ["moot"]), name
        assert tomllib.loads(result.config)["sandbox_mode"] == name


def test_cli_writes_rules_config_and_notes(tmp_path, cli):
    source = tmp_path / "p.dsh"
    source.write_text(
        'policy p { default ask\n allow bash when args.command matches "git status *"\n'
        ' deny bash when args.command matches "rm -rf *"\n deny read }\n'
    )
    rules, toml = tmp_path / "p.rules", tmp_path / "config.toml"
    done = cli("export", "codex", "--policy", "p", "--load", str(source), "-o", str(rules), "--toml", str(toml))
    assert done.code == 0, done.err
    assert '"status"], decision="allow"' in rules.read_text()
    assert tomllib.loads(toml.read_text())["approval_policy"] == "untrusted"
    assert "stricter: `rm -rf *`" in done.err and "weaker: `read`" in done.err
    data = cli("export", "codex", "--policy", "p", "--load", str(source), "--json").json()
    assert data["weaker"] is True and {n["kind"] for n in data["notes"]} == {"stricter", "weaker"}
    assert data["rules"].startswith("# Codex execpolicy rules") and "sandbox_mode" in data["config"]
    plain = cli("export", "codex", "--policy", "p", "--load", str(source))
    # without --toml the config lines close the rules as comments, so the file stays valid Starlark
    assert '\n# approval_policy = "untrusted"\n' in plain.out and "\napproval_policy" not in plain.out
    done = cli("export", "claude-code", "--policy", "p", "--load", str(source), "--toml", str(toml))
    assert done.code == 2 and "--toml" in done.err
