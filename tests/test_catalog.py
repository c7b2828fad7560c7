"""The spec-baseline catalog: counts, parallel-safe set, schema checks, completeness guard."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from importlib import resources
from pathlib import Path

import jsonschema
import pytest

from dshc.compiler.catalog import CatalogFolder, load_catalog
from dshc.compiler.diagnostics import DshError

PARALLEL_SAFE = {
    "read",
    "read_image",
    "web_search",
    "web_fetch",
    "session_trace",
    "session_event_trace",
    "session_event_read",
    "subagent",
}


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


@pytest.fixture
def catalog_copy(tmp_path) -> Path:
    target = tmp_path / "catalog"
    shutil.copytree(
        Path(str(resources.files("dshc.catalogs"))), target, ignore=shutil.ignore_patterns("__init__.py", "__pycache__")
    )
    return target


def test_counts_match_the_spec_baseline(catalog):
    assert catalog.counts() == {
        "packages": 24,
        "schema_entries": 52,
        "unique_names": 51,
        "aliases": 1,
        "distinct_shipped_names": 52,
    }


def test_exactly_eight_parallel_safe_definitions(catalog):
    assert {t.name for t in catalog.definitions.values() if t.parallel_safe} == PARALLEL_SAFE
    assert sum(t.parallel_safe for t in catalog.definitions.values()) == 8


def test_two_distinct_bash_definitions(catalog):
    bashes = catalog.by_name["bash"]
    assert sorted(t.definition for t in bashes) == ["tool-bash-persistent/bash", "tool-bash/bash"]
    assert bashes[0].parameters != bashes[1].parameters


def test_subagent_fork_is_an_alias_of_the_subagent_definition(catalog):
    (subagent,) = catalog.by_name["subagent"]
    assert subagent.aliases == ("subagent_fork",) and subagent.name_from == "toolName"


def test_baseline_web_search_takes_query(catalog):
    (search,) = catalog.by_name["web_search"]
    assert search.parameters["required"] == ["query"]
    assert search.parameters["properties"]["query"]["type"] == "string"


def test_every_parameters_schema_is_a_valid_json_schema(catalog):
    for tool in catalog.definitions.values():
        jsonschema.Draft202012Validator.check_schema(tool.parameters)


def test_every_package_file_validates_against_the_catalog_schema():
    root = Path(str(resources.files("dshc.catalogs")))
    validator = jsonschema.Draft202012Validator(json.loads((root / "catalog.schema.json").read_text()))
    files = sorted((root / "packages").glob("*.json"))
    assert len(files) == 25  # the generated catalog's 24 plus the driver that registers structured_output
    for file in files:
        assert not list(validator.iter_errors(json.loads(file.read_text()))), file.name


def test_read_image_needs_attachments_and_providers_keep_schemas_listed(catalog):
    assert catalog.by_name["read_image"][0].requires == ("attachments",)
    providers = {t.name: t.provider for t in catalog.definitions.values() if t.provider}
    assert set(providers) == {"web_search", "web_fetch", "lsp", "session_search", "session_event_search", "skill"}


def _codes(exc: DshError) -> list[str]:
    return [d.code for d in exc.diagnostics]


def test_guard_rejects_a_package_file_missing_from_the_manifest(catalog_copy):
    extra = json.loads((catalog_copy / "packages" / "tool-todo.json").read_text())
    extra["id"] = "tool-extra"
    (catalog_copy / "packages" / "tool-extra.json").write_text(json.dumps(extra))
    with pytest.raises(DshError) as info:
        load_catalog(catalog_copy)
    assert _codes(info.value) == ["DSH505"]
    assert info.value.diagnostics[0].path.endswith("tool-extra.json")


def test_guard_rejects_a_listed_package_with_zero_tools(catalog_copy):
    file = catalog_copy / "packages" / "tool-todo.json"
    data = json.loads(file.read_text())
    data["tools"] = []
    file.write_text(json.dumps(data))
    with pytest.raises(DshError) as info:
        load_catalog(catalog_copy)
    assert _codes(info.value) == ["DSH506"]


def test_guard_rejects_a_listed_package_without_a_file(catalog_copy):
    (catalog_copy / "packages" / "tool-todo.json").unlink()
    with pytest.raises(DshError) as info:
        load_catalog(catalog_copy)
    assert _codes(info.value) == ["DSH507"]


def test_a_listed_package_that_is_a_folder_is_not_a_file(catalog_copy):
    (catalog_copy / "packages" / "tool-todo.json").unlink()
    (catalog_copy / "packages" / "tool-todo.json").mkdir()
    with pytest.raises(DshError) as info:
        load_catalog(catalog_copy)
    assert _codes(info.value) == ["DSH507"]


def test_a_package_file_that_is_not_utf8_is_reported_not_raised(catalog_copy):
    (catalog_copy / "packages" / "tool-todo.json").write_bytes(b'{"id": "tool-todo\xff"}')
    with pytest.raises(DshError) as info:
        load_catalog(catalog_copy)
    assert _codes(info.value) == ["DSH501"] and "UnicodeDecodeError" in info.value.diagnostics[0].message


def test_the_checks_stamp_hashes_the_bytes_that_are_parsed(catalog_copy):
    # each file is read once: the digest that lets a later load skip the schema checks and the JSON
    # that load parses come from the same bytes
    files = CatalogFolder(catalog_copy)
    file = catalog_copy / "packages" / "tool-todo.json"
    assert files.text("packages/tool-todo.json") == file.read_text(encoding="utf-8")
    before = files.digest()
    file.write_text(file.read_text().replace('"summary"', ' "summary"', 1))
    assert files.text("packages/tool-todo.json") != file.read_text(encoding="utf-8")  # what was read stays
    assert files.digest() == before and CatalogFolder(catalog_copy).digest() != before
    with pytest.raises(FileNotFoundError):
        files.text("packages/tool-none.json")


@pytest.mark.parametrize(
    "breakage, code, json_path",
    [
        ("bad-json", "DSH501", "$"),
        ("schema-violation", "DSH502", "$.tools[0].parallel_safe"),
        ("invalid-parameters", "DSH503", "$.tools[0].parameters.properties.todos.type"),
        ("duplicate-definition", "DSH504", "$.tools[0].definition"),
    ],
)
def test_broken_catalog_file_exits_2_naming_file_and_json_path(catalog_copy, cli, breakage, code, json_path):
    file = catalog_copy / "packages" / "tool-todo.json"
    data = json.loads(file.read_text())
    if breakage == "bad-json":
        file.write_text(file.read_text()[:-20])
    else:
        if breakage == "schema-violation":
            data["tools"][0]["parallel_safe"] = "yes"
        elif breakage == "invalid-parameters":
            data["tools"][0]["parameters"]["properties"]["todos"]["type"] = "list"
        elif breakage == "duplicate-definition":
            other = catalog_copy / "packages" / "tool-ask-user.json"
            data["tools"][0]["definition"] = json.loads(other.read_text())["tools"][0]["definition"]
            # keep the package prefix rule satisfied only for the duplicate check's file order
        file.write_text(json.dumps(data))
    # the copy goes in as an overlay that replaces every shipped package on purpose
    manifest = catalog_copy / "manifest.json"
    manifest.write_text(
        json.dumps({**json.loads(manifest.read_text()), "replaces": json.loads(manifest.read_text())["packages"]})
    )
    result = cli("catalog", "--catalog", str(catalog_copy), "--json")
    assert result.code == 2
    diags = result.json()["diagnostics"]
    assert code in [d["code"] for d in diags]
    hit = next(d for d in diags if d["code"] == code)
    assert hit["json_path"] == json_path
    assert hit["path"].endswith("tool-todo.json")
    human = cli("catalog", "--catalog", str(catalog_copy))
    assert human.code == 2 and "Traceback" not in human.err and "tool-todo.json" in human.err


def test_catalog_json_reports_the_baseline(cli):
    data = cli("catalog", "--json").json()
    assert data["counts"]["packages"] == 24
    assert data["counts"]["schema_entries"] == 52
    assert data["counts"]["unique_names"] == 51
    assert data["counts"]["aliases"] == 1
    assert set(data["parallel_safe"]) == PARALLEL_SAFE
    assert data["duplicate_names"] == {"bash": ["tool-bash-persistent/bash", "tool-bash/bash"]}


def test_catalog_text_ends_with_the_counts_line(cli):
    result = cli("catalog")
    assert result.code == 0
    assert result.out.rstrip().splitlines()[-1] == "24 packages · 52 schema entries · 51 unique names · 1 alias"


def test_catalog_markdown_is_pinned(cli, file_regression):
    result = cli("catalog", "--format", "markdown")
    assert result.code == 0
    file_regression.check(result.out, extension=".md")


@pytest.mark.parametrize("module", ["compiler", "runtime", "presets"])
def test_no_generic_top_level_modules_are_installed(tmp_path, module):
    probe = subprocess.run([sys.executable, "-c", f"import {module}"], cwd=tmp_path, capture_output=True)
    assert probe.returncode != 0


def test_target_lookups_cover_what_matching_every_tool_covers(catalog):
    """The resolver looks up a package's or a plain name's tools (`by_package`, `by_name_or_alias`); the
    lookups must hold exactly the tools `target_matches_tool` accepts, aliases included."""
    from dshc.compiler import ast
    from dshc.compiler.resolve import _Resolver, target_matches_tool

    span = ast.Span("t.dsh", 1, 1, 1, 2)
    names = sorted(catalog.shipped_names | {"no_such_tool"})
    targets = (
        [ast.Target("package", ast.Name(p, span)) for p in [*catalog.package_by_id, "no-such-package"]]
        + [ast.Target("tool", ast.Name(n, span)) for n in names]
        + [ast.Target("tool", ast.Name(g, span)) for g in ("web_*", "*", "?ash", "[br]*")]
        + [ast.Target("risk", ast.Name(r, span)) for r in sorted(catalog.risk_axes)]
    )
    assert any(t.aliases for t in catalog.definitions.values())  # the alias branch is exercised
    resolver = _Resolver(catalog)
    for target in targets:
        expected = {
            t.definition
            for t in catalog.definitions.values()
            if target_matches_tool(target, t.name, t, alias_names=t.aliases)
        }
        assert {t.definition for t in resolver._covered(target)} == expected, target


def test_a_package_whose_id_is_not_its_file_name_is_refused(catalog_copy):
    file = catalog_copy / "packages" / "tool-todo.json"
    data = json.loads(file.read_text())
    data["id"] = "tool-todos"
    file.write_text(json.dumps(data))
    with pytest.raises(DshError) as info:
        load_catalog(catalog_copy)
    assert _codes(info.value) == ["DSH508"]
    found = info.value.diagnostics[0]
    assert found.path.endswith("tool-todo.json") and "`tool-todos`" in found.message
