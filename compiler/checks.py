"""Semantic lint over a resolved program: CHECKS, each yielding diagnostics."""
from __future__ import annotations

from typing import Iterator

from .diagnostics import Diagnostic

CHECKS = ()


def run_checks(program) -> Iterator[Diagnostic]:
    for check in CHECKS:
        yield from check(program)
