"""A base Catalog + user catalog directories → one Catalog: overlays add packages and services.

An overlay is a folder with `manifest.json` (packages, and optionally the services it introduces
and the shipped packages it replaces on purpose) and `packages/*.json` in the shipped format. A
package id or service the base already has is a clash (a diagnostic naming both files), never a
silent replacement; only a package listed under `replaces` takes the place of a base package.
"""

from __future__ import annotations


from .catalog import (
    Catalog,
    CatalogFolder,
    _SchemaChecks,
    _catalog_schema,
    _manifest,
    _packages,
    load_catalog,
    shipped_files,
)
from .diagnostics import Diagnostic, DshError
from .facts import HOST_SERVICES

TYPE_CHECKING = False  # no `import typing` (~4 ms of a hook): its names are for annotations only
if TYPE_CHECKING:
    from pathlib import Path

SERVICE_NAME = "^[a-z][a-z0-9]*(-[a-z0-9]+)*$"


def overlay_schema(base_schema: dict) -> dict:
    """The overlay manifest: the shipped manifest plus `services` and `replaces`."""
    import copy  # with an overlay only: a hook without one never loads copy (and weakref)

    manifest = copy.deepcopy(base_schema["$defs"]["manifest"])
    manifest["properties"]["services"] = {
        "type": "object",
        "propertyNames": {"pattern": SERVICE_NAME},
        "additionalProperties": {"$ref": "#/$defs/oneLine"},
    }
    manifest["properties"]["replaces"] = {"type": "array", "uniqueItems": True, "items": {"$ref": "#/$defs/packageId"}}
    return {**base_schema, "$ref": "#/$defs/overlay", "$defs": {**base_schema["$defs"], "overlay": manifest}}


def package_schema(base_schema: dict, services) -> dict:
    """The package schema with the service vocabulary widened by the overlay's own services."""
    import copy

    schema = copy.deepcopy(base_schema)
    schema["$defs"]["service"]["enum"] = sorted(set(schema["$defs"]["service"]["enum"]) | set(services))
    return schema


def overlay(base: Catalog, directory: str | Path) -> Catalog:
    """`base` with the packages and services of the overlay in `directory` added; raises DshError."""
    from pathlib import Path  # only with an overlay to read

    root = Path(directory)
    if not (root / "manifest.json").is_file():
        raise DshError(
            [
                Diagnostic(
                    "DSH501",
                    "a catalog overlay needs a manifest.json",
                    path=str(root),
                    json_path="$",
                    help="list its packages in manifest.json and put them under packages/",
                )
            ]
        )
    files = CatalogFolder(root)
    base_schema = _catalog_schema(shipped_files())
    manifest, manifest_file = _manifest(files, _SchemaChecks(files, overlay_schema(base_schema), remember=False), None)
    diags: list[Diagnostic] = []
    services = dict(manifest.get("services", {}))
    known = base.services | frozenset(HOST_SERVICES)
    for name in services:
        if name in known:
            diags.append(
                Diagnostic(
                    "DSH509",
                    f"service `{name}` is already known to catalog `{base.name}`",
                    path=str(manifest_file),
                    json_path=f"$.services.{name}",
                    help="use the existing service; an overlay only introduces new ones",
                )
            )
    checks = _SchemaChecks(files, package_schema(base_schema, services), remember=False)
    added = _packages(files, manifest, manifest_file, checks, diags, origin=str(root))
    replaces = list(manifest.get("replaces", ()))
    listed = list(manifest["packages"])
    for index, package_id in enumerate(replaces):
        if package_id not in base.package_by_id:
            diags.append(
                Diagnostic(
                    "DSH509",
                    f"`replaces` names `{package_id}`, which catalog `{base.name}` lacks",
                    path=str(manifest_file),
                    json_path=f"$.replaces[{index}]",
                )
            )
        elif package_id not in listed:
            diags.append(
                Diagnostic(
                    "DSH509",
                    f"`replaces` names `{package_id}` but the overlay does not list it",
                    path=str(manifest_file),
                    json_path=f"$.replaces[{index}]",
                    help="list the replacement under `packages` too",
                )
            )
    for index, package_id in enumerate(listed):
        if package_id in base.package_by_id and package_id not in replaces:
            first = base.package_by_id[package_id].origin or f"the shipped catalog `{base.name}`"
            diags.append(
                Diagnostic(
                    "DSH509",
                    f"package `{package_id}` is already defined by {first}",
                    path=str(manifest_file),
                    json_path=f"$.packages[{index}]",
                    help=f"rename it, or add it to `replaces` to replace `{package_id}` on purpose",
                )
            )
    if diags:
        raise DshError(diags)
    by_id = {p.id: p for p in added}
    packages = tuple(by_id.pop(p.id, p) if p.id in replaces else p for p in base.packages) + tuple(by_id.values())
    return Catalog(
        name=f"{base.name}+{manifest['catalog']}",
        summary=base.summary,
        packages=packages,
        declared_services={**base.declared_services, **services},
        outside_catalog=base.outside_catalog,
    )


def with_overlays(base: Catalog, directories) -> Catalog:
    catalog = base
    for directory in directories:
        catalog = overlay(catalog, directory)
    return catalog


def overlaid_catalog(directories) -> Catalog | None:
    """The shipped catalog with `directories` overlaid, or None (meaning the shipped one) when there are none."""
    return with_overlays(load_catalog(), directories) if directories else None
