"""`dshc suggest`: recorded calls → the narrowest scope and policy that allow what ran, proved no wider than CURRENT.

Evidence is any record of calls (`evidence`): event logs, calls files, Claude Code transcripts. Paths generalise
to the narrowest directory glob inside the workspace, shell commands to exact simple commands, every other
argument to the values seen but free text (`narrow`); a call no rule can express exactly stays denied, and the
report says so. Each rule cites the calls it came from.
"""

from __future__ import annotations

import json
import os
import posixpath
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING


from ..compiler.diagnostics import Diagnostic, DshError, invalid_request
from ..compiler.paths import CanonicalPath, canonical_path
from ..compiler.policy.core import is_shell
from ..compiler.program import SourceFile, parse_files, read_paths, shipped_sources
from ..compiler.request import InvalidRequest, Request
from .narrow import narrow
from .output_file import replace_file

if TYPE_CHECKING:
    from .evidence import ObservedCall

POLICY = "suggested"
_GLOB = set("*?")


@dataclass
class Rule:
    tool: str
    condition: str | None
    covers: int
    calls: tuple[str, ...] = ()  # `file:line` of each call it came from
    notes: tuple[str, ...] = ()


@dataclass
class Suggestion:
    rules: list[Rule] = field(default_factory=list)
    scopes: dict[str, list[str]] = field(default_factory=dict)  # logged scope -> tools used there
    uncovered: list[tuple[ObservedCall, str]] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)  # rules removed because verify found them wider


