"""MkDocs hook: a `\|` inside a code span of a table cell becomes `|`.

GitHub needs the backslash to keep such a pipe from splitting the cell; Python-Markdown already
keeps code spans whole and would show the backslash."""

from __future__ import annotations

import re

CODE_SPAN = re.compile(r"(`+)(.+?)\1")


def on_page_markdown(markdown: str, **_) -> str:
    return "\n".join(
        CODE_SPAN.sub(lambda m: m.group(0).replace("\\|", "|"), line) if line.startswith("|") else line
        for line in markdown.split("\n")
    )
