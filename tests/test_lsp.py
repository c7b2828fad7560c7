"""`dshc lsp`: one editor session over stdio with a real JSON-RPC client (pygls's), against a
spawned `dshc lsp` process; then the lexical completion, the source set and the VS Code folder
in-process."""

from __future__ import annotations

import asyncio
import json
import re
import shutil
import sys
from importlib import resources
from pathlib import Path

import pytest
from lsprotocol import types
from pygls.lsp.client import LanguageClient
from pygls.uris import from_fs_path, to_fs_path

from dshc.catalogs import __file__ as _catalogs_init
from dshc.cli.lsp.completion import Vocabulary, complete
from dshc.cli.lsp.hover import sample_arguments
from dshc.cli.lsp.index import ref_at
from dshc.cli.lsp.sources import SourceSet
from dshc.compiler import ast
from dshc.compiler.catalog import load_catalog
from dshc.compiler.program import SourceFile, parse_files

from conftest import run_cli

ROOT = Path(__file__).resolve().parents[1]
VSCODE = ROOT / "cli" / "lsp" / "vscode"
TIMEOUT = 60  # seconds for any one answer: a shared CI machine is slow, a hung server is not

TEAM = """\
preset reviewer "Reviewer" extends standard {
  mount tool-fss { readLimit = 100 }
}

scope review-child extends child {
  parent root
  hide write
}

policy team extends workspace-write {
  ask bash when args.command matches "git push*"
  deny   write, edit when plan_mode
}
"""
HOST = """\
host review-host "Review host" {
  provides fs, shell
  rows reviewer
  policy team
}
"""
FIXED = TEAM.replace("tool-fss", "tool-fs")
BROKEN = FIXED.replace("  parent root", "  parnt root")


def _at(text: str, needle: str, offset: int = 0, occurrence: int = 0) -> types.Position:
    """The position of `needle` (its n-th occurrence) in `text`, `offset` characters in."""
    index = -1
    for _ in range(occurrence + 1):
        index = text.index(needle, index + 1)
    line = text.count("\n", 0, index)
    return types.Position(line=line, character=index - (text.rfind("\n", 0, index) + 1) + offset)


def _dshc() -> list[str]:
    """The installed console script beside this interpreter (what an editor launches)."""
    script = Path(sys.executable).with_name("dshc")
    return [str(script)] if script.exists() else [sys.executable, "-c", "from dshc.cli.entry import entry; entry()"]


