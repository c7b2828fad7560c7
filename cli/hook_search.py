"""Another agent's search over a folder (Claude Code's Grep) reads every file below it, and prints what
matches: under `deny read … "*.env"` a Grep of `.` printed a `.env`'s lines (anthropics/claude-code#57525,
anomalyco/opencode#17073), as the call names the folder, not the file. The hook cannot filter the results
it does not see, so it answers for the files there the policy keeps from being read: the strictest of their
`read` decisions, naming them. A `glob` on the search that leaves them out is honoured (a recursive search
whose own filter excludes the file reads nothing of it: anthropics/claude-code#91778).

In: the composed program and request, the search's input and working directory. Out: None, or (effect,
reason). Only policies with read rules on literal paths or globs (`hidden_paths`, `hidden_globs`) look.
"""

from __future__ import annotations

import os

SHOWN = 3  # files named in the reason


def search_refusal(program, request, tool_input: dict, cwd: str, workspace: str) -> tuple[str, str] | None:
    from ..compiler.policy.effects import RANK
    from ..compiler.policy.protected import SEARCH_LIMIT, hidden_globs, hidden_paths, matching_files

    policy = program.composition(request).policy
    if policy is None:
        return None
    globs, literal = hidden_globs(policy), hidden_paths(policy)
    if not (globs or literal):
        return None
    path = tool_input.get("path")
    root = os.path.realpath(os.path.join(cwd, os.path.expanduser(path)) if isinstance(path, str) and path else cwd)
    found, complete = matching_files(root, globs, base=os.path.realpath(workspace)) if globs else ((), True)
    if not complete:
        return "deny", (
            f"dshc: deny: a search of `{root}` reads more than {SEARCH_LIMIT:,} entries, too many to find "
            "every file the policy's read rules keep from being read; search a narrower `path`"
        )
    candidates = [
        file
        for file in (*found, *_files_hidden_below(root, literal, workspace))
        if _searched(file, tool_input.get("glob"))
    ]
    effects = {
        file: program.decide(request, "read", {"file_path": file}, workspace=workspace, gates=False).effect
        for file in candidates
    }
    kept = [file for file, effect in effects.items() if effect != "allow"]
    if not kept:
        return None
    worst = max(("deny" if effect == "conditional" else effect for effect in effects.values()), key=RANK.__getitem__)
    shown = ", ".join(f"`{os.path.relpath(file, root)}`" for file in kept[:SHOWN])
    more = f" and {len(kept) - SHOWN} more" if len(kept) > SHOWN else ""
    approval = " without a human's approval" if worst == "ask" else ""
    return worst, (
        f"dshc: {worst}: a search of `{root}` reads every file below it, and the policy keeps {shown}{more} "
        f"from being read{approval}; give the search a `path` or `glob` that leaves them out"
    )


def _files_hidden_below(root: str, literal, workspace: str) -> list[str]:
    """A file the search reads in each literal path the policy hides that it reaches: one below `root`, or
    `root` itself or a folder above it (one file suffices to decide it)."""
    found = []
    for path in literal:
        hidden = os.path.realpath(os.path.join(workspace, os.path.expanduser(path)))
        if hidden == root or root.startswith(hidden.rstrip("/") + "/"):
            start = root  # the search runs inside it: every file it reads is one
        elif hidden.startswith(root.rstrip("/") + "/"):
            start = hidden
        else:
            continue
        if os.path.isfile(start):
            found.append(start)
        for folder, _, files in os.walk(start):
            if files:
                found.append(os.path.join(folder, files[0]))
                break
    return found


def _searched(file: str, glob) -> bool:
    """Whether a search limited by `glob` reads the file: a glob with no folder in it is matched against the
    file's name, as ripgrep's `--glob` is; any other form (braces, a class, `!`, a folder) is not read
    here, so every file counts."""
    if not isinstance(glob, str) or not glob or any(char in glob for char in "/{}[]!\\"):
        return True
    from ..compiler.globs import glob_match

    return glob_match(glob, os.path.basename(file))
