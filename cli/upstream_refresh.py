"""`dshc upstream refresh [PATH…]`: start each declared upstream once, in the sandbox, and remember its tools.

In: declaration files (and --load). Out: one line per upstream — how many tools it listed and how it was
started, or why it was not — and each list kept in the user's cache, where every command that reads
declarations takes it from (`upstream_lists`). A `command` is whatever a file says, so it runs under the
`read-only` sandbox (it writes only dshc's private temp folder, and reaches the network only with
--network): listing tools needs no more. A `url` is only connected to. Exit 0 when every upstream answered,
1 when one did not (or could not be confined here), 2 when the files declare none.
"""

from __future__ import annotations

import os

from ..compiler.diagnostics import DshError, invalid_request
from ..compiler._base.frozen import replace
from .upstream_lists import known_tools, source_endpoints

MODE = "read-only"  # what a command that only lists its tools needs


def cmd_upstream(args, out, err) -> int:
    import anyio

    from ..compiler.program import read_paths

    endpoints = source_endpoints(read_paths(list(args.paths) + list(args.load)))
    if not endpoints:
        raise DshError(
            [
                invalid_request(
                    "the files declare no `upstream`", "name the .dsh files that declare them, as PATH or with --load"
                )
            ]
        )
    rows = anyio.run(_refresh_all, endpoints, args.network)
    for endpoint, tools, how in rows:
        if tools is not None:
            known_tools(endpoint, tools)
    if args.json:
        from .command_context import write_json

        write_json(
            out,
            {
                "upstreams": [
                    {
                        "name": e.name,
                        "answered": tools is not None,
                        "tools": sorted(t.get("name", "") for t in tools) if tools is not None else [],
                        "how": how,
                    }
                    for e, tools, how in rows
                ]
            },
        )
    else:
        for endpoint, tools, how in rows:
            said = f"{len(tools)} tool(s) remembered" if tools is not None else "no tool list"
            out.write(f"upstream `{endpoint.name}`: {said}; {how}\n")
    return 0 if all(tools is not None for _, tools, _ in rows) else 1


async def _refresh_all(endpoints, network: bool) -> list:
    import anyio

    found: dict = {}

    async def one(endpoint) -> None:
        found[endpoint.name] = await _refresh(endpoint, network)

    async with anyio.create_task_group() as group:
        for endpoint in endpoints:
            group.start_soon(one, endpoint)
    return [(e, *found[e.name]) for e in endpoints]


async def _refresh(endpoint, network: bool) -> tuple[list | None, str]:
    """(the tool list or None, how it was reached — or why it was not started)."""
    from .gateway import fetch_tools

    if endpoint.url is not None:
        tools = await fetch_tools(endpoint)
        return tools, f"connected to {endpoint.url} (no command runs)" + (
            "" if tools is not None else ", which did not answer `tools/list`"
        )
    try:
        confined, mechanism = _confined(endpoint, network)
    except Exception as exc:  # noqa: BLE001 - SandboxUnavailable or no private temp folder: never run bare
        return None, f"not started: it runs only in the sandbox, and {exc}"
    tools = await fetch_tools(confined)
    how = (
        f"started `{endpoint.command}` in the sandbox ({mechanism}: `sandbox {MODE}`, network "
        f"{'on' if network else 'off'})"
    )
    return tools, how if tools is not None else f"{how}; it did not answer `tools/list` (its own messages are above)"


def _confined(endpoint, network: bool):
    """(the endpoint as the sandbox launcher starts it, the mechanism's name); SandboxUnavailable where none
    confines here (the runtime's public entry: `runtime.sandbox.plan`)."""
    from ..runtime.sandbox import confinement_in, plan
    from .hook_sandbox import private_tmp

    tmp = private_tmp()
    conf = confinement_in(MODE, os.path.realpath(os.getcwd()), tmp, network=network)
    launch = plan(conf, [endpoint.command, *endpoint.args], -1)  # -1: no report fd (its stderr says why)
    # temp files go to the private folder, the one place the sandbox lets it write
    env = (*endpoint.env, *((name, tmp) for name in ("TMPDIR", "TMP", "TEMP")))
    return replace(endpoint, command=launch.argv[0], args=tuple(launch.argv[1:]), env=env), launch.mechanism
