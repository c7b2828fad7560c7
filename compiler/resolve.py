"""Documents + Catalog → Program: names bound, extends graph checked, declarations flattened.

Every unknown name is an error with a span and a did-you-mean; every problem in every file
is collected before anything is raised.
"""

from __future__ import annotations

import gc

TYPE_CHECKING = False  # no `import typing` (~4 ms of a hook): its names are for annotations only
if TYPE_CHECKING:  # networkx loads only when a graph is used (`lazy_graph`) or a cycle is named
    from collections.abc import Iterator
    import networkx as nx

from . import ast
from .catalog import Catalog, ToolDef
from .command_classes import CommandClass, merge_classes
from .data_codec import Deferred
from .conditions import ENV_FIELDS
from .diagnostics import Diagnostic, DshError, did_you_mean, unknown
from ._base.frozen import record
from .patterns import fnmatchcase
from .lazy_graph import LazyGraph
from .facts import APPROVALS, COMPOSITION_FACTS, HOST_SERVICES, MODES, PLACES, PLATFORMS, REQUEST_FACTS, SANDBOX_MODES

NETWORK_SETTINGS = ("allow", "deny")
HOST_FIELDS = ("host", "hosts")  # `args.url.host`, `args.command.hosts`
SANDBOX_FALLBACKS = ("unsandboxed",)

KINDS = ("preset", "host", "scope", "policy")
UNKNOWN_CODE = {"preset": "DSH204", "host": "DSH205", "scope": "DSH206", "policy": "DSH207"}
RESERVED_TOOL = "run_code"


@record(slots=False)
class EffectivePreset:
    """A preset with its `extends` chain applied."""

    name: str
    decl: ast.Preset
    mounts: tuple[ast.Mount, ...]  # own rows override inherited rows of the same name
    provides: tuple[ast.Name, ...]
    present: ast.Name | None


@record(slots=False)
class EffectiveScope:
    """A scope with its `extends` chain applied and its parent named."""

    name: str
    decl: ast.Scope
    parent: str | None
    approval: ast.Name | None
    only: tuple[ast.Name, ...]
    hide: tuple[ast.Name, ...]
    own: tuple[ast.Name, ...]
    present: ast.Name | None


@record(slots=False)
class EffectivePolicy:
    """A policy with its `extends` chain applied: its rules and guards in order."""

    name: str
    decl: ast.Policy
    sandbox: ast.Name | None
    approval: ast.Name | None
    default: ast.Name | None
    rules: tuple[ast.Rule, ...]
    guards: tuple[ast.Guard, ...]
    network: ast.Name | None = None  # allow | deny; none said means deny
    writable: tuple[ast.Name, ...] = ()  # extra writable roots, farthest ancestor first
    fallback: ast.Name | None = None  # `unsandboxed` opts out of failing closed
    classes: tuple[CommandClass, ...] = ()  # every command class, for `args.command is NAME`
    # the hosts of `network allow "…"`: one tuple per level of the extends chain that lists hosts (a host must be
    # in every one: a child only narrows); `network deny "…"`: every level's (deny wins)
    network_allow: tuple[tuple[ast.Name, ...], ...] = ()
    network_deny: tuple[ast.Name, ...] = ()


@record(slots=False)
class Resolved(Deferred):
    """A checked program: the catalog, the documents, the declarations by kind and their effective forms."""

    __deferred__ = ("documents", "tables")  # read by listings, checks and tests, never by a decision
    __lazy_maps__ = ("policies",)  # a decision reads one policy's chain of the shipped dozen (data_codec)
    catalog: Catalog
    documents: tuple[ast.Document, ...]
    tables: dict[str, dict[str, ast.Decl]]
    # tables["host"], which every composition reads: kept when `tables` is deferred, and written before the
    # policies and the graph, whose objects a cache decodes only when read (data_codec)
    hosts: dict[str, ast.Host]
    presets: dict[str, EffectivePreset]
    scopes: dict[str, EffectiveScope]
    policies: dict[str, EffectivePolicy]
    graph: nx.MultiDiGraph
    warnings: tuple[Diagnostic, ...]


def known_services(catalog: Catalog) -> frozenset[str]:
    return catalog.services | frozenset(HOST_SERVICES)


def resolve(documents: tuple[ast.Document, ...], catalog: Catalog) -> Resolved:
    with collector_paused():
        return _resolve(documents, catalog)


class collector_paused:  # noqa: N801 - used as `with collector_paused():`, like a contextlib manager
    """Building 100,000s of objects (parse trees, ASTs, resolved tables) makes no garbage cycles, yet
    triggers the cyclic collector's full passes over everything alive; pausing it roughly halves the
    time of a large load. Reference counting still frees what is dropped. (A class, not a
    contextlib.contextmanager: contextlib imports collections and functools into every hook.)"""

    def __enter__(self) -> None:
        self.enabled = gc.isenabled()
        gc.disable()

    def __exit__(self, *exc_info) -> None:
        if self.enabled:
            gc.enable()


def _resolve(documents: tuple[ast.Document, ...], catalog: Catalog) -> Resolved:
    r = _Resolver(catalog)
    tables = r.tables(documents)
    r.check_all(tables)
    graph = r.graph(tables)
    if r.errors:
        raise DshError(r.errors)
    presets = _flatten_all(tables["preset"], _flatten_preset)
    scopes = _flatten_all(tables["scope"], _flatten_scope)
    classes = tuple(r.classes)
    policies = _flatten_policies(tables["policy"], classes)
    return Resolved(catalog, documents, tables, tables["host"], presets, scopes, policies, graph, tuple(r.warnings))  # type: ignore[arg-type]  # Host declarations


