"""Resolved program + Request → Composition: the layers, services, mode and rows of one request.

Layers, farthest first: the host's own rows, the preset, then each scope on the chain from
the root to the requested scope (their own registrations). Row outcomes are kept for every
row, registered or not, so `explain` can say why a tool is missing.

Threads: the module's caches (`_SHAPES`, `_LAYERS`, `_FLAGS_NAMED`, `_ROWS`) are process-wide, shared by
every Program and thread, and keyed by `id(...)` of the preset, row, package, tool and catalog they were made
from. Each entry holds those very objects, so an id in a live key names one object (it cannot be reused
while the entry lives), and a hit is taken only when the held object `is` the caller's. The values are pure
functions of the key's objects: threads making one key at once make equal values, and `LRU.put` keeps the
first stored. An LRU hit takes no lock; stores and evictions take its lock (tests/test_threads.py races
them with one-entry caches).
"""

from __future__ import annotations

from . import ast
from .catalog import ESCALATION_PARAMETERS, ToolDef
from .conditions import Env, evaluate
from .diagnostics import Diagnostic, DshError, unknown
from .facts import CODE_RUNTIME, CODE_WORKER
from ._base.frozen import field, record, replace
from .lru import LRU, MISSING
from ._base.memo import cached_property
from .request import Request
from .resolve import (
    RESERVED_TOOL,
    EffectivePolicy,
    EffectivePreset,
    EffectiveScope,
    Resolved,
    known_services,
    own_candidates,
    own_tool_name,
    tool_name,
)

TYPE_CHECKING = False  # no `import typing` (~4 ms of a hook): its names are for annotations only
if TYPE_CHECKING:
    from typing import Any


@record(slots=False)
class Registration:
    """A tool registered under a name in one layer (host, preset or scope), and the row that did it."""

    name: str
    tool: ToolDef
    layer: str  # "host" | "preset" | "scope:NAME"
    source: Any  # the Span of the mount row or `own` entry
    parameters: dict
    description: str
    row: str  # mount row name or `own`
    origin: str  # the declaration holding the row: "preset `standard`"


@record(slots=False)
class RowOutcome:
    """What became of one mount row in a composition (registered, disabled, …) and why."""

    layer: str
    origin: str  # declaration that holds the row: `preset standard`, `scope child`
    mount: ast.Mount | None
    package: str
    status: str  # registered | disabled | condition-false | pending
    missing: tuple[str, ...] = ()
    registered: tuple[Registration, ...] = ()
    # tools the row's package defines but this row does not register, with why
    dropped: tuple[tuple[ToolDef, str, str, Any], ...] = ()  # (tool, name, reason, span)


@record(slots=False)
class Composition:
    """What a request composes: its host, services, preset, scope chain, mode, policy and approval."""

    request: Request
    host: ast.Host
    services: frozenset[str]
    preset: EffectivePreset | None
    host_rows: EffectivePreset | None
    chain: tuple[EffectiveScope, ...]
    mode: str
    mode_source: Any
    policy: EffectivePolicy | None
    approval: str
    approval_source: Any
    rows: tuple[RowOutcome, ...]
    layers: tuple[tuple[str, tuple[Registration, ...]], ...]
    own_elsewhere: dict = field(default_factory=dict)  # name -> (scope, span) for own registrations off the chain

    @property
    def pending(self) -> tuple[RowOutcome, ...]:
        return tuple(r for r in self.rows if r.status == "pending")

    def env(self, args=None, workspace=None, shell_tool=False) -> Env:
        if args is None and workspace is None and not shell_tool:
            return self._request_env  # the request's facts alone: asked per tool by views, verify and deciders
        return self._make_env(args, workspace, shell_tool)

    @cached_property
    def _request_env(self) -> Env:
        return self._make_env(None, None, False)  # an Env and its facts are never mutated, so one is shared

    def _make_env(self, args, workspace, shell_tool) -> Env:
        facts = {
            "platform": self.request.platform,
            "host": self.host.name.text,
            "preset": self.preset.name if self.preset else None,
            "scope": self.request.scope,
            "mode": self.mode,
            "plan_mode": self.request.plan,
            "sandbox": self.policy.sandbox.text if self.policy and self.policy.sandbox else None,
        }
        return Env(
            facts,
            self.services,
            self.request.flags | frozenset(n.text for n in self.host.flags),
            args,
            workspace,
            shell_tool,
            session=self.request.session,
        )


