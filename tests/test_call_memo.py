"""A call's Env remembers what it found about its arguments (inside/outside the workspace, a glob's
match): many rules test one path or one glob, and each answer is computed once per call — the same
answer each rule would get alone."""

from __future__ import annotations

import itertools

import pytest

from dshc.compiler import ast, conditions
from dshc.compiler.conditions import Env, evaluate
from dshc.compiler.parse import parse_source
from dshc.compiler.file_pattern import canonical_args
from dshc.compiler.paths import CanonicalPath
from dshc.compiler.source import Source


def _conditions(text: str) -> list:
    decls, diags, _ = parse_source(Source("t.dsh", "policy p {\n" + text + "\n}\n"))
    assert not diags, diags
    return [rule.condition for rule in decls[0].rules]


def _env(args: dict, workspace: str) -> Env:
    return Env({}, frozenset(), args=canonical_args(args, ("file_path", "path"), workspace), workspace=workspace)


CONDITIONS = _conditions(
    "\n".join(
        [
            "  allow read when args.file_path inside workspace",
            "  deny read when args.file_path outside workspace",
            '  allow read when args.file_path inside workspace and args.file_path matches "*.py"',
            '  deny read when args.file_path matches "/etc/*"',
            '  ask read when args.path inside workspace and not args.file_path matches "*.md"',
            '  allow read when args.path outside workspace or args.file_path matches "src/*"',
        ]
    )
)
PATHS = ["src/a.py", "../x.py", "/etc/hosts", "~/notes.md", "src/../../y.md", "docs/b.md"]


def test_each_rule_gets_the_answer_it_would_get_alone(tmp_path):
    workspace = str(tmp_path)
    for file_path, path in itertools.product(PATHS, PATHS):
        args = {"file_path": file_path, "path": path}
        shared = _env(args, workspace)
        for condition, lenient in itertools.product(CONDITIONS, (True, False)):
            assert evaluate(condition, shared, lenient) == evaluate(condition, _env(args, workspace), lenient), (
                condition,
                args,
            )


def test_one_walk_per_path_and_one_match_per_glob(tmp_path, monkeypatch):
    walks, matches = [], []
    real_inside, real_match = conditions.path_inside, conditions.glob_match
    monkeypatch.setattr(conditions, "path_inside", lambda p, w: walks.append(p) or real_inside(p, w))
    monkeypatch.setattr(conditions, "glob_match", lambda g, v, *a: matches.append(g) or real_match(g, v, *a))
    env = _env({"file_path": "src/a.py", "path": "/etc/hosts"}, str(tmp_path))
    for condition in CONDITIONS:
        evaluate(condition, env, True)
    assert sorted(walks) == ["/etc/hosts", "src/a.py"]  # one per distinct path, though five tests read them
    first_pass = len(matches)
    for condition in CONDITIONS * 3:  # the same tests in more rules of the same call
        evaluate(condition, env, True)
        evaluate(condition, env, False)
    assert len(walks) == 2 and len(matches) == first_pass
    fresh = _env({"file_path": "src/a.py", "path": "/etc/hosts"}, str(tmp_path))
    evaluate(CONDITIONS[0], fresh, True)
    assert len(walks) == 3  # another call (another Env) finds out again


def test_same_text_other_absolute_is_another_answer(tmp_path):
    """Two canonical paths with one text but different absolute forms must not share an answer."""
    inside, outside = CanonicalPath("x", str(tmp_path / "x")), CanonicalPath("x", "/elsewhere/x")
    env = Env({}, frozenset(), args={"file_path": inside, "path": outside}, workspace=str(tmp_path))
    first, second = _conditions(
        "  allow read when args.file_path inside workspace\n  allow read when args.path inside workspace"
    )
    assert evaluate(first, env, False) is True and evaluate(second, env, False) is False


@pytest.mark.parametrize("value", [1, None, ["a"], {"a": 1}])
def test_odd_values_are_not_remembered_wrongly(tmp_path, value):
    env = Env({}, frozenset(), args={"file_path": value}, workspace=str(tmp_path))
    place, glob = _conditions(
        '  allow read when args.file_path inside workspace\n  allow read when args.file_path matches "*"'
    )
    for condition in (place, glob):
        assert evaluate(condition, env, True) is True and evaluate(condition, env, False) is False  # fail closed
    assert isinstance(place, ast.Place)