class _Resolver:
    def __init__(self, catalog: Catalog):
        self.catalog = catalog
        self.services = known_services(catalog)
        self.errors: list[Diagnostic] = []
        self.warnings: list[Diagnostic] = []
        self.classes: tuple[CommandClass, ...] = ()
        self._fields_of: dict[tuple[str, str], frozenset[str]] = {}  # (target kind, text) -> its tools' fields

    def add(self, diags) -> None:
        for d in diags:
            (self.errors if d.severity == "error" else self.warnings).append(d)

    # --- symbol tables ---
    def tables(self, documents) -> dict[str, dict[str, ast.Decl]]:
        tables: dict[str, dict[str, ast.Decl]] = {kind: {} for kind in KINDS}
        commands: list[ast.Commands] = []
        for document in documents:
            for decl in document.decls:
                if isinstance(decl, ast.Commands):  # declarations of one class add up
                    commands.append(decl)
                    continue
                if isinstance(decl, ast.Upstream):  # reached through the catalog package it becomes
                    continue
                kind = ast.DECL_KIND[type(decl)]
                first = tables[kind].get(decl.name.text)
                if first is not None:
                    self.add(
                        [
                            Diagnostic(
                                "DSH210",
                                f"{kind} `{decl.name.text}` is declared twice",
                                decl.name.span,
                                f"first declared at {first.name.span}",
                            )
                        ]
                    )
                    continue
                tables[kind][decl.name.text] = decl
        self.classes = merge_classes(commands)
        return tables

    def check_all(self, tables) -> None:
        for kind in KINDS:
            for decl in tables[kind].values():
                for name in decl.repeated:
                    self.add(
                        [
                            Diagnostic(
                                "DSH306",
                                f"{kind} `{decl.name.text}` sets this more than once (`{name.text}`)",
                                name.span,
                                "keep one; nothing in a file is silently ignored",
                            )
                        ]
                    )
        for decl in tables["preset"].values():
            self.add(self.check_preset(decl, tables))
        for decl in tables["host"].values():
            self.add(self.check_host(decl, tables))
        for decl in tables["scope"].values():
            self.add(self.check_scope(decl, tables))
        for decl in tables["policy"].values():
            self.add(self.check_policy(decl, tables))

    def ref(self, kind: str, name: ast.Name | None, tables) -> Iterator[Diagnostic]:
        if name is None or name.text in tables[kind]:
            return
        other = next((k for k in KINDS if name.text in tables[k]), None)
        if other is not None:
            yield Diagnostic(
                "DSH218",
                f"`{name.text}` is a {other}, not a {kind}",
                name.span,
                did_you_mean(name.text, tables[kind]) or f"name a {kind} here",
            )
        else:
            yield unknown(UNKNOWN_CODE[kind], kind, name.text, tables[kind], name.span)

    def service_names(self, names) -> Iterator[Diagnostic]:
        for name in names:
            if name.text not in self.services:
                yield unknown("DSH203", "service", name.text, self.services, name.span)

    def mode(self, name: ast.Name | None) -> Iterator[Diagnostic]:
        if name is not None and name.text not in MODES:
            yield Diagnostic(
                "DSH216",
                f"unknown mode `{name.text}`",
                name.span,
                did_you_mean(name.text, MODES) or "modes are native, code and both",
            )

    def repeated(self, kind: str, names) -> Iterator[Diagnostic]:
        seen: set[str] = set()
        for name in names:
            if name.text in seen:
                yield Diagnostic("DSH306", f"{kind} `{name.text}` is listed twice", name.span)
            seen.add(name.text)

    # --- presets ---
    def check_preset(self, decl: ast.Preset, tables) -> Iterator[Diagnostic]:
        yield from self.ref("preset", decl.extends, tables)
        yield from self.service_names(decl.provides)
        yield from self.repeated("service", decl.provides)
        yield from self.mode(decl.present)
        rows: dict[str, ast.Mount] = {}
        for mount in decl.mounts:
            if mount.row_name in rows:
                yield Diagnostic(
                    "DSH211",
                    f"mount name `{mount.row_name}` is used twice in preset `{decl.name.text}`",
                    (mount.alias or mount.package).span,
                    f"first mounted at {rows[mount.row_name].span}; give one of them `as NAME`",
                )
            rows.setdefault(mount.row_name, mount)
            yield from self.check_mount(mount)
        yield from self.same_tool_twice(decl)

    def same_tool_twice(self, decl: ast.Preset) -> Iterator[Diagnostic]:
        """Two always-on rows of one preset that register the same tool name (a duplicate in one layer)."""
        seen: dict[str, ast.Mount] = {}
        for mount in decl.mounts:
            package = self.catalog.package_by_id.get(mount.package.text)
            if package is None or mount.disabled or mount.condition is not None:
                continue
            for tool in package.tools:
                name = tool_name(tool, mount)
                first = seen.setdefault(name, mount)
                if first is not mount and first.row_name != mount.row_name:  # same row name: DSH211 says it
                    yield Diagnostic(
                        "DSH304",
                        f"rows `{first.row_name}` and `{mount.row_name}` both register "
                        f"`{name}` in preset `{decl.name.text}`",
                        mount.package.span,
                        f"the first is at {first.span}; rename one (`as NAME` with a naming key) or drop it",
                    )
                    break

    def check_mount(self, mount: ast.Mount) -> Iterator[Diagnostic]:
        package = self.catalog.package_by_id.get(mount.package.text)
        if package is None:
            yield unknown("DSH201", "package", mount.package.text, self.catalog.package_by_id, mount.package.span)
        else:
            seen: set[str] = set()
            for entry in mount.config:
                knob = package.config.get(entry.key.text)
                if entry.key.text in seen:
                    yield Diagnostic("DSH306", f"config key `{entry.key.text}` is set twice", entry.key.span)
                seen.add(entry.key.text)
                if knob is None:
                    hint = did_you_mean(entry.key.text, package.config) or (
                        "its keys are " + ", ".join(f"`{k}`" for k in sorted(package.config))
                        if package.config
                        else "this package takes no config"
                    )
                    yield Diagnostic(
                        "DSH209", f"package `{package.id}` has no config key `{entry.key.text}`", entry.key.span, hint
                    )
                    continue
                problem = _config_type_problem(knob, entry.value)
                if problem:
                    yield Diagnostic("DSH214", f"`{entry.key.text}` {problem}", entry.span)
                elif knob.service_for(entry.value) not in (None, *self.services):
                    # a provider no host can ever register would leave the row silently empty
                    yield unknown("DSH203", "service", knob.service_for(entry.value), self.services, entry.span)  # type: ignore[arg-type]  # not None: tested above
            for key, knob in sorted(package.config.items()):
                if knob.required and mount.config_entry(key) is None:
                    yield Diagnostic(
                        "DSH215",
                        f"package `{package.id}` needs config key `{key}`",
                        mount.package.span,
                        f"add `{{ {key} = … }}` to the mount: {knob.summary}",
                    )
        if mount.condition is not None:
            yield from self.check_condition(mount.condition, COMPOSITION_FACTS, args_fields=None)

    # --- hosts ---
    def check_host(self, decl: ast.Host, tables) -> Iterator[Diagnostic]:
        yield from self.service_names(decl.provides)
        yield from self.repeated("service", decl.provides)
        for platform in decl.platforms:
            if platform.text not in PLATFORMS:
                yield Diagnostic(
                    "DSH213",
                    f"unknown platform `{platform.text}`",
                    platform.span,
                    did_you_mean(platform.text, PLATFORMS) or "platforms are linux, darwin and win32",
                )
        yield from self.ref("preset", decl.roster_default, tables)
        yield from self.ref("preset", decl.rows, tables)
        yield from self.ref("policy", decl.policy, tables)
        yield from self.mode(decl.present)

    # --- scopes ---
    def check_scope(self, decl: ast.Scope, tables) -> Iterator[Diagnostic]:
        yield from self.ref("scope", decl.extends, tables)
        yield from self.ref("scope", decl.parent, tables)
        yield from self.mode(decl.present)
        if decl.approval is not None and decl.approval.text not in APPROVALS:
            yield Diagnostic(
                "DSH109", f"approval must be `ask` or `never`, not `{decl.approval.text}`", decl.approval.span
            )
        yield from self.check_own(decl.own)
        for kind, names in (("only", decl.only), ("hide", decl.hide)):
            for name in names:
                if name.text == RESERVED_TOOL or (
                    kind != "own"
                    and name.text != "*"
                    and fnmatchcase(RESERVED_TOOL, name.text)
                    and not _is_glob(name.text)
                ):
                    yield Diagnostic(
                        "DSH301",
                        f"`{RESERVED_TOOL}` cannot be {'registered' if kind == 'own' else 'restricted'} by a scope",
                        name.span,
                        "code mode adds `run_code` itself; remove it from the list",
                    )
                elif not _is_glob(name.text) and name.text not in self.catalog.shipped_names:
                    yield unknown("DSH202", "tool", name.text, self.catalog.shipped_names, name.span)
            yield from self.repeated("tool", names)

    def check_own(self, names) -> Iterator[Diagnostic]:
        for name in names:
            tool_name = own_tool_name(name.text)
            if tool_name == RESERVED_TOOL:
                yield Diagnostic(
                    "DSH301",
                    f"`{RESERVED_TOOL}` cannot be registered by a scope",
                    name.span,
                    "code mode adds `run_code` itself; remove it from the list",
                )
            elif _is_glob(name.text):
                yield Diagnostic("DSH108", f"`own` needs exact tool names, not the glob `{name.text}`", name.span)
            elif "/" in name.text:
                package = name.text.split("/", 1)[0]
                if package not in self.catalog.package_by_id:
                    yield unknown("DSH201", "package", package, self.catalog.package_by_id, name.span)
                elif not own_candidates(self.catalog, name.text):
                    names_there = sorted({t.name for t in self.catalog.package_by_id[package].tools})
                    yield Diagnostic(
                        "DSH202",
                        f"package `{package}` defines no tool `{tool_name}`",
                        name.span,
                        did_you_mean(tool_name, names_there)
                        or "it defines " + ", ".join(f"`{n}`" for n in names_there),
                    )
            else:
                found = own_candidates(self.catalog, name.text)
                if not found:
                    yield unknown("DSH202", "tool", name.text, self.catalog.shipped_names, name.span)
                elif len({t.package for t in found}) > 1:
                    choices = " or ".join(f"`own {t.package}/{name.text}`" for t in found)
                    yield Diagnostic(
                        "DSH220",
                        f"`own {name.text}` is ambiguous: packages "
                        + ", ".join(f"`{t.package}`" for t in found)
                        + f" all define `{name.text}`",
                        name.span,
                        f"name the package: {choices}",
                    )
        yield from self.repeated("tool", [ast.Name(own_tool_name(n.text), n.span) for n in names])

    # --- policies ---
    def check_policy(self, decl: ast.Policy, tables) -> Iterator[Diagnostic]:
        yield from self.ref("policy", decl.extends, tables)
        for name in decl.includes:
            yield from self.ref("policy", name, tables)
        if decl.sandbox is not None and decl.sandbox.text not in SANDBOX_MODES:
            yield Diagnostic(
                "DSH109",
                f"unknown sandbox mode `{decl.sandbox.text}`",
                decl.sandbox.span,
                did_you_mean(decl.sandbox.text, SANDBOX_MODES) or "modes are " + ", ".join(SANDBOX_MODES),
            )
        if decl.approval is not None and decl.approval.text not in APPROVALS:
            yield Diagnostic(
                "DSH109", f"approval must be `ask` or `never`, not `{decl.approval.text}`", decl.approval.span
            )
        yield from self.check_sandbox_settings(decl)
        items: tuple[ast.Item, ...] = (*decl.rules, *decl.guards)
        for item in items:
            fields: set[str] = set()
            for target in item.targets:
                yield from self.check_target(target)
                fields |= self.target_fields(target)
            if item.condition is not None:
                shapes = self._shapes(item.targets) if _tests_shapes(item.condition) else None
                yield from self.check_condition(item.condition, REQUEST_FACTS, args_fields=fields, shapes=shapes)

    def check_sandbox_settings(self, decl: ast.Policy) -> Iterator[Diagnostic]:
        if decl.network is not None and decl.network.text not in NETWORK_SETTINGS:
            yield Diagnostic(
                "DSH109",
                f"network must be `allow` or `deny`, not `{decl.network.text}`",
                decl.network.span,
                did_you_mean(decl.network.text, NETWORK_SETTINGS),
            )
        if decl.fallback is not None and decl.fallback.text not in SANDBOX_FALLBACKS:
            yield Diagnostic(
                "DSH109", f"the only sandbox fallback is `unsandboxed`, not `{decl.fallback.text}`", decl.fallback.span
            )
        yield from self.check_network_hosts(decl)
        for root in decl.writable:
            # a relative root would depend on where dshc happens to start
            if not (root.text.startswith("/") or root.text == "~" or root.text.startswith("~/")):
                yield Diagnostic(
                    "DSH109",
                    f"writable root `{root.text}` must be absolute or start with `~/`",
                    root.span,
                    "the workspace is writable already under workspace-write",
                )

    def check_network_hosts(self, decl: ast.Policy) -> Iterator[Diagnostic]:
        from ..common.hosts import pattern_problem

        for line in decl.network_hosts:
            if line.effect.text not in NETWORK_SETTINGS:
                yield Diagnostic(
                    "DSH109",
                    f"network must be `allow` or `deny`, not `{line.effect.text}`",
                    line.effect.span,
                    did_you_mean(line.effect.text, NETWORK_SETTINGS),
                )
            for host in line.hosts:
                problem = pattern_problem(host.text)
                if problem is not None:
                    yield Diagnostic(
                        "DSH109",
                        f"host pattern: {problem}",
                        host.span,
                        "a name, `*.NAME`, an address, a network `10.0.0.0/8`, `*`; each may end `:PORT`",
                    )
        if decl.network_hosts and decl.sandbox is not None and decl.sandbox.text == "danger-full-access":
            yield Diagnostic(
                "DSH109",
                "host lists need a sandbox: `danger-full-access` confines nothing",
                decl.network_hosts[0].span,
                "use `sandbox workspace-write` or `read-only`",
            )
        listed = next((line for line in decl.network_hosts if line.effect.text == "allow"), None)
        if decl.network is not None and listed is not None:
            # `network deny` turns the network off, `network allow` opens it to every host: either way the list
            # would say something the other line contradicts
            yield Diagnostic(
                "DSH109",
                f'`network {decl.network.text}` and `network allow "…"` in one policy',
                decl.network.span,
                "keep the hosts' line: it turns the network on for those hosts only",
            )

    def check_target(self, target: ast.Target) -> Iterator[Diagnostic]:
        text = target.name.text
        if target.kind == "package":
            if text not in self.catalog.package_by_id:
                yield unknown("DSH201", "package", text, self.catalog.package_by_id, target.name.span)
        elif target.kind == "risk":
            if text not in self.catalog.risk_axes:
                yield unknown("DSH217", "risk axis", text, self.catalog.risk_axes, target.name.span)
        elif _is_glob(text):
            if not any(fnmatchcase(n, text) for n in self.catalog.shipped_names | {RESERVED_TOOL}):
                yield Diagnostic("DSH202", f"pattern `{text}` matches no tool", target.name.span)
        elif text not in self.catalog.shipped_names:
            yield unknown("DSH202", "tool", text, self.catalog.shipped_names, target.name.span)

    def target_fields(self, target: ast.Target) -> frozenset[str]:
        # a policy of N rules names a few dozen distinct targets: scan the catalog once per target, not per rule
        key = (target.kind, target.name.text)
        found = self._fields_of.get(key)
        if found is None:
            found = self._fields_of[key] = frozenset(self._scan_fields(target))
        return found

    def _scan_fields(self, target: ast.Target) -> set[str]:
        fields: set[str] = set()
        for tool in self._covered(target):
            fields |= set(tool.parameters.get("properties", {}))
            if tool.escalation:
                fields |= {"sandbox_permissions", "justification"}
        return fields

    def _shapes(self, targets) -> dict[str, frozenset[str]]:
        """Argument field -> the JSON types the targets' tools declare for it; "any" where one declares none."""
        found: dict[str, set[str]] = {}
        for target in targets:
            for tool in self._covered(target):
                for name, schema in tool.parameters.get("properties", {}).items():
                    declared = schema.get("type") if isinstance(schema, dict) else None
                    types = {declared} if isinstance(declared, str) else set(declared or ()) or {"any"}
                    found.setdefault(name, set()).update(map(str, types))
        return {name: frozenset(types) for name, types in found.items()}

    def _covered(self, target: ast.Target):
        """The catalog's tools `target` covers (`target_matches_tool`): looked up for a package or a plain
        name, tried one by one for a glob or a risk axis."""
        text = target.name.text
        if target.kind == "package":
            return self.catalog.by_package.get(text, ())
        if target.kind == "tool" and FNMATCH_SPECIAL.isdisjoint(text):
            return self.catalog.by_name_or_alias.get(text, ())
        return [
            tool
            for tool in self.catalog.definitions.values()
            if target_matches_tool(target, tool.name, tool, alias_names=tool.aliases)
        ]

    # --- conditions ---
    @staticmethod
    def _host_problems(expr) -> list[Diagnostic]:
        """`args.FIELD.host` (a URL's) and `args.command.hosts` (a shell command's): tested by host pattern."""
        from ..common.hosts import pattern_problem
        from .conditions import SHELL_FIELDS

        fact = expr.fact
        if (fact.path[2] == "hosts") != (fact.path[1] in SHELL_FIELDS):
            return [
                Diagnostic(
                    "DSH208",
                    f"`{fact.dotted}`: a URL's host is `.host`, a shell command's are `.hosts`",
                    fact.span,
                    f"write `args.{fact.path[1]}.{'hosts' if fact.path[1] in SHELL_FIELDS else 'host'}`",
                )
            ]
        texts: list
        if isinstance(expr, ast.Matches):
            texts = [expr.pattern]
        elif isinstance(expr, (ast.Member, ast.Compare)):
            texts = list(expr.values) if isinstance(expr, ast.Member) else [expr.value]
        elif isinstance(expr, ast.Truthy):
            return []
        else:
            return [Diagnostic("DSH305", f"`{fact.dotted}` is tested with `matches`, `in`, `==` or `!=`", expr.span)]
        problems = [text if not isinstance(text, str) else pattern_problem(text) for text in texts]
        return [
            Diagnostic(
                "DSH109",
                f"host pattern: {problem}"
                if isinstance(problem, str)
                else f"host pattern: `{problem}` is not a string",
                expr.span,
                "a name, `*.NAME`, an address, a network `10.0.0.0/8`, `*`; each may end `:PORT`",
            )
            for problem in problems
            if problem is not None
        ]

    def check_condition(
        self, expr: ast.Expr, facts, args_fields: set[str] | None, shapes: dict | None = None
    ) -> list[Diagnostic]:
        """The problems of a condition's tests, left to right (a list filled by plain calls, not a generator
        per test: a policy of N rules checks N conditions)."""
        out: list[Diagnostic] = []
        self._check_expr(expr, facts, args_fields, out, shapes)
        return out

    def _check_expr(self, expr: ast.Expr, facts, args_fields: set[str] | None, out: list, shapes=None) -> None:
        if isinstance(expr, (ast.And, ast.Or)):
            for item in expr.items:
                self._check_expr(item, facts, args_fields, out, shapes)
            return
        if isinstance(expr, ast.Not):
            self._check_expr(expr.item, facts, args_fields, out, shapes)
            return
        if isinstance(expr, ast.Flag):
            return
        fact: ast.Fact = expr.fact
        if isinstance(expr, ast.Has) and len(fact.path) == 1:
            out.extend(self.service_names([ast.Name(fact.path[0], fact.span)]))
            return
        if fact.path[0] == "args":
            if len(fact.path) == 3 and fact.path[2] in ENV_FIELDS and args_fields is not None:
                out.extend(_env_problems(expr, args_fields))
                return
            if args_fields is None:
                out.append(
                    Diagnostic(
                        "DSH208",
                        f"`{fact.dotted}` is not known here: mount conditions see only host facts",
                        fact.span,
                        "use `platform`, `host`, `has SERVICE` or `flag NAME`",
                    )
                )
                return
            if len(fact.path) == 3 and fact.path[2] in HOST_FIELDS and fact.path[1] in args_fields:
                out.extend(self._host_problems(expr))
                return
            if len(fact.path) != 2 or fact.path[1] not in args_fields:
                out.append(
                    Diagnostic(
                        "DSH208",
                        f"unknown argument field `{fact.dotted}` for the rule's tools",
                        fact.span,
                        did_you_mean(fact.path[-1], args_fields) if len(fact.path) == 2 else None,
                    )
                )
            if isinstance(expr, ast.Place) and expr.place.text not in PLACES:
                out.append(
                    Diagnostic(
                        "DSH208", f"unknown place `{expr.place.text}`", expr.place.span, "the place is `workspace`"
                    )
                )
            if isinstance(expr, ast.MatchesExcept):
                from .conditions import SHELL_FIELDS
                from .shell_options import except_problem

                problem = (
                    "`except` names options of a shell command: write it on `args.command`"
                    if fact.path[-1] not in SHELL_FIELDS
                    else except_problem(expr.pattern, expr.excepted)
                )
                if problem:
                    out.append(Diagnostic("DSH109", problem, expr.span))
            if len(fact.path) == 2 and shapes is not None:
                out.extend(_shape_problems(expr, shapes.get(fact.path[1])))
            if isinstance(expr, ast.InClass) and expr.name.text not in {c.name for c in self.classes}:
                out.append(
                    unknown("DSH219", "command class", expr.name.text, {c.name for c in self.classes}, expr.name.span)
                )
            return
        if fact.path[0] == "session":
            out.extend(_session_problems(expr, args_fields is None))
            return
        if fact.path[0] == "call" and args_fields is not None:  # a fact of the call: typed as request facts are
            from .session import CALL_FACTS

            facts = {name: (kind, None) for name, (kind, _) in CALL_FACTS.items()}
        if isinstance(expr, (ast.ListTest, ast.Length)):
            out.append(Diagnostic("DSH305", f"`{fact.dotted}` is not an array argument", expr.span))
            return
        if isinstance(expr, ast.InClass):
            out.append(
                Diagnostic(
                    "DSH305",
                    f"`is` tests a shell command argument, not `{fact.dotted}`",
                    fact.span,
                    "write `args.command is CLASS`",
                )
            )
            return
        name = fact.dotted
        if name not in facts:
            out.append(
                Diagnostic(
                    "DSH208",
                    f"unknown fact `{name}`",
                    fact.span,
                    did_you_mean(name, facts) or "facts here: " + ", ".join(f"`{f}`" for f in sorted(facts)),
                )
            )
            return
        kind, allowed = facts[name]
        if isinstance(expr, ast.Compare) and expr.op not in ("==", "!="):
            out.append(
                Diagnostic(
                    "DSH305",
                    f"`{expr.op}` compares numbers; `{name}` is a {kind}",
                    expr.span,
                    f"write `{name} == …` or `{name} != …`",
                )
            )
        if isinstance(expr, ast.Truthy) and kind != "boolean":
            out.append(
                Diagnostic("DSH305", f"`{name}` is a {kind}, not a boolean", fact.span, f'compare it: `{name} == "…"`')
            )
        if isinstance(expr, ast.Has):
            out.append(Diagnostic("DSH305", f"`has` tests services and argument fields, not `{name}`", fact.span))
        if isinstance(expr, (ast.Matches, ast.Place)) and kind != "string":
            out.append(Diagnostic("DSH305", f"`{name}` is a {kind}", fact.span))
        if isinstance(expr, ast.Place):
            out.append(Diagnostic("DSH305", f"`inside`/`outside` test argument paths, not `{name}`", fact.span))
        values = (expr.value,) if isinstance(expr, ast.Compare) else expr.values if isinstance(expr, ast.Member) else ()
        for value in values:
            expected = bool if kind == "boolean" else str
            if not isinstance(value, expected) or (kind == "string" and isinstance(value, bool)):
                out.append(Diagnostic("DSH305", f"`{name}` is a {kind}; `{_show(value)}` is not", expr.span))
            elif allowed is not None and value not in allowed:
                code = "DSH213" if name == "platform" else "DSH109"
                out.append(
                    Diagnostic(
                        code,
                        f"`{value}` is not a {name}",
                        expr.span,
                        did_you_mean(value, allowed) or "one of: " + ", ".join(allowed),  # type: ignore[arg-type]  # a string fact's
                    )
                )

    # --- graph ---
    def graph(self, tables) -> nx.MultiDiGraph:
        nodes = [(kind, name) for kind in KINDS for name in tables[kind]]
        edges: list[
            tuple
        ] = []  # (from, to, relation, span), built in bulk: per-edge calls dominate at 100,000s of declarations
        for kind in ("preset", "scope", "policy"):
            for decl in tables[kind].values():
                if decl.extends is not None and decl.extends.text in tables[kind]:
                    edges.append(((kind, decl.name.text), (kind, decl.extends.text), "extends", decl.extends.span))
        for decl in tables["policy"].values():
            edges += [
                (("policy", decl.name.text), ("policy", n.text), "include", n.span)
                for n in decl.includes
                if n.text in tables["policy"]
            ]
        for decl in tables["scope"].values():
            if decl.parent is not None and decl.parent.text in tables["scope"]:
                edges.append((("scope", decl.name.text), ("scope", decl.parent.text), "parent", decl.parent.span))
        for decl in tables["host"].values():
            for relation, ref in (("rows", decl.rows), ("roster", decl.roster_default)):
                if ref is not None and ref.text in tables["preset"]:
                    edges.append((("host", decl.name.text), ("preset", ref.text), relation, ref.span))
            if decl.policy is not None and decl.policy.text in tables["policy"]:
                edges.append((("host", decl.name.text), ("policy", decl.policy.text), "policy", decl.policy.span))
        keyed: list[tuple] = []  # (u, v, key, data) as a MultiDiGraph numbers parallel edges
        between: dict[tuple, list[dict]] = {}  # (u, v) -> [data]
        for u, v, relation, span in edges:
            found = between.setdefault((u, v), [])
            found.append({"relation": relation, "span": span})
            keyed.append((u, v, len(found) - 1, found[-1]))
        graph = LazyGraph("MultiDiGraph", [(node, {}) for node in nodes], keyed)
        chains = [(u, v) for u, v, relation, _ in edges if relation in ("extends", "parent", "include")]
        cyclic = _on_or_before_cycles(chains)
        if not cyclic:
            return graph  # the usual case: networkx is needed only to name the cycles
        import networkx as nx

        chain_graph = nx.DiGraph((u, v) for u, v in chains if u in cyclic and v in cyclic)
        for cycle in sorted(nx.simple_cycles(chain_graph), key=lambda c: sorted(c)):
            edges = []
            for index, node in enumerate(cycle):
                nxt = cycle[(index + 1) % len(cycle)]
                data = min(between[node, nxt], key=lambda d: (d["span"].line, d["span"].col))
                edges.append((node, nxt, data))
            edges = _rotate_to_smallest(edges)
            names = " → ".join(f"`{n[1]}`" for n, _, _ in edges) + f" → `{edges[0][0][1]}`"
            where = "; ".join(f"`{u[1]}` {d['relation']} `{v[1]}` at {d['span']}" for u, v, d in edges)
            self.add([Diagnostic("DSH212", f"{edges[0][0][0]} cycle: {names}", edges[0][2]["span"], where)])
        return graph


