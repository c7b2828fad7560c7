"""`dshc suggest`: logged calls → the narrowest scope and policy that allow what ran, proved no wider than CURRENT.

Paths generalise to the narrowest directory glob inside the workspace, shell commands to exact
simple commands; a call no rule can express exactly stays denied, and the report says so.
"""
from __future__ import annotations

import json
import posixpath
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING


from ..compiler.diagnostics import Diagnostic, DshError, invalid_request
from ..compiler.paths import CanonicalPath, canonical_path
from ..compiler.policy.core import is_shell
from ..compiler.program import SourceFile, parse_files, read_paths, shipped_sources
from ..compiler.request import InvalidRequest, Request
from .output_file import replace_file

if TYPE_CHECKING:
    from .evidence import ObservedCall

POLICY = "suggested"
_GLOB = set("*?")


def add_parser(sub, context_flags, load_flags) -> None:
    p = sub.add_parser("suggest", help="the narrowest scope and policy that allow what logged sessions did")
    p.add_argument("--from-log", dest="log", required=True, metavar="LOG|DSN",
                   help="a durable event log: a JSONL file or a postgresql:// DSN")
    p.add_argument("--policy", help="the policy in force (default: the one the logged sessions ran under)")
    p.add_argument("-o", dest="output", metavar="FILE", help="write the suggestion here (default: stdout)")
    load_flags(p)


@dataclass
class Rule:
    tool: str
    condition: str | None
    covers: int


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


def generalise(program, calls: list[ObservedCall]) -> Suggestion:
    suggestion = Suggestion()
    by_tool: dict[str, list[ObservedCall]] = defaultdict(list)
    for call in calls:
        if call.ran:
            by_tool[call.name].append(call)
            scope = call.context.get("scope") if isinstance(call.context.get("scope"), str) else "root"
            used = suggestion.scopes.setdefault(scope, [])
            if call.name not in used:
                used.append(call.name)
    for name in sorted(by_tool):
        definitions = program.catalog.by_name.get(name) or []
        shell = any(is_shell(d) for d in definitions)
        path_params = sorted({p for d in definitions for p in d.path_parameters})
        if shell:
            segments = Counter()
            for call in by_tool[name]:
                texts, why = _shell_segments(call.arguments.get("command") if isinstance(call.arguments, dict) else None)
                if texts is None:
                    suggestion.uncovered.append((call, why))
                    continue
                segments.update(set(texts))
            suggestion.rules += [Rule(name, f"args.command == {_q(text)}", n) for text, n in sorted(segments.items())]
        elif path_params:
            groups: dict[tuple, list[dict]] = defaultdict(list)
            for call in by_tool[name]:
                args = call.arguments if isinstance(call.arguments, dict) else {}
                present = tuple(p for p in path_params if p in args)
                canon = {}
                for param in present:
                    value = args[param]
                    path = canonical_path(value, call.workspace) if isinstance(value, str) and call.workspace else None
                    if not isinstance(path, CanonicalPath) or posixpath.isabs(path) or path.startswith(".."):
                        canon = None
                        break
                    canon[param] = str(path)
                if canon is None:
                    suggestion.uncovered.append((call, "a path is outside the workspace (or the session had none)"))
                    continue
                groups[present].append(canon)
            for present, seen in sorted(groups.items()):
                parts = [_path_condition(p, [s[p] for s in seen]) for p in present]
                parts += [f"not has args.{p}" for p in path_params if p not in present]
                suggestion.rules.append(Rule(name, " and ".join(parts), len(seen)))
        else:
            suggestion.rules.append(Rule(name, None, len(by_tool[name])))
    return suggestion


def render(suggestion: Suggestion, current: str, source: str) -> str:
    lines = [f"# Suggested by `dshc suggest` from {source}: only what the logged sessions ran.", ""]
    for scope, tools in sorted(suggestion.scopes.items()):
        lines += [f"scope {POLICY}-{scope} {_q('Only the tools the sessions used')} {{",
                  f"  parent {scope}", f"  only {', '.join(sorted(tools))}", "}", ""]
    lines.append(f"policy {POLICY} {_q('What the sessions did, nothing wider than ' + current)} extends {current} {{")
    lines.append("  default deny")
    for rule in suggestion.rules:
        lines.append(f"  # covers {rule.covers} logged call{'s' if rule.covers != 1 else ''}")
        lines.append(f"  allow {rule.tool}" + (f" when {rule.condition}" if rule.condition else ""))
    for note in suggestion.dropped:
        lines.append(f"  # dropped: {note}")
    lines.append("}")
    return "\n".join(lines) + "\n"


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
        raise DshError([invalid_request("the logged sessions ran under " + (
            f"several policies ({', '.join(sorted(found))})" if found else "no policy this program knows"),
            "name the policy in force with --policy")])
    return found.pop()


