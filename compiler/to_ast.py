"""The AST is built while lark parses: each LALR reduction calls the rule's method here.

The only module that sees lark types past the parser. Building during the parse leaves no parse tree
to walk afterwards; each reduction hands its parent a `Built`: the rule's AST value, its outermost
tokens (keywords and punctuation are kept, so a span is exactly what the author wrote, `}` and `)`
included) and how deep conditions or lists nest in it, for the input limits.
"""

from __future__ import annotations

import json
import threading
from contextlib import contextmanager
from types import FunctionType, SimpleNamespace

from lark import Token

from . import ast
from ._base.frozen import constructor
from .limits import CONDITION_NODES, MAX_CONDITION_DEPTH, MAX_LIST_DEPTH, TOKEN_LIMITS
from .source import Span


# The nodes each rule makes, built without the frozen record __init__'s object.__setattr__ per field
# (_base/frozen.py): `new.Rule(...)` is the `ast.Rule` that `ast.Rule(...)` would be.
new = SimpleNamespace(
    **{
        cls.__name__: constructor(cls)
        for cls in (
            Span,
            ast.Name,
            ast.Rule,
            ast.Guard,
            ast.Target,
            ast.Fact,
            ast.Compare,
            ast.Member,
            ast.ListTest,
            ast.Length,
            ast.Matches,
            ast.MatchesExcept,
            ast.Place,
            ast.Has,
            ast.Flag,
            ast.Truthy,
            ast.Not,
            ast.And,
            ast.Or,
            ast.InClass,
            ast.ConfigEntry,
            ast.CommandEntry,
        )
    }
)

# What one reduction leaves for its parent: a `Built` tuple (AST value, first token, last token, nesting
# height). A plain tuple — no token is one (lark's Token is a str) — costs a tenth of an object's __init__.
Built = tuple
VALUE, FIRST, LAST, HEIGHT = range(4)


class _Building(threading.local):
    """The file being parsed on this thread, and whether it went past an input limit."""

    path = ""
    over_limit = False


_building = _Building()


@contextmanager
def building(path: str):
    """Parse one text as `path` inside this block; the state it yields says whether a limit was passed."""
    _building.path, _building.over_limit = path, False
    yield _building


