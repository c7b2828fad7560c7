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
    alone = bash_grammar._binding_alone()
    assert alone is not None  # the installed package's layout is the one this loader knows
    assert tree_sitter.Language(bash_grammar.bash_language()) == tree_sitter.Language(tree_sitter_bash.language())


def test_without_the_binding_file_the_package_is_imported(monkeypatch):
    monkeypatch.setattr(bash_grammar, "_binding_alone", lambda: None)
    tree = tree_sitter.Parser(tree_sitter.Language(bash_grammar.bash_language())).parse(b"sudo rm -rf /")
    assert tree.root_node.type == "program" and not tree.root_node.has_error


def test_loading_the_grammar_runs_none_of_the_packages_start_up():
    probe = ("import sys\nbefore = set(sys.modules)\nfrom dshc.compiler.bash_grammar import bash_language\n"
             "bash_language()\nprint(sorted((set(sys.modules) - before) & {'tree_sitter_bash', 'importlib.resources'}))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "[]", done.stderr


@pytest.mark.parametrize("columns", [None, "57", "0", "wide"])
def test_help_is_as_wide_as_shutil_says(monkeypatch, columns):
    if columns is None:
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("COLUMNS", columns)
    assert terminal_columns() == shutil.get_terminal_size().columns
