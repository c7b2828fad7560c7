"""The HTTP listeners' guard (`serve --http`, `ui`): an address and a token source in, a checked bind out,
and an ASGI wrapper that refuses a request whose Host, Origin or bearer token is not this listener's.

Host and Origin are checked on every route against the names of the address the connection arrived on,
so a page on another site (or a DNS name rebound to 127.0.0.1) can neither read nor drive the server.
"""

from __future__ import annotations

import hmac
import ipaddress
import json
import os
import socket
from dataclasses import dataclass
from pathlib import Path

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from ..compiler.diagnostics import DshError, invalid_request

LOOPBACK_NAMES = ("localhost", "127.0.0.1", "[::1]")
TOKEN_ENV = "DSHC_TOKEN"
MIN_TOKEN_CHARS = 16
OPEN_PATHS = frozenset({"/healthz", "/readyz"})  # probes answer without the token; Host and Origin still apply
HEADER_TIMEOUT_S = 10.0  # from connection (or the previous answer) to the end of a request's headers
ADDRESS_HELP = "e.g. 127.0.0.1:8765, [::1]:8765 or localhost:8765"


@dataclass(frozen=True)
class Bind:
    host: str  # an IP literal, unbracketed
    port: int
    remote: bool  # not a loopback address: reachable from other machines

    @property
    def url_host(self) -> str:
        return f"[{self.host}]" if ":" in self.host else self.host


def _bad(message: str, help: str = ADDRESS_HELP) -> DshError:
    return DshError([invalid_request(message, help)])


def parse_address(text: str) -> Bind:
    """`HOST:PORT` → a Bind; HOST is an IP address (IPv6 in brackets) or `localhost`, written canonically."""
    if text.startswith("["):
        host, close, rest = text[1:].partition("]")
        if not close or not rest.startswith(":"):
            raise _bad(f"--http `{text}` is not HOST:PORT")
        port = rest[1:]
    else:
        host, _, port = text.rpartition(":")
        if ":" in host:
            raise _bad(f"--http `{text}` is not HOST:PORT", "an IPv6 address goes in brackets: [::1]:8765")
    if not host or not port.isascii() or not port.isdigit() or not 0 < int(port) < 65536:
        raise _bad(f"--http `{text}` is not HOST:PORT (PORT 1-65535)")
    if host.lower() == "localhost":
        return Bind("127.0.0.1", int(port), False)
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        raise _bad(f"--http `{text}`: `{host}` is not an IP address", _spelled_out(host)) from None
    if text.startswith("[") != (ip.version == 6) or (ip.version == 4 and str(ip) != host):
        raise _bad(f"--http `{text}`: write the address as `{_url_host(ip)}`")
    return Bind(str(ip), int(port), not ip.is_loopback)


def _spelled_out(host: str) -> str:
    # 127.1, 0x7f.1, 2130706433 name 127.0.0.1 to the C resolver: say so rather than guess what was meant
    try:
        return f"write it in full: `{socket.inet_ntoa(socket.inet_aton(host))}`"
    except OSError:
        return "give an IP address or `localhost`; " + ADDRESS_HELP


def _url_host(ip) -> str:
    return f"[{ip}]" if ip.version == 6 else str(ip)


def listen(bind: Bind, help: str = "choose another port", reuse_port: bool = False) -> socket.socket:
    """A listening socket on `bind`, or a diagnostic (a busy port, an address this machine does not have).
    `reuse_port`: other processes may listen on it too (SO_REUSEPORT), the kernel handing each new
    connection to one of them: the decision API keeps no state between requests."""
    # the protocol named: asyncio sets TCP_NODELAY only on sockets that say they are TCP (else Nagle's
    # algorithm and delayed ACKs add ~40 ms to every answer)
    sock = socket.socket(
        socket.AF_INET6 if ":" in bind.host else socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP
    )
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if reuse_port:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    try:
        sock.bind((bind.host, bind.port))
        sock.listen(2048 if reuse_port else 128)
    except OSError as exc:
        sock.close()
        raise _bad(f"cannot listen on {bind.url_host}:{bind.port}: {exc.strerror or exc}", help) from None
    return sock


def listener_token(bind: Bind, allow_remote: bool, token_file: str | None, environ=os.environ) -> str | None:
    """The bearer token every request must carry (None: none asked); a non-loopback bind needs
    --allow-remote and a token, from --token-file or $DSHC_TOKEN."""
    token: str | None
    if token_file:
        try:
            token = Path(token_file).read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError) as exc:
            raise _bad(
                f"cannot read the token file `{token_file}`: {getattr(exc, 'strerror', None) or exc}",
                "a file holding one line, the token",
            ) from None
    else:
        token = environ.get(TOKEN_ENV, "").strip() or None
    if bind.remote and not allow_remote:
        raise _bad(
            f"`{bind.url_host}` is not a loopback address: other machines could reach this server",
            f"bind 127.0.0.1, or pass --allow-remote with a token (--token-file FILE or ${TOKEN_ENV})",
        )
    if bind.remote and token is None:
        raise _bad(
            "--allow-remote needs a token: clients send it as `Authorization: Bearer TOKEN`",
            f"--token-file FILE or ${TOKEN_ENV}",
        )
    if token is not None and (len(token) < MIN_TOKEN_CHARS or not token.isascii() or not token.isprintable()):
        raise _bad(
            f"the token must be at least {MIN_TOKEN_CHARS} printable ASCII characters",
            'e.g. python -c "import secrets; print(secrets.token_urlsafe(32))"',
        )
    return token


