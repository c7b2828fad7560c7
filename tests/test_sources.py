"""Source texts belong to the Program (and its errors): excerpts never mix up two Programs."""

from __future__ import annotations

import pytest

from dshc.compiler.diagnostics import DshError
from dshc.compiler.program import Program
from dshc.compiler.render import human
from dshc.compiler.request import Request

# the same file name, the same mistake on line 2, different text on that line
FIRST = 'policy p "First" {\n  allow wirte   # first file\n}\n'
SECOND = 'policy p "Second" {\n  allow wirte, read   # second file\n}\n'


def load_error(text: str) -> DshError:
    with pytest.raises(DshError) as info:
        Program.load(texts={"same.dsh": text}, shipped=False)
    return info.value


def test_two_programs_with_same_named_files_each_show_their_own_excerpt():
    first, second = load_error(FIRST), load_error(SECOND)  # the second loaded last, as the bug needed
    first_text = human(first.diagnostics, sources=first.sources)
    second_text = human(second.diagnostics, sources=second.sources)
    assert "   2 |   allow wirte   # first file" in first_text and "second file" not in first_text
    assert "   2 |   allow wirte, read   # second file" in second_text and "first file" not in second_text


def test_request_errors_carry_the_texts_of_the_program_that_raised_them():
    def preset(comment):
        return f'preset mine "Mine" {{\n  mount tool-web   # {comment}\n}}\n'

    programs = [Program.load(texts={"mine.dsh": preset(c)}) for c in ("alpha", "beta")]
    for program, comment in zip(programs, ("alpha", "beta")):
        with pytest.raises(DshError) as info:
            program.view(Request(preset="mine", host="web", without_services={"web"}))
        text = human(info.value.diagnostics, sources=info.value.sources)
        assert f"# {comment}" in text and "^" in text


def test_the_cli_shows_the_excerpt_of_the_file_it_loaded(cli, tmp_path):
    path = tmp_path / "same.dsh"
    path.write_text(FIRST)
    result = cli("check", str(path))
    assert result.code == 2 and "allow wirte   # first file" in result.err and "^^^^^" in result.err
