"""`dshc fmt`: canonical, idempotent, comments kept, and parse(fmt(x)) == parse(x)."""

from __future__ import annotations


from hypothesis import given

from dshc.compiler.fmt import format_document
from dshc.compiler.program import SourceFile, parse_files, shipped_sources

from dsl_strategies import documents


def parse_one(text: str, path: str = "x.dsh"):
    (document,), diags, _ = parse_files([SourceFile(path, text.encode("utf-8"))])
    assert not diags
    return document


@given(documents)
def test_format_round_trips_and_is_idempotent(text):
    document = parse_one(text)
    formatted = format_document(document)
    again = parse_one(formatted)
    assert again == document
    assert format_document(again) == formatted


@given(documents)
def test_format_keeps_every_comment(text):
    document = parse_one(text)
    formatted = format_document(document)
    assert [c.text for c in parse_one(formatted).comments] == [c.text for c in document.comments]


def test_shipped_files_are_formatted(cli):
    assert cli("fmt", "--check").code == 0
    for file in shipped_sources():
        documents, _, _ = parse_files([file])
        assert format_document(documents[0]).encode() == file.data, file.path


def test_fmt_check_reports_and_fmt_rewrites(cli, tmp_path):
    messy = tmp_path / "messy.dsh"
    messy.write_text(
        "scope s{parent root;hide  schedule_*}   # why\npolicy p{default deny\n deny bash when plan_mode}\n"
    )
    before = parse_one(messy.read_text())
    result = cli("fmt", "--check", str(messy))
    assert result.code == 1 and "would reformat" in result.out
    assert cli("fmt", str(messy)).code == 0
    assert messy.read_text() == (
        "scope s {  # why\n  parent root\n  hide schedule_*\n}\n\n"
        "policy p {\n  default deny\n  deny bash when plan_mode\n}\n"
    )
    assert parse_one(messy.read_text()) == before
    assert cli("fmt", "--check", str(messy)).code == 0


def test_fmt_refuses_a_file_that_does_not_parse(cli, tmp_path):
    broken = tmp_path / "broken.dsh"
    broken.write_text("preset p {\n")
    result = cli("fmt", str(broken))
    assert result.code == 2 and broken.read_text() == "preset p {\n"


def test_comments_inside_a_merged_list_stay_separate_comments():
    """Two `provides` lines merge into one item spanning the lines between them; the comments on
    those lines used to trail the merged item joined into one comment (`# #`), found by the
    hypothesis test above."""
    text = "preset a {\nprovides web, fs\nmount tool-fs  # one\nmount tool-fs  # two\nprovides web, fs\n}"
    formatted = format_document(parse_one(text))
    assert [c.text for c in parse_one(formatted).comments] == ["# one", "# two"]
    assert format_document(parse_one(formatted)) == formatted
