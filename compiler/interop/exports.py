"""ToolView → the wire tools of one model API, exactly as its request takes them.

In: a frozen ToolView. Out: `{"format", "fingerprint", "tools"}` where `tools` goes into the
request unchanged (OpenAI Chat Completions, Anthropic Messages, Gemini, MCP tools/list), plus
notes for anything the format could not carry. The fingerprint is the view's own: the same
whatever the format.
"""

from __future__ import annotations

import copy
from typing import Callable

FORMATS = ("openai", "anthropic", "gemini", "mcp")


def export(view, fmt: str, strict: bool = False) -> tuple[dict, list[str]]:
    notes: list[str] = []
    if fmt not in FORMATS:
        raise ValueError(f"unknown format `{fmt}` (known: {', '.join(FORMATS)})")
    if strict and fmt != "openai":
        raise ValueError("--strict is OpenAI's strict mode; it applies to --format openai only")
    make: Callable = {
        "openai": lambda e: _openai(e, strict, notes),
        "anthropic": _anthropic,
        "gemini": lambda e: _gemini(e, notes),
        "mcp": _mcp,
    }[fmt]
    tools = [make(entry) for entry in view.tools]
    if fmt == "gemini":
        tools = [{"functionDeclarations": tools}] if tools else []
    return {"format": fmt, "fingerprint": view.fingerprint, "tools": tools}, notes


def _anthropic(entry) -> dict:
    return {"name": entry.name, "description": entry.description, "input_schema": entry.parameters}


def _mcp(entry) -> dict:
    return {"name": entry.name, "description": entry.description, "inputSchema": entry.parameters}


def _openai(entry, strict: bool, notes: list[str]) -> dict:
    function = {"name": entry.name, "description": entry.description, "parameters": entry.parameters}
    if strict:
        schema, problems = strict_schema(entry.parameters)
        if problems:
            notes += [f"{entry.name}: not strict: {p}" for p in problems]
            function["strict"] = False
        else:
            function["parameters"], function["strict"] = schema, True
    return {"type": "function", "function": function}


# --- OpenAI strict mode ----------------------------------------------------------------------
def strict_schema(schema: dict) -> tuple[dict, list[str]]:
    """Close every object (additionalProperties false, every property required; optional ones
    become nullable, so a null means "not given"). An object that is open by design, or a
    `oneOf`, cannot be strict without changing what the tool accepts: reported, not forced."""
    problems: list[str] = []
    return _strict(copy.deepcopy(schema), "$", problems), problems


def _strict(node, where: str, problems: list[str]):
    if not isinstance(node, dict):
        return node
    if "oneOf" in node:
        problems.append(f"`oneOf` at {where} (strict mode takes `anyOf` only)")
    if node.get("type") == "object" or "properties" in node:
        props = node.get("properties") or {}
        if node.get("additionalProperties", False) is not False or not props and where != "$":
            problems.append(f"open object at {where}")
        required = set(node.get("required", ()))
        node["properties"] = {
            k: _strict(v, f"{where}.{k}", problems)
            if k in required
            else _nullable(_strict(v, f"{where}.{k}", problems))
            for k, v in props.items()
        }
        node["required"] = list(props)
        node["additionalProperties"] = False
    if isinstance(node.get("items"), dict):
        node["items"] = _strict(node["items"], f"{where}[]", problems)
    for key in ("anyOf", "oneOf"):
        if isinstance(node.get(key), list):
            node[key] = [_strict(v, f"{where}|{i}", problems) for i, v in enumerate(node[key])]
    return node


def _nullable(node: dict) -> dict:
    kind = node.get("type")
    if isinstance(kind, str):
        node = {**node, "type": [kind, "null"]}
        if "enum" in node:
            node["enum"] = [*node["enum"], None]
        return node
    if isinstance(kind, list):
        return {**node, "type": [*kind, "null"]} if "null" not in kind else node
    return {"anyOf": [node, {"type": "null"}]}


# --- Gemini (OpenAPI-subset schema) -------------------------------------------------------------
GEMINI_KEYS = {
    "type",
    "description",
    "properties",
    "required",
    "items",
    "enum",
    "nullable",
    "anyOf",
    "format",
    "minimum",
    "maximum",
    "minItems",
    "maxItems",
    "title",
}


def _gemini(entry, notes: list[str]) -> dict:
    return {
        "name": entry.name,
        "description": entry.description,
        "parameters": _gemini_schema(entry.parameters, f"{entry.name}:$", notes),
    }


def _gemini_schema(node, where: str, notes: list[str]):
    if not isinstance(node, dict):
        return node
    out: dict = {}
    for key, value in node.items():
        if key == "properties":
            out[key] = {k: _gemini_schema(v, f"{where}.{k}", notes) for k, v in value.items()}
        elif key == "items":
            out[key] = _gemini_schema(value, f"{where}[]", notes)
        elif key in ("anyOf", "oneOf"):
            if key == "oneOf":
                notes.append(f"{where}: `oneOf` sent as `anyOf` (Gemini has no `oneOf`)")
            out["anyOf"] = [_gemini_schema(v, f"{where}|{i}", notes) for i, v in enumerate(value)]
        elif key == "const":
            out["enum"] = [value]
        elif key == "type" and isinstance(value, list):
            kinds = [k for k in value if k != "null"]
            out["type"] = kinds[0] if len(kinds) == 1 else value
            if "null" in value:
                out["nullable"] = True
        elif key == "additionalProperties":
            if value is not False:
                notes.append(f"{where}: open object; Gemini's schema cannot say so (extra keys may be dropped)")
        elif key in GEMINI_KEYS:
            out[key] = value
        else:
            notes.append(f"{where}: `{key}` has no Gemini equivalent; left out")
    return out