# --- the request guard --------------------------------------------------------------------
def _split_authority(authority: str, default_port: int) -> tuple[str, int] | None:
    """`name:port`, `[v6]:port` or a bare name → (lower-case name, port); None when malformed."""
    authority = authority.lower()
    if authority.startswith("["):
        end = authority.find("]") + 1
        name, rest = (authority[:end], authority[end:]) if end else ("", "")
    else:
        name, colon, port = authority.partition(":")
        rest = colon + port
    if not name:
        return None
    if not rest:
        return name, default_port
    port = rest[1:]
    if rest[0] != ":" or not (port.isascii() and port.isdigit() and len(port) <= 5):
        return None
    return name, int(port)


class Guard:
    """ASGI middleware: Host (and Origin, when sent) must name this listener; with a token, every route but
    the probes needs `Authorization: Bearer TOKEN`. `hosts`: further Host values a proxy in front sends."""

    def __init__(self, app, token: str | None = None, hosts: tuple[str, ...] = ()):
        self.app, self.token, self.hosts = app, token, frozenset(h.lower() for h in hosts)

    async def __call__(self, scope, receive, send):
        if scope["type"] == "lifespan":
            return await self.app(scope, receive, send)
        refusal = self.refusal(scope)
        if refusal is None:
            return await self.app(scope, receive, send)
        if scope["type"] != "http":
            return await send({"type": "websocket.close", "code": 1008})
        status, message = refusal
        headers = [(b"content-type", b"application/json")]
        if status == 401:
            headers.append((b"www-authenticate", b'Bearer realm="dshc"'))
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": json.dumps({"error": message}).encode()})

    def refusal(self, scope) -> tuple[int, str] | None:
        headers: dict[bytes, list[bytes]] = {}
        for key, value in scope.get("headers", ()):
            headers.setdefault(key.lower(), []).append(value)
        hosts, origins = headers.get(b"host", []), headers.get(b"origin", [])
        default_port = 443 if scope.get("scheme") in ("https", "wss") else 80
        if len(hosts) != 1 or not self._ours(hosts[0], default_port, scope):
            return 400, "Invalid host header: this server answers only to its own address"
        if len(origins) > 1 or (origins and not self._our_origin(origins[0], scope)):
            return 403, "Origin refused: another site's page cannot call this server"
        if self.token is not None and scope.get("path") not in OPEN_PATHS:
            given = b"".join(headers.get(b"authorization", [])[:1])
            if not hmac.compare_digest(given, b"Bearer " + self.token.encode()):
                return 401, "a bearer token is required: Authorization: Bearer TOKEN"
        return None

    def _ours(self, raw: bytes, default_port: int, scope) -> bool:
        try:
            authority = raw.decode("ascii")
        except UnicodeDecodeError:
            return False
        if authority.lower() in self.hosts:
            return True
        split = _split_authority(authority, default_port)
        return split is not None and split in _names(scope.get("server"))

    def _our_origin(self, raw: bytes, scope) -> bool:
        try:
            scheme, sep, authority = raw.decode("ascii").partition("://")
        except UnicodeDecodeError:
            return False
        if not sep or scheme.lower() not in ("http", "https") or "/" in authority or "@" in authority:
            return False  # `null` (a sandboxed frame, a file: page) included
        return self._ours(authority.encode(), 443 if scheme.lower() == "https" else 80, scope)


def _names(server) -> frozenset[tuple[str, int]]:
    """The (name, port) pairs of the local address a connection arrived on: its own literal, and for a
    loopback address the loopback names. A wildcard bind thus answers to the address that was dialled."""
    if not server or server[1] is None:
        return frozenset()
    try:
        ip = ipaddress.ip_address(server[0])
    except ValueError:
        return frozenset()
    if ip.version == 6 and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    names = {_url_host(ip)} | (set(LOOPBACK_NAMES) if ip.is_loopback else set())
    return frozenset((name, int(server[1])) for name in names)


# --- the HTTP protocol --------------------------------------------------------------------
def timely_protocol(header_timeout_s: float = HEADER_TIMEOUT_S) -> type:
    """uvicorn's h11 protocol with a deadline for a request's headers: a client that trickles them
    (slowloris) is cut off; uvicorn's own keep-alive timer restarts on every byte received."""

    class TimelyH11Protocol(H11Protocol):
        _header_timer = None

        def connection_made(self, transport) -> None:
            super().connection_made(transport)
            self._arm()

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            if self.conn.their_state is not h11.IDLE:
                self._disarm()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
                self._arm()  # the next request on this connection gets the same time

        def connection_lost(self, exc) -> None:
            self._disarm()
            super().connection_lost(exc)

        def _arm(self) -> None:
            self._disarm()
            self._header_timer = self.loop.call_later(header_timeout_s, self._too_slow)

        def _disarm(self) -> None:
            if self._header_timer is not None:
                self._header_timer.cancel()
                self._header_timer = None

        def _too_slow(self) -> None:
            self._header_timer = None
            if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
                self.transport.close()

    return TimelyH11Protocol
