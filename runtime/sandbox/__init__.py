"""OS confinement of the processes tools start. In: a Confinement (mode, workspace, extra
writable roots, network) and an argv; out: the argv that runs it confined and supervised, or
SandboxUnavailable naming what is missing. The child side lives in launch.py."""
from .confine import Confinement, Launch, SandboxFailure, SandboxUnavailable, missing, plan, read_report
from .probe import Probe, probe

__all__ = ["Confinement", "Launch", "Probe", "SandboxFailure", "SandboxUnavailable", "missing", "plan", "probe", "read_report"]
