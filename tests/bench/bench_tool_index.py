"""Indexing every catalog tool for one policy of N rules: the target index against a pass over all rules.

The first decision about a tool in a Program builds that tool's index (every hook process pays it once).
Both ways are timed in the same run; the ratio is what to read. `python tests/bench/bench_tool_index.py`
"""

from __future__ import annotations

import sys

from bench import workload
from bench_peer import BENCH_SCOPES
from timing import fastest

from dshc.compiler.policy import core
from dshc.compiler.policy.index import CompiledPolicy
from dshc.compiler.program import Program


def _index_all(policy, tools, linear: bool) -> None:
    compiled = CompiledPolicy(policy)
    if linear:  # the pass over every rule and guard that the target index replaced
        compiled.core.relevant = lambda name, tool: (
            [r for r in policy.rules if core.targets(r, name, tool)],
            [g for g in policy.guards if core.targets(g, name, tool)],
        )
    for tool in tools:
        compiled.index(tool.name, tool)


def main() -> int:
    sizes = (100, 1_000) if "--quick" in sys.argv else (100, 1_000, 10_000)
    for n in sizes:
        program = Program.load(texts={"bench.dsh": workload(n)[0], "scopes.dsh": BENCH_SCOPES})
        policy, tools = program.resolved.policies["bench"], list(program.catalog.definitions.values())
        indexed = fastest(lambda: _index_all(policy, tools, linear=False), 3)
        linear = fastest(lambda: _index_all(policy, tools, linear=True), 3)
        print(
            f"N = {n:>6,}: {len(tools)} tools indexed in {indexed * 1000:7.1f} ms "
            f"(pass over every rule {linear * 1000:7.1f} ms, {linear / indexed:5.1f}x)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
