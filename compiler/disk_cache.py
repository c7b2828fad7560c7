"""Whether this process reads and writes the per-user program cache: the `dshc` executable asks for it (giving
`program_cache`'s loader), a library caller or a test never leaves files behind unasked. The switch sits apart
from the cache, so that asking costs a command that never loads a program (`dshc --help`) nothing."""

from __future__ import annotations

_LOADER: list = [None]


def use_disk_cache(loader) -> None:
    """`loader(files) -> Program` for Program.load and Program.from_files_cached, or None to load afresh."""
    _LOADER[0] = loader


def loader():
    return _LOADER[0]
