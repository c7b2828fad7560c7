"""tool-ask-user: ask the human at the attached terminal. In: questions with optional
choices; out: one answer per question id. Without a terminal the call fails, never guesses."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from .base import ToolContext, fail, invalid, thaw


class Terminal(Protocol):
    def ask(self, prompt: str) -> str: ...
    def close(self) -> None: ...


class DevTty:
    """The controlling terminal itself, so piped stdin/stdout never swallow the exchange."""

    def __init__(self) -> None:
        self._in = open("/dev/tty", encoding="utf-8")
        try:
            self._out = open("/dev/tty", "w", encoding="utf-8")
        except OSError:
            self._in.close()
            raise

    def ask(self, prompt: str) -> str:
        self._out.write(prompt)
        self._out.flush()
        line = self._in.readline()
        if not line:
            raise EOFError
        return line.rstrip("\n")

    def close(self) -> None:
        self._in.close()
        self._out.close()


def open_terminal() -> Terminal:
    return DevTty()


def _prompt(question: Mapping[str, Any]) -> str:
    lines = [""]
    if question.get("header"):
        lines.append(f"== {question['header']} ==")
    lines.append(question["question"])
    for number, option in enumerate(question.get("options") or [], start=1):
        extra = f" - {option['description']}" if option.get("description") else ""
        lines.append(f"  {number}. {option['label']}{extra}")
    if question.get("options"):
        how = "numbers separated by commas" if question.get("multi_select") else "a number"
        lines.append(f"(answer with {how}, or type your own answer)")
    return "\n".join(lines) + "\n> "


def _interpret(reply: str, question: Mapping[str, Any]) -> str | list[str]:
    labels = [option["label"] for option in question.get("options") or []]
    picks = [part.strip() for part in reply.split(",")] if question.get("multi_select") else [reply.strip()]
    if labels and picks and all(p.isdigit() and 1 <= int(p) <= len(labels) for p in picks):
        chosen = [labels[int(p) - 1] for p in picks]
        return chosen if question.get("multi_select") else chosen[0]
    return [reply.strip()] if question.get("multi_select") else reply.strip()


def ask_user_question(args: Mapping[str, Any], ctx: ToolContext) -> dict[str, Any]:
    questions = thaw(args.get("questions"))
    if not isinstance(questions, list) or not questions:
        raise invalid("`questions` must be a non-empty list")
    for index, q in enumerate(questions):
        if not isinstance(q, dict) or not isinstance(q.get("id"), str) or not isinstance(q.get("question"), str):
            raise invalid(f"`questions[{index}]` needs a string `id` and `question`")
    if not ctx.interactive:
        raise fail("no-tty")
    try:
        terminal = open_terminal()
    except OSError:
        raise fail("no-tty") from None
    answers: dict[str, Any] = {}
    try:
        for q in questions:
            if ctx.abort.is_set():
                raise fail("aborted")
            answers[q["id"]] = _interpret(terminal.ask(_prompt(q)), q)
    except (EOFError, OSError):
        raise fail("no-tty") from None
    finally:
        terminal.close()
    return {"answers": answers}


def render(args: Mapping[str, Any], value: Mapping[str, Any]) -> str:
    lines = []
    for key, answer in value["answers"].items():
        shown = ", ".join(answer) if isinstance(answer, list) else answer
        lines.append(f"{key}: {shown or '(no answer)'}")
    return "\n".join(lines)


BODIES = {"tool-ask-user/ask_user_question": ask_user_question}
RENDERERS = {"tool-ask-user/ask_user_question": render}
