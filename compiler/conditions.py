"""Evaluate `when` conditions: three-valued (True / False / None = not known yet).

Argument tests are evaluated with a *polarity*: for an allow rule a condition counts only
when it surely holds; for ask/deny rules and guards it counts when it possibly holds. So a
shell command we cannot fully analyse never satisfies an allow and always satisfies a deny.
"""
from __future__ import annotations

import os
from functools import lru_cache
from dataclasses import dataclass, field
from typing import Any, Mapping

from . import ast
from .globs import glob_match
from .shell import command_segments

UNKNOWN = None
SHELL_FIELDS = frozenset({"command"})


@dataclass(frozen=True)
class Env:
    facts: Mapping[str, Any]
    services: frozenset[str]
    flags: frozenset[str] = frozenset()
    args: Mapping[str, Any] | None = None  # None: arguments not known (static evaluation)
    workspace: str | None = None
    shell_tool: bool = False  # args.command is a shell command line
    extra: dict = field(default_factory=dict)


def evaluate(expr: ast.Expr, env: Env, lenient: bool) -> bool | None:
    """`lenient=True`: possibly holds (deny/ask side); False: surely holds (allow side)."""
    if isinstance(expr, ast.And):
        values = [evaluate(item, env, lenient) for item in expr.items]
        if any(v is False for v in values):
            return False
        return True if all(v is True for v in values) else UNKNOWN
    if isinstance(expr, ast.Or):
        values = [evaluate(item, env, lenient) for item in expr.items]
        if any(v is True for v in values):
            return True
        return False if all(v is False for v in values) else UNKNOWN
    if isinstance(expr, ast.Not):
        # negation flips which side counts as safe
        value = evaluate(expr.item, env, not lenient)
        return None if value is None else not value
    if isinstance(expr, ast.Flag):
        return expr.name.text in env.flags
    fact = expr.fact
    if isinstance(expr, ast.Has) and len(fact.path) == 1:
        return fact.path[0] in env.services
    if fact.path[0] == "args":
        return _argument_test(expr, env, lenient)
    value = env.facts.get(fact.dotted, UNKNOWN)
    if value is UNKNOWN:
        return UNKNOWN
    if isinstance(expr, ast.Matches):
        return isinstance(value, str) and glob_match(expr.pattern, value)
    return _value_test(expr, value)


def _value_test(expr, value) -> bool | None:
    if isinstance(expr, ast.Truthy):
        return bool(value)
    if isinstance(expr, ast.Compare):
        return (value == expr.value) == (expr.op == "==")
    if isinstance(expr, ast.Member):
        return value in expr.values
    return UNKNOWN


def _argument_test(expr, env: Env, lenient: bool) -> bool | None:
    if env.args is None:
        return UNKNOWN
    name = expr.fact.path[1]
    present = name in env.args
    if isinstance(expr, ast.Has):
        return present
    if not present:
        return False
    value = env.args[name]
    if isinstance(expr, ast.Matches):
        if not isinstance(value, str):
            return lenient  # fail closed: an odd value may match a deny, never an allow
        if env.shell_tool and name in SHELL_FIELDS:
            return _shell_matches(value, expr.pattern, lenient)
        return glob_match(expr.pattern, value)
    if isinstance(expr, ast.Place):
        if not isinstance(value, str) or env.workspace is None:
            return lenient
        inside = path_inside(value, env.workspace)
        return inside if expr.inside else not inside
    return _value_test(expr, value)


def _shell_matches(command: str, pattern: str, lenient: bool) -> bool:
    segments = command_segments(command)
    if segments is None:
        return lenient  # unparseable: may match a deny, never satisfies an allow
    if lenient:
        return any(seg.opaque or glob_match(pattern, seg.text, shell=True) for seg in segments)
    return bool(segments) and all(not seg.opaque and glob_match(pattern, seg.text, shell=True) for seg in segments)


@lru_cache(maxsize=64)
def _real_root(workspace: str) -> str:
    return os.path.realpath(workspace)


def path_inside(path: str, workspace: str) -> bool:
    """Normalise `~`, `..` and symlinks against the workspace, then test containment."""
    root = _real_root(workspace)
    expanded = os.path.expanduser(path)
    if not os.path.isabs(expanded):
        expanded = os.path.join(root, expanded)
    resolved = os.path.realpath(expanded)
    try:
        return os.path.commonpath([root, resolved]) == root
    except ValueError:
        return False
