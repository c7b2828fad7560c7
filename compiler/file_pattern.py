"""A file a shell command writes or reads but cannot fully name, as a pattern the policy's file rules read.

`cp "$f" .claude/` writes `.claude/NAME` for a NAME the line does not spell; `sed -i … *.py` every `.py`
file of the directory; `cd d; cp a b` the file `b` of a directory the line does not follow; `grep -r K src`
reads every file below src. Such an access is decided as a `write` (`read`) of a `FilePattern`: a `deny`
or `ask` whose glob *may* match one of its files applies (`may_match`: the two patterns' languages meet),
an `allow` only one every file surely matches (`surely_matches`). A rule on the pattern's place (`inside
workspace`) reads the directory every file lies in (`inside`), when there is one.

A pattern is a tuple of items: literal characters (a `str` each run) and four wildcards — `NAME`, any run
of characters within one file name (a shell glob's `*` or `[…]`, the unknown name of a copied file);
`ONE`, one character of a name (`?`); `ANY`, any run at all (a variable's value, which may hold `/` and
`..`); `DEEP`, any run of names below a directory, never `..` (the files `grep -r DIR` reads). A policy
glob's `*` is any run and its `?` any one character (`globs`).
"""

from __future__ import annotations

import os
from _collections_abc import (
    Mapping,
)  # collections.abc's own source, loaded at start-up (collections.abc loads collections)

from .paths import CanonicalPath, canonical_path, path_inside


NAME, ONE, ANY = "\x00name", "\x00one", "\x00any"  # never a file name's text: names cannot hold NUL
DEEP = "\x00deep"  # any run of names below a directory, never `..` (what `grep -r DIR` reads)
ANY_ONE = "\x00anyone"  # a policy glob's `?`: any one character, `/` too
WILDCARDS = (NAME, ONE, ANY, DEEP, ANY_ONE)
_RUNS = (NAME, ANY, DEEP)
MAX_STATES = 200_000  # pairs of positions compared; beyond, a pattern is taken to meet every glob


def display(items) -> str:
    """The pattern as a reason shows it: `*` a name's run, `?` one character, `**` any run."""
    return "".join({NAME: "*", ONE: "?", ANY: "**", DEEP: "**"}.get(item, item) for item in items)


def _flatten(items) -> list:
    """One entry per character or wildcard."""
    out: list = []
    for item in items:
        if item in WILDCARDS:
            if not (item in _RUNS and out and out[-1] == item):  # `**` is `*`
                out.append(item)
        else:
            out.extend(item)
    return out


def glob_items(pattern: str) -> list:
    """A policy glob's items: `*` any run, `?` any one character (not a name's: `*` crosses `/`)."""
    out: list = []
    for char in pattern:
        if char == "*":
            if not (out and out[-1] == ANY):
                out.append(ANY)
        else:
            out.append(ANY_ONE if char == "?" else char)
    return out


def _meets(one, other) -> bool:
    """Whether some character is taken by both items (each a character or a wildcard)."""
    wild_one, wild_other = one.startswith("\x00"), other.startswith("\x00")
    if wild_one and wild_other:
        return True  # every wildcard takes some character other than `/`
    if wild_one or wild_other:
        char, wild = (other, one) if wild_one else (one, other)
        return char != "/" or wild in (ANY, DEEP, ANY_ONE)
    return one == other


def languages_meet(left: list, right: list) -> bool:
    """Whether some text matches both flattened patterns: a walk over pairs of positions."""
    if (len(left) + 1) * (len(right) + 1) > MAX_STATES:
        return True  # fail closed: a deny may match
    seen, stack = set(), [(0, 0)]
    end = (len(left), len(right))
    while stack:
        state = stack.pop()
        if state in seen:
            continue
        seen.add(state)
        if state == end:
            return True
        i, j = state
        a = left[i] if i < len(left) else None
        b = right[j] if j < len(right) else None
        if a in _RUNS:
            stack.append((i + 1, j))  # the run takes nothing more
        if b in _RUNS:
            stack.append((i, j + 1))
        if a is not None and b is not None and _meets(a, b):  # one character taken by both
            stack.append((i if a in _RUNS else i + 1, j if b in _RUNS else j + 1))
    return False


