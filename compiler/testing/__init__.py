"""`dshc.testing`: property tests of your own policies. In: a policy (shipped or yours, by name);
out: hypothesis strategies for requests and for calls drawn from the argument classes the policy's
own patterns induce (the classes `dshc verify` decides), and assertions on decisions and widening.

Installed as `dshc.testing` (pyproject's package-dir), so its imports are absolute. hypothesis is
needed by the strategies only: `pip install 'dshc[testing]'`.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping

from dshc.compiler.diagnostics import DshError, invalid_request
from dshc.compiler.facts import MODES
from dshc.compiler.policy import EFFECTS, widens_fail_closed
from dshc.compiler.program import Program
from dshc.compiler.request import Request
from dshc.compiler.verify import ClassDecider

__all__ = [
    "Call",
    "PolicyUnderTest",
    "assert_decides",
    "assert_never_widens",
    "calls",
    "domain",
    "load_policy",
    "requests",
    "widens",
]

WORKSPACE = "/workspace"  # the workspace calls are decided in; argument class witnesses are relative to it
DECISIONS = tuple(e for e in EFFECTS if e != "conditional")  # what one concrete call can be decided


@dataclass(frozen=True)
class PolicyUnderTest:
    """A policy by name in a loaded program, and the context its calls are decided in by default."""

    program: Program
    name: str
    context: Request

    def decide(self, call: "Call | tuple[str, Mapping]"):
        call = as_call(call, self)
        return self.program.decide(call.request, call.tool, call.arguments, workspace=call.workspace)


@dataclass(frozen=True)
class Call:
    """One tool call in one request context."""

    request: Request
    tool: str
    arguments: Mapping[str, Any] = field(default_factory=dict)
    workspace: str = WORKSPACE

    def __str__(self) -> str:
        r = self.request
        return (
            f"{self.tool}({dict(self.arguments)!r}) · preset {r.preset or '-'} · host {r.host} · {r.platform} · "
            f"scope {r.scope} · mode {r.mode or '-'}" + (" · plan" if r.plan else "")
        )


def load_policy(
    name: str, *paths: str | Path, texts: Mapping[str, str] | None = None, shipped: bool = True, **context: Any
) -> PolicyUnderTest:
    """`name` from the shipped declarations plus `paths` / `texts` ({file name: .dsh text}); `context`
    is the Request its calls are decided in (default: preset standard, host web). Unusable input raises
    DshError with its diagnostics."""
    program = Program.load(paths, texts, shipped=shipped)
    if name not in program.resolved.policies:
        raise DshError(
            [
                invalid_request(
                    f"no policy `{name}` in the loaded declarations",
                    "known: " + ", ".join(sorted(program.resolved.policies)),
                )
            ]
        )
    request = Request(**{"preset": "standard", "host": "web", **context, "policy": name})
    program.view(request)  # a context that cannot compose is the caller's mistake: say so now
    return PolicyUnderTest(program, name, request)


def as_call(call: "Call | tuple[str, Mapping]", policy: PolicyUnderTest) -> Call:
    """A Call, or (tool, arguments) decided in the policy's context."""
    if isinstance(call, Call):
        return (
            call
            if call.request.policy == policy.name
            else Call(
                call.request.model_copy(update={"policy": policy.name}), call.tool, call.arguments, call.workspace
            )
        )
    tool, arguments = call
    return Call(policy.context, tool, dict(arguments))


def assert_decides(policy: PolicyUnderTest, call: "Call | tuple[str, Mapping]", effect: str) -> None:
    """The policy decides `call` as `effect` (allow, ask or deny); otherwise an AssertionError naming
    the decision, its reason and the rules that made it."""
    if effect not in DECISIONS:
        raise ValueError(f"effect must be one of {', '.join(DECISIONS)}, not {effect!r}")
    call = as_call(call, policy)
    decision = policy.decide(call)
    if decision.effect != effect:
        rules = ", ".join(rule for rule, _ in decision.deciding) or "no rule"
        raise AssertionError(
            f"policy `{policy.name}` decides {call} as `{decision.effect}`, not `{effect}`: "
            f"{decision.reason} (decided by {rules})"
        )


def reachable(program: Program, request: Request) -> tuple[str, ...] | None:
    """The tools a request can call (on the wire, or in code mode's SDK); None when it has no view."""
    try:
        view = program.view(request)
    except DshError:
        return None
    return tuple(sorted({e.name for e in view.tools} | {e.name for e in view.sdk or ()}))


