"""The Node worker process of one run_code program. In: a Confinement and a heap limit; out: a
running worker under the process sandbox (frames on `events`, `send`, `kill`), or
CodeRuntimeMissing naming what this host lacks.

The node_modules the worker loads are package data beside runner.js (the package build runs
`npm ci` in node/); nothing is looked up on PATH but `node` itself.
"""

from __future__ import annotations

import os
import queue
import subprocess
import threading

from ..sandbox import Confinement
from ..tools.procs import kill_tree, spawn_confined
from .channel import FrameError, FrameReader, encode
from .node_runtime import NODE_DIR, RUNNER, check_runtime

_STDERR_KEEP = 4000


def worker_argv(node: str, heap_mb: int) -> list[str]:
    # Node's permission model: read only its own folder; no writes, child processes or workers.
    # No code from strings anywhere in the process, so even a leaked host-realm Function is inert;
    # vm modules only so that import() is refused by our own callback, in the program's realm.
    return [
        node,
        "--experimental-permission",
        f"--allow-fs-read={NODE_DIR}{os.sep}",
        "--disallow-code-generation-from-strings",
        "--experimental-vm-modules",
        "--no-warnings",
        f"--max-old-space-size={heap_mb}",
        str(RUNNER),
    ]


class Worker:
    """One worker: frames arrive on `events` as ("frame", dict) | ("bad", FrameError) | ("eof", None)."""

    def __init__(self, confinement: Confinement | None, heap_mb: int, cwd: str, tmpdir: str) -> None:
        node = check_runtime()
        self.events: queue.Queue = queue.Queue()
        self._stderr = bytearray()
        self._write_lock = threading.Lock()
        # an empty environment: NODE_OPTIONS and friends must not reach the worker
        env = {"TMPDIR": tmpdir, "LANG": "C.UTF-8"}

        def spawn(argv: list[str], pass_fds: tuple[int, ...]) -> subprocess.Popen:
            return subprocess.Popen(
                argv,
                cwd=cwd,
                env=env,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,
                bufsize=0,
                close_fds=True,
                pass_fds=pass_fds,
            )

        def discard(proc: subprocess.Popen) -> None:
            for pipe in (proc.stdin, proc.stdout, proc.stderr):
                if pipe is not None:  # (pipes: they are)
                    pipe.close()
            proc.wait()

        self.proc, self.launch = spawn_confined(confinement, worker_argv(node, heap_mb), spawn, discard)
        self.pid = self.proc.pid
        self._readers = (
            threading.Thread(target=self._read_frames, name=f"dshc-code-out-{self.pid}", daemon=True),
            threading.Thread(target=self._read_stderr, name=f"dshc-code-err-{self.pid}", daemon=True),
        )
        for reader in self._readers:
            reader.start()

    def _read_frames(self) -> None:
        # each reader closes its own pipe once it sees EOF: closing it from kill() could hand a
        # reused fd number to a read still in progress
        reader = FrameReader()
        try:
            for chunk in iter(lambda: os.read(self.proc.stdout.fileno(), 65536), b""):
                for frame in reader.feed(chunk):
                    self.events.put(("frame", frame))
            self.events.put(("eof", None))
        except FrameError as exc:
            self.events.put(("bad", exc))
        except OSError:
            self.events.put(("eof", None))
        finally:
            self.proc.stdout.close()

    def _read_stderr(self) -> None:
        try:
            for chunk in iter(lambda: os.read(self.proc.stderr.fileno(), 65536), b""):
                self._stderr += chunk
                del self._stderr[:-_STDERR_KEEP]
        except OSError:
            pass
        finally:
            self.proc.stderr.close()

    def send(self, frame: dict) -> bool:
        """False when the worker is gone; it is never an error for the caller to find that out."""
        data = encode(frame)
        with self._write_lock:
            try:
                self.proc.stdin.write(data)
                self.proc.stdin.flush()
                return True
            except (OSError, ValueError):
                return False

    def exit_text(self) -> str:
        try:
            code = self.proc.wait(timeout=1.0)
        except subprocess.TimeoutExpired:
            code = None
        self._readers[1].join(1.0)
        tail = bytes(self._stderr).decode("utf-8", "replace").strip().splitlines()[-3:]
        status = (
            "did not exit"
            if code is None
            else (f"was killed by signal {-code}" if code < 0 else f"exited with status {code}")
        )
        return f"the worker {status} before finishing" + (": " + " | ".join(tail) if tail else "")

    def kill(self) -> None:
        """The whole tree dies (the sandbox supervisor and node); safe to call more than once."""
        kill_tree(self.pid if self.proc.poll() is None else None, session=self.pid)
        with self._write_lock:
            try:
                self.proc.stdin.close()
            except OSError:
                pass
        try:
            self.proc.wait(timeout=2.0)
        except subprocess.TimeoutExpired:
            pass
