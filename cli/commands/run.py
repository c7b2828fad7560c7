"""`dshc run CALLS.jsonl`: model tool calls through the runtime's pipeline over the compiled view;
SIGINT/SIGTERM stop it cleanly (the calls in flight recorded as interrupted)."""

from __future__ import annotations

import contextlib

from ..flags import context_flags


def add_parser(sub) -> None:
    p = sub.add_parser("run", help="run model tool calls through the pipeline over the compiled view")
    p.add_argument(
        "calls", metavar="CALLS.jsonl", help='one call per line {"id","name","arguments"}, or {"batch": […]}'
    )
    context_flags(p)
    p.add_argument(
        "--log", metavar="EVENTS.jsonl|DSN", help="append the durable event log here (a file, or postgresql://…)"
    )
    p.add_argument("--approve", choices=["once", "never"], help="answer every ask (default: ask on a terminal)")
    p.add_argument("--workspace", metavar="DIR", default=".", help="workspace root (default: the current directory)")
    p.add_argument("--timeout", type=float, default=120.0, metavar="SECONDS", help="per-call timeout")
    p.add_argument(
        "--rerun-interrupted",
        action="store_true",
        help="run again the calls an earlier run recorded without a result (default: report them)",
    )
    p.add_argument(
        "--output-schema",
        metavar="FILE.json",
        help="the JSON Schema `structured_output` results must match (workflow and ralph children)",
    )


def run(args, out, err) -> int:
    with _stop_on_signals() as stop:
        args.stop = stop
        return _run_calls(args, out, err)


def _run_calls(args, out, err) -> int:
    import json
    import os
    from ...compiler.diagnostics import Diagnostic, DshError
    from ...runtime.calls_file import CallsFileError, read_calls
    from ..command_context import line_diagnostics, program_of, request_of
    from ..host import pick_approver
    from ..output_schema import read_output_schema
    from ..run_calls import RunOptions, RunStop, run_calls

    try:
        calls = read_calls(args.calls)
    except CallsFileError as exc:
        raise DshError(line_diagnostics(args.calls, exc.problems))
    program = program_of(args)
    request = request_of(args)
    if not os.path.isdir(args.workspace):
        raise DshError([Diagnostic("DSH405", f"workspace `{args.workspace}` is not a folder")])
    from ...runtime.pg_log import is_dsn  # the event-log back ends load for `run` alone

    if (
        args.log
        and not is_dsn(args.log)
        and (os.path.isdir(args.log) or not os.path.isdir(os.path.dirname(os.path.abspath(args.log))))
    ):
        raise DshError([Diagnostic("DSH405", f"event log `{args.log}` is not a file in an existing folder")])
    options = RunOptions(
        args.workspace,
        args.log,
        pick_approver(args.approve),
        args.timeout,
        interactive=out.isatty() if hasattr(out, "isatty") else False,
        rerun_interrupted=args.rerun_interrupted,
        output_schema=read_output_schema(args.output_schema) if args.output_schema else None,
    )

    def emit(results, contexts) -> None:
        for result in results:
            if args.json:
                out.write(json.dumps(result.to_json(), ensure_ascii=False, default=str) + "\n")
            else:
                out.write(
                    f"[{result.call_id}] {result.name} {'error' if result.is_error else 'ok'}: {result.content}\n"
                )
        for context in contexts:
            out.write((json.dumps({"context": context}) if args.json else f"(context) {context}") + "\n")
        out.flush()

    from ...runtime.state_files import UnsafeStateFile

    try:
        report = run_calls(program, request, calls, options, emit, getattr(args, "stop", None) or RunStop())
    except UnsafeStateFile as exc:  # a link planted where the log writes (its blobs): nothing more runs
        raise DshError([Diagnostic("DSH107", f"cannot write the event log: {exc.strerror}", path=args.log)]) from None
    if report.stopped_by is not None:
        from ..run_calls import interrupted_result

        emit([interrupted_result(call_id, name) for call_id, name in report.interrupted], ())
        name = _signal_name(report.stopped_by)
        err.write(
            f"dshc: stopped by {name}: {len(report.interrupted)} call(s) in flight recorded as interrupted; "
            "run the same command again to resume\n"
        )
        return 128 + report.stopped_by
    return 1 if report.failed else 0


def _signal_name(signum: int) -> str:
    import signal

    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"


@contextlib.contextmanager
def _stop_on_signals():
    """SIGINT/SIGTERM ask `run` to stop (it records and cleans up) instead of raising mid-call."""
    import signal
    from ..run_calls import RunStop

    stop = RunStop()
    previous = {}
    try:
        for sig in (signal.SIGINT, signal.SIGTERM):
            previous[sig] = signal.signal(sig, lambda signum, frame: stop.request(signum))
    except ValueError:  # not the main thread: handlers can only be installed from there
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        yield stop
        return
    try:
        yield stop
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
