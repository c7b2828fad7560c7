"""`dshc export gemini` held to Gemini CLI's own engine: the exported policy TOML, loaded by the pinned
@google/gemini-cli-core's `loadPoliciesFromToml` and decided by its `PolicyEngine.check` (tests/engines), gives
dshc's decisions on the table of shell lines the Codex export is held to, or differs in the direction and for
the reason each row states; the public-corpus rows stay as recorded. One node process decides all the tables;
the tests skip, saying why, where the package or node is missing (.ci/run installs it; the tests never do)."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

import pytest

from dshc.compiler.interop.gemini_export import MAX_REGEX, export_gemini
from dshc.compiler.interop.gemini_import import import_gemini
from dshc.compiler.program import Program
from dshc.compiler.request import Request
from engines.differential import CORPUS_POLICIES, RANK, REGRESSION, TABLE, dshc_decisions, policy, relation, tables
from engines.gemini_engine import decide_tables, gemini_engine

SHELL = "run_shell_command"


@pytest.fixture(scope="module")
def gemini():
    engine, why = gemini_engine()
    if engine is None:
        pytest.skip(why)
    return engine


def _decided(table: dict, engine, folder, policies: str | None = None):
    """(row, dshc's effect, Gemini CLI's effect on the export) for every row, the tables in one engine run."""
    program, rows = tables(table, policies)
    files = []
    for name in rows:
        path = folder / f"{name}.toml"
        path.write_text(export_gemini(policy(program, name)).text)
        files.append((path, [{"name": SHELL, "args": {"command": row["command"]}} for row in rows[name]]))
    out = []
    for name, theirs in zip(rows, decide_tables(engine, files)):
        commands = [row["command"] for row in rows[name]]
        out += zip(rows[name], dshc_decisions(program, name, commands), theirs)
    return out


def test_the_engine_decides_the_export_as_each_row_says(gemini, tmp_path):
    decided = _decided(TABLE, gemini, tmp_path)
    wrong = [
        f"{row['policy']}: {row['command']!r}: dshc {ours}, gemini {theirs}, expected {row['gemini']} "
        f"({row.get('gemini_why', row['why'])})"
        for row, ours, theirs in decided
        if relation(ours, theirs) != row["gemini"]
    ]
    assert wrong == []
    assert len(decided) == len(TABLE["rows"])


def test_the_table_agrees_on_most_rows():
    assert sum(row["gemini"] == "same" for row in TABLE["rows"]) >= 38


def test_public_corpus_rows_keep_their_recorded_decisions(gemini, tmp_path):
    changed = [
        f"{row['policy']}: {row['command'][:60]!r} ({row['source'][:50]}): now dshc {ours}, gemini "
        f"{theirs}; recorded dshc {row['dshc']}, gemini {row['gemini']}"
        for row, ours, theirs in _decided(REGRESSION, gemini, tmp_path, CORPUS_POLICIES)
        if (ours, theirs) != (row["dshc"], row["gemini"])
    ]
    assert changed == []


# --- the export itself, without the engine ---------------------------------------------------------------
def _export(text: str, name: str = "p"):
    return export_gemini(policy(Program.load(texts={"p.dsh": text}), name))


def _rules(result) -> list[dict]:
    return tomllib.loads(result.text)["rule"]


def _matches(rule: dict, command: str) -> bool:
    """Whether a shell rule's pattern meets a command, read as Gemini CLI reads it (JSON text of the args)."""
    text = '{"command":' + json.dumps(command) + "}"
    if "commandPrefix" in rule:
        prefixes = rule["commandPrefix"] if isinstance(rule["commandPrefix"], list) else [rule["commandPrefix"]]
        return any(re.search(re.escape('"command":' + json.dumps(p)[:-1]) + '(?:[\\s"]|\\\\")', text) for p in prefixes)
    return re.search('"command":"' + rule["commandRegex"], text) is not None


