"""`dshc diff OLD NEW`: what changed between two source trees, or two contexts of the same sources."""

from __future__ import annotations

from ..flags import load_flags


def add_parser(sub) -> None:
    p = sub.add_parser("diff", help="what changed between two source trees, or two contexts of the same sources")
    p.add_argument(
        "old", metavar="OLD", help="a file or folder of declarations, `@shipped`, or a context `key=value,…`"
    )
    p.add_argument("new", metavar="NEW", help="the same kinds as OLD")
    p.add_argument("--fail-on-widen", action="store_true", help="exit 1 if anything became more visible or allowed")
    p.add_argument("--trust", metavar="PUBKEY", help="the key a bundle side (`.tar.gz`) must be signed by")
    load_flags(p)


def run(args, out, err) -> int:
    import os
    from ...compiler.diagnostics import DshError, invalid_request
    from ...compiler.diff import diff_programs, render_text
    from ..command_context import program_of, write_json
    from ..sides import context_request, side_program_of

    paths = [os.path.exists(s) or s == "@shipped" for s in (args.old, args.new)]
    if all(paths):
        result = diff_programs(side_program_of(args.old, args), side_program_of(args.new, args))
    elif not any(paths):
        program = program_of(args)
        old_request, new_request = context_request(args.old), context_request(args.new)
        for context in (old_request, new_request):
            program.composition(context)  # an unknown name in a context is an error (exit 2), not an empty diff
        result = diff_programs(program, program, [old_request], [new_request])
    else:
        raise DshError(
            [
                invalid_request(
                    "OLD and NEW must both be sources or both contexts",
                    "compare two sources (paths or `@shipped`), or two contexts of the loaded "
                    "sources such as `policy=read-only policy=workspace-write`",
                )
            ]
        )
    if args.json:
        write_json(out, result)
    else:
        out.write(render_text(result))
    return 1 if (args.fail_on_widen and result["widening"]) else 0
