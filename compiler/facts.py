"""The fixed vocabulary conditions and requests speak: platforms, modes, facts, services.

Composition conditions (mount rows) see only host facts; policy conditions also see the
request and the call's arguments.
"""

from __future__ import annotations

PLATFORMS = ("darwin", "linux", "win32")
MODES = ("both", "code", "native")
SANDBOX_MODES = ("read-only", "workspace-write", "danger-full-access")
APPROVALS = ("ask", "never")
PLACES = ("workspace",)

# services no catalog package requires but hosts provide and policies read
HOST_SERVICES = {
    "sandbox": "the host's shell and file backends confine calls (escalation parameters appear)",
    "approval": "an approval channel exists, so `ask` can reach a human",
    # subagent providers: a subagent row registers its tool only once its provider is registered
    "subagent-provider-spawn": "the in-process provider that starts fresh children",
    "subagent-provider-fork": "the in-process provider that forks the caller's conversation",
    "subagent-provider-codex": "the Codex product provider",
    "subagent-provider-claude-code": "the Claude Code product provider",
    # run_code's provider: present with `code-runtime` unless the request removes it, as the CLI
    # does where this machine has no Node.js worker
    "code-worker": "a worker that runs `run_code` programs is installed (Node.js and its npm dependency)",
}
CODE_WORKER = "code-worker"
CODE_RUNTIME = "code-runtime"

# fact -> (type, allowed values or None); `args.*` facts are typed by the tool schemas
COMPOSITION_FACTS: dict[str, tuple[str, tuple[str, ...] | None]] = {
    "platform": ("string", PLATFORMS),
    "host": ("string", None),
}
REQUEST_FACTS: dict[str, tuple[str, tuple[str, ...] | None]] = {
    **COMPOSITION_FACTS,
    "preset": ("string", None),
    "scope": ("string", None),
    "mode": ("string", MODES),
    "plan_mode": ("boolean", None),
    "sandbox": ("string", SANDBOX_MODES),
    "tool": ("string", None),
}
