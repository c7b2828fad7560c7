"""Two sides named on the page (trees or contexts) → `diff_programs`' answer, with a witness per widening.

A side is `@current` (what the page shows), `@shipped`, a path of a complete tree of declarations, or a context
`key=value,…` of the current declarations; both sides must be of one kind, as in `dshc diff`.
"""
from __future__ import annotations

import json
import os

from ...compiler.diagnostics import DshError, invalid_request
from ...compiler.diff import diff_programs
from ...compiler.program import Program
from ..commands import _context, side_program

CURRENT = "@current"
MAX_CELLS_SHOWN = 6  # per change; the page says how many more


def _is_tree(spec: str) -> bool:
    return spec in (CURRENT, "@shipped") or os.path.exists(spec)


def diff(program: Program, old: str, new: str, catalog=None, only=None) -> dict:
    """`only`: a Request to compare trees in that one context instead of over every cell."""
    old, new = old.strip(), new.strip()
    kinds = {_is_tree(old), _is_tree(new)}
    if kinds == {True}:
        sides = [program if spec == CURRENT else side_program(spec, catalog, shipped=False) for spec in (old, new)]
        cells = [only] if only is not None else None
        result = diff_programs(*sides, cells, cells)
        result["kind"] = "trees"
    elif kinds == {False}:
        contexts = [_context(spec) for spec in (old, new)]
        for context in contexts:
            program.composition(context)  # an unknown name is an error, not an empty diff
        result = diff_programs(program, program, contexts[:1], contexts[1:])
        result["kind"] = "contexts"
    else:
        raise DshError([invalid_request("OLD and NEW must both be trees or both contexts",
                                        f"trees: `{CURRENT}`, `@shipped` or a path; contexts: `key=value,…`")])
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
