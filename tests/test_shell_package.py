"""compiler/shell/ is a package of modules with one responsibility each: none is over 500 lines, and each
opens with a docstring of one to three lines saying what it does."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "compiler" / "shell"
MODULES = sorted(PACKAGE.glob("*.py"))


def test_the_walk_words_and_program_readings_are_modules_of_their_own():
    assert {
        "__init__",
        "walk",
        "words",
        "redirections",
        "options",
        "programs",
        "runners",
        "interpreters",
        "files",
        "matching",
        "plain",
    } <= {path.stem for path in MODULES}


@pytest.mark.parametrize("path", MODULES, ids=lambda path: path.name)
def test_each_module_is_short_and_says_what_it_does(path):
    text = path.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 500
    docstring = ast.get_docstring(ast.parse(text), clean=False)
    assert docstring and 1 <= len(docstring.strip().splitlines()) <= 3
