"""One function per `dshc` command: build the request, call the library, render the answer."""
from __future__ import annotations

import importlib
import json
import os
from argparse import Namespace

from ..compiler.catalog import load_catalog
from ..compiler.diagnostics import Diagnostic, DshError, invalid_request, iter_codes, unknown
from ..compiler.program import Program, read_paths, shipped_sources
from ..compiler.render import diagnostics_json, human
from ..compiler.request import CONTEXT_FIELDS, Request
from ..compiler.source import Span
from . import interop_commands as interop
from .command_context import catalog_of as _catalog, from_files as _from_files, program_of as _program
from .command_context import request_of as _request, write_json as _write_json
from .decide import cmd_decide

TYPE_CHECKING = False  # no `import typing` (~4 ms of a hook): its names are for annotations only
if TYPE_CHECKING:
    from typing import TextIO


def run(args: Namespace, out: TextIO, err: TextIO) -> int:
    return COMMANDS[args.command](args, out, err)


# --- catalog -------------------------------------------------------------------------------
def cmd_catalog(args, out, err) -> int:
    catalog = _catalog(args) or load_catalog()
    counts = catalog.counts()
    if args.json:
        _write_json(out, {
            "catalog": catalog.name,
            "counts": counts,
            "parallel_safe": sorted({t.name for t in catalog.definitions.values() if t.parallel_safe}),
            "duplicate_names": {n: [t.definition for t in ts] for n, ts in catalog.by_name.items() if len(ts) > 1},
            "aliases": {a: t.definition for t in catalog.definitions.values() for a in t.aliases},
            "packages": [p.model_dump(mode="json") for p in catalog.packages],
        })
    elif args.format == "markdown":
        from ..compiler.templates import render_template  # jinja2 loads only for a markdown catalog
        out.write(render_template("catalog.md.j2", catalog=catalog, counts=counts))
    else:
        for package in catalog.packages:
            out.write(f"{package.id}\n")
            for tool in package.tools:
                tag = "parallel" if tool.parallel_safe else "exclusive"
                aliases = f" (alias: {', '.join(tool.aliases)})" if tool.aliases else ""
                out.write(f"  {tool.name:<24} {tag:<10} {tool.definition}{aliases}\n")
        out.write(counts_line(counts) + "\n")
    return 0


def counts_line(counts: dict) -> str:
    return (f"{counts['packages']} packages · {counts['schema_entries']} schema entries · "
            f"{counts['unique_names']} unique names · {counts['aliases']} alias"
            + ("" if counts["aliases"] == 1 else "es"))


# --- compile -------------------------------------------------------------------------------
def cmd_compile(args, out, err) -> int:
    view = _program(args).view(_request(args))
    if getattr(args, "format", None):
        return interop.compile_format(args, view, out, err)
    if args.json:
        out.write(view.canonical_json().decode("utf-8") + "\n")
        return 0
    out.write(f"preset {view.preset or '-'} · host {view.host} · {view.platform} · scope {view.scope} · "
              f"mode {view.mode} · policy {view.policy or '-'}\n")
    out.write(f"fingerprint {view.fingerprint}\n\n")
    _table(out, view.tools)
    if view.sdk is not None:
        out.write("\nsdk (behind run_code):\n")
        _table(out, view.sdk)
    out.write(f"\n{len(view.tools)} on the wire" + (f", {len(view.sdk)} in the sdk" if view.sdk is not None else "") + "\n")
    return 0


def _table(out, entries) -> None:
    out.write(f"  {'tool':<22} {'execution':<10} {'policy':<12} {'ready':<12} definition\n")
    for e in entries:
        out.write(f"  {e.name:<22} {e.execution:<10} {e.policy:<12} {e.ready:<12} {e.definition}\n")


# --- explain -------------------------------------------------------------------------------
def _gate_json(result) -> dict:
    data = {"gate": result.gate, "status": result.status, "reason": result.reason,
            "source": str(result.source) if result.source else None, "counterfactual": result.counterfactual}
    if result.detail is not None:  # a conditional tool: the rules its calls turn on
        data["per_call"] = result.detail
    return data


