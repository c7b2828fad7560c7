"""The code-mode SDK (the tools behind `run_code`) as a TypeScript declaration file.

In: a ToolView in code or both mode. Out: `.d.ts` text declaring `tools.<name>(args)` with one
argument interface per tool, JSDoc from the descriptions, and the view's fingerprint on top.
"""

from __future__ import annotations

import json
import re


def declaration(view) -> str:
    if view.sdk is None:
        raise ValueError(f"the view is in `{view.mode}` mode: there is no code-mode SDK (use --mode code or both)")
    lines = [
        f"// dshc code-mode SDK · preset {view.preset or '-'} · host {view.host} · {view.platform} · "
        f"scope {view.scope}",
        f"// fingerprint {view.fingerprint}",
        "// Call these from inside a `run_code` program; every call goes through the tool pipeline.",
        "",
    ]
    for entry in view.sdk:
        lines += _doc(entry.description, "")
        lines.append(f"export interface {_iface(entry.name)} {_object(entry.parameters, '')}")
        lines.append("")
    lines.append("export interface Tools {")
    for entry in view.sdk:
        lines += _doc(entry.description, "  ")
        lines.append(f"  {_key(entry.name)}(args: {_iface(entry.name)}): Promise<unknown>;")
    lines += ["}", "", "export declare const tools: Tools;", ""]
    return "\n".join(lines)


def _iface(name: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in re.split(r"[^A-Za-z0-9]+", name) if part) + "Args"


def _key(name: str) -> str:
    return name if re.fullmatch(r"[A-Za-z_$][\w$]*", name) else json.dumps(name)


def _doc(text: str | None, indent: str) -> list[str]:
    if not text:
        return []
    body = text.replace("*/", "*\\/").splitlines() or [""]
    return [f"{indent}/**"] + [f"{indent} * {line}".rstrip() for line in body] + [f"{indent} */"]


def _type(schema, indent: str) -> str:
    if not isinstance(schema, dict):
        return "unknown"
    if "const" in schema:
        return json.dumps(schema["const"])
    if "enum" in schema:
        return " | ".join(json.dumps(v) for v in schema["enum"]) or "never"
    for key in ("oneOf", "anyOf"):
        if key in schema:
            return " | ".join(f"({_type(s, indent)})" for s in schema[key]) or "never"
    kind = schema.get("type")
    if isinstance(kind, list):
        return " | ".join(_type({**schema, "type": k}, indent) for k in kind)
    if kind == "string":
        return "string"
    if kind in ("number", "integer"):
        return "number"
    if kind == "boolean":
        return "boolean"
    if kind == "null":
        return "null"
    if kind == "array":
        return f"Array<{_type(schema.get('items'), indent)}>"
    if kind == "object" or "properties" in schema:
        return _object(schema, indent)
    return "unknown"


def _object(schema: dict, indent: str) -> str:
    props = schema.get("properties") or {}
    required = set(schema.get("required", ()))
    inner = indent + "  "
    lines = ["{"]
    for name, sub in props.items():
        lines += _doc(sub.get("description") if isinstance(sub, dict) else None, inner)
        lines.append(f"{inner}{_key(name)}{'' if name in required else '?'}: {_type(sub, inner)};")
    if schema.get("additionalProperties", True) is not False:
        lines.append(f"{inner}[key: string]: unknown;")
    lines.append(indent + "}")
    return (
        "\n".join(lines)
        if len(lines) > 2
        else "{ }"
        if schema.get("additionalProperties") is False
        else "{ [key: string]: unknown }"
    )
