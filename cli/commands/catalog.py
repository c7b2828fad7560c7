"""`dshc catalog`: the packages and tools of the catalog (text, markdown or JSON)."""

from __future__ import annotations


def add_parser(sub) -> None:
    p = sub.add_parser("catalog", help="list the packages and tools of the catalog")
    p.add_argument("--json", action="store_true")
    p.add_argument("--format", choices=["text", "markdown"], default="text")
    p.add_argument("--catalog", metavar="DIR", action="append", default=[], help="add a catalog overlay (repeatable)")


def run(args, out, err) -> int:
    from ...compiler.catalog import load_catalog
    from ..command_context import catalog_of, write_json

    catalog = catalog_of(args) or load_catalog()
    counts = catalog.counts()
    if args.json:
        write_json(
            out,
            {
                "catalog": catalog.name,
                "counts": counts,
                "parallel_safe": sorted({t.name for t in catalog.definitions.values() if t.parallel_safe}),
                "duplicate_names": {n: [t.definition for t in ts] for n, ts in catalog.by_name.items() if len(ts) > 1},
                "aliases": {a: t.definition for t in catalog.definitions.values() for a in t.aliases},
                "packages": [p.model_dump(mode="json") for p in catalog.packages],
            },
        )
    elif args.format == "markdown":
        from ...compiler.templates import render_template  # jinja2 loads only for a markdown catalog

        out.write(render_template("catalog.md.j2", catalog=catalog, counts=counts))
    else:
        for package in catalog.packages:
            out.write(f"{package.id}\n")
            for tool in package.tools:
                tag = "parallel" if tool.parallel_safe else "exclusive"
                aliases = f" (alias: {', '.join(tool.aliases)})" if tool.aliases else ""
                out.write(f"  {tool.name:<24} {tag:<10} {tool.definition}{aliases}\n")
        out.write(counts_line(counts) + "\n")
    return 0


def counts_line(counts: dict) -> str:
    return (
        f"{counts['packages']} packages · {counts['schema_entries']} schema entries · "
        f"{counts['unique_names']} unique names · {counts['aliases']} alias" + ("" if counts["aliases"] == 1 else "es")
    )
