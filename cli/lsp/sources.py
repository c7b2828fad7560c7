"""The declarations an editor session sees, and what the compiler says about one file of them.

In: open buffers (path -> text), the shipped files, a `.dshc` project's `load`, sibling .dsh files
and `--load` paths. Out: SourceFiles (buffers win over disk) and, per file, a Program (or None)
with that file's diagnostics: syntax, resolution and lint, each with its span.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from ...compiler import ast, project
from ...compiler.catalog import Catalog, load_catalog
from ...compiler.checks import run_checks
from ...compiler.diagnostics import Diagnostic, DshError
from ...compiler.program import SHIPPED_PACKAGES, Program, SourceFile, parse_files
from ...compiler.resolve import resolve

# a folder with more .dsh files than this is not read for siblings: an editor must stay responsive
MAX_SIBLINGS = 200


def shipped_files() -> dict[str, str]:
    """Absolute path -> text of every shipped .dsh file, so a definition can jump into them."""
    files = {}
    for package in SHIPPED_PACKAGES:
        for entry in sorted(resources.files(package).iterdir(), key=lambda e: e.name):
            if entry.name.endswith(".dsh"):
                files[os.path.abspath(str(entry))] = entry.read_text(encoding="utf-8")
    return files


def _shipped_key(path: str) -> tuple[str, str]:
    """(folder name, file name): a workspace copy of a shipped file (presets/x.dsh) replaces it."""
    p = Path(path)
    return p.parent.name, p.name


@dataclass
class Analysis:
    program: Program | None  # None: the file does not parse, or the sources do not resolve
    diagnostics: list[Diagnostic]
    documents: tuple[ast.Document, ...] = ()  # every source that parsed, resolved or not


@dataclass
class SourceSet:
    catalog: Catalog | None = None
    load: tuple[str, ...] = ()  # --load paths (files or folders)
    buffers: dict[str, str] = field(default_factory=dict)  # open documents: absolute path -> text
    _shipped: dict[str, str] | None = None
    # path -> (text, documents, diagnostics): each keystroke re-parses one file, not every source
    _parsed: dict[str, tuple] = field(default_factory=dict)

    def shipped(self) -> dict[str, str]:
        if self._shipped is None:
            self._shipped = shipped_files()
        return self._shipped

    def disk_paths(self, path: str) -> list[str]:
        """.dsh files that join `path` from disk: `--load`, the nearest project's `load`, its siblings."""
        found: list[str] = []
        for entry in self.load:
            found += _dsh_files(entry)
        project_file = project.find(os.path.dirname(path))
        if project_file:
            try:
                for entry in project.read(project_file).load:
                    found += _dsh_files(entry)
            except project.ProjectError:
                pass  # `dshc check` and the hook report a broken project file; the editor keeps working
        siblings = _dsh_files(os.path.dirname(path))
        if len(siblings) <= MAX_SIBLINGS:
            found += siblings
        return found

    def texts_for(self, path: str) -> dict[str, str]:
        """Every source `path` is analysed with: absolute path -> text, buffers over disk."""
        texts: dict[str, str] = {}
        for other in self.disk_paths(path):
            try:
                texts[os.path.abspath(other)] = Path(other).read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                continue  # that file's own diagnostics say why, when it is opened
        texts.update(self.buffers)
        replaced = {_shipped_key(p) for p in texts}
        shipped = {p: t for p, t in self.shipped().items() if p in texts or _shipped_key(p) not in replaced}
        return {**shipped, **texts}

    def analyse(self, path: str, lint: bool = True) -> Analysis:
        """The Program `path` belongs to and the diagnostics located in `path`.

        Other files that do not parse are left out rather than hide this file's own findings.
        `lint=False` leaves out the semantic checks (they compile every view: the slow part).
        """
        texts = self.texts_for(path)
        documents, own = [], []
        for file_path, text in texts.items():
            parsed, diags = self._parse(file_path, text)
            if file_path == path:
                own = diags
            if not any(d.severity == "error" for d in diags):
                documents += parsed
        if any(d.severity == "error" for d in own):
            return Analysis(None, own, tuple(documents))
        try:
            program = Program(resolve(tuple(documents), self.catalog or load_catalog()), texts)
        except DshError as exc:
            return Analysis(None, [d for d in exc.diagnostics if d.where == path], tuple(documents))
        findings = [d for d in program.warnings if d.where == path] + (lint_findings(program, path) if lint else [])
        return Analysis(program, own + findings, tuple(documents))

    def _parse(self, path: str, text: str) -> tuple[list[ast.Document], list[Diagnostic]]:
        found = self._parsed.get(path)
        if found is None or found[0] != text:
            documents, diags, _ = parse_files([SourceFile(path, text.encode("utf-8"))])
            found = self._parsed[path] = (text, documents, diags)
        return found[1], found[2]


def lint_findings(program: Program, path: str) -> list[Diagnostic]:
    """The lint (`dshc check`) findings located in `path`."""
    return list(run_checks(program, {path}))


def _dsh_files(entry: str) -> list[str]:
    path = Path(entry)
    if path.is_dir():
        return sorted(str(p) for p in path.glob("*.dsh"))
    return [str(path)] if path.suffix == ".dsh" and path.is_file() else []
