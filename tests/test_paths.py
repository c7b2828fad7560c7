"""Canonical path arguments (compiler/paths.py) and the catalog data that marks path parameters."""

from __future__ import annotations

import json
import os

import posixpath

import pytest
from hypothesis import given, strategies as st

from dshc.compiler.catalog import load_catalog
from dshc.compiler.diagnostics import DshError
from dshc.compiler.file_pattern import canonical_args
from dshc.compiler.paths import CanonicalPath, canonical_path, path_inside

from test_catalog import catalog_copy  # noqa: F401 - a fixture, used by name


def test_inside_the_workspace_a_path_is_relative_to_its_root(tmp_path):
    ws = str(tmp_path)
    real = os.path.realpath(ws)
    assert canonical_path("docs/../src/x.md", ws) == "src/x.md"
    assert canonical_path(os.path.join(ws, "a", "b"), ws) == "a/b"
    assert canonical_path(".", ws) == "."
    found = canonical_path("../x", ws)
    assert found == os.path.join(os.path.dirname(real), "x") and found.absolute == found
    assert canonical_path("~/x", ws).absolute == os.path.realpath(os.path.expanduser("~/x"))


def test_symlinks_are_followed(tmp_path):
    (tmp_path / "outside").mkdir()
    (tmp_path / "ws").mkdir()
    os.symlink(tmp_path / "outside", tmp_path / "ws" / "link")
    found = canonical_path("link/secret", str(tmp_path / "ws"))
    assert found == os.path.join(os.path.realpath(tmp_path / "outside"), "secret")
    assert not path_inside(found, str(tmp_path / "ws"))


def test_both_forms_are_kept_and_a_bad_value_is_left_alone(tmp_path):
    found = canonical_path("a/x", str(tmp_path))
    assert isinstance(found, CanonicalPath) and found.forms() == (
        "a/x",
        os.path.join(os.path.realpath(tmp_path), "a/x"),
    )
    assert canonical_path("a\x00b", str(tmp_path)) == "a\x00b"
    assert canonical_path("a/../b", None) == "b"


def test_only_marked_parameters_change():
    args = {"file_path": "a/../b", "content": "a/../b"}
    assert canonical_args(args, ("file_path",), None) == {"file_path": "b", "content": "a/../b"}
    assert canonical_args(args, (), None) is args


@given(st.text(alphabet="ab./~-", max_size=12))
def test_without_a_workspace_a_path_already_normal_is_returned_as_it_is(value):
    # the shortcut must agree with the lexical normalisation it skips
    found = canonical_path(value, None)
    expected = posixpath.normpath(os.path.expanduser(value) if value.startswith("~") else value) if value else value
    assert found == expected
    if found is value:
        assert posixpath.normpath(value) == value and not value.startswith("~")


def test_args_already_canonical_are_not_copied():
    args = {"file_path": "src/a.py", "content": "x"}
    assert canonical_args(args, ("file_path",), None) is args
    assert canonical_args({"file_path": "./src/a.py"}, ("file_path",), None) == {"file_path": "src/a.py"}


def test_the_catalog_marks_path_parameters():
    catalog = load_catalog()
    marked = {t.name: t.path_parameters for t in catalog.definitions.values() if t.path_parameters}
    assert marked["write"] == ("file_path",) and marked["str_replace_editor"] == ("path",)
    assert marked["bash"] == ("workdir",) and marked["grep"] == ("path",)


def test_a_path_parameter_that_is_not_a_parameter_is_refused(catalog_copy):  # noqa: F811 - the fixture
    file = catalog_copy / "packages" / "tool-fs.json"
    data = json.loads(file.read_text())
    data["tools"][0]["path_parameters"] = ["no_such_field"]
    file.write_text(json.dumps(data))
    with pytest.raises(DshError) as info:
        load_catalog(catalog_copy)
    assert [d.code for d in info.value.diagnostics] == ["DSH502"]
    assert "no_such_field" in info.value.diagnostics[0].message
