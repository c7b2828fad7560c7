"""The `dshc` executable: `dshc hook …` goes straight to the hook, everything else to the CLI.

An agent spawns the hook once per tool call, so it must not pay for the imports of commands it
never runs (templates, the runtime, the renderers); the full CLI loads only when needed.
"""
from __future__ import annotations

import sys


def entry() -> None:
    argv = sys.argv[1:]
    if argv[:1] == ["hook"]:
        from .hook import main
        sys.exit(main(argv[1:]))
    from ..compiler.program import use_disk_cache
    use_disk_cache()  # a process per command: the parse and resolve of unchanged sources is kept on disk
    from .main import entry as cli_entry
    cli_entry()