def _on_or_before_cycles(edges) -> set:
    """Nodes that can reach a cycle: what is left after repeatedly removing nodes with no way out (linear)."""
    outgoing: dict = {}
    incoming: dict = {}
    for u, v in edges:
        outgoing[u] = outgoing.get(u, 0) + 1
        outgoing.setdefault(v, 0)
        incoming.setdefault(v, []).append(u)
    sinks = [node for node, count in outgoing.items() if count == 0]
    while sinks:
        node = sinks.pop()
        for u in incoming.get(node, ()):
            outgoing[u] -= 1
            if outgoing[u] == 0:
                sinks.append(u)
    return {node for node, count in outgoing.items() if count > 0}


def _rotate_to_smallest(edges):
    start = min(range(len(edges)), key=lambda i: edges[i][0][1])
    return edges[start:] + edges[:start]


def _flatten_all(table: dict, flatten_one) -> dict:
    """Every declaration's effective form, built on its parent's: one pass, whatever the chain depth.

    `flatten_one(decl, parent_effective | None)`. Cycles and unknown parents were reported before.
    """
    done: dict = {}
    for name in table:
        pending = []
        while name is not None and name not in done:
            pending.append(name)
            name = table[name].extends.text if table[name].extends is not None else None
        for item in reversed(pending):  # the farthest ancestor first
            decl = table[item]
            done[item] = flatten_one(decl, done[decl.extends.text] if decl.extends is not None else None)
    return {name: done[name] for name in table}  # declaration order, as before


