"""catalogs/*.json → jsonschema check → Catalog: the upper bound of what packages can register.

The manifest names every package file; a package file the manifest does not list, a listed
file that is missing, or a package that contributes zero tools is an error, so the catalog
can never silently shrink or grow.
"""

from __future__ import annotations

import os

from . import prebuilt, user_cache
from .diagnostics import Diagnostic, DshError
from ..common.digest import sha256
from ._base.frozen import asdict, field, record, replace
from ._base.memo import cached_property, once
from .package_data import package_dir

TYPE_CHECKING = False  # no `import typing` (~4 ms of a hook): its names are for annotations only
if TYPE_CHECKING:  # types only: importing importlib.resources costs every process ~10 ms
    from collections.abc import Iterable
    from pathlib import Path
    from typing import Any

ESCALATION_PARAMETERS = {
    "sandbox_permissions": {
        "type": "string",
        "enum": ["workspace-write", "danger-full-access"],
        "description": "Ask to run this one call under a wider sandbox mode; needs a justification.",
    },
    "justification": {
        "type": "string",
        "description": "Why the wider sandbox mode is needed; shown to the approver.",
    },
}


class _Frozen:
    """Frozen catalog data (records: a process that only decides loads no validation
    library). The JSON schema has checked the data; an unknown or missing key is a TypeError."""

    _TUPLES: tuple[str, ...] = ()  # fields stored as tuples whatever sequence they were given as

    def __post_init__(self) -> None:
        for name in self._TUPLES:
            value = getattr(self, name)
            if value is not None and type(value) is not tuple:
                object.__setattr__(self, name, tuple(value))

    def model_copy(self, update: dict[str, Any] | None = None):
        return replace(self, **(update or {}))

    def model_dump(self, mode: str = "python") -> dict[str, Any]:
        """The fields as plain data (nested models as dicts; mode="json" gives lists for tuples)."""
        data = asdict(self)
        if mode != "json":
            return data
        import json  # the json package, for its `default`: not on a hook's path

        return json.loads(json.dumps(data, default=sorted))


@record(slots=False, kw_only=True)
class ConfigKnob(_Frozen):
    """One config key a package accepts: its type, allowed values, default and what it does."""

    _TUPLES = ("values",)
    type: str
    values: tuple[Any, ...] | None = None
    default: Any = None
    required: bool = False
    effect: str
    summary: str
    requires_service: str | None = None  # "subagent-provider-{value}": the configured value names a needed service

    def service_for(self, value) -> str | None:
        return (
            self.requires_service.replace("{value}", value)
            if self.requires_service and isinstance(value, str)
            else None
        )


@record(slots=False, kw_only=True)
class ToolDef(_Frozen):
    """One tool a package defines: its schema, risk axes, presentation and what it needs."""

    _TUPLES = ("risk", "requires", "aliases", "path_parameters")
    name: str
    definition: str
    description: str
    parameters: dict[str, Any]
    parallel_safe: bool
    risk: tuple[str, ...]
    presentation: str
    requires: tuple[str, ...]
    provider: str | None
    enabled_by: str | None
    name_from: str | None
    param_knobs: dict[str, str]
    escalation: bool
    aliases: tuple[str, ...]
    path_parameters: tuple[str, ...] = ()  # made canonical against the workspace before any condition
    description_knobs: dict[str, dict[str, str]] = field(
        default_factory=dict
    )  # knob -> value (or `*`) -> sentence added to the description

    @property
    def package(self) -> str:
        return self.definition.split("/", 1)[0]


@record(slots=False, kw_only=True)
class Package(_Frozen):
    """A catalog package: the tools it defines, the config it accepts and what it requires."""

    _TUPLES = ("requires", "tools")
    id: str
    summary: str
    requires: tuple[str, ...]
    config: dict[str, ConfigKnob]
    tools: tuple[ToolDef, ...]
    origin: str | None = None  # the overlay directory it came from; None: shipped (it has local bodies)

    @classmethod
    def from_data(cls, data: dict[str, Any]) -> "Package":
        """A package file's JSON (schema-checked) → Package, its knobs and tools built too."""
        return cls(
            **{
                **data,
                "config": {name: ConfigKnob(**knob) for name, knob in data["config"].items()},
                "tools": tuple(ToolDef(**tool) for tool in data["tools"]),
            }
        )


