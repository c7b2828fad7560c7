"""The two sides `dshc diff` (and `verify --against`, the explorer's diff) compare: a source tree, a signed
bundle, an agent's settings file, or a context `key=value,…` of the loaded sources."""

from __future__ import annotations

import os
from argparse import Namespace

from ..compiler.diagnostics import DshError, invalid_request
from ..compiler.program import Program, read_paths, shipped_sources
from ..compiler.request import CONTEXT_FIELDS, InvalidRequest, Request
from .agent_settings import agent_source
from .command_context import catalog_of, from_files

CONTEXT_KEYS = set(CONTEXT_FIELDS) - {"flags"}  # a `key=value` side names one value per key


def side_program_of(spec: str, args: Namespace) -> Program:
    """One side named on the command line, with the command's --catalog, --load, --no-shipped and --trust."""
    if is_bundle(spec):
        return bundle_program(spec, args)
    return side_program(spec, catalog_of(args), args.load, shipped=not args.no_shipped)


def is_bundle(spec: str) -> bool:
    return spec.endswith(".tar.gz") and os.path.isfile(spec)


def bundle_program(spec: str, args: Namespace) -> Program:
    """A signed bundle as one side: verified against --trust, its own sources and catalog."""
    from .bundle import load

    if not getattr(args, "trust", None):
        raise DshError(
            [
                invalid_request(
                    f"`{spec}` is a bundle: pass --trust PUBKEY to verify its signature",
                    "the `.pub` file `dshc build --new-key` wrote",
                )
            ]
        )
    return load(spec, args.trust).program


def side_program(spec: str, catalog=None, load=(), shipped: bool = True) -> Program:
    """One side of `diff` / `verify --against`: its files over the shipped declarations (unless
    `shipped` is false), plus every `load` file, so a side may extend `workspace-write` like any file."""
    paths = list(load) if spec == "@shipped" else [spec, *load]
    shipped = shipped or spec == "@shipped"
    try:
        # an agent's own settings (Claude Code settings.json, Codex config.toml) are imported on the fly
        imported = agent_source(spec) if spec != "@shipped" else None
        own = [imported, *read_paths(load)] if imported is not None else read_paths(paths)
        return from_files((shipped_sources() if shipped else []) + own, catalog)
    except DshError as exc:
        if spec != "@shipped" and shipped and any(d.code == "DSH210" for d in exc.diagnostics):
            hint = invalid_request(
                f"`{spec}` declares names the shipped files declare too",
                "to compare a complete tree of its own, pass --no-shipped",
            )
            raise DshError([*exc.diagnostics, hint], exc.sources) from None
        raise


def context_request(spec: str) -> Request:
    """A context side `key=value,…` → the Request it names."""
    fields: dict = {"with_services": set(), "without_services": set()}
    for part in filter(None, spec.split(",")):
        key, _, value = part.partition("=")
        if key not in CONTEXT_KEYS or not value:
            raise DshError(
                [
                    invalid_request(
                        f"`{spec}` is neither a path nor a context `key=value,…`",
                        f"context keys: {', '.join(sorted(CONTEXT_KEYS))}, e.g. `platform=linux,policy=read-only`",
                    )
                ]
            )
        if key == "plan" and value not in ("true", "false"):
            raise DshError(
                [invalid_request(f"invalid context `{spec}`: plan is `{value}`", "`plan` takes true or false")]
            )
        if key in ("with", "without"):
            fields[CONTEXT_FIELDS[key]].add(value)
        else:
            fields[key] = value == "true" if key == "plan" else value
    try:
        return Request(**fields)
    except InvalidRequest as exc:
        raise DshError(
            [
                invalid_request(
                    f"invalid context `{spec}`: {exc.errors()[0]['msg']}",
                    "each key takes one value; `plan` takes true or false",
                )
            ]
        )
