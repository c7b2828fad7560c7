"""A call's arguments checked against its view entry's parameter schema: the first problem as
text (`where: what`), or None when the tool may run with them. Used by the body (INVALID_ARGS)
and by the scheduler (a call with invalid arguments is never run in parallel)."""
from __future__ import annotations

import json
import re
from functools import lru_cache

import jsonschema


@lru_cache(maxsize=512)
def _validator(parameters_json: str):
    return jsonschema.Draft202012Validator(json.loads(parameters_json))


def problem(parameters_json: str, arguments) -> str | None:
    """`arguments` are plain JSON (thawed); the schema is the entry's canonical JSON text."""
    unusable = _unusable_string(arguments)
    if unusable is not None:
        where, what = unusable
        return f"{where}: {what}"
    errors = sorted(_validator(parameters_json).iter_errors(arguments), key=lambda e: list(e.path))
    if errors:
        where = "/".join(map(str, errors[0].absolute_path)) or "arguments"
        return f"{where}: {errors[0].message}"
    return None


def _unusable_string(arguments) -> tuple[str, str] | None:
    """The first string (key or value) no tool can use: a NUL, or text that is not valid Unicode.

    Paths and commands end in C strings (a NUL cuts them short) and in UTF-8 (a lone surrogate,
    the trace of an invalid byte, cannot be encoded); refusing here names the parameter instead of
    failing somewhere inside the tool.
    """
    stack: list[tuple[str, object]] = [("", arguments)]
    while stack:  # iterative: the nesting is the model's choice
        where, value = stack.pop()
        if isinstance(value, str):
            found = _string_problem(value)
            if found:
                return where or "arguments", found
        elif isinstance(value, dict):
            for key in reversed(list(value)):
                found = _string_problem(key) if isinstance(key, str) else None
                if found:
                    return f"{where}/{key!r}".lstrip("/"), f"key {found}"
                stack.append((f"{where}/{key}".lstrip("/"), value[key]))
        elif isinstance(value, list):
            stack.extend((f"{where}/{index}".lstrip("/"), item) for index, item in reversed(list(enumerate(value))))
    return None


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _string_problem(text: str) -> str | None:
    if "\0" in text:
        return f"contains a NUL character at offset {text.index(chr(0))}"
    # a search, not an encode: a large argument is never copied to be checked
    found = _LONE_SURROGATE.search(text)
    if found:
        return f"contains an invalid character (U+{ord(found.group()):04X}, an unpaired surrogate) at offset {found.start()}"
    return None
