"""A `dshc run` calls file (JSONL) → batches of ToolCalls and a digest, or every bad line with its number.

Each line is one call `{"id", "name", "arguments"}` or `{"batch": […]}` (the calls of one
assistant message). A missing id is `call-N` by position; ids are unique in a file, since
a run executes each call id at most once.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

from .types import ToolCall

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

    @property
    def calls(self) -> tuple[ToolCall, ...]:
        return tuple(call for batch in self.batches for call in batch)


def read_calls(path: str) -> CallsFile:
    try:
        with open(path, "rb") as handle:
            data = handle.read()
        text = data.decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise CallsFileError(path, [(None, f"cannot read `{path}`: {getattr(exc, 'strerror', None) or exc}")]) from None
    batches, problems, seen = [], [], {}
    counter = 0
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except ValueError as exc:
            problems.append((number, f"line {number} is not JSON: {exc}"))
            continue
        raw_calls = item.get("batch") if isinstance(item, dict) and "batch" in item else [item]
        if not isinstance(raw_calls, list) or not raw_calls or not all(_is_call(c) for c in raw_calls):
            problems.append((number, f"line {number}: {_CALL_SHAPE}"))
            continue
        batch = []
        for raw in raw_calls:
            counter += 1
            call_id = str(raw["id"]) if raw.get("id") not in (None, "") else f"call-{counter}"
            if call_id in seen:
                problems.append((number, f"line {number}: call id `{call_id}` is already used on line {seen[call_id]}"))
                continue
            seen[call_id] = number
            batch.append(ToolCall.from_model(call_id, raw["name"], raw.get("arguments", {})))
        batches.append(tuple(batch))
    if problems:
        raise CallsFileError(path, problems)
    return CallsFile(tuple(batches), "sha256:" + hashlib.sha256(data).hexdigest())


def _is_call(raw) -> bool:
    return (isinstance(raw, dict) and isinstance(raw.get("name"), str)
            and isinstance(raw.get("id"), (str, int, type(None))) and not isinstance(raw.get("id"), bool))
