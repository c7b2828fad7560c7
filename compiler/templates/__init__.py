"""jinja2 templates for human renderings (catalog documentation)."""

from __future__ import annotations

import json
from functools import lru_cache

from jinja2 import Environment, PackageLoader, StrictUndefined


def _show(value) -> str:
    return "—" if value is None else f"`{json.dumps(value)}`"


def _params(properties, required) -> str:
    if not properties:
        return "—"
    required = set(required or ())
    return ", ".join(f"`{name}`" + ("" if name in required else "?") for name in properties)


@lru_cache(maxsize=1)
def environment() -> Environment:
    env = Environment(
        loader=PackageLoader("dshc.compiler", "templates"),
        undefined=StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,
    )
    env.filters["code"] = lambda v: f"`{v}`"
    env.filters["show"] = _show
    env.filters["params"] = _params
    return env


def render_template(name: str, **context) -> str:
    return environment().get_template(name).render(**context)