class _ToAst:
    """One method per grammar rule: (node's outermost tokens, its meaningful children) → AST value."""

    # --- helpers ---
    def _span(self, node) -> Span | None:
        first, last = node
        if first is None:
            return None
        return new.Span(_building.path, first.line, first.column, last.end_line, last.end_column)

    def _name(self, token: Token) -> ast.Name:
        return new.Name(
            str(token), new.Span(_building.path, token.line, token.column, token.end_line, token.end_column)
        )

    @staticmethod
    def _pick(children, kind):
        return [c for c in children if isinstance(c, kind)]

    @staticmethod
    def _tagged(children, tag):
        return [c[1] for c in children if isinstance(c, tuple) and len(c) == 2 and c[0] == tag]

    def _one(self, children, tag):
        found = self._tagged(children, tag)
        return found[0] if found else None

    # --- shared pieces ---
    def title(self, node, children):
        return ("title", _unquote(children[0]))

    def extends(self, node, children):
        return ("extends", self._name(children[0]))

    def name_list(self, node, children):
        return tuple(self._name(t) for t in children)

    # --- values ---
    def string(self, node, children):
        return _unquote(children[0])

    def number(self, node, children):
        text = str(children[0])
        if len(text) > TOKEN_LIMITS["NUMBER"][1]:
            return 0  # past the limit: the file is reported, this value is never used
        return float(text) if "." in text else int(text)

    def true(self, node, children):
        return True

    def false(self, node, children):
        return False

    def list(self, node, children):
        return tuple(children)

    def value(self, node, children):
        return children[0]

    # --- preset ---
    def preset(self, node, children):
        name = self._name(children[0])
        return ast.Preset(
            name=name,
            title=self._one(children, "title"),
            extends=self._one(children, "extends"),
            mounts=tuple(self._pick(children, ast.Mount)),
            present=_first(self._tagged(children, "present")),
            provides=tuple(n for group in self._tagged(children, "provides") for n in group),
            repeated=_repeated(_by_tag(children), ("present",)),
            span=self._span(node),
        )

    def mount(self, node, children):
        config = self._one(children, "config") or ()
        return ast.Mount(
            package=children[0],
            alias=self._one(children, "alias"),
            config=config,
            condition=self._one(children, "condition"),
            disabled=bool(self._tagged(children, "disabled")),
            span=self._span(node),
        )

    def alias(self, node, children):
        return ("alias", self._name(children[0]))

    def disabled(self, node, children):
        return ("disabled", True)

    def config(self, node, children):
        return ("config", tuple(children))

    def config_entry(self, node, children):
        return new.ConfigEntry(self._name(children[0]), children[1], self._span(node))

    def present(self, node, children):
        return ("present", self._name(children[0]))

    def provides(self, node, children):
        return ("provides", children[0])

    # --- host ---
    def host(self, node, children):
        roster = self._tagged(children, "roster")
        return ast.Host(
            name=self._name(children[0]),
            title=self._one(children, "title"),
            provides=tuple(n for group in self._tagged(children, "provides") for n in group),
            platforms=tuple(n for group in self._tagged(children, "platforms") for n in group),
            flags=tuple(n for group in self._tagged(children, "flags") for n in group),
            roster=bool(roster),
            roster_span=roster[0][1] if roster else None,
            roster_default=next((default for default, _ in roster if default is not None), None),
            rows=_first(self._tagged(children, "rows")),
            present=_first(self._tagged(children, "present")),
            policy=_first(self._tagged(children, "policy")),
            repeated=_repeated(_by_tag(children), ("rows", "present", "policy", "roster")),
            span=self._span(node),
        )

    def platforms(self, node, children):
        return ("platforms", children[0])

    def flags(self, node, children):
        return ("flags", children[0])

    def roster(self, node, children):
        # the roster item has no name of its own: its span is kept for `fmt`
        return ("roster", (children[0] if children else None, self._span(node)))

    def roster_default(self, node, children):
        return self._name(children[0])

    def rows(self, node, children):
        return ("rows", self._name(children[0]))

    def host_policy(self, node, children):
        return ("policy", self._name(children[0]))

    # --- scope ---
    def scope(self, node, children):
        return ast.Scope(
            name=self._name(children[0]),
            title=self._one(children, "title"),
            extends=self._one(children, "extends"),
            parent=_first(self._tagged(children, "parent")),
            approval=_first(self._tagged(children, "approval")),
            only=tuple(n for group in self._tagged(children, "only") for n in group),
            hide=tuple(n for group in self._tagged(children, "hide") for n in group),
            own=tuple(n for group in self._tagged(children, "own") for n in group),
            present=_first(self._tagged(children, "present")),
            repeated=_repeated(_by_tag(children), ("parent", "approval", "present")),
            span=self._span(node),
        )

    def parent(self, node, children):
        return ("parent", self._name(children[0]))

    def approval(self, node, children):
        return ("approval", self._name(children[0]))

    def only(self, node, children):
        return ("only", children[0])

    def hide(self, node, children):
        return ("hide", children[0])

    def own(self, node, children):
        return ("own", tuple(children))

    def own_name(self, node, children):
        # `PACKAGE/NAME` stays one Name: the text says which definition, the span covers both parts
        return new.Name("/".join(str(c) for c in children), self._span(node))

    # --- policy ---
    def policy(self, node, children):
        tagged = _by_tag(children)  # one pass: a policy can hold 100,000 rules
        first = {tag: _first(items) for tag, items in tagged.items()}
        return ast.Policy(
            name=self._name(children[0]),
            title=first.get("title"),
            extends=first.get("extends"),
            sandbox=first.get("sandbox"),
            approval=first.get("approval"),
            rules=tuple(c for c in children if type(c) is ast.Rule),
            guards=tuple(c for c in children if type(c) is ast.Guard),
            default=first.get("default"),
            repeated=_repeated(tagged, ("sandbox", "approval", "default", "network", "fallback")),
            span=self._span(node),
            network=first.get("network"),
            network_hosts=tuple(tagged.get("network_hosts", ())),
            writable=tuple(tagged.get("writable", ())),
            fallback=first.get("fallback"),
            includes=tuple(n for group in tagged.get("include", ()) for n in group),
        )

    def include(self, node, children):
        return ("include", children[0])

    def sandbox_fallback(self, node, children):
        return ("fallback", self._name(children[0]))

    def network(self, node, children):
        if len(children) == 1:
            return ("network", self._name(children[0]))
        hosts = tuple(new.Name(_unquote(token), self._name(token).span) for token in children[1:])
        return ("network_hosts", ast.NetworkHosts(self._name(children[0]), hosts, self._span(node)))

    def writable(self, node, children):
        token = children[0]
        return ("writable", new.Name(_unquote(token), self._span(node)))

    def sandbox(self, node, children):
        return ("sandbox", self._name(children[0]))

    def default(self, node, children):
        return ("default", self._name(children[0]))

    def effect(self, node, children):
        return children[0]  # the keyword's token: a rule keeps its text, `default` a Name

    def rule(self, node, children):
        # `("allow" | "ask" | "deny") target ("," target)* ("when" expr)?`: the effect's token, the
        # targets, maybe the condition
        targets, condition = _targets_and_condition(children)
        return new.Rule(str(children[0]), targets, condition, self._span(node))

    def guard(self, node, children):
        targets, condition = _targets_and_condition(children)
        return new.Guard(self._name(children[0]), targets, condition, self._span(node))

    def tool_target(self, node, children):
        span = self._span(node)  # the target is its name: one token, one span
        return new.Target("tool", new.Name(str(children[0]), span), span)

    def package_target(self, node, children):
        return new.Target("package", children[0], self._span(node))

    def package_name(self, node, children):
        return new.Name(":".join(children), self._span(node))

    def risk_target(self, node, children):
        return new.Target("risk", self._name(children[0]), self._span(node))

    # --- upstream MCP servers ---
    def upstream(self, node, children):
        name = self._name(children[0])
        return ast.Upstream(
            name=name,
            title=self._one(children, "title"),
            command=self._one(children, "command"),
            args=(self._one(children, "args") or ((), None))[0],
            env=(self._one(children, "env") or ((), None))[0],
            url=self._one(children, "url"),
            risk=tuple(self._tagged(children, "risk")),
            repeated=tuple(
                new.Name(tag, name.span)
                for tag in ("command", "args", "env", "url")
                if len(self._tagged(children, tag)) > 1
            ),
            span=self._span(node),
            args_span=(self._one(children, "args") or ((), None))[1],
            env_span=(self._one(children, "env") or ((), None))[1],
        )

    def upstream_command(self, node, children):
        return ("command", new.Name(_unquote(children[0]), self._span(node)))

    def upstream_args(self, node, children):
        return ("args", (children[0], self._span(node)))

    def upstream_env(self, node, children):
        return ("env", (children[0][1], self._span(node)))

    def upstream_url(self, node, children):
        return ("url", new.Name(_unquote(children[0]), self._span(node)))

    def upstream_risk(self, node, children):
        return ("risk", ast.RiskOverride(self._name(children[0]), children[1], self._span(node)))

    # --- command classes ---
    def commands(self, node, children):
        return ast.Commands(
            self._name(children[0]),
            self._one(children, "title"),
            tuple(self._pick(children, ast.CommandEntry)),
            self._span(node),
        )

    def command_entry(self, node, children):
        words = tuple(_unquote(children[0]).split())
        excluded = children[1] if len(children) > 1 else ()
        return new.CommandEntry(words, excluded, self._span(node))

    def command_except(self, node, children):
        return tuple(_unquote(c) for c in children)

    # --- conditions ---
    def condition(self, node, children):
        return ("condition", children[0])

    def fact(self, node, children):
        return new.Fact(tuple(map(str, children)), self._span(node))

    def or_expr(self, node, children):
        return new.Or(_flatten(children, ast.Or), self._span(node))

    def and_expr(self, node, children):
        return new.And(_flatten(children, ast.And), self._span(node))

    def not_expr(self, node, children):
        return new.Not(children[0], self._span(node))

    def compare(self, node, children):
        return new.Compare(children[0], str(children[1]), children[2], self._span(node))

    def member(self, node, children):
        return new.Member(children[0], children[1], self._span(node))

    def all_in(self, node, children):
        return new.ListTest(children[0], "all", children[1], self._span(node))

    def any_in(self, node, children):
        return new.ListTest(children[0], "any", children[1], self._span(node))

    def contains(self, node, children):
        return new.ListTest(children[0], "contains", (children[1],), self._span(node))

    def length(self, node, children):
        return new.Length(children[0], str(children[1]), children[2], self._span(node))

    def matches(self, node, children):
        return new.Matches(children[0], _unquote(children[1]), self._span(node))

    def matches_except(self, node, children):
        return new.MatchesExcept(
            children[0], _unquote(children[1]), tuple(_unquote(c) for c in children[2:]), self._span(node)
        )

    def inside(self, node, children):
        return new.Place(children[0], True, self._name(children[1]), self._span(node))

    def outside(self, node, children):
        return new.Place(children[0], False, self._name(children[1]), self._span(node))

    def is_class(self, node, children):
        return new.InClass(children[0], self._name(children[1]), self._span(node))

    def has(self, node, children):
        return new.Has(children[0], self._span(node))

    def flag(self, node, children):
        return new.Flag(self._name(children[0]), self._span(node))

    def truthy(self, node, children):
        return new.Truthy(children[0], self._span(node))

    def atom(self, node, children):
        # `( expr )`: the parentheses count in the span of what encloses them, not in the expression's
        return children[0]

    def start(self, node, children):
        return tuple(children)


