"""Gate 4, the policy core: a policy, a tool and a call (or a request alone) in; a Decision out.

`effects` holds the one effect order; `core` the steps both evaluators share; `reference`
tries every rule as written; `index` decides calls from a per-tool index.
"""

from .arguments import MAX_DEPTH, MAX_NODES, shape_problem
from .core import rule_id
from .decision import NO_POLICY, Decision, Verdict
from .effects import EFFECTS, PERMISSIVENESS, RANK, stricter, strictest, widens, widens_fail_closed
from .index import CompiledPolicy, RequestDecider
from .reference import decide

__all__ = [
    "MAX_DEPTH",
    "MAX_NODES",
    "shape_problem",
    "NO_POLICY",
    "Decision",
    "Verdict",
    "EFFECTS",
    "PERMISSIVENESS",
    "RANK",
    "stricter",
    "strictest",
    "widens",
    "widens_fail_closed",
    "CompiledPolicy",
    "RequestDecider",
    "decide",
    "rule_id",
]