def compose(resolved: Resolved, request: Request) -> Composition:
    """What `request` composes to, from scratch."""
    return Composition(request, *_composed(resolved, request))


class SharedCompositions:
    """Compositions of one Resolved's request contexts. Contexts that differ only in flags no preset row
    reads (a flag a policy condition tests, a caller's own marker) compose alike: such a context gets a
    Composition of its own request over the fields already derived. A Program holds one, so what it
    keeps lives exactly as long as the Resolved."""

    def __init__(self, resolved: Resolved, size: int | None = None):
        self.resolved = resolved
        self._fields: LRU[tuple] = LRU(size)  # the request less unread flags -> the composition's other fields
        self._flags_read: frozenset[str] | None = None

    def compose(self, request: Request) -> Composition:
        if self._flags_read is None:  # every flag a condition of any preset's rows names
            self._flags_read = frozenset().union(*(_flags_named(p) for p in self.resolved.presets.values()))
        # plan mode is not read either (Request.composition_key drops it before a Program composes)
        key = (
            request.host,
            request.preset,
            request.platform,
            request.with_services,
            request.without_services,
            request.scope,
            request.mode,
            request.policy,
            request.flags & self._flags_read,
        )
        return Composition(request, *self._fields.get(key, lambda: _composed(self.resolved, request)))


def _composed(resolved: Resolved, request: Request) -> tuple:
    """Every field of the request's Composition but the request (raises DshError for a bad request)."""
    host = resolved.hosts.get(request.host)
    if host is None:
        raise DshError([unknown("DSH205", "host", request.host, resolved.hosts, None)])
    problems = []
    if host.platforms and request.platform not in {p.text for p in host.platforms}:
        problems.append(
            Diagnostic("DSH405", f"host `{host.name.text}` does not run on `{request.platform}`", host.name.span)
        )
    services_known = known_services(resolved.catalog)
    for name in sorted(request.with_services | request.without_services):
        if name not in services_known:
            problems.append(unknown("DSH203", "service", name, services_known, None))
    for name in sorted(request.with_services & request.without_services):
        problems.append(Diagnostic("DSH405", f"service `{name}` is both added and removed"))
    preset = _pick_preset(resolved, host, request, problems)
    if request.scope not in resolved.scopes:
        problems.append(unknown("DSH206", "scope", request.scope, resolved.scopes, None))
    if request.policy is not None and request.policy not in resolved.policies:
        problems.append(unknown("DSH207", "policy", request.policy, resolved.policies, None))
    if problems:
        raise DshError(problems)

    host_rows = resolved.presets[host.rows.text] if host.rows else None
    services = frozenset(n.text for n in host.provides)
    for source in (host_rows, preset):
        if source is not None:
            services |= frozenset(n.text for n in source.provides)
    services = (services | request.with_services) - request.without_services
    if CODE_RUNTIME in services and CODE_WORKER not in request.without_services:
        services |= {CODE_WORKER}  # a code runtime comes with its worker unless the request says this one has none
    chain = _scope_chain(resolved, request.scope)
    mode, mode_source = _mode(request, host, preset, chain)
    policy_name = request.policy or (host.policy.text if host.policy else None)
    policy = resolved.policies.get(policy_name) if policy_name else None
    approval, approval_source = _approval(chain, policy)

    env = Env(
        {"platform": request.platform, "host": host.name.text},
        services,
        request.flags | frozenset(n.text for n in host.flags),
    )
    rows: list[RowOutcome] = []
    layers: list[tuple[str, tuple[Registration, ...]]] = []
    for layer, origin, source in (
        ("host", f"host `{host.name.text}`: preset", host_rows),
        ("preset", "preset", preset),
    ):
        if source is None:
            continue
        outcomes = _layer_rows(resolved, layer, f"{origin} `{source.name}`", source, env, services)
        rows.extend(outcomes)
        layers.append((layer, tuple(r for outcome in outcomes for r in outcome.registered)))
    on_chain = {s.name for s in chain}
    own_elsewhere: dict[str, tuple[str, Any]] = {}
    for scope in chain:
        registered: list = []
        for own in scope.own:
            outcome = _own_outcome(resolved, scope, own, services)
            rows.append(outcome)
            registered.extend(outcome.registered)
        layers.append((f"scope:{scope.name}", tuple(registered)))
    for scope in sorted(resolved.scopes.values(), key=lambda s: s.name):
        if scope.name not in on_chain:
            for own in scope.own:
                own_elsewhere.setdefault(own_tool_name(own.text), (scope.name, own.span))
    return (
        host,
        services,
        preset,
        host_rows,
        chain,
        mode,
        mode_source,
        policy,
        approval,
        approval_source,
        tuple(rows),
        tuple(layers),
        own_elsewhere,
    )