def _targets_and_condition(children) -> tuple:
    """A rule's or guard's targets (from its second child on: the first is its effect or name), and its
    condition (an expression, never a Target) when the last child is one."""
    if type(children[-1]) is ast.Target:
        return tuple(children[1:]), None
    return tuple(children[1:-1]), children[-1]


def _flatten(children, kind) -> tuple:
    items: list = []
    for child in children:
        items.extend(child.items if isinstance(child, kind) else (child,))
    return tuple(items)


def _repeated(tagged: dict, tags) -> tuple:
    """The Names of every repeat of a once-only item, from `_by_tag`'s grouping."""
    return tuple(item for tag in tags for item in tagged.get(tag, ())[1:] if isinstance(item, ast.Name))


def _by_tag(children) -> dict:
    """tag -> the values of a block's ("tag", value) items, in order (what `_tagged` gives per tag)."""
    found: dict = {}
    for child in children:
        if isinstance(child, tuple) and len(child) == 2:
            found.setdefault(child[0], []).append(child[1])
    return found


def _first(items):
    return items[0] if items else None


def _unquote(token) -> str:
    text = str(token)[1:-1]
    if "\\" not in text:
        return text  # nothing to decode (JSON would return it unchanged, or refuse it and keep it)
    # the grammar's escapes are the JSON ones
    try:
        return json.loads('"' + text + '"')
    except ValueError:
        return text


