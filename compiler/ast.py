"""The declaration AST: frozen records (`frozen.record`) with spans that never affect equality.

Produced by `to_ast` from a lark tree; nothing here knows about lark.
"""

from __future__ import annotations

from ._base.frozen import field, record
from .source import Span, span_field

Scalar = str | int | float | bool
Value = Scalar | tuple  # a tuple holds scalars (a config list)


@record
class Name:
    """A name as written, with where it was written."""

    text: str
    span: Span | None = span_field()


@record
class ConfigEntry:
    """`key = value` in a mount's `{ … }` (or an upstream's `env { … }`)."""

    key: Name
    value: Value
    span: Span | None = span_field()


# --- conditions -------------------------------------------------------------------------
@record
class Fact:
    """A fact a condition reads, as its dotted path: `platform`, `args.command`."""

    path: tuple[str, ...]
    span: Span | None = span_field()

    @property
    def dotted(self) -> str:
        return ".".join(self.path)


@record
class Compare:
    """`fact == value`, `fact != value`, or an order of numbers (`fact > 20`)."""

    fact: Fact
    op: str  # "==" | "!=" | "<" | "<=" | ">" | ">="
    value: Value
    span: Span | None = span_field()


@record
class Member:
    """`fact in [value, …]`."""

    fact: Fact
    values: tuple
    span: Span | None = span_field()


@record
class ListTest:
    """`fact all in [value, …]`, `fact any in [value, …]`, `fact contains value`: tests of an array's items."""

    fact: Fact
    quantifier: str  # "all" | "any" | "contains"
    values: tuple  # the list's items; for `contains`, the one value
    span: Span | None = span_field()


@record
class Length:
    """`length(fact) OP NUMBER`: how many items an array has (a string: how many characters)."""

    fact: Fact
    op: str  # "==" | "!=" | "<" | "<=" | ">" | ">="
    value: Value
    span: Span | None = span_field()


@record
class Matches:
    """`fact matches "GLOB"`."""

    fact: Fact
    pattern: str
    span: Span | None = span_field()


@record
class MatchesExcept:
    """`args.command matches "GLOB" except "-D", "--delete"`: the glob, unless the command gives one of those
    options, however spelled (the program's option grammar, `shell_options`)."""

    fact: Fact
    pattern: str
    excepted: tuple[str, ...]
    span: Span | None = span_field()


@record
class Place:
    """`fact inside|outside PLACE` — a path test against a named place (`workspace`)."""

    fact: Fact
    inside: bool
    place: Name
    span: Span | None = span_field()


@record
class Has:
    """`has fact`: the fact is present (a one-word fact names a service)."""

    fact: Fact
    span: Span | None = span_field()


@record
class Flag:
    """`flag NAME`: the request or host sets that flag."""

    name: Name
    span: Span | None = span_field()


@record
class Truthy:
    """A fact alone as a condition: it holds when the fact is true."""

    fact: Fact
    span: Span | None = span_field()


@record
class Not:
    """`not CONDITION`."""

    item: "Expr"
    span: Span | None = span_field()


@record
class And:
    """Conditions joined by `and`; a chain is one node."""

    items: tuple["Expr", ...]
    span: Span | None = span_field()


@record
class Or:
    """Conditions joined by `or`; a chain is one node."""

    items: tuple["Expr", ...]
    span: Span | None = span_field()


@record
class InClass:
    """`fact is CLASS` — a shell command whose every simple command belongs to a command class."""

    fact: Fact
    name: Name
    span: Span | None = span_field()


Expr = (
    Compare
    | Member
    | ListTest
    | Length
    | Matches
    | MatchesExcept
    | Place
    | Has
    | Flag
    | Truthy
    | Not
    | And
    | Or
    | InClass
)


def argument_field(test) -> str | None:
    """F of a test on `args.F` (`args.F matches P`, `args.F inside workspace`), else None."""
    path = test.fact.path
    return path[1] if len(path) == 2 and path[0] == "args" else None


def disjuncts(expr) -> tuple:
    """The tests of a condition's top-level `or`, each of which decides alone; the condition itself otherwise."""
    return expr.items if isinstance(expr, Or) else (expr,)


def atoms(expr):
    """The leaf tests of a condition (everything under and/or/not), left to right."""
    if expr is None:
        return
    if isinstance(expr, (And, Or)):
        for item in expr.items:
            yield from atoms(item)
    elif isinstance(expr, Not):
        yield from atoms(expr.item)
    else:
        yield expr


# --- declarations -----------------------------------------------------------------------
@record
class Mount:
    """`mount PACKAGE [as NAME] [{ config }] [when CONDITION] [disabled]`: one row of a preset."""

    package: Name
    alias: Name | None
    config: tuple[ConfigEntry, ...]
    condition: Expr | None
    disabled: bool
    span: Span | None = span_field()

    @property
    def row_name(self) -> str:
        return self.alias.text if self.alias else self.package.text

    def config_value(self, key: str, default=None):
        for entry in self.config:
            if entry.key.text == key:
                return entry.value
        return default

    def config_entry(self, key: str) -> ConfigEntry | None:
        return next((e for e in self.config if e.key.text == key), None)


