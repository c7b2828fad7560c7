"""`dshc graph`: the composition as mermaid or dot, with the edges a gate cut marked."""

from __future__ import annotations

from ..flags import context_flags


def add_parser(sub) -> None:
    p = sub.add_parser("graph", help="draw the composition, with the edges a gate cut marked")
    context_flags(p)
    p.add_argument("--format", choices=["mermaid", "dot"], default="mermaid")


def run(args, out, err) -> int:
    from ...compiler.graph import composition_graph, to_dot, to_mermaid
    from ..command_context import program_of, request_of

    graph = composition_graph(program_of(args).gate_context(request_of(args)))
    out.write(to_dot(graph) if args.format == "dot" else to_mermaid(graph))
    return 0
