"""`dshc verify`: prove narrowing and monotonicity over the finite domain or show a witness;
`--enforcement`: which layer holds each deny for processes."""

from __future__ import annotations

from ..flags import load_flags


def add_parser(sub) -> None:
    p = sub.add_parser(
        "verify", help="prove narrowing and monotonicity over the whole finite domain, or show a witness"
    )
    p.add_argument("paths", nargs="*", metavar="PATH", help="declarations to add to the shipped ones")
    p.add_argument("--against", metavar="OLD", help="also prove nothing is wider than OLD (a path or `@shipped`)")
    p.add_argument("--policy", action="append", dest="policies", metavar="POLICY", help="only these policies")
    p.add_argument("--trust", metavar="PUBKEY", help="the key a bundle (`.tar.gz`) must be signed by")
    p.add_argument(
        "--enforcement",
        action="store_true",
        help="print which layer holds each deny for processes (the OS, dshc's file tools, a command's "
        "text), with a witness for each gap, instead of proving narrowing",
    )
    p.add_argument(
        "--require",
        action="append",
        default=[],
        metavar="RULE",
        help="with --enforcement: exit 1 unless the OS holds this rule (its id, `team/deny@4`; `*`: every "
        "row) (repeatable)",
    )
    p.add_argument(
        "--mechanism",
        choices=["landlock+mounts", "landlock", "bwrap", "seatbelt", "none"],
        help="with --enforcement: the map for a host with this sandbox mechanism (default: this host's)",
    )
    load_flags(p)


def run(args, out, err) -> int:
    import json
    from ...compiler.diagnostics import DshError, invalid_request, unknown
    from ...compiler.verify import verify
    from ..command_context import program_of, write_json
    from ..sides import bundle_program, is_bundle, side_program_of

    bundles = [p for p in args.paths if is_bundle(p)]
    if bundles and len(args.paths) > 1:
        raise DshError(
            [
                invalid_request(
                    "verify takes one bundle, or declaration paths, not both",
                    "e.g. `dshc verify --against old.tar.gz new.tar.gz --trust KEY.pub`",
                )
            ]
        )
    program = bundle_program(bundles[0], args) if bundles else program_of(args, args.paths)
    against = side_program_of(args.against, args) if args.against else None
    for name in args.policies or ():
        if name not in program.resolved.policies:
            raise DshError([unknown("DSH207", "policy", name, program.resolved.policies, None)])
    if args.enforcement or args.require or args.mechanism:
        return _enforcement(program, args, out)
    from ..progress import ProgressBar

    bar = ProgressBar(err, "verify")
    try:
        report = verify(program, against, args.policies, progress=bar)
    finally:
        bar.close()
    data = report.to_json()
    if args.json:
        write_json(out, data)
    else:
        properties = "narrowing, monotonicity" + (", no widening against OLD" if against else "")
        for violation in report.violations:
            out.write(f"VIOLATION [{violation.property}] {violation.message}\n")
            out.write(f"  witness: {json.dumps(violation.witness, sort_keys=True)}\n")
        for note in report.notes:
            out.write(f"note: {note}\n")
        if report.violations:
            out.write(f"{len(report.violations)} violation(s) over {report.cells} cells\n")
        elif report.exact:
            out.write(
                f"proved {properties} over {report.cells} cells and {report.decisions} decisions "
                "(argument classes exact)\n"
            )
        else:
            out.write(
                f"no violation found for {properties} over {report.cells} cells and {report.decisions} "
                "decisions — not a proof: some argument classes are not exact (see notes)\n"
            )
    return 1 if report.violations else 0


def _enforcement(program, args, out) -> int:
    """`verify --enforcement`: the map of each policy (`compiler.enforcement`); 1 when a required rule is not
    the OS's to hold."""
    from ...compiler.diagnostics import DshError, invalid_request
    from ...compiler.enforcement import enforcement_map, gaps
    from ..command_context import write_json
    from ..host import host_mechanism

    mechanism = args.mechanism or host_mechanism()
    names = args.policies or sorted(program.resolved.policies)
    maps = {name: enforcement_map(program.resolved.policies[name], mechanism) for name in names}
    ids = {row.rule for rows in maps.values() for row in rows}
    for wanted in args.require:
        if wanted != "*" and wanted not in ids:
            raise DshError(
                [
                    invalid_request(
                        f"`--require {wanted}` names no row of the map",
                        "give a rule id the map prints (`POLICY/deny@LINE`, `POLICY/guard:NAME`), or `*`",
                    )
                ]
            )
    missing = [row for rows in maps.values() for row in gaps(rows, set(args.require))]
    if args.json:
        write_json(
            out,
            {
                "mechanism": mechanism,
                "policies": {name: [row.to_json() for row in rows] for name, rows in maps.items()},
                "gaps": [row.to_json() for row in missing],
            },
        )
        return 1 if missing else 0
    out.write(f"sandbox mechanism: {mechanism}\n")
    for name, rows in maps.items():
        if not rows:
            continue
        out.write(f"policy {name}\n")
        for row in rows:
            out.write(f"  {row.layer:<16} {row.rule}: {row.concerns} — {row.how}\n")
            if row.witness:
                out.write(f"  {'':<16} not stopped: {row.witness}\n")
    for row in missing:
        out.write(f"GAP {row.rule} is required of the OS, and is held by {row.layer}: {row.how}\n")
    return 1 if missing else 0
