"""The PRESET a command joins, written positionally or as `--preset`: one argument, two spellings.
In: a parser to add both to, then the parsed Namespace; out: `preset` set once, or a usage error
(exit 2) when the two spellings name different presets."""

from __future__ import annotations

from ..compiler.diagnostics import DshError, invalid_request

TYPE_CHECKING = False  # no `import typing` (~4 ms of a hook): its names are for annotations only
if TYPE_CHECKING:
    from argparse import ArgumentParser, Namespace

HELP = "preset to join (default: the host's roster default)"


def add_preset(p: ArgumentParser, positional: bool = True, help: str = HELP) -> None:  # noqa: A002 - argparse's word
    if positional:
        p.add_argument("preset", nargs="?", metavar="PRESET", help=help)
    p.add_argument("--preset", dest="preset_option", metavar="PRESET", help="the same as the PRESET argument")


def one_preset(namespace: Namespace) -> Namespace:
    """`preset` from either spelling; `preset_option` is gone afterwards, so every reading looks alike."""
    if not hasattr(namespace, "preset_option"):
        return namespace
    option = namespace.preset_option
    del namespace.preset_option
    positional = getattr(namespace, "preset", None)
    if option is not None and positional is not None and option != positional:
        raise DshError(
            [
                invalid_request(
                    f"two presets: `{positional}` and --preset `{option}`",
                    "name the preset once, positionally or with --preset",
                )
            ]
        )
    namespace.preset = positional if option is None else option
    return namespace