def _flatten_preset(decl: ast.Preset, parent: EffectivePreset | None) -> EffectivePreset:
    rows = {m.row_name: m for m in parent.mounts} if parent else {}
    provides = {s.text: s for s in parent.provides} if parent else {}
    for mount in decl.mounts:  # a nearer row replaces an inherited one of the same name, and moves last
        rows.pop(mount.row_name, None)
        rows[mount.row_name] = mount
    for service in decl.provides:
        provides.setdefault(service.text, service)
    present = decl.present or (parent.present if parent else None)
    return EffectivePreset(decl.name.text, decl, tuple(rows.values()), tuple(provides.values()), present)


def _nearest(decl, parent, attr: str):
    own = getattr(decl, attr)
    return own if own is not None or parent is None else getattr(parent, attr)


def _flatten_scope(decl: ast.Scope, parent: EffectiveScope | None) -> EffectiveScope:
    inherited = lambda attr: getattr(parent, attr) if parent else ()  # noqa: E731
    parent_scope = decl.parent.text if decl.parent is not None else parent.parent if parent else None
    return EffectiveScope(
        decl.name.text,
        decl,
        parent_scope,
        _nearest(decl, parent, "approval"),
        decl.only + inherited("only"),
        decl.hide + inherited("hide"),
        inherited("own") + decl.own,
        _nearest(decl, parent, "present"),
    )


