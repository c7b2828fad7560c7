"""argparse's help formatter, told the terminal's width.

argparse's formatter asks `shutil.get_terminal_size` for the width, importing shutil (and with it
bz2, lzma and zlib: ~3 ms of every `dshc` process, a hook's included) each time a parser is built.
The width is worked out here the way shutil does it: $COLUMNS, else the terminal of stdout, else 80.
"""

from __future__ import annotations

import argparse
import os
import sys


def terminal_columns() -> int:
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    stdout = sys.__stdout__  # None where the interpreter started without one
    if columns <= 0 and stdout is not None:
        try:
            columns = os.get_terminal_size(stdout.fileno()).columns
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns or 80


class HelpFormatter(argparse.HelpFormatter):
    def __init__(self, prog, indent_increment=2, max_help_position=24, width=None):
        # argparse leaves two columns free, as here
        super().__init__(prog, indent_increment, max_help_position, terminal_columns() - 2 if width is None else width)