@record(slots=False, kw_only=True)
class Catalog(_Frozen):
    """The tool packages dshc knows: the shipped ones and any overlay's."""

    _TUPLES = ("packages",)
    name: str
    summary: str
    packages: tuple[Package, ...]
    declared_services: dict[str, str] = field(
        default_factory=dict
    )  # services an overlay introduces -> what they stand for
    outside_catalog: frozenset[str] = frozenset()  # packages the generated catalog does not list (not counted)

    @cached_property
    def package_by_id(self) -> dict[str, Package]:
        return {p.id: p for p in self.packages}

    @cached_property
    def definitions(self) -> dict[str, ToolDef]:
        return {t.definition: t for p in self.packages for t in p.tools}

    @cached_property
    def by_name(self) -> dict[str, tuple[ToolDef, ...]]:
        index: dict[str, list[ToolDef]] = {}
        for tool in self.definitions.values():
            index.setdefault(tool.name, []).append(tool)
        return {name: tuple(sorted(tools, key=lambda t: t.definition)) for name, tools in sorted(index.items())}

    @cached_property
    def by_package(self) -> dict[str, tuple[ToolDef, ...]]:
        """package id -> the tools `definitions` holds from it."""
        index: dict[str, list[ToolDef]] = {}
        for tool in self.definitions.values():
            index.setdefault(tool.package, []).append(tool)
        return {package: tuple(tools) for package, tools in index.items()}

    @cached_property
    def by_name_or_alias(self) -> dict[str, tuple[ToolDef, ...]]:
        """A tool's name or any of its aliases -> the tools it names (what a plain policy target covers)."""
        index: dict[str, list[ToolDef]] = {}
        for tool in self.definitions.values():
            for name in dict.fromkeys((tool.name, *tool.aliases)):
                index.setdefault(name, []).append(tool)
        return {name: tuple(tools) for name, tools in index.items()}

    @cached_property
    def shipped_names(self) -> frozenset[str]:
        """Every name a shipped configuration can produce: generated names plus aliases."""
        return frozenset(self.by_name_or_alias)

    @cached_property
    def services(self) -> frozenset[str]:
        found: set[str] = set(self.declared_services)
        for package in self.packages:
            found.update(package.requires)
            for tool in package.tools:
                found.update(tool.requires)
                if tool.provider:
                    found.add(tool.provider)
        return frozenset(found)

    @cached_property
    def risk_axes(self) -> frozenset[str]:
        return frozenset(axis for t in self.definitions.values() for axis in t.risk)

    def counts(self) -> dict[str, int]:
        """The generated catalog's figures: packages outside it (structured_output's driver) are left out."""
        packages = [p for p in self.packages if p.id not in self.outside_catalog]
        tools = [t for p in packages for t in p.tools]
        aliases = {a for t in tools for a in t.aliases}
        names = {t.name for t in tools}
        return {
            "packages": len(packages),
            "schema_entries": len(tools),
            "unique_names": len(names),
            "aliases": len(aliases),
            "distinct_shipped_names": len(names | aliases),
        }


def _read_json(path: str, text_reader) -> tuple[Any, list[Diagnostic]]:
    try:
        raw = text_reader()
    except (OSError, UnicodeDecodeError) as exc:
        return None, [
            Diagnostic("DSH501", f"cannot read catalog file: {exc.__class__.__name__}", path=path, json_path="$")
        ]
    import json  # loading a catalog from its files: a hook reads the cached program instead

    try:
        return json.loads(raw), []
    except json.JSONDecodeError as exc:
        return None, [
            Diagnostic(
                "DSH501",
                f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg.lower()}",
                path=path,
                json_path="$",
            )
        ]


def _json_path(parts: Iterable[Any]) -> str:
    out = "$"
    for part in parts:
        out += f"[{part}]" if isinstance(part, int) else f".{part}"
    return out


def _schema_errors(validator, instance, path: str) -> list[Diagnostic]:
    found = []
    for error in sorted(validator.iter_errors(instance), key=lambda e: list(map(str, e.absolute_path))):
        message = error.message if len(error.message) < 160 else error.message[:157] + "..."
        found.append(Diagnostic("DSH502", message, path=path, json_path=_json_path(error.absolute_path)))
    return found


@once
def _metaschema():
    """One validator for the metaschema, built once (check_schema builds a new one per call)."""
    import jsonschema

    meta = jsonschema.Draft202012Validator.META_SCHEMA
    return jsonschema.validators.validator_for(meta)(meta)


