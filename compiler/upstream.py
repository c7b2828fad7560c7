"""`upstream` declarations and the tool lists their MCP servers answered → catalog packages `mcp:NAME`.

In: the parsed documents, and per upstream the `tools/list` entries as plain JSON (or None when
the server could not be reached). Out: frozen catalog Packages plus diagnostics. No I/O here:
connecting to the servers is the CLI's job.
"""

from __future__ import annotations

from _collections_abc import (
    Mapping,
)  # collections.abc's own source, loaded at start-up (collections.abc loads collections)

from . import ast
from .catalog import Catalog, ConfigKnob, Package, ToolDef, _metaschema
from .diagnostics import Diagnostic
from ._base.frozen import field, record
from .patterns import Pattern

TYPE_CHECKING = False  # no `import typing` (~4 ms of a hook): its names are for annotations only
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

PREFIX = "mcp:"
SEPARATOR = "__"  # `NAME__tool`, the way MCP clients name a server's tools
NO_AXIS = "none"
# MCP annotation defaults (spec): not read-only, destructive, open world; an absent hint is the unsafe one
# the risk axes of the spec (section 7); an override may name any of them
KNOWN_AXES = ("any-process", "cross-agent", "durable-state", "external-data", "file-mutation", "runtime-code")
_NAME_CHARS = Pattern(r"[^A-Za-z0-9_\-]")


@record(slots=False)
class Endpoint:
    """How to reach one upstream: a stdio command (with args and extra env) or a streamable-HTTP URL."""

    name: str
    command: str | None
    args: tuple[str, ...]
    env: tuple[tuple[str, str], ...]
    url: str | None
    overrides: tuple[ast.RiskOverride, ...]
    span: Any = field(default=None, compare=False)

    @property
    def package(self) -> str:
        return PREFIX + self.name

    @property
    def service(self) -> str:
        """The provider service of every tool of this upstream: present while the server answers."""
        return self.package


def package_id(upstream: str) -> str:
    return PREFIX + upstream


def wire_name(upstream: str, tool: str) -> str:
    """`NAME__tool`, with characters a DSL name cannot hold replaced by `_`."""
    return f"{upstream}{SEPARATOR}{_NAME_CHARS.sub('_', tool)}"


def endpoints(documents: Iterable[ast.Document]) -> tuple[tuple[Endpoint, ...], list[Diagnostic]]:
    """Every well-formed upstream declaration, and what is wrong with the others."""
    found: dict[str, Endpoint] = {}
    diags: list[Diagnostic] = []
    for document in documents:
        for decl in document.decls:
            if not isinstance(decl, ast.Upstream):
                continue
            problems = list(_problems(decl))
            if decl.name.text in found:
                problems.append(
                    Diagnostic(
                        "DSH210",
                        f"upstream `{decl.name.text}` is declared twice",
                        decl.name.span,
                        f"first declared at {found[decl.name.text].span}",
                    )
                )
            diags += problems
            if problems:
                continue
            found[decl.name.text] = Endpoint(
                decl.name.text,
                decl.command.text if decl.command else None,
                tuple(decl.args),
                tuple((e.key.text, e.value) for e in decl.env),  # type: ignore[misc]  # strings: `_problems` refuses others
                decl.url.text if decl.url else None,
                decl.risk,
                decl.name.span,
            )
    return tuple(found[name] for name in sorted(found)), diags


def _problems(decl: ast.Upstream):
    for name in decl.repeated:
        yield Diagnostic(
            "DSH306",
            f"upstream `{decl.name.text}` sets `{name.text}` more than once",
            name.span,
            "keep one; nothing in a file is silently ignored",
        )
    if SEPARATOR in decl.name.text:
        yield Diagnostic(
            "DSH520",
            f"upstream name `{decl.name.text}` contains `{SEPARATOR}`",
            decl.name.span,
            f"tool names are `NAME{SEPARATOR}tool`; a name holding the separator would be ambiguous",
        )
    if (decl.command is None) == (decl.url is None):
        yield Diagnostic(
            "DSH520",
            f"upstream `{decl.name.text}` needs exactly one of `command` or `url`",
            decl.name.span,
            'stdio: `command "PROGRAM" args [...]`; HTTP: `url "http://HOST:PORT/mcp"`',
        )
    if decl.url is not None and (decl.args or decl.env):
        yield Diagnostic(
            "DSH520",
            f"upstream `{decl.name.text}` has a `url`, so `args` and `env` mean nothing",
            decl.url.span,
            "remove them, or use `command` to start the server yourself",
        )
    if decl.url is not None and not decl.url.text.startswith(("http://", "https://")):
        yield Diagnostic("DSH520", f"upstream url `{decl.url.text}` is not http(s)", decl.url.span)
    if not all(isinstance(a, str) for a in decl.args):
        yield Diagnostic("DSH520", f"`args` of upstream `{decl.name.text}` must all be strings", decl.args_span)
    for entry in decl.env:
        if not isinstance(entry.value, str):
            yield Diagnostic(
                "DSH520",
                f"env `{entry.key.text}` of upstream `{decl.name.text}` must be a string",
                entry.span,
                f'write `{entry.key.text} = "…"`',
            )
    for override in decl.risk:
        axes = [a.text for a in override.axes]
        if NO_AXIS in axes and len(axes) > 1:
            yield Diagnostic("DSH520", "`none` cannot be combined with risk axes", override.span)
        for axis in override.axes:
            if axis.text != NO_AXIS and axis.text not in KNOWN_AXES:
                yield Diagnostic(
                    "DSH217",
                    f"unknown risk axis `{axis.text}`",
                    axis.span,
                    "one of: " + ", ".join(KNOWN_AXES + (NO_AXIS,)),
                )


