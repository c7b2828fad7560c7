"""`dshc test [PATH…]`: run policy test files and report failures (and, with `--coverage`,
the rules, guards, mounts and restrictions no test exercised).

In: `*.test.toml` files (see `test_files`), the declarations they load. Out: one line per case
(text) or one JSON object; exit 0 when every case passes, 1 when one fails, 2 when a test file
or a name in it cannot be used.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from ..compiler.diagnostics import Diagnostic, DshError, invalid_request
from ..compiler.program import Program, shipped_sources
from ..compiler.request import InvalidRequest, Request
from ..compiler.source import Span
from . import test_coverage as coverage
from .call_decision import decide_call
from .test_files import SUFFIX, Case, TestFile, find_test_files, read_test_file

# an unknown name in a context is reported at the key that named it
KEY_OF_CODE = {"DSH204": "preset", "DSH205": "host", "DSH206": "scope", "DSH207": "policy", "DSH216": "mode"}


@dataclass
class Outcome:
    file: str
    case: Case
    failures: list[tuple[Span, str]] = field(default_factory=list)

    def to_json(self) -> dict:
        return {
            "file": self.file,
            "name": self.case.name,
            "source": str(self.case.span),
            "passed": not self.failures,
            "failures": [{"source": str(span), "message": message} for span, message in self.failures],
        }


def cmd_test(args, out, err) -> int:
    from .command_context import catalog_of as _catalog

    paths = find_test_files(args.paths or ["."])
    if not paths:
        raise DshError(
            [
                invalid_request(
                    f"no *{SUFFIX} test files under {', '.join(args.paths or ['.'])}",
                    "name test files or folders holding them; `docs/language.md` shows the form",
                )
            ]
        )
    files = [read_test_file(path) for path in paths]  # every file is checked before any case runs
    catalog = _catalog(args)
    programs: dict[tuple, Program] = {}
    outcomes: list[Outcome] = []
    touched: list[Span] = []
    sources: dict[str, str] = {}
    under_test: dict[str, object] = {}
    for test_file in files:
        key = (*test_file.load, *args.load)
        program = programs.get(key)
        if program is None:
            program = programs[key] = Program.load(list(key), catalog=catalog, shipped=not args.no_shipped)
        sources.update(program.sources)
        for document in program.resolved.documents:
            under_test.setdefault(document.path, document)
        for case in test_file.cases:
            outcomes.append(_run_case(program, test_file, case, touched))
    failed = [o for o in outcomes if o.failures]
    report = _coverage(under_test, touched, sources, args.no_shipped, args.cover_shipped) if args.coverage else None
    if args.json:
        data = {
            "files": paths,
            "passed": len(outcomes) - len(failed),
            "failed": len(failed),
            "tests": [o.to_json() for o in outcomes],
        }
        if report is not None:
            data["coverage"] = report
        out.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    else:
        _write_text(out, outcomes, report)
    return 1 if failed else 0


def _run_case(program: Program, test_file: TestFile, case: Case, touched: list[Span]) -> Outcome:
    outcome = Outcome(test_file.path, case)
    request = _request(program, test_file, case)
    view = program.view(request)
    names = tuple(view.names)
    for name in sorted(case.asserted_tools()):
        _require_tool(program, request, test_file, case, name)
    if case.view is not None:
        missing, extra = sorted(set(case.view) - set(names)), sorted(set(names) - set(case.view))
        if missing or extra:
            outcome.failures.append(
                (
                    case.keys["view"],
                    "view: "
                    + "; ".join(part for part in (_listed("missing", missing), _listed("not expected", extra)) if part),
                )
            )
    for name in case.includes:
        if name not in names:
            outcome.failures.append(
                (case.keys["includes"], f"`{name}` is not on the wire: {_first_fail(program, request, name)}")
            )
    for name in case.excludes:
        if name in names:
            outcome.failures.append((case.keys["excludes"], f"`{name}` is on the wire"))
    for name, expected in case.explain.items():
        results = program.explain(request, name)
        failed = next((r for r in results if r.status == "fail"), None)
        got = failed.gate if failed else "available"
        if got != expected:
            why = f"gate `{failed.gate}` fails: {failed.reason}" if failed else "every gate passes"
            outcome.failures.append((case.keys[f"explain.{name}"], f"`{name}`: expected {expected}, got {got} ({why})"))
    at_call = request
    if case.calls and program.reads_session(request):  # the case's earlier calls (none: a fresh session)
        from .session_log import SessionBuilder

        builder = SessionBuilder(case.workspace)
        for call_id, tool, args, effect in case.earlier:
            (builder.add_denied if effect == "deny" else builder.add_call)(call_id, tool, args)
        at_call = request.model_copy(update={"session": builder.session()})
    for call in case.calls:
        decision = decide_call(program, at_call, call.tool, call.args, case.workspace)
        deciding = decision.deciding
        touched.extend(span for _, span in deciding if isinstance(span, Span))
        ids = [rule for rule, _ in deciding]
        problems = []
        # `conditional` is the policy's word for a call it cannot resolve; the call's own effect is a deny
        got = decision.policy_effect if call.expect == "conditional" else decision.effect
        if decision.invalid is not None:
            problems.append(f"expected {call.expect}, but the arguments are invalid")
        elif got != call.expect:
            problems.append(f"expected {call.expect}, got {got}")
        if call.gate is not None and decision.gate != call.gate:
            problems.append(f"expected gate `{call.gate}`, got `{decision.gate}`")
        if call.by is not None and call.by not in ids:
            problems.append(f"expected it decided by `{call.by}`")
        if problems:
            by = ", ".join(f"{rule} at {span}" if span else rule for rule, span in deciding) or "-"
            outcome.failures.append(
                (
                    call.span,
                    f"call {call.tool} {json.dumps(call.args, sort_keys=True, default=str)}"
                    f": {'; '.join(problems)} ({decision.reason}; decided by {by})",
                )
            )
    for name in case.asserted_tools(names):
        touched.extend(coverage.touched_by_tool(program, request, name))
    if case.view is not None:
        touched.extend(coverage.touched_by_view(program, request))
    return outcome


def _listed(label: str, names: list[str]) -> str:
    return f"{label} " + ", ".join(f"`{n}`" for n in names) if names else ""


def _first_fail(program: Program, request: Request, name: str) -> str:
    failed = next((r for r in program.explain(request, name) if r.status == "fail"), None)
    return f"gate `{failed.gate}` fails: {failed.reason}" if failed else "every gate passes"


def _request(program: Program, test_file: TestFile, case: Case) -> Request:
    """The case's context as a Request, composed once so a wrong name is reported at its key."""
    try:
        request = Request(**case.context)
    except InvalidRequest as exc:
        raise DshError(
            [Diagnostic("DSH109", f"case `{case.name}`: {exc.errors()[0]['msg'].lower()}", case.span)],
            {test_file.path: test_file.text},
        )
    try:
        program.view(request)
    except DshError as exc:
        raise DshError([_at_key(d, case) for d in exc.diagnostics], {**program.sources, test_file.path: test_file.text})
    return request


