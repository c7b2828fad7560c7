"""`dshc build`: a signed policy bundle (`cli/bundle.py`)."""

from __future__ import annotations


def add_parser(sub) -> None:
    p = sub.add_parser("build", help="build a signed policy bundle (sources, catalog overlays, view fingerprints)")
    p.add_argument("paths", nargs="*", metavar="PATH", help="declaration files or folders to bundle")
    p.add_argument("--catalog", metavar="DIR", action="append", default=[], help="a catalog overlay to bundle")
    p.add_argument("-o", "--output", metavar="BUNDLE", help="where to write the bundle (.tar.gz)")
    p.add_argument("--key", metavar="KEYFILE", help="the ed25519 private key that signs the manifest")
    p.add_argument("--new-key", metavar="KEYFILE", help="write a new keypair (KEYFILE, mode 0600, and KEYFILE.pub)")
    p.add_argument("--no-shipped", action="store_true", help="the bundle carries every declaration itself")
    p.add_argument(
        "--revision",
        type=_revision,
        metavar="N",
        help="the bundle's revision, signed in its "
        "manifest; a server swaps only to a higher one (default: $SOURCE_DATE_EPOCH, else the time)",
    )
    p.add_argument("--json", action="store_true")


def _revision(text: str) -> int:
    import argparse

    if not text.isascii() or not text.isdigit():
        raise argparse.ArgumentTypeError(f"`{text}` is not a revision (a whole number, 0 or more)")
    return int(text)


def run(args, out, err) -> int:
    from ..bundle import cmd_build

    return cmd_build(args, out, err)
