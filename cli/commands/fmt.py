"""`dshc fmt`: rewrite declaration files in the canonical layout (`--check`: exit 1 on unformatted files)."""

from __future__ import annotations


def add_parser(sub) -> None:
    p = sub.add_parser("fmt", help="rewrite declaration files in the canonical layout")
    p.add_argument(
        "paths", nargs="*", metavar="PATH", help="files or folders (default: the shipped ones, with --check)"
    )
    p.add_argument("--check", action="store_true", help="only report files that are not formatted (exit 1)")


def run(args, out, err) -> int:
    from ...compiler.diagnostics import DshError, invalid_request
    from ...compiler.fmt import format_document
    from ...compiler.program import parse_files, read_paths, shipped_sources

    if not args.paths and not args.check:
        raise DshError(
            [
                invalid_request(
                    "fmt needs PATH arguments to rewrite",
                    "name the .dsh files or folders to format, or use --check to check the shipped files",
                )
            ]
        )
    files = read_paths(args.paths) if args.paths else shipped_sources()
    documents, diags, texts = parse_files(files)
    if diags:
        raise DshError(diags, texts)
    changed = []
    for file, document in zip(files, documents):
        text = format_document(document)
        if text.encode("utf-8") != file.data:
            changed.append(file.path)
            if not args.check:
                from ..output_file import replace_file

                replace_file(file.path, text, "the formatted file")  # a failed write keeps the original
    for path in changed:
        out.write(f"{'would reformat' if args.check else 'reformatted'} {path}\n")
    return 1 if (changed and args.check) else 0