@record
class Preset:
    """`preset NAME`: the tool packages an agent mounts, with what config, and how they are presented."""

    name: Name
    title: str | None
    extends: Name | None
    mounts: tuple[Mount, ...]
    present: Name | None
    provides: tuple[Name, ...]
    # second and later occurrences of one-per-block items (an error, reported by resolve)
    repeated: tuple[Name, ...] = field(default=(), compare=False)
    span: Span | None = span_field()


@record
class Host:
    """`host NAME`: what a host provides (services, platforms, flags) and how it composes tools."""

    name: Name
    title: str | None
    provides: tuple[Name, ...]
    platforms: tuple[Name, ...]
    flags: tuple[Name, ...]
    roster: bool
    roster_default: Name | None
    rows: Name | None
    present: Name | None
    policy: Name | None
    roster_span: Span | None = field(default=None, compare=False)
    # second and later occurrences of one-per-block items (an error, reported by resolve)
    repeated: tuple[Name, ...] = field(default=(), compare=False)
    span: Span | None = span_field()


@record
class Scope:
    """`scope NAME`: what a child agent or sub-scope may see, its approval pin and its own tools."""

    name: Name
    title: str | None
    extends: Name | None
    parent: Name | None
    approval: Name | None
    only: tuple[Name, ...]
    hide: tuple[Name, ...]
    own: tuple[Name, ...]
    present: Name | None
    # second and later occurrences of one-per-block items (an error, reported by resolve)
    repeated: tuple[Name, ...] = field(default=(), compare=False)
    span: Span | None = span_field()


@record
class Target:
    """What a rule or guard names: a tool (a name or a glob), `package(…)` or `risk(…)`."""

    kind: str  # "tool" (a name or glob) | "package" | "risk"
    name: Name
    span: Span | None = span_field()


@record
class Rule:
    """`allow|ask|deny TARGET, … [when CONDITION]`."""

    effect: str  # "allow" | "ask" | "deny"
    targets: tuple[Target, ...]
    condition: Expr | None
    span: Span | None = span_field()


@record
class Guard:
    """Deny-only by construction: a guard has no effect field to set to anything else."""

    name: Name
    targets: tuple[Target, ...]
    condition: Expr | None
    span: Span | None = span_field()


Item = Rule | Guard  # an item of a policy's body that targets tools with a condition


@record
class NetworkHosts:
    """`network allow|deny "HOST", …`: the hosts processes may reach, or may not."""

    effect: Name  # allow | deny
    hosts: tuple[Name, ...]
    span: Span | None = span_field()


@record
class Policy:
    """`policy NAME`: approval, sandbox settings, rules, guards and the default effect."""

    name: Name
    title: str | None
    extends: Name | None
    sandbox: Name | None
    approval: Name | None
    rules: tuple[Rule, ...]
    guards: tuple[Guard, ...]
    default: Name | None
    # second and later occurrences of one-per-block items (an error, reported by resolve)
    repeated: tuple[Name, ...] = field(default=(), compare=False)
    span: Span | None = span_field()
    # OS sandbox settings for the processes tools start
    network: Name | None = None  # allow | deny (the line without hosts)
    # `network allow "HOST", …` / `network deny "HOST", …` lines, in order (each host a Name: text and span)
    network_hosts: tuple[NetworkHosts, ...] = ()
    writable: tuple[Name, ...] = ()  # extra writable roots (path text)
    fallback: Name | None = None  # `unsandboxed`: run bare where no sandbox exists
    includes: tuple[Name, ...] = ()  # policies whose rules and guards this one adds


@record
class CommandEntry:
    """A program (and subcommand words) that belongs to a class, unless one of `excluded` is used."""

    words: tuple[str, ...]
    excluded: tuple[str, ...]
    span: Span | None = span_field()


@record
class Commands:
    """A class of shell commands; declarations of one name add up (a user extends a shipped class)."""

    name: Name
    title: str | None
    entries: tuple[CommandEntry, ...]
    span: Span | None = span_field()


@record
class RiskOverride:
    """`risk TOOL AXIS, …` in an upstream: these axes replace the ones read off the tool's MCP annotations."""

    tool: Name
    axes: tuple[Name, ...]  # `none` alone: no axis
    span: Span | None = span_field()


@record
class Upstream:
    """An MCP server dshc connects to as a client; its tools form catalog package `mcp:NAME`."""

    name: Name
    title: str | None
    command: Name | None  # stdio: the program to start ...
    args: tuple  # ... its arguments (strings) ...
    env: tuple[ConfigEntry, ...]  # ... and extra environment variables
    url: Name | None  # streamable HTTP instead of stdio
    risk: tuple[RiskOverride, ...]
    # second and later occurrences of one-per-block items (an error, reported by the upstream check)
    repeated: tuple[Name, ...] = field(default=(), compare=False)
    span: Span | None = span_field()
    args_span: Span | None = span_field()
    env_span: Span | None = span_field()


Decl = Preset | Host | Scope | Policy | Commands | Upstream

DECL_KIND = {
    Preset: "preset",
    Host: "host",
    Scope: "scope",
    Policy: "policy",
    Commands: "commands",
    Upstream: "upstream",
}


@record
class Comment:
    """A `#` comment and its line: layout that `fmt` keeps."""

    line: int
    text: str


@record
class Document:
    """One source file's declarations (and its comments, for `fmt`)."""

    path: str
    decls: tuple[Decl, ...]
    # Comments are layout, not meaning: fmt keeps them, equality ignores them.
    comments: tuple[Comment, ...] = field(default=(), compare=False)