def _q(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def _path_condition(param: str, paths: list[str]) -> str:
    """The narrowest directory glob covering `paths` (canonical, inside the workspace); exact
    paths where that directory would be the whole workspace or the text holds glob characters."""
    distinct = sorted(set(paths))
    inside = f"args.{param} inside workspace"
    parents = [posixpath.dirname(p) for p in distinct]
    common = posixpath.commonpath(parents) if all(parents) else ""
    if not common or any(_GLOB & set(p) for p in distinct):
        listed = ", ".join(_q(p) for p in distinct)
        return f"args.{param} in [{listed}] and {inside}"
    covered = f"args.{param} matches {_q(common + '/*')}"
    if common in distinct:
        covered = f"(args.{param} == {_q(common)} or {covered})"
    return f"{covered} and {inside}"


def _shell_segments(command) -> tuple[list[str] | None, str]:
    if not isinstance(command, str):
        return None, "the command is not a string"
    from ..compiler.shell import analyse  # the analyser, verifier and log readers load for `dshc suggest` alone

    found = analyse(command)
    if found is None:
        return None, "the command cannot be parsed"
    if found.files:
        return None, "the command redirects to files (no exact rule covers a redirection)"
    for segment in found.segments:
        if not segment.allowable or segment.literal_words < len(segment.argv):
            return None, f"`{segment.text}` is not known from its text, so no allow can cover it"
    return [segment.text for segment in found.segments], ""


def generalise(program, calls: list[ObservedCall], how: str = "exact") -> Suggestion:
    suggestion = Suggestion()
    by_tool: dict[str, list[ObservedCall]] = defaultdict(list)
    for call in calls:
        if call.ran and call.name not in program.catalog.by_name:
            suggestion.uncovered.append((call, "no tool of this name in the catalog (add the overlay that defines it)"))
        elif call.ran:
            by_tool[call.name].append(call)
            scope = call.context.get("scope")
            if not isinstance(scope, str):
                scope = "root"
            used = suggestion.scopes.setdefault(scope, [])
            if call.name not in used:
                used.append(call.name)
    for name in sorted(by_tool):
        definitions = program.catalog.by_name.get(name) or []
        shell = any(is_shell(d) for d in definitions)
        path_params = sorted({p for d in definitions for p in d.path_parameters})
        if shell:
            segments: dict[str, list[str]] = defaultdict(list)
            for call in by_tool[name]:
                texts, why = _shell_segments(
                    call.arguments.get("command") if isinstance(call.arguments, dict) else None
                )
                if texts is None:
                    suggestion.uncovered.append((call, why))
                    continue
                for text in sorted(set(texts)):
                    segments[text].append(call.cited)
            suggestion.rules += [
                Rule(name, f"args.command == {_q(text)}", len(cited), tuple(cited))
                for text, cited in sorted(segments.items())
            ]
        elif path_params:
            groups: dict[tuple, list[tuple[dict, str]]] = defaultdict(list)
            for call in by_tool[name]:
                args = call.arguments if isinstance(call.arguments, dict) else {}
                present = tuple(p for p in path_params if p in args)
                canon: dict[str, str] = {}
                for param in present:
                    value = args[param]
                    path = canonical_path(value, call.workspace) if isinstance(value, str) and call.workspace else None
                    if not isinstance(path, CanonicalPath) or posixpath.isabs(path) or path.startswith(".."):
                        suggestion.uncovered.append((call, "a path is outside the workspace (or the session had none)"))
                        break
                    canon[param] = str(path)
                else:  # every path is inside the workspace
                    groups[present].append((canon, call.cited))
            for present, seen in sorted(groups.items()):
                parts = [_path_condition(p, [s[p] for s, _ in seen]) for p in present]
                parts += [f"not has args.{p}" for p in path_params if p not in present]
                suggestion.rules.append(Rule(name, " and ".join(parts), len(seen), tuple(c for _, c in seen)))
        else:
            suggestion.rules += _narrowed(name, definitions, by_tool[name], suggestion, how)
    return suggestion


def _narrowed(name: str, definitions, calls: list[ObservedCall], suggestion: Suggestion, how: str) -> list[Rule]:
    """Every argument but free text pinned to the values seen or the class they share (`narrow`), or the bare tool
    (`--generalize tool`)."""
    if how == "tool":
        return [Rule(name, None, len(calls), tuple(c.cited for c in calls))]
    objects = [c for c in calls if isinstance(c.arguments, dict)]
    suggestion.uncovered += [(c, "the arguments are not an object") for c in calls if not isinstance(c.arguments, dict)]
    schemas = {json.dumps(d.parameters, sort_keys=True): d.parameters for d in definitions}
    # one schema to read hints from; tools of one name with different schemas get no hints (values decide)
    schema = next(iter(schemas.values())) if len(schemas) == 1 else {}
    return [
        Rule(name, found.condition, len(found.calls), tuple(objects[i].cited for i in found.calls), found.notes)
        for found in narrow([c.arguments for c in objects], schema, how)
    ]


def render(suggestion: Suggestion, current: str, source: str) -> str:
    lines = [f"# Suggested by `dshc suggest` from {source}: only what the recorded sessions ran.", ""]
    for scope, tools in sorted(suggestion.scopes.items()):
        lines += [
            f"scope {POLICY}-{scope} {_q('Only the tools the sessions used')} {{",
            f"  parent {scope}",
            f"  only {', '.join(sorted(tools))}",
            "}",
            "",
        ]
    lines.append(f"policy {POLICY} {_q('What the sessions did, nothing wider than ' + current)} extends {current} {{")
    lines.append("  default deny")
    for rule in suggestion.rules:
        lines.append(f"  # covers {rule.covers} call{'s' if rule.covers != 1 else ''}: {_cited(rule.calls)}")
        lines += [f"  # {note}" for note in rule.notes]
        lines.append(f"  allow {rule.tool}" + (f" when {rule.condition}" if rule.condition else ""))
    for note in suggestion.dropped:
        lines.append(f"  # dropped: {note}")
    lines.append("}")
    return "\n".join(lines) + "\n"


def _cited(calls: tuple[str, ...], shown: int = 6) -> str:
    more = f", and {len(calls) - shown} more" if len(calls) > shown else ""
    return ", ".join(calls[:shown]) + more


def _baseline(suggestion: Suggestion, current: str) -> str:
    """CURRENT under the suggestion's names: what verify compares the suggestion against."""
    scopes = "".join(f"scope {POLICY}-{s} {{ parent {s} }}\n" for s in sorted(suggestion.scopes))
    return scopes + f"policy {POLICY} extends {current} {{}}\n"


def _formatted(text: str, path: str) -> str:
    documents, diags, texts = parse_files([SourceFile(path, text.encode("utf-8"))])
    if diags:
        raise DshError(diags, texts)
    from ..compiler.fmt import format_document

    return format_document(documents[0])


def _current_policy(program, calls, given: str | None) -> str:
    if given is not None:
        if given not in program.resolved.policies:
            raise DshError([invalid_request(f"unknown policy `{given}`", "`dshc ls policy` lists them")])
        return given
    found = set()
    for call in calls:
        try:
            composition = program.composition(Request(**call.context))
        except (InvalidRequest, TypeError, DshError):
            continue
        if composition.policy is not None:
            found.add(composition.policy.name)
    if len(found) != 1:
        raise DshError(
            [
                invalid_request(
                    "the recorded sessions ran under "
                    + (f"several policies ({', '.join(sorted(found))})" if found else "no policy this program knows"),
                    "name the policy in force with --policy",
                )
            ]
        )
    return found.pop()


def redecide(program, calls: list[ObservedCall]) -> dict:
    from .evidence import host_implemented

    host_runs = host_implemented(program.catalog)
    counts: dict[str, Counter[str]] = {"ran": Counter(), "not_ran": Counter()}
    for call in calls:
        effect = decide_again(program, call, host_runs)
        counts["ran" if call.ran else "not_ran"][effect] += 1
    return {k: dict(v) for k, v in counts.items()}


def decide_again(program, call: ObservedCall, host_runs) -> str:
    """The suggestion's effect on `call`: a host-implemented tool is decided by the gates before gate 5 and
    the policy (gate 5 only says dshc has no body for it)."""
    context = dict(call.context)
    scope = context.get("scope") if isinstance(context.get("scope"), str) else "root"
    try:
        request = Request(**{**context, "policy": POLICY, "scope": f"{POLICY}-{scope}"})
        args = call.arguments if isinstance(call.arguments, dict) else None
        if args is None:
            return "deny"
        stop = program.gate_stop(request, call.name)
        if stop is not None and not (stop.gate == "ready" and host_runs(call.name)):
            return "deny"
        effect = program.decide(request, call.name, args, call.workspace, gates=stop is None).effect
    except (InvalidRequest, TypeError, DshError):
        return "deny"
    return "deny" if effect == "conditional" else effect


def verify(new, old, policies):
    """compiler.verify.verify, loaded when a suggestion is proved (not by every dshc command)."""
    from ..compiler.verify import verify as prove

    return prove(new, old, policies)


def cmd_suggest(args, out, err) -> int:
    from .command_context import catalog_of as _catalog, from_files as _from_files
    from .evidence import host_implemented, read_evidence

    base = (shipped_sources() if not args.no_shipped else []) + read_paths(list(args.load))
    catalog = _catalog(args)
    program = _from_files(base, catalog)
    context = {
        "host": args.host,
        "preset": args.preset,
        "platform": args.platform,
        "with_services": list(args.with_services),
        "without_services": list(args.without_services),
        "flags": list(args.flags),
        "scope": args.scope,
        "mode": args.mode,
        "plan": args.plan,
    }
    workspace = os.path.abspath(args.workspace) if args.workspace else None
    calls: list[ObservedCall] = []
    skipped: list[tuple[str, int, str]] = []
    torn = False
    sources = [(source, args.format) for source in args.sources] + [(log, "log") for log in args.logs]
    if not sources:
        raise DshError([invalid_request("no evidence to read", "name a record of calls with --from FILE")])
    for source, form in sources:
        evidence = read_evidence(source, form, context, workspace, host_implemented(program.catalog))
        calls += evidence.calls
        skipped += [(source, line, why) for line, why in evidence.skipped]
        torn |= evidence.torn_tail
    if not any(c.ran for c in calls):
        raise DshError(
            [
                Diagnostic(
                    "DSH405",
                    "the evidence holds no call that ran, so there is nothing to allow",
                    path=", ".join(source for source, _ in sources),
                )
            ]
        )
    current = _current_policy(program, calls, args.policy)
    if POLICY in program.resolved.policies:
        raise DshError([invalid_request(f"a policy named `{POLICY}` is already declared", "rename it first")])
    suggestion = generalise(program, calls, args.generalize)
    old = _from_files(base + [SourceFile("<current>", _baseline(suggestion, current).encode())], catalog)
    witnesses = []
    while True:  # fail closed: a rule verify finds wider than CURRENT is dropped, then proved again
        text = _formatted(
            render(suggestion, current, ", ".join(source for source, _ in sources)), args.output or "<suggestion>"
        )
        new = _from_files(base + [SourceFile(args.output or "<suggestion>", text.encode())], catalog)
        report = verify(new, old, [POLICY])
        if not report.violations:
            break
        violation = report.violations[0]
        witnesses.append({"message": violation.message, "witness": violation.witness})
        tool = violation.witness.get("tool")
        kept = [r for r in suggestion.rules if r.tool != tool]
        if tool is None or len(kept) == len(suggestion.rules):
            raise DshError(
                [
                    invalid_request(
                        f"the suggestion is wider than `{current}`: {violation.message}",
                        "no single rule could be dropped to narrow it",
                    )
                ]
            )
        suggestion.rules = kept
        suggestion.dropped.append(f"the rules for `{tool}` were wider than {current}: {violation.message}")
    decided = redecide(new, calls)
    if args.output:
        replace_file(args.output, text, "the suggestion")
    summary = {
        "policy": POLICY,
        "against": current,
        "proved": report.exact,
        "cells": report.cells,
        "rules": len(suggestion.rules),
        "calls": len(calls),
        "skipped_records": len(skipped),
        "skipped": [{"source": source, "line": line, "why": why} for source, line, why in skipped],
        "torn_tail": torn,
        "redecided": decided,
        "suggested": [
            {"tool": r.tool, "when": r.condition, "covers": r.covers, "calls": list(r.calls), "notes": list(r.notes)}
            for r in suggestion.rules
        ],
        "dropped": suggestion.dropped,
        "witnesses": witnesses,
        "uncovered": [
            {"source": c.source, "line": c.line, "callId": c.call_id, "name": c.name, "why": why}
            for c, why in suggestion.uncovered
        ],
    }
    if args.json:
        out.write(json.dumps({**summary, "text": text}, indent=2, ensure_ascii=False) + "\n")
    else:
        if not args.output:
            out.write(text)
        _summary(summary, err if not args.output else out)
    return 1 if witnesses else 0


def _summary(summary: dict, out) -> None:
    ran = summary["redecided"]["ran"]
    for witness in summary["witnesses"]:
        out.write(f"VIOLATION {witness['message']}\n  witness: {json.dumps(witness['witness'], sort_keys=True)}\n")
    for note in summary["dropped"]:
        out.write(f"dropped: {note}\n")
    for item in summary["uncovered"]:
        out.write(f"not covered: {item['source']}:{item['line']} `{item['name']}` ({item['callId']}): {item['why']}\n")
    for item in summary["skipped"]:
        out.write(f"skipped: {item['source']}:{item['line']}: {item['why']}\n")
    word = "proved" if summary["proved"] else "no widening found (not a proof: argument classes not exact)"
    out.write(f"{word}: `{summary['policy']}` is no wider than `{summary['against']}` over {summary['cells']} cells\n")
    out.write(
        f"{summary['calls']} recorded call(s), {summary['skipped_records']} record(s) skipped; calls that ran, "
        f"under the suggestion: {ran.get('allow', 0)} allow, {ran.get('ask', 0)} ask, {ran.get('deny', 0)} deny\n"
    )