def redecide(program, calls: list[ObservedCall]) -> dict:
    counts = {"ran": Counter(), "not_ran": Counter()}
    for call in calls:
        context = dict(call.context)
        scope = context.get("scope") if isinstance(context.get("scope"), str) else "root"
        try:
            request = Request(**{**context, "policy": POLICY, "scope": f"{POLICY}-{scope}"})
            args = call.arguments if isinstance(call.arguments, dict) else None
            effect = program.decide(request, call.name, args, call.workspace).effect if args is not None else "deny"
        except (InvalidRequest, TypeError, DshError):
            effect = "deny"
        effect = "deny" if effect == "conditional" else effect
        counts["ran" if call.ran else "not_ran"][effect] += 1
    return {k: dict(v) for k, v in counts.items()}


def verify(new, old, policies):
    """compiler.verify.verify, loaded when a suggestion is proved (not by every dshc command)."""
    from ..compiler.verify import verify as prove
    return prove(new, old, policies)


def cmd_suggest(args, out, err) -> int:
    from .command_context import catalog_of as _catalog, from_files as _from_files
    from .evidence import read_sessions
    evidence = read_sessions(args.log)
    calls = list(evidence.calls)
    if not any(c.ran for c in calls):
        raise DshError([Diagnostic("DSH405", "the log holds no call that ran, so there is nothing to allow",
                                   path=args.log)])
    base = (shipped_sources() if not args.no_shipped else []) + read_paths(list(args.load))
    catalog = _catalog(args)
    program = _from_files(base, catalog)
    current = _current_policy(program, calls, args.policy)
    if POLICY in program.resolved.policies:
        raise DshError([invalid_request(f"a policy named `{POLICY}` is already declared", "rename it first")])
    suggestion = generalise(program, calls)
    old = _from_files(base + [SourceFile("<current>", _baseline(suggestion, current).encode())], catalog)
    witnesses = []
    while True:  # fail closed: a rule verify finds wider than CURRENT is dropped, then proved again
        text = _formatted(render(suggestion, current, args.log), args.output or "<suggestion>")
        new = _from_files(base + [SourceFile(args.output or "<suggestion>", text.encode())], catalog)
        report = verify(new, old, [POLICY])
        if not report.violations:
            break
        violation = report.violations[0]
        witnesses.append({"message": violation.message, "witness": violation.witness})
        tool = violation.witness.get("tool")
        kept = [r for r in suggestion.rules if r.tool != tool]
        if tool is None or len(kept) == len(suggestion.rules):
            raise DshError([invalid_request(f"the suggestion is wider than `{current}`: {violation.message}",
                                            "no single rule could be dropped to narrow it")])
        suggestion.rules = kept
        suggestion.dropped.append(f"the rules for `{tool}` were wider than {current}: {violation.message}")
    decided = redecide(new, calls)
    if args.output:
        replace_file(args.output, text, "the suggestion")
    summary = {"policy": POLICY, "against": current, "proved": report.exact, "cells": report.cells,
               "rules": len(suggestion.rules), "calls": len(calls), "skipped_records": len(evidence.skipped),
               "torn_tail": evidence.torn_tail, "redecided": decided, "dropped": suggestion.dropped,
               "witnesses": witnesses,
               "uncovered": [{"line": c.line, "callId": c.call_id, "name": c.name, "why": why}
                             for c, why in suggestion.uncovered]}
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
        out.write(f"not covered: line {item['line']} `{item['name']}` ({item['callId']}): {item['why']}\n")
    word = "proved" if summary["proved"] else "no widening found (not a proof: argument classes not exact)"
    out.write(f"{word}: `{summary['policy']}` is no wider than `{summary['against']}` over {summary['cells']} cells\n")
    out.write(f"{summary['calls']} logged call(s), {summary['skipped_records']} record(s) skipped; calls that ran, "
              f"under the suggestion: {ran.get('allow', 0)} allow, {ran.get('ask', 0)} ask, {ran.get('deny', 0)} deny\n")
