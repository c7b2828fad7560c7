"""The ten stages of a tool call, one module each, in the order they run.

Stages 1–4 run in model order before dispatch; stage 5 (the body) may overlap for
parallel-safe calls; stages 6–10 run in model order after, so results commit in order.
"""

from __future__ import annotations

from . import (
    approval,
    emit_result,
    execute,
    finalize_content,
    guards,
    normalize,
    post_execute,
    pre_execute,
    record_call,
    record_result,
)

DEFAULT_STAGES = (
    ("record-call", record_call.run),  # 1. tool/call is durable before anything runs
    ("pre-execute", pre_execute.run),  # 2. resolve the name, then allow | ask | deny
    ("approval", approval.run),  # 3. only on ask; only allowed-once passes
    ("guards", guards.run),  # 4. deny or abstain, only after an allow
    ("execute", execute.run),  # 5. wrappers around dispatch, then the body
    ("post-execute", post_execute.run),  # 6. accept (content xor value) or block
    ("normalize", normalize.run),  # 7. JSON-safe snapshot; failures become isError
    ("finalize-content", finalize_content.run),  # 8. the tool's own last word, exactly once
    ("emit-result", emit_result.run),  # 9. read-only observers; failures contained
    ("record-result", record_result.run),  # 10. tool/result, the model-facing result
)

BEFORE_DISPATCH = DEFAULT_STAGES[:4]
DISPATCH = DEFAULT_STAGES[4:5]
AFTER_DISPATCH = DEFAULT_STAGES[5:]

__all__ = ["DEFAULT_STAGES", "BEFORE_DISPATCH", "DISPATCH", "AFTER_DISPATCH"]
