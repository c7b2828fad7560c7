"""A Program shared by threads answers as one thread does: no cache, memo or lazily built value races.

Each test switches threads between nearly any two bytecodes (`sys.setswitchinterval(1e-6)`) and shrinks
the caches to one entry, so a thread evicts what another is reading. `threaded_decisions` generates the
policies and calls and compares every threaded answer with a single-threaded run.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import threaded_decisions
from threaded_decisions import racing
from dshc.compiler._base import frozen
from dshc.compiler._base.frozen import record
from dshc.compiler.lru import LRU
from dshc.compiler.request import Request

HERE = Path(__file__).resolve().parent


@pytest.fixture
def tiny_caches(monkeypatch):
    threaded_decisions.shrink_caches(monkeypatch.setattr)


@pytest.mark.parametrize("seed", [11, 3, 7])
def test_eight_threads_decide_as_one_thread_does(tiny_caches, seed):
    assert threaded_decisions.race(seed) == []


def test_fresh_processes_decide_as_one_thread_does():
    """Cold processes: every record class's methods are compiled while threads race to call them."""
    script = str(HERE / "threaded_decisions.py")
    env = {**os.environ, "DSHC_CACHE_SIZE": "1"}
    runs = [
        subprocess.Popen(
            [sys.executable, script, str(seed)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            cwd=HERE,
        )
        for seed in (1, 3, 5)
    ]
    for run in runs:
        out, err = run.communicate(timeout=120)
        assert run.returncode == 0, err
        assert [json.loads(line)["differ"] for line in out.splitlines()] == [[]], out


def test_a_record_class_compiled_while_threads_call_it(monkeypatch):
    """The thread that finds the class compiled calls the compiled method, never its stand-in again."""
    monkeypatch.setattr(frozen, "COMPILE_AFTER", 8)
    failures = []
    for _ in range(20):  # a fresh class each round: its methods are compiled during the race

        @record
        class Point:
            x: int
            y: int = 0

        def work(number, cls=Point):
            try:
                for i in range(40):
                    made = cls(i, number)
                    assert made == cls(i, number) and hash(made) == hash(cls(i, number))
            except BaseException as exc:  # noqa: BLE001 - collected: a thread's exception is the finding
                failures.append(repr(exc)[:120])

        racing(8, work)
    assert failures == []


def test_a_one_entry_lru_shared_by_threads():
    """Keys hashed and compared in Python, as requests are: threads switch inside each lookup too."""
    cache = LRU(1)
    keys = [Request(flags=[f"f{number}"]) for number in range(3)]
    failures = []

    def work(number):
        try:
            for i in range(3000):
                key = keys[(number + i) % 3]
                assert cache.get(key, lambda: key.flags) == key.flags
                found = cache.find(key)
                assert found is threaded_decisions.index.MISSING or found == key.flags
                assert cache.put(key, key.flags) == key.flags
        except BaseException as exc:  # noqa: BLE001 - collected: a thread's exception is the finding
            failures.append(repr(exc)[:120])

    for _ in range(10):  # a round is a few thousand lookups: several rounds make a lost race unlikely
        racing(8, work)
    assert failures == [] and len(cache) == 1


CROSS_PRESETS = [
    'preset p "P" {\n  mount tool-fs\n  mount tool-fs-search { sampleOverCapGlobResults = false }\n}\n',
    'preset p "P" {\n  mount tool-fs\n  mount tool-fs-search { sampleOverCapGlobResults = true }\n  mount tool-jobs\n}\n',
    'preset p "P" {\n  mount tool-bash when flag beta\n  mount tool-subagent { provider = "spawn", backgroundMode = "continuable" }\n}\n',
    'preset p "P" {\n  mount tool-subagent as subagent_fork { provider = "fork", backgroundMode = "one-shot" }\n  mount tool-fs\n}\n',
]


def test_programs_of_different_sources_share_the_process_wide_caches_safely(tiny_caches):
    """compose's and view's caches are keyed by ids and shared by every Program in the process: threads
    composing different Programs at once, each evicting what the others read, get one thread's views."""
    from dshc.compiler.program import Program

    requests = [
        Request(host="web", preset="p", flags=flags, mode=mode)
        for flags in ((), ("beta",))
        for mode in ("native", "code")
    ]

    def views(program) -> list[bytes]:
        return [program.view(request).canonical_json() for request in requests]

    expected = [views(Program.load(texts={"p.dsh": text})) for text in CROSS_PRESETS]
    assert len({tuple(found) for found in expected}) == len(CROSS_PRESETS)  # the sources do differ
    got: dict[int, list] = {}

    def work(number: int) -> None:
        program = Program.load(texts={"p.dsh": CROSS_PRESETS[number % len(CROSS_PRESETS)]})  # fresh objects, ids
        got[number] = [views(program) for _ in range(3)]

    racing(8, work)
    assert all(rounds == [expected[n % len(CROSS_PRESETS)]] * 3 for n, rounds in got.items()) and len(got) == 8
