"""A cached program's policies and declaration graph are decoded when first read (data_codec's lazy maps
and graphs): a decision reads its policy's chain, not the shipped dozen. What is read must be what was
written — equal values, the same sharing between policies — in any order and from several threads, and a
planted text that refers where it may not is refused, never followed into a loop."""

from __future__ import annotations

import json
import threading

import pytest

from dshc.compiler import data_codec
from dshc.compiler.program import Program, shipped_sources

RESOLVED = Program.from_files(shipped_sources()).resolved
TEXT = data_codec.dumps(RESOLVED)


def _read(decoded) -> list[int]:
    """The start indices of the lazy values decoded so far."""
    return [lazy.start for lazy in decoded.policies._decoder._lazy if lazy.value is not data_codec._UNREAD]


def _shared(resolved, child: str, parent: str) -> list[int]:
    """Positions of the child's rules that are the parent's very objects."""
    ids = {id(rule) for rule in resolved.policies[parent].rules}
    return [i for i, rule in enumerate(resolved.policies[child].rules) if id(rule) in ids]


def _extends_pairs(resolved) -> list[tuple[str, str]]:
    return [
        (name, policy.decl.extends.text)
        for name, policy in resolved.policies.items()
        if getattr(policy.decl, "extends", None) is not None and _shared(resolved, name, policy.decl.extends.text)
    ]


def test_loading_reads_no_policy_and_a_policy_reads_only_what_it_holds():
    decoded = data_codec.loads(TEXT)
    assert isinstance(decoded.policies, data_codec.LazyMap) and _read(decoded) == []
    assert list(decoded.policies) == list(RESOLVED.policies)  # the map's own order
    assert decoded.policies["workspace-write"] == RESOLVED.policies["workspace-write"]
    assert 0 < len(_read(decoded)) < len(RESOLVED.policies)
    assert decoded.hosts == RESOLVED.hosts and decoded.presets == RESOLVED.presets  # read without them


@pytest.mark.parametrize("order", ["written", "reversed", "graph first", "documents first"])
def test_every_order_of_reading_gives_the_values_and_the_sharing_written(order):
    decoded = data_codec.loads(TEXT)
    if order == "graph first":
        assert sorted(decoded.graph.edges(keys=True)) == sorted(RESOLVED.graph.edges(keys=True))
    if order == "documents first":
        assert decoded.documents == RESOLVED.documents
    names = list(RESOLVED.policies)
    for name in reversed(names) if order == "reversed" else names:
        assert decoded.policies[name] == RESOLVED.policies[name]
    pairs = _extends_pairs(RESOLVED)
    assert pairs, "no shipped policy shares rules with the one it extends"
    for child, parent in pairs:
        assert _shared(decoded, child, parent) == _shared(RESOLVED, child, parent)
    if order != "graph first":  # a graph made lists its edges in networkx's order, not the order written
        assert data_codec.dumps(decoded) == TEXT  # written again after reading: the same text
    assert decoded.policies == RESOLVED.policies
    assert sorted(decoded.graph.edges(keys=True)) == sorted(RESOLVED.graph.edges(keys=True))


def test_threads_reading_at_once_get_one_decoding():
    decoded = data_codec.loads(TEXT)
    names = list(RESOLVED.policies) * 4
    got: dict = {}
    start = threading.Barrier(8)

    def read(worker: int) -> None:
        start.wait()
        got[worker] = [decoded.policies[name] for name in names[worker::8]]

    threads = [threading.Thread(target=read, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for worker, values in got.items():
        for name, value in zip(names[worker::8], values):
            assert value is decoded.policies[name]  # one object per policy, whoever read it first
    for child, parent in _extends_pairs(RESOLVED):
        assert _shared(decoded, child, parent) == _shared(RESOLVED, child, parent)


def _planted(entries) -> str:
    return json.dumps({"o": "dshc.compiler.resolve:Resolved", "i": 0, "a": {"policies": {"L": entries}}})


@pytest.mark.parametrize(
    "entries",
    [
        [["a", 1, 2]],  # three parts
        [["a", "1", 2, "{}"]],  # an index that is not a number
        [["a", 1, 2, {"r": 0}]],  # a value that is not a text
        "not a list",
    ],
)
def test_a_malformed_lazy_map_is_refused_at_load(entries):
    if entries == "not a list":
        decoded = data_codec.loads(_planted(entries))  # no entries: an empty map
        assert len(decoded.policies) == 0
        return
    with pytest.raises(ValueError):
        data_codec.loads(_planted(entries))


def test_a_reference_nowhere_or_in_a_loop_is_refused_when_read():
    nowhere = data_codec.loads(_planted([["a", 1, 2, '{"r": 7}']]))
    with pytest.raises(ValueError, match="does not hold"):
        nowhere.policies["a"]
    loop = data_codec.loads(_planted([["a", 10, 11, '{"r": 20}'], ["b", 20, 21, '{"r": 10}']]))
    with pytest.raises(ValueError, match="cycle"):
        loop.policies["a"]


def test_a_lazy_map_where_the_class_names_none_is_not_one():
    planted = {"o": "dshc.compiler.source:Span", "i": 0, "a": {"path": {"L": [["a", 1, 2, "1"]]}}}
    with pytest.raises(ValueError):
        data_codec.loads(json.dumps(planted))