def explain_json(tool: str, results) -> dict:
    failed = next((r.gate for r in results if r.status == "fail"), None)
    policy = next((r.value for r in results if r.gate == "allowed" and r.status != "not-reached"), None)
    return {"tool": tool, "available": failed is None, "failed_gate": failed, "policy": policy,
            "gates": [_gate_json(r) for r in results]}


def explain_text(tool: str, results) -> str:
    data = explain_json(tool, results)
    head = f"`{tool}` is not available: gate `{data['failed_gate']}` fails" if not data["available"] else \
        f"`{tool}` is available for some calls" if data["policy"] == "conditional" else f"`{tool}` is available"
    lines = [head]
    for r in results:
        mark = {"pass": "pass", "fail": "FAIL", "not-reached": "  - "}[r.status]
        lines.append(f"  {r.gate:<10} {mark:<5} {r.reason}")
        if r.source and r.status != "not-reached":
            lines.append(f"  {'':<10} {'':<5} at {r.source}")
        if r.counterfactual and r.status == "fail":
            lines.append(f"  {'':<10} {'':<5} fix: {r.counterfactual}")
    return "\n".join(lines) + "\n"


def cmd_explain(args, out, err) -> int:
    if args.all and args.tool is not None:
        # with --all the one positional is the preset: `explain --all reviewer`
        if args.preset is not None:
            raise DshError([invalid_request(f"explain --all takes one PRESET, not `{args.tool}` and `{args.preset}`",
                                            "e.g. `dshc explain --all standard`; drop --all to explain one tool")])
        args.preset, args.tool = args.tool, None
    program = _program(args)
    request = _request(args)
    if args.all:
        table = program.explain_all(request)
        rows = [explain_json(name, results) for name, results in table.items()]
        if args.json:
            _write_json(out, {"tools": rows})
        else:
            for row in rows:
                out.write(f"  {row['tool']:<24} {'available' if row['available'] else 'fails ' + row['failed_gate']}\n")
        return 0
    if not args.tool:
        raise DshError([invalid_request("explain needs a TOOL, or --all", "e.g. `dshc explain bash standard`, or "
                                        "`dshc explain --all standard` for every tool")])
    results = program.explain(request, args.tool)
    data = explain_json(args.tool, results)
    from .host import describe_sandbox, sandbox_text
    sandbox = describe_sandbox(program, request, args.tool) if request.policy else None
    rows = _process_enforcement(program, request) if sandbox and sandbox["applies_to"] == "processes" else None
    if args.json:
        _write_json(out, {**data, "sandbox": sandbox, **({"enforcement": [row.to_json() for row in rows]}
                                                          if rows is not None else {})} if sandbox else data)
    else:
        out.write(explain_text(args.tool, results) + (sandbox_text(sandbox) if sandbox else "")
                  + (_enforcement_text(rows, request.policy) if rows else ""))
    return 0 if data["available"] else 1


def _process_enforcement(program, request):
    """The enforcement map of the request's policy (`compiler.enforcement`), for a tool that starts processes."""
    from ..compiler.enforcement import enforcement_map
    from .host import host_mechanism
    policy = program.composition(request).policy
    return enforcement_map(policy, host_mechanism()) if policy is not None else None


def _enforcement_text(rows, policy: str) -> str:
    """What holds the policy's denies for a process this tool starts: the count per layer, and each gap."""
    from collections import Counter
    counts = Counter(row.layer for row in rows)
    text = "enforcement: " + ", ".join(f"{count} held by {layer}" for layer, count in counts.items()) + "\n"
    for row in rows:
        if row.witness:
            text += f"  {row.layer}: {row.rule} ({row.concerns}): not stopped: {row.witness}\n"
    return text + f"  (the whole map: dshc verify --enforcement --policy {policy})\n"


