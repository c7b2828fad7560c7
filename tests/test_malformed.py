"""Malformed declaration files: every mistake is reported with the right code, line and column.

Each fixture in fixtures/malformed/ carries its expectations as comments on the offending line:

    mount tool-fss   # E: DSH201 @9                      code DSH201 at this line, column 9
    # E: DSH104 line=6 @1                                code DSH104 at line 6, column 1
    mount tool-fss   # E: DSH201 @9 help~did you mean    … and its help contains "did you mean"
    mout x           # E: DSH101 @3 msg~inside a preset  … and its message contains "inside a preset"

The diagnostics of a file must match its markers exactly: (code, line, col) as a set, every
diagnostic in that file. `# XFAIL: reason` marks a fixture that shows a known compiler bug.
`*.with-shipped.dsh` files are loaded with the shipped declarations; the others alone.
"""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest

from dshc.cli.main import main
from dshc.compiler.diagnostics import Diagnostic, DshError
from dshc.compiler.program import Program

from markers import Marker, parse_markers

FIXTURES = Path(__file__).parent / "fixtures" / "malformed"
XFAIL = re.compile(r"^#\s*XFAIL:\s*(?P<reason>.+)$", re.M)


def diagnostics_of(path: Path, shipped: bool) -> tuple[Diagnostic, ...]:
    try:
        Program.load([path], shipped=shipped)
    except DshError as exc:
        return exc.diagnostics
    return ()


def assert_reported(path: Path, markers: list[Marker], shipped: bool = False) -> tuple[Diagnostic, ...]:
    diags = diagnostics_of(path, shipped)
    for d in diags:
        assert d.message and "Traceback" not in d.message, d
        assert d.span is not None and d.span.path == str(path), f"diagnostic outside {path.name}: {d}"
    positions = [(d.span.line, d.span.col) for d in diags]
    assert positions == sorted(positions), "diagnostics are not sorted by (line, col)"
    got = {(d.code, d.span.line, d.span.col) for d in diags}
    assert got == {m.where for m in markers}, "\n".join(f"{d.span}: {d.code} {d.message}" for d in diags)
    for m in markers:
        d = next(d for d in diags if (d.code, d.span.line, d.span.col) == m.where)
        assert m.msg is None or m.msg in d.message, (m, d.message)
        assert m.help is None or m.help in (d.help or ""), (m, d.help)
    return diags


# --- the fixture corpus -----------------------------------------------------------------------
def _fixture_param(path: Path):
    reason = XFAIL.search(path.read_text(encoding="utf-8"))
    marks = [pytest.mark.xfail(reason=reason["reason"], strict=True)] if reason else []
    return pytest.param(path, id=path.name, marks=marks)


def test_the_corpus_is_large_enough():
    assert len(list(FIXTURES.glob("*.dsh"))) >= 25


@pytest.mark.parametrize("path", [_fixture_param(p) for p in sorted(FIXTURES.glob("*.dsh"))])
def test_malformed_fixture(path: Path):
    markers = parse_markers(path.read_text(encoding="utf-8"))
    assert markers, f"{path.name} has no `# E:` marker"
    assert_reported(path, markers, shipped=path.name.endswith(".with-shipped.dsh"))


def test_marker_parser():
    text = "a   # E: DSH201 @9 help~did you mean `x`?\n# E: DSH104 line=7 @1\nb # E: DSH209 @2  # E: DSH214 @5 msg~m\n"
    assert parse_markers(text) == [
        Marker("DSH201", 1, 9, None, "did you mean `x`?"),
        Marker("DSH104", 7, 1),
        Marker("DSH209", 3, 2),
        Marker("DSH214", 3, 5, "m"),
    ]
    with pytest.raises(ValueError):
        parse_markers("mount x   # E: DSH201\n")  # the column is mandatory


