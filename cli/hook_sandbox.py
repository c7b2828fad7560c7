"""The policy's OS sandbox for a shell command another agent runs (Claude Code's Bash, through its hook).

In: the composed policy, the command line, the workspace. Out: the same command as a line that runs it
confined (the runtime's launcher, or bubblewrap / sandbox-exec behind it: `runtime/sandbox`), for the
hook to hand back as the call's `updatedInput`; None when the policy declares no sandbox, or
`danger-full-access`. A policy that declares one made a promise the rules alone cannot keep (`sandbox
read-only` and a shell that writes): where no mechanism can confine here, `SandboxUnavailable` is
raised and the hook denies, unless the policy opted out (`sandbox fallback unsandboxed`).

The command runs in `bash -c` under the launcher, in the agent shell's working directory: a `cd` or an
`export` in it no longer outlives the call, and its temp folder (TMPDIR) is dshc's private one
(`private_tmp`), the shared /tmp being outside what it may write; the variables the policy forbids a line
to read are unset (`env -u NAME`, each one the hook's environment holds). The launcher reports why it could
not confine on fd 3, which the line points at the shell's stderr.
"""

from __future__ import annotations

import os

REPORT_FD = 3  # the launcher's report fd: a dup of the agent shell's stderr (`3>&2`)


def declares_sandbox(policy) -> bool:
    """Whether the policy declares a sandbox that confines (its own `sandbox` line, or one it extends)."""
    return policy is not None and policy.sandbox is not None and policy.sandbox.text != "danger-full-access"


def sandboxed_command(
    policy, command: str, workspace: str, keep: tuple[str, ...] = (), mode: str | None = None
) -> tuple[str, str] | None:
    """(the confined command line, the mechanism's name), or None when the policy declares no sandbox,
    or opted out of one on a host that has none. `keep`: files kept read-only besides the policy's own
    protected paths (what configures the hook: a command that rewrote them would choose the next call's
    policy, or remove the hook). `mode`: a wider mode a human approved for this call (`escalation_verdict`)."""
    if not declares_sandbox(policy):
        return None
    from ..compiler.policy.hidden_env import hidden_variables, present_names
    from ..compiler.policy.protected import hidden_globs, matching_files
    from ..runtime.sandbox import SandboxUnavailable, confinement_in, plan
    from .host import policy_mode, sandbox_settings
    from .sandbox_record import reported_probe

    settings = sandbox_settings(policy)
    hidden = settings["hidden_roots"]
    mode = mode or policy_mode(policy)
    if mode != "danger-full-access" and (globs := hidden_globs(policy)):
        found, complete = matching_files(os.path.realpath(workspace), globs)
        if not complete:  # some would be readable: the call is denied, saying why
            raise SandboxUnavailable(
                mode,
                "a search small enough to find every file the policy's "
                "read rules name (too many entries under the workspace; name a path instead)",
            )
        hidden = (*hidden, *found)
    tmp = private_tmp()
    conf = confinement_in(
        mode,
        os.path.realpath(workspace),
        tmp,
        writable=settings["writable_roots"],
        protected=(*settings["protected_roots"], *keep),
        hidden=hidden,
        network=settings["network"],
        network_allow=settings["network_allow"],
        network_deny=settings["network_deny"],
        fallback_unsandboxed=settings["sandbox_fallback"],
        backend=settings["sandbox_backend"],
    )
    launch = plan(conf, ["/bin/bash", "-c", command], REPORT_FD, found=reported_probe())  # as the bash tool runs it
    if launch.mechanism == "unsandboxed":
        return None  # the policy's own opt-out, on a host with no mechanism: the command as it was
    # temp files go to the private folder, as the runtime's own commands' do (the shared /tmp is not writable)
    # and the variables a shell line may not read are not in its environment (`env -u`: the ones set here)
    unset = (
        [f"-u {quote(name)}" for name in present_names(hidden_variables(policy), os.environ)]
        if mode != "danger-full-access"
        else []
    )
    line = " ".join(
        [
            *(["/usr/bin/env", *unset] if unset else []),
            *(f"{name}={quote(tmp)}" for name in ("TMPDIR", "TMP", "TEMP")),
            *map(quote, launch.argv),
        ]
    )
    return (f"{line} {REPORT_FD}>&2" if launch.report else line), launch.mechanism


def network_text(policy) -> str:
    """What the command's network is, in words for the agent: off, on, or on for the listed hosts only."""
    from .host import egress_words, sandbox_settings

    settings = sandbox_settings(policy)
    if not settings["network"]:
        return "network off"
    listed = settings["network_allow"] or settings["network_deny"]
    return (
        "network on"
        + egress_words(settings["network_allow"], settings["network_deny"])
        + (" (through dshc's proxy: HTTP_PROXY, HTTPS_PROXY)" if listed else "")
    )


_PLAIN = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789@%+=:,./-_")


def quote(word: str) -> str:
    """`shlex.quote(word)`: the word as one POSIX shell word (shlex's import brings `re` into the hook)."""
    if word and all(c in _PLAIN for c in word):  # as shlex leaves it
        return word
    return "'" + word.replace("'", "'\"'\"'") + "'"


def private_tmp() -> str:
    """<cache>/dshc/tmp, made 0700 and refused unless this user's alone: the one folder a sandboxed
    command may write in every mode (the runtime's own commands get a session temp folder likewise).
    Kept between calls, like the shell's own temp folder; OSError when it cannot be had."""
    import stat
    from ..compiler import user_cache

    root = user_cache.cache_root()
    if root is None:  # as `open_folder` would say
        raise FileNotFoundError("no cache folder")
    folder = user_cache.open_folder()
    try:
        try:
            os.mkdir("tmp", 0o700, dir_fd=folder)
        except FileExistsError:
            pass
        user_cache.check_owned(os.stat("tmp", dir_fd=folder, follow_symlinks=False), "tmp", stat.S_ISDIR)
    finally:
        os.close(folder)
    return os.path.realpath(os.path.join(root, "dshc", "tmp"))