def _rule_methods() -> dict:
    """grammar rule name -> the plain function building its AST value: (self, node, children)."""
    return {name: attr for name, attr in vars(_ToAst).items() if not name.startswith("_") and callable(attr)}


_RULES = _rule_methods()
# how a rule's nesting height is counted for the input limits: +1 at each condition group or list,
# carried through parentheses and a list's `value`; every other rule starts again from 0
_NESTING = {
    **{rule: (1, MAX_CONDITION_DEPTH) for rule in CONDITION_NODES},
    "list": (1, MAX_LIST_DEPTH),
    "atom": (0, None),
    "value": (0, None),
}


def _reduction(builder: _ToAst, method, rule: str):
    keep_keywords = rule == "effect"  # the one rule whose keyword is its value
    effect = rule == "rule"  # a policy rule keeps its first token, the effect keyword
    step, limit = _NESTING.get(rule, (None, None))
    token_limits = TOKEN_LIMITS

    def reduce(children: list) -> Built:
        values, height = [], 0
        for child in children:
            if type(child) is Built:
                values.append(child[VALUE])
                if step is not None and child[HEIGHT] > height:
                    height = child[HEIGHT]
                continue
            bound = token_limits.get(child.type)
            if bound is not None:
                if len(child) > bound[1]:
                    _building.over_limit = True
                values.append(child)
            elif keep_keywords or child.type == "CMP" or (effect and child is children[0]):
                values.append(child)
        if step is not None:
            height += step
            if limit is not None and height > limit:
                _building.over_limit = True
        if not children:  # `start` of a text with no declaration left (after a broken one)
            return method(builder, (None, None), values), None, None, height
        first, last = children[0], children[-1]
        if type(first) is Built:
            first = first[FIRST]
        if type(last) is Built:
            last = last[LAST]
        return method(builder, (first, last), values), first, last, height

    # the parser may ask for this rule's reduction specialised to one alternative's fixed children
    reduce.specialise = lambda layout: _specialised(builder, method, rule, layout)  # type: ignore[attr-defined]  # read with getattr
    return reduce


