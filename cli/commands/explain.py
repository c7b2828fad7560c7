"""`dshc explain`: why a tool is (not) available, gate by gate; `--all`: every tool's first failing gate."""

from __future__ import annotations

from ..flags import context_flags


def add_parser(sub) -> None:
    p = sub.add_parser(
        "explain",
        help="why a tool is (not) available: the five gates, in order",
        usage="dshc explain TOOL [PRESET] [options] | dshc explain --all [PRESET] [options]",
    )
    p.add_argument("tool", nargs="?", metavar="TOOL", help="the tool to explain (with --all: the preset)")
    context_flags(p)
    p.add_argument("--all", action="store_true", help="every catalog tool with its first failing gate")


def run(args, out, err) -> int:
    from ...compiler.diagnostics import DshError, invalid_request
    from ..command_context import program_of, request_of, write_json
    from ..explanation import explain_json, explain_text

    if args.all and args.tool is not None:
        # with --all the one positional is the preset: `explain --all reviewer`
        if args.preset is not None:
            raise DshError(
                [
                    invalid_request(
                        f"explain --all takes one PRESET, not `{args.tool}` and `{args.preset}`",
                        "e.g. `dshc explain --all standard`; drop --all to explain one tool",
                    )
                ]
            )
        args.preset, args.tool = args.tool, None
    program = program_of(args)
    request = request_of(args)
    if args.all:
        table = program.explain_all(request)
        tools = [explain_json(name, results) for name, results in table.items()]
        if args.json:
            write_json(out, {"tools": tools})
        else:
            for row in tools:
                out.write(f"  {row['tool']:<24} {'available' if row['available'] else 'fails ' + row['failed_gate']}\n")
        return 0
    if not args.tool:
        raise DshError(
            [
                invalid_request(
                    "explain needs a TOOL, or --all",
                    "e.g. `dshc explain bash standard`, or `dshc explain --all standard` for every tool",
                )
            ]
        )
    results = program.explain(request, args.tool)
    data = explain_json(args.tool, results)
    from ..host import describe_sandbox, sandbox_text

    sandbox = describe_sandbox(program, request, args.tool) if request.policy else None
    rows = _process_enforcement(program, request) if sandbox and sandbox["applies_to"] == "processes" else None
    if args.json:
        write_json(
            out,
            {
                **data,
                "sandbox": sandbox,
                **({"enforcement": [row.to_json() for row in rows]} if rows is not None else {}),
            }
            if sandbox
            else data,
        )
    else:
        out.write(
            explain_text(args.tool, results)
            + (sandbox_text(sandbox) if sandbox else "")
            + (_enforcement_text(rows, request.policy) if rows else "")
        )
    return 0 if data["available"] else 1


def _process_enforcement(program, request):
    """The enforcement map of the request's policy (`compiler.enforcement`), for a tool that starts processes."""
    from ...compiler.enforcement import enforcement_map
    from ..host import host_mechanism

    policy = program.composition(request).policy
    return enforcement_map(policy, host_mechanism()) if policy is not None else None


def _enforcement_text(rows, policy: str | None) -> str:
    """What holds the policy's denies for a process this tool starts: the count per layer, and each gap."""
    from collections import Counter

    counts = Counter(row.layer for row in rows)
    text = "enforcement: " + ", ".join(f"{count} held by {layer}" for layer, count in counts.items()) + "\n"
    for row in rows:
        if row.witness:
            text += f"  {row.layer}: {row.rule} ({row.concerns}): not stopped: {row.witness}\n"
    return text + f"  (the whole map: dshc verify --enforcement --policy {policy})\n"
