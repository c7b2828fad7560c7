"""The public API: load sources into a Program, then ask it for views, explanations, decisions.

    program = Program.load()                       # shipped presets, hosts, scopes, policies
    view = program.view(Request(preset="standard", host="web"))
    view.names, view.fingerprint, view.canonical_json()

Sources are parsed and resolved once; a request seen before is answered from a cache.
"""

from __future__ import annotations

import os
from _collections_abc import Mapping  # collections.abc's own source, loaded at start-up

from . import ast, disk_cache
from .catalog import Catalog, load_catalog
from .compose import Composition, SharedCompositions, pending_diagnostics
from .diagnostics import Diagnostic, DshError, cannot_read, unknown
from ._base.frozen import record, replace
from .gates import GateContext, GateResult, allowed, projected, registered, run_gates, visible
from .gates import ready as readiness
from .lru import LRU, MISSING
from ._base.memo import wraps
from .package_data import package_path
from .policy import CompiledPolicy, Decision, RequestDecider, Verdict, decide, shape_problem
from .request import Request
from .resolve import RESERVED_TOOL, Resolved, collector_paused, resolve
from .view import ToolView, make_entry

TYPE_CHECKING = False  # no `import typing` (~4 ms of a hook): its names are for annotations only
if TYPE_CHECKING:
    from collections.abc import Iterable
    from pathlib import Path

SHIPPED_PACKAGES = ("dshc.presets", "dshc.policies")


@record(slots=False)
class SourceFile:
    """A source as read: the path to show and its bytes."""

    path: str  # shown in diagnostics
    data: bytes


def shipped_sources() -> list[SourceFile]:
    files = []
    for package in SHIPPED_PACKAGES:
        folder = package.split(".")[-1]
        root = package_path(package)
        for name in sorted(os.listdir(root)):
            if name.endswith(".dsh"):
                with open(os.path.join(root, name), "rb") as handle:
                    files.append(SourceFile(f"{folder}/{name}", handle.read()))
    return files


def read_paths(paths: Iterable[str | Path]) -> list[SourceFile]:
    files: list[SourceFile] = []
    problems: list[Diagnostic] = []
    for raw in paths:
        path = os.fspath(raw)
        targets = [path]
        if os.path.isdir(path):
            from pathlib import Path  # only for a folder: the files a hook loads are named one by one

            targets = [str(found) for found in sorted(Path(path).rglob("*.dsh"))]
        for target in targets:
            try:
                with open(target, "rb") as handle:
                    files.append(SourceFile(target, handle.read()))
            except OSError as exc:
                problems.append(cannot_read(target, exc))
    if problems:
        raise DshError(problems)
    return files


def parse_files(files: Iterable[SourceFile]) -> tuple[list[ast.Document], list[Diagnostic], dict[str, str]]:
    """(documents, diagnostics, path -> decoded text of every file that could be decoded)."""
    from .parse import decode, parse_source  # lark loads only when there is text to parse
    from .to_ast import to_document

    documents, diags, texts = [], [], {}
    with collector_paused():  # an AST per file: many objects, no cycles to collect
        for file in files:
            source, found = decode(file.path, file.data)
            diags += found
            if source is None:
                continue
            texts[file.path] = source.text
            decls, found, comments = parse_source(source)
            diags += found
            if decls is not None:
                documents.append(to_document(file.path, decls, comments))
    return documents, diags, texts


def _owns_sources(method):
    """A DshError leaving a Program method carries the Program's source texts, for excerpts."""

    @wraps(method)
    def wrapper(self, *args, **kwargs):
        try:
            return method(self, *args, **kwargs)
        except DshError as exc:
            raise exc.with_sources(self.sources)

    return wrapper


