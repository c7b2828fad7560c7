"""A call's arguments checked against its view entry's parameter schema: the first problem as
text (`where: what`), or None when the tool may run with them. Used by the body (INVALID_ARGS),
by the scheduler (a call with invalid arguments is never run in parallel) and, through `check`
(the same problem with its schema path and a did-you-mean), by every door that decides a call."""

from __future__ import annotations

# no json, re or functools at import: the Claude Code hook checks a call's arguments in a process that loads
# none of them (its schemas come parsed; `_parsed` and `_validator` keep what the runtime's texts need)


_CACHE_SIZE = 512
_parsed_cache: dict = {}
_validators: dict = {}


def _remember(cache: dict, key, make):
    found = cache.get(key)
    if found is None:
        if len(cache) >= _CACHE_SIZE:
            cache.clear()  # a bound, not an order: the view's schemas are few
        found = cache[key] = make()
    return found


def _parsed(schema) -> tuple:
    """(the schema as an object, whether every keyword in it is one `_errors` checks itself)."""
    if not isinstance(schema, str):
        return schema, _plain(schema)

    def parse():
        import json

        value = json.loads(schema)
        return value, _plain(value)

    return _remember(_parsed_cache, schema, parse)


def _validator(schema):
    import jsonschema  # for a schema beyond `_KEYWORDS` only: a decision process never loads it

    if not isinstance(schema, str):
        return jsonschema.Draft202012Validator(schema)
    return _remember(_validators, schema, lambda: jsonschema.Draft202012Validator(_parsed(schema)[0]))


class ArgumentProblem:
    """The first reason a call's arguments do not fit the schema: the argument (`where`), the schema
    keyword that refuses it (`schema_path`, a JSON pointer), the message, and a close key when a
    required or unknown one looks misspelt (`did_you_mean`: (given, meant)). A plain class: a hook
    process checks one call, and dataclasses would cost it `inspect`."""

    __slots__ = ("where", "schema_path", "message", "did_you_mean")

    def __init__(self, where: str, schema_path: str, message: str, did_you_mean: tuple[str, str] | None = None):
        self.where, self.schema_path, self.message, self.did_you_mean = where, schema_path, message, did_you_mean

    def __repr__(self) -> str:
        return f"ArgumentProblem({self.where!r}, {self.schema_path!r}, {self.message!r}, {self.did_you_mean!r})"

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


def check(parameters, arguments) -> ArgumentProblem | None:
    """The first problem of `arguments` (plain JSON) against the schema (its JSON text, or the object), or None."""
    unusable = _unusable_string(arguments)
    if unusable is not None:
        where, what = unusable
        return ArgumentProblem(where, "", what)
    schema, plain = _parsed(parameters)
    found = _errors(schema, arguments, (), ()) if plain else _validator(parameters).iter_errors(arguments)
    errors = sorted(found, key=lambda e: list(e.path))  # as jsonschema orders them: the same first problem
    if not errors:
        return None
    error = errors[0]
    where = "/".join(map(str, error.absolute_path)) or "arguments"
    schema_path = "/" + "/".join(map(str, error.absolute_schema_path))
    return ArgumentProblem(where, schema_path, error.message, _close_key(error, arguments))


# The keywords the catalog's parameter schemas use, checked here as jsonschema's Draft 2020-12 validator
# checks them (its messages, its order), so deciding a call loads no validation library; a schema with any
# other keyword goes to jsonschema itself.
_KEYWORDS = frozenset(
    {
        "type",
        "properties",
        "required",
        "additionalProperties",
        "enum",
        "const",
        "items",
        "description",
        "title",
        "default",
        "examples",
    }
)
_TYPES = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "integer": lambda v: (isinstance(v, int) and not isinstance(v, bool)) or (isinstance(v, float) and v.is_integer()),
}


def _plain(schema) -> bool:
    if isinstance(schema, bool):
        return True
    if not isinstance(schema, dict) or not _KEYWORDS.issuperset(schema) or schema.get("items") is False:
        return False  # `items: false` reads `prefixItems`: jsonschema's
    types = schema.get("type", "object")
    if not all(t in _TYPES for t in (types if isinstance(types, list) else [types])):
        return False
    children = [
        *schema.get("properties", {}).values(),
        schema.get("items", True),
        schema.get("additionalProperties", True),
    ]
    return all(_plain(child) for child in children)