async def _session(folder: Path) -> dict:
    """Drive one editing session and record every answer; the tests below read the record."""
    record: dict = {}
    client = LanguageClient("dshc-test", "1")
    published: asyncio.Queue = asyncio.Queue()

    @client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    def _diagnostics(params: types.PublishDiagnosticsParams) -> None:
        published.put_nowait(params)

    async def diagnostics_for(uri: str, version: int, lint: bool = False) -> types.PublishDiagnosticsParams:
        """The diagnostics of that version; with `lint`, those that follow once the lint is done."""
        while True:
            params = await asyncio.wait_for(published.get(), TIMEOUT)
            if (
                params.uri == uri
                and params.version == version
                and (not lint or any(d.severity == types.DiagnosticSeverity.Warning for d in params.diagnostics))
            ):
                return params

    def ask(coro):
        return asyncio.wait_for(coro, TIMEOUT)

    command = _dshc()
    await client.start_io(command[0], *command[1:], "lsp", cwd=str(folder))
    record["pid"] = client._server.pid  # noqa: SLF001 - the test checks that the process it started ended
    try:
        await ask(
            client.initialize_async(
                types.InitializeParams(capabilities=types.ClientCapabilities(), root_uri=from_fs_path(str(folder)))
            )
        )
        client.initialized(types.InitializedParams())
        path = folder / "team.dsh"
        uri = from_fs_path(str(path))
        doc = types.TextDocumentIdentifier(uri=uri)
        client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(uri=uri, language_id="dsh", version=1, text=TEAM)
            )
        )
        record["opened"] = await diagnostics_for(uri, 1)

        def change(version: int, text: str) -> None:
            client.text_document_did_change(
                types.DidChangeTextDocumentParams(
                    text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
                    content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
                )
            )

        change(2, FIXED)
        record["fixed"] = await diagnostics_for(uri, 2, lint=True)

        async def hover(needle: str, offset: int = 1, occurrence: int = 0):
            return await ask(
                client.text_document_hover_async(
                    types.HoverParams(text_document=doc, position=_at(FIXED, needle, offset, occurrence))
                )
            )

        record["hover_tool"] = await hover("bash")
        record["hover_rule"] = await hover("ask bash", 0)
        record["hover_package"] = await hover("tool-fs")

        async def completion(needle: str, offset: int):
            return await ask(
                client.text_document_completion_async(
                    types.CompletionParams(text_document=doc, position=_at(FIXED, needle, offset))
                )
            )

        record["complete_package"] = await completion("tool-fs", len("tool-f"))
        record["complete_config"] = await completion("readLimit", len("read"))
        record["complete_fact"] = await completion("plan_mode", 0)
        record["complete_argument"] = await completion("command matches", 0)

        async def definition(text: str, needle: str, offset: int = 1, of: str = uri):
            return await ask(
                client.text_document_definition_async(
                    types.DefinitionParams(
                        text_document=types.TextDocumentIdentifier(uri=of), position=_at(text, needle, offset)
                    )
                )
            )

        record["def_extends"] = await definition(FIXED, "standard")
        record["def_parent"] = await definition(FIXED, "root")
        record["def_mount"] = await definition(FIXED, "tool-fs")
        record["def_policy_extends"] = await definition(FIXED, "workspace-write")
        host_uri = from_fs_path(str(folder / "host.dsh"))
        client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(uri=host_uri, language_id="dsh", version=1, text=HOST)
            )
        )
        record["host_opened"] = await diagnostics_for(host_uri, 1)
        record["def_host_policy"] = await definition(HOST, "team", of=host_uri)

        record["formatting"] = await ask(
            client.text_document_formatting_async(
                types.DocumentFormattingParams(
                    text_document=doc, options=types.FormattingOptions(tab_size=2, insert_spaces=True)
                )
            )
        )

        change(3, BROKEN)
        record["broken"] = await diagnostics_for(uri, 3)
        record["hover_broken"] = await hover("bash")
        record["formatting_broken"] = await ask(
            client.text_document_formatting_async(
                types.DocumentFormattingParams(
                    text_document=doc, options=types.FormattingOptions(tab_size=2, insert_spaces=True)
                )
            )
        )
        await ask(client.shutdown_async(None))
        client.exit(None)
    finally:
        await client.stop()
    record["returncode"] = client._server.returncode  # noqa: SLF001
    return record


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("lsp")
    (folder / "team.dsh").write_text(TEAM, encoding="utf-8")
    (folder / "host.dsh").write_text(HOST, encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def session(folder) -> dict:
    return asyncio.run(_session(folder))


# --- the session -----------------------------------------------------------------------------
def test_a_mistake_is_reported_with_its_range_as_soon_as_the_file_opens(session):
    (found,) = session["opened"].diagnostics
    assert found.code == "DSH201" and found.severity == types.DiagnosticSeverity.Error
    start = _at(TEAM, "tool-fss")
    assert found.range == types.Range(start=start, end=types.Position(line=start.line, character=start.character + 8))
    assert "unknown package `tool-fss`" in found.message and "did you mean `tool-fs`?" in found.message


def test_fixing_the_mistake_clears_it_and_lint_speaks_as_you_type(session):
    found = session["fixed"].diagnostics
    assert session["fixed"].version == 2
    assert not [d for d in found if d.severity == types.DiagnosticSeverity.Error]
    (lint,) = found
    assert lint.code == "DSH309" and lint.range.start.line == _at(FIXED, "git push*").line


def test_a_syntax_error_while_typing_points_at_the_token(session):
    (found,) = session["broken"].diagnostics
    start = _at(BROKEN, "parnt")
    assert found.code == "DSH101"
    assert found.range == types.Range(start=start, end=types.Position(line=start.line, character=start.character + 5))
    assert session["hover_broken"] is None  # nothing to point at in a buffer that does not parse
    assert session["formatting_broken"] is None  # as `dshc fmt` refuses such a file


def test_hover_on_a_tool_shows_what_explain_and_decide_say(session, folder):
    text = session["hover_tool"].contents.value
    assert "`tool-bash/bash`" in text
    assert "`dshc explain bash --policy team`" in text and "`bash` is available" in text
    assert "bash: allow: no rule matched" in text
    assert session["hover_tool"].range.start == _at(FIXED, "bash")


def test_hover_on_a_rule_decides_a_call_it_is_about(session, folder):
    text = session["hover_rule"].contents.value
    assert 'ask bash when args.command matches "git push*"' in text
    assert '--args \'{"command": "git push"}\'' in text
    assert f"bash: ask: rule `ask` matched (decided by team/ask@11 at {folder / 'team.dsh'}:11:3)" in text


def test_hover_on_a_package_lists_its_config_and_tools(session):
    text = session["hover_package"].contents.value
    assert "**package** `tool-fs`" in text and "`readLimit` (integer, default `2000`)" in text
    assert "`dshc explain TOOL reviewer`" in text and "write: available" in text


def _labels(completion) -> list[str]:
    return [item.label for item in completion.items]


def test_completion_offers_packages_replacing_the_word_typed(session):
    completion = session["complete_package"]
    assert {"tool-fs", "tool-fs-search", "tool-bash"} <= set(_labels(completion))
    edit = next(item.text_edit for item in completion.items if item.label == "tool-fs-search")
    start = _at(FIXED, "tool-fs")
    assert edit.range == types.Range(start=start, end=types.Position(line=start.line, character=start.character + 6))


def test_completion_offers_config_keys_facts_and_arguments(session):
    assert {"readLimit", "readMaxBytes"} <= set(_labels(session["complete_config"]))
    assert "mount" not in _labels(session["complete_config"])
    assert {"plan_mode", "platform", "args", "has", "not"} <= set(_labels(session["complete_fact"]))
    # `args.` in a rule on bash: bash's parameters
    assert {"command", "workdir"} <= set(_labels(session["complete_argument"]))
    assert "file_path" not in _labels(session["complete_argument"])


def _line_of(path: Path, pattern: str) -> int:
    return next(n for n, line in enumerate(path.read_text(encoding="utf-8").splitlines()) if re.search(pattern, line))


def test_definition_jumps_to_extends_parent_mount_and_policy(session, folder):
    shipped = Path(str(resources.files("dshc.presets")))
    policies = Path(str(resources.files("dshc.policies")))
    packages = Path(_catalogs_init).parent / "packages"
    expected = {
        "def_extends": (shipped / "standard.dsh", r"^preset standard "),
        "def_parent": (shipped / "scopes.dsh", r"^scope root "),
        "def_mount": (packages / "tool-fs.json", r'"id": "tool-fs"'),
        "def_policy_extends": (policies / "permissions.dsh", r"^policy workspace-write "),
        "def_host_policy": (folder / "team.dsh", r"^policy team "),
    }
    for key, (path, pattern) in expected.items():
        location = session[key]
        assert Path(to_fs_path(location.uri)).resolve() == path.resolve(), key
        assert location.range.start.line == _line_of(path, pattern), key


def test_a_second_file_resolves_against_its_sibling(session):
    assert list(session["host_opened"].diagnostics) == []


def test_formatting_returns_what_dshc_fmt_writes(session, tmp_path):
    copy = tmp_path / "team.dsh"
    copy.write_text(FIXED, encoding="utf-8")
    assert run_cli("fmt", str(copy)).code == 0
    (edit,) = session["formatting"]
    assert edit.new_text == copy.read_text(encoding="utf-8") != FIXED
    assert edit.range.start == types.Position(line=0, character=0)
    assert edit.range.end.line >= FIXED.count("\n")


def test_the_server_process_ends_on_exit(session):
    assert session["returncode"] == 0


# --- completion, in-process ------------------------------------------------------------------
@pytest.fixture(scope="module")
def vocabulary(program) -> Vocabulary:
    return Vocabulary.of(load_catalog(), program)


def _complete(text: str, vocabulary: Vocabulary) -> set[str]:
    """Candidates at the `|` in text."""
    before, after = text.split("|")
    lines = before.split("\n")
    found, _ = complete(before + after, len(lines) - 1, len(lines[-1]), vocabulary)
    return {c.label for c in found}


@pytest.mark.parametrize(
    "text, present, absent",
    [
        ("|", {"preset", "policy", "scope", "host", "commands"}, {"mount"}),
        ("preset p {\n  |", {"mount", "provides", "present"}, {"allow", "parent"}),
        ("preset p {\n  provides fs, |", {"shell", "web", "sandbox", "approval"}, {"tool-fs"}),
        ("scope s {\n  parent |", {"root", "child"}, {"standard"}),
        ("scope s {\n  only read, gr|", {"grep", "glob", "read"}, {"tool-fs"}),
        ("policy p extends |", {"workspace-write", "read-only"}, {"standard"}),
        ('scope s "A title" |', {"extends"}, {"parent"}),
        ("scope s ex|", {"extends"}, set()),
        ("policy p {\n  deny risk(|", {"file-mutation", "any-process"}, {"bash"}),
        ("policy p {\n  ask package(|", {"tool-fs", "tool-bash"}, set()),
        ("policy p {\n  guard g: deny |", {"bash", "package(", "risk("}, set()),
        ("policy p {\n  allow bash when args.command is |", {"readonly"}, set()),
        ("policy p {\n  sandbox |", {"read-only", "workspace-write", "fallback"}, set()),
        ("host h {\n  policy |", {"read-only", "plan"}, set()),
        ("host h {\n  roster default |", {"standard", "minimal"}, set()),
        ("preset p {\n  mount tool-bash when |", {"platform", "host", "has"}, {"plan_mode", "args"}),
        ('policy p {\n  allow bash when args.command matches "gi|', set(), {"bash", "platform"}),
        ("policy p {\n  # allow |", set(), {"bash"}),
    ],
)
def test_completion_by_context(vocabulary, text, present, absent):
    found = _complete(text, vocabulary)
    assert present <= found, present - found
    assert not (absent & found), absent & found


def test_completion_needs_no_parsable_file(vocabulary):
    # an unclosed block and a half-written rule above the cursor
    assert {"tool-fs"} <= _complete("policy p {\n  allow (\n}\npreset q {\n  mount tool-|", vocabulary)


# --- positions and hover helpers -------------------------------------------------------------
def _document(text: str) -> ast.Document:
    (document,), diags, _ = parse_files([SourceFile("x.dsh", text.encode("utf-8"))])
    assert not diags
    return document


def test_the_innermost_name_wins():
    document = _document(FIXED)
    rule = ref_at(document, 11, 3)
    tool = ref_at(document, 11, 7)
    assert (rule.kind, tool.kind, tool.text) == ("rule", "tool", "bash")
    assert ref_at(document, 11, 20).kind == "fact"
    assert ref_at(document, 4, 1) is None  # a blank line


def test_sample_arguments_skip_negated_tests():
    document = _document('policy p {\n  ask bash when args.command matches "rm *" and not args.workdir == "/"\n}\n')
    (rule,) = document.decls[0].rules
    assert sample_arguments(rule.condition) == {"command": "rm"}


# --- the source set --------------------------------------------------------------------------
def test_a_workspace_copy_of_a_shipped_file_replaces_it(tmp_path):
    copy = tmp_path / "presets" / "standard.dsh"
    copy.parent.mkdir()
    shutil.copy(Path(str(resources.files("dshc.presets"))) / "standard.dsh", copy)
    result = SourceSet().analyse(str(copy), lint=False)
    assert result.program is not None and result.diagnostics == []  # not DSH210 "declared twice"


def test_a_sibling_that_does_not_parse_does_not_hide_this_files_findings(tmp_path):
    (tmp_path / "broken.dsh").write_text("policy {", encoding="utf-8")
    mine = tmp_path / "mine.dsh"
    mine.write_text("scope s {\n  parent nowhere\n}\n", encoding="utf-8")
    result = SourceSet().analyse(str(mine), lint=False)
    assert [(d.code, d.span.line) for d in result.diagnostics] == [("DSH206", 2)]


def test_a_buffer_wins_over_the_file_on_disk(tmp_path):
    mine = tmp_path / "mine.dsh"
    mine.write_text("scope s {\n  parent nowhere\n}\n", encoding="utf-8")
    sources = SourceSet()
    sources.buffers[str(mine)] = "scope s {\n  parent root\n}\n"
    assert sources.analyse(str(mine), lint=False).diagnostics == []


# --- the VS Code folder ----------------------------------------------------------------------
def _grammar_keywords() -> set[str]:
    """Every keyword of the DSL: the quoted words of grammar.lark outside its comments."""
    text = (ROOT / "compiler" / "grammar.lark").read_text(encoding="utf-8")
    code = "\n".join(line.split("//", 1)[0] for line in text.splitlines())
    return set(re.findall(r'"([a-z_]+)"', code))


def _rules(node):
    """(scope name, python regex) of every `match` pattern in a TextMate grammar, captures included."""
    if isinstance(node, dict):
        if "match" in node:
            names = [node.get("name", "")] + [c.get("name", "") for c in node.get("captures", {}).values()]
            yield names, re.compile(node["match"])
        for value in node.values():
            yield from _rules(value)
    elif isinstance(node, list):
        for value in node:
            yield from _rules(value)


def _highlighted(rules, text: str) -> set[str]:
    """The words of `text` some keyword-like pattern colours (a match or a capture group)."""
    found = set()
    for names, pattern in rules:
        if not any(n.startswith(("keyword", "storage", "constant.language", "support")) for n in names):
            continue
        for match in pattern.finditer(text):
            found.update(g for g in (match.group(0), *match.groups()) if g and g.isidentifier())
    return found


def test_textmate_grammar_is_json_and_colours_every_keyword():
    grammar = json.loads((VSCODE / "syntaxes" / "dsh.tmLanguage.json").read_text(encoding="utf-8"))
    assert grammar["scopeName"] == "source.dsh"
    rules = list(_rules(grammar))
    keywords = _grammar_keywords()
    assert {"preset", "guard", "matches", "outside", "except", "fallback", "true"} <= keywords  # the reader works
    # `package` and `risk` are keywords only before `(`: `package(tool-fs)`
    missing = {k for k in keywords if k not in _highlighted(rules, f"{k} x") | _highlighted(rules, f"{k}(x)")}
    assert not missing, f"keywords of grammar.lark the TextMate grammar does not colour: {sorted(missing)}"


def test_textmate_grammar_does_not_colour_keywords_inside_names():
    rules = list(_rules(json.loads((VSCODE / "syntaxes" / "dsh.tmLanguage.json").read_text(encoding="utf-8"))))
    assert _highlighted(rules, "mount tool-ask-user as ask_user") == {"mount", "as"}


def test_vscode_extension_launches_dshc_lsp_for_dsh_files():
    package = json.loads((VSCODE / "package.json").read_text(encoding="utf-8"))
    (language,) = package["contributes"]["languages"]
    assert language["extensions"] == [".dsh"]
    for relative in (package["main"], language["configuration"], package["contributes"]["grammars"][0]["path"]):
        assert (VSCODE / relative).is_file(), relative
    json.loads((VSCODE / "language-configuration.json").read_text(encoding="utf-8"))
    script = (VSCODE / package["main"]).read_text(encoding="utf-8")
    assert 'args: ["lsp"' in script and "vscode-languageclient/node" in script
    assert "vscode-languageclient" in package["dependencies"]


def test_a_catalog_that_does_not_load_stops_before_serving(tmp_path):
    result = run_cli("lsp", "--catalog", str(tmp_path))  # an empty folder: no schema, no manifest
    assert result.code == 2 and "DSH501" in result.err


def test_catalog_overlays_add_to_the_shipped_catalog_as_on_the_command_line():
    """`dshc lsp --catalog DIR` adds DIR's packages; the shipped ones stay, and a jump finds the overlay's JSON."""
    from dshc.cli.lsp.definition import definition
    from dshc.cli.lsp.server import DshLanguageServer

    overlay = ROOT / "examples" / "plugin-catalog"
    server = DshLanguageServer((str(overlay),))
    assert {"acme-tickets", "tool-fs"} <= set(server.catalog.package_by_id)
    assert "ticket_read" in {t.name for t in server.catalog.definitions.values()}
    from dshc.cli.lsp.index import Ref

    span = definition(Ref("package", "acme-tickets", None, None), [], server.catalog, server.catalog_dirs)
    assert span is not None and Path(span.path) == overlay / "packages" / "acme-tickets.json"
    shipped = definition(Ref("package", "tool-fs", None, None), [], server.catalog, server.catalog_dirs)
    assert shipped is not None and Path(shipped.path).name == "tool-fs.json"


# --- hover, in-process -----------------------------------------------------------------------
def _hover_at(program, text: str, needle: str, offset: int = 1) -> str | None:
    from dshc.cli.lsp.hover import hover

    position = _at(text, needle, offset)
    ref = ref_at(_document(text), position.line + 1, position.character + 1)
    return hover(ref, program, program.catalog, None)


def test_hover_on_config_keys_facts_and_services(program):
    text = (
        'preset p {\n  mount tool-fs { readLimit = 5 } when platform == "linux" and has web\n}\n'
        'policy q {\n  deny bash when args.command matches "x" and plan_mode\n}\n'
    )
    assert "**config** `tool-fs.readLimit` (integer; default `2000`)" in _hover_at(program, text, "readLimit")
    assert "`platform` (string): one of `darwin`, `linux`, `win32`" in _hover_at(program, text, "platform")
    assert "**service** `web`" in _hover_at(program, text, "web")
    assert "the call's argument `command`" in _hover_at(program, text, "args.command")
    assert "**fact** `plan_mode` (boolean)" in _hover_at(program, text, "plan_mode")


def test_hover_without_a_program_still_shows_the_catalog():
    from dshc.cli.lsp.hover import hover

    text = "scope s {\n  hide write\n}\n"
    position = _at(text, "write", 1)
    ref = ref_at(_document(text), position.line + 1, position.character + 1)
    shown = hover(ref, None, load_catalog(), None)
    assert "`tool-fs/write`" in shown and "dshc explain" not in shown
