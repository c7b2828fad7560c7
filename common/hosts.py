"""Host names and addresses in one spelling each, host patterns, and the allow/deny decision on them.
In: a host, `host:port`, URL or pattern as written; out: a canonical host (or HostError), a Pattern, a verdict.
Stdlib only (the sandbox's proxy imports it); every spelling a parser could read two ways is refused."""

from __future__ import annotations

import ipaddress
import re

TYPE_CHECKING = False  # no `import typing` at run time: its names are for annotations only
if TYPE_CHECKING:
    from typing import Any

DEFAULT_PORTS = {
    "http": 80,
    "https": 443,
    "ws": 80,
    "wss": 443,
    "ftp": 21,
    "ssh": 22,
    "git": 9418,
    "sftp": 22,
    "scp": 22,
    "rsync": 873,
    "socks5": 1080,
    "socks5h": 1080,
}
_LABEL = re.compile(r"[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?\Z")
_NUMBER = re.compile(r"(0x[0-9a-f]*|0[0-7]*|[1-9][0-9]*)\Z")  # one part of an IPv4 address, as inet_aton reads it
_PORT = re.compile(r"[0-9]{1,5}\Z")


class HostError(ValueError):
    """A host, URL or pattern that has no single reading: it is refused, never guessed."""


def canonical_host(text: str) -> str:
    """One spelling per host: an IP address in its standard form (IPv4 dotted decimal, an IPv4-mapped IPv6
    address as its IPv4), a name lower-case, in IDNA ASCII form, without its trailing dot."""
    if not isinstance(text, str) or not text:
        raise HostError("empty host")
    if any(ch.isspace() or ord(ch) < 0x20 or ord(ch) == 0x7F for ch in text):
        raise HostError(f"`{text}` holds a space or a control character")
    if text.startswith("["):
        if not text.endswith("]"):
            raise HostError(f"`{text}`: unclosed `[`")
        return _ipv6(text[1:-1])
    if ":" in text:
        return _ipv6(text)  # an unbracketed IPv6 address (a bare `host:port` is split before this)
    name = text
    if not name.isascii():
        try:  # IDNA 2003 with its mapping: full-width letters and digits, `。` as a dot, `①` as `1`
            name = name.encode("idna").decode("ascii")
        except UnicodeError as exc:
            raise HostError(f"`{text}` is not a valid international name: {exc}") from None
    name = name.lower()
    if name.endswith("."):
        name = name[:-1]  # `example.com.` is `example.com` (fully qualified); `..` is left to fail below
    labels = name.split(".")
    if _NUMBER.match(labels[-1]):  # the last part numeric: an IPv4 address in any spelling, or nothing
        return _ipv4(labels, text)
    if len(name) > 253 or not all(_LABEL.match(label) for label in labels):
        raise HostError(f"`{text}` is not a host name")
    return name


def _ipv4(parts: list[str], text: str) -> str:
    """`127.1`, `2130706433`, `0x7f.0.0.1`, `0177.0.0.1` all read as inet_aton and browsers read them."""
    if not 1 <= len(parts) <= 4 or not all(_NUMBER.match(part) for part in parts):
        raise HostError(f"`{text}` is neither an IPv4 address nor a host name")
    if "0x" in parts:
        raise HostError(f"`{text}`: `0x` without digits")
    numbers = [
        int(part, 16) if part.startswith("0x") else int(part, 8) if part.startswith("0") else int(part)
        for part in parts
    ]
    *head, last = numbers
    if any(n > 255 for n in head) or last >= 256 ** (5 - len(numbers)):
        raise HostError(f"`{text}`: a part of the IPv4 address is out of range")
    value = last
    for index, n in enumerate(head):
        value += n << (8 * (3 - index))
    return str(ipaddress.IPv4Address(value))


def _ipv6(text: str) -> str:
    if "%" in text:
        raise HostError(f"`{text}`: an IPv6 zone is not a host")
    try:
        address = ipaddress.IPv6Address(text)
    except ValueError:
        raise HostError(f"`{text}` is not an IPv6 address") from None
    embedded = address.ipv4_mapped
    if embedded is None and int(address) >> 32 == 0 and int(address) > 1:
        embedded = ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)  # IPv4-compatible `::127.0.0.1`
    return str(embedded) if embedded is not None else str(address)


def split_host_port(text: str) -> tuple[str, int | None]:
    """`host`, `host:port`, `[v6]`, `[v6]:port`, a bare IPv6 address → (canonical host, port or None)."""
    if text.startswith("["):
        close = text.find("]")
        if close < 0:
            raise HostError(f"`{text}`: unclosed `[`")
        rest = text[close + 1 :]
        if rest and not rest.startswith(":"):
            raise HostError(f"`{text}`: text after `]`")
        return canonical_host(text[: close + 1]), _port(rest[1:], text) if rest else None
    if text.count(":") == 1:
        host, _, port = text.partition(":")
        return canonical_host(host), _port(port, text)
    return canonical_host(text), None


def _port(text: str, whole: str) -> int:
    if not _PORT.match(text) or int(text) > 65535:
        raise HostError(f"`{whole}`: `{text}` is not a port")
    return int(text)


