"""The per-user caches of a `dshc` process: compiled programs as plain data, catalog checks once per hash.

A cached Program must decide and render exactly as a fresh one; a planted, linked, foreign or
corrupt cache file is never trusted and never runs code; a process answering from the cache does
not import the parser, the graph library or the schema validator.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from dshc.compiler import ast
from dshc.compiler import catalog as catalog_module
from dshc.compiler import data_codec, prebuilt, program_cache
from dshc.compiler.request import Request
from test_hook import POLICY  # the hook's team policy: allow, ask and deny on shell commands

REQUESTS = [
    Request(policy="team"),
    Request(host="web"),
    Request(host="web", policy="read-only", plan=True),
    Request(host="web", preset="code", mode="code", with_services=["code-runtime"]),
    Request(host="web", scope="child", policy="workspace-write"),
]
CALLS = [
    ("bash", {"command": "git status"}),
    ("bash", {"command": "git push origin main"}),
    ("bash", {"command": "rm -rf /"}),
    ("write", {"file_path": "/etc/passwd", "content": "x"}),
    ("read", {"file_path": "notes.md"}),
    ("edit", {"file_path": "a/b.py", "old_string": "a", "new_string": "b"}),
]


@pytest.fixture
def cache_home(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("DSHC_NO_CACHE", raising=False)
    return tmp_path / "cache"


@pytest.fixture
def source(tmp_path) -> Path:
    path = tmp_path / "team.dsh"
    path.write_text(POLICY)
    return path


def _programs(cache_home: Path) -> set[Path]:
    return set((cache_home / "dshc").glob("program-*.json"))


def test_a_cached_program_answers_exactly_as_a_fresh_one(cache_home, source, tmp_path):
    fresh = program_cache.load([source])
    (stored,) = _programs(cache_home)
    json.loads(stored.read_text())  # plain JSON data
    cached = program_cache.load([source])
    assert cached is not fresh and _programs(cache_home) == {stored}
    for request in REQUESTS:
        assert cached.view(request).canonical_json() == fresh.view(request).canonical_json()
        for tool, args in CALLS:
            assert cached.decide(request, tool, args, str(tmp_path)) == fresh.decide(request, tool, args, str(tmp_path))
    # views and decisions never read the documents or the tables: a cache leaves them undecoded till asked
    assert not {"documents", "tables"} & set(vars(cached.resolved))
    assert cached.resolved.tables == fresh.resolved.tables and cached.resolved.hosts == fresh.resolved.hosts
    assert cached.warnings == fresh.warnings and cached.sources == fresh.sources
    assert cached.resolved.policies == fresh.resolved.policies and cached.resolved.documents == fresh.resolved.documents
    assert sorted(cached.resolved.graph.edges(keys=True)) == sorted(fresh.resolved.graph.edges(keys=True))


def test_any_change_of_the_sources_loads_afresh(cache_home, source, tmp_path):
    request, args = Request(policy="team"), {"command": "git push origin"}
    assert program_cache.load([source]).decide(request, "bash", args, str(tmp_path)).effect == "ask"
    source.write_text(
        POLICY.replace(
            'ask bash when args.command matches "git push *"', 'deny bash when args.command matches "git push *"'
        )
    )
    assert program_cache.load([source]).decide(request, "bash", args, str(tmp_path)).effect == "deny"
    assert len(_programs(cache_home)) == 2


def test_any_change_of_the_running_code_makes_a_new_key(tmp_path, monkeypatch):
    """The code is fingerprinted by its files' metadata: an edit (new size), a rewrite of the same
    size (new time) and a new file each give a new key; nothing changed, the same key."""
    code = tmp_path / "code"
    (code / "sub").mkdir(parents=True)
    (code / "a.py").write_text("A = 1\n")
    (code / "sub" / "b.json").write_text("{}")
    monkeypatch.setattr(prebuilt, "package_path", lambda package: str(code))
    keys = [program_cache.key([])]
    assert program_cache.key([]) == keys[0]
    (code / "a.py").write_text("A = 22\n")
    keys.append(program_cache.key([]))
    (code / "a.py").write_text("A = 33\n")
    os.utime(code / "a.py", ns=(1, 1))
    keys.append(program_cache.key([]))
    (code / "sub" / "c.lark").write_text("start: x")
    keys.append(program_cache.key([]))
    (code / "__pycache__").mkdir()
    (code / "__pycache__" / "a.py").write_text("")  # bytecode folders are not the code
    assert program_cache.key([]) == keys[-1]
    assert len(set(keys)) == len(keys)


def test_the_digest_is_sha256_with_or_without_hashlib_loaded(monkeypatch):
    import hashlib
    from dshc.common import digest

    for loaded in (True, False):  # OpenSSL's once hashlib is loaded, CPython's own before
        if not loaded:
            monkeypatch.delitem(sys.modules, "hashlib")
            assert type(digest.sha256()) is type(digest._own_sha256())
        for data in (b"", b"abc", bytes(range(256)) * 1000):
            assert digest.sha256(data).hexdigest() == hashlib.sha256(data).hexdigest()
        grown = digest.sha256(b"ab")
        grown.update(b"c")
        assert grown.hexdigest() == hashlib.sha256(b"abc").hexdigest()


def test_plain_json_travels_as_json_and_everything_else_keeps_its_type():
    """A dict or list of JSON values only is carried by JSON itself; one holding a tuple, a set, a
    non-string key or a dshc object is encoded node by node, so each comes back as what it was."""
    from dshc.compiler.source import Span

    plain = {"type": "object", "properties": {"a": {"enum": [1, 2.5, None, True, "x"]}}, "required": ["a"]}
    values = [
        plain,
        [plain, "s", 1],
        {"k": (1, 2)},
        {1: "one"},
        {"s": frozenset({"a"})},
        [Span("a.dsh", 1, 1, 1, 2)],
        {"nested": [{"t": "looks like a tuple"}, {"o": "looks like an object"}]},
    ]
    for value in values:
        decoded = data_codec.loads(data_codec.dumps(value))
        assert decoded == value and repr(decoded) == repr(value)
    assert '{"j":' in data_codec.dumps(plain) and '{"j":' not in data_codec.dumps({"k": (1, 2)})
    assert data_codec.loads(data_codec.dumps({"k": (1, 2)}))["k"].__class__ is tuple


def test_shared_objects_stay_shared_and_sets_encode_in_one_order():
    from dshc.compiler.source import Span

    span = Span("a.dsh", 1, 2, 1, 5)
    decoded = data_codec.loads(data_codec.dumps((span, [span], {3: span})))
    assert decoded[0] == span and decoded[1][0] is decoded[0] and decoded[2][3] is decoded[0]
    assert data_codec.dumps(frozenset(["b", "a", "c"])) == data_codec.dumps(frozenset(["c", "b", "a"]))


def test_deferred_fields_decode_on_first_read_and_share_what_the_rest_holds(source):
    resolved = program_cache.Program.from_files(
        program_cache.shipped_sources() + program_cache.read_paths([source])
    ).resolved
    text = data_codec.dumps(resolved)
    decoded = data_codec.loads(text)
    assert not {"documents", "tables"} & set(vars(decoded))
    assert data_codec.dumps(decoded) == text  # written again unread: the same text (read first, then written)
    assert decoded.documents == resolved.documents and decoded.tables == resolved.tables
    assert decoded.hosts and all(decoded.tables["host"][name] is host for name, host in decoded.hosts.items())
    (policy_decl,) = [
        d for doc in decoded.documents for d in doc.decls if isinstance(d, ast.Policy) and d.name.text == "team"
    ]
    assert decoded.tables["policy"]["team"] is policy_decl
    with pytest.raises(AttributeError):
        decoded.no_such_field


@pytest.mark.parametrize(
    "planted",
    [
        {"o": "dshc.compiler.source:Span", "i": 0, "a": {}, "z": {"path": 0}},  # a class that defers nothing
        {"o": "dshc.compiler.resolve:Resolved", "i": 0, "a": {}, "z": {"documents": "0"}},  # not a position
        {"o": "dshc.compiler.resolve:Resolved", "i": 0, "a": {}, "z": {"documents": 0}},  # no deferred text below
    ],
)
def test_a_deferral_the_class_does_not_declare_is_refused(planted):
    valid = planted["z"] == {"documents": 0}
    for text in [planted, {"v": planted, "z": 5}] + ([] if valid else [{"v": planted, "z": '["x"]'}]):
        with pytest.raises(ValueError):
            data_codec.loads(json.dumps(text))


def test_what_has_no_data_form_is_not_cached():
    with pytest.raises(data_codec.Unencodable):
        data_codec.dumps({"f": len})
    with pytest.raises(data_codec.Unencodable):
        data_codec.dumps(Path("/tmp"))


# bypass attempts: each names something that would run code or build a foreign object if trusted
HOSTILE = [
    {"o": "os:system", "i": 0, "a": {}},
    {"o": "subprocess:Popen", "i": 0, "a": {}},
    {"o": "dshc.compiler.program_cache:load_files", "i": 0, "a": {}},  # a function, not a class
    {"o": "dshc.compiler.data_codec:LazyGraph", "i": 0, "a": {}},  # a dshc class, but not plain data
    {"o": "dshc.compiler.source:Span.__init__", "i": 0, "a": {}},  # a dotted path into a class
    {"o": "dshc.compilerx:Span", "i": 0, "a": {}},  # a look-alike module
    {"g": "__import__", "n": [], "e": []},  # a graph kind networkx lacks
]


@pytest.mark.parametrize("payload", HOSTILE, ids=lambda p: p.get("o") or p.get("g"))
def test_the_decoder_builds_only_dshc_data_classes(payload):
    with pytest.raises(Exception) as caught:
        value = data_codec.loads(json.dumps(payload))
        if isinstance(value, data_codec.LazyGraph):
            value.materialise()
    assert isinstance(caught.value, (ValueError, ModuleNotFoundError, KeyError, TypeError))


@pytest.mark.parametrize("how", ["symlink", "group-writable", "foreign-class", "pickle", "truncated"])
def test_a_planted_program_file_is_never_trusted(cache_home, source, tmp_path, how):
    import pickle

    fresh = program_cache.load([source])
    (target,) = _programs(cache_home)
    marker = tmp_path / "ran"
    text = target.read_text()
    target.unlink()
    if how == "symlink":
        hostile = tmp_path / "hostile.json"
        hostile.write_text(text)
        target.symlink_to(hostile)
    elif how == "group-writable":
        target.write_text(text.replace('"git status *"', '"*"'))  # would allow every command if read
        target.chmod(0o664)
    elif how == "foreign-class":
        target.write_text(json.dumps({"t": [{"o": "builtins:open", "i": 0, "a": {}}, {"d": []}]}))
    elif how == "pickle":
        target.write_bytes(pickle.dumps(Path(marker)))
    else:
        target.write_text(text[: len(text) // 2])
    loaded = program_cache.load([source])
    assert not marker.exists()
    request = Request(policy="team")
    for tool, args in CALLS:
        assert loaded.decide(request, tool, args, str(tmp_path)) == fresh.decide(request, tool, args, str(tmp_path))


def test_no_cache_where_others_could_write_or_when_asked(tmp_path, monkeypatch, source):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    folder = tmp_path / "dshc"
    folder.mkdir()
    folder.chmod(0o777)
    program_cache.load([source])
    assert not list(folder.glob("program-*"))
    folder.chmod(0o700)
    monkeypatch.setenv("DSHC_NO_CACHE", "1")
    program_cache.load([source])
    assert not list(folder.glob("program-*"))


def test_the_cache_keeps_a_bounded_number_of_programs(cache_home, source, monkeypatch):
    monkeypatch.setattr(program_cache, "KEEP", 2)
    for index in range(4):
        source.write_text(POLICY.replace("Team rules", f"Team rules {index}"))
        program_cache.load([source], shipped=False)
    assert len(_programs(cache_home)) == 2


def test_catalog_checks_run_once_per_catalog_hash(cache_home, tmp_path, monkeypatch):
    import shutil

    root = tmp_path / "catalog"
    shutil.copytree(catalog_module.shipped_root(), root, ignore=shutil.ignore_patterns("__pycache__", "*.py"))
    runs = []
    real = catalog_module._schema_errors
    monkeypatch.setattr(catalog_module, "_schema_errors", lambda *a: runs.append(1) or real(*a))
    first = catalog_module.load_catalog(root)
    checked = len(runs)
    assert checked > 0 and catalog_module.load_catalog(root) == first and len(runs) == checked  # stamped: skipped
    package = root / "packages" / "tool-fs.json"
    data = json.loads(package.read_text())
    data["tools"][0]["parallel_safe"] = "yes"  # a schema error in bytes never checked before
    package.write_text(json.dumps(data))
    with pytest.raises(catalog_module.DshError) as caught:
        catalog_module.load_catalog(root)
    assert any(d.code == "DSH502" for d in caught.value.diagnostics)
    with pytest.raises(catalog_module.DshError):  # a failed catalog leaves no stamp behind
        catalog_module.load_catalog(root)


# a `dshc` process answering from the program cache: none of the parse, graph or schema libraries load
IMPORTS_PROBE = """
import sys
before = set(sys.modules)  # what the interpreter's own start-up loaded is not dshc's doing
from dshc.cli.entry import run  # the entry point short of ending the process
run(sys.argv[1:])
print(sorted({m.split(".")[0] for m in sys.modules} & {"lark", "networkx", "jsonschema", "jinja2"}))
print(sorted((set(sys.modules) - before) & {"dataclasses", "inspect", "hashlib", "shutil", "tempfile", "threading",
                                            "importlib.resources", "tree_sitter_bash", "difflib", "traceback",
                                            "pathlib", "urllib.parse", "tomllib", "argparse", "rfc8785"}))
