"""dshc's own installation is read-only to the commands it confines wherever a write root holds it: installed
in the project's own `.venv`, one confined command rewrote the sandbox launcher and every later command ran
bare. Its packages (the launcher, the shipped presets and policies) and the environment of the interpreter
running it (`sys.prefix`: scripts, site-packages, `.pth` files) are kept as a policy's protected paths are.
Real processes: an installation planted in the workspace's `.venv` stands in for dshc's (a test must not risk
the real launcher)."""

from __future__ import annotations

import sys

import pytest

from dshc.runtime import sandbox
from dshc.runtime.sandbox import confinement_in, plan
from dshc.runtime.sandbox.confine import PACKAGES, installation

PROBE = sandbox.probe()
needs_namespaces = pytest.mark.skipif(
    PROBE.landlock_abi < 1 or not PROBE.network_namespace or not PROBE.seccomp,
    reason="needs Landlock, user namespaces and libseccomp",
)


def test_the_installation_is_every_package_folder_and_the_interpreters_environment():
    import importlib
    import os

    found = installation()
    assert os.path.realpath(sys.prefix) + "/" in found
    for name in PACKAGES:
        assert os.path.realpath(os.path.dirname(importlib.import_module(name).__file__)) + "/" in found
    from dshc.runtime.sandbox.probe import LAUNCHER

    assert any(os.path.realpath(LAUNCHER).startswith(folder) for folder in found)


@pytest.fixture
def planted(workspace, monkeypatch):
    """An installation of dshc inside the workspace, as `pip install dshc` in the project's `.venv` makes it."""
    venv = workspace / ".venv"
    package = venv / "lib" / "site-packages" / "dshc" / "runtime" / "sandbox"
    package.mkdir(parents=True)
    (package / "launch.py").write_text("# the launcher\n")
    (venv / "bin").mkdir()
    (venv / "bin" / "dshc").write_text("#!/bin/sh\n")
    monkeypatch.setattr(
        "dshc.runtime.sandbox.confine.installation",
        lambda: (str(venv / "lib" / "site-packages" / "dshc") + "/", str(venv) + "/"),
    )
    return venv


@needs_namespaces
@pytest.mark.parametrize("context", [{}, {"network": True}], ids=["network-off", "network-allow"])
def test_a_command_cannot_rewrite_dshc_installed_in_the_project(run_bash, workspace, planted, context):
    launcher = planted / "lib" / "site-packages" / "dshc" / "runtime" / "sandbox" / "launch.py"
    output = run_bash(
        f"echo 'import os' > {launcher}; echo launcher=$?; echo x > {planted}/bin/dshc; echo bin=$?; "
        f"echo 'import evil' > {planted}/lib/site-packages/evil.pth; echo pth=$?; "
        f"mv .venv v2; echo mv=$?; chmod 777 {launcher}; echo chmod=$?; echo ok > other; echo other=$?",
        **context,
    )
    for step in ("launcher", "bin", "pth", "mv", "chmod"):
        assert f"{step}=0" not in output, (step, output)
    assert "other=0" in output, output
    assert launcher.read_text() == "# the launcher\n" and not (planted / "lib" / "site-packages" / "evil.pth").exists()


def test_only_an_installation_a_write_root_holds_is_listed(tmp_path, planted, workspace):
    conf = confinement_in("workspace-write", str(workspace), str(tmp_path / "t"))
    assert f"{planted}/" in conf.protected and f"{planted}/" in conf.read_only()
    # elsewhere nothing may be written anyway
    elsewhere = confinement_in("workspace-write", str(tmp_path / "other"), str(tmp_path / "t"))
    assert elsewhere.protected == ()
    # a host without the namespaces to keep it read-only refuses rather than run the command beside it
    bare = sandbox.Probe(
        platform="linux", landlock_abi=3, network_namespace=False, bwrap=None, sandbox_exec=None, seccomp=True
    )
    with pytest.raises(sandbox.SandboxUnavailable, match=".venv"):
        plan(conf.replace(network=True), ["/bin/true"], 3, bare)