def url_host(url: str) -> tuple[str, int | None]:
    """The host and port a URL reaches (the scheme's default port when none is written). A URL two parsers
    could read as different hosts (`a@b@c`, `good\\@evil`, a space) is refused (Orange Tsai, "A New Era of
    SSRF", Black Hat USA 2017)."""
    if not isinstance(url, str) or any(ch.isspace() or ord(ch) < 0x20 or ord(ch) == 0x7F for ch in url):
        raise HostError("a URL with a space or a control character has no single host")
    scheme, sep, rest = url.partition("://")
    if not sep:
        if url.startswith("//"):
            scheme, rest = "", url[2:]
        elif re.match(r"[A-Za-z][A-Za-z0-9+.-]*:[^0-9]", url):
            raise HostError(f"`{url}` names no host")  # `mailto:…`, `file:…`
        else:
            scheme, rest = "", url  # `example.com/path`, as curl reads it
    scheme = scheme.lower()
    if scheme == "file":
        raise HostError(f"`{url}` is a local file")
    authority = re.split(r"[/?#]", rest, maxsplit=1)[0]
    if "\\" in authority:
        raise HostError(f"`{url}`: a backslash in the host part is read as a `/` by some parsers, not by others")
    if authority.count("@") > 1:
        raise HostError(f"`{url}`: more than one `@`; parsers disagree on which part is the host")
    hostport = authority.rpartition("@")[2]
    if "%" in hostport:  # browsers decode `%2e`; a host that needs decoding is not taken on trust
        raise HostError(f"`{url}`: a percent-encoded host")
    if not hostport:
        raise HostError(f"`{url}` names no host")
    host, port = split_host_port(hostport)
    return host, port if port is not None else DEFAULT_PORTS.get(scheme)


class Pattern:
    """A host pattern: a name (`registry.npmjs.org`), labels under a name (`*.github.com`: `api.github.com`,
    `a.b.github.com`, never `github.com` or `evilgithub.com`), an address or a network (`10.0.0.0/8`), `*`,
    each with an optional `:PORT`."""

    __slots__ = ("text", "kind", "value", "port")
    # what `kind` says: None (any), a canonical name (host, under), an ip_network (network); read per kind
    value: Any

    def __init__(self, text: str) -> None:
        self.text = text
        host, self.port = self._split(text)
        if host == "*":
            self.kind, self.value = "any", None
        elif host.startswith("*."):
            self.kind, self.value = "under", canonical_host(host[2:])
            if _is_address(self.value):
                raise HostError(f"`{text}`: `*.` goes before a name, not an address")
        elif "/" in host:
            try:
                self.kind, self.value = "network", ipaddress.ip_network(_cidr(host), strict=False)
            except ValueError:
                raise HostError(f"`{text}` is not a network (`10.0.0.0/8`, `fd00::/8`)") from None
        else:
            self.kind, self.value = "host", canonical_host(host)

    @staticmethod
    def _split(text: str) -> tuple[str, int | None]:
        if not isinstance(text, str) or not text or text != text.strip():
            raise HostError(f"`{text}` is not a host pattern")
        if "*" in text[1:] or (text.startswith("*") and text != "*" and text[1] not in ".:"):
            raise HostError(f"`{text}`: `*` stands only for whole labels, leftmost (`*.example.com`)")
        if "/" in text or text.startswith("["):
            if text.startswith("[") and "]" in text:
                inner, _, rest = text[1:].partition("]")
                if rest and not rest.startswith(":"):
                    raise HostError(f"`{text}`: text after `]`")
                return (inner if "/" in inner else "[" + inner + "]"), (_port(rest[1:], text) if rest else None)
            return text, None
        if text.count(":") == 1:
            host, _, port = text.partition(":")
            return host, _port(port, text)
        return text, None

    def matches(self, host: str, port: int | None = None) -> bool:
        """`host` canonical (`canonical_host`); a pattern with a port matches only that port."""
        if self.port is not None and port != self.port:
            return False
        if self.kind == "any":
            return True
        if self.kind == "host":
            return host == self.value
        if self.kind == "under":
            return host.endswith("." + self.value) and not _is_address(host)
        if not _is_address(host):
            return False
        return ipaddress.ip_address(host) in self.value

    def __repr__(self) -> str:
        return f"Pattern({self.text!r})"


def _cidr(text: str) -> str:
    """A network's address in any IPv4 spelling, made standard first (`0x0a.0/8` is `10.0.0.0/8`)."""
    address, _, bits = text.partition("/")
    return canonical_host(address.strip("[]")) + "/" + bits


def _is_address(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def pattern_problem(text: str) -> str | None:
    """Why `text` is not a host pattern, or None."""
    try:
        Pattern(text)
    except HostError as exc:
        return str(exc)
    return None


class HostRules:
    """An egress allow/deny decision. `allow`: one tuple of pattern texts per policy level that lists hosts
    (a host must match one pattern of every level: a child only narrows); `deny`: pattern texts, every level's
    (any match refuses: deny wins). No allow level: every host not denied."""

    def __init__(self, allow=(), deny=()) -> None:
        self.allow = tuple(tuple(Pattern(text) for text in level) for level in allow)
        self.deny = tuple(Pattern(text) for text in deny)

    def decide(self, host: str, port: int | None = None, addresses=()) -> tuple[bool, str]:
        """(allowed, why) for `host` as written; `addresses`: what the name resolved to, each checked against
        the deny list too (a name that resolves to a denied address is refused)."""
        try:
            name = canonical_host(host)
        except HostError as exc:
            return False, f"unparsable host: {exc}"
        for found in (name, *addresses):
            try:
                found = canonical_host(found)
            except HostError as exc:
                return False, f"unparsable address: {exc}"
            hit = next((p for p in self.deny if p.matches(found, port)), None)
            if hit is not None:
                return False, f'`{found}` is denied by `network deny "{hit.text}"`'
        for level in self.allow:
            if not any(p.matches(name, port) for p in level):
                listed = ", ".join(f'"{p.text}"' for p in level)
                return False, f"`{name}{'' if port is None else f':{port}'}` is not in `network allow {listed}`"
        return True, "allowed"
