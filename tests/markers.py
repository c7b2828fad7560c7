"""`# E: CODE [line=N] @COL [msg~TEXT] [help~TEXT]` markers: expectations written beside the input."""

from __future__ import annotations

import re
from dataclasses import dataclass

MARKER = re.compile(
    r"^\s*(?P<code>DSH\d{3})(?:\s+line=(?P<line>\d+))?\s+@(?P<col>\d+)"
    r"(?:\s+msg~(?P<msg>.*?))?(?:\s+help~(?P<help>.*?))?\s*$"
)


@dataclass(frozen=True)
class Marker:
    code: str
    line: int
    col: int
    msg: str | None = None
    help: str | None = None

    @property
    def where(self) -> tuple[str, int, int]:
        return self.code, self.line, self.col


def parse_markers(text: str) -> list[Marker]:
    """Every `# E: CODE [line=N] @COL [msg~TEXT] [help~TEXT]` comment; a malformed marker is an error."""
    markers = []
    for number, line in enumerate(text.splitlines(), start=1):
        for chunk in line.split("# E:")[1:]:
            m = MARKER.match(chunk)
            if m is None:
                raise ValueError(f"line {number}: malformed marker `# E:{chunk}`")
            markers.append(Marker(m["code"], int(m["line"] or number), int(m["col"]), m["msg"], m["help"]))
    return markers