def _flatten_policies(table: dict, classes) -> dict:
    """`_flatten_all` for policies, whose `include`s are flattened before them as their parent is."""
    done: dict = {}
    for name in table:
        stack = [name]
        while stack:
            item = stack[-1]
            decl = table[item]
            waiting = [
                n
                for n in ([decl.extends.text] if decl.extends else []) + [n.text for n in decl.includes]
                if n not in done
            ]  # unknown names and cycles were errors before this runs
            if waiting:
                stack += waiting
                continue
            stack.pop()
            if item not in done:
                done[item] = _flatten_policy(
                    decl,
                    done.get(decl.extends.text) if decl.extends else None,
                    [done[n.text] for n in decl.includes if n.text in done],
                    classes,
                )
    return {name: done[name] for name in table}


def _flatten_policy(decl: ast.Policy, parent: EffectivePolicy | None, included=(), classes=()) -> EffectivePolicy:
    rules, guards = (
        _once((parent.rules if parent else ()), *(p.rules for p in included), decl.rules),
        _once((parent.guards if parent else ()), *(p.guards for p in included), decl.guards),
    )
    allowed = tuple(host for line in decl.network_hosts if line.effect.text == "allow" for host in line.hosts)
    network = decl.network if decl.network is not None or not allowed else ast.Name("allow", allowed[0].span)
    return EffectivePolicy(
        decl.name.text,
        decl,
        _nearest(decl, parent, "sandbox"),
        _nearest(decl, parent, "approval"),
        _nearest(decl, parent, "default"),
        rules,
        guards,
        network if network is not None or parent is None else parent.network,
        (parent.writable if parent else ()) + decl.writable,
        _nearest(decl, parent, "fallback"),
        classes=classes,
        network_allow=(parent.network_allow if parent else ()) + ((allowed,) if allowed else ()),
        network_deny=(parent.network_deny if parent else ())
        + tuple(host for line in decl.network_hosts if line.effect.text == "deny" for host in line.hosts),
    )