class Program:
    """Loaded sources answering views, explanations and decisions per Request.

    Threads may share one Program (`dshc serve` decides on worker threads): it never changes once
    loaded, and every cache it and its decisions fill is safe to share — an LRU (lock-free hits, a
    lock around stores and evictions), a per-request memo whose racing writers store equal values,
    or a value built whole and then published with one store. Two threads asking the same thing
    get equal answers, the same as one thread would. Reloading makes a new Program; a caller that
    takes the Program once per decision gets its whole answer from one of them.
    """

    def __init__(self, resolved: Resolved, sources: Mapping[str, str] | None = None, cache_size: int | None = None):
        """`cache_size`: request contexts remembered per cache (LRU; default DSHC_CACHE_SIZE, else 1024)."""
        self.resolved = resolved
        self.sources: Mapping[str, str] = dict(sources or {})  # path -> text, for diagnostics' excerpts
        self._compositions: LRU[Composition] = LRU(cache_size)
        self._shared = SharedCompositions(resolved, cache_size)  # what contexts differing in unread flags share
        self._views: LRU[ToolView] = LRU(cache_size)
        self._deciders: LRU[tuple] = LRU(cache_size)
        self._compiled: LRU[CompiledPolicy] = LRU(cache_size)  # by policy name

    # --- loading ---
    @classmethod
    def load(
        cls,
        paths: Iterable[str | Path] = (),
        texts: Mapping[str, str] | None = None,
        *,
        shipped: bool = True,
        catalog: Catalog | None = None,
    ) -> "Program":
        files = shipped_sources() if shipped else []
        files += read_paths(paths)
        files += [SourceFile(name, text.encode("utf-8")) for name, text in (texts or {}).items()]
        return cls.from_files_cached(files, catalog)

    @classmethod
    def from_files_cached(cls, files: list[SourceFile], catalog: Catalog | None = None) -> "Program":
        """from_files, through the per-user program cache when the process asked for it and the
        catalog is the shipped one (a warm hit parses and resolves nothing)."""
        cached = disk_cache.loader()
        if cached is not None and catalog is None:
            return cached(files)
        return cls.from_files(files, catalog)

    @classmethod
    def from_files(cls, files: Iterable[SourceFile], catalog: Catalog | None = None) -> "Program":
        catalog = catalog or load_catalog()
        documents, diags, texts = parse_files(files)
        if any(d.severity == "error" for d in diags):
            raise DshError(diags, texts)
        try:
            return cls(resolve(tuple(documents), catalog), texts)
        except DshError as exc:
            raise exc.with_sources(texts)

    @property
    def catalog(self) -> Catalog:
        return self.resolved.catalog

    @property
    def warnings(self) -> tuple[Diagnostic, ...]:
        return self.resolved.warnings

    # --- requests ---
    @_owns_sources
    def composition(self, request: Request) -> Composition:
        key = request.composition_key()
        return self._compositions.get(key, lambda: self._shared.compose(key))

    @_owns_sources
    def gate_context(self, request: Request) -> GateContext:
        return self._context(request)

    def _context(self, request: Request) -> GateContext:
        composition = self.composition(request)
        if request.plan or request.session is not None:
            composition = _with_plan(composition, request)
        return GateContext(self.resolved, composition, self._policy_core)

    def _compiled_policy(self, policy) -> CompiledPolicy:
        return self._compiled.get(policy.name, lambda: CompiledPolicy(policy))

    def _policy_core(self, policy):
        compiled = self._compiled_policy(policy)
        return compiled.core if compiled.policy is policy else None  # another object by that name: its own core

    @_owns_sources
    def view(self, request: Request) -> ToolView:
        if request.session is not None:  # a view never reads the session (no call: its tests are not known)
            request = request.model_copy(update={"session": None})
        return self._views.get(request, lambda: self._build_view(request))

    @_owns_sources
    def listed_definition(self, request: Request, name: str) -> str | None:
        """The catalog definition of the view's entry `name`, None if the view lists no such tool:
        what `view(request).entry(name)` answers (errors included), without the other entries'
        gates and canonical schemas — a `dshc decide` process needs this one fact of the view."""
        built = self._views.find(request)
        if built is not MISSING:
            entry = built.entry(name)
            return entry.definition if entry else None
        ctx = self._context(request)
        _raise_view_problems(ctx.composition)
        native = ctx.composition.mode == "native"
        listed = name in ctx.visible and (not native or projected.check(ctx, name).status == "pass")
        if not listed and not (name == RESERVED_TOOL and not native):
            return None
        return _tool_of(ctx, name)[1].definition

    @_owns_sources
    def parameters(self, request: Request, name: str) -> dict | None:
        """The parameter schema a call of `name` is checked against (the view entry's, as the runtime's body
        checks it; the catalog's for a tool the request does not list), or None for a name no catalog
        defines. Not to be changed: it is the composition's own."""
        built = self._views.find(request)
        entry = built.entry(name) if built is not MISSING else None
        if entry is not None:
            return entry.parameters
        registration, tool = _tool_of(self._context(request), name)
        if tool is None:
            return None
        return registration.parameters if registration is not None else tool.parameters

    def _build_view(self, request: Request) -> ToolView:
        ctx = self._context(request)
        comp = ctx.composition
        _raise_view_problems(comp)
        entries, sdk = [], []
        for name in sorted(ctx.visible):  # gates 1 and 2 passed for every visible name
            entry = self._entry(ctx, name)
            if projected.check(ctx, name).status == "pass":
                entries.append(entry)
            if comp.mode != "native":
                sdk.append(entry)
        if comp.mode != "native":
            entries.append(self._entry(ctx, RESERVED_TOOL))
        entries.sort(key=lambda e: e.name)
        return ToolView(
            comp.preset.name if comp.preset else None,
            comp.host.name.text,
            request.platform,
            request.scope,
            comp.mode,
            comp.policy.name if comp.policy else None,
            tuple(entries),
            tuple(sdk) if comp.mode != "native" else None,
        )

    def _entry(self, ctx: GateContext, name: str):
        registration, tool = _tool_of(ctx, name)
        # a view entry reports gates 4 and 5 on their own, even where an earlier one would stop a call
        policy = allowed.check(ctx, name).value or "deny"
        ready = readiness.check(ctx, name).value or "unknown"
        return make_entry(name, registration, tool, policy, ready)

    @_owns_sources
    def explain(self, request: Request, name: str) -> tuple[GateResult, ...]:
        self.require_tool(request, name)
        return run_gates(self._context(request), name)

    @_owns_sources
    def require_tool(self, request: Request, name: str) -> None:
        """Raise DSH406 (with a did-you-mean) for a name neither the catalog nor this request defines."""
        if name != RESERVED_TOOL and name not in self.catalog.shipped_names:
            ctx = self._context(request)
            if name not in ctx.registrations and not registered.named_by_a_row(ctx, name):
                raise DshError([unknown("DSH406", "tool", name, self.catalog.shipped_names | {RESERVED_TOOL}, None)])

    @_owns_sources
    def explain_all(self, request: Request) -> dict[str, tuple[GateResult, ...]]:
        ctx = self._context(request)
        names = sorted(self.catalog.shipped_names | set(ctx.registrations) | {RESERVED_TOOL})
        return {name: run_gates(ctx, name) for name in names}

    def decide(
        self,
        request: Request,
        name: str,
        args: Mapping,
        workspace: str | None = None,
        include_guards: bool = True,
        *,
        gates: bool = True,
    ) -> Verdict:
        """One tool call's decision through the five gates, cheap enough for every call.

        A tool this request does not register, show, put within reach or have a provider for
        is denied naming that gate (remembered per request and tool); so are arguments beyond
        the nesting limits. Otherwise the policy decides from its index (per-request memo).
        `gates=False` asks for the policy's word alone: for calls of an agent whose tools dshc
        does not compose (the hook), where only the rules apply.
        """
        decider, tool, stop = self._decider_for(request, name)
        if stop is not None and gates:
            return stop
        problem = shape_problem(args)
        if problem is not None:
            return Decision("deny", f"{problem}, so the call is refused before any rule reads them", ())
        if type(args) is not dict:
            if not isinstance(args, Mapping):  # fail closed: no rule on an argument could be read
                return Decision(
                    "deny", "the arguments are not an object, so the call is refused before any rule reads them", ()
                )
            args = dict(args)  # the index reads a dict's fields: in another mapping no argument rule would match
        return decider.decide(name, tool, args, workspace, include_guards)

    def reads_session(self, request: Request) -> bool:
        """Whether the request's policy tests the session (`session.*`): only then is a session worth reading."""
        policy = self.composition(request).policy
        if policy is None:
            return False
        compiled = self._compiled_policy(policy)
        return compiled.reads_session() if compiled.policy is policy else CompiledPolicy(policy).reads_session()

    def gate_stop(self, request: Request, name: str) -> Decision | None:
        """The deny of the first gate besides the policy that a call of `name` fails, or None."""
        return self._decider_for(request, name)[2]

    def guard(self, request: Request, name: str, args: Mapping, workspace: str | None = None) -> Decision | None:
        """The policy's guards alone for one call (the runtime's guard stage): a deny, or None."""
        decider, tool, _ = self._decider_for(request, name)
        return decider.guard(name, tool, args, workspace)

    def names(self, request: Request, name: str) -> bool:
        """Whether some rule or guard of the request's policy names the tool: where none does, its every
        call gets the policy's one unmatched answer."""
        decider, tool, _ = self._decider_for(request, name)
        return decider.compiled is not None and decider.names(name, tool)

    def _decider_for(self, request: Request, name: str):
        """(the request's decider, the tool definition, a gate's denial or None) — per request and tool."""
        # the only step of a call that can raise: composing the request
        decider, tools, ctx = self._deciders.get(request, lambda: self._new_decider(request))
        return (decider, *tools.get(name, lambda: (ctx.tool_for(name), _gate_denial(ctx, name))))

    @_owns_sources
    def _new_decider(self, request: Request):
        return self._decider(request)

    def _decider(self, request: Request):
        ctx = self._context(request)  # one context per request: tool lookups share its registrations
        comp = ctx.composition
        compiled = None
        if comp.policy is not None:
            compiled = self._compiled_policy(comp.policy)
        return (
            RequestDecider(compiled, comp.approval, comp.approval_source, comp.env(), ctx.tool_for),
            LRU(self._deciders.size),
            ctx,
        )  # per tool name: any name may be asked

    def decide_unindexed(self, request: Request, name: str, args: Mapping, workspace: str | None = None) -> Verdict:
        """The same decision by trying every rule as written: the reference the index is tested against."""
        ctx = self._context(request)
        stop = _gate_denial(ctx, name)
        if stop is not None:
            return stop
        comp = ctx.composition
        return decide(
            comp.policy,
            comp.approval,
            comp.approval_source,
            name,
            ctx.tool_for(name),
            comp.env(args=args, workspace=workspace),
            tool_for=ctx.tool_for,
        )


