"""Evaluate `when` conditions: three-valued (True / False / None = not known yet).

Polarity: an allow counts a test only when it surely holds, ask/deny/guards when it possibly holds.
"""

# So a shell command we cannot fully analyse never satisfies an allow and always satisfies a deny.
# A shell command is tested one simple command at a time (`SegmentArg`, made by the policy core);
# path arguments arrive canonical (`paths.CanonicalPath`) and match in either form.
from __future__ import annotations

from . import ast
from ._base.frozen import field, record
from .file_pattern import FilePattern
from .globs import glob_match
from .orders import ordered
from .paths import CanonicalPath, home_glob, path_inside

TYPE_CHECKING = False  # no `import typing` (~4 ms of a hook): its names are for annotations only
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from .session import Session
    from .shell import Segment

UNKNOWN = None
SHELL_FIELDS = frozenset({"command"})
ENV_FIELDS = ("env_read", "env_set")  # `args.command.env_read`, `args.command.env_set`: a line's variables


@record(slots=False)
class Env:
    """What a condition reads: the request's facts, services and flags, and a call's arguments."""

    facts: Mapping[str, Any]
    services: frozenset[str]
    flags: frozenset[str] = frozenset()
    args: Mapping[str, Any] | None = None  # None: arguments not known (static evaluation)
    workspace: str | None = None
    shell_tool: bool = False  # args.command is a shell command line
    classes: tuple = ()  # command classes (`args.command is NAME`), from the policy being evaluated
    session: Session | None = None  # what earlier calls did (`session.Session`); None: not known, the strictest state
    risk: tuple | None = None  # the tool's risk axes, for `call.network`; None: a tool the catalog does not know
    # answers already found about this call's arguments: a policy tests one path against the workspace,
    # or one glob against one value, in many rules (a file-system walk or a path comparison, a glob match)
    found: dict = field(default_factory=dict, compare=False, repr=False)


class SegmentArg(str):
    """A shell command argument while one of its simple commands is decided: the text is the
    whole command (for `==`, `in`, …); `matches` and `is` test only `segment`."""

    segment: Segment

    def __new__(cls, command: str, segment: Segment):
        made = super().__new__(cls, command)
        made.segment = segment
        return made


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
    if fact.path[0] == "session":
        return _session_test(expr, env, lenient)
    if fact.path[0] == "call":
        return _call_test(expr, env, lenient)
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
        if expr.op in ("==", "!="):
            return (value == expr.value) == (expr.op == "==")
        return ordered(value, expr.op, expr.value)
    if isinstance(expr, ast.Member):
        return value in expr.values
    return UNKNOWN


def _same(one, other) -> bool:
    """Equal as JSON values are: `true` is not `1`, a list is not its first item."""
    return one == other and isinstance(one, bool) == isinstance(other, bool)


def _list_test(expr, value, lenient: bool) -> bool | None:
    """`all in`, `any in`, `contains` and `length(…)` on an argument: an array's items (a string has a length
    too). A value of another shape may hold for a deny and never satisfies an allow."""
    if isinstance(expr, ast.Length):
        if not isinstance(value, (list, tuple, str)):
            return lenient
        found = ordered(len(value), expr.op, expr.value)
        return lenient if found is None else found
    if not isinstance(value, (list, tuple)):
        return lenient
    items = [_as_literal(item) for item in value]
    if expr.quantifier == "contains":
        return any(_same(item, expr.values[0]) for item in items)
    hits = (any(_same(item, wanted) for wanted in expr.values) for item in items)
    return all(hits) if expr.quantifier == "all" else any(hits)