def _once(*groups) -> tuple:
    """The items of every group in order, each object once: two included policies may share an ancestor."""
    seen: set[int] = set()
    out = []
    for group in groups:
        for item in group:
            if id(item) not in seen:
                seen.add(id(item))
                out.append(item)
    return tuple(out)


def tool_name(tool: ToolDef, mount: ast.Mount | None) -> str:
    """The name a mounted tool registers: its `name_from` knob's value, else the row's alias, else its own."""
    if mount is None or not tool.name_from:
        return tool.name
    configured = mount.config_value(tool.name_from)
    if isinstance(configured, str):
        return configured
    return mount.alias.text if mount.alias is not None else tool.name


def own_tool_name(text: str) -> str:
    """The name an `own` entry registers: `PACKAGE/NAME` and `NAME` both register NAME."""
    return text.rsplit("/", 1)[-1]


def own_candidates(catalog: Catalog, text: str) -> tuple:
    """The definitions an `own` entry may mean: by name or alias, within PACKAGE when qualified."""
    package, _, name = text.rpartition("/")
    found = [t for t in catalog.by_name_or_alias.get(name, ()) if not package or t.package == package]
    return tuple(sorted(found, key=lambda t: t.definition))


def _is_glob(text: str) -> bool:
    return "*" in text or "?" in text