def _pick_preset(resolved: Resolved, host: ast.Host, request: Request, problems) -> EffectivePreset | None:
    if request.preset is not None:
        if request.preset not in resolved.presets:
            problems.append(unknown("DSH204", "preset", request.preset, resolved.presets, None))
            return None
        if not host.roster:
            problems.append(
                Diagnostic(
                    "DSH403",
                    f"host `{host.name.text}` has no preset roster, so preset `{request.preset}` cannot be joined",
                    host.name.span,
                    "drop the preset to use the host's own rows, or pick a host with `roster`",
                )
            )
            return None
        return resolved.presets[request.preset]
    if host.roster and host.roster_default is not None:
        return resolved.presets[host.roster_default.text]
    if host.rows is None:
        problems.append(
            Diagnostic(
                "DSH404",
                f"host `{host.name.text}` has no default preset and no rows of its own",
                host.name.span,
                "name a preset",
            )
        )
    return None


def _scope_chain(resolved: Resolved, name: str) -> tuple[EffectiveScope, ...]:
    chain = [resolved.scopes[name]]
    while chain[-1].parent is not None:
        chain.append(resolved.scopes[chain[-1].parent])
    return tuple(reversed(chain))


def _mode(request, host, preset, chain) -> tuple[str, Any]:
    if request.mode is not None:
        return request.mode, None
    for scope in reversed(chain):
        if scope.present is not None:
            return scope.present.text, scope.present.span
    if preset is not None and preset.present is not None:
        return preset.present.text, preset.present.span
    if host.present is not None:
        return host.present.text, host.present.span
    return "native", None


def _approval(chain, policy) -> tuple[str, Any]:
    for scope in reversed(chain):
        if scope.approval is not None:
            return scope.approval.text, scope.approval.span
    if policy is not None and policy.approval is not None:
        return policy.approval.text, policy.approval.span
    return "ask", None


_SHAPES: LRU[tuple] = LRU(4096)  # (tool, knob settings) -> shaped parameters: a new request context re-uses them


def _shape(tool: ToolDef, mount: ast.Mount | None, services: frozenset[str], package_config) -> tuple[dict, str]:
    """The tool's parameters and description as this mount shapes them. The result is shared between
    compositions (never mutated: views copy it into canonical JSON), so a new request context does not
    deep-copy every schema again."""
    knobs = tuple(mount is not None and mount.config_value(knob) is False for knob in tool.param_knobs.values())
    described = mount.config_value("description") if mount is not None else None
    # repr: a knob's value may be a list; the text it selects depends on nothing else
    worded = tuple(repr(mount.config_value(k)) if mount is not None else None for k in tool.description_knobs)
    key = (
        id(tool),
        knobs,
        bool(tool.escalation and "sandbox" in services),
        described if isinstance(described, str) else None,
        worded,
    )
    found = _SHAPES.find(key)
    if found is not MISSING and found[0] is tool:  # the id is of this very tool, not of one since collected
        return found[1]
    return _SHAPES.put(key, (tool, _make_shape(tool, mount, services, package_config)))[1]