def _argument_test(expr, env: Env, lenient: bool) -> bool | None:
    if env.args is None:
        return UNKNOWN
    if len(expr.fact.path) == 3 and expr.fact.path[2] in ENV_FIELDS:  # `args.command.env_read`
        return _env_test(expr, env, lenient)
    name = expr.fact.path[1]
    present = name in env.args
    if isinstance(expr, ast.Has):
        return present
    if not present:
        return False
    value = env.args[name]
    if len(expr.fact.path) == 3:  # `args.url.host`, `args.command.hosts`
        return _host_test(expr, value, env, lenient)
    if isinstance(expr, (ast.ListTest, ast.Length)):
        return _list_test(expr, value, lenient)
    if type(value) is FilePattern:
        return _pattern_test(expr, value, env, lenient)
    if isinstance(expr, ast.Matches):
        if not isinstance(value, str):
            return lenient  # fail closed: an odd value may match a deny, never an allow
        if env.shell_tool and name in SHELL_FIELDS:  # (a command's `~` is its text; any other glob's, a home)
            from .shell import segment_matches  # the shell analyser loads only for shell calls

            return _shell_test(value, lambda seg, side: segment_matches(seg, expr.pattern, side), lenient)
        key: tuple = ("matches", expr.pattern, value, getattr(value, "absolute", None))
        matched = env.found.get(key)
        if matched is None:
            forms = value.forms() if isinstance(value, CanonicalPath) else (value,)
            pattern = home_glob(expr.pattern)
            matched = env.found[key] = any(glob_match(pattern, form) for form in forms)
        return matched
    if isinstance(expr, ast.MatchesExcept):  # options of a shell command: any other value fails closed
        if not (isinstance(value, str) and env.shell_tool and name in SHELL_FIELDS):
            return lenient
        from .shell import segment_matches
        from .shell_options import gives_excepted

        pattern, excepted = expr.pattern, expr.excepted
        return _shell_test(
            value,
            lambda seg, side: (
                segment_matches(seg, pattern, side)
                and (seg.opaque or not gives_excepted(seg, pattern, excepted, not side))
            ),
            lenient,
        )
    if isinstance(expr, ast.InClass):
        klass = next((c for c in env.classes if c.name == expr.name.text), None)
        if not isinstance(value, str) or klass is None:
            return lenient
        return _shell_test(value, lambda seg, side: klass.admits(seg) or (side and seg.opaque), lenient)
    segment = getattr(value, "segment", None)
    if segment is not None and env.shell_tool and name in SHELL_FIELDS:
        # every other test on a split shell command sees the one simple command, as `matches` does
        if segment.opaque or (segment.hazard and not lenient):
            return lenient
        value = segment.text
    if isinstance(expr, ast.Place):
        if not isinstance(value, str) or env.workspace is None:
            return lenient
        key = ("inside", value, getattr(value, "absolute", None))  # a canonical path's absolute form counts too
        inside = env.found.get(key)
        if inside is None:
            inside = env.found[key] = path_inside(value, env.workspace)
        return inside if expr.inside else not inside
    if isinstance(expr, ast.Compare) and expr.op not in ("==", "!="):
        found = ordered(value, expr.op, expr.value)
        return lenient if found is None else found
    return _value_test(expr, _as_literal(value))


def _as_literal(value):
    """A JSON array as a list literal is held (a tuple): a list never equals a tuple, so `==`, `!=` and `in`
    would otherwise never see a list argument equal to the literal written for it."""
    return tuple(map(_as_literal, value)) if isinstance(value, (list, tuple)) else value


def _host_test(expr, value, env: Env, lenient: bool) -> bool | None:
    """A test of the hosts an argument reaches: a URL's one host (`.host`), a shell command's (`.hosts`, each simple
    command's). `matches`, `in` and `==` compare by host pattern (`common.hosts`), every spelling of a host alike.
    On the deny side any host passing (or one not known: an unparsable URL, an expansion) holds; on the allow
    side every host must pass, and there must be one."""
    from ..common.hosts import HostError, Pattern, url_host

    if not isinstance(value, str):
        return lenient
    if expr.fact.path[2] == "host":
        hosts: tuple
        try:
            hosts, complete = (url_host(value),), True
        except HostError:
            hosts, complete = (), False
    else:
        hosts, complete = _command_hosts(value)
    if isinstance(expr, ast.Truthy):
        return bool(hosts) or (lenient and not complete)
    texts: tuple
    if isinstance(expr, ast.Matches):
        texts = (expr.pattern,)
    elif isinstance(expr, ast.Member):
        texts = expr.values
    elif isinstance(expr, ast.Compare):
        texts = (expr.value,)
    else:
        return lenient
    try:
        patterns = [Pattern(text) for text in texts]
    except (HostError, TypeError):
        return lenient  # `dshc check` reports it; a policy loaded without checking still fails closed
    passed = [any(_host_hit(p, host, port, lenient) for p in patterns) for host, port in hosts]
    if isinstance(expr, ast.Compare) and expr.op == "!=":
        passed = [not hit for hit in passed]
    if lenient:
        return any(passed) or not complete
    return complete and bool(passed) and all(passed)


def _host_hit(pattern, host: str, port: int | None, lenient: bool) -> bool:
    """A pattern with a port, on a host whose port the text does not say: it may be that port (deny side), it
    is not surely (allow side)."""
    if port is None and pattern.port is not None:
        return lenient and pattern.matches(host, pattern.port)
    return pattern.matches(host, port)


