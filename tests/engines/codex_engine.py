"""Codex's own execpolicy engine (`codex execpolicy check`, from the pinned npm package in this folder) and
the commands Codex hands it for a shell line, for the differential tests of `dshc export codex`."""

from __future__ import annotations

import json
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from .differential import RANK

HERE = Path(__file__).parent
CODEX_EFFECT = {"allow": "allow", "prompt": "ask", "forbidden": "deny"}
# the fallback of a command no rule matches, by the exported approval_policy (Codex's known-safe list aside)
FALLBACK = {"untrusted": "ask", "on-request": "allow", "never": "allow"}


def pinned_version() -> str:
    return json.loads((HERE / "package.json").read_text())["dependencies"]["@openai/codex"]


def codex_binary() -> tuple[Path | None, str]:
    """The native binary the npm package ships (its `bin/codex.js` only picks one and spawns it), or None and
    why not."""
    found = sorted(HERE.glob("node_modules/@openai/codex-*/vendor/*/bin/codex"))
    if not found:
        return None, "Codex's engine is not installed: `npm ci --prefix tests/engines` (.ci/run does it)"
    binary = found[0]
    try:
        version = subprocess.run([str(binary), "--version"], capture_output=True, text=True, timeout=60).stdout
    except OSError as exc:
        return None, f"Codex's engine does not run here: {exc}"
    if pinned_version() not in version:
        return None, f"installed Codex is `{version.strip()}`, not the pinned {pinned_version()}: run `npm ci`"
    return binary, ""


def check(binary: Path, rules: Path, argv: list[str]) -> str | None:
    """The engine's decision for one argv (allow | ask | deny), None when no rule matches."""
    done = subprocess.run(
        [str(binary), "execpolicy", "check", "-r", str(rules), "--", *argv], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    decision = json.loads(done.stdout).get("decision")
    return CODEX_EFFECT[decision] if decision else None


def decide_lines(binary: Path, rules: Path, lines: list[str], fallback: str) -> list[str]:
    """Codex's decision for each shell line as its core checks it: the line's plain commands (or the whole
    `bash -lc LINE`), each by the rules or else the approval policy's fallback, the strictest winning."""
    argvs = [codex_sees(["bash", "-lc", line]) for line in lines]
    flat = sorted({tuple(a) for each in argvs for a in each})
    with ThreadPoolExecutor(max_workers=2) as pool:
        results = dict(zip(flat, pool.map(lambda a: check(binary, rules, list(a)), flat)))
    return [max((results[tuple(a)] or fallback for a in each), key=RANK.__getitem__) for each in argvs]


# --- what Codex's core hands execpolicy for `bash -lc SCRIPT` --------------------------------------------
# codex-rs/shell-command/src/bash.rs `parse_shell_lc_plain_commands`: a script of plain word commands joined
# by `&&`, `||`, `;`, `|` is checked command by command; any other script as the whole argv
ALLOWED_KINDS = {
    "program",
    "list",
    "pipeline",
    "command",
    "command_name",
    "word",
    "string",
    "string_content",
    "raw_string",
    "number",
    "concatenation",
}
ALLOWED_PUNCT = {"&&", "||", ";", "|", '"', "'"}


def codex_sees(argv: list[str]) -> list[list[str]]:
    if len(argv) == 3 and argv[1] in ("-lc", "-c") and Path(argv[0]).name in ("bash", "zsh", "sh"):
        plain = _plain_commands(argv[2])
        if plain is not None:
            return plain
    return [argv]


def _plain_commands(script: str) -> list[list[str]] | None:
    from dshc.compiler.bash_grammar import bash_parser

    src = script.encode()
    root = bash_parser().parse(src).root_node
    if root.has_error:
        return None
    commands, stack = [], [root]
    while stack:
        node = stack.pop()
        if node.is_named:
            if node.type not in ALLOWED_KINDS:
                return None
            if node.type == "command":
                commands.append(node)
        elif node.type not in ALLOWED_PUNCT and node.type.strip():
            return None
        stack.extend(node.children)
    out = []
    for node in sorted(commands, key=lambda n: n.start_byte):
        words = _words(node, src)
        if words is None:
            return None
        out.append(words)
    return out


def _text(node, src: bytes) -> str:
    return src[node.start_byte : node.end_byte].decode()


def _part(node, src: bytes) -> str | None:
    if node.type in ("word", "number"):
        return _text(node, src)
    if node.type == "string":
        if any(child.type != "string_content" for child in node.named_children):
            return None
        return _text(node, src)[1:-1]
    if node.type == "raw_string":
        return _text(node, src)[1:-1]
    return None


def _words(command, src: bytes) -> list[str] | None:
    words = []
    for child in command.named_children:
        if child.type == "command_name":
            name = child.named_children[0] if child.named_children else None
            if name is None or name.type != "word":
                return None
            words.append(_text(name, src))
        elif child.type == "concatenation":
            parts = [_part(part, src) for part in child.named_children]
            if None in parts or not "".join(parts):
                return None
            words.append("".join(parts))
        else:
            word = _part(child, src)
            if word is None:
                return None
            words.append(word)
    return words
