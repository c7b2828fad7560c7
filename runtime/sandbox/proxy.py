"""The egress proxy of a sandboxed command whose policy lists hosts: HTTP CONNECT and plain HTTP (absolute-form)
requests, each target checked against the allow/deny lists before any name is looked up, its addresses checked
against the deny list after, a tunnel's TLS server name and a request's Host held to the target. In: a listening
socket (the one inside the command's network namespace, `egress`) and HostRules; out: connections made or
refused, each refusal reported as one `network/denied` line. Stdlib only: it also runs as a script's sibling."""

from __future__ import annotations

import socket
import threading

TYPE_CHECKING = False
if __package__ or TYPE_CHECKING:  # a type checker reads the package's module
    from ...common.hosts import HostError, HostRules, canonical_host, split_host_port, url_host
else:  # run beside `egress.py`, which puts the `common` folder on the path
    from hosts import HostError, HostRules, canonical_host, split_host_port, url_host

HEAD_LIMIT = 64 * 1024
IDLE_S = 300.0  # a tunnel with no byte either way for this long is closed
HEAD_TIMEOUT_S = 30.0
_DROPPED = (b"proxy-connection", b"proxy-authorization", b"connection", b"keep-alive")


class Refused(Exception):
    """The request may not go out: `why` says which list refused it."""

    def __init__(self, host: str, port, why: str) -> None:
        super().__init__(why)
        self.host, self.port, self.why = host, port, why


def serve(
    listener: socket.socket, rules: HostRules, report, connect=socket.create_connection, resolve=socket.getaddrinfo
) -> None:
    """Accept until the listener closes; one thread per connection. `report(host, port, why)` is told of each
    refusal; `connect((address, port))` opens the way out and `resolve(host, port, type=…)` (getaddrinfo's
    shape) finds a name's addresses: a test's stand-ins never leave the machine."""
    while True:
        try:
            client, _ = listener.accept()
        except OSError:
            return
        threading.Thread(target=_handle, args=(client, rules, report, (connect, resolve)), daemon=True).start()


def _handle(client: socket.socket, rules: HostRules, report, way_out) -> None:
    upstream = None
    try:
        client.settimeout(HEAD_TIMEOUT_S)
        head, rest = _read_head(client)
        try:
            upstream, reply, first = _open(head, rest, rules, way_out)
        except Refused as refused:
            report(refused.host, refused.port, refused.why)
            _answer(client, 403, refused.why)
            return
        if reply:
            client.sendall(reply)
        if first is None:  # a tunnel: its first bytes must name the same server, if they name one
            first = _first_bytes(client, upstream, rest)
            name = server_name(first)
            if name is not None and _same_host(name, head) is False:
                why = f"the TLS server name `{name}` is not the tunnel's host"
                report(name, None, why)
                return
        if first:
            upstream.sendall(first)
        _pipe(client, upstream)
    except (OSError, ValueError):
        pass
    finally:
        for sock in (client, upstream):
            if sock is not None:
                sock.close()


def _open(head: bytes, rest: bytes, rules: HostRules, way_out):
    """(the connection out, the reply owed to the client, the bytes to send it first or None for a tunnel)."""
    lines = head.split(b"\r\n")
    try:
        method, target, version = lines[0].decode("ascii").split(" ")
    except (UnicodeDecodeError, ValueError):
        raise Refused("", None, "not an HTTP proxy request") from None
    if method == "CONNECT":
        try:
            host, port = split_host_port(target)
        except HostError as exc:
            raise Refused(target, None, f"unparsable host: {exc}") from None
        if port is None:
            raise Refused(host, None, "CONNECT needs a port")
        upstream = _connect(host, port, rules, way_out)
        return upstream, b"HTTP/1.1 200 Connection established\r\n\r\n", None
    if not target.lower().startswith("http://"):
        raise Refused(target, None, "only http:// requests and CONNECT tunnels go through the proxy")
    try:
        host, port = url_host(target)
    except HostError as exc:
        raise Refused(target, None, f"unparsable host: {exc}") from None
    headers = [line for line in lines[1:] if line]
    named = [
        line.split(b":", 1)[1].strip().decode("latin-1")
        for line in headers
        if line.split(b":", 1)[0].strip().lower() == b"host"
    ]
    for value in named:  # a Host naming another server than the URL would reach it past the check
        try:
            if split_host_port(value)[0] != host:
                raise Refused(value, port, f"the Host header `{value}` is not the URL's host `{host}`")
        except HostError as exc:
            raise Refused(value, port, f"unparsable Host header: {exc}") from None
    upstream = _connect(host, port, rules, way_out)
    path = "/" + target.split("://", 1)[1].partition("/")[2]
    kept = [line for line in headers if line.split(b":", 1)[0].strip().lower() not in _DROPPED]
    # one request per connection: a second one on it could name another host
    request = b"\r\n".join([f"{method} {path} {version}".encode("ascii"), *kept, b"Connection: close", b"", b""])
    return upstream, b"", request + rest


