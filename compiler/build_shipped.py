"""The package build's step (setup.py): compile the shipped presets and policies once and write what a
first call needs (prebuilt.py reads it) — the program, and the grammar tables and catalog stamp the
compile left in its own cache folder."""

from __future__ import annotations

import os
import sys

from . import data_codec, user_cache
from .prebuilt import program_name
from .program import Program, shipped_sources


def build(out: str) -> list[str]:
    """Compile the shipped sources in this process and write what a first call needs into `out`;
    returns the names written. Run with XDG_CACHE_HOME pointing at an empty folder of the build's
    own: what the compile leaves there (the grammar's tables, the catalog's stamp) is copied."""
    files = shipped_sources()
    program = Program.from_files(files)
    os.makedirs(out, exist_ok=True)
    written = []
    name = program_name(files)
    with open(os.path.join(out, name), "w", encoding="utf-8") as handle:
        handle.write(data_codec.dumps((program.resolved, program.sources)))
    written.append(name)
    cache = os.path.join(user_cache.cache_root() or "", "dshc")
    for left in sorted(os.listdir(cache)) if os.path.isdir(cache) else ():
        if left.startswith(("grammar-", "catalog-")) and not left.startswith("."):
            with open(os.path.join(cache, left), "rb") as source, open(os.path.join(out, left), "wb") as target:
                target.write(source.read())
            written.append(left)
    return written


if __name__ == "__main__":  # python -m dshc.compiler.build_shipped OUT_FOLDER (setup.py's build step)
    print("\n".join(build(sys.argv[1])))
