"""Watched declaration files → the current Program, a version number, and the last load's errors.

A background thread polls the files' contents; a change reloads. A load that fails keeps the last
good Program (the page marks it stale) and records the diagnostics with their caret excerpts.
"""

from __future__ import annotations

import hashlib
import threading
from pathlib import Path
from typing import Callable, Iterable

from ...compiler.diagnostics import DshError
from ...compiler.program import Program
from ...compiler.render import diagnostics_json, human

POLL_SECONDS = 0.25


def _files(paths: Iterable[Path]) -> list[Path]:
    found = []
    for path in paths:
        found += sorted(path.rglob("*.dsh")) if path.is_dir() else [path]
    return found


def digest(paths: Iterable[Path]) -> str:
    """One hash of every watched file's name and bytes (a missing file hashes as missing)."""
    h = hashlib.sha256()
    for file in _files(paths):
        h.update(str(file).encode() + b"\0")
        try:
            h.update(hashlib.sha256(file.read_bytes()).digest())
        except OSError as exc:
            h.update(f"unreadable:{exc.errno}".encode())
    return h.hexdigest()


class LiveProgram:
    def __init__(self, load: Callable[[], Program], watched: Iterable[str | Path]):
        self._load = load
        self.watched = [Path(p) for p in watched]
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self.program: Program | None = None
        self.version = 0
        self.error: str | None = None  # caret-excerpt text of the last failed load
        self.diagnostics: list[dict] = []
        self._digest = digest(self.watched)
        self.reload()

    def reload(self) -> None:
        try:
            program, error, diagnostics = self._load(), None, []
        except DshError as exc:
            program, error, diagnostics = (
                None,
                human(exc.diagnostics, sources=exc.sources),
                diagnostics_json(exc.diagnostics),
            )
        with self._lock:
            if program is not None:
                self.program = program
            self.error, self.diagnostics = error, diagnostics
            self.version += 1

    def poll(self) -> bool:
        """Reload if a watched file changed; True when it did."""
        now = digest(self.watched)
        if now == self._digest:
            return False
        self._digest = now
        self.reload()
        return True

    def state(self) -> dict:
        with self._lock:
            return {
                "version": self.version,
                "error": self.error,
                "diagnostics": self.diagnostics,
                "stale": self.error is not None and self.program is not None,
                "watched": [str(p) for p in self.watched],
            }

    def start(self) -> None:
        if self.watched:
            threading.Thread(target=self._run, name="dshc-ui-watch", daemon=True).start()

    def stop(self) -> None:
        self._stop.set()

    def _run(self) -> None:
        while not self._stop.wait(POLL_SECONDS):
            self.poll()