# --- check ---------------------------------------------------------------------------------
def cmd_check(args, out, err) -> int:
    from ..compiler.checks import run_checks
    from ..compiler.program import read_paths
    files = read_paths(list(args.paths) + list(args.load))
    program = _from_files((shipped_sources() if not args.no_shipped else []) + files, _catalog(args))
    # with paths, report what those files say; without, the shipped declarations themselves
    only = {f.path for f in files} if files else None
    findings = [d for d in program.warnings if only is None or d.where in only]
    findings += list(run_checks(program, only))
    if args.json:
        _write_json(out, {"diagnostics": diagnostics_json(findings)})
    elif findings:
        out.write(human(findings, limit=50, sources=program.sources) + "\n")
    else:
        out.write("no findings\n")
    return 1 if findings else 0


# --- fmt -----------------------------------------------------------------------------------
def cmd_fmt(args, out, err) -> int:
    from ..compiler.fmt import format_document
    from ..compiler.program import parse_files, read_paths
    if not args.paths and not args.check:
        raise DshError([invalid_request("fmt needs PATH arguments to rewrite", "name the .dsh files or folders to "
                                        "format, or use --check to check the shipped files")])
    files = read_paths(args.paths) if args.paths else shipped_sources()
    documents, diags, texts = parse_files(files)
    if diags:
        raise DshError(diags, texts)
    changed = []
    for file, document in zip(files, documents):
        text = format_document(document)
        if text.encode("utf-8") != file.data:
            changed.append(file.path)
            if not args.check:
                from .output_file import replace_file
                replace_file(file.path, text, "the formatted file")  # a failed write keeps the original
    for path in changed:
        out.write(f"{'would reformat' if args.check else 'reformatted'} {path}\n")
    return 1 if (changed and args.check) else 0


# --- diff ----------------------------------------------------------------------------------
CONTEXT_KEYS = set(CONTEXT_FIELDS) - {"flags"}  # a `key=value` side names one value per key


def _side_program(spec: str, args: Namespace) -> Program:
    if _is_bundle(spec):
        return _bundle_program(spec, args)
    return side_program(spec, _catalog(args), args.load, shipped=not args.no_shipped)


def _is_bundle(spec: str) -> bool:
    return spec.endswith(".tar.gz") and os.path.isfile(spec)


def _bundle_program(spec: str, args: Namespace) -> Program:
    """A signed bundle as one side: verified against --trust, its own sources and catalog."""
    from .bundle import load
    if not getattr(args, "trust", None):
        raise DshError([invalid_request(f"`{spec}` is a bundle: pass --trust PUBKEY to verify its signature",
                                        "the `.pub` file `dshc build --new-key` wrote")])
    return load(spec, args.trust).program


def side_program(spec: str, catalog=None, load=(), shipped: bool = True) -> Program:
    """One side of `diff` / `verify --against`: its files over the shipped declarations (unless
    `shipped` is false), plus every `load` file, so a side may extend `workspace-write` like any file."""
    paths = list(load) if spec == "@shipped" else [spec, *load]
    shipped = shipped or spec == "@shipped"
    try:
        # an agent's own settings (Claude Code settings.json, Codex config.toml) are imported on the fly
        imported = interop.agent_source(spec) if spec != "@shipped" else None
        own = [imported, *read_paths(load)] if imported is not None else read_paths(paths)
        return _from_files((shipped_sources() if shipped else []) + own, catalog)
    except DshError as exc:
        if spec != "@shipped" and shipped and any(d.code == "DSH210" for d in exc.diagnostics):
            hint = invalid_request(f"`{spec}` declares names the shipped files declare too",
                                   "to compare a complete tree of its own, pass --no-shipped")
            raise DshError([*exc.diagnostics, hint], exc.sources) from None
        raise