def _command_hosts(command: str) -> tuple[tuple, bool]:
    """The (host, None) pairs a shell command names, and whether all were read: its one simple command when
    the policy core split it, else every one of its simple commands."""
    from .command_hosts import segment_hosts

    segment = getattr(command, "segment", None)
    if segment is None:
        from .shell import analyse

        found = analyse(command)
        if found is None:
            return (), False
        segments = found.segments
    else:
        segments = (segment,)
    hosts: set[str]
    hosts, complete = set(), True
    for seg in segments:
        named, read = segment_hosts(seg)
        hosts |= named
        complete &= read
    return tuple((host, None) for host in sorted(hosts)), complete


def _pattern_test(expr, value: FilePattern, env: Env, lenient: bool) -> bool | None:
    """A test of a file a command writes or reads but cannot name: `matches` on the deny side when the glob may
    match one of its files, on the allow side when it surely matches all; a place test by the
    directory holding them; any other test is not known (`file_pattern`)."""
    if isinstance(expr, ast.Matches):
        pattern = home_glob(expr.pattern)
        return value.may_match(pattern) if lenient else value.surely_matches(pattern)
    if isinstance(expr, ast.Place):
        inside = value.inside(env.workspace) if env.workspace is not None else None
        if inside is None:
            return lenient
        return inside if expr.inside else not inside
    if isinstance(expr, ast.Truthy):
        return True  # a file's name is never empty
    return lenient


def _shell_test(command: str, test, lenient: bool) -> bool:
    """One segment (the policy core split the command), or the whole line: any part on the
    deny side, every part (and no redirected file) on the allow side."""
    segment = getattr(command, "segment", None)
    if segment is not None:
        return test(segment, lenient)
    from .shell import analyse

    found = analyse(command)
    if found is None:
        return lenient  # unparseable: may match a deny, never satisfies an allow
    if lenient:
        return any(test(seg, True) for seg in found.segments)
    return bool(found.segments) and not found.files and all(test(seg, False) for seg in found.segments)


def compile_facts(expr: ast.Expr, lenient: bool):
    """`evaluate` of a condition that reads no arguments, as a closure `(env, tool name) -> bool | None`.

    Built once per policy, it skips the per-node dispatch and the per-tool environment (`tool` is
    passed in, not copied into the facts); a property test holds it equal to `evaluate`.
    """
    if isinstance(expr, (ast.And, ast.Or)):
        return _joined(tuple(compile_facts(item, lenient) for item in expr.items), isinstance(expr, ast.And))
    if isinstance(expr, ast.Not):
        return _negated(compile_facts(expr.item, not lenient))  # negation flips which side counts as safe
    if isinstance(expr, ast.Flag):
        flag = expr.name.text
        return lambda env, tool: flag in env.flags
    fact = expr.fact
    if isinstance(expr, ast.Has) and len(fact.path) == 1:
        service = fact.path[0]
        return lambda env, tool: service in env.services
    if fact.path[0] in ("args", "session", "call"):
        raise ValueError("compile_facts takes conditions that read no arguments, no session and no call")
    dotted = fact.dotted
    if dotted != "tool" and not (
        isinstance(expr, ast.Compare) and expr.op not in ("==", "!=")
    ):  # the common atoms read the fact inline: one call per atom (UNKNOWN is None)
        if isinstance(expr, ast.Compare):
            wanted = expr.value
            if expr.op == "==":
                return lambda env, tool: None if (v := env.facts.get(dotted)) is None else v == wanted
            return lambda env, tool: None if (v := env.facts.get(dotted)) is None else not v == wanted
        if isinstance(expr, ast.Truthy):
            return lambda env, tool: None if (v := env.facts.get(dotted)) is None else bool(v)
    read = (lambda env, tool: tool) if dotted == "tool" else (lambda env, tool: env.facts.get(dotted, UNKNOWN))
    if isinstance(expr, ast.Matches):
        pattern = expr.pattern
        return lambda env, tool: (
            None if (v := read(env, tool)) is UNKNOWN else isinstance(v, str) and glob_match(pattern, v)
        )
    if isinstance(expr, ast.Compare) and expr.op in ("==", "!="):
        wanted, equal = expr.value, expr.op == "=="
        return lambda env, tool: None if (v := read(env, tool)) is UNKNOWN else (v == wanted) == equal
    return lambda env, tool: None if (v := read(env, tool)) is UNKNOWN else _value_test(expr, v)