def _specialised(builder: _ToAst, method, rule: str, layout: tuple):
    """`reduce` for one alternative of `rule` whose children are always `layout`: per position the
    terminal's name (a token of that type), or None (a nonterminal: always a `Built`). The values of
    the generic `reduce`, without its loop and type tests: which children are kept, which tokens have
    a length limit and how the nesting height is counted are known before any text is read. None when
    there is nothing to specialise (no children). Only generated names, the grammar's own limits
    (integers) and operators are written into the source; the method and state are globals."""
    if not layout:
        return None
    keep_keywords = rule == "effect"
    effect = rule == "rule"  # as in `_reduction`: a policy rule keeps its first token
    step, limit = _NESTING.get(rule, (None, None))
    names = [f"c{i}" for i in range(len(layout))]
    body = [f"    {', '.join(names)}, = children"]
    values, heights = [], []
    for name, terminal in zip(names, layout):
        if terminal is None:
            values.append(f"{name}[{VALUE}]")
            heights.append(f"{name}[{HEIGHT}]")
            continue
        bound = TOKEN_LIMITS.get(terminal)
        if bound is not None:
            body.append(f"    if len({name}) > {int(bound[1])}: state.over_limit = True")
            values.append(name)
        elif keep_keywords or terminal == "CMP" or (effect and name == "c0"):
            values.append(name)
    height = "0"
    if step is not None:
        tallest = "0" if not heights else heights[0] if len(heights) == 1 else f"max({', '.join(heights)})"
        body.append(f"    height = {tallest} + {int(step)}")
        if limit is not None:
            body.append(f"    if height > {int(limit)}: state.over_limit = True")
        height = "height"
    first = f"{names[0]}[{FIRST}]" if layout[0] is None else names[0]
    last = f"{names[-1]}[{LAST}]" if layout[-1] is None else names[-1]
    body.append(f"    first, last = {first}, {last}")
    body.append(f"    return method(builder, (first, last), [{', '.join(values)}]), first, last, {height}")
    source = "\n".join(["def reduce(children):", *body, ""])
    code = _REDUCE_CODE.get(source)
    if code is None:  # alternatives of one shape share the code (compiling is most of the cost)
        made: dict = {"__builtins__": {}}
        exec(compile(source, "<dshc reduce>", "exec"), made)  # noqa: S102 - generated names only (see above)
        code = _REDUCE_CODE[source] = made["reduce"].__code__
    return FunctionType(
        code, {"method": method, "builder": builder, "state": _building, "__builtins__": {"len": len, "max": max}}
    )


_REDUCE_CODE: dict = {}  # generated source -> its code object


class Reductions:
    """lark's internal transformer: the callable lark runs at each reduction of a rule, by rule name."""

    def __init__(self):
        builder = _ToAst()
        for rule, method in _RULES.items():
            setattr(self, rule, _reduction(builder, method, rule))


def to_document(path: str, decls: tuple, comments=()) -> ast.Document:
    return ast.Document(path, tuple(decls), tuple(ast.Comment(line, text) for line, text in comments))
