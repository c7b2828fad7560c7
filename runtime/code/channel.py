"""The framed channel to the run_code worker: a JSON object in, a frame out (4-byte big-endian
length + UTF-8 JSON), and bytes read back into whole JSON objects, or a FrameError."""

from __future__ import annotations

import json
import struct

# Larger than any value the result may carry, small enough that a runaway worker cannot make
# the parent buffer gigabytes before the limit is seen.
MAX_FRAME_BYTES = 8 * 1024 * 1024
_HEAD = struct.Struct(">I")


class FrameError(Exception):
    """The worker sent something that is not a frame of the protocol; `kind` is the error class."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind  # invalid-output | output-limit


def encode(value: dict) -> bytes:
    body = json.dumps(value, ensure_ascii=False, allow_nan=False).encode("utf-8")
    return _HEAD.pack(len(body)) + body


class FrameReader:
    def __init__(self, max_bytes: int = MAX_FRAME_BYTES) -> None:
        self.max_bytes = max_bytes
        self._buffer = bytearray()

    def feed(self, data: bytes) -> list[dict]:
        """Every whole frame `data` completes, in order; raises FrameError at the first bad one."""
        self._buffer += data
        frames = []
        while len(self._buffer) >= _HEAD.size:
            (size,) = _HEAD.unpack_from(self._buffer)
            if size > self.max_bytes:
                raise FrameError(
                    "output-limit", f"the worker sent a frame of {size} bytes; the limit is {self.max_bytes}"
                )
            if len(self._buffer) < _HEAD.size + size:
                break
            body = bytes(self._buffer[_HEAD.size : _HEAD.size + size])
            del self._buffer[: _HEAD.size + size]
            try:
                frame = json.loads(body.decode("utf-8"))
            except (UnicodeDecodeError, ValueError) as exc:
                raise FrameError("invalid-output", f"the worker sent a frame that is not JSON: {exc}") from None
            except RecursionError:  # a program's value nested thousands deep: refused, never a traceback
                raise FrameError("invalid-output", "the worker sent a value nested too deep to read") from None
            if not isinstance(frame, dict) or not isinstance(frame.get("type"), str):
                raise FrameError("invalid-output", "the worker sent a frame without a `type`")
            frames.append(frame)
        return frames
