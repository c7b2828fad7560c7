"""The parse-table cache: plain data in the user's cache folder, and every hostile plant refused and reported."""

from __future__ import annotations

import os
import pickle
import stat
from pathlib import Path

import pytest
from lark import Lark

from dshc.compiler import parser_cache
from dshc.compiler.parser_cache import load_parser

GRAMMAR = 'start: WORD ("," WORD)*\nWORD: /[a-z]+/\n%ignore " "\n'


@pytest.fixture
def cache_home(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("DSHC_NO_PARSER_CACHE", raising=False)
    return tmp_path / "cache"


class Loader:
    """Loads the small grammar through the cache, counting builds and collecting reports."""

    def __init__(self):
        self.builds = 0
        self.reports: list[str] = []

    def __call__(self) -> Lark:
        def build():
            self.builds += 1
            return Lark(GRAMMAR, parser="lalr")

        parser = load_parser(GRAMMAR, build, {}, report=self.reports.append)
        assert parser.parse("ab, cd").children == ["ab", "cd"]  # whatever the source, it parses
        return parser


def _cache_files(folder: Path) -> list[Path]:
    return sorted(folder.glob("grammar-*.json"))


def test_first_run_builds_and_stores_plain_json_private_to_the_user(cache_home):
    load = Loader()
    load()
    folder = cache_home / "dshc"
    (stored,) = _cache_files(folder)
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert stat.S_IMODE(stored.stat().st_mode) == 0o600
    header, body = stored.read_bytes().split(b"\n", 1)
    assert b'"key"' in header and body.startswith(b"{")  # JSON text, not a pickle
    second = Loader()
    second()
    assert (load.builds, second.builds) == (1, 0) and second.reports == []


def test_the_dshc_grammar_round_trips_through_the_cache(cache_home, monkeypatch):
    from dshc.compiler import parse

    text = 'policy p { deny read when not (platform == "linux" and has web) or flag x }'
    monkeypatch.setattr(parse._current, "text", text, raising=False)  # the keyword check reads the text

    def fresh_parse():  # both parsers: the one building the AST and the one building a tree
        return parse.parser.__wrapped__().parse(text)[0], parse.tree_parser.__wrapped__().parse(text)

    monkeypatch.setenv("DSHC_NO_PARSER_CACHE", "1")
    built = fresh_parse()
    monkeypatch.delenv("DSHC_NO_PARSER_CACHE")
    assert fresh_parse() == built  # stores the tables
    assert _cache_files(cache_home / "dshc")
    assert fresh_parse() == built  # loads them


def _plant_valid_cache(cache_home) -> Path:
    Loader()()
    (stored,) = _cache_files(cache_home / "dshc")
    return stored


def _refused(reason_part: str) -> Loader:
    load = Loader()
    load()
    assert load.builds == 1, "a hostile cache must never be loaded"
    assert len(load.reports) == 1 and reason_part in load.reports[0], load.reports
    return load


def test_a_folder_owned_by_someone_else_is_refused(cache_home, monkeypatch):
    folder = cache_home / "dshc"
    folder.mkdir(parents=True, mode=0o700)
    if os.geteuid() == 0:
        os.chown(folder, 65534, 65534)
    else:  # only root can give a folder away; pretend to be another user instead
        real = os.geteuid()
        monkeypatch.setattr(parser_cache.os, "geteuid", lambda: real + 1)
    _refused("belongs to user")
    assert _cache_files(folder) == []  # nothing is written into a folder we do not trust


def test_a_world_writable_folder_is_refused(cache_home):
    folder = cache_home / "dshc"
    folder.mkdir(parents=True)
    folder.chmod(0o777)
    _refused("can be written by other users")
    assert _cache_files(folder) == []


def test_a_symlinked_folder_is_refused(cache_home, tmp_path):
    elsewhere = tmp_path / "theirs"
    elsewhere.mkdir(mode=0o700)
    cache_home.mkdir()
    (cache_home / "dshc").symlink_to(elsewhere)
    _refused("symbolic link")
    assert _cache_files(elsewhere) == []


def test_a_symlinked_file_is_refused_and_replaced(cache_home, tmp_path):
    stored = _plant_valid_cache(cache_home)
    target = tmp_path / "target.json"
    original = stored.read_bytes()
    target.write_bytes(original)
    stored.unlink()
    stored.symlink_to(target)
    _refused("cannot be opened safely")
    assert not stored.is_symlink() and target.read_bytes() == original  # replaced, never written through


def test_a_group_writable_file_is_refused(cache_home):
    stored = _plant_valid_cache(cache_home)
    stored.chmod(0o664)
    _refused("can be written by other users")
    assert stat.S_IMODE(stored.stat().st_mode) == 0o600  # rebuilt and stored privately again


@pytest.mark.parametrize(
    "damage",
    [
        lambda data: data[: len(data) // 2],  # torn
        lambda data: data.replace(b'"WORD"', b'"WORM"', 1),  # edited: checksum fails
        lambda data: b"not json\n" + data,
        lambda data: b"",
    ],
)
def test_a_corrupt_file_is_refused_and_rebuilt(cache_home, damage):
    stored = _plant_valid_cache(cache_home)
    stored.write_bytes(damage(stored.read_bytes()))
    _refused("corrupt")
    Loader()()  # and the rebuilt file is sound again


class _Payload:
    def __reduce__(self):
        return (Path.touch, (Path(os.environ["XDG_CACHE_HOME"]) / "pwned",))


def test_a_planted_pickle_never_runs(cache_home):
    stored = _plant_valid_cache(cache_home)
    stored.write_bytes(pickle.dumps(_Payload()))
    _refused("corrupt")
    assert not (cache_home / "pwned").exists()


def test_refusals_reach_stderr_when_no_reporter_is_given(cache_home, capsys):
    folder = cache_home / "dshc"
    folder.mkdir(parents=True)
    folder.chmod(0o777)
    load_parser(GRAMMAR, lambda: Lark(GRAMMAR, parser="lalr"), {})
    assert "dshc: warning: not using the parser cache" in capsys.readouterr().err


def test_without_a_home_nothing_is_cached_and_nothing_is_said(tmp_path, monkeypatch):
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.delenv("DSHC_NO_PARSER_CACHE", raising=False)
    monkeypatch.setattr(parser_cache.os.path, "expanduser", lambda path: path)  # "~" stays unresolved
    monkeypatch.chdir(tmp_path)
    load = Loader()
    load()
    assert load.builds == 1 and load.reports == [] and list(tmp_path.iterdir()) == []