# the gates a call passes besides the policy (gate 4, decided per call from the arguments)
CALL_GATES = (
    ("registered", registered.check),
    ("visible", visible.check),
    ("projected", projected.check),
    ("ready", readiness.check),
)


def _raise_view_problems(comp: Composition) -> None:
    """What keeps a request from having a view: the composition's pending diagnostics, a mode
    that needs the code runtime without it."""
    problems = pending_diagnostics(comp)
    if comp.mode != "native" and "code-runtime" not in comp.services:
        problems.append(
            Diagnostic(
                "DSH402",
                f"`{comp.mode}` mode needs service `code-runtime`, which this request does not provide",
                comp.mode_source,
                "--with code-runtime, or --mode native",
            )
        )
    if problems:
        raise DshError(problems)


def _tool_of(ctx: GateContext, name: str):
    """(the request's registration of `name` or None, the catalog tool it stands for)."""
    registration = ctx.registration(name)
    return registration, registration.tool if registration else ctx.tool_for(name)


def _gate_denial(ctx: GateContext, name: str) -> Decision | None:
    """The deny of the first gate a call of `name` fails, or None.

    Within reach means on the wire, or, in code and both modes, in the SDK behind `run_code`
    (the runtime dispatches those nested calls); a tool whose provider is absent cannot run.
    """
    for gate, check in CALL_GATES:
        if gate == "projected" and ctx.composition.mode != "native" and ctx.registration(name) is not None:
            continue  # reachable through run_code
        result = check(ctx, name)
        if result.status == "fail":
            return Decision(
                "deny", f"gate `{gate}` fails: {result.reason}", ((f"gate:{gate}", result.source),), gate=gate
            )
    return None


def _with_plan(composition: Composition, request: Request) -> Composition:
    """Plan mode and the session never change what is composed: reuse the composition, carry the request's
    flag and session."""
    return replace(composition, request=request)
