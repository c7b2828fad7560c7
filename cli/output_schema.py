"""`--output-schema FILE.json` (`run`, `serve`): the JSON Schema `structured_output` results must match."""

from __future__ import annotations

import json

from ..compiler.diagnostics import Diagnostic, DshError


def read_output_schema(path: str) -> dict:
    """A JSON Schema object, refused before any call runs when it is not one."""
    import jsonschema

    try:
        with open(path, encoding="utf-8") as handle:
            schema = json.load(handle)
    except OSError as exc:
        raise DshError([Diagnostic("DSH405", f"output schema `{path}` cannot be read: {exc.strerror or exc}")])
    except (ValueError, RecursionError) as exc:
        raise DshError([Diagnostic("DSH405", f"output schema `{path}` is not JSON: {exc}", path=path)])
    try:
        if not isinstance(schema, dict):
            raise jsonschema.SchemaError("a schema for a result object must be a JSON object")
        jsonschema.Draft202012Validator.check_schema(schema)
    except jsonschema.SchemaError as exc:
        raise DshError(
            [Diagnostic("DSH405", f"output schema `{path}` is not a valid JSON Schema: {exc.message}", path=path)]
        )
    return schema
