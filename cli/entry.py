"""The `dshc` executable: `dshc hook …` goes straight to the hook, everything else to the CLI.

An agent spawns the hook once per tool call, so it must not pay for the imports of commands it
never runs (templates, the runtime, the renderers); the full CLI loads only when needed.
"""

from __future__ import annotations

import sys

# Commands an agent or a script spawns once per call. Their process ends as soon as the answer is
# written: the interpreter's orderly shutdown (freeing every object of the loaded program one by
# one) cost ~7 ms of a ~60 ms hook, and they leave nothing for it to do — no thread, no temporary
# file, no handler that must run; their output files are closed before they return.
PER_CALL = ("hook", "decide")


def run(argv: list[str]) -> int:
    """The command's exit status; what `entry` does short of ending the process."""
    if argv[:1] == ["hook"]:
        from .hook import main

        return main(argv[1:])
    if argv == ["--version"]:  # the whole command line: no parser or command table to build for it
        from .package_version import installed_version

        sys.stdout.write(f"dshc {installed_version()}\n")
        return 0
    from ..compiler.disk_cache import use_disk_cache

    use_disk_cache(_cached)  # a process per command: the parse and resolve of unchanged sources is kept on disk
    if argv[:1] == ["decide"]:
        from .decide import cmd_decide, fast_arguments

        args = fast_arguments(argv[1:])
        if args is not None:  # written plainly: no argparse, no other command's modules
            from .outcome import answer

            return answer(lambda: cmd_decide(args, sys.stdout, sys.stderr), args.json, False, sys.stdout, sys.stderr)
    from .main import main as cli_main

    return cli_main(argv)


def _cached(files):
    from ..compiler.program_cache import load_files  # loaded by the first command that loads a program

    return load_files(files)


def entry() -> None:
    argv = sys.argv[1:]
    if argv[:1] and argv[0] in PER_CALL:
        import gc

        # such a process makes tens of thousands of objects importing and decoding, and frees them all at
        # once at its end (`_end_now`): the cyclic collector's passes over them were ~8 % of its CPU
        gc.disable()
    code = run(argv)
    if argv[:1] and argv[0] in PER_CALL:
        _end_now(code)
    sys.exit(code)


def _end_now(code: int) -> None:
    import os

    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):  # a closed or broken pipe: the status still says what happened
        code = code or 1
    os._exit(code)
