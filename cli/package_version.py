"""dshc's installed version, read off its distribution's folder name rather than through importlib.metadata.

`importlib.metadata.version` loads its machinery and walks every installed distribution (~50 ms of CPU
with a few hundred packages installed, four times a `dshc --version` process's interpreter start).
"""

from __future__ import annotations

import os
import sys


def installed_version() -> str:
    """The version in the name of the first `dshc-VERSION.dist-info` folder on sys.path, where
    importlib.metadata looks first; importlib.metadata's answer (or "unknown") when the first dshc
    metadata found is any other kind (an `.egg-info` of a source tree)."""
    for entry in sys.path:
        try:
            names = os.listdir(entry or ".")
        except OSError:  # not a folder (a zip, a missing entry): importlib.metadata reads those
            continue
        found = [
            name
            for name in names
            if name.lower().startswith(("dshc-", "dshc.")) and name.endswith((".dist-info", ".egg-info"))
        ]
        if not found:
            continue
        version = found[0][len("dshc-") : -len(".dist-info")] if len(found) == 1 else ""
        if found[0].endswith(".dist-info") and version and "-" not in version:
            return version
        break
    return _from_metadata()


def _from_metadata() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("dshc")
    except PackageNotFoundError:
        return "unknown"
