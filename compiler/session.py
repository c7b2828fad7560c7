"""Session facts: what earlier calls of one session did (files read, variables read, denials), as conditions
test them (`session.read`, `session.env_read`, `session.denied_count`), and the earlier call a decision names.

In: a `Session` made from the event log dshc wrote for the session (`cli/session_log.py`). Out: a test's
tri-state and the earlier call that makes it hold. A call decided with no session known (no log, or one that
cannot be read) is in the strictest state: every session test holds on the deny side and fails on the allow
side (`conditions._session_test`). `CALL_FACTS` are the facts of the call itself that go with them
(`call.network`).
"""

from __future__ import annotations

from . import ast
from .orders import ordered
from ._base.frozen import record
from .globs import glob_match
from .paths import home_glob

ALL = "*"  # a read of every file or variable (a line that may read anything, `env`): any pattern matches it
# fact -> (type, what it is); types: "paths" and "names" (sets, tested with `matches`, `in`, or alone for
# "not empty"), "number" (compared with == != < <= > >=)
SESSION_FACTS: dict[str, tuple[str, str]] = {
    "session.read": ("paths", "a file an earlier call of the session read (a read tool, a search, a shell line)"),
    "session.env_read": ("names", "an environment variable an earlier shell line of the session read"),
    "session.denied_count": ("number", "how many earlier calls of the session were denied"),
}
# facts of the call being decided, read off its tool and arguments (`call_network`); types as request facts
CALL_FACTS: dict[str, tuple[str, str]] = {
    "call.network": (
        "boolean",
        "the call may reach the network: its tool fetches or calls out (risk `external-data`), or its shell line "
        "runs a program that does (curl, ssh, git push, pip install); not known (code, an unknown program) holds "
        "for a deny or an ask, never for an allow",
    ),
}
ORDERS = ("<", "<=", ">", ">=")


@record
class Earlier:
    """An earlier call: its id, its tool and the argument that counts (a path, a command line)."""

    id: str
    tool: str
    argument: str

    def text(self) -> str:
        # a long path keeps both ends: where it is, and the file it names
        shown = self.argument if len(self.argument) <= 80 else self.argument[:38] + "…" + self.argument[-39:]
        return f"call `{self.id}` ({self.tool} `{shown}`)"


@record
class Session:
    """What the session did before this call; each entry keeps the first call that did it. A read of `ALL`
    (`*`): a call that may have read any file or variable (a shell line that does not parse, `env`)."""

    read: tuple[tuple[str, Earlier], ...] = ()
    env_read: tuple[tuple[str, Earlier], ...] = ()
    denied: tuple[Earlier, ...] = ()

    def test(self, expr, lenient: bool) -> bool | None:
        return _holding(self, expr, lenient)[0]

    def evidence(self, expr, lenient: bool) -> Earlier | None:
        """The earlier call that makes `expr` (one session test) hold, if one does."""
        return _holding(self, expr, lenient)[1]


def _holding(session: Session, expr, lenient: bool) -> tuple[bool | None, Earlier | None]:
    name = expr.fact.dotted
    if name == "session.denied_count":
        count = len(session.denied)
        last = session.denied[-1] if session.denied else None
        if isinstance(expr, ast.Compare) and isinstance(expr.value, (int, float)) and not isinstance(expr.value, bool):
            held = ordered(count, expr.op, expr.value)
            return held, last if held else None
        return lenient, None  # `dshc check` refuses any other test; unchecked, it fails closed
    entries = session.read if name == "session.read" else session.env_read if name == "session.env_read" else None
    if entries is None:
        return lenient, None
    if isinstance(expr, ast.Truthy):
        return bool(entries), entries[0][1] if entries else None
    hit = _hit(expr, name == "session.read")
    if hit is None:
        return lenient, None
    for value, earlier in entries:
        if value == ALL and lenient or value != ALL and hit(value):
            return True, earlier
    return False, None


def _hit(expr, paths: bool):
    if isinstance(expr, ast.Matches):
        pattern = home_glob(expr.pattern) if paths else expr.pattern
        return lambda value: glob_match(pattern, value)
    if isinstance(expr, ast.Member):
        return lambda value: value in expr.values
    return None


def problems(expr) -> list[str]:
    """Why a session test is not one the fact takes (`dshc check`, DSH305); [] when it is."""
    kind = SESSION_FACTS[expr.fact.dotted][0]
    if kind == "number":
        if not isinstance(expr, ast.Compare):
            return [f"`{expr.fact.dotted}` is a number: compare it (`==`, `!=`, `<`, `<=`, `>`, `>=`)"]
        if isinstance(expr.value, bool) or not isinstance(expr.value, (int, float)):
            return [f"`{expr.fact.dotted}` is a number; `{expr.value!r}` is not"]
        return []
    if isinstance(expr, ast.Truthy) or isinstance(expr, ast.Matches):
        return []
    if isinstance(expr, ast.Member):
        return (
            []
            if all(isinstance(v, str) and not isinstance(v, bool) for v in expr.values)
            else [f"`{expr.fact.dotted}` holds text; the list must hold strings"]
        )
    return [
        f"`{expr.fact.dotted}` is a set of {'files' if kind == 'paths' else 'names'}: test it with `matches` or "
        "`in`, or alone (not empty)"
    ]


def session_note(policy, deciding, session: Session | None, reach=None) -> str:
    """What the session tests of the deciding rules rest on, for the decision's reason: the earlier call each
    names (id, tool, argument), or that no session is known; '' when no deciding rule tests the session.
    `reach`: the call's `call_network.Reach`, made when asked (`call.network`: why the call counts)."""
    if policy is None or not deciding:
        return ""
    by_span = {item.span: item for item in (*policy.rules, *policy.guards) if item.span is not None}
    notes: list[str] = []
    for _, span in deciding:
        item = by_span.get(span)
        for atom in ast.atoms(item.condition if item is not None else None):
            if isinstance(atom, ast.Flag) or atom.fact.path[0] not in ("session", "call"):
                continue
            test = _shown(atom)
            if atom.fact.path[0] == "call":
                found = reach() if reach is not None else None
                if found is None or found.value is False:
                    continue
                note = f"`{test}`: {found.why}" + (" (not known, so it counts)" if found.value is None else "")
            elif session is None:
                note = f"`{test}` is taken to hold: no event log of this session could be read"
            else:
                earlier = session.evidence(atom, True)
                if earlier is None:
                    continue
                note = f"`{test}` holds after {earlier.text()}"
            if note not in notes:
                notes.append(note)
    return "; " + "; ".join(notes) if notes else ""


def _shown(atom) -> str:
    from .fmt import expr_text

    return expr_text(atom)