class _SchemaChecks:
    """jsonschema's checks of one catalog's files, run once per catalog hash: files whose exact bytes
    passed every check before (a stamp in the user's private cache) skip them, and jsonschema's import."""

    def __init__(self, files: "CatalogFolder", schema: dict, remember: bool = True) -> None:
        self._schema = schema
        self._validators: dict = {}
        # an overlay's validity also depends on the catalog it extends, so its checks always run
        self._stamp = f"catalog-{files.digest()}.ok" if remember else None
        # (set: remember) passed for this user, or at the package's build (the shipped catalog's bytes)
        self.passed_before = self._stamp is not None and (
            user_cache.has_stamp(self._stamp) or prebuilt.has_stamp(self._stamp)
        )

    def errors(self, ref: str | None, instance, path: str) -> list[Diagnostic]:
        if self.passed_before:
            return []
        validator = self._validators.get(ref)
        if validator is None:
            import jsonschema

            validator = self._validators[ref] = jsonschema.Draft202012Validator(
                {**self._schema, "$ref": ref} if ref else self._schema
            )
        return _schema_errors(validator, instance, path)

    def parameter_problem(self, parameters):
        return None if self.passed_before else next(_metaschema().iter_errors(parameters), None)

    def all_passed(self) -> None:
        if self._stamp is not None and not self.passed_before:
            user_cache.put_stamp(self._stamp)


def _json_entries(folder) -> list[tuple[str, str, bool]] | None:
    """[(name, path, is a file)] of the folder's `.json` entries, sorted by name, or None when there is
    no such folder: one os.scandir for the listing and the entries' kinds."""
    try:
        with os.scandir(folder) as listing:
            return sorted((e.name, e.path, e.is_file()) for e in listing if e.name.endswith(".json"))
    except (FileNotFoundError, NotADirectoryError):
        return None


class CatalogFolder:
    """A catalog folder's JSON files (its own and those under packages/), each read once as bytes: the
    stamp that lets the schema checks be skipped hashes the very bytes that are then parsed (nothing
    can change between the two), and no file is opened twice."""

    def __init__(self, root) -> None:
        self.root = root
        self.names: dict[str, list[str]] = {}  # "" or "packages" -> its `.json` entries, sorted
        self._bytes: dict[str, bytes] = {}  # "manifest.json", "packages/tool-fs.json" -> the file's bytes
        self._failed: dict[str, OSError] = {}  # such a name -> why it could not be read
        for sub in ("", "packages"):
            folder = root / sub if sub else root
            entries = _json_entries(folder)
            if entries is None:
                continue
            self.names[sub] = [entry_name for entry_name, _, _ in entries]
            for entry_name, path, is_file in entries:
                name = f"{sub}/{entry_name}" if sub else entry_name
                if not is_file:
                    continue
                try:
                    with open(path, "rb") as handle:
                        self._bytes[name] = handle.read()
                except OSError as exc:
                    self._failed[name] = exc

    def path(self, name: str):
        return self.root / name

    def is_file(self, name: str) -> bool:
        return name in self._bytes or name in self._failed

    def text(self, name: str) -> str:
        """The file's text (UTF-8); raises what reading it raised, FileNotFoundError if it is not there."""
        if name in self._failed:
            raise self._failed[name]
        if name not in self._bytes:
            raise FileNotFoundError(str(self.path(name)))
        return self._bytes[name].decode("utf-8")

    def digest(self) -> str:
        """SHA-256 of every JSON file read (schema, manifest, packages), names and bytes."""
        digest = sha256(b"dshc-catalog-checks-1")
        for sub in ("", "packages"):
            label = sub or self.root.name
            for entry in self.names.get(sub, ()):
                data = self._bytes.get(f"{sub}/{entry}" if sub else entry)
                if data is not None:
                    digest.update(f"{label}/{entry}".encode() + b"\0" + data + b"\0")
        return digest.hexdigest()


@once
def shipped_root() -> Path:
    return package_dir("dshc.catalogs")


def load_catalog(root: Path | str | None = None) -> Catalog:
    """Load and check a catalog directory (the shipped one by default); raises DshError."""
    if root is None:
        return _shipped_catalog()
    if isinstance(root, str):
        from pathlib import Path  # with a catalog to load: a hook deciding from its cache loads none

        root = Path(root)
    return _load(root)


@once
def _shipped_catalog() -> Catalog:
    return _load(shipped_root(), shipped_files())


@once
def shipped_files() -> CatalogFolder:
    """The shipped catalog's files, read once per process (an overlay checks against its schema)."""
    return CatalogFolder(shipped_root())


def _load(root, files: CatalogFolder | None = None) -> Catalog:
    diags: list[Diagnostic] = []
    files = files or CatalogFolder(root)
    checks = _SchemaChecks(files, _catalog_schema(files))
    manifest, manifest_file = _manifest(files, checks, "#/$defs/manifest")
    packages = _packages(files, manifest, manifest_file, checks, diags)
    outside = frozenset(manifest.get("outside_catalog", ()))
    for index, package_id in enumerate(manifest.get("outside_catalog", ())):
        if package_id not in manifest["packages"]:
            diags.append(
                Diagnostic(
                    "DSH507",
                    f"`outside_catalog` names `{package_id}`, which the manifest does not list",
                    path=str(manifest_file),
                    json_path=f"$.outside_catalog[{index}]",
                )
            )
    if diags:
        raise DshError(diags)
    checks.all_passed()
    return Catalog(
        name=manifest["catalog"], summary=manifest.get("summary", ""), packages=tuple(packages), outside_catalog=outside
    )


