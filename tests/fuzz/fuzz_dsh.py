"""Mutation fuzzing of the declaration front end: mutated `.dsh` text → Program.load and `dshc check`.

Run from a clone:  python tests/fuzz/fuzz_dsh.py [--inputs 100000] [--workers 2] [--seed 1]
Each input is one shipped or corpus `.dsh` file after 1-4 random mutations (byte and token edits,
deep nesting, long literals, NUL and invalid UTF-8). It goes through `Program.load` and through
the CLI's `check` in-process (`main(argv, out, err)`). The run counts exceptions other than
DshError and exit codes 3, prints one example of each kind, and exits 1 if either count is not 0.
"""

from __future__ import annotations

import argparse
import io
import multiprocessing
import os
import random
import sys
import tempfile
import time
import traceback
from collections import Counter
from pathlib import Path

from dshc.cli.main import main
from dshc.compiler.diagnostics import DshError
from dshc.compiler.catalog import load_catalog
from dshc.compiler.program import Program, SourceFile, parse_files, shipped_sources
from dshc.compiler.resolve import resolve

ROOT = Path(__file__).resolve().parents[2]
TOKENS = [
    b"preset",
    b"host",
    b"scope",
    b"policy",
    b"mount",
    b"extends",
    b"parent",
    b"allow",
    b"ask",
    b"deny",
    b"guard g:",
    b"when",
    b"not",
    b"and",
    b"or",
    b"in",
    b"matches",
    b"inside",
    b"outside",
    b"has",
    b"flag",
    b"{",
    b"}",
    b"(",
    b")",
    b"[",
    b"]",
    b",",
    b";",
    b"=",
    b"==",
    b"!=",
    b'"',
    b'"x"',
    b"#",
    b"\n",
    b" ",
    b"args.file_path",
    b"platform",
    b"plan_mode",
    b"workspace",
    b"tool-fs",
    b"read",
    b"*",
    b"?",
    b"\\",
    b"true",
    b"false",
    b"-1.5",
    b"\x00",
    b"\xff",
    b"\xc3",
    b"\xef\xbb\xbf",
    "é".encode(),
    b"\t",
    b"\r",
]
REPEATABLE = [b"not ", b"(", b"[", b"x and ", b"x or ", b"a.", b"9", b'"', b"{", b"}", b"preset p { } "]


def corpus() -> list[tuple[str, bytes]]:
    files = [(f.path, f.data) for f in shipped_sources()]
    files += [(str(p.relative_to(ROOT)), p.read_bytes()) for p in sorted((ROOT / "tests").rglob("*.dsh"))]
    return files


def mutate(data: bytes, rng: random.Random) -> bytes:
    for _ in range(rng.choice((1, 1, 1, 2, 4))):  # mostly one edit, so many inputs still parse and resolve
        data = rng.choice(MUTATIONS)(bytearray(data), rng)
    return bytes(data)


def _spot(data, rng) -> int:
    return rng.randint(0, len(data))


def _insert_token(data, rng):
    at = _spot(data, rng)
    return data[:at] + rng.choice(TOKENS) + data[at:]


def _delete_span(data, rng):
    at = _spot(data, rng)
    return data[:at] + data[at + rng.randint(1, 40) :]


def _duplicate_span(data, rng):
    at = _spot(data, rng)
    span = data[at : at + rng.randint(1, 200)]
    to = _spot(data, rng)
    return data[:to] + span * rng.randint(1, 5) + data[to:]


def _flip_byte(data, rng):
    if data:
        data[rng.randrange(len(data))] = rng.randrange(256)
    return data


def _repeat_deep(data, rng):
    # nesting and length past any limit: the cases that used to overflow the stack
    at = _spot(data, rng)
    return data[:at] + rng.choice(REPEATABLE) * rng.choice((10, 70, 300, 1_000, 5_000)) + data[at:]


def _long_literal(data, rng):
    at = _spot(data, rng)
    literal = rng.choice(
        (
            b"7" * rng.choice((64, 65, 4_301, 10_000)),
            b'"' + b"a/" * 40_000 + b'"',
            b"n" * rng.choice((1_024, 1_025, 50_000)),
        )
    )
    return data[:at] + literal + data[at:]


def _swap_lines(data, rng):
    lines = data.split(b"\n")
    if len(lines) > 1:
        i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
        lines[i], lines[j] = lines[j], lines[i]
    return bytearray(b"\n".join(lines))


