"""compiler/file_pattern.py: a file a shell command writes but cannot name (`cp "$f" .claude/`, `sed -i … *.py`,
`cd d; cp a b`) is decided as a write of a pattern — a deny whose glob may meet it applies, an allow only one
every file of it matches. Held here to brute force on small alphabets, and through a policy (the index and
the reference evaluator agree). Bypass forms are in the corpus (tests/fixtures/bypass/corpus.json)."""

from __future__ import annotations

import itertools
import os
import re

import pytest
from hypothesis import given, settings, strategies as st

from dshc.compiler.file_pattern import ANY, NAME, ONE, FilePattern, glob_items, languages_meet, pattern_path, _flatten
from dshc.compiler.globs import glob_match
from dshc.compiler.program import Program

from conftest import bash_by_both, examples

ALPHABET = "ab/"
TEXTS = ["".join(chars) for size in range(7) for chars in itertools.product(ALPHABET, repeat=size)]


def _regex(items) -> re.Pattern:
    return re.compile(
        "".join({NAME: "[^/]*", ONE: "[^/]", ANY: ".*"}.get(item, re.escape(item)) for item in items), re.DOTALL
    )


def _texts(items) -> list[str]:
    regex = _regex(items)
    return [text for text in TEXTS if regex.fullmatch(text)]


pattern_items = st.lists(st.sampled_from(["a", "b", "/", NAME, ONE, ANY]), max_size=4)
globs = st.lists(st.sampled_from(["a", "/", "*", "?"]), max_size=4).map("".join)


@settings(max_examples=examples(400), deadline=None)
@given(pattern_items, globs)
def test_meeting_is_exactly_a_shared_text(items, glob):
    # every witness needs at most one character per item of either side: texts up to 6 characters find it
    shared = any(glob_match(glob, text) for text in _texts(items))
    assert languages_meet(_flatten(items), glob_items(glob)) == shared, (items, glob)


@settings(max_examples=400, deadline=None)
@given(pattern_items, st.sampled_from(["a*", "*a", "a/*", "*/a", "a*a", "*", "/*", "?*", "a"]))
def test_surely_matching_never_claims_a_text_the_glob_refuses(items, glob):
    pattern = FilePattern((tuple(items),), None)
    if pattern.surely_matches(glob):
        assert all(glob_match(glob, text) for text in _texts(items)), (items, glob)


def test_a_literal_prefix_and_suffix_around_one_star_is_told():
    pattern = FilePattern((("src/", NAME, ".py"),), None)
    assert pattern.surely_matches("src/*") and pattern.surely_matches("*.py") and pattern.surely_matches("src/*.py")
    assert not pattern.surely_matches("src/a*") and not pattern.surely_matches("lib/*")


@pytest.fixture()
def workspace(tmp_path):
    (tmp_path / "ws").mkdir()
    return str(tmp_path / "ws")


@pytest.mark.parametrize(
    "items, shown, inside",
    [
        ((".claude/", NAME), ".claude/*", True),
        ((NAME, ".py"), "*.py", True),
        (("a/../", NAME), "*", True),
        (("/etc/", NAME), "/etc/*", False),
        (("../", NAME), "PARENT/*", None),  # the workspace is one of the parent's files
        (("src/../../", NAME), "PARENT/*", None),
        (("src/", NAME, "/../x"), "src/*/../x", None),  # a `..` after the directory: no directory holds it
        ((ANY, "/settings.json"), "**settings.json", None),  # `$d/settings.json` is `settings.json` when `$d` is `.`
        ((".claude/", ANY), "**", None),  # `.claude/$f` with `$f` = `../../etc/passwd`
    ],
)
def test_a_pattern_is_made_canonical_by_its_directory(workspace, items, shown, inside):
    made = pattern_path(items, workspace)
    assert str(made) == shown.replace("PARENT", os.path.dirname(os.path.realpath(workspace)))
    assert made.inside(workspace) is inside


def test_a_relative_pattern_has_both_forms(workspace):
    made = pattern_path((".claude/", NAME), workspace)
    assert made.may_match(".claude/*") and made.may_match(os.path.realpath(workspace) + "/.claude/settings.json")
    assert not made.may_match("src/*") and not made.may_match("/etc/*")


POLICY = """
policy deny_list "deny-list" {
  default allow
  deny write when args.file_path matches ".claude/*"
  ask write when args.file_path outside workspace
}
policy allow_list "allow-list" {
  default deny
  allow bash when args.command matches "cp *"
  allow bash when args.command matches "sed *"
  allow write when args.file_path matches "src" or args.file_path matches "src/*"
}
policy placed "allow-list on the place" {
  default deny
  allow bash when args.command matches "cp *"
  allow write when args.file_path inside workspace and not args.file_path matches "*.env"
}
policy inside "allow-list on the place alone" {
  default deny
  allow bash when args.command matches "cp *"
  allow write when args.file_path inside workspace
}
policy guard-demo "a guard" {
  default allow
  guard settings: deny write when args.file_path matches ".claude/*"
}
"""

CASES = [
    ("deny_list", 'cp "$f" .claude/', "deny"),
    ("deny_list", "cp * .claude/", "deny"),
    ("deny_list", "cd .claude; cp /tmp/x settings.json", "deny"),
    ("deny_list", "sed -i s/a/b/ .claude/*", "deny"),
    ("deny_list", 'cp "$f" backup/', "allow"),
    ("deny_list", "sed -i s/a/b/ *.py", "allow"),
    ("deny_list", 'cp "$f" /etc/', "ask"),
    ("deny_list", 'cp x "$d"/settings.json', "deny"),
    ("allow_list", "cp -- *.py src/", "allow"),
    ("allow_list", 'cp -- "$f" src/', "allow"),
    ("allow_list", 'cp -- "$f" lib/', "deny"),
    ("allow_list", 'cp x "$d"', "deny"),
    ("placed", 'cp -- "$f" backup/', "deny"),  # backup/NAME may be backup/x.env
    ("placed", "cp -- *.py backup/", "allow"),
    ("placed", "cp -- *.py ../", "deny"),
    ("placed", "cp -t backup -- *.py", "allow"),
    ("placed", "cp -t .. -- *.py", "deny"),  # `../*.py`: maybe outside
    ("inside", "cp -t backup -- *.py", "allow"),
    ("inside", "cp -t .. -- *.py", "deny"),
    ("inside", 'cp -t backup -- "$f"', "allow"),
    ("inside", 'cp -- x "$d"', "deny"),
    ("guard-demo", 'cp "$f" .claude/', "deny"),
    ("guard-demo", 'cp "$f" backup/', "allow"),
    ("guard-demo", 'cp x "$d"/settings.json', "deny"),  # `**settings.json`: no literal part a guard is found by
]


@pytest.fixture(scope="module")
def program():
    return Program.load(texts={"p.dsh": POLICY})


@pytest.mark.parametrize("policy, command, effect", CASES)
def test_a_written_pattern_is_decided_by_the_file_rules(program, workspace, policy, command, effect):
    indexed, reference = bash_by_both(program, policy, command, str(workspace))
    assert (indexed.effect, reference.effect) == (effect, effect), (command, indexed, reference)