FNMATCH_SPECIAL = frozenset("*?[")  # what makes fnmatch treat a target as a pattern rather than a name


def target_matches_tool(target: ast.Target, name: str, tool, alias_names=()) -> bool:
    """Does a policy target cover this tool? `name` is the name the call uses."""
    text = target.name.text
    if target.kind == "package":
        return tool is not None and tool.package == text
    if target.kind == "risk":
        return tool is not None and text in tool.risk
    if FNMATCH_SPECIAL.isdisjoint(text):  # a plain name: what fnmatch would decide, without compiling a pattern
        return name == text or text in alias_names
    return any(fnmatchcase(c, text) for c in (name, *alias_names))


def _config_type_problem(knob, value) -> str | None:
    kind = knob.type
    if kind == "boolean" and not isinstance(value, bool):
        return f"must be `true` or `false`, not `{_show(value)}`"
    if kind == "string" and not isinstance(value, str):
        return f"must be a string, not `{_show(value)}`"
    if kind == "integer" and (isinstance(value, bool) or not isinstance(value, int)):
        return f"must be an integer, not `{_show(value)}`"
    if kind == "number" and (isinstance(value, bool) or not isinstance(value, (int, float))):
        return f"must be a number, not `{_show(value)}`"
    if kind == "enum" and value not in (knob.values or ()):
        return f"must be one of {', '.join(_show(v) for v in knob.values or ())}, not `{_show(value)}`"
    if kind == "string-list" and not (isinstance(value, tuple) and all(isinstance(v, str) for v in value)):
        return f"must be a list of strings, not `{_show(value)}`"
    if kind == "string-list" and knob.values and any(v not in knob.values for v in value):
        return f"may only hold {', '.join(_show(v) for v in knob.values)}, not `{_show(value)}`"
    return None