def _truncate(data, rng):
    return data[: _spot(data, rng)]


MUTATIONS = (
    _insert_token,
    _insert_token,
    _delete_span,
    _duplicate_span,
    _flip_byte,
    _repeat_deep,
    _long_literal,
    _swap_lines,
    _swap_lines,
    _truncate,
)


def run_one(path: str, data: bytes, with_shipped: bool, scratch: Path) -> list[tuple[str, str]]:
    """Failures of one input: ("exception", detail) from Program.load, ("exit 3", stderr) from check."""
    failures = []
    try:
        if with_shipped:
            _load_beside_shipped(path, data)
        else:
            Program.from_files([SourceFile(path, data)])
    except DshError:
        pass
    except Exception:  # noqa: BLE001 - the point of the run: anything else is a finding
        failures.append(("exception", traceback.format_exc(limit=-6)))
    file = scratch / "input.dsh"
    file.write_bytes(data)
    out, err = io.StringIO(), io.StringIO()
    # the CLI reparses the shipped files each time: with them only now and then, to keep the run short
    argv = ["check", str(file)] + ([] if with_shipped and random.random() < 0.2 else ["--no-shipped"])
    try:
        code = main(argv, out, err)
    except BaseException:  # noqa: BLE001 - main must never raise
        code, err = 3, io.StringIO(traceback.format_exc(limit=-6))
    if code == 3:
        failures.append(("exit 3", err.getvalue()))
    return failures


def _load_beside_shipped(path: str, data: bytes) -> Program:
    """Program.from_files(shipped + [input]), with the shipped files parsed once per worker.

    A mutated shipped file takes the place of the original, as an edited copy would.
    """
    global _SHIPPED_DOCUMENTS
    if _SHIPPED_DOCUMENTS is None:
        _SHIPPED_DOCUMENTS, _, _ = parse_files(shipped_sources())
    documents, diags, texts = parse_files([SourceFile(path, data)])
    if any(d.severity == "error" for d in diags):
        raise DshError(diags, texts)
    others = [document for document in _SHIPPED_DOCUMENTS if document.path != path]
    return Program(resolve(tuple(others + documents), load_catalog()), texts)


_SHIPPED_DOCUMENTS = None


def worker(job: tuple[int, int, int]) -> tuple[int, Counter, dict]:
    seed, start, count = job
    files = corpus()
    shipped = len(shipped_sources())  # corpus() lists them first
    counts: Counter = Counter()
    examples: dict[str, str] = {}
    with tempfile.TemporaryDirectory(prefix="dshc-fuzz-") as scratch:
        for index in range(start, start + count):
            rng = random.Random(seed * 1_000_003 + index)
            path, original = rng.choice(files[:shipped] if rng.random() < 0.5 else files)  # half from the shipped
            data = mutate(original, rng)
            with_shipped = rng.random() < 0.25  # the shipped set makes references resolve
            for kind, detail in run_one(path, data, with_shipped, Path(scratch)):
                counts[kind] += 1
                examples.setdefault(kind, f"input #{index} (from {path}, {len(data)} bytes):\n{detail}")
    return count, counts, examples


def main_fuzz(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--inputs", type=int, default=100_000)
    parser.add_argument("--workers", type=int, default=max(1, min(2, os.cpu_count() or 1)))
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    chunk = 500
    jobs = [(args.seed, start, min(chunk, args.inputs - start)) for start in range(0, args.inputs, chunk)]
    started = time.perf_counter()
    done, counts, examples = 0, Counter(), {}
    with multiprocessing.get_context("spawn").Pool(args.workers) as pool:
        for count, found, seen in pool.imap_unordered(worker, jobs):
            done += count
            counts.update(found)
            for kind, text in seen.items():
                examples.setdefault(kind, text)
            if done % 5_000 < chunk:
                print(
                    f"{done:,} inputs, {time.perf_counter() - started:.0f} s: {dict(counts) or 'no failures'}",
                    flush=True,
                )
    print(
        f"{done:,} mutated inputs in {time.perf_counter() - started:.0f} s (seed {args.seed}, {args.workers} workers)"
    )
    print(f"exceptions other than DshError from Program.load: {counts['exception']}")
    print(f"exit codes 3 from `dshc check`: {counts['exit 3']}")
    for kind, text in examples.items():
        print(f"--- first {kind}: {text}")
    return 0 if not counts else 1


if __name__ == "__main__":
    sys.exit(main_fuzz())
