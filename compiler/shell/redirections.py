"""Redirections: the file a `<`, `>`, `<>` … reads or writes, and the redirection words that belong to a
command as its author wrote them (its own and those of the statements around it)."""

from __future__ import annotations

from .records import Segment, _WalkState
from .words import _read, _unknown, _WordBuilder

_REDIRECTS = frozenset({"file_redirect", "heredoc_redirect", "herestring_redirect"})
# where a redirection written around a statement stops applying: a substitution's commands write elsewhere,
# and what tree-sitter hangs under a heredoc is the rest of the list, not redirected
_REDIRECT_SCOPES = frozenset({"command_substitution", "process_substitution", "command", "program", "heredoc_redirect"})


class _Redirections(_WalkState):
    """The walker's reading of a redirection node (mixed into `walk._Walker`)."""

    def redirect(self, node, order, nested) -> None:
        builder = _WordBuilder(nested, self.seen)
        operator, target, fd_dup = "", None, False
        for child in node.children:
            if child.type in ("file_descriptor",):
                self.seen.append((child.start_byte, child.end_byte))
                continue
            if child.type in (">", ">>", "<", "&>", "&>>", ">|", "<>", ">&", "<&", ">&-", "<&-"):
                operator = child.type
                self.seen.append((child.start_byte, child.end_byte))
            elif child.type == "heredoc_body":
                before = len(nested)
                builder.nested_in(child)
                _read(self.seen, child, nested[before:])
            elif child.type in ("heredoc_start", "heredoc_end", "<<", "<<-", "<<<", "heredoc_content"):
                self.seen.append((child.start_byte, child.end_byte))
            elif node.type == "heredoc_redirect":
                # tree-sitter-bash hangs the rest of the line (`&& rm x`, `| sh`, `> ~/.bashrc`) under the
                # heredoc node (tree-sitter-bash #305, #334): it is the rest of the command list, walked as such
                if child.is_named:
                    nested.append(child)
                else:  # the operator joining it (`&&`, `|`)
                    self.seen.append((child.start_byte, child.end_byte))
            elif target is None and node.type == "file_redirect":
                target = child
            elif node.type == "herestring_redirect":
                builder.build(child)
            # else a word after the target, which bash gives the command (tree-sitter-bash#233): left unread
        if node.type != "file_redirect" or target is None:
            return
        word = builder.build(target)
        if operator in (">&", "<&") and (target.type == "number" or word.text == "-"):
            fd_dup = True
        if fd_dup or operator in (">&-", "<&-"):
            return
        if _unknown(word):
            self.emit(order, [operator + word.text], True, "redirection target is not a literal path")
            return
        kinds = {"<": ("read",), "<>": ("read", "write"), "<&": ("read",)}.get(operator, ("write",))
        for kind in kinds:
            self.files.append((kind, word.text, order, ()))


def _redirections(command, around: tuple = ()) -> tuple[str, ...]:
    """The words of the redirections that apply to a command node, as written: its own, and those of every
    statement around it (`{ a; b; } > f`, and `cd a && b > f`, which tree-sitter hangs on the chain), up to
    a substitution or a command holding it: `around`, each such statement's own, nearest first (the walk
    gathers them on its way down). A heredoc counts as its operator and delimiter, not its body."""
    return tuple(word for words in (_own_redirections(command), *around) for word in words)


def _own_redirections(node) -> tuple[str, ...]:
    """The words of the redirections a node holds as its children."""
    words: list[str] = []
    for child in node.children:
        if child.type == "heredoc_redirect":  # (a redirection after `<<EOF` on its line hangs under it)
            for part in child.children:
                if part.type in ("<<", "<<-", "heredoc_start"):
                    words.append(part.text.decode("utf-8", "replace"))
                elif part.type in _REDIRECTS:
                    words.extend(part.text.decode("utf-8", "replace").split())
        elif child.type in _REDIRECTS:
            words.extend(child.text.decode("utf-8", "replace").split())
    return tuple(words)


def with_redirections(segment: Segment) -> Segment:
    """The segment read with its redirections, as its author sees it (`echo x >> .claude/f`): a deny or ask
    on the command's text applies to that too; an allow of the command alone does not need it."""
    return Segment(
        (*segment.argv, *segment.redirects),
        segment.opaque,
        segment.reason,
        segment.hazard,
        segment.literal,
        segment.wraps,
        segment.base,
        True,
    )
