"""The reference evaluator: every relevant rule tried as written (gate 4's static verdict,
`verify`, and the yardstick the index is tested against).

Strictest wins (deny > ask > allow) whatever the order; no rule matched → the policy's
default, and no default → deny. Guards can only deny. Under `approval never` an ask is a deny.
"""

from __future__ import annotations


from ..catalog import ToolDef
from ..conditions import Env
from .._base.frozen import replace
from ..resolve import EffectivePolicy
from .core import Buckets, PolicyCore, Tally, holds, is_shell, run_guards, tool_env
from .decision import NO_POLICY, Decision, Verdict
from .deferral import deferral, without
from .protected import enforced_rules
from .split import canonical, decide_parts, decide_reads, search_parts, shell_parts, with_paths


def decide(
    policy: EffectivePolicy | None,
    approval: str,
    approval_source,
    name: str,
    tool: ToolDef | None,
    env: Env,
    include_guards: bool = True,
    tool_for=None,
    core: PolicyCore | None = None,
) -> Verdict:
    """Decide for a call (env.args set) or statically (env.args None → may be `conditional`).

    A shell call is decided part by part (`split`); `tool_for` finds the tools its files are
    decided as. `core` is the policy's shared PolicyCore when the caller keeps one (its target index
    is then built once, not per call).
    """
    if policy is None:
        return NO_POLICY
    args = canonical(tool, env.args, env.workspace)
    return with_paths(
        _decide(
            policy,
            approval,
            approval_source,
            name,
            tool,
            replace(env, args=args),
            include_guards,
            tool_for,
            core or PolicyCore(policy),
        ),
        env.args,
        args,
    )


def _decide(policy, approval, approval_source, name, tool, env, include_guards, tool_for, core) -> Verdict:
    args = env.args
    parts = shell_parts(
        is_shell(tool),
        args,
        env.workspace,
        tool_for,
        names=lambda part, part_tool: any(core.relevant(part, part_tool)),
        optioned=core.option_programs(),
        deferred=lambda kind, pattern, workspace: deferral(
            policy, enforced_rules(policy, kind), kind, pattern, workspace
        ),
    )
    if parts is not None:
        return decide_parts(
            name,
            tool,
            parts,
            lambda part, part_tool, part_args, left: _part(
                policy,
                approval,
                approval_source,
                part,
                part_tool,
                replace(env, args=part_args),
                include_guards,
                tool_for,
                core,
                left,
            ),
        )
    reads = search_parts(
        tool, args, env.workspace, tool_for, names=lambda part, part_tool: any(core.relevant(part, part_tool))
    )
    if reads:
        own = _own(policy, approval, approval_source, name, tool, env, include_guards, core)
        return decide_reads(
            name,
            own,
            reads,
            lambda part, part_tool, part_args: decide(
                policy,
                approval,
                approval_source,
                part,
                part_tool,
                replace(env, args=part_args),
                include_guards,
                tool_for,
                core,
            ),
        )
    return _own(policy, approval, approval_source, name, tool, env, include_guards, core)


def _part(policy, approval, approval_source, name, tool, env, include_guards, tool_for, core, left) -> Verdict:
    """A shell line's part, without the rules the sandbox enforces for it (`deferral`) when it has some."""
    if left is not None:
        policy = without(policy, left.rules)
        core = PolicyCore(policy)
    return decide(policy, approval, approval_source, name, tool, env, include_guards, tool_for, core)


def _own(policy, approval, approval_source, name, tool, env, include_guards, core) -> Decision:
    """The call decided by its own rules and guards (a shell line's or a search's parts aside)."""
    args = env.args
    rules, guards = core.relevant(name, tool)
    scoped = tool_env(env, name, is_shell(tool), args, env.workspace, policy.classes, _risk(tool))
    unsure = False
    if include_guards:
        fired, unsure = run_guards(guards, scoped)
        if fired is not None:
            return core.guard_decision(fired)
    buckets = Buckets()
    for rule in rules:
        buckets.add(rule, holds(rule, scoped))
    tally = Tally()
    tally.add_matched(buckets.matched)
    return core.conclude(approval, approval_source, tally, buckets.maybe, unsure, static=args is None)


def per_call(
    policy: EffectivePolicy,
    approval: str,
    approval_source,
    name: str,
    tool: ToolDef | None,
    env: Env,
    core: PolicyCore | None = None,
) -> tuple[tuple, tuple, Decision]:
    """What a `conditional` tool's calls turn on: (the rules whose condition reads the call, the guards that
    may fire, each in source order; the decision of a call that none of them matches)."""
    core = core or PolicyCore(policy)
    rules, guards = core.relevant(name, tool)
    scoped = tool_env(env, name, is_shell(tool), None, env.workspace, policy.classes, _risk(tool))
    buckets = Buckets()
    for rule in rules:
        buckets.add(rule, holds(rule, scoped))
    tally = Tally()
    tally.add_matched(buckets.matched)
    unsure = tuple(guard for guard in guards if holds(guard, scoped) is None)
    return tuple(buckets.maybe), unsure, core.conclude(approval, approval_source, tally)


def _risk(tool: ToolDef | None):
    return tool.risk if tool is not None else None
