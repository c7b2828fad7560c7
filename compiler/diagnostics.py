"""The one registry of diagnostic codes, and the Diagnostic values every stage yields.

Codes: DSH1xx syntax, 2xx names, 3xx semantics and lint, 4xx request, 5xx catalog.
Messages are one lowercase line with names in backticks; suggestions go in `help`.
"""

from __future__ import annotations

from ._base.frozen import record
from .source import Span

TYPE_CHECKING = False  # no `import typing` (~4 ms of a hook): its names are for annotations only
if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator, Mapping

# code -> (severity, one-line summary). `dshc codes` prints this table.
CODES: dict[str, tuple[str, str]] = {
    "DSH101": ("error", "unexpected token"),
    "DSH102": ("error", "unexpected character"),
    "DSH103": ("error", "unterminated string"),
    "DSH104": ("error", "unexpected end of file (missing `}`?)"),
    "DSH105": ("error", "file is not valid UTF-8"),
    "DSH106": ("error", "file declares nothing"),
    "DSH107": ("error", "file cannot be read"),
    "DSH108": ("error", "a glob is not allowed here"),
    "DSH109": ("error", "invalid value"),
    "DSH110": ("error", "input exceeds a documented limit (size, length or nesting)"),
    "DSH201": ("error", "unknown package"),
    "DSH202": ("error", "unknown tool"),
    "DSH203": ("error", "unknown service"),
    "DSH204": ("error", "unknown preset"),
    "DSH205": ("error", "unknown host"),
    "DSH206": ("error", "unknown scope"),
    "DSH207": ("error", "unknown policy"),
    "DSH208": ("error", "unknown fact in a condition"),
    "DSH209": ("error", "unknown config key for the package"),
    "DSH210": ("error", "duplicate declaration"),
    "DSH211": ("error", "duplicate mount name in a preset"),
    "DSH212": ("error", "extends cycle"),
    "DSH213": ("error", "unknown platform"),
    "DSH214": ("error", "config value has the wrong type"),
    "DSH215": ("error", "missing required config key"),
    "DSH216": ("error", "unknown mode"),
    "DSH217": ("error", "unknown risk axis"),
    "DSH218": ("error", "declaration kind mismatch"),
    "DSH219": ("error", "unknown command class"),
    "DSH220": ("error", "`own NAME` is ambiguous: several packages define NAME"),
    "DSH301": ("error", "`run_code` cannot be restricted or registered by a scope"),
    "DSH302": ("warning", "mount condition can never hold"),
    "DSH303": ("warning", "restriction names a tool the scope does not inherit"),
    "DSH304": ("error", "two mounts register the same tool name in one preset"),
    "DSH305": ("error", "comparison of a fact with a value of the wrong type"),
    "DSH306": ("error", "a declaration is repeated inside one block"),
    "DSH307": ("warning", "rule is shadowed by a stricter rule"),
    "DSH308": ("warning", "rule can never match"),
    "DSH309": ("warning", "command pattern is a raw prefix (`ls*` also matches `lsblk`)"),
    "DSH315": ("warning", "policy runs commands unsandboxed where no OS sandbox is available"),
    "DSH316": ("warning", "path pattern can never match a canonical path"),
    "DSH317": ("warning", "deny on a command's text that the sandbox could hold for every process"),
    "DSH401": ("error", "a mounted package waits for a service the host does not provide"),
    "DSH402": ("error", "code presentation needs the `code-runtime` service"),
    "DSH403": ("error", "host has no preset roster"),
    "DSH404": ("error", "no preset and no host rows to compose"),
    "DSH405": ("error", "invalid request"),
    "DSH406": ("error", "unknown tool name"),
    "DSH407": ("error", "the command needs an optional extra that is not installed"),
    "DSH501": ("error", "catalog file is not valid JSON"),
    "DSH502": ("error", "catalog file violates the catalog schema"),
    "DSH503": ("error", "tool parameters are not a valid JSON Schema"),
    "DSH504": ("error", "duplicate tool definition id"),
    "DSH505": ("error", "package file not listed in the manifest"),
    "DSH506": ("error", "package contributes zero tools"),
    "DSH507": ("error", "manifest lists a package file that does not exist"),
    "DSH508": ("error", "package id does not match its file name"),
    "DSH509": ("error", "a catalog overlay clashes with the catalog it extends"),
    "DSH520": ("error", "invalid upstream MCP server declaration"),
    "DSH521": ("warning", "an upstream MCP tool is left out of its package"),
    "DSH522": ("warning", "no tool list of an upstream MCP server is known; its package has no tools yet"),
    "DSH523": ("error", "a risk override names a tool the upstream does not have"),
}

MAX_REPORTED = 10


@record
class Diagnostic:
    """A problem found in a source or the catalog: its code, message, place and a hint."""

    code: str
    message: str
    span: Span | None = None
    help: str | None = None
    # For catalog files the location is a JSON path, not a line.
    json_path: str | None = None
    path: str | None = None

    @property
    def severity(self) -> str:
        return CODES[self.code][0]

    @property
    def where(self) -> str | None:
        return self.span.path if self.span else self.path

    def sort_key(self):
        s = self.span
        return (self.where or "", s.line if s else 0, s.col if s else 0, self.code, self.message)


class DshError(Exception):
    """The input cannot be used; carries every diagnostic found (exit code 2) and the texts of
    the sources its spans point into (path -> text), so rendering can show the excerpt."""

    def __init__(self, diagnostics: Iterable[Diagnostic], sources: Mapping[str, str] | None = None):
        self.diagnostics = tuple(sorted(diagnostics, key=Diagnostic.sort_key))
        self.sources: Mapping[str, str] = sources or {}
        super().__init__("; ".join(d.message for d in self.diagnostics[:3]))

    def with_sources(self, sources: Mapping[str, str]) -> "DshError":
        """This error, knowing the texts its spans point into (the first owner to say wins)."""
        if not self.sources:
            self.sources = sources
        return self


def did_you_mean(name: str, candidates: Iterable[str]) -> str | None:
    from difflib import get_close_matches  # only when a name is unknown: not every process pays for it

    match = get_close_matches(name, sorted(set(candidates)), n=1, cutoff=0.6)
    return f"did you mean `{match[0]}`?" if match else None


def unknown(code: str, kind: str, name: str, candidates: Iterable[str], span: Span | None) -> Diagnostic:
    return Diagnostic(code, f"unknown {kind} `{name}`", span, did_you_mean(name, candidates))


def cannot_read(path: str, exc: Exception) -> Diagnostic:
    """DSH107 for a file that could not be opened or decoded."""
    reason = getattr(exc, "strerror", None) or exc.__class__.__name__
    return Diagnostic(
        "DSH107", f"cannot read `{path}`: {reason}", path=path, help="check that the path exists and is a readable file"
    )


def invalid_request(message: str, help: str, path: str | None = None) -> Diagnostic:
    """DSH405: the command's own arguments cannot be used; `help` says what would work."""
    return Diagnostic("DSH405", message, help=help, path=path)


def capped(diags: Iterable[Diagnostic], limit: int = MAX_REPORTED) -> tuple[list[Diagnostic], int]:
    ordered = sorted(diags, key=Diagnostic.sort_key)
    return ordered[:limit], max(0, len(ordered) - limit)


def iter_codes() -> Iterator[tuple[str, str, str]]:
    for code, (severity, summary) in sorted(CODES.items()):
        yield code, severity, summary
