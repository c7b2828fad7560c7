"""A call's arguments checked against its view entry's parameter schema: the first problem as
text (`where: what`), or None when the tool may run with them. Used by the body (INVALID_ARGS),
by the scheduler (a call with invalid arguments is never run in parallel) and, through `check`
(the same problem with its schema path and a did-you-mean), by every door that decides a call."""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache

import jsonschema


@lru_cache(maxsize=512)
def _validator(parameters_json: str):
    return jsonschema.Draft202012Validator(json.loads(parameters_json))


@dataclass(frozen=True)
class ArgumentProblem:
    """The first reason a call's arguments do not fit the schema: the argument (`where`), the schema
    keyword that refuses it (`schema_path`, a JSON pointer), the message, and a close key when a
    required or unknown one looks misspelt (`did_you_mean`: (given, meant))."""
    where: str
    schema_path: str
    message: str
    did_you_mean: tuple[str, str] | None = None

    def __str__(self) -> str:
        return f"{self.where}: {self.message}"

    @property
    def hint(self) -> str | None:
        if self.did_you_mean is None:
            return None
        given, meant = self.did_you_mean
        return f"`{given}` is close to `{meant}`: did you mean `{meant}`?"


def problem(parameters_json: str, arguments) -> str | None:
    """`arguments` are plain JSON (thawed); the schema is the entry's canonical JSON text."""
    found = check(parameters_json, arguments)
    return str(found) if found is not None else None


def check(parameters_json: str, arguments) -> ArgumentProblem | None:
    """The first problem of `arguments` (plain JSON) against the schema text, or None."""
    unusable = _unusable_string(arguments)
    if unusable is not None:
        where, what = unusable
        return ArgumentProblem(where, "", what)
    errors = sorted(_validator(parameters_json).iter_errors(arguments), key=lambda e: list(e.path))
    if not errors:
        return None
    error = errors[0]
    where = "/".join(map(str, error.absolute_path)) or "arguments"
    schema_path = "/" + "/".join(map(str, error.absolute_schema_path))
    return ArgumentProblem(where, schema_path, error.message, _close_key(error, arguments))


def _close_key(error, arguments) -> tuple[str, str] | None:
    """(a key given, the schema's key it is close to) for a missing required key or a refused extra one."""
    from difflib import get_close_matches  # only for a call that failed its schema
    instance = error.instance if isinstance(error.instance, dict) else arguments
    schema = error.schema if isinstance(error.schema, dict) else {}
    known = sorted(schema.get("properties", {}))
    if error.validator == "required":
        missing = next((key for key in error.validator_value if key not in instance), None)
        unknown = [key for key in instance if key not in known]
        found = get_close_matches(missing, unknown, n=1, cutoff=0.6) if missing else []
        return (found[0], missing) if found else None
    if error.validator == "additionalProperties":
        for key in instance:
            if key not in known:
                found = get_close_matches(key, known, n=1, cutoff=0.6)
                if found:
                    return key, found[0]
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