def _context(spec: str) -> Request:
    fields: dict = {"with_services": set(), "without_services": set()}
    for part in filter(None, spec.split(",")):
        key, _, value = part.partition("=")
        if key not in CONTEXT_KEYS or not value:
            raise DshError([invalid_request(f"`{spec}` is neither a path nor a context `key=value,…`",
                                            f"context keys: {', '.join(sorted(CONTEXT_KEYS))}, e.g. "
                                            "`platform=linux,policy=read-only`")])
        if key == "plan" and value not in ("true", "false"):
            raise DshError([invalid_request(f"invalid context `{spec}`: plan is `{value}`",
                                            "`plan` takes true or false")])
        if key in ("with", "without"):
            fields[CONTEXT_FIELDS[key]].add(value)
        else:
            fields[key] = value == "true" if key == "plan" else value
    try:
        return Request(**fields)
    except ValueError as exc:
        raise DshError([invalid_request(f"invalid context `{spec}`: {exc.errors()[0]['msg']}",
                                        "each key takes one value; `plan` takes true or false")])


def cmd_diff(args, out, err) -> int:
    from ..compiler.diff import diff_programs, render_text
    paths = [os.path.exists(s) or s == "@shipped" for s in (args.old, args.new)]
    if all(paths):
        old, new = _side_program(args.old, args), _side_program(args.new, args)
        result = diff_programs(old, new)
    elif not any(paths):
        program = _program(args)
        old, new = _context(args.old), _context(args.new)
        for context in (old, new):
            program.composition(context)  # an unknown name in a context is an error (exit 2), not an empty diff
        result = diff_programs(program, program, [old], [new])
    else:
        raise DshError([invalid_request("OLD and NEW must both be sources or both contexts",
                                        "compare two sources (paths or `@shipped`), or two contexts of the loaded "
                                        "sources such as `policy=read-only policy=workspace-write`")])
    if args.json:
        _write_json(out, result)
    else:
        out.write(render_text(result))
    return 1 if (args.fail_on_widen and result["widening"]) else 0


# --- graph ---------------------------------------------------------------------------------
def cmd_graph(args, out, err) -> int:
    from ..compiler.graph import composition_graph, to_dot, to_mermaid
    graph = composition_graph(_program(args).gate_context(_request(args)))
    out.write(to_dot(graph) if args.format == "dot" else to_mermaid(graph))
    return 0


# --- verify --------------------------------------------------------------------------------
def cmd_verify(args, out, err) -> int:
    from ..compiler.verify import verify
    bundles = [p for p in args.paths if _is_bundle(p)]
    if bundles and len(args.paths) > 1:
        raise DshError([invalid_request("verify takes one bundle, or declaration paths, not both",
                                        "e.g. `dshc verify --against old.tar.gz new.tar.gz --trust KEY.pub`")])
    program = _bundle_program(bundles[0], args) if bundles else _program(args, args.paths)
    against = _side_program(args.against, args) if args.against else None
    for name in args.policies or ():
        if name not in program.resolved.policies:
            raise DshError([unknown("DSH207", "policy", name, program.resolved.policies, None)])
    if args.enforcement or args.require or args.mechanism:
        return _enforcement(program, args, out)
    from .progress import ProgressBar
    bar = ProgressBar(err, "verify")
    try:
        report = verify(program, against, args.policies, progress=bar)
    finally:
        bar.close()
    data = report.to_json()
    if args.json:
        _write_json(out, data)
    else:
        properties = "narrowing, monotonicity" + (", no widening against OLD" if against else "")
        for violation in report.violations:
            out.write(f"VIOLATION [{violation.property}] {violation.message}\n")
            out.write(f"  witness: {json.dumps(violation.witness, sort_keys=True)}\n")
        for note in report.notes:
            out.write(f"note: {note}\n")
        if report.violations:
            out.write(f"{len(report.violations)} violation(s) over {report.cells} cells\n")
        elif report.exact:
            out.write(f"proved {properties} over {report.cells} cells and {report.decisions} decisions "
                      "(argument classes exact)\n")
        else:
            out.write(f"no violation found for {properties} over {report.cells} cells and {report.decisions} "
                      "decisions — not a proof: some argument classes are not exact (see notes)\n")
    return 1 if report.violations else 0


