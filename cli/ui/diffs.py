"""Two sides named on the page (trees or contexts) → `diff_programs`' answer, with a witness per widening.

A side is `@current` (what the page shows), `@shipped`, one of the trees `dshc ui` was given (its PATHs and
`--against` trees), or a context `key=value,…` of the current declarations; both sides must be of one kind,
as in `dshc diff`. No other path is read: the page's callers choose among trees, never files.
"""

from __future__ import annotations

import json
import os

from ...compiler.diagnostics import DshError, invalid_request
from ...compiler.diff import diff_programs
from ...compiler.program import Program
from ..sides import context_request as _context, side_program

CURRENT = "@current"
MAX_CELLS_SHOWN = 6  # per change; the page says how many more


def _tree(spec: str, trees: dict[str, str]) -> str | None:
    """The tree `spec` names (`@current`, `@shipped`, or a given tree's path), or None for a context."""
    if spec in (CURRENT, "@shipped"):
        return spec
    found = trees.get(os.path.realpath(spec)) if "\0" not in spec else None
    if found is None and "=" not in spec:
        given = ", ".join(f"`{t}`" for t in sorted(set(trees.values()))) or "none"
        raise DshError(
            [
                invalid_request(
                    f"`{spec}` is not a tree this page was given",
                    f"trees: `{CURRENT}`, `@shipped`, {given}; start `dshc ui` with --against PATH to compare another",
                )
            ]
        )
    return found


def given_trees(paths) -> dict[str, str]:
    """Real path → the path as given, for each tree the diff may read."""
    return {os.path.realpath(p): str(p) for p in paths}


def diff(program: Program, old: str, new: str, catalog=None, only=None, trees: dict[str, str] | None = None) -> dict:
    """`only`: a Request to compare trees in that one context instead of over every cell;
    `trees`: the trees a side may name (`given_trees`)."""
    old, new = old.strip(), new.strip()
    old_tree, new_tree = (_tree(spec, trees or {}) for spec in (old, new))
    if old_tree is not None and new_tree is not None:
        old_program, new_program = (
            program if side == CURRENT else side_program(side, catalog, shipped=False) for side in (old_tree, new_tree)
        )
        cells = [only] if only is not None else None
        result = diff_programs(old_program, new_program, cells, cells)
        result["kind"] = "trees"
    elif old_tree is None and new_tree is None:
        contexts = [_context(spec) for spec in (old, new)]
        for context in contexts:
            program.composition(context)  # an unknown name is an error, not an empty diff
        result = diff_programs(program, program, contexts[:1], contexts[1:])
        result["kind"] = "contexts"
    else:
        raise DshError(
            [
                invalid_request(
                    "OLD and NEW must both be trees or both contexts",
                    f"trees: `{CURRENT}`, `@shipped` or a tree `dshc ui` was given; contexts: `key=value,…`",
                )
            ]
        )
    result.update(old=old, new=new)
    for change in result["changes"]:
        change["cells_total"] = len(change["cells"])
        change["cells"] = change["cells"][:MAX_CELLS_SHOWN]
        change["witness_text"] = _witness_text(change)
    return result


def _witness_text(change: dict) -> str:
    """What shows the change: the call decided differently, or the first context where the tool appears."""
    if change["witness"] is not None:
        return f"call {change['tool']}({_args(change['witness'])})"
    if change["kind"] == "added" and change["cells"]:
        cell = change["cells"][0]
        where = " · ".join(str(cell[k]) for k in ("preset", "host", "platform", "scope", "mode") if cell[k])
        return f"call {change['tool']} in {where}: now on the wire"
    return ""


def _args(args: dict) -> str:
    return ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in sorted(args.items()))
