"""Files dshc writes for the user (a formatted source, a bundle, a suggestion, an export): whole or not at all.

In: a path and its new content. Out: the file replaced in one rename after an fsync, or a DSH405 saying
why it could not be written; a failure leaves the old file (or nothing) in place, never half of one.
"""

from __future__ import annotations

import contextlib
import os
import stat

from ..compiler.diagnostics import DshError, invalid_request

NEW_FILE_MODE = 0o644


def replace_file(path: str, data: bytes | str, what: str) -> None:
    """Write `data` to `path` atomically; `what` names the file in an error ("the bundle", "the suggestion")."""
    import tempfile  # loaded by the commands that write a file, not by every process

    if isinstance(data, str):
        data = data.encode("utf-8")
    target = os.path.realpath(path)  # a symlinked file is rewritten where it lives, and the link stays a link
    try:
        mode = stat.S_IMODE(os.stat(target).st_mode)
    except FileNotFoundError:
        mode = NEW_FILE_MODE
    except OSError as exc:
        raise _cannot(what, path, exc) from None
    try:
        fd, temp = tempfile.mkstemp(prefix=".dshc-", suffix=".part", dir=os.path.dirname(target))
    except OSError as exc:
        raise _cannot(what, path, exc) from None
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temp, mode)
        os.replace(temp, target)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise _cannot(what, path, exc) from None


def _cannot(what: str, path: str, exc: OSError) -> DshError:
    return DshError(
        [invalid_request(f"cannot write {what} `{path}`: {exc.strerror or exc}", "choose a folder you can write to")]
    )


def write_output(text: str, output: str | None, out) -> None:
    """`text` to the file `-o OUTPUT` names (whole or not at all), else to `out`."""
    if output:
        replace_file(output, text, "the export")
    else:
        out.write(text)
