"""Bounded fuzzing in the suite: mutated declarations never raise anything but DshError, never exit 3.

The long run (100,000 inputs) is tests/fuzz/fuzz_dsh.py; this one uses its mutations on
hypothesis-chosen inputs and seeds, so a failure shrinks to a small reproducible case.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dshc.compiler.diagnostics import DshError
from dshc.compiler.program import shipped_sources

from dsl_strategies import documents

sys.path.insert(0, str(Path(__file__).parent / "fuzz"))
from fuzz_dsh import _load_beside_shipped, corpus, mutate, run_one  # noqa: E402

CORPUS = corpus()
BOUNDED = settings(
    max_examples=40,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@BOUNDED
@given(text=documents, seed=st.integers(0, 2**32))
def test_mutated_generated_documents_fail_only_with_diagnostics(tmp_path_factory, text, seed):
    data = mutate(text.encode("utf-8"), random.Random(seed))
    assert run_one("generated.dsh", data, with_shipped=False, scratch=tmp_path_factory.mktemp("fuzz")) == []


@BOUNDED
@given(index=st.integers(0, len(CORPUS) - 1), seed=st.integers(0, 2**32), with_shipped=st.booleans())
def test_mutated_corpus_files_fail_only_with_diagnostics(tmp_path_factory, index, seed, with_shipped):
    path, original = CORPUS[index]
    data = mutate(original, random.Random(seed))
    assert run_one(path, data, with_shipped=with_shipped, scratch=tmp_path_factory.mktemp("fuzz")) == []


def test_the_mutations_reach_past_the_parser():
    """A fuzz run that only ever produced syntax errors would prove little: some inputs must resolve."""
    shipped = {path for path, _ in CORPUS[: len(shipped_sources())]}
    loaded = 0
    for seed in range(40):
        rng = random.Random(seed)
        path, original = rng.choice([item for item in CORPUS if item[0] in shipped])
        try:
            _load_beside_shipped(path, mutate(original, rng))
            loaded += 1
        except DshError:
            pass
    assert 4 <= loaded < 40, loaded