def _show(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, tuple):
        return "[" + ", ".join(_show(v) for v in value) + "]"
    return str(value)


def _env_problems(expr, args_fields) -> list[Diagnostic]:
    """`args.command.env_read` / `.env_set`: the variables a shell line reads or sets, a set of names."""
    from .conditions import SHELL_FIELDS

    fact = expr.fact
    if fact.path[1] not in SHELL_FIELDS or fact.path[1] not in args_fields:
        return [
            Diagnostic(
                "DSH208",
                f"`{fact.dotted}`: only a shell command's variables are known",
                fact.span,
                f"write `args.command.{fact.path[2]}` on a shell tool's rule",
            )
        ]
    if isinstance(expr, (ast.Matches, ast.Truthy)) or (
        isinstance(expr, ast.Member) and all(type(value) is str for value in expr.values)
    ):
        return []
    return [
        Diagnostic(
            "DSH305",
            f"`{fact.dotted}` is a set of variable names: test it with `matches` or `in` (of "
            "strings), or alone (not empty)",
            expr.span,
        )
    ]


def _tests_shapes(expr) -> bool:
    """Whether a condition has a test whose operand must be of one JSON type (an array's, a number's)."""
    return any(
        isinstance(atom, (ast.ListTest, ast.Length)) or (isinstance(atom, ast.Compare) and atom.op not in ("==", "!="))
        for atom in ast.atoms(expr)
    )


# which declared JSON types each test can hold on: anything else never satisfies an allow (`conditions`)
_TAKES = {"array": {"array", "any"}, "length": {"array", "string", "any"}, "order": {"number", "integer", "any"}}


def _shape_problems(expr, declared: frozenset[str] | None) -> list[Diagnostic]:
    """A test the argument's declared type can never pass (`all in` on a string, `<` on text), and a `length`
    bound that is not a count."""
    found = []
    if isinstance(expr, ast.Length) and (
        isinstance(expr.value, bool) or not isinstance(expr.value, int) or expr.value < 0
    ):
        found.append(Diagnostic("DSH305", f"a length is a count; `{_show(expr.value)}` is not", expr.span))
    if (
        isinstance(expr, ast.Compare)
        and expr.op not in ("==", "!=")
        and not (isinstance(expr.value, (int, float)) and not isinstance(expr.value, bool))
    ):
        found.append(Diagnostic("DSH305", f"`{expr.op}` compares numbers; `{_show(expr.value)}` is not", expr.span))
    if isinstance(expr, ast.ListTest):
        kind, words = (
            "array",
            f"`{expr.quantifier}{'' if expr.quantifier == 'contains' else ' in'}` tests an array's items",
        )
    elif isinstance(expr, ast.Length):
        kind, words = "length", "`length(…)` counts an array's items or a string's characters"
    elif isinstance(expr, ast.Compare) and expr.op not in ("==", "!="):
        kind, words = "order", f"`{expr.op}` compares numbers"
    else:
        return found
    if declared and not declared & _TAKES[kind]:
        shown = " or ".join(sorted(declared))
        found.append(
            Diagnostic("DSH305", f"{words}; the rule's tools declare `{expr.fact.dotted}` of type {shown}", expr.span)
        )
    return found


def _session_problems(expr, composing: bool) -> list[Diagnostic]:
    """`session.FACT`: a known fact, tested as its type takes (`session.SESSION_FACTS`); policies only."""
    from .session import SESSION_FACTS, problems

    fact = expr.fact
    if composing:
        return [
            Diagnostic(
                "DSH208",
                f"`{fact.dotted}` is not known here: mount conditions see only host facts",
                fact.span,
                "use `platform`, `host`, `has SERVICE` or `flag NAME`",
            )
        ]
    if fact.dotted not in SESSION_FACTS:
        return [
            Diagnostic(
                "DSH208",
                f"unknown fact `{fact.dotted}`",
                fact.span,
                did_you_mean(fact.dotted, SESSION_FACTS)
                or "session facts: " + ", ".join(f"`{f}`" for f in SESSION_FACTS),
            )
        ]
    return [Diagnostic("DSH305", problem, expr.span) for problem in problems(expr)]
