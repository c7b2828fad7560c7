"""The helpers that keep a hook's start-up short give what the modules they avoid give."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest
import tree_sitter

from dshc.cli.help_format import terminal_columns
from dshc.compiler import bash_grammar


def test_the_bash_grammar_loaded_alone_is_the_packages():
    import tree_sitter_bash

    alone = bash_grammar._binding_alone("tree_sitter_bash")
    assert alone is not None  # the installed package's layout is the one this loader knows
    assert tree_sitter.Language(bash_grammar.bash_language()) == tree_sitter.Language(tree_sitter_bash.language())


def test_the_parser_loaded_alone_is_the_packages_own_type():
    alone = bash_grammar._binding_alone("tree_sitter")
    assert alone is not None and alone.Parser is tree_sitter.Parser  # one copy of the extension per process
    parser = bash_grammar.bash_parser()
    assert isinstance(parser, tree_sitter.Parser)
    tree = parser.parse(b"git status | sudo rm -rf /")
    assert [child.type for child in tree.root_node.children] == ["pipeline"] and not tree.root_node.has_error


def test_without_the_binding_files_the_packages_are_imported(monkeypatch):
    monkeypatch.setattr(bash_grammar, "_binding_alone", lambda package_name: None)
    tree = bash_grammar.bash_parser().parse(b"sudo rm -rf /")
    assert tree.root_node.type == "program" and not tree.root_node.has_error


def test_loading_the_parser_runs_none_of_the_packages_start_up(tmp_path):
    probe = (
        "import sys\nbefore = set(sys.modules)\nfrom dshc.compiler.bash_grammar import bash_parser\n"
        "assert bash_parser().parse(b'ls -l').root_node.type == 'program'\n"
        "print(sorted((set(sys.modules) - before) & {'tree_sitter', 'tree_sitter_bash', 'importlib.resources',"
        " 'typing'}))"
    )
    done = subprocess.run(
        [sys.executable, "-S", "-c", probe],
        capture_output=True,
        text=True,
        timeout=60,
        env=_bare_interpreter_env(tmp_path),
    )
    assert done.stdout.strip() == "[]", done.stderr


@pytest.mark.parametrize("columns", [None, "57", "0", "wide"])
def test_help_is_as_wide_as_shutil_says(monkeypatch, columns):
    if columns is None:
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("COLUMNS", columns)
    assert terminal_columns() == shutil.get_terminal_size().columns


def _bare_interpreter_env(tmp_path):
    """PYTHONPATH for `python -S`: dshc's parts under one `dshc` folder (links), then the folders
    of its dependencies, so no site start-up hook of this environment pre-imports anything."""
    import importlib
    import os
    import sysconfig

    package = tmp_path / "package" / "dshc"
    package.mkdir(parents=True)
    for part in ("catalogs", "cli", "common", "compiler", "policies", "presets", "runtime"):
        os.symlink(importlib.import_module(f"dshc.{part}").__path__[0], package / part)
    paths = [str(package.parent), *dict.fromkeys(sysconfig.get_paths()[k] for k in ("purelib", "platlib"))]
    return {**os.environ, "PYTHONPATH": os.pathsep.join(paths), "XDG_CACHE_HOME": str(tmp_path / "cache")}


AVOIDED = {
    "typing",
    "dataclasses",
    "inspect",
    "pathlib",
    "hashlib",
    "shutil",
    "tempfile",
    "threading",
    "importlib.resources",
    "tomllib",
    "argparse",
    "rfc8785",
    "difflib",
    "traceback",
    "tree_sitter",
}
# and what json, functools and contextlib would bring (argparse imports them: `decide` reads a plain command
# line without it); a shell command that is not plain words loads `re` with tree-sitter's binding
HOOK_AVOIDED = AVOIDED | {
    "re",
    "json",
    "enum",
    "functools",
    "collections",
    "contextlib",
    "copy",
    "fnmatch",
    "shlex",
    "importlib.util",
}


@pytest.mark.parametrize("command", ["hook", "decide"])
def test_a_cached_decision_of_a_file_tool_imports_none_of_the_avoided_modules(tmp_path, command):
    """In an interpreter without site hooks (as a clean install runs), a second process deciding a
    `read` imports none of the modules its start-up was cut free of."""
    import json

    (tmp_path / "team.dsh").write_text('policy team "Team" {\n  default ask\n}\n')
    # deciding alone: an event log (the hook's default) loads hashing, threads and the view's fingerprint
    (tmp_path / ".dshc").write_text('load = ["team.dsh"]\npolicy = "team"\nlog = "off"\n')
    probe = (
        "import sys\nfrom dshc.cli.entry import run\nrun(sys.argv[1:])\n"
        f"print(sorted(set(sys.modules) & set({sorted(HOOK_AVOIDED)!r})), file=sys.stderr)"
    )
    argv = (
        ["hook", "claude-code"]
        if command == "hook"
        else [
            "decide",
            "read",
            "--args",
            '{"file_path": "a.md"}',
            "--load",
            str(tmp_path / "team.dsh"),
            "--policy",
            "team",
        ]
    )
    event = json.dumps(
        {
            "session_id": "s",
            "cwd": str(tmp_path),
            "hook_event_name": "PreToolUse",
            "tool_name": "Read",
            "tool_input": {"file_path": str(tmp_path / "a.md")},
            "tool_use_id": "t",
        }
    )
    env = _bare_interpreter_env(tmp_path)
    runs = [
        subprocess.run(
            [sys.executable, "-S", "-c", probe, *argv],
            input=event,
            capture_output=True,
            text=True,
            env=env,
            cwd=tmp_path,
            timeout=120,
        )
        for _ in range(2)
    ]
    assert "ask" in runs[1].stdout, runs[1].stdout + runs[1].stderr
    import ast

    loaded = set(ast.literal_eval(runs[1].stderr.strip().splitlines()[-1]))
    assert loaded == set(), runs[1].stderr


@pytest.mark.parametrize(
    "argv, status",
    [
        (["decide", "read", "--args", '{"file_path": "a.md"}', "--json"], 0),
        (["decide", "nosuchtool", "--args", "{}", "--json"], 2),
        (["decide", "write", "--args", '{"file_path": "a.md", "content": "x"}', "--policy", "read-only", "--json"], 1),
    ],
)
def test_a_per_call_command_ends_with_its_status_and_all_of_its_output(tmp_path, argv, status):
    """`decide` ends its process without the interpreter's shutdown: what it wrote is still all
    there (large enough to fill the output buffer), and the status is the command's own."""
    entry = [sys.executable, "-c", "from dshc.cli.entry import entry; entry()"]
    done = subprocess.run(entry + argv, capture_output=True, text=True, timeout=120, cwd=tmp_path)
    import json

    assert done.returncode == status, done.stderr
    answer = json.loads(done.stdout)  # the whole document, flushed before the process ended
    assert ("decision" in answer) == (status != 2) and ("diagnostics" in answer) == (status == 2)
