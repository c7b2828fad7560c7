"""The `.dshc` project file: read the same from its TOML or from the parse kept in the user's cache."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from dshc.compiler import project, user_cache

TEXT = 'load = ["team.dsh"]\npolicy = "team"\nunmapped = "deny"\ncatalog = "overlay"\n'


@pytest.fixture
def cache_home(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("DSHC_NO_CACHE", raising=False)
    return tmp_path / "cache" / "dshc"


def _parsed_entries(cache_home):
    return sorted(cache_home.glob(f"{project.PARSED_PREFIX}*.json")) if cache_home.exists() else []


def test_a_cached_parse_reads_as_the_file_does(tmp_path, cache_home, monkeypatch):
    path = tmp_path / ".dshc"
    path.write_text(TEXT)
    fresh = project.read(str(path))
    assert len(_parsed_entries(cache_home)) == 1
    monkeypatch.setitem(sys.modules, "tomllib", None)  # a second read must not need the parser at all
    assert project.read(str(path)) == fresh
    assert fresh.policy == "team" and fresh.unmapped == "deny" and fresh.load == (str(tmp_path / "team.dsh"),)


def test_an_edit_is_read_afresh_and_a_corrupt_entry_is_replaced(tmp_path, cache_home):
    path = tmp_path / ".dshc"
    path.write_text(TEXT)
    project.read(str(path))
    path.write_text(TEXT.replace('"team"', '"other"'))
    assert project.read(str(path)).policy == "other" and len(_parsed_entries(cache_home)) == 2
    for entry in _parsed_entries(cache_home):
        entry.write_bytes(b"{not json")
    assert project.read(str(path)).policy == "other"


def test_what_a_valid_file_cannot_hold_is_never_cached_and_still_refused(tmp_path, cache_home):
    path = tmp_path / ".dshc"
    for text, message in (
        ("policy = 1979-05-27\n", "`policy` is a string"),
        ("[policy]\nname = 'x'\n", "string"),
        ("policy = \n", "cannot read"),
        ("bogus = 'x'\n", "unknown key"),
    ):
        path.write_text(text)
        with pytest.raises(project.ProjectError, match=message):
            project.read(str(path))
    path.write_bytes(b"policy = '\xff'\n")  # not UTF-8: a clear error, not a crash
    with pytest.raises(project.ProjectError, match="cannot read"):
        project.read(str(path))
    assert all(b"1979" not in entry.read_bytes() for entry in _parsed_entries(cache_home))


def test_without_a_usable_cache_the_file_is_parsed(tmp_path, cache_home, monkeypatch):
    monkeypatch.setenv("DSHC_NO_CACHE", "1")
    path = tmp_path / ".dshc"
    path.write_text(TEXT)
    assert project.read(str(path)).policy == "team" and _parsed_entries(cache_home) == []


def test_parsed_entries_are_bounded(tmp_path, cache_home, monkeypatch):
    monkeypatch.setattr(project, "PARSED_KEEP", 3)
    path = tmp_path / ".dshc"
    for n in range(6):
        path.write_text(f'policy = "p{n}"\n')
        project.read(str(path))
    assert len(_parsed_entries(cache_home)) == 3


def test_a_hook_reading_a_parsed_file_imports_no_toml_parser(tmp_path, cache_home):
    (tmp_path / ".dshc").write_text(TEXT)
    probe = (
        "import sys\nbefore = set(sys.modules)\nfrom dshc.compiler import project\n"
        f"print(project.locate(None, {str(tmp_path)!r}).policy, 'tomllib' in set(sys.modules) - before)"
    )
    env = {**os.environ, "XDG_CACHE_HOME": str(cache_home.parent)}
    env.pop("DSHC_NO_CACHE", None)
    runs = [
        subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, timeout=60)
        for _ in range(2)
    ]
    assert [run.stdout.split() for run in runs] == [["team", "True"], ["team", "False"]], runs[1].stderr
    assert user_cache.usable()


def test_below_the_project_folder_nothing_named_dshc_is_read(tmp_path, cache_home):
    (tmp_path / ".dshc").write_text('policy = "team"\n')
    deep = tmp_path / "a" / "b"
    deep.mkdir(parents=True)
    assert project.locate(None, str(deep), str(tmp_path)).policy == "team"
    assert project.locate(None, str(deep), None).policy == "team"
    (tmp_path / "a" / ".dshc").mkdir()  # not even a folder of that name: it is not the project's
    for root in (str(tmp_path), None):
        with pytest.raises(project.ProjectError, match=r"a/\.dshc` lies below the project folder"):
            project.locate(None, str(deep), root)
    assert project.locate(None, "/", str(tmp_path)).policy == "team"  # a cwd elsewhere: the folder's own file
    assert project.locate(str(tmp_path / ".dshc"), str(deep), None).policy == "team"  # named: nothing else read