def _make_shape(tool: ToolDef, mount: ast.Mount | None, services: frozenset[str], package_config) -> tuple[dict, str]:
    # the levels changed below are copied; the schemas inside them are shared, never changed
    parameters = dict(tool.parameters)
    if isinstance(parameters.get("properties"), dict):
        parameters["properties"] = dict(parameters["properties"])
    for param, knob in tool.param_knobs.items():
        if mount is not None and mount.config_value(knob) is False:
            parameters.get("properties", {}).pop(param, None)
            required = [r for r in parameters.pop("required", []) if r != param]
            if required:  # the root stays open: no empty `required` either
                parameters["required"] = required
    if tool.escalation and "sandbox" in services:
        parameters.setdefault("properties", {}).update(ESCALATION_PARAMETERS)
    if mount is not None and isinstance(mount.config_value("description"), str):
        return parameters, mount.config_value("description")  # an override replaces the text whole
    return parameters, configured_description(tool, mount, package_config)


def configured_description(tool: ToolDef, mount: ast.Mount | None, package_config) -> str:
    """The base text plus the sentence each description knob's value selects (unset: the default)."""
    sentences = [tool.description]
    for knob, by_value in tool.description_knobs.items():
        value = mount.config_value(knob) if mount is not None else None
        if value is None:
            value = package_config[knob].default
        key = ("true" if value else "false") if isinstance(value, bool) else value
        sentence = by_value.get(key) if isinstance(key, str) else None
        if sentence is None and value is not None:
            sentence = by_value.get("*")
        if sentence is not None:
            sentences.append(sentence.replace("{value}", str(key)))
    return " ".join(sentences)


def _layer_rows(resolved, layer, origin, source, env: Env, services) -> tuple[RowOutcome, ...]:
    """The outcomes of one preset's mount rows. They read the env's facts (platform, host), the
    services and the flags the rows' conditions name, never the scope, policy, mode or plan: request
    contexts that differ only there share them, so a new context does not decide every row again."""
    key = (
        id(source),
        id(resolved.catalog),
        layer,
        origin,
        tuple(env.facts.items()),
        services,
        env.flags & _flags_named(source),
    )
    found = _LAYERS.find(key)
    if found is not MISSING and found[0] is source and found[1] is resolved.catalog:  # ids of these very objects
        return found[2]
    outcomes = tuple(_mount_outcome(resolved, layer, origin, mount, env, services) for mount in source.mounts)
    return _LAYERS.put(key, (source, resolved.catalog, outcomes))[2]


def _flags_named(source) -> frozenset[str]:
    found = _FLAGS_NAMED.find(id(source))
    if found is not MISSING and found[0] is source:
        return found[1]
    names = frozenset(
        atom.name.text for mount in source.mounts for atom in ast.atoms(mount.condition) if isinstance(atom, ast.Flag)
    )
    return _FLAGS_NAMED.put(id(source), (source, names))[1]


_LAYERS: LRU[tuple] = LRU(
    1024
)  # (preset, catalog, layer, origin, facts, services, flags read) -> (preset, catalog, rows)
_FLAGS_NAMED: LRU[tuple] = LRU(256)  # id(preset) -> (preset, the flags its rows' conditions name)


def _mount_outcome(resolved, layer, origin, mount: ast.Mount, env: Env, services) -> RowOutcome:
    package = resolved.catalog.package_by_id[mount.package.text]
    if mount.disabled:
        return RowOutcome(layer, origin, mount, package.id, "disabled")
    if mount.condition is not None and evaluate(mount.condition, env, lenient=False) is not True:
        return RowOutcome(layer, origin, mount, package.id, "condition-false")
    missing = tuple(sorted(set(package.requires) - services))
    if missing:
        return RowOutcome(layer, origin, mount, package.id, "pending", missing)
    # past its condition, a row's outcome depends only on the row and the services: every request
    # context with the same services shares it (the first call in a new context composes in µs)
    key = (id(mount), id(package), layer, origin, services)
    found = _ROWS.find(key)
    if found is not MISSING and found[0] is mount and found[1] is package:  # the ids are of these very objects
        return found[2]
    return _ROWS.put(key, (mount, package, _registered_outcome(layer, origin, mount, package, services)))[2]


# (row, package, layer, origin, services) -> (row, package, outcome); holding both keeps the ids unique
_ROWS: LRU[tuple] = LRU(4096)