class _Error:
    """One failed keyword, with the fields of jsonschema's ValidationError that callers read."""

    __slots__ = ("path", "schema_path", "message", "validator", "validator_value", "instance", "schema")

    def __init__(
        self, path: tuple, schema_path: tuple, message: str, validator: str, validator_value, instance, schema
    ):
        self.path, self.schema_path, self.message, self.validator = path, schema_path, message, validator
        self.validator_value, self.instance, self.schema = validator_value, instance, schema

    @property
    def absolute_path(self) -> tuple:
        return self.path

    @property
    def absolute_schema_path(self) -> tuple:
        return self.schema_path


def _equal(one, two) -> bool:
    """JSON equality as jsonschema reads it: a boolean is never a number."""
    if isinstance(one, bool) or isinstance(two, bool):
        return type(one) is type(two) and one == two
    if isinstance(one, list) and isinstance(two, list):
        return len(one) == len(two) and all(_equal(a, b) for a, b in zip(one, two))
    if isinstance(one, dict) and isinstance(two, dict):
        return one.keys() == two.keys() and all(_equal(one[k], two[k]) for k in one)
    return one == two


def _errors(schema, instance, path: tuple, at: tuple):
    """Every keyword `instance` fails, in the schema's key order, descending as jsonschema does."""
    if schema is True:
        return
    if schema is False:
        yield _Error(path, at, f"False schema does not allow {instance!r}", "false", False, instance, schema)
        return
    for key, value in sorted(schema.items()):  # in the canonical text's order, whichever object it came from
        here = (*at, key)
        if key == "type":
            types = value if isinstance(value, list) else [value]
            if not any(_TYPES[t](instance) for t in types):
                yield _Error(
                    path,
                    here,
                    f"{instance!r} is not of type {', '.join(repr(t) for t in types)}",
                    key,
                    value,
                    instance,
                    schema,
                )
        elif key == "required" and isinstance(instance, dict):
            for name in value:
                if name not in instance:
                    yield _Error(path, here, f"{name!r} is a required property", key, value, instance, schema)
        elif key == "properties" and isinstance(instance, dict):
            for name, child in sorted(value.items()):
                if name in instance:
                    yield from _errors(child, instance[name], (*path, name), (*here, name))
        elif key == "additionalProperties" and isinstance(instance, dict):
            extras = [name for name in instance if name not in schema.get("properties", {})]
            if isinstance(value, dict):
                for name in extras:
                    yield from _errors(value, instance[name], (*path, name), here)
            elif value is False and extras:
                names = sorted(extras, key=str)
                yield _Error(
                    path,
                    here,
                    "Additional properties are not allowed (%s %s unexpected)"
                    % (", ".join(repr(n) for n in names), "was" if len(names) == 1 else "were"),
                    key,
                    value,
                    instance,
                    schema,
                )
        elif key == "items" and isinstance(instance, list):
            for index, item in enumerate(instance):
                yield from _errors(value, item, (*path, index), here)
        elif key == "enum" and not any(_equal(each, instance) for each in value):
            yield _Error(path, here, f"{instance!r} is not one of {value!r}", key, value, instance, schema)
        elif key == "const" and not _equal(value, instance):
            yield _Error(path, here, f"{value!r} was expected", key, value, instance, schema)


def _close_key(error, arguments) -> tuple[str, str] | None:
    """(a key given, the schema's key it is close to) for a missing required key or a refused extra one."""
    from difflib import get_close_matches  # only for a call that failed its schema

    instance = error.instance if isinstance(error.instance, dict) else arguments
    schema = error.schema if isinstance(error.schema, dict) else {}
    known = sorted(schema.get("properties", {}))
    if error.validator == "required":
        missing = next((key for key in error.validator_value if key not in instance), None)
        if not missing:
            return None
        unknown = [key for key in instance if key not in known]
        found = get_close_matches(missing, unknown, n=1, cutoff=0.6)
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


_lone_surrogate = None  # compiled on the first text that is not ASCII


def _string_problem(text: str) -> str | None:
    global _lone_surrogate
    if "\0" in text:
        return f"contains a NUL character at offset {text.index(chr(0))}"
    if text.isascii():
        return None
    if _lone_surrogate is None:
        import re

        _lone_surrogate = re.compile("[\ud800-\udfff]")
    # a search, not an encode: a large argument is never copied to be checked
    found = _lone_surrogate.search(text)
    if found:
        return f"contains an invalid character (U+{ord(found.group()):04X}, an unpaired surrogate) at offset {found.start()}"
    return None