# --- generated cases --------------------------------------------------------------------------
GENERATED = [
    pytest.param(b"", [Marker("DSH106", 1, 1)], id="empty"),
    pytest.param(b"# nothing here\n\n   # still nothing\n", [Marker("DSH106", 1, 1)], id="only-comments"),
    pytest.param(
        b"preset p {\n  mount tool-fs\n  mount tool-\xff\xfe\n}\n", [Marker("DSH105", 3, 14)], id="invalid-utf8"
    ),
    # every other column counts characters: `é` is one column (two bytes), so 0xff is at column 10
    pytest.param(
        b"preset p {\n  mount tool-fs\n  # caf\xc3\xa9 \xff\n}\n",
        [Marker("DSH105", 3, 10)],
        id="invalid-utf8-after-multibyte",
    ),
]


@pytest.mark.parametrize("data, markers", GENERATED)
def test_generated(tmp_path: Path, data: bytes, markers: list[Marker]):
    path = tmp_path / "generated.dsh"
    path.write_bytes(data)
    assert_reported(path, markers)


def ten_thousand_lines_with_one_mistake() -> tuple[str, Marker]:
    """A 10,000-line file whose one mistake is on line 9,876 (its load time is in tests/bench/bench_resolution.py)."""
    lines = [f"preset p{n} {{ mount tool-todo {{ allowParallelInProgress = true }} }}" for n in range(1, 10_001)]
    lines[9_875] = "preset p9876 { mount tool-tood { allowParallelInProgress = true } }"
    return "\n".join(lines) + "\n", Marker("DSH201", 9_876, 22, help="did you mean `tool-todo`?")


def test_ten_thousand_lines_report_the_one_mistake(tmp_path: Path):
    text, marker = ten_thousand_lines_with_one_mistake()
    path = tmp_path / "big.dsh"
    path.write_text(text, encoding="utf-8")
    (only,) = assert_reported(path, [marker])
    assert only.message == "unknown package `tool-tood`"


# --- the command line -------------------------------------------------------------------------
def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out, err)
    return code, out.getvalue(), err.getvalue()


def test_cli_check_reports_a_malformed_file_with_a_caret():
    path = FIXTURES / "unknown-package.dsh"
    code, _, err = run("check", str(path))
    assert code == 2
    assert f"{path}:2:9: error[DSH201]" in err
    assert any(line.strip() and set(line.strip()) == {"^"} for line in err.splitlines()), err


def test_cli_check_json_lists_every_diagnostic_field():
    path = FIXTURES / "two-errors-sorted.dsh"
    code, out, _ = run("check", str(path), "--json")
    assert code == 2
    diags = json.loads(out)["diagnostics"]
    assert [(d["code"], d["line"], d["col"]) for d in diags] == sorted(
        (m.where for m in parse_markers(path.read_text(encoding="utf-8"))), key=lambda w: w[1:]
    )
    for d in diags:
        assert {"code", "severity", "message", "path", "line", "col", "end_line", "end_col", "help"} <= d.keys()
        assert d["path"] == str(path) and d["severity"] == "error"


def test_a_long_word_before_a_mistake_is_read_in_a_bounded_window(monkeypatch):
    """A 32,000-character word in a comment before a syntax error cost `dshc check` minutes: the hint's
    patterns searched the whole text before the token from every start. They now read a window of it."""
    from dshc.compiler import parse

    searched: list[int] = []

    class Recording:
        def __init__(self, pattern):
            self.pattern = pattern

        def search(self, text):
            searched.append(len(text))
            return self.pattern.search(text)

    monkeypatch.setattr(parse, "_FACT_BEFORE", Recording(parse._FACT_BEFORE))
    word = "x" * 32_000
    text = f"policy p extends workspace-write {{ # {word}\n  default allow\n  oops\n}}\n"
    with pytest.raises(DshError) as caught:
        Program.load(texts={"long.dsh": text})
    assert [d.code for d in caught.value.diagnostics] == ["DSH101"] and caught.value.diagnostics[0].span.line == 3
    assert searched and max(searched) <= parse._LOOK_BACK


def test_a_long_line_is_shown_cut_around_the_mistake():
    from dshc.compiler.render import SHOWN, human

    word = "y" * 32_000
    text = f"policy p extends workspace-write {{\n  default allow\n  {word}\n}}\n"
    with pytest.raises(DshError) as caught:
        Program.load(texts={"long.dsh": text})
    shown = human(caught.value.diagnostics, sources={"long.dsh": text})
    assert "(32000 characters)" in shown and max(len(line) for line in shown.splitlines()) < SHOWN + 300
