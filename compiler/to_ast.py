"""lark Tree → ast.Document. The only module that sees lark types past the parser."""
from __future__ import annotations

from lark import Token, Transformer_NonRecursive, Tree, v_args

from . import ast
from .source import Span


class _ToAst(Transformer_NonRecursive):  # iterative: nesting depth is the author's choice
    def __init__(self, path: str):
        super().__init__(visit_tokens=False)
        self.path = path

    def _call_userfunc(self, tree, new_children=None):
        # lark builds a fresh wrapper object for a `v_args` method on every node it visits; a policy of
        # 10,000 rules has ~90,000 nodes, so the rule methods are called directly instead
        method = _RULES.get(tree.data)
        if method is None:
            return super()._call_userfunc(tree, new_children)
        return method(self, tree.meta, new_children if new_children is not None else tree.children)

    # --- helpers ---
    def _span(self, meta) -> Span | None:
        if getattr(meta, "empty", True):
            return None
        return Span(self.path, meta.line, meta.column, meta.end_line, meta.end_column)

    def _name(self, token: Token) -> ast.Name:
        return ast.Name(str(token), Span(self.path, token.line, token.column, token.end_line, token.end_column))

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
    @v_args(meta=True)
    def title(self, meta, children):
        return ("title", _unquote(children[0]))

    @v_args(meta=True)
    def extends(self, meta, children):
        return ("extends", self._name(children[0]))

    @v_args(meta=True)
    def name_list(self, meta, children):
        return tuple(self._name(t) for t in children)

    # --- values ---
    @v_args(meta=True)
    def string(self, meta, children):
        return _unquote(children[0])

    @v_args(meta=True)
    def number(self, meta, children):
        text = str(children[0])
        return float(text) if "." in text else int(text)

    @v_args(meta=True)
    def true(self, meta, children):
        return True

    @v_args(meta=True)
    def false(self, meta, children):
        return False

    @v_args(meta=True)
    def list(self, meta, children):
        return tuple(children)

    @v_args(meta=True)
    def value(self, meta, children):
        return children[0]

    # --- preset ---
    @v_args(meta=True)
    def preset(self, meta, children):
        name = self._name(children[0])
        return ast.Preset(
            name=name,
            title=self._one(children, "title"),
            extends=self._one(children, "extends"),
            mounts=tuple(self._pick(children, ast.Mount)),
            present=_first(self._tagged(children, "present")),
            provides=tuple(n for group in self._tagged(children, "provides") for n in group),
            repeated=_repeated(children, ("present",)),
            span=self._span(meta),
        )

    @v_args(meta=True)
    def mount(self, meta, children):
        config = self._one(children, "config") or ()
        return ast.Mount(
            package=children[0],
            alias=self._one(children, "alias"),
            config=config,
            condition=self._one(children, "condition"),
            disabled=bool(self._tagged(children, "disabled")),
            span=self._span(meta),
        )

    @v_args(meta=True)
    def alias(self, meta, children):
        return ("alias", self._name(children[0]))

    @v_args(meta=True)
    def disabled(self, meta, children):
        return ("disabled", True)

    @v_args(meta=True)
    def config(self, meta, children):
        return ("config", tuple(children))

    @v_args(meta=True)
    def config_entry(self, meta, children):
        return ast.ConfigEntry(self._name(children[0]), children[1], self._span(meta))

    @v_args(meta=True)
    def present(self, meta, children):
        return ("present", self._name(children[0]))

    @v_args(meta=True)
    def provides(self, meta, children):
        return ("provides", children[0])

    # --- host ---
    @v_args(meta=True)
    def host(self, meta, children):
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
            repeated=_repeated(children, ("rows", "present", "policy", "roster")),
            span=self._span(meta),
        )

    @v_args(meta=True)
    def platforms(self, meta, children):
        return ("platforms", children[0])

    @v_args(meta=True)
    def flags(self, meta, children):
        return ("flags", children[0])

    @v_args(meta=True)
    def roster(self, meta, children):
        # the roster item has no name of its own: its span is kept for `fmt`
        return ("roster", (children[0] if children else None, self._span(meta)))

    @v_args(meta=True)
    def roster_default(self, meta, children):
        return self._name(children[0])

    @v_args(meta=True)
    def rows(self, meta, children):
        return ("rows", self._name(children[0]))

    @v_args(meta=True)
    def host_policy(self, meta, children):
        return ("policy", self._name(children[0]))

    # --- scope ---
    @v_args(meta=True)
    def scope(self, meta, children):
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
            repeated=_repeated(children, ("parent", "approval", "present")),
            span=self._span(meta),
        )

    @v_args(meta=True)
    def parent(self, meta, children):
        return ("parent", self._name(children[0]))

    @v_args(meta=True)
    def approval(self, meta, children):
        return ("approval", self._name(children[0]))

    @v_args(meta=True)
    def only(self, meta, children):
        return ("only", children[0])

    @v_args(meta=True)
    def hide(self, meta, children):
        return ("hide", children[0])

    @v_args(meta=True)
    def own(self, meta, children):
        return ("own", tuple(children))

    @v_args(meta=True)
    def own_name(self, meta, children):
        # `PACKAGE/NAME` stays one Name: the text says which definition, the span covers both parts
        return ast.Name("/".join(str(c) for c in children), self._span(meta))

    # --- policy ---
    @v_args(meta=True)
    def policy(self, meta, children):
        return ast.Policy(
            name=self._name(children[0]),
            title=self._one(children, "title"),
            extends=self._one(children, "extends"),
            sandbox=_first(self._tagged(children, "sandbox")),
            approval=_first(self._tagged(children, "approval")),
            rules=tuple(self._pick(children, ast.Rule)),
            guards=tuple(self._pick(children, ast.Guard)),
            default=_first(self._tagged(children, "default")),
            repeated=_repeated(children, ("sandbox", "approval", "default", "network", "fallback")),
            span=self._span(meta),
            network=_first(self._tagged(children, "network")),
            writable=tuple(self._tagged(children, "writable")),
            fallback=_first(self._tagged(children, "fallback")),
        )

    @v_args(meta=True)
    def sandbox_fallback(self, meta, children):
        return ("fallback", self._name(children[0]))

    @v_args(meta=True)
    def network(self, meta, children):
        return ("network", self._name(children[0]))

    @v_args(meta=True)
    def writable(self, meta, children):
        token = children[0]
        return ("writable", ast.Name(_unquote(token), self._span(meta)))

    @v_args(meta=True)
    def sandbox(self, meta, children):
        return ("sandbox", self._name(children[0]))

    @v_args(meta=True)
    def default(self, meta, children):
        return ("default", children[0])

    @v_args(meta=True)
    def effect(self, meta, children):
        return self._name(children[0])

    @v_args(meta=True)
    def rule(self, meta, children):
        effect: ast.Name = children[0]
        return ast.Rule(effect.text, children[1], self._one(children, "condition"), self._span(meta))

    @v_args(meta=True)
    def guard(self, meta, children):
        return ast.Guard(self._name(children[0]), children[1], self._one(children, "condition"), self._span(meta))

    @v_args(meta=True)
    def target_list(self, meta, children):
        return tuple(children)

    @v_args(meta=True)
    def tool_target(self, meta, children):
        return ast.Target("tool", self._name(children[0]), self._span(meta))

    @v_args(meta=True)
    def package_target(self, meta, children):
        return ast.Target("package", children[0], self._span(meta))

    @v_args(meta=True)
    def package_name(self, meta, children):
        return ast.Name(":".join(str(t) for t in children), self._span(meta))

    @v_args(meta=True)
    def risk_target(self, meta, children):
        return ast.Target("risk", self._name(children[0]), self._span(meta))

    # --- upstream MCP servers ---
    @v_args(meta=True)
    def upstream(self, meta, children):
        name = self._name(children[0])
        return ast.Upstream(
            name=name,
            title=self._one(children, "title"),
            command=self._one(children, "command"),
            args=(self._one(children, "args") or ((), None))[0],
            env=(self._one(children, "env") or ((), None))[0],
            url=self._one(children, "url"),
            risk=tuple(self._tagged(children, "risk")),
            repeated=tuple(ast.Name(tag, name.span) for tag in ("command", "args", "env", "url")
                           if len(self._tagged(children, tag)) > 1),
            span=self._span(meta),
            args_span=(self._one(children, "args") or ((), None))[1],
            env_span=(self._one(children, "env") or ((), None))[1],
        )

    @v_args(meta=True)
    def upstream_command(self, meta, children):
        return ("command", ast.Name(_unquote(children[0]), self._span(meta)))

    @v_args(meta=True)
    def upstream_args(self, meta, children):
        return ("args", (children[0], self._span(meta)))

    @v_args(meta=True)
    def upstream_env(self, meta, children):
        return ("env", (children[0][1], self._span(meta)))

    @v_args(meta=True)
    def upstream_url(self, meta, children):
        return ("url", ast.Name(_unquote(children[0]), self._span(meta)))

    @v_args(meta=True)
    def upstream_risk(self, meta, children):
        return ("risk", ast.RiskOverride(self._name(children[0]), children[1], self._span(meta)))

    # --- command classes ---
    @v_args(meta=True)
    def commands(self, meta, children):
        return ast.Commands(self._name(children[0]), self._one(children, "title"),
                            tuple(self._pick(children, ast.CommandEntry)), self._span(meta))

    @v_args(meta=True)
    def command_entry(self, meta, children):
        words = tuple(_unquote(children[0]).split())
        excluded = children[1] if len(children) > 1 else ()
        return ast.CommandEntry(words, excluded, self._span(meta))

    @v_args(meta=True)
    def command_except(self, meta, children):
        return tuple(_unquote(c) for c in children)

    # --- conditions ---
    @v_args(meta=True)
    def condition(self, meta, children):
        return ("condition", children[0])

    @v_args(meta=True)
    def fact(self, meta, children):
        return ast.Fact(tuple(str(t) for t in children), self._span(meta))

    @v_args(meta=True)
    def or_expr(self, meta, children):
        return ast.Or(_flatten(children, ast.Or), self._span(meta))

    @v_args(meta=True)
    def and_expr(self, meta, children):
        return ast.And(_flatten(children, ast.And), self._span(meta))

    @v_args(meta=True)
    def not_expr(self, meta, children):
        return ast.Not(children[0], self._span(meta))

    @v_args(meta=True)
    def compare(self, meta, children):
        return ast.Compare(children[0], str(children[1]), children[2], self._span(meta))

    @v_args(meta=True)
    def member(self, meta, children):
        return ast.Member(children[0], children[1], self._span(meta))

    @v_args(meta=True)
    def matches(self, meta, children):
        return ast.Matches(children[0], _unquote(children[1]), self._span(meta))

    @v_args(meta=True)
    def inside(self, meta, children):
        return ast.Place(children[0], True, self._name(children[1]), self._span(meta))

    @v_args(meta=True)
    def outside(self, meta, children):
        return ast.Place(children[0], False, self._name(children[1]), self._span(meta))

    @v_args(meta=True)
    def is_class(self, meta, children):
        return ast.InClass(children[0], self._name(children[1]), self._span(meta))

    @v_args(meta=True)
    def has(self, meta, children):
        return ast.Has(children[0], self._span(meta))

    @v_args(meta=True)
    def flag(self, meta, children):
        return ast.Flag(self._name(children[0]), self._span(meta))

    @v_args(meta=True)
    def truthy(self, meta, children):
        return ast.Truthy(children[0], self._span(meta))

    @v_args(meta=True)
    def start(self, meta, children):
        return tuple(children)


