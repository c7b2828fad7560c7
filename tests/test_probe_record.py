"""decide and explain remember per boot that namespaces work; a failure is never remembered, and
launching a command never reads the record."""

from __future__ import annotations

import importlib
import sys

import pytest

from dshc.cli import sandbox_record
from dshc.runtime import sandbox

probe_module = importlib.import_module("dshc.runtime.sandbox.probe")  # the package's `probe` is the function


@pytest.fixture
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.delenv("DSHC_NO_CACHE", raising=False)
    return tmp_path / "dshc"


class ChildTest:
    """Stands in for the child process: answers what it is told and counts how often it ran."""

    def __init__(self, answer: bool):
        self.answer, self.runs = answer, 0

    def __call__(self) -> bool:
        self.runs += 1
        return self.answer


def _records(folder) -> list[str]:
    return [p.name for p in folder.iterdir() if p.name.startswith("netns-works-")] if folder.exists() else []


def test_a_pass_is_remembered(private_cache):
    test = ChildTest(True)
    assert sandbox_record.remembered_yes("netns-works-a", test) is True and test.runs == 1
    assert sandbox_record.remembered_yes("netns-works-a", test) is True and test.runs == 1  # the record answered
    assert _records(private_cache) == ["netns-works-a"]


def test_a_failure_is_never_remembered(private_cache):
    test = ChildTest(False)
    assert sandbox_record.remembered_yes("netns-works-a", test) is False
    assert sandbox_record.remembered_yes("netns-works-a", test) is False
    assert test.runs == 2 and _records(private_cache) == []  # asked again: the host may have been opened up


def test_another_boot_asks_again(private_cache):
    sandbox_record.remembered_yes("netns-works-boot-a", ChildTest(True))
    later = ChildTest(False)  # after a reboot, a new kernel or another interpreter
    assert sandbox_record.remembered_yes("netns-works-boot-b", later) is False and later.runs == 1


def test_without_a_boot_id_or_a_cache_nothing_is_remembered(private_cache, monkeypatch):
    test = ChildTest(True)
    sandbox_record.remembered_yes(None, test)
    sandbox_record.remembered_yes(None, test)
    monkeypatch.setenv("DSHC_NO_CACHE", "1")
    sandbox_record.remembered_yes("netns-works-a", test)
    sandbox_record.remembered_yes("netns-works-a", test)
    assert test.runs == 4 and _records(private_cache) == []


def test_the_record_is_keyed_by_the_boot_and_the_interpreter(monkeypatch):
    names = set()
    for boot in ("one", "two"):
        for executable in ("/usr/bin/python3", "/opt/python"):
            monkeypatch.setattr(sandbox_record, "_boot_id", lambda boot=boot: boot)
            monkeypatch.setattr(sandbox_record.sys, "executable", executable)
            names.add(sandbox_record.works_stamp())
    assert len(names) == 4 and None not in names
    monkeypatch.setattr(sandbox_record, "_boot_id", lambda: None)
    assert sandbox_record.works_stamp() is None


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="namespaces are probed on Linux only")
def test_launching_never_reads_the_record(private_cache, monkeypatch):
    """With a planted "yes" the description says namespaces work; the probe a launch uses asks the child."""
    monkeypatch.setattr(sandbox_record, "works_stamp", lambda: "netns-works-planted")
    sandbox_record.remembered_yes("netns-works-planted", ChildTest(True))
    refused = ChildTest(False)
    monkeypatch.setattr(sandbox, "netns_works", refused)
    monkeypatch.setattr(probe_module, "netns_works", refused)
    assert sandbox_record.reported_probe.__wrapped__().network_namespace is True and refused.runs == 0
    assert probe_module.probe.__wrapped__().network_namespace is False and refused.runs == 1  # what plan() uses


def test_a_process_asks_at_most_once(private_cache, monkeypatch):
    """A session describes every call's sandbox: where nothing is recorded (or namespaces fail), the
    child still runs once per process, as the runtime's own probe does."""
    monkeypatch.setattr(sandbox_record, "works_stamp", lambda: None)
    refused = ChildTest(False)
    monkeypatch.setattr(sandbox, "netns_works", refused)
    sandbox_record.reported_probe.cache_clear()
    try:
        first, second = sandbox_record.reported_probe(), sandbox_record.reported_probe()
        assert first is second and refused.runs == (1 if sys.platform.startswith("linux") else 0)
    finally:
        sandbox_record.reported_probe.cache_clear()


def test_the_landlock_abi_is_remembered_for_the_boot(private_cache, monkeypatch):
    """A hook plans a confinement on every shell call: the kernel is asked once a boot (asking loads ctypes)."""
    from dshc.runtime.sandbox import landlock

    asked = []
    monkeypatch.setattr(landlock, "abi_version", lambda: asked.append(1) or 4)
    assert sandbox_record.remembered_abi("netns-works-boot") == 4 and len(asked) == 1
    assert sandbox_record.remembered_abi("netns-works-boot") == 4 and len(asked) == 1  # read back
    (private_cache / "landlock-abi-boot").write_bytes(b"lies")  # a record that is not a number is asked again
    assert sandbox_record.remembered_abi("netns-works-boot") == 4 and len(asked) == 2
    assert sandbox_record.remembered_abi(None) == 4 and len(asked) == 3  # no boot id: nothing remembered


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="libseccomp is probed on Linux only")
def test_libseccomp_loading_is_remembered_for_the_boot_and_a_failure_never(private_cache, monkeypatch):
    """Describing a shell call's sandbox asks whether libseccomp loads (ctypes): a "yes" is kept for the
    boot; a "no" is asked again. The launcher loads libseccomp itself, so a record that lies fails closed."""
    monkeypatch.setattr(sandbox_record, "works_stamp", lambda: "netns-works-boot")
    monkeypatch.setattr(sandbox, "netns_works", ChildTest(True))
    monkeypatch.setattr(sandbox_record, "remembered_abi", lambda stamp: 4)
    for answer, runs in ((False, 2), (True, 1)):
        loads = ChildTest(answer)
        monkeypatch.setattr(probe_module, "seccomp_loads", loads)
        seen = [sandbox_record.reported_probe.__wrapped__().seccomp for _ in range(2)]
        assert seen == [answer, answer] and loads.runs == runs
    assert (private_cache / "seccomp-loads-boot").exists()
