"""`*.test.toml` policy test files → frozen TestFile values, every key checked and located.

In: a file's bytes. Out: a TestFile (its `load` list, its cases with their context, expected
views, gate verdicts and call decisions, each with a `path:line:col`), or a DshError (exit 2)
pointing at the offending line. tomllib reports no positions for values, so lines are found
by reading the headers and keys back from the text.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..compiler.diagnostics import Diagnostic, DshError
from ..compiler.request import CONTEXT_FIELDS
from ..compiler.source import Span

if TYPE_CHECKING:
    import tomllib  # at run time imported by `parse_test_file` alone

SUFFIX = ".test.toml"
EFFECTS = ("allow", "ask", "deny", "conditional")
GATES = ("registered", "visible", "projected", "allowed", "ready")
DEFAULT_WORKSPACE = "/workspace"  # a fixed folder, so path rules decide the same wherever the tests run

# context key -> (TOML type, Request field); a case's keys override the file's [context]
_TOML_TYPES = {"plan": bool, "with": list, "without": list, "flags": list}  # every other key is a string
CONTEXT_KEYS: dict[str, tuple[type | tuple, str]] = {
    key: (_TOML_TYPES.get(key, str), field) for key, field in CONTEXT_FIELDS.items()
}
CASE_KEYS = {"name", "view", "includes", "excludes", "explain", "call", "earlier", "workspace", *CONTEXT_KEYS}
EARLIER_KEYS = {"id", "tool", "args", "decision"}  # `[[test.earlier]]`: a call made before the case's calls
EARLIER_DECISIONS = ("allow", "ask", "deny")
CALL_KEYS = {"tool", "args", "expect", "gate", "by"}
FILE_KEYS = {"load", "context", "test"}


@dataclass(frozen=True)
class Call:
    tool: str
    args: dict
    expect: str
    gate: str | None
    by: str | None
    span: Span
    keys: dict = field(default_factory=dict, compare=False)  # key -> Span, for relocating errors


@dataclass(frozen=True)
class Case:
    name: str
    context: dict  # Request fields
    view: tuple[str, ...] | None
    includes: tuple[str, ...]
    excludes: tuple[str, ...]
    explain: dict  # tool -> first failing gate | "available"
    calls: tuple[Call, ...]
    workspace: str
    span: Span
    keys: dict = field(default_factory=dict, compare=False)  # key (or explain tool) -> Span
    # the session's earlier calls, (id, tool, args, decision) each: what `session.*` conditions read
    earlier: tuple[tuple[str, str, dict, str], ...] = ()

    def asserted_tools(self, wire: tuple[str, ...] = ()) -> set[str]:
        """Every tool this case states something about (the whole wire when it pins the view)."""
        return {
            *(wire if self.view is not None else ()),
            *self.includes,
            *self.excludes,
            *self.explain,
            *(c.tool for c in self.calls),
        }


@dataclass(frozen=True)
class TestFile:
    path: str
    text: str
    load: tuple[str, ...]  # declaration files, relative to the current folder
    cases: tuple[Case, ...]


def find_test_files(paths) -> list[str]:
    """PATH arguments → test files: a folder is searched for `*.test.toml`, a file is taken as named."""
    found: list[str] = []
    for path in paths:
        if os.path.isdir(path):
            for folder, dirs, files in os.walk(path):
                dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in ("node_modules", "__pycache__"))
                found += [os.path.join(folder, f) for f in sorted(files) if f.endswith(SUFFIX)]
        else:
            found.append(path)
    return found


def read_test_file(path: str) -> TestFile:
    try:
        with open(path, "rb") as handle:
            data = handle.read()
        text = data.decode("utf-8")
    except OSError as exc:
        raise DshError(
            [
                Diagnostic(
                    "DSH107",
                    f"cannot read `{path}`: {exc.strerror or exc}",
                    path=path,
                    help="check that the path exists and is a readable file",
                )
            ]
        )
    except UnicodeDecodeError:
        raise DshError(
            [Diagnostic("DSH105", "byte sequence is not valid UTF-8", Span(path, 1, 1, 1, 1), "save the file as UTF-8")]
        )
    return parse_test_file(path, text)


def parse_test_file(path: str, text: str) -> TestFile:
    import tomllib  # loaded by `dshc test` alone, not by every command that registers its arguments

    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise DshError([_toml_error(path, text, exc)], {path: text})
    reader = _Reader(path, text)
    result = reader.file(data)
    if reader.problems:
        raise DshError(reader.problems, {path: text})
    return result


def _toml_error(path: str, text: str, exc: tomllib.TOMLDecodeError) -> Diagnostic:
    found = re.search(r"\(at line (\d+), column (\d+)\)", str(exc))
    message = re.sub(r"\s*\(at (line \d+, column \d+|end of document)\)", "", str(exc))
    if found:
        line, col = int(found.group(1)), int(found.group(2))
    else:  # "at end of document"
        line = text.count("\n") + 1
        col = len(text.rsplit("\n", 1)[-1]) + 1
    return Diagnostic(
        "DSH109",
        f"test file is not valid TOML: {message[:1].lower() + message[1:]}",
        Span(path, line, col, line, col + 1),
        'see `docs/language.md`, section "Test files"',
    )


class _Reader:
    """Checks one parsed file; every problem is collected with the line it sits on."""

    def __init__(self, path: str, text: str):
        self.path, self.text = path, text
        self.lines = text.splitlines()
        self.problems: list[Diagnostic] = []
        self.headers = [
            (i + 1, m.group(1).replace(" ", ""))
            for i, line in enumerate(self.lines)
            if (m := re.match(r"\s*\[\[?\s*([\w.\s\"-]+?)\s*\]\]?\s*(#.*)?$", line))
        ]

    # --- locations ---
    def _span(self, line: int, col: int = 1, width: int = 1) -> Span:
        return Span(self.path, line, col, line, col + max(width, 1))

    def _nth_header(self, name: str, n: int, start: int = 0, stop: int | None = None) -> int | None:
        rows = [
            line for line, header in self.headers if header == name and line > start and (stop is None or line < stop)
        ]
        return rows[n] if n < len(rows) else None

    def _next_header(self, after: int) -> int | None:
        return next((line for line, _ in self.headers if line > after), None)

    def _key(self, key: str, start: int, stop: int | None) -> Span | None:
        """The span of `key = …` on a line in [start, stop), else None."""
        pattern = re.compile(r"\s*(\"?)" + re.escape(key) + r"\1\s*=")
        for number in range(max(start, 1), (stop or len(self.lines) + 1)):
            line = self.lines[number - 1]
            if pattern.match(line):
                col = len(line) - len(line.lstrip()) + 1
                return self._span(number, col, len(key))
        return None

    def problem(self, message: str, span: Span, help: str | None = None) -> None:
        self.problems.append(Diagnostic("DSH109", message, span, help))

    # --- structure ---
    def file(self, data: dict) -> TestFile:
        top = self._span(1)
        for key in sorted(set(data) - FILE_KEYS):
            self.problem(
                f"unknown key `{key}` in a test file",
                self._key(key, 1, None) or top,
                "a test file has `load`, `[context]` and `[[test]]` cases",
            )
        written = self._strings(data.get("load", []), "load", self._key("load", 1, None) or top)
        base = os.path.dirname(self.path)
        load = tuple(entry if os.path.isabs(entry) else os.path.join(base, entry) for entry in written)
        context_line = self._nth_header("context", 0) or 1
        context = self._context(data.get("context", {}), context_line, self._next_header(context_line), "[context]")
        cases = data.get("test", [])
        if not isinstance(cases, list) or not cases:
            self.problem(
                "a test file needs at least one `[[test]]` case",
                top,
                "add `[[test]]` with a `name`, a context and what you expect",
            )
            cases = []
        read = tuple(self._case(i, case, context) for i, case in enumerate(cases) if isinstance(case, dict))
        return TestFile(self.path, self.text, load, read)

    def _case(self, index: int, data: dict, defaults: dict) -> Case:
        start = self._nth_header("test", index) or 1
        stop = self._nth_header("test", index + 1)
        span = self._span(start, 1, len(self.lines[start - 1].strip()) if self.lines else 1)

        own_keys_end = self._next_header(start)  # a case's own keys sit under `[[test]]`, before its sub-tables

        def where(key: str) -> Span:
            return self._key(key, start, own_keys_end) or span

        for key in sorted(set(data) - CASE_KEYS):
            self.problem(
                f"unknown key `{key}` in a test case",
                where(key),
                "a case has `name`, context keys (" + ", ".join(CONTEXT_KEYS) + "), `view`, `includes`, "
                "`excludes`, `[test.explain]`, `workspace`, `[[test.call]]` and `[[test.earlier]]`",
            )
        keys = {key: where(key) for key in data}
        name = data.get("name")
        if not isinstance(name, str) or not name:
            self.problem("a test case needs a `name` (a string)", where("name"))
            name = f"case {index + 1}"
        context = {
            **defaults,
            **self._context(
                {k: v for k, v in data.items() if k in CONTEXT_KEYS}, start, own_keys_end, f"case `{name}`"
            ),
        }
        view = data.get("view")
        view = tuple(self._strings(view, "view", where("view"))) if view is not None else None
        includes = tuple(self._strings(data.get("includes", []), "includes", where("includes")))
        excludes = tuple(self._strings(data.get("excludes", []), "excludes", where("excludes")))
        explain = data.get("explain", {})
        explain_line = self._nth_header("test.explain", 0, start, stop)
        if not isinstance(explain, dict):
            self.problem('`explain` is a table: tool = "gate"', where("explain"))
            explain = {}
        for tool, gate in explain.items():
            at = (self._key(tool, explain_line, self._next_header(explain_line)) if explain_line else None) or where(
                "explain"
            )
            keys[f"explain.{tool}"] = at
            if gate not in (*GATES, "available"):
                self.problem(
                    f"`{tool}` expects `{gate}`, which is not a gate",
                    at,
                    "write `available`, or the first gate that stops it: " + ", ".join(GATES),
                )
        workspace = data.get("workspace", DEFAULT_WORKSPACE)
        if not isinstance(workspace, str):
            self.problem("`workspace` is a folder path (a string)", where("workspace"))
            workspace = DEFAULT_WORKSPACE
        elif "workspace" in data and not os.path.isabs(workspace):
            workspace = os.path.join(os.path.dirname(os.path.abspath(self.path)), workspace)
        calls = data.get("call", [])
        if not isinstance(calls, list):
            self.problem("`call` is a list of tables: `[[test.call]]`", where("call"))
            calls = []
        read_calls = tuple(self._call(j, call, start, stop, where("call")) for j, call in enumerate(calls))
        earlier = self._earlier(data.get("earlier", []), where("earlier"))
        if view is None and not includes and not excludes and not explain and not read_calls:
            self.problem(
                f"case `{name}` expects nothing",
                span,
                "state a `view`, `includes`, `excludes`, `[test.explain]` or a `[[test.call]]`",
            )
        return Case(name, context, view, includes, excludes, dict(explain), read_calls, workspace, span, keys, earlier)

    def _earlier(self, data, at: Span) -> tuple:
        """`[[test.earlier]]`: `tool`, `args`, optionally `decision` (allow | ask | deny, default allow) and `id`."""
        if not isinstance(data, list) or not all(isinstance(each, dict) for each in data):
            self.problem("`earlier` is a list of tables: `[[test.earlier]]`", at)
            return ()
        found = []
        for number, each in enumerate(data, start=1):
            for key in sorted(set(each) - EARLIER_KEYS):
                self.problem(
                    f"unknown key `{key}` in an earlier call",
                    at,
                    "an earlier call has `tool`, `args`, and optionally `decision` and `id`",
                )
            tool, args = each.get("tool"), each.get("args", {})
            decision, call_id = each.get("decision", "allow"), each.get("id", f"earlier-{number}")
            if not isinstance(tool, str) or not tool or not isinstance(args, dict) or not isinstance(call_id, str):
                self.problem("an earlier call needs a `tool` (a string), `args` (a table) and a string `id`", at)
            elif decision not in EARLIER_DECISIONS:
                self.problem(f"an earlier call's `decision` is one of {', '.join(EARLIER_DECISIONS)}", at)
            else:
                found.append((call_id, tool, args, decision))
        return tuple(found)

    def _call(self, index: int, data, start: int, stop: int | None, fallback: Span) -> Call:
        line = self._nth_header("test.call", index, start - 1, stop)
        end = self._next_header(line) if line else None
        if end is not None and stop is not None:
            end = min(end, stop)
        span = self._span(line, 1, len(self.lines[line - 1].strip())) if line else fallback

        def where(key: str) -> Span:
            return (self._key(key, line, end) if line else None) or span

        if not isinstance(data, dict):
            self.problem("a call is a table with `tool`, `args` and `expect`", span)
            return Call("", {}, "deny", None, None, span)
        for key in sorted(set(data) - CALL_KEYS):
            self.problem(
                f"unknown key `{key}` in a call",
                where(key),
                "a call has `tool`, `args`, `expect` and optionally `gate` and `by`",
            )
        tool, args, expect = data.get("tool"), data.get("args", {}), data.get("expect")
        if not isinstance(tool, str) or not tool:
            self.problem("a call needs a `tool` (a string)", where("tool"))
            tool = ""
        if not isinstance(args, dict):
            self.problem("`args` is a table of the call's arguments", where("args"))
            args = {}
        if expect not in EFFECTS:
            self.problem(
                f"a call's `expect` is one of {', '.join(EFFECTS)}" + (f", not `{expect}`" if expect else ""),
                where("expect"),
            )
            expect = "deny"
        gate = data.get("gate")
        if gate is not None and gate not in GATES:
            self.problem(f"`gate` is one of {', '.join(GATES)}, not `{gate}`", where("gate"))
        by = data.get("by")
        if by is not None and not isinstance(by, str):
            self.problem("`by` is a rule id such as `workspace-write/ask@9`", where("by"))
            by = None
        return Call(tool, args, expect, gate, by, span, {k: where(k) for k in data})

    def _context(self, data, start: int, stop: int | None, what: str) -> dict:
        out: dict[str, Any] = {}
        if not isinstance(data, dict):
            self.problem(f"{what} is a table of context keys", self._span(start))
            return out
        for key, value in data.items():
            at = self._key(key, start, stop) or self._span(start)
            if key not in CONTEXT_KEYS:
                self.problem(f"unknown context key `{key}` in {what}", at, "context keys: " + ", ".join(CONTEXT_KEYS))
                continue
            kind, field_name = CONTEXT_KEYS[key]
            if kind is list:
                value = self._strings(value, key, at)
            elif not isinstance(value, kind):
                self.problem(f"`{key}` takes a {'boolean' if kind is bool else 'string'}", at)
                continue
            out[field_name] = value
        return out

    def _strings(self, value, key: str, at: Span) -> list[str]:
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            return list(value)
        self.problem(f"`{key}` is a list of strings", at)
        return []
