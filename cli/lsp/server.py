"""The pygls language server: LSP requests in, compiler answers out.

In: JSON-RPC over stdio from an editor. Out: diagnostics as the user types (syntax, names, lint,
with their spans), hover (catalog + `explain` / `decide`), go-to-definition, completion and
`dshc fmt` formatting. The features themselves live in the sibling modules; this one only joins
them to documents, positions and URIs.
"""

from __future__ import annotations

import asyncio
import os
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import from_fs_path, to_fs_path
from pygls.workspace import TextDocument

from ...compiler import ast
from ...compiler.catalog import Catalog, load_catalog, shipped_root
from ...compiler.catalog_overlay import overlaid_catalog
from ...compiler.fmt import format_document
from ...compiler.program import Program, SourceFile, parse_files
from . import convert
from .completion import Vocabulary, complete
from .definition import definition
from .hover import hover
from .index import ref_at
from .sources import SourceSet, lint_findings

# diagnostics wait for a pause in typing this long, so a burst of keystrokes is analysed once
DEBOUNCE_SECONDS = 0.3
COMPLETION_KINDS = {
    "keyword": types.CompletionItemKind.Keyword,
    "package": types.CompletionItemKind.Module,
    "tool": types.CompletionItemKind.Function,
    "fact": types.CompletionItemKind.Field,
    "service": types.CompletionItemKind.Value,
    "config": types.CompletionItemKind.Property,
    "declaration": types.CompletionItemKind.Class,
    "value": types.CompletionItemKind.EnumMember,
}


class DshLanguageServer(LanguageServer):
    def __init__(self, overlays: tuple[str, ...] = (), load: tuple[str, ...] = ()):
        super().__init__("dshc", _version())
        overlaid = overlaid_catalog(overlays)  # the shipped catalog plus each overlay, as the CLI builds it
        self.catalog: Catalog = overlaid or load_catalog()
        self.catalog_dirs = [*reversed(overlays), str(shipped_root())]  # a later overlay is searched first
        self.sources = SourceSet(catalog=overlaid, load=load)
        self.programs: dict[str, Program] = {}  # path -> the last Program that resolved with it
        self.documents: dict[str, tuple] = {}  # path -> the parsed sources of its last analysis
        self._pending: dict[str, asyncio.TimerHandle] = {}
        # one lint at a time: a burst of edits queues behind it rather than competing for the GIL
        self._linter = ThreadPoolExecutor(max_workers=1, thread_name_prefix="dshc-lint")
        self.shut_down = False  # the LSP `exit` status: 0 only after a `shutdown` request

    # --- diagnostics ---
    def analyse(self, uri: str) -> None:
        """Publish syntax and name errors now; the lint follows from a worker thread when it is done."""
        self._pending.pop(uri, None)
        document = self.workspace.get_text_document(uri)
        path = _path(uri)
        self.sources.buffers[path] = document.source
        result = self._analysis(path)
        self._publish(document, result.diagnostics)
        if result.program is not None:
            version, text = document.version, document.source

            def lint_if_current():
                if not self._is_current(uri, version, text):
                    return None  # typed over while queued: a newer lint follows
                return lint_findings(result.program, path)

            linting = asyncio.get_running_loop().run_in_executor(self._linter, lint_if_current)

            def publish_lint(done: asyncio.Future) -> None:
                if done.cancelled():  # the server is shutting down
                    return
                if done.exception() is not None:  # a bug in a check: say so rather than show a clean file
                    self.window_log_message(
                        types.LogMessageParams(
                            type=types.MessageType.Error,
                            message=f"dshc: the lint of {path} failed: {done.exception()!r}",
                        )
                    )
                    return
                # a lint of a text the user has since changed or closed would point at the wrong places
                if done.result() is not None and self._is_current(uri, version, text):
                    self._publish(self.workspace.get_text_document(uri), result.diagnostics + done.result())

            linting.add_done_callback(publish_lint)

    def _is_current(self, uri: str, version, text: str) -> bool:
        now = self.workspace.text_documents.get(uri)
        return now is not None and now.version == version and now.source == text

    def _publish(self, document: TextDocument, diagnostics) -> None:
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(
                uri=document.uri,
                version=document.version,
                diagnostics=[convert.diagnostic(d, document.source, document.position_codec) for d in diagnostics],
            )
        )

    def analyse_later(self, uri: str) -> None:
        handle = self._pending.pop(uri, None)
        if handle is not None:
            handle.cancel()
        self._pending[uri] = asyncio.get_running_loop().call_later(DEBOUNCE_SECONDS, self.analyse, uri)

    def _analysis(self, path: str):
        result = self.sources.analyse(path, lint=False)
        if result.program is not None:
            self.programs[path] = result.program
        self.documents[path] = result.documents
        return result

    def program_for(self, uri: str) -> Program | None:
        """The Program of the last analysis that resolved (while the buffer is broken, the one before)."""
        path = _path(uri)
        if path not in self.documents:
            self._analysis(path)
        return self.programs.get(path)

    def documents_for(self, uri: str) -> tuple:
        path = _path(uri)
        if path not in self.documents:
            self._analysis(path)
        return self.documents[path]

    # --- positions ---
    def document_ast(self, document: TextDocument) -> ast.Document | None:
        """The buffer as it is now, parsed on its own; None while it does not parse."""
        documents, diags, _ = parse_files([SourceFile(_path(document.uri), document.source.encode("utf-8"))])
        if any(d.severity == "error" for d in diags) or not documents:
            return None
        return documents[0]

    def ref_at(self, uri: str, position: types.Position):
        document = self.workspace.get_text_document(uri)
        parsed = self.document_ast(document)
        if parsed is None:
            return document, None
        at = document.position_codec.position_from_client_units(document.lines, position)
        return document, ref_at(parsed, at.line + 1, at.character + 1)

    def location(self, span) -> types.Location:
        """A span in any file (an open buffer, a shipped file, a catalog JSON file) as an LSP Location."""
        uri = from_fs_path(span.path)
        try:
            text = (
                self.workspace.get_text_document(uri).source
                if uri in self.workspace.text_documents
                else Path(span.path).read_text(encoding="utf-8")
            )
        except (OSError, UnicodeDecodeError):
            text = ""
        return types.Location(uri=uri, range=convert.span_range(span, text, self.workspace.position_codec))