def _registered_outcome(layer, origin, mount: ast.Mount, package, services) -> RowOutcome:
    registered, dropped = [], []
    configured = row_services(package, mount)
    for tool in package.tools:
        name = tool_name(tool, mount)
        if tool.name == RESERVED_TOOL:
            continue  # the registry adds run_code itself, by mode
        if tool.enabled_by and mount.config_value(tool.enabled_by) is False:
            entry = mount.config_entry(tool.enabled_by)
            dropped.append((tool, name, f"`{tool.enabled_by} = false`", entry.span if entry else mount.span))
            continue
        lacking = sorted((set(tool.requires) | configured.keys()) - services)
        if lacking:
            span = next((configured[s] for s in lacking if s in configured), mount.span)
            dropped.append((tool, name, "missing:" + ",".join(lacking), span))
            continue
        if mount.config:
            tool = _configured_risk(tool, package, mount)
        parameters, description = _shape(tool, mount, services, package.config)
        registered.append(Registration(name, tool, layer, mount.span, parameters, description, mount.row_name, origin))
    return RowOutcome(layer, origin, mount, package.id, "registered", (), tuple(registered), tuple(dropped))


def row_services(package, mount: ast.Mount) -> dict:
    """Services a row's configuration names (a subagent row's provider) → the config entry's span."""
    found = {}
    for key, knob in package.config.items():
        entry = mount.config_entry(key)
        service = knob.service_for(entry.value if entry is not None else knob.default)
        if service is not None:
            found[service] = entry.span if entry is not None else mount.span
    return found


def _configured_risk(tool: ToolDef, package, mount: ast.Mount) -> ToolDef:
    """A mount may set a tool's risk axes through a knob whose effect is `risk:DEFINITION` (upstream MCP
    tools: a preset overriding what their annotations say)."""
    for key, knob in package.config.items():
        value = mount.config_value(key)
        if knob.effect == f"risk:{tool.definition}" and isinstance(value, tuple):
            return tool.model_copy(update={"risk": tuple(value)})
    return tool


def _own_outcome(resolved, scope: EffectiveScope, name: ast.Name, services) -> RowOutcome:
    tool = _own_tool(resolved, name.text)
    missing = tuple(sorted(set(resolved.catalog.package_by_id[tool.package].requires) - services))
    layer = f"scope:{scope.name}"
    if missing:
        return RowOutcome(layer, f"scope `{scope.name}`", None, tool.package, "pending", missing)
    parameters, description = _shape(tool, None, services, resolved.catalog.package_by_id[tool.package].config)
    reg = Registration(
        own_tool_name(name.text), tool, layer, name.span, parameters, description, "own", f"scope `{scope.name}`"
    )
    return RowOutcome(layer, f"scope `{scope.name}`", None, tool.package, "registered", (), (reg,))


def _own_tool(resolved, name: str) -> ToolDef:
    # resolve() refused an ambiguous or unknown entry, so exactly one package's definition is left
    return own_candidates(resolved.catalog, name)[0]


def pending_diagnostics(composition: Composition) -> list[Diagnostic]:
    found, seen = [], set()
    for row in composition.pending:
        if row.mount is None and (row.origin, row.package) in seen:
            continue  # several `own` entries of one package wait for the same services: say it once
        seen.add((row.origin, row.package))
        span = row.mount.span if row.mount else None
        services = ", ".join(f"`{s}`" for s in row.missing)
        found.append(
            Diagnostic(
                "DSH401",
                f"{row.origin}: row `{row.mount.row_name if row.mount else row.package}` waits for {services}, "
                f"which host `{composition.host.name.text}` does not provide",
                span,
                "provide it: " + " ".join(f"--with {s}" for s in row.missing),
            )
        )
    return found


def under_policy(composition: Composition, policy: EffectivePolicy) -> Composition:
    """The same composition decided under another policy (only the policy and approval change)."""
    approval, approval_source = _approval(composition.chain, policy)
    request = composition.request.model_copy(update={"policy": policy.name})
    return replace(composition, request=request, policy=policy, approval=approval, approval_source=approval_source)
