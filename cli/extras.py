"""Optional extras: which `pip install 'dshc[EXTRA]'` brings the modules a command needs. In: a
ModuleNotFoundError (or an extra to check before use); out: DSH407 naming the extra to install.

The core install compiles, explains, decides, checks, formats, diffs, verifies, tests, runs and
answers the Claude Code hook; servers, the explorer, the language server, the PostgreSQL log and
signed bundles are extras.
"""

from __future__ import annotations

from ..compiler.diagnostics import Diagnostic, DshError

# extra -> the top-level modules it installs that dshc imports (pyproject.toml lists the packages)
EXTRAS = {
    "serve": ("mcp", "mcp_types", "anyio", "starlette", "uvicorn", "prometheus_client"),
    "ui": ("starlette", "uvicorn"),
    "lsp": ("pygls", "lsprotocol"),
    "postgres": ("psycopg",),
    "bundles": ("cryptography",),
}
_COMMAND_EXTRA = {"ui": "ui", "lsp": "lsp", "build": "bundles"}  # where a module is in more than one extra


def extra_of(module: str, command: str | None = None) -> str | None:
    """The extra that installs `module` (a dotted name's top level), as `command` needs it."""
    top = module.split(".")[0]
    wanted = _COMMAND_EXTRA.get(command or "")
    if wanted is not None and top in EXTRAS[wanted]:
        return wanted
    return next((extra for extra, modules in EXTRAS.items() if top in modules), None)


def missing_extra(extra: str, module: str, what: str) -> DshError:
    """DSH407: `what` (a command, a feature) needs `module`, which `extra` installs."""
    return DshError(
        [
            Diagnostic(
                "DSH407",
                f"{what} needs the optional extra `{extra}`, which is not installed (no module `{module}`)",
                help=f"pip install 'dshc[{extra}]'  (or 'dshc[all]')",
            )
        ]
    )


def translated(exc: ModuleNotFoundError, command: str | None = None) -> BaseException:
    """DSH407 for a module of an extra; the error itself for any other (a bug: a core module is missing)."""
    extra = extra_of(exc.name or "", command)
    what = f"`dshc {command}`" if command else "this command"
    return exc if extra is None else missing_extra(extra, (exc.name or "").split(".")[0], what)


def require(extra: str, what: str) -> None:
    """DSH407 now, before any work, when a module of `extra` cannot be imported for `what`."""
    import importlib.util

    for module in EXTRAS[extra]:
        try:
            found = importlib.util.find_spec(module) is not None
        except ValueError:  # in sys.modules without a spec: present
            found = True
        if not found:
            raise missing_extra(extra, module, what)