def _catalog_schema(files: CatalogFolder) -> dict:
    schema, found = _read_json(str(files.path("catalog.schema.json")), lambda: files.text("catalog.schema.json"))
    if found:
        raise DshError(found)
    return schema


def _manifest(files: CatalogFolder, checks: _SchemaChecks, ref: str | None) -> tuple[dict, Any]:
    manifest_file = files.path("manifest.json")
    manifest, diags = _read_json(str(manifest_file), lambda: files.text("manifest.json"))
    if manifest is not None:
        diags += checks.errors(ref, manifest, str(manifest_file))
    if diags:
        raise DshError(diags)
    return manifest, manifest_file


def _packages(
    files: CatalogFolder,
    manifest: dict,
    manifest_file,
    checks: _SchemaChecks,
    diags: list[Diagnostic],
    origin: str | None = None,
) -> list[Package]:
    """The packages a manifest lists, each checked; problems go to `diags`."""
    package_dir = files.path("packages")
    on_disk = files.names.get("packages", [])
    listed = list(manifest["packages"])
    for name in on_disk:
        if name[: -len(".json")] not in listed:
            diags.append(
                Diagnostic(
                    "DSH505",
                    f"package file `{name}` is not listed in the manifest",
                    path=str(package_dir / name),
                    json_path="$",
                    help="add its id to `packages` in manifest.json or delete the file",
                )
            )
    packages: list[Package] = []
    seen_definitions: dict[str, str] = {}
    for index, package_id in enumerate(listed):
        name = f"packages/{package_id}.json"
        file = package_dir / f"{package_id}.json"
        if not files.is_file(name):
            diags.append(
                Diagnostic(
                    "DSH507",
                    f"manifest lists `{package_id}` but `packages/{package_id}.json` does not exist",
                    path=str(manifest_file),
                    json_path=f"$.packages[{index}]",
                )
            )
            continue
        data, found = _read_json(str(file), lambda: files.text(name))
        if found:
            diags += found
            continue
        found = checks.errors(None, data, str(file))
        if found:
            diags += found
            continue
        if data["id"] != package_id:
            diags.append(
                Diagnostic(
                    "DSH508",
                    f"package id `{data['id']}` does not match its file name `{package_id}.json`",
                    path=str(file),
                    json_path="$.id",
                )
            )
            continue
        if not data["tools"]:
            diags.append(
                Diagnostic(
                    "DSH506",
                    f"package `{package_id}` contributes zero tools",
                    path=str(file),
                    json_path="$.tools",
                    help="a package in the catalog must register at least one tool",
                )
            )
            continue
        for t_index, tool in enumerate(data["tools"]):
            where = f"$.tools[{t_index}]"
            problem = checks.parameter_problem(tool["parameters"])
            if problem is not None:
                diags.append(
                    Diagnostic(
                        "DSH503",
                        f"parameters of `{tool['name']}`: {problem.message}",
                        path=str(file),
                        json_path=where + ".parameters" + _json_path(problem.absolute_path)[1:],
                    )
                )
            if tool["definition"] in seen_definitions:
                diags.append(
                    Diagnostic(
                        "DSH504",
                        f"definition `{tool['definition']}` is already defined in "
                        f"`{seen_definitions[tool['definition']]}`",
                        path=str(file),
                        json_path=where + ".definition",
                    )
                )
            seen_definitions.setdefault(tool["definition"], str(file))
            for p_index, name in enumerate(tool.get("path_parameters", ())):
                if name not in tool["parameters"]["properties"]:
                    diags.append(
                        Diagnostic(
                            "DSH502",
                            f"path parameter `{name}` is not a parameter of `{tool['name']}`",
                            path=str(file),
                            json_path=f"{where}.path_parameters[{p_index}]",
                        )
                    )
            for knob in tool.get("description_knobs", {}):
                if knob not in data["config"]:
                    diags.append(
                        Diagnostic(
                            "DSH502",
                            f"description knob `{knob}` is not a config key of `{package_id}`",
                            path=str(file),
                            json_path=f"{where}.description_knobs.{knob}",
                        )
                    )
            if not tool["definition"].startswith(package_id + "/"):
                diags.append(
                    Diagnostic(
                        "DSH502",
                        f"definition `{tool['definition']}` must start with `{package_id}/`",
                        path=str(file),
                        json_path=where + ".definition",
                    )
                )
        packages.append(Package.from_data({**data, "origin": origin}))
    return packages
