"""The `.dshc` project file: which declarations, preset and policy a folder's agent runs under.

In: a folder (searched upward) or an explicit path. Out: a frozen Project with absolute paths.
The file is TOML:

    load = ["policy/team.dsh"]   # declaration files, relative to this file
    preset = "standard"          # host, platform, scope, policy likewise (all optional)
    policy = "team"
    log = "events.jsonl"         # event log for hook calls, relative to this file (optional: by default
                                 # the user's state folder, outside the workspace; "off" keeps none;
                                 # `{session}` in the name becomes the agent's session id)
    unmapped = "ask"             # ask | deny | defer: an agent tool with no catalog mapping that no rule names
    catalog = ["catalog/"]       # catalog overlays, relative to this file: their packages and services are
                                 # added to the shipped catalog (a string is one folder)
"""

from __future__ import annotations

import os

from . import user_cache
from ..common import json_io
from ..common.digest import sha256
from ._base.frozen import record

FILE_NAME = ".dshc"
KEYS = {"load", "preset", "host", "platform", "scope", "policy", "log", "unmapped", "catalog"}
LOG_OFF = "off"  # `log = "off"`: the hook keeps no event log
PARSED_PREFIX = "project-"  # parsed project files in the user's cache, by the hash of their bytes
PARSED_KEEP = 64


class ProjectError(ValueError):
    pass


@record(slots=False)
class Project:
    """A project file's settings (`.dshc`), or the flags that stand in for one."""

    path: str | None  # None: no project file; everything comes from flags
    root: str  # the workspace: the folder holding the file (or the agent's cwd)
    load: tuple[str, ...] = ()
    preset: str | None = None
    host: str | None = None
    platform: str | None = None
    scope: str | None = None
    policy: str | None = None
    log: str | None = None
    unmapped: str = "ask"
    catalog: tuple[str, ...] = ()  # overlay folders, absolute


def find(start: str) -> str | None:
    folder = os.path.abspath(start)
    while True:
        candidate = os.path.join(folder, FILE_NAME)
        if os.path.isfile(candidate):
            return candidate
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent


def read(path: str) -> Project:
    try:
        with open(path, "rb") as handle:
            raw = handle.read()
    except OSError as exc:
        raise ProjectError(f"cannot read {path}: {exc}") from None
    data = _parsed(path, raw)
    unknown = sorted(set(data) - KEYS)
    if unknown:
        raise ProjectError(f"{path}: unknown key(s) {', '.join(unknown)} (known: {', '.join(sorted(KEYS))})")
    root = os.path.dirname(os.path.abspath(path))
    load = data.get("load", [])
    if not isinstance(load, list) or not all(isinstance(p, str) for p in load):
        raise ProjectError(f"{path}: `load` is a list of paths")
    catalog = data.get("catalog", [])
    catalog = [catalog] if isinstance(catalog, str) else catalog
    if not isinstance(catalog, list) or not all(isinstance(p, str) for p in catalog):
        raise ProjectError(f"{path}: `catalog` is a folder or a list of folders")
    for key in KEYS - {"load", "catalog"}:
        if key in data and not isinstance(data[key], str):
            raise ProjectError(f"{path}: `{key}` is a string")
    unmapped = data.get("unmapped", "ask")
    if unmapped not in ("ask", "deny", "defer"):
        raise ProjectError(
            f"{path}: `unmapped` is `ask`, `deny` or `defer` (an unmapped tool is never allowed "
            "silently; `defer` leaves it to the agent's own permission rules)"
        )
    return Project(
        path,
        root,
        tuple(os.path.join(root, p) for p in load),
        data.get("preset"),
        data.get("host"),
        data.get("platform"),
        data.get("scope"),
        data.get("policy"),
        _log(root, data.get("log")),
        unmapped,
        tuple(os.path.join(root, p) for p in catalog),
    )


def _log(root: str, given: str | None) -> str | None:
    """The project's event log: a path relative to the project file, `off` (no log), or None (the hook's
    default: a log in the user's state folder)."""
    if not given:
        return None
    return LOG_OFF if given == LOG_OFF else os.path.join(root, given)


def _parsed(path: str, raw: bytes) -> dict:
    """The TOML of a project file. A hook reads the same small file on every tool call and
    tomllib's import alone is ~5 ms of each, so what these very bytes parse to is kept in the user's
    cache as JSON (plain data: strings and lists of them, all a valid file holds; anything else is
    parsed every time and refused below)."""
    name = f"{PARSED_PREFIX}{sha256(b'dshc-project-1' + raw).hexdigest()}.json"
    cached = user_cache.fetch(name)
    if cached is not None:
        try:
            data = json_io.loads(cached)
            if isinstance(data, dict):
                return data
        except ValueError:
            pass  # a corrupt entry: parse the file again and replace it
    import tomllib

    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ProjectError(f"cannot read {path}: {exc}") from None
    if all(isinstance(v, str) or (isinstance(v, list) and all(isinstance(i, str) for i in v)) for v in data.values()):
        user_cache.store(name, json_io.dumps(data).encode("utf-8"), PARSED_PREFIX, PARSED_KEEP)
    return data


def locate(explicit: str | None, cwd: str | None, root: str | None = None) -> Project:
    """The explicit file; else, for a caller that knows its project folder `root`, the nearest `.dshc` from
    `root` upward; else the outermost from cwd upward (its folder is then the project folder); else an empty
    project rooted at `root` or cwd.

    A `.dshc` between cwd and the project folder is refused (ProjectError naming it): a file that appeared
    below the project folder — planted by a command the policy let run — would otherwise choose the policy of
    every call made from there."""
    if explicit:
        return read(explicit)
    if root is None:
        outermost = _outermost(cwd) if cwd else None
        if outermost is None:
            return Project(None, os.path.abspath(cwd or os.getcwd()))
        root = os.path.dirname(outermost)
    root = os.path.abspath(root)
    planted = below(cwd, root) if cwd else None
    if planted is not None:
        raise ProjectError(
            f"`{planted}` lies below the project folder `{root}`, whose `.dshc` alone is trusted: "
            "a project file that appears below it could widen the policy, so the call is refused; "
            f"remove it, or move its settings to `{os.path.join(root, FILE_NAME)}`"
        )
    path = find(root)
    return read(path) if path else Project(None, root)


def _outermost(start: str) -> str | None:
    """The `.dshc` farthest up from `start`, or None."""
    found = None
    folder = os.path.abspath(start)
    while True:
        if os.path.isfile(os.path.join(folder, FILE_NAME)):
            found = os.path.join(folder, FILE_NAME)
        parent = os.path.dirname(folder)
        if parent == folder:
            return found
        folder = parent


def below(cwd: str, root: str) -> str | None:
    """The deepest `.dshc` in cwd or a folder between it and `root` (`root`'s own excluded), or None, also when
    cwd is not inside `root`. Compared through links: a linked cwd is where it leads."""
    real_root = os.path.realpath(root)
    folder = os.path.realpath(os.path.join(real_root, cwd))
    if not folder.startswith(real_root.rstrip(os.sep) + os.sep):
        return None
    while folder != real_root:
        candidate = os.path.join(folder, FILE_NAME)
        if os.path.lexists(candidate):  # a link or a folder by that name too: nothing below the root decides
            return candidate
        folder = os.path.dirname(folder)
    return None
