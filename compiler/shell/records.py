"""What reading a command line gives (`Segment`, `FileAccess`, `Analysis`), the limits of one reading,
the two ways a reading stops (the line does not parse; a command is opaque), and the state the walk's
mixins share (`_WalkState`)."""

from __future__ import annotations

from .._base.frozen import record

TYPE_CHECKING = False  # no `import typing` (~4 ms of a hook): its names are for annotations only
if TYPE_CHECKING:
    from ..shell_data import Knowledge, Program
    from ..shell_options import OptionReading
    from .words import _Word

MAX_DEPTH = 16  # nesting of command substitutions and `sh -c` strings
MAX_COMMAND_CHARS = 100_000  # beyond: the whole command is opaque
MAX_SEGMENTS = 1_000  # beyond: the whole command is opaque


@record(slots=False)
class Segment:
    """One simple command the shell would run.

    `opaque`: what runs is not known (any deny may match, no allow covers it). `hazard`: the argv
    is known, but the command runs code or changes files in ways no pattern can see, so no allow
    covers it. Words from `literal` on are expansions (`$X`) whose value is unknown. For a
    wrapper (`sudo …`) `wraps` is where the wrapped command starts; the wrapped one is its own
    segment too. `deny_only`: a command a runner runs (`uv run …`): its denies and asks apply, and
    an allow of the runner's line covers it.
    """

    argv: tuple[str, ...]
    opaque: bool = False
    reason: str = ""
    hazard: str = ""
    literal: int | None = None
    wraps: int | None = None
    base: str = ""  # a program run by a path outside the system directories: its basename, for denies
    deny_only: bool = False
    redirects: tuple[str, ...] = ()  # the command's redirections as written (`>>`, `.claude/f`; `3<.env`)
    # the command read by its program's option grammar (`shell_options`), on the deny-only part that adds
    # that reading: a deny or ask pattern written with options also meets the same options spelled otherwise
    options: OptionReading | None = None

    @property
    def text(self) -> str:
        return " ".join(self.argv)

    @property
    def literal_words(self) -> int:
        return len(self.argv) if self.literal is None else self.literal

    @property
    def allowable(self) -> bool:
        return not self.opaque and not self.hazard

    @property
    def plain(self) -> bool:
        """Literal words run by name, nothing hidden: every glob reads it as its text, on either side
        (`segment_matches` is then `glob_match(pattern, text, shell=True)`)."""
        return self.allowable and self.literal_words == len(self.argv) and not self.base and self.options is None


@record(slots=False)
class FileAccess:
    """A redirection or a file-writing option: decided like a `read`/`write` of `path`."""

    kind: str  # "read" | "write"
    path: str
    pattern: tuple = ()  # a file the line cannot name, as `file_pattern` items (`path` shows it)
    why: str = ""  # why the access may be to any file, when no word of the line names it (a branch switch)
    # every file below a directory, read because it is there (`grep -r x src`, `git diff`), or any file a branch
    # switch rewrites, not named: the rule layer may leave to the sandbox what it enforces (`policy.deferral`)
    tree: bool = False


@record(slots=False)
class Analysis:
    segments: tuple[Segment, ...]
    files: tuple[FileAccess, ...] = ()


class _Unparseable(Exception):
    pass


class _Opaque(Exception):
    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


class _WalkState:
    """The base of the walk's mixins: the walker's state, set in `walk._Walker.__init__`, that each mixin
    reads and records on; and, for type checkers only, the methods one mixin calls on another's."""

    data: Knowledge
    found: list  # `walk._Found`s: each segment with its place (not imported: walk imports this module)
    # (kind, path, order, file pattern items or () for a name) before anchoring
    files: list[tuple]
    file_reasons: dict[int, str]
    trees: set[tuple]
    chdirs: int
    head_cd: str | None
    cd_targets: list[str | None]
    line: bytes
    runners: int
    redirects: tuple[str, ...]
    seen: list[tuple[int, int]]  # the byte ranges of the line being walked that its readings read

    if TYPE_CHECKING:

        def emit(
            self,
            order: tuple,
            argv: list[str],
            opaque: bool = False,
            reason: str = "",
            hazard: str = "",
            literal: int | None = None,
            wraps: int | None = None,
            deny_only: bool = False,
        ) -> None: ...
        def simple(self, words: list[_Word], depth: int, order: tuple, env_hazard: str = "") -> None: ...
        def nested_shell(self, text: str, depth: int, order: tuple) -> None: ...
        def command_line_value(self, variable: str, value: _Word, depth: int, order: tuple) -> None: ...
        def changes_directory(self, target: str | None = None) -> None: ...
        def read_files(
            self, operands: list[_Word], recursive: bool, order: tuple, names: tuple = (), tree: bool = False
        ) -> None: ...
        def written_files(
            self,
            name: str,
            row: Program,
            operands: list[_Word],
            into: list[_Word],
            written_with: bool,
            order: tuple,
            recursive: bool = False,
        ) -> str: ...
        def archive_files(
            self,
            row: Program,
            archived: dict,
            archives: list[_Word],
            operands: list[_Word],
            member_dir: _Word | None,
            order: tuple,
        ) -> None: ...
        def tree_rewritten(self, words: list[_Word], order: tuple) -> None: ...
        def written_anywhere(self, why: str, order: tuple) -> None: ...
        def written_below(self, word: _Word, order: tuple) -> None: ...