def _flatten(children, kind) -> tuple:
    items = []
    for child in children:
        items.extend(child.items if isinstance(child, kind) else (child,))
    return tuple(items)


def _repeated(children, tags) -> tuple:
    found = []
    for tag in tags:
        items = [c[1] for c in children if isinstance(c, tuple) and len(c) == 2 and c[0] == tag]
        found.extend(item for item in items[1:] if isinstance(item, ast.Name))
    return tuple(found)


def _first(items):
    return items[0] if items else None


def _unquote(token) -> str:
    text = str(token)[1:-1]
    # the grammar's escapes are the JSON ones
    import json
    try:
        return json.loads('"' + text + '"')
    except ValueError:
        return text


def _rule_methods() -> dict:
    """rule name -> the plain function of its `@v_args(meta=True)` method: (self, meta, children)."""
    found = {}
    for name, attr in vars(_ToAst).items():
        base = getattr(attr, "base_func", None)  # lark's v_args wrapper keeps the function it wraps
        style = getattr(getattr(attr, "visit_wrapper", None), "__name__", "")
        if base is not None and style == "_vargs_meta":  # any other style goes through lark as before
            found[name] = base
    return found


_RULES = _rule_methods()


def to_document(path: str, tree: Tree, comments=()) -> ast.Document:
    from .resolve import collector_paused
    with collector_paused():
        decls = _ToAst(path).transform(tree)
    return ast.Document(path, tuple(decls), tuple(ast.Comment(line, text) for line, text in comments))
