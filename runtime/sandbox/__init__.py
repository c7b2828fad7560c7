"""OS confinement of the processes tools start. In: a Confinement (mode, workspace, extra
writable roots, network) and an argv; out: the argv that runs it confined and supervised, or
SandboxUnavailable naming what is missing. The child side lives in launch.py."""

from .confine import Confinement, Launch, SandboxFailure, SandboxUnavailable, confinement_in, missing, plan, read_report
from .probe import Probe, netns_works, probe, probe_with

__all__ = [
    "Confinement",
    "Launch",
    "Probe",
    "SandboxFailure",
    "SandboxUnavailable",
    "confinement_in",
    "missing",
    "netns_works",
    "plan",
    "probe",
    "probe_with",
    "read_report",
]