def _path(uri: str) -> str:
    return os.path.abspath(to_fs_path(uri) or uri)


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("dshc")
    except PackageNotFoundError:
        return "unknown"


def build_server(overlays: tuple[str, ...] = (), load: tuple[str, ...] = ()) -> DshLanguageServer:
    server = DshLanguageServer(overlays, load)

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: DshLanguageServer, params: types.DidOpenTextDocumentParams) -> None:
        ls.analyse(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: DshLanguageServer, params: types.DidChangeTextDocumentParams) -> None:
        ls.analyse_later(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: DshLanguageServer, params: types.DidSaveTextDocumentParams) -> None:
        for uri in list(ls.workspace.text_documents):  # a saved file can fix or break the others
            ls.analyse(uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: DshLanguageServer, params: types.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri
        ls.sources.buffers.pop(_path(uri), None)
        ls.programs.pop(_path(uri), None)
        ls.documents.pop(_path(uri), None)
        ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))

    @server.feature(types.SHUTDOWN)
    def on_shutdown(ls: DshLanguageServer, params) -> None:
        ls.shut_down = True
        ls._linter.shutdown(wait=False, cancel_futures=True)

    @server.feature(types.EXIT)
    def on_exit(ls: DshLanguageServer, params) -> None:
        # Everything is in memory, so nothing is lost by leaving at once; a normal exit would wait
        # for the thread blocked reading stdin until the client closes the pipe, and for a lint.
        sys.stdout.flush()
        os._exit(0 if ls.shut_down else 1)

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    def on_hover(ls: DshLanguageServer, params: types.HoverParams) -> types.Hover | None:
        document, ref = ls.ref_at(params.text_document.uri, params.position)
        if ref is None:
            return None
        root = ls.workspace.root_path or os.getcwd()
        text = hover(ref, ls.program_for(params.text_document.uri), ls.catalog, root)
        if text is None:
            return None
        return types.Hover(
            contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=text),
            range=convert.span_range(ref.span, document.source, document.position_codec),
        )

    @server.feature(types.TEXT_DOCUMENT_DEFINITION)
    def on_definition(ls: DshLanguageServer, params: types.DefinitionParams) -> types.Location | None:
        _, ref = ls.ref_at(params.text_document.uri, params.position)
        if ref is None:
            return None
        span = definition(ref, ls.documents_for(params.text_document.uri), ls.catalog, ls.catalog_dirs)
        return ls.location(span) if span is not None else None

    @server.feature(types.TEXT_DOCUMENT_COMPLETION, types.CompletionOptions(trigger_characters=[".", "(", ","]))
    def on_completion(ls: DshLanguageServer, params: types.CompletionParams) -> types.CompletionList:
        document = ls.workspace.get_text_document(params.text_document.uri)
        at = document.position_codec.position_from_client_units(document.lines, params.position)
        vocabulary = Vocabulary.of(ls.catalog, ls.programs.get(_path(document.uri)))
        candidates, start = complete(document.source, at.line, at.character, vocabulary)
        lines = document.lines
        codec = document.position_codec
        edit_range = types.Range(
            start=codec.position_to_client_units(lines, types.Position(line=at.line, character=start)),
            end=params.position,
        )
        items = [
            types.CompletionItem(
                label=c.label,
                kind=COMPLETION_KINDS.get(c.kind),
                detail=c.detail or None,
                text_edit=types.TextEdit(range=edit_range, new_text=c.label),
            )
            for c in candidates
        ]
        return types.CompletionList(is_incomplete=False, items=items)

    @server.feature(types.TEXT_DOCUMENT_FORMATTING)
    def on_formatting(ls: DshLanguageServer, params: types.DocumentFormattingParams) -> list[types.TextEdit] | None:
        document = ls.workspace.get_text_document(params.text_document.uri)
        parsed = ls.document_ast(document)
        if parsed is None:
            return None  # `dshc fmt` refuses a file that does not parse; so does the editor
        text = format_document(parsed)
        if text == document.source:
            return []
        return [types.TextEdit(range=convert.full_range(document.source), new_text=text)]

    return server
