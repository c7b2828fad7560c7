"""A command's run → the `dshc` exit status, every problem reported the way the CLI reports it.

0 positive answer, 1 negative answer, 2 unusable input (with diagnostics: JSON on stdout with
`--json`, else text on stderr), 3 internal error (a bug; `--debug` shows the traceback). Used by
the full command line and by `decide`'s lean path alike.
"""

from __future__ import annotations

from ..compiler.diagnostics import DshError

TYPE_CHECKING = False  # no `import typing` (~4 ms of a hook): its names are for annotations only
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import TextIO

EXIT_OK, EXIT_NEGATIVE, EXIT_INPUT, EXIT_INTERNAL = 0, 1, 2, 3


def answer(command: Callable[[], int], wants_json: bool, debug: bool, stdout: TextIO, stderr: TextIO) -> int:
    """`command()`'s status; a DshError, a closed pipe or a bug become theirs."""
    try:
        return command()
    except DshError as exc:
        return report(exc.diagnostics, wants_json, stdout, stderr, exc.sources)
    except BrokenPipeError:
        return EXIT_OK
    except Exception as exc:  # noqa: BLE001 - last line of defence: a bug, reported as such
        stderr.write(f"dshc: internal error: {exc.__class__.__name__}: {exc}\n")
        if debug:
            import traceback

            traceback.print_exc(file=stderr)
        else:
            stderr.write("this is a bug in dshc; run again with --debug for a traceback\n")
        return EXIT_INTERNAL


def report(diags, wants_json: bool, stdout: TextIO, stderr: TextIO, sources=None) -> int:
    from ..compiler.render import diagnostics_json, human  # the renderers load only for a report

    if wants_json:
        import json

        stdout.write(json.dumps({"diagnostics": diagnostics_json(diags)}, indent=2) + "\n")
    else:
        stderr.write(human(diags, sources=sources) + "\n")
    return EXIT_INPUT


def write_json(out: TextIO, value) -> None:
    import json  # indented output: the json package's (decide's text answer does without it)

    out.write(json.dumps(value, indent=2, ensure_ascii=False) + "\n")