def _connect(host: str, port: int | None, rules: HostRules, way_out) -> socket.socket:
    connect, resolve = way_out
    allowed, why = rules.decide(host, port)
    if not allowed:
        raise Refused(host, port, why)
    try:
        found = resolve(host, port, type=socket.SOCK_STREAM)
    except OSError as exc:
        raise Refused(host, port, f"`{host}` does not resolve: {exc.strerror or exc}") from None
    addresses = tuple(dict.fromkeys(info[4][0] for info in found))
    allowed, why = rules.decide(host, port, addresses)  # every address: a name may resolve to a denied one
    if not allowed:
        raise Refused(host, port, why)
    last = None
    for address in addresses:
        try:
            return connect((address, port))
        except OSError as exc:
            last = exc
    raise Refused(host, port, f"cannot connect: {last.strerror if last else 'no address'}")


def _read_head(client: socket.socket) -> tuple[bytes, bytes]:
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = client.recv(4096)
        if not chunk or len(data) > HEAD_LIMIT:
            raise ValueError("no request head")
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    return head, rest


def _first_bytes(client: socket.socket, upstream: socket.socket, data: bytes) -> bytes:
    """What a tunnel's client sends first (a TLS ClientHello is one record), up to one record's worth, beginning
    with `data` (sent along with the CONNECT); nothing when the server speaks first (ssh: that is no TLS)."""
    import select

    if not data:
        ready, _, _ = select.select([client, upstream], [], [], HEAD_TIMEOUT_S)
        if client not in ready:
            return b""
        data = client.recv(16384 + 5)
        if not data:
            raise ValueError("closed")
    if data[:1] == b"\x16" and len(data) >= 5:
        wanted = 5 + int.from_bytes(data[3:5], "big")
        while len(data) < wanted:
            chunk = client.recv(wanted - len(data))
            if not chunk:
                break
            data += chunk
    return data


def _same_host(name: str, head: bytes) -> bool | None:
    target = head.split(b"\r\n", 1)[0].split(b" ")[1].decode("ascii")
    try:
        return canonical_host(name) == split_host_port(target)[0]
    except HostError:
        return False


def server_name(record: bytes) -> str | None:
    """The SNI host name of a TLS ClientHello record, or None when it is not one or names none."""
    if record[:1] != b"\x16":
        return None
    try:
        if record[5] != 0x01:  # a handshake that is no ClientHello: nothing the proxy can agree with
            return "?"
        at = 5 + 4 + 2 + 32  # record header, handshake header, version, random
        at += 1 + record[at]  # session id
        at += 2 + int.from_bytes(record[at : at + 2], "big")  # cipher suites
        at += 1 + record[at]  # compression methods
        end = at + 2 + int.from_bytes(record[at : at + 2], "big")
        at += 2
        while at + 4 <= end:
            kind, size = int.from_bytes(record[at : at + 2], "big"), int.from_bytes(record[at + 2 : at + 4], "big")
            if kind == 0:  # server_name: list length, then (type 0, length, name)
                length = int.from_bytes(record[at + 7 : at + 9], "big")
                return record[at + 9 : at + 9 + length].decode("ascii")
            at += 4 + size
    except (IndexError, UnicodeDecodeError):
        return "?"  # a ClientHello that does not parse names no host the proxy can agree with
    return None


def _pipe(one: socket.socket, other: socket.socket) -> None:
    """Copy bytes both ways until either side closes or both fall idle."""
    import selectors

    for sock in (one, other):
        sock.settimeout(None)
    pair = {one: other, other: one}
    with selectors.DefaultSelector() as selector:
        for sock in pair:
            selector.register(sock, selectors.EVENT_READ, sock)  # as `data`: `fileobj` is typed as any file-like
        while True:
            ready = selector.select(IDLE_S)
            if not ready:
                return
            for key, _ in ready:
                data = key.data.recv(65536)
                if not data:
                    return
                pair[key.data].sendall(data)


def _answer(client: socket.socket, code: int, why: str) -> None:
    body = f"dshc: network: {why}\n".encode("utf-8", "replace")
    try:
        client.sendall(
            f"HTTP/1.1 {code} Forbidden\r\nContent-Type: text/plain; charset=utf-8\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode()
            + body
        )
    except OSError:
        pass
