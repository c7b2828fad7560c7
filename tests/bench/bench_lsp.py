"""How long the language server takes to answer an edit, against loading the same sources afresh.

Run from a clone:  python tests/bench/bench_lsp.py
Edits one line of a user file beside the shipped declarations and times, fastest of 15 runs:
  - baseline: `Program.from_files` of every source, what re-running `dshc check` parses and resolves;
  - errors phase: `SourceSet.analyse(path, lint=False)`, what the server publishes at once;
  - both phases: the errors phase, then the `dshc check` lints on its fresh Program (the server
    runs these on a worker thread, after publishing the errors).
Target: the errors phase ≤ 0.5 × the baseline (only the edited file is parsed again).
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from bench_bounded_matching import timed  # fastest of 15 runs after a warm-up (run from this folder's script)

from dshc.cli.lsp.sources import SourceSet, lint_findings
from dshc.compiler.program import Program, SourceFile

USER = 'policy team extends workspace-write {{\n  ask bash when args.command matches "git push {n} *"\n}}\n'


def main() -> int:
    folder = Path(tempfile.mkdtemp())
    path = str(folder / "team.dsh")
    Path(path).write_text(USER.format(n=0), encoding="utf-8")
    sources = SourceSet()
    edits = iter(range(1, 10**6))

    def edit_and_analyse():
        sources.buffers[path] = USER.format(n=next(edits))
        return sources.analyse(path, lint=False)

    def reload():
        texts = sources.texts_for(path)
        return Program.from_files([SourceFile(p, t.encode("utf-8")) for p, t in texts.items()])

    baseline = timed(reload)
    errors = timed(edit_and_analyse)
    both = timed(lambda: lint_findings(edit_and_analyse().program, path))
    ratio = errors / baseline
    print(f"reload (baseline)  {baseline * 1000:8.1f} ms")
    print(f"errors phase       {errors * 1000:8.1f} ms  ({ratio:.2f} x baseline)")
    print(f"both phases        {both * 1000:8.1f} ms  (the lint runs on the worker thread)")
    met = ratio <= 0.5
    print(f"errors phase <= 0.5 x baseline: {'met' if met else 'not met'}")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