def _require_tool(program: Program, request: Request, test_file: TestFile, case: Case, name: str) -> None:
    try:
        program.require_tool(request, name)
    except DshError as exc:
        at = _where_named(case, name)
        raise DshError(
            [Diagnostic(d.code, f"case `{case.name}`: {d.message}", at, d.help) for d in exc.diagnostics],
            {test_file.path: test_file.text},
        )


def _where_named(case: Case, name: str) -> Span:
    """The first place a case names a tool: its explain key, a call, `includes`, `excludes`, `view`."""
    spans = [case.keys.get(f"explain.{name}")] + [c.keys.get("tool", c.span) for c in case.calls if c.tool == name]
    spans += [case.keys.get(key) for key in ("includes", "excludes", "view") if name in (getattr(case, key) or ())]
    return next((span for span in spans if span is not None), case.span)


def _at_key(diagnostic: Diagnostic, case: Case) -> Diagnostic:
    """A composition error, moved to the case key that caused it (the declarations did not)."""
    if diagnostic.span is not None and diagnostic.code not in KEY_OF_CODE:
        return diagnostic
    key = KEY_OF_CODE.get(diagnostic.code)
    at = case.keys.get(key, case.span) if key else case.span
    return Diagnostic(diagnostic.code, f"case `{case.name}`: {diagnostic.message}", at, diagnostic.help)


def _coverage(documents: dict, touched: list[Span], sources: dict, no_shipped: bool, with_shipped: bool) -> dict:
    """Items of the files under test: those the tests load (and the shipped ones with
    `--cover-shipped`), or the shipped ones when they load none."""
    shipped = {f.path for f in shipped_sources()} if not no_shipped else set()
    own = [d for path, d in documents.items() if path not in shipped]
    chosen = own + [d for path, d in documents.items() if path in shipped] if with_shipped or not own else own
    every = coverage.items(chosen)
    done = coverage.exercised(every, touched)
    missed = [i for i in every if i not in done]
    return {
        "files": sorted({d.path for d in chosen}),
        "items": len(every),
        "exercised": len(done),
        "uncovered": [i.to_json(coverage.line_text(sources, i.span)) for i in missed],
    }


def _write_text(out, outcomes: list[Outcome], report: dict | None) -> None:
    for outcome in outcomes:
        mark = "ok  " if not outcome.failures else "FAIL"
        out.write(f"{mark} {outcome.case.span.path}:{outcome.case.span.line}  {outcome.case.name}\n")
        for span, message in outcome.failures:
            out.write(f"     {span}: {message}\n")
    failed = sum(1 for o in outcomes if o.failures)
    out.write(f"{len(outcomes) - failed} passed, {failed} failed\n")
    if report is None:
        return
    share = 100 * report["exercised"] // report["items"] if report["items"] else 100
    out.write(
        f"coverage: {report['exercised']} of {report['items']} rules, guards, defaults, mounts and "
        f"restrictions exercised ({share}%) in {', '.join(report['files'])}\n"
    )
    for item in report["uncovered"]:
        text = f"  {item['text']}" if item["text"] else ""
        out.write(f"  not exercised: {item['source']}  {item['kind']} {item['id']}:{text}\n")
