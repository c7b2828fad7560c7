"""Changes of directory in a line (`cd`, `pushd`, `git -C`), and the reading's result: each relative file
placed where it may be once the line has moved."""

from __future__ import annotations

import posixpath

from ..file_pattern import ANY, display
from ..patterns import Pattern
from .records import Analysis, FileAccess, _WalkState
from .words import _unknown, _Word

MAX_CDS = 3  # changes of directory followed in one line (2**3 candidate directories)
# a line whose changes of directory are not followed: it may repeat one (a loop, a function) or a cd may go
# elsewhere than its text says (`CDPATH`)
_UNFOLLOWED = Pattern(r"\b(?:for|while|until|select|function|CDPATH)\b|\(\s*\)")


class _Directories(_WalkState):
    """The walker's changes of directory and its result (mixed into `walk._Walker`)."""

    def changes_directory(self, target: str | None = None) -> None:
        self.chdirs += 1
        self.cd_targets.append(target)

    def candidate_dirs(self) -> list[str] | None:
        """Every directory a relative file may be in after the line's changes of directory, each a join of
        some of their targets in text order (a cd may fail, run in a subshell, or follow the file); None
        when one is not known, the line may repeat one, or there are more than MAX_CDS."""
        targets = self.cd_targets
        if None in targets or len(targets) > MAX_CDS:
            return None
        if _UNFOLLOWED.search(self.line.decode("utf-8", "replace")) is not None:  # a loop, a function, `CDPATH`
            return None
        found: dict[str, None] = {".": None}
        for chosen in range(1, 1 << len(targets)):
            path = "."
            for bit, target in enumerate(targets):
                if chosen >> bit & 1 and target:
                    path = posixpath.join(path, target) if path != "." else target
            found[path] = None
        return list(found)

    def result(self) -> Analysis:
        ordered = [f.segment for f in sorted(self.found, key=lambda f: f.order)]
        files: list[FileAccess] = []
        # `cd DIR && …` and no other change of directory: a relative file is DIR's
        base = self.head_cd if self.chdirs == 1 else None
        dirs = self.candidate_dirs() if self.chdirs and base is None else None
        for position, access in enumerate(self.files):
            kind, path, order, items = access
            if not items and path in self.data.harmless_files:
                continue
            why = self.file_reasons.get(position, "")
            tree = access in self.trees
            relative = not (items[0] if items else path).startswith(("/", "~"))
            if base is not None and relative:
                if items:
                    items = (base, "/", *items)
                else:
                    path = posixpath.join(base, path)
            elif self.chdirs and relative:
                if dirs is not None:  # `cd build; cp a b`: b or build/b
                    for directory in dirs:
                        moved = (directory, "/", *items) if items and directory != "." else items
                        named = path if items or directory == "." else posixpath.join(directory, path)
                        files.append(FileAccess(kind, display(moved) if moved else named, tuple(moved), why, tree))
                    continue
                # a change of directory the line does not follow: the file of that name in any directory
                if items[:1] != (ANY,):  # (any file is any file wherever the line is)
                    items = (ANY, *(items or (path,)))
            files.append(FileAccess(kind, display(items) if items else path, tuple(items), why, tree))
        return Analysis(tuple(ordered), tuple(files))


def _cd_target(name: str, words: list[_Word]) -> str | None:
    """Where `cd`/`pushd` goes, as written ("~" for a bare `cd`), "" for `popd` (back to an earlier
    directory); None when not known: an expansion or a pattern, `cd -`, a bare `pushd` (a swap)."""
    if name == "popd":
        return ""
    operands = [word for word in words[1:] if not (word.text.startswith("-") and word.text != "-")]
    if not operands:
        return "~" if name == "cd" else None
    target = operands[0]
    if _unknown(target) or target.text in ("-", "") or target.text.startswith("+"):
        return None
    return target.text


def _head_cd(root) -> str | None:
    """DIR when the line is one `&&` chain headed by a plain `cd DIR` (no redirection, quote or expansion in
    it): every command after it runs only once cd succeeded, in DIR. None for anything else (`cd a; b`
    runs b where cd failed too, `cd a || b`, a pipeline, a background job)."""
    statements = [child for child in root.children if child.type != "comment"]
    if len(statements) != 1:
        return None
    node = statements[0]
    if node.type == "redirected_statement":  # tree-sitter puts `cd a && b > f`'s redirection on the chain
        node = node.children[0]
    if node.type != "list":
        return None
    while node.type == "list":
        if any(child.type != "&&" for child in node.children if not child.is_named):
            return None
        node = node.children[0]
    if (
        node.type != "command"
        or len(node.children) != 2
        or node.children[0].text != b"cd"
        or node.children[1].type != "word"
    ):
        return None
    target = node.children[1].text.decode("utf-8", "replace")
    if not target or target.startswith(("-", "~")) or any(char in target for char in "$`*?[]{}\\'\""):
        return None
    return target