def test_strictness_is_priority_and_the_default_closes_the_file():
    rules = _rules(
        _export(
            'policy p { default deny\n allow bash when args.command matches "git status *"\n'
            ' ask bash when args.command matches "git push *"\n deny write }'
        )
    )
    by_decision = {(r["decision"], r["priority"]) for r in rules}
    assert by_decision == {("allow", 300), ("ask_user", 600), ("deny", 900), ("deny", 2), ("deny", 1)}
    allow = rules[0]
    assert _matches(allow, "git status -s") and _matches(allow, "env git status") and not _matches(allow, "git st")
    asks = [r for r in rules if r["decision"] == "ask_user"]
    assert any(_matches(r, "git 'push' origin") for r in asks)  # the words quoted, as dshc reads them
    assert any(_matches(r, "sudo git push") for r in asks) and not any(_matches(r, "git pushy") for r in asks)
    assert [r for r in rules if r["toolName"] == "write_file"][0]["decision"] == "deny"
    # the shell catch-all has a pattern, so Gemini CLI's known-safe list cannot turn its answer into an allow
    assert rules[-2] == {"toolName": SHELL, "commandRegex": ".*", "decision": "deny", "priority": 2}
    assert rules[-1] == {"toolName": "*", "decision": "deny", "priority": 1}


def test_an_ask_under_approval_never_is_a_deny():
    rules = _rules(_export('policy p { approval never\n default ask\n ask bash when args.command matches "rm *" }'))
    assert {r["decision"] for r in rules} == {"deny"}


def test_a_glob_that_is_no_prefix_is_a_whole_command_regex():
    result = _export(
        'policy p { default ask\n allow bash when args.command matches "make"\n'
        ' deny bash when args.command matches "*--force*" }'
    )
    allow, deny = _rules(result)[:2]
    assert _matches(allow, "make") and _matches(allow, "/usr/bin/make") and not _matches(allow, "make install")
    assert _matches(deny, "git push --force") and _matches(deny, "git push '--force'")
    assert result.notes == ()


def test_a_deny_with_options_is_its_program_and_every_regex_fits_the_engine():
    result = _export('policy p { default allow\n deny bash when args.command matches "rm -rf /*" }')
    rules = _rules(result)[:-2]
    assert len(rules) >= 2 and all(len('"command":"' + r["commandRegex"]) < MAX_REGEX for r in rules)
    assert [n.kind for n in result.notes] == ["stricter"]


def test_path_rules():
    result = _export(
        'policy p { default allow\n deny read when args.file_path matches "*.env"\n'
        ' allow write when args.file_path matches "src/*"\n'
        ' ask write when args.file_path outside workspace\n deny skill when args.name == "x" }'
    )
    rules = _rules(result)
    assert rules[0]["toolName"] == "read_file" and rules[0]["decision"] == "deny"
    assert rules[0]["argsPattern"].startswith('"(?:path|absolute_path|file_path)":"[^"]*')
    assert [n.kind for n in result.notes] == ["stricter", "dropped", "stricter", "weaker"]


def test_cli_writes_the_toml_and_the_notes(tmp_path, cli):
    source = tmp_path / "p.dsh"
    source.write_text(
        'policy p { default ask\n deny bash when args.command matches "git push --force *"\n'
        " deny bash when args.command is readonly }\n"
    )
    out = tmp_path / "dshc.toml"
    done = cli("export", "gemini", "--policy", "p", "--load", str(source), "-o", str(out))
    assert done.code == 0 and tomllib.loads(out.read_text())["rule"]
    assert "stricter: `git push --force *`" in done.err and "weaker: its condition" in done.err
    data = cli("export", "gemini", "--policy", "p", "--load", str(source), "--json").json()
    assert data["weaker"] is True and tomllib.loads(data["policy"])["rule"]


# --- `dshc import gemini`, held to the engine on the imported files --------------------------------------
IMPORTS = json.loads((Path(__file__).parent / "engines" / "gemini_import.json").read_text())


