"""Path globs with a literal segment in the middle (`*/pkg12/*.py`): the index tries one only on a path
holding that segment (`affixes.path_segment`, `_FieldIndex.others`), and decides every call as the
reference evaluator, which tries every rule as written, does."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from dshc.compiler.policy.affixes import path_segment
from dshc.compiler.program import Program
from dshc.compiler.request import Request

from conftest import tool_index

PARTS = ["pkg1", "pkg12", "src", ".git", "a.py", "b.env", "x", "pkg1.py", "1", "x1"]
GLOBS = [
    ("deny", "*/pkg12/*.py"),
    ("ask", "*/pkg1/*"),
    ("allow", "*/src/*.py"),
    ("deny", "**/.git/**"),
    ("ask", "*x/src/*"),  # its run `x/src/` holds `src` whole; `x` may end a longer part
    ("deny", "*/p?g1/*"),  # no whole literal segment: tried on every path
    ("ask", "pkg1/*.env"),  # `pkg1/` starts the text: its first part
    ("deny", "*1/src/*"),
    ("allow", "*.py"),
]
POLICY = (
    "policy gen {\n  default allow\n"
    + "".join(f'  {effect} read when args.file_path matches "{glob}"\n' for effect, glob in GLOBS)
    + "}\n"
)
PROGRAM = Program.load(texts={"p.dsh": POLICY})
REQUEST = Request(preset="standard", host="web", policy="gen")


def test_the_segment_a_glob_is_found_by():
    assert path_segment("*/pkg12/*.py") == "pkg12"
    assert path_segment("*x/y/zz/*") == "zz"  # the longest whole one
    assert path_segment("*/p?g/*") is None  # a wildcard inside: no whole literal part
    assert path_segment("pkg12/*.py") == "pkg12"  # the first run starts the text
    assert path_segment("*a/bb.py") == "bb.py"  # the last run ends it
    assert path_segment("*/p?g1/*") is None and path_segment("*//*") is None and path_segment("pkg1*") is None


def test_the_index_keeps_segmented_globs_apart():
    field = tool_index(POLICY, "read").globbed["file_path"]
    assert set(field.segmented) == {"pkg12", "pkg1", "src", ".git"}
    assert [entry.pattern for _, entry in field.unsegmented] == ["*/p?g1/*"]
    assert [e.pattern for e in field.others(["/ws/a/pkg12/b.py"])] == ["*/pkg12/*.py", "*/p?g1/*"]
    assert [e.pattern for e in field.others(["pkg1/src/b.env"])] == [
        "*/pkg1/*",
        "*/src/*.py",  # a candidate: its test then fails
        "*x/src/*",
        "*/p?g1/*",
        "pkg1/*.env",
        "*1/src/*",
    ]
    assert [e.pattern for e in field.others(["/ws/a/b.py"])] == ["*/p?g1/*"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(PARTS), min_size=1, max_size=6), st.booleans())
def test_every_path_is_decided_as_every_rule_tried_as_written_decides_it(parts, absolute):
    path = ("/ws/" if absolute else "") + "/".join(parts)
    args = {"file_path": path}
    indexed = PROGRAM.decide(REQUEST, "read", args, workspace="/ws")
    reference = PROGRAM.decide_unindexed(REQUEST, "read", args, workspace="/ws")
    assert indexed.effect == reference.effect, path
    assert set(indexed.deciding) == set(reference.deciding), path