def risk_from_annotations(annotations: Mapping[str, Any] | None) -> tuple[str, ...]:
    """MCP hints → dshc risk axes; a missing hint takes the MCP default, which is the unsafe reading."""
    hints = annotations or {}
    axes = []
    if hints.get("readOnlyHint") is not True:
        axes.append("file-mutation" if hints.get("destructiveHint") is not False else "durable-state")
    if hints.get("openWorldHint") is not False:
        axes.append("external-data")
    return tuple(axes)


def package(endpoint: Endpoint, tools: list[Mapping[str, Any]] | None) -> tuple[Package, list[Diagnostic]]:
    """The catalog package of one upstream from its `tools/list` answer (None: not reachable)."""
    diags: list[Diagnostic] = []
    if tools is None:
        diags.append(
            Diagnostic(
                "DSH522",
                f"upstream `{endpoint.name}` did not answer `tools/list`",
                endpoint.span,
                "its tools appear once the server answers; `dshc serve` keeps trying",
            )
        )
        tools = []
    defs: dict[str, ToolDef] = {}
    overrides = {o.tool.text: tuple(a.text for a in o.axes if a.text != NO_AXIS) for o in endpoint.overrides}
    for raw in tools:
        name = raw.get("name") if isinstance(raw, Mapping) else None
        if not isinstance(name, str) or not name:
            diags.append(
                Diagnostic("DSH521", f"upstream `{endpoint.name}` listed a tool without a name", endpoint.span)
            )
            continue
        wire = wire_name(endpoint.name, name)
        problem = _schema_problem(raw.get("inputSchema"))
        if problem is None and wire in defs:
            problem = f"its name becomes `{wire}`, which another of its tools already has"
        if problem is not None:
            diags.append(
                Diagnostic("DSH521", f"upstream tool `{endpoint.name}/{name}` is left out: {problem}", endpoint.span)
            )
            continue
        description = raw.get("description") if isinstance(raw.get("description"), str) else ""
        annotations = raw.get("annotations") if isinstance(raw.get("annotations"), Mapping) else None
        risk = overrides.get(name, overrides.get(wire, risk_from_annotations(annotations)))
        defs[wire] = ToolDef(
            name=wire,
            definition=f"{endpoint.package}/{name}",
            description=description or f"`{name}` of {endpoint.name}",
            parameters=dict(raw["inputSchema"]),
            parallel_safe=False,  # MCP has no concurrency hint: exclusive
            risk=risk,
            presentation="generic",
            requires=(),
            provider=endpoint.service,
            enabled_by=None,
            name_from=None,
            param_knobs={},
            escalation=False,
            aliases=(),
        )
    listed = {t.definition.split("/", 1)[1] for t in defs.values()} | set(defs)
    for override in endpoint.overrides:
        if tools and override.tool.text not in listed:
            diags.append(
                Diagnostic(
                    "DSH523",
                    f"upstream `{endpoint.name}` has no tool `{override.tool.text}`",
                    override.tool.span,
                    "names: " + ", ".join(sorted(listed)) if listed else None,
                )
            )
    summary = f"tools of the MCP server `{endpoint.name}`"
    # a preset overrides a tool's risk with `mount mcp:NAME { TOOL = ["AXIS", …] }` (compose reads the effect)
    config = {
        t.name[len(endpoint.name) + len(SEPARATOR) :]: ConfigKnob(
            type="string-list",
            values=KNOWN_AXES,
            effect=f"risk:{t.definition}",
            summary=f"risk axes of `{t.name}` instead of {list(t.risk)}",
        )
        for t in defs.values()
    }
    return Package(
        id=endpoint.package,
        summary=summary,
        requires=(),
        config=config,
        tools=tuple(defs[name] for name in sorted(defs)),
    ), diags


def _schema_problem(schema) -> str | None:
    if not isinstance(schema, Mapping):
        return "its inputSchema is not a JSON object"
    if schema.get("type") != "object":
        return "its inputSchema is not of type `object`"
    error = next(_metaschema().iter_errors(dict(schema)), None)
    return f"its inputSchema is not a valid JSON Schema: {error.message}" if error is not None else None


def with_packages(catalog: Catalog, packages: Iterable[Package]) -> Catalog:
    """The catalog plus the upstream packages (replacing earlier ones of the same id)."""
    extra = {p.id: p for p in packages}
    kept = tuple(p for p in catalog.packages if p.id not in extra)
    return Catalog(name=catalog.name, summary=catalog.summary, packages=kept + tuple(extra[k] for k in sorted(extra)))