def _imported_decisions(name: str, text: str, rows: list[dict]) -> list[str]:
    """dshc's effect for each Gemini CLI call under the import of `text`, the call mapped to catalog calls."""
    from dshc.compiler.interop.agents import map_call

    imported = import_gemini({f"{name}.toml": text}, name=name)
    program = Program.load(texts={f"{name}.dsh": imported.text})
    request = Request(preset="standard", host="web", policy=name)
    out = []
    for row in rows:
        effects = [
            program.decide(request, call.tool, {"description": "d", **call.args}, workspace="/ws", gates=False).effect
            for call in map_call("gemini", row["tool"], row["args"], "/ws")
        ]
        out.append(max(effects, key=RANK.__getitem__))
    return out


def test_the_import_decides_as_the_engine_does_on_the_file(gemini, tmp_path):
    files, rows = [], {}
    for row in IMPORTS["rows"]:
        rows.setdefault(row["policy"], []).append(row)
    for name in rows:
        (tmp_path / f"{name}.toml").write_text(IMPORTS["policies"][name])
        files.append((tmp_path / f"{name}.toml", [{"name": r["tool"], "args": r["args"]} for r in rows[name]]))
    wrong = []
    for name, theirs in zip(rows, decide_tables(gemini, files)):
        ours = _imported_decisions(name, IMPORTS["policies"][name], rows[name])
        wrong += [
            f"{name}: {row['tool']} {row['args']}: dshc {o}, gemini {t}, expected {row['relation']} ({row['why']})"
            for row, o, t in zip(rows[name], ours, theirs)
            if relation(o, t) != row["relation"]
        ]
    assert wrong == []


def test_a_higher_allow_is_taken_out_of_a_lower_deny_and_an_unread_pattern_never_widens():
    text = IMPORTS["policies"]["layered"]
    imported = import_gemini({"layered.toml": text}, name="layered")
    program = Program.load(texts={"l.dsh": imported.text})
    assert program.composition(Request(policy="layered")).policy is not None
    assert (
        'deny bash when ((args.command matches "rm *")) and (not ((args.command matches "rm -i *")))' in imported.text
    )
    assert _imported_decisions(
        "askfirst", IMPORTS["policies"]["askfirst"], [{"tool": "run_shell_command", "args": {"command": "npm ci"}}]
    ) == ["ask"]
    assert any(
        "npm (ci|install)" in str(note) for note in import_gemini({"a.toml": IMPORTS["policies"]["askfirst"]}).notes
    )


def test_import_cli_and_bad_files(tmp_path, cli):
    good = tmp_path / "p.toml"
    good.write_text(IMPORTS["policies"]["layered"])
    done = cli("import", "gemini", str(good), "--name", "mine")
    assert done.code == 0 and done.out.startswith("# Imported from") and "policy mine" in done.out
    bad = tmp_path / "bad.toml"
    bad.write_text('[[rule]]\ntoolName = "run_shell_command"\ndecision = "maybe"\npriority = 1\n')
    done = cli("import", "gemini", str(bad))
    assert done.code == 2 and "decision allow|ask_user|deny" in done.err and "Traceback" not in done.err
    bad.write_text("[[rule]\n")
    assert cli("import", "gemini", str(bad)).code == 2


def test_diff_reads_gemini_policy_files_and_fails_on_a_widening(tmp_path, cli):
    old, new = tmp_path / "old.toml", tmp_path / "new.toml"
    rule = '[[rule]]\ntoolName = "run_shell_command"\ncommandPrefix = "{}"\ndecision = "allow"\npriority = 100\n'
    old.write_text(rule.format("git status"))
    new.write_text(rule.format("git"))
    done = cli("diff", str(old), str(new), "--fail-on-widen", "--json")
    assert done.code == 1 and "gemini import" in done.out
    assert cli("diff", str(new), str(old), "--fail-on-widen").code == 0
