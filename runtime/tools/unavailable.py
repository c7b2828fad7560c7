"""Tools whose provider this host lacks. Their schemas stay valid and visible; calling one
fails with the family's structured error. In: any arguments; out: always a ToolError."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .base import Body, ToolContext, ToolError, fail

_SUBAGENTS = "subagent runtime (no child agents can be started or reached)"
_CORDIS = "dynamic Cordis runner"
_SCHEDULER = "session scheduler"
_TERMINALS = "terminal service"

# definition -> (error kind, tool name, what is missing)
MISSING: dict[str, tuple[str, str, str]] = {
    "tool-lsp/lsp": ("lsp-unavailable", "lsp", "language server is running"),
    "tool-session-query/session_search": ("session-search-disabled", "session_search", "session search index is open"),
    "tool-session-query/session_event_search": (
        "session-search-disabled",
        "session_event_search",
        "session search index is open",
    ),
    "tool-session-query/session_event_read": ("session-unavailable", "session_event_read", "session store"),
    "tool-session-query/session_event_trace": ("session-unavailable", "session_event_trace", "session store"),
    "tool-session-query/session_trace": ("session-unavailable", "session_trace", "session store"),
    "tool-subagent/subagent": ("provider-unavailable", "subagent", "subagent provider"),
    "tool-subagent-control/send_message": ("provider-unavailable", "send_message", _SUBAGENTS),
    "tool-subagent-control/interrupt_agent": ("provider-unavailable", "interrupt_agent", _SUBAGENTS),
    "tool-subagent-control/list_agents": ("provider-unavailable", "list_agents", _SUBAGENTS),
    "tool-subagent-report/report": ("provider-unavailable", "report", "parent agent to report to"),
    "tool-workflow/workflow": ("provider-unavailable", "workflow", "workflow engine"),
    "tool-ralph/ralph": ("provider-unavailable", "ralph", "workflow engine"),
    "tool-cordis/cordis_define": ("provider-unavailable", "cordis_define", _CORDIS),
    "tool-cordis/cordis_inspect_list": ("provider-unavailable", "cordis_inspect_list", _CORDIS),
    "tool-cordis/cordis_inspect_query": ("provider-unavailable", "cordis_inspect_query", _CORDIS),
    "tool-cordis/cordis_inspect_self": ("provider-unavailable", "cordis_inspect_self", _CORDIS),
    "tool-cordis/cordis_run": ("provider-unavailable", "cordis_run", _CORDIS),
    "tool-cordis/cordis_stop": ("provider-unavailable", "cordis_stop", _CORDIS),
    "tool-cordis/cordis_undefine": ("provider-unavailable", "cordis_undefine", _CORDIS),
    "schedule/schedule_create": ("provider-unavailable", "schedule_create", _SCHEDULER),
    "schedule/schedule_delete": ("provider-unavailable", "schedule_delete", _SCHEDULER),
    "schedule/schedule_list": ("provider-unavailable", "schedule_list", _SCHEDULER),
    "tool-skill/skill": ("skill-unavailable", "skill", "skill catalog"),
    "tool-terminal/terminal_open": ("provider-unavailable", "terminal_open", _TERMINALS),
    "tool-terminal/terminal_read": ("provider-unavailable", "terminal_read", _TERMINALS),
    "tool-terminal/terminal_send": ("provider-unavailable", "terminal_send", _TERMINALS),
    "tool-terminal/terminal_signal": ("provider-unavailable", "terminal_signal", _TERMINALS),
    "tool-terminal/terminal_list": ("provider-unavailable", "terminal_list", _TERMINALS),
    "tool-terminal/terminal_close": ("provider-unavailable", "terminal_close", _TERMINALS),
    "tools/run_code": ("code-unavailable", "run_code", "code runtime"),
}


def _unavailable(kind: str, tool: str, provider: str) -> Body:
    def body(args: Mapping[str, Any], ctx: ToolContext) -> Any:
        raise fail(kind, tool=tool, provider=provider)

    body.__name__ = body.__qualname__ = f"unavailable_{tool}"
    return body


BODIES = {definition: _unavailable(*row) for definition, row in MISSING.items()}


def unready(definition: str, tool: str, provider: str) -> ToolError:
    """What a call answers when the request lacks the provider behind its tool: the tool's own error, as its
    body raises it with no provider (the web tools: WEB_PROVIDER_UNAVAILABLE)."""
    if definition.startswith("tool-web/"):
        return fail("web-unavailable")
    row = MISSING.get(definition)
    if row is not None:
        return fail(row[0], tool=row[1], provider=row[2])
    return fail("provider-unavailable", tool=tool, provider=provider)


RENDERERS: dict = {}
