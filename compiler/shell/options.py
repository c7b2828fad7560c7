"""A command's option words read as its program's getopt reads them (`OptionSpec`), and whether a word uses
a given option (clusters, `--long=value`, abbreviations)."""

from __future__ import annotations

from ..shell_data import OptionSpec, Program
from .records import _Opaque
from .words import _unknown, _Word


def _getopt(
    words: list[_Word],
    i: int,
    spec: OptionSpec,
    what: str,
    stop: frozenset = frozenset(),
    any_attached_long: bool = False,
    single_dash_long: bool = False,
):
    """Consume options from `words[i]`: (index after them, [(option, value or None)]). `stop`: options
    after which the rest are operands (`python -m MODULE ARGS`); `any_attached_long`: an unknown
    `--name=value` is an option too (its value is attached, so it cannot take the next word);
    `single_dash_long`: `-name` is the long option `--name` (sqlite3's `-cmd`)."""
    opts: list[tuple[str, str | None]] = []
    n = len(words)
    while i < n:
        if opts and opts[-1][0] in stop:
            break
        word = words[i]
        text = word.text
        if not text.startswith("-") or text == "-":
            break
        if word.dynamic or word.unsafe:
            raise _Opaque(f"{what} option is an expansion")
        if text == "--":
            i += 1
            break
        if single_dash_long and len(text) > 2 and text[1] != "-":
            text = "-" + text
        if text.startswith("--"):
            name, eq, value = text.partition("=")
            if name in spec.long_values:
                if eq:
                    opts.append((name, value))
                    i += 1
                else:
                    if i + 1 >= n or _unknown(words[i + 1]):
                        raise _Opaque(f"{what} option value is missing or an expansion")
                    opts.append((name, words[i + 1].text))
                    i += 2
                continue
            if name in spec.long_optional or (name in spec.long_flags and not eq) or (eq and any_attached_long):
                opts.append((name, value if eq else None))
                i += 1
                continue
            raise _Opaque(f"unrecognized {what} option `{name}`")
        i += 1
        j = 1
        while j < len(text):
            char = text[j]
            if char in spec.values:
                rest = text[j + 1 :]
                if rest:
                    opts.append(("-" + char, rest))
                else:
                    if i >= n or _unknown(words[i]):
                        raise _Opaque(f"{what} option value is missing or an expansion")
                    opts.append(("-" + char, words[i].text))
                    i += 1
                break
            if char in spec.optional:
                opts.append(("-" + char, text[j + 1 :] or None))
                break
            if char in spec.flags:
                opts.append(("-" + char, None))
                j += 1
                continue
            raise _Opaque(f"unrecognized {what} option `-{char}`")
    return i, opts


def option_hit(word: str, option: str, clusters: bool = True) -> str | None:
    """Whether `word` uses `option` (exact, `--long=v`, `-ov` attached or in a flag cluster, or a long
    option abbreviated: getopt_long takes any unambiguous prefix, `--outp=F` for `--output=F`; which
    prefixes are unambiguous depends on the program's whole option set, so any prefix counts). Without
    `clusters` (a program whose options are whole words, `gcc -fno-omit-frame-pointer`) a one-letter
    option is only the word's start (`-ofile`, `-B/dir`).

    Returns the attached value ("" when none is attached), or None when it is not that option.
    """
    if word == option:
        return ""
    if option.startswith("--"):
        name, _, value = word.partition("=")
        return value if len(name) > 2 and option.startswith(name) else None
    if not clusters and len(option) == 2:
        return word[2:] if word.startswith(option) else None
    if len(option) == 2 and word.startswith("-") and not word.startswith("--") and len(word) > 2:
        at = word.find(option[1], 1)
        return word[at + 1 :] if at > 0 else None
    return word[len(option) :] if len(option) > 2 and word.startswith(option + "=") else None


def _uses(text: str, options, clusters: bool) -> bool:
    """Whether the word `text` is one of `options` (`option_hit`)."""
    return any(option_hit(text, option, clusters) is not None for option in options)


def _option_words(text: str, options, words: list[_Word], index: int, clusters: bool = True) -> tuple[list, int]:
    """[(option, its value word or None)] for each of `options` the word `text` (at `index`) uses, in a
    fixed order: an attached value, else the next word; and the index of the last word a value took."""
    found: list[tuple[str, _Word | None]] = []
    last = index
    for option in sorted(options):
        value = option_hit(text, option, clusters)
        if value is None:
            continue
        if value:
            found.append((option, _Word(value)))
        elif index + 1 < len(words):
            found.append((option, words[index + 1]))
            last = index + 1
        else:
            found.append((option, None))
    return found, last


def _patch_option(text: str, row: Program) -> bool:
    """Whether the word is one of `history_patch`; in a cluster of short flags only before a flag that takes
    a value (`-pS x` is `-p`; in `-Spassword` the letters are `-S`'s value). A flag not known to take one
    is read as a flag: the cluster then may print more, never less."""
    if text.startswith("--") or not row.clusters:
        return _uses(text, row.history_patch, row.clusters)
    for letter in text[1:]:
        if "-" + letter in row.history_patch:
            return True
        if "-" + letter in row.values:
            return False
    return False