def _enforcement(program, args, out) -> int:
    """`verify --enforcement`: the map of each policy (`compiler.enforcement`); 1 when a required rule is not
    the OS's to hold."""
    from ..compiler.enforcement import enforcement_map, gaps
    from .host import host_mechanism
    mechanism = args.mechanism or host_mechanism()
    names = args.policies or sorted(program.resolved.policies)
    maps = {name: enforcement_map(program.resolved.policies[name], mechanism) for name in names}
    ids = {row.rule for rows in maps.values() for row in rows}
    for wanted in args.require:
        if wanted != "*" and wanted not in ids:
            raise DshError([invalid_request(f"`--require {wanted}` names no row of the map",
                                            "give a rule id the map prints (`POLICY/deny@LINE`, `POLICY/guard:NAME`), "
                                            "or `*`")])
    missing = [row for rows in maps.values() for row in gaps(rows, set(args.require))]
    if args.json:
        _write_json(out, {"mechanism": mechanism, "policies": {name: [row.to_json() for row in rows]
                                                                for name, rows in maps.items()},
                          "gaps": [row.to_json() for row in missing]})
        return 1 if missing else 0
    out.write(f"sandbox mechanism: {mechanism}\n")
    for name, rows in maps.items():
        if not rows:
            continue
        out.write(f"policy {name}\n")
        for row in rows:
            out.write(f"  {row.layer:<16} {row.rule}: {row.concerns} — {row.how}\n")
            if row.witness:
                out.write(f"  {'':<16} not stopped: {row.witness}\n")
    for row in missing:
        out.write(f"GAP {row.rule} is required of the OS, and is held by {row.layer}: {row.how}\n")
    return 1 if missing else 0


# --- run -----------------------------------------------------------------------------------
def _line_diagnostics(path: str, problems) -> list[Diagnostic]:
    """(line, message) problems of a JSONL file; a problem without a line is the file unreadable."""
    return [Diagnostic("DSH107", message, path=path) if line is None else
            Diagnostic("DSH405", message, Span(path, line, 1, line, 1) if line else None, path=path)
            for line, message in problems]


def cmd_run(args, out, err) -> int:
    from ..runtime.calls_file import CallsFileError, read_calls
    from .host import pick_approver
    from .run_calls import RunOptions, RunStop, run_calls
    try:
        calls = read_calls(args.calls)
    except CallsFileError as exc:
        raise DshError(_line_diagnostics(args.calls, exc.problems))
    program = _program(args)
    request = _request(args)
    if not os.path.isdir(args.workspace):
        raise DshError([Diagnostic("DSH405", f"workspace `{args.workspace}` is not a folder")])
    from ..runtime.pg_log import is_dsn  # the event-log back ends load for `run` alone
    if args.log and not is_dsn(args.log) and (os.path.isdir(args.log) or not os.path.isdir(os.path.dirname(os.path.abspath(args.log)))):
        raise DshError([Diagnostic("DSH405", f"event log `{args.log}` is not a file in an existing folder")])
    options = RunOptions(args.workspace, args.log, pick_approver(args.approve), args.timeout,
                         interactive=out.isatty() if hasattr(out, "isatty") else False,
                         rerun_interrupted=args.rerun_interrupted,
                         output_schema=_output_schema(args.output_schema) if args.output_schema else None)

    def emit(results, contexts) -> None:
        for result in results:
            if args.json:
                out.write(json.dumps(result.to_json(), ensure_ascii=False, default=str) + "\n")
            else:
                out.write(f"[{result.call_id}] {result.name} {'error' if result.is_error else 'ok'}: {result.content}\n")
        for context in contexts:
            out.write((json.dumps({"context": context}) if args.json else f"(context) {context}") + "\n")
        out.flush()

    from ..runtime.state_files import UnsafeStateFile
    try:
        report = run_calls(program, request, calls, options, emit, getattr(args, "stop", None) or RunStop())
    except UnsafeStateFile as exc:  # a link planted where the log writes (its blobs): nothing more runs
        raise DshError([Diagnostic("DSH107", f"cannot write the event log: {exc.strerror}", path=args.log)]) from None
    if report.stopped_by is not None:
        from .run_calls import interrupted_result
        emit([interrupted_result(call_id, name) for call_id, name in report.interrupted], ())
        name = signal_name(report.stopped_by)
        err.write(f"dshc: stopped by {name}: {len(report.interrupted)} call(s) in flight recorded as interrupted; "
                  "run the same command again to resume\n")
        return 128 + report.stopped_by
    return 1 if report.failed else 0