def argument_classes(
    program: Program, request: Request, tool: str, *others: PolicyUnderTest, classes: ClassDecider | None = None
) -> tuple[dict, ...]:
    """One witness per class of `tool`'s arguments that the request's policy (and `others`' policies)
    can tell apart: what `dshc verify` decides. `classes` keeps them across calls (they cost automata)."""
    ctx = program.gate_context(request)
    policies = [ctx.composition.policy] if ctx.composition.policy else []
    policies += [p.program.resolved.policies[p.name] for p in others]
    return (classes or ClassDecider()).classes_for(tool, ctx.tool_for(tool), policies)


def domain(policy: PolicyUnderTest) -> list[Request]:
    """Every composable request under the policy: hosts × presets × platforms × scopes × modes × plan,
    with the hosts' own services (narrow it with `requests(..., **fixed)` or your own list)."""
    resolved = policy.program.resolved
    found = []
    for host_name in sorted(resolved.hosts):
        host = resolved.hosts[host_name]
        presets = sorted(resolved.presets) if host.roster else [None]
        platforms = sorted(p.text for p in host.platforms) or ["linux"]
        for preset, platform, scope, mode, plan in itertools.product(
            presets, platforms, sorted(resolved.scopes), MODES, (False, True)
        ):
            request = Request(
                host=host_name, preset=preset, platform=platform, scope=scope, mode=mode, policy=policy.name, plan=plan
            )
            if reachable(policy.program, request) is not None:
                found.append(request)
    return found


def widens(before: str, after: str) -> bool:
    """Does going from effect `before` to `after` let more through (deny < ask < allow)?"""
    return widens_fail_closed(before, after)


def _strategies():
    try:
        from hypothesis import strategies
    except ImportError:
        raise ImportError("dshc.testing's strategies need hypothesis: pip install 'dshc[testing]'") from None
    return strategies


def requests(policy: PolicyUnderTest, **fixed: Any):
    """A strategy of composable Requests under the policy, from `domain(policy)`; `fixed` pins fields
    (e.g. `host="web", mode="native"`)."""
    st = _strategies()
    found = [r for r in domain(policy) if all(getattr(r, k) == v for k, v in fixed.items())]
    if not found:
        raise ValueError(f"no composable request under policy `{policy.name}` has {fixed}")
    return st.sampled_from(found)


def calls(policy: PolicyUnderTest, tools: Iterable[str] | None = None, request_strategy=None):
    """A strategy of Calls: a request (default: the policy's own context), a tool it can reach (only
    `tools`, if given), and arguments drawn from that tool's argument classes under the policy."""
    st = _strategies()
    wanted = None if tools is None else frozenset(tools)
    classes = ClassDecider()
    request_strategy = request_strategy if request_strategy is not None else st.just(policy.context)

    @st.composite
    def draw_call(draw):
        request = draw(request_strategy)
        names = [n for n in reachable(policy.program, request) or () if wanted is None or n in wanted]
        if not names:
            draw(st.nothing())  # this request reaches none of the tools asked for: draw another
        tool = draw(st.sampled_from(names))
        arguments = draw(st.sampled_from(argument_classes(policy.program, request, tool, classes=classes)))
        return Call(request, tool, arguments)

    return draw_call()


def assert_never_widens(old: PolicyUnderTest, new: PolicyUnderTest, within: Iterable[Request] | None = None) -> None:
    """No call `new` allows was denied or asked by `old`, and no ask became an allow: every tool `new`
    reaches in each request of `within` (default: `new`'s context across modes and plan on/off), with
    every argument class either policy can tell apart. An AssertionError names the first widened call."""
    if within is None:
        within = [
            new.context.model_copy(update={"mode": mode, "plan": plan})
            for mode, plan in itertools.product(MODES, (False, True))
        ]
    classes = ClassDecider()
    for request in within:
        new_request = request.model_copy(update={"policy": new.name})
        old_request = request.model_copy(update={"policy": old.name})
        for tool in reachable(new.program, new_request) or ():
            for arguments in argument_classes(new.program, new_request, tool, old, classes=classes):
                after = new.decide(Call(new_request, tool, arguments))
                before = old.decide(Call(old_request, tool, arguments))
                if widens_fail_closed(before.effect, after.effect):
                    raise AssertionError(
                        f"policy `{new.name}` widens {Call(new_request, tool, arguments)}: "
                        f"`{before.effect}` under `{old.name}`, now `{after.effect}` ({after.reason})"
                    )
