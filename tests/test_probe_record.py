"""The namespace test (a child Python) is remembered per boot only when it succeeded: a stale record can
make a launch fail, never let a command run less confined than the host allows."""
from __future__ import annotations

import importlib

import pytest

probe_module = importlib.import_module("dshc.runtime.sandbox.probe")  # the package's `probe` is the function


@pytest.fixture
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.delenv("DSHC_NO_CACHE", raising=False)
    return tmp_path / "dshc"


@pytest.fixture
def child_test(monkeypatch):
    """Stands in for the child process: answers what it is told and counts how often it ran."""
    state = {"answer": True, "runs": 0}

    def run():
        state["runs"] += 1
        return state["answer"]
    monkeypatch.setattr(probe_module, "_test_netns", run)
    return state


@pytest.mark.skipif(probe_module._works_stamp() is None, reason="no boot id on this host")
def test_success_is_remembered_for_this_boot(private_cache, child_test):
    assert probe_module._netns_works() is True and child_test["runs"] == 1
    assert probe_module._netns_works() is True and child_test["runs"] == 1  # the record answered
    assert any(p.name.startswith("netns-works-") for p in private_cache.iterdir())


@pytest.mark.skipif(probe_module._works_stamp() is None, reason="no boot id on this host")
def test_failure_is_never_remembered(private_cache, child_test):
    child_test["answer"] = False
    assert probe_module._netns_works() is False
    assert probe_module._netns_works() is False
    assert child_test["runs"] == 2  # asked again each time: the host may have been opened up since
    assert not private_cache.exists() or not any(p.name.startswith("netns-works-") for p in private_cache.iterdir())


def test_another_boot_tests_again(private_cache, child_test, monkeypatch):
    monkeypatch.setattr(probe_module, "_works_stamp", lambda: "netns-works-boot-a")
    assert probe_module._netns_works() is True and child_test["runs"] == 1
    monkeypatch.setattr(probe_module, "_works_stamp", lambda: "netns-works-boot-b")  # a reboot, a new kernel
    child_test["answer"] = False
    assert probe_module._netns_works() is False and child_test["runs"] == 2


def test_without_a_boot_id_or_a_cache_nothing_is_remembered(private_cache, child_test, monkeypatch):
    monkeypatch.setattr(probe_module, "_works_stamp", lambda: None)
    probe_module._netns_works()
    probe_module._netns_works()
    assert child_test["runs"] == 2
    monkeypatch.setattr(probe_module, "_works_stamp", lambda: "netns-works-x")
    monkeypatch.setenv("DSHC_NO_CACHE", "1")
    probe_module._netns_works()
    probe_module._netns_works()
    assert child_test["runs"] == 4


def test_the_record_is_keyed_by_the_boot_and_the_interpreter(monkeypatch):
    names = set()
    for boot in ("one", "two"):
        for executable in ("/usr/bin/python3", "/opt/python"):
            monkeypatch.setattr(probe_module, "_boot_id", lambda boot=boot: boot)
            monkeypatch.setattr(probe_module.sys, "executable", executable)
            names.add(probe_module._works_stamp())
    assert len(names) == 4 and None not in names
    monkeypatch.setattr(probe_module, "_boot_id", lambda: None)
    assert probe_module._works_stamp() is None