def _output_schema(path: str) -> dict:
    """`--output-schema FILE.json`: a JSON Schema object, refused before any call runs when it is not one."""
    import jsonschema
    try:
        with open(path, encoding="utf-8") as handle:
            schema = json.load(handle)
    except OSError as exc:
        raise DshError([Diagnostic("DSH405", f"output schema `{path}` cannot be read: {exc.strerror or exc}")])
    except (ValueError, RecursionError) as exc:
        raise DshError([Diagnostic("DSH405", f"output schema `{path}` is not JSON: {exc}", path=path)])
    try:
        if not isinstance(schema, dict):
            raise jsonschema.SchemaError("a schema for a result object must be a JSON object")
        jsonschema.Draft202012Validator.check_schema(schema)
    except jsonschema.SchemaError as exc:
        raise DshError([Diagnostic("DSH405", f"output schema `{path}` is not a valid JSON Schema: {exc.message}",
                                   path=path)])
    return schema


def signal_name(signum: int) -> str:
    import signal
    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"


# --- replay --------------------------------------------------------------------------------
def cmd_replay(args, out, err) -> int:
    from .log_target import read_log_target
    from .replay import replay
    log = read_log_target(args.log)
    program = _program(args)
    if args.policy not in program.resolved.policies:
        raise DshError([unknown("DSH207", "policy", args.policy, program.resolved.policies, None)])
    report = replay(program, log, args.policy)
    if report.problems:
        raise DshError(_line_diagnostics(args.log, report.problems))
    if args.json:
        _write_json(out, {"policy": args.policy, "calls": report.calls, "changes": list(report.changes),
                          "torn_tail": log.torn_tail})
    else:
        for change in report.changes:
            out.write(f"[{change['callId']}] {change['name']}: {change['before']} → {change['after']} "
                      f"({change['reason']})\n")
        out.write(f"{len(report.changes)} change(s) over {report.calls} call(s) under policy `{args.policy}`\n")
    return 1 if report.changes else 0


# --- codes ---------------------------------------------------------------------------------
def cmd_codes(args, out, err) -> int:
    if args.json:
        _write_json(out, [{"code": c, "severity": s, "summary": m} for c, s, m in iter_codes()])
        return 0
    for code, severity, summary in iter_codes():
        out.write(f"{code}  {severity:<7}  {summary}\n")
    return 0


# commands defined in modules of their own, loaded only when that command runs (or for the whole help)
MODULES = {"ls": ".ls", "suggest": ".suggest", "audit": ".audit", "test": ".test_runner", "build": ".bundle",
           "lsp": ".lsp.command", "upstream": ".upstream_refresh", "init": ".init"}


def _later(command: str, function: str):
    """A command whose module loads when it runs: a process that decides pays for none of the others."""
    def run(args: Namespace, out: TextIO, err: TextIO) -> int:
        return getattr(importlib.import_module(MODULES[command], __package__), function)(args, out, err)
    return run


COMMANDS = {
    "catalog": cmd_catalog,
    "compile": cmd_compile,
    "explain": cmd_explain,
    "decide": cmd_decide,
    "check": cmd_check,
    "fmt": cmd_fmt,
    "diff": cmd_diff,
    "graph": cmd_graph,
    "verify": cmd_verify,
    "run": cmd_run,
    "replay": cmd_replay,
    "codes": cmd_codes,
    "ls": _later("ls", "cmd_ls"),
    "suggest": _later("suggest", "cmd_suggest"),
    "audit": _later("audit", "cmd_audit"),
    "test": _later("test", "cmd_test"),
    "upstream": _later("upstream", "cmd_upstream"),
    "init": _later("init", "cmd_init"),
    "hook": interop.cmd_hook,
    "import": interop.cmd_import,
    "export": interop.cmd_export,
}