class FilePattern(str):
    """The pattern's display text (`/ws/src/*.py`), its forms as item lists (relative inside the
    workspace and absolute, as a canonical path has two), and the directory every file it stands for
    lies in (`within`, a canonical path), or None when a file may be anywhere."""

    forms: tuple
    within: CanonicalPath | None

    def __new__(cls, forms: tuple, within: CanonicalPath | None):
        made = super().__new__(cls, display(forms[0]))
        made.forms, made.within = forms, within
        return made

    def may_match(self, glob: str) -> bool:
        pattern = glob_items(glob)
        # a relative form names files inside the workspace, whose text never starts with `/`: an absolute
        # glob (`~/.ssh/*`) is met by the absolute form or not at all
        return any(
            languages_meet(_flatten(form), pattern) for form in self.forms if not (glob[:1] == "/" and _relative(form))
        )

    def surely_matches(self, glob: str) -> bool:
        """Every file matches `glob`: told for a literal prefix and suffix around one `*` (`src/*`, `*.py`,
        `src/*.py`); False for any other glob (an allow then does not cover the write)."""
        if glob.count("*") != 1 or "?" in glob:
            return False
        start, end = glob.split("*")
        for form in self.forms:
            flat = _flatten(form)
            if not any(item in WILDCARDS for item in flat):
                continue
            first = next(i for i, item in enumerate(flat) if item in WILDCARDS)
            last = max(i for i, item in enumerate(flat) if item in WILDCARDS)
            head, tail = "".join(flat[:first]), "".join(flat[last + 1 :])
            if head.startswith(start) and tail.endswith(end):
                return True
        return False

    def inside(self, workspace: str) -> bool | None:
        """True when every file lies inside the workspace, False when none does, None when unknown."""
        if self.within is None:
            return None
        if path_inside(self.within, workspace):
            return True
        # the workspace inside the directory: some files may be in it
        return None if path_inside(os.path.realpath(workspace), self.within.absolute) else False


def _relative(form) -> bool:
    """A form made relative to the workspace: it starts with neither `/` nor `ANY` (any file at all)."""
    first = _flatten(form)[:1]
    return first != ["/"] and first != [ANY]


def pattern_path(items: tuple, workspace: str | None, base: str | None = None) -> FilePattern:
    """The pattern made canonical as a path is: its literal directory (up to the last `/` before the
    first wildcard) resolved against the workspace (`paths.canonical_path`), the rest kept. A pattern
    with `ANY` in it may be any file ending as it ends: no directory holds it."""
    flat = _flatten(items)
    if ANY in flat:  # `$d/x` is `x` when `$d` is `.`: the run may take the `/` too
        last = max(i for i, item in enumerate(flat) if item == ANY)
        rest = flat[last + 1 :]
        return FilePattern(((ANY, *(rest[1:] if rest[:1] == ["/"] else rest)),), None)
    first = next((i for i, item in enumerate(flat) if item in WILDCARDS), len(flat))
    cut = "".join(flat[:first]).rfind("/")
    directory = "".join(flat[:cut]) if cut > 0 else ("/" if cut == 0 else ".")
    rest = flat[cut + 1 :]
    made = canonical_path(directory, workspace, base)
    if not isinstance(made, CanonicalPath):
        if workspace is not None or "\x00" in made:  # a name the file system cannot take: no place to read
            return FilePattern(((ANY,),), None)
        made = CanonicalPath(made, made)  # already normal, no workspace to resolve it against
    forms = []
    for text in dict.fromkeys(made.forms()):
        head = "" if text == "." else (text.rstrip("/") + "/")
        forms.append((*head, *rest))
    # a literal `.` or `..` after the directory would move the files out of it
    spelled = "".join("x" if item in WILDCARDS else item for item in rest)
    dotted = any(part in (".", "..") for part in spelled.split("/"))
    return FilePattern(tuple(forms), None if dotted else made)


def canonical_args(args, names, workspace: str | None):
    """`args` with every path parameter in `names` made canonical (other values untouched)."""
    if not names or not (type(args) is dict or isinstance(args, Mapping)):  # a dict skips the ABC's check
        return args
    out = None
    for name in names:
        value = args.get(name)
        # a pattern or a path made canonical already (a split call's parts are) is not resolved again
        if isinstance(value, str) and type(value) is not FilePattern and type(value) is not CanonicalPath:
            made = canonical_path(value, workspace)
            if made is value:
                continue
            if out is None:
                out = dict(args)
            out[name] = made
    return args if out is None else out
