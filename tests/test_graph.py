"""`dshc graph`: the composition with every gate cut marked and labelled."""

from __future__ import annotations

import re


def test_dot_marks_each_kind_of_cut(cli):
    result = cli(
        "graph", "cordis", "--host", "web", "--without", "cordis-runner", "--without", "web-provider", "--format", "dot"
    )
    assert result.code == 0
    cuts = [line for line in result.out.splitlines() if "cut:" in line]
    labels = {re.search(r'label="cut: ([^"]+)"', line).group(1) for line in cuts}
    assert labels == {
        "needs",  # package -> missing service
        "removed by `fetch = false`",  # a knob removes web_fetch
        "mount tool-cordis — waits for cordis-runner",  # pending row
        "mount tool-pwsh — condition false",  # platform condition
        "mount subagent_codex — disabled",
        "mount subagent_claude_code — disabled",
        "provider — unavailable when called",  # readiness
    }
    assert result.out.startswith("digraph composition {") and result.out.rstrip().endswith("}")


def test_mermaid_shows_extends_scopes_and_restrictions(cli, tmp_path):
    out = cli("graph", "code", "--host", "web", "--scope", "child").out
    assert out.startswith("flowchart LR")
    assert '|"extends"|' in out and '|"child"|' in out and '[/"scope child"/]' in out
    assert "linkStyle" in out  # cut edges are drawn in red
    scope = tmp_path / "reader.dsh"
    scope.write_text('scope reader "Reads only" {\n  parent root\n  only read, grep\n}\n')
    restricted = cli("graph", "standard", "--load", str(scope), "--scope", "reader").out
    assert '-.->|"✂ registers — only in scope reader"| n_tool_bash' in restricted
    assert '-->|"registers"| n_tool_read' in restricted