def compile_condition(expr: ast.Expr, lenient: bool):
    """`evaluate` of any condition as a closure `(env, tool name) -> bool | None`, for the rules the index
    tries as written: `and`/`or`/`not` and the fact tests compiled as `compile_facts` compiles them, each
    argument test a direct call of `_argument_test` — no per-node dispatch. `env` is the call's
    (`tool_env`: its arguments, workspace, shell flag and classes). A property test holds it to `evaluate`."""
    if not any(map(_reads_arguments, ast.atoms(expr))):
        return compile_facts(expr, lenient)
    if isinstance(expr, (ast.And, ast.Or)):
        return _joined(tuple(compile_condition(item, lenient) for item in expr.items), isinstance(expr, ast.And))
    if isinstance(expr, ast.Not):
        return _negated(compile_condition(expr.item, not lenient))
    test = {"session": _session_test, "call": _call_test}.get(expr.fact.path[0], _argument_test)  # type: ignore[union-attr]  # a flag reads no argument
    return lambda env, tool: test(expr, env, lenient)


def _reads_arguments(atom) -> bool:
    """Whether `evaluate` reads this leaf from the call (its arguments, or the session it is made in), as its
    dispatch decides."""
    if isinstance(atom, ast.Flag) or (isinstance(atom, ast.Has) and len(atom.fact.path) == 1):
        return False
    return atom.fact.path[0] in ("args", "session", "call")


def _joined(parts: tuple, conjunction: bool):
    """Compiled parts joined by `and` (conjunction) or `or`, three-valued as `evaluate` joins them."""
    stop, other = (False, True) if conjunction else (True, False)
    if len(parts) == 2 and conjunction:  # the usual `a and b`, without the loop
        first, second = parts

        def both(env, tool):
            if (one := first(env, tool)) is False or (two := second(env, tool)) is False:
                return False
            return UNKNOWN if one is None or two is None else True

        return both

    def joined(env, tool):
        unknown = False
        for part in parts:
            value = part(env, tool)
            if value is stop:
                return stop
            unknown |= value is None
        return UNKNOWN if unknown else other

    return joined


def _negated(inner):
    return lambda env, tool: None if (value := inner(env, tool)) is None else not value


def _env_test(expr, env: Env, lenient: bool) -> bool | None:
    """A test of the environment variables a shell line reads (`.env_read`) or sets (`.env_set`), its whole
    line's (`shell_env`): a set of names, tested as `set_test` tests one."""
    value = env.args.get(expr.fact.path[1])  # type: ignore[union-attr]  # `_argument_test` checks it is set
    if value is None:
        return False  # no command: it reads and sets nothing
    if not (isinstance(value, str) and env.shell_tool):
        return lenient
    from .shell_env import ALL, env_use

    use = env_use(str(value))
    names = use.read if expr.fact.path[2] == "env_read" else use.set
    return set_test(expr, names - {ALL}, ALL in names, use.complete, lenient)


def set_test(expr, names, everything: bool, complete: bool, lenient: bool) -> bool | None:
    """`matches`/`in` on a set of names: on the deny side some name passes (`everything`, a reading of every
    name, or a set not known whole, passes); on the allow side every name passes, and there is one. Alone (no
    test): the set is not empty."""
    if isinstance(expr, ast.Truthy):
        return bool(names) or everything or (lenient and not complete)
    if isinstance(expr, ast.Matches):
        hit = [glob_match(expr.pattern, name) for name in names]
        surely_all = expr.pattern == "*"
    elif isinstance(expr, ast.Member):
        hit = [name in expr.values for name in names]
        surely_all = False
    else:
        return lenient
    if lenient:
        return any(hit) or everything or not complete
    return complete and bool(hit or everything) and all(hit) and (surely_all or not everything)


def _session_test(expr, env: Env, lenient: bool) -> bool | None:
    """A test of what earlier calls of the session did: not known without a call (a static verdict); with no
    session known (no log, an unreadable one), the strictest state: holds on the deny side, fails on the
    allow side."""
    if env.args is None:
        return UNKNOWN
    if env.session is None:
        return lenient
    return env.session.test(expr, lenient)


def _call_test(expr, env: Env, lenient: bool) -> bool | None:
    """`call.network`: whether the call may reach the network (`call_network`); not known (an unknown program, code,
    a tool that may do anything) holds on the deny side and fails on the allow side. With no call (a static
    verdict) a tool's catalog entry may still answer it."""
    from .call_network import call_reach

    value = call_reach(env.risk, env.shell_tool, env.args).value
    if value is None:
        return UNKNOWN if env.args is None else lenient
    return _value_test(expr, value)
