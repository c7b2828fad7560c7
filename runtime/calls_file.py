"""A `dshc run` calls file (JSONL) → batches of ToolCalls and a digest, or every bad line with its number.

Each line is one call `{"id", "name", "arguments"}` or `{"batch": […]}` (the calls of one
assistant message). A missing id is `call-N` by position; ids are unique in a file, since
a run executes each call id at most once.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

from .types import ArgumentsTooDeep, ToolCall

_CALL_SHAPE = 'a call is {"id", "name", "arguments"} with a string `name`'


class CallsFileError(ValueError):
    def __init__(self, path: str, problems: list[tuple[int | None, str]]):
        self.path = path
        self.problems = problems
        super().__init__("; ".join(message for _, message in problems[:3]))


@dataclass(frozen=True)
class CallsFile:
    batches: tuple[tuple[ToolCall, ...], ...]
    digest: str  # sha256 of the file's bytes: a restart resumes only the same calls
    lines: tuple[int, ...] = ()  # the line of each call, in `calls` order (what evidence cites)

    @property
    def calls(self) -> tuple[ToolCall, ...]:
        return tuple(call for batch in self.batches for call in batch)


def read_calls(path: str) -> CallsFile:
    """Line by line, so a large argument is held once (parsed), not also as the file's text."""
    try:
        handle = open(path, "rb")
    except OSError as exc:
        raise CallsFileError(path, [(None, f"cannot read `{path}`: {exc.strerror or exc}")]) from None
    digest = hashlib.sha256()
    batches, problems, lines = [], [], []
    seen: dict[str, int] = {}  # call id -> the line that used it
    counter = 0
    with handle:
        for number, item, problem in _lines(handle, digest):
            if problem:
                problems.append((number, problem))
                continue
            if item is None:
                continue
            batch = []
            for raw in item:
                counter += 1
                call_id = str(raw["id"]) if raw.get("id") not in (None, "") else f"call-{counter}"
                if call_id in seen:
                    problems.append(
                        (number, f"line {number}: call id `{call_id}` is already used on line {seen[call_id]}")
                    )
                    continue
                seen[call_id] = number
                try:
                    batch.append(ToolCall.from_model(call_id, raw["name"], raw.get("arguments", {})))
                    lines.append(number)
                except ArgumentsTooDeep as exc:
                    problems.append((number, f"line {number}: {exc}"))
            batches.append(tuple(batch))
    if problems:
        raise CallsFileError(path, problems)
    return CallsFile(tuple(batches), "sha256:" + digest.hexdigest(), tuple(lines))


def _lines(handle, digest):
    """(number, the calls on the line or None for a blank one, a problem or None) per line.

    Each stage drops the previous form (bytes → text → JSON), so a line is held at most twice.
    """
    number = 0
    while raw := handle.readline():
        number += 1
        digest.update(raw)
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            yield number, None, f"line {number} is not UTF-8: {exc.reason}"
            continue
        del raw
        yield (number, *_parse_line(text, number))


def _parse_line(text: str, number: int) -> tuple[list | None, str | None]:
    if not text or text.isspace():  # strip() would copy a large line once more
        return None, None
    try:
        item = json.loads(text)
    except RecursionError:
        return None, f"line {number}: {ArgumentsTooDeep()}"
    except ValueError as exc:
        return None, f"line {number} is not JSON: {exc}"
    calls = item.get("batch") if isinstance(item, dict) and "batch" in item else [item]
    if not isinstance(calls, list) or not calls or not all(_is_call(c) for c in calls):
        return None, f"line {number}: {_CALL_SHAPE}"
    return calls, None


def _is_call(raw) -> bool:
    return (
        isinstance(raw, dict)
        and isinstance(raw.get("name"), str)
        and isinstance(raw.get("id"), (str, int, type(None)))
        and not isinstance(raw.get("id"), bool)
    )
