"""Assignments, declarations and arithmetic: where bash evaluates a variable's name, subscript or value as
code, or an assignment changes what later commands run."""

from __future__ import annotations

from ..patterns import Pattern
from ..shell_data import Knowledge
from .options import _option_words
from .records import _WalkState
from .words import _ONLY_NUMBERS, _SUBSTITUTIONS, _read, _unknown, _Word, _WordBuilder

_SUBSCRIPTED = Pattern(r"[A-Za-z_][A-Za-z0-9_]*\[(.*)\]")
_SUBSCRIPT_RUNS_CODE = (
    "an array subscript is evaluated as arithmetic, which runs code hidden in variables "
    "(`a[$(cmd)]`, or `a[i]` where i holds one)"
)


def _arithmetic_runs_code(expression: str) -> bool:
    """Whether evaluating `expression` as bash arithmetic may run code: anything but numbers and operators
    (a variable's value is itself evaluated, and a subscript in it runs its `$(…)`)."""
    return _ONLY_NUMBERS.fullmatch(expression) is None


def _name_runs_code(word: _Word, data: Knowledge, assigns: bool) -> str:
    """Why `word`, read by bash as a variable name (`read NAME`, `declare NAME=V`), may run code or change
    what runs (`assigns`: the command sets it); "" when it cannot. A subscript is evaluated as arithmetic,
    `$(…)` in it run."""
    if _unknown(word):
        return (
            f"the variable name `{word.text}` is an expansion or a pattern: it may name an array element, "
            "whose subscript bash evaluates as arithmetic, or a variable that changes what runs"
        )
    subscripted = _SUBSCRIPTED.match(word.text)  # greedy: `a[1]=$(x)]` reads all of `1]=$(x)`
    if subscripted is not None and _arithmetic_runs_code(subscripted[1]):
        return _SUBSCRIPT_RUNS_CODE
    name = word.text.partition("=")[0].partition("[")[0]
    if assigns and data.env_hazard(name):
        return f"assigning `{name}` changes what later commands run"
    return ""


def _variable_name_words(words: list[_Word], options: frozenset) -> list[_Word]:
    """The words of a builtin's command bash reads as variable names: with `*`, every argument that is
    not an option; else the values of `options` (`printf -v NAME`)."""
    if "*" in options:
        return [word for word in words[1:] if word.dynamic or not word.text.startswith("-")]
    found = []
    for index in range(1, len(words)):
        found += [value for _, value in _option_words(words[index].text, options, words, index)[0] if value]
    return found


class _Variables(_WalkState):
    """The walker's reading of assignments and arithmetic (mixed into `walk._Walker`)."""

    def assignment(self, node, order, nested) -> None:
        builder = _WordBuilder(nested)
        before = len(nested)
        if node.type == "declaration_command":
            for child in node.children:
                flag = child.text.decode("utf-8", "replace") if child.type == "word" else ""
                if flag.startswith(("-", "+")) and set(flag[1:]) & set("nif"):
                    self.emit(
                        order,
                        [node.text.decode("utf-8", "replace")],
                        True,
                        "a name reference, integer or function attribute changes what later words run",
                    )
                    break
        if node.type in ("declaration_command", "unset_command"):
            # `declare 'a[$(cmd)]=1'`, `declare "$x"`: a quoted or expanded name is read by bash all the same
            for child in node.children[1:]:
                if child.type in ("variable_assignment", "variable_name"):
                    continue
                word = _WordBuilder([]).build(child)  # its substitutions are collected below, once
                reason = (
                    ""
                    if word.text.startswith(("-", "+")) and not word.dynamic
                    else _name_runs_code(word, self.data, node.type == "declaration_command")
                )
                if reason:
                    self.emit(order, [node.text.decode("utf-8", "replace")], True, reason)
                    break
        stack = [node]
        while stack:
            current = stack.pop()
            if current.type == "variable_assignment":
                target = current.children[0]
                name = target.text.decode("utf-8", "replace")
                if self.data.env_hazard(name.split("[")[0]):
                    self.emit(
                        order,
                        [current.text.decode("utf-8", "replace")],
                        True,
                        f"assigning `{name}` changes what later commands run",
                    )
                if target.type == "subscript" and _arithmetic_runs_code(name[name.index("[") + 1 : -1]):
                    self.emit(order, [current.text.decode("utf-8", "replace")], True, _SUBSCRIPT_RUNS_CODE)
                for child in current.children[2:]:
                    builder.build(child)
            elif current.type in _SUBSTITUTIONS:
                nested.append(current)
            else:
                stack.extend(current.children)
        _read(self.seen, node, nested[before:])  # names, flags and values: bash runs none of them

    def expression(self, node, order, nested, body=None) -> None:
        """`[[ … ]]`, `(( … ))`, a C-style for's header: arithmetic evaluates variables' values as code
        (`a[$(cmd)]`). A C-style for's `body` is the walk's."""
        builder = _WordBuilder(nested)
        for child in node.children:
            if child != body:
                before = len(nested)
                if child.type in _SUBSTITUTIONS:
                    nested.append(child)
                else:
                    builder.nested_in(child)
                _read(self.seen, child, nested[before:])
        text = node.text.decode("utf-8", "replace")
        if node.type == "test_command":
            if not _ARITHMETIC_TEST.search(text):
                return
            text_operands = _ARITHMETIC_TEST.sub(" ", text).replace("[[", " ").replace("]]", " ")
        else:
            text_operands = text
        if _ONLY_NUMBERS.fullmatch(text_operands) is None:
            self.emit(order, [text], True, "arithmetic evaluation runs code hidden in variables")


_ARITHMETIC_TEST = Pattern(r"\s-(?:eq|ne|lt|le|gt|ge|v|R)\s")