"""


def test_a_cached_hook_process_loads_no_parser_graph_or_schema_library(cache_home, source, tmp_path):
    """Nor the standard-library modules its start-up was cut free of (records instead of
    dataclasses, SHA-256 without OpenSSL, no shutil for help widths, the Bash grammar without
    importlib.resources, no pathlib, the project file's parse kept, no argparse for the bare hook
    command line …): each is milliseconds of every tool call."""
    # deciding alone: an event log (the hook's default) loads hashing, threads and the view's fingerprint
    (tmp_path / ".dshc").write_text('load = ["team.dsh"]\npolicy = "team"\nlog = "off"\n')
    event = json.dumps(
        {
            "session_id": "s",
            "cwd": str(tmp_path),
            "hook_event_name": "PreToolUse",
            "tool_name": "Bash",
            "tool_input": {"command": "git status"},
            "tool_use_id": "t",
        }
    )
    env = {**os.environ, "XDG_CACHE_HOME": str(cache_home)}
    runs = [
        subprocess.run(
            [sys.executable, "-c", IMPORTS_PROBE, "hook", "claude-code"],
            input=event,
            text=True,
            capture_output=True,
            env=env,
            timeout=120,
        )
        for _ in range(2)
    ]
    answers = [run.stdout.splitlines() for run in runs]
    assert all(json.loads(lines[0])["hookSpecificOutput"]["permissionDecision"] == "allow" for lines in answers)
    assert answers[0][1] != "[]"  # the first process parsed the sources
    assert answers[1][1] == "[]", runs[1].stderr
    assert answers[1][2] == "[]", runs[1].stderr
    decide = subprocess.run(
        [sys.executable, "-c", IMPORTS_PROBE, "decide", "read", "--args", '{"file_path": "a"}', "--load", str(source)],
        text=True,
        capture_output=True,
        env=env,
        timeout=120,
    )
    # decide reads its plain command line without argparse (and names the sandbox without building the view)
    assert decide.stdout.splitlines()[-2:] == ["[]", "[]"], decide.stdout + decide.stderr
