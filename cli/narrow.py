"""One tool's observed calls (argument objects) and JSON schema → `when` conditions that pin what they did.

Each argument is pinned to the values seen (`==` one, `in` several; lists as lists) or, with `shape`, to the
class they share (`all in` for arrays, a number range, a date shape, a shared prefix or domain), a URL to its hosts
(`args.url.host in [...]`); free text (bodies, messages, descriptions, queries) stays open. Calls are grouped by
the pinned arguments they give, one condition per group; a pinned argument no call gave is `not has`.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from dataclasses import dataclass

# Free text, told from the schema first and the values second (`free_text`):
# - a non-string type, an `enum` or a `format` (email, uri, date, …) is never free text: it is pinned;
# - an argument named like an identifier (id, account, recipient, channel, url, email, date, …) is pinned;
# - one named like prose (body, content, message, subject, description, query, …) is free text, and so is one
#   whose schema description speaks of prose with no identifier word;
# - otherwise a value with a line break, four or more words, or over 80 characters with a space is free text.
FREE_WORDS = frozenset(
    {
        "body",
        "content",
        "contents",
        "text",
        "message",
        "messages",
        "subject",
        "description",
        "comment",
        "comments",
        "note",
        "notes",
        "summary",
        "title",
        "query",
        "prompt",
        "reason",
        "justification",
        "caption",
        "instructions",
        "answer",
        "reply",
        "details",
        "markdown",
        "html",
    }
)
ID_WORDS = frozenset(
    {
        "id",
        "ids",
        "uuid",
        "key",
        "iban",
        "account",
        "accounts",
        "number",
        "email",
        "emails",
        "address",
        "addresses",
        "url",
        "urls",
        "uri",
        "link",
        "host",
        "domain",
        "channel",
        "channels",
        "user",
        "users",
        "username",
        "recipient",
        "recipients",
        "to",
        "cc",
        "bcc",
        "name",
        "names",
        "date",
        "time",
        "type",
        "kind",
        "mode",
        "status",
        "currency",
        "code",
        "phone",
        "path",
    }
)
# in a description, only words that name an identifier in prose too ("Text to send" is not about a `to` field)
_DESCRIBED_IDS = ID_WORDS - {"to", "cc", "bcc", "name", "names", "time", "type", "kind", "mode", "status", "code"}
_NUMBER = re.compile(r"-?\d+(\.\d+)?")  # the DSL's NUMBER: no exponent
_URL = re.compile(r"https?://", re.IGNORECASE)


@dataclass(frozen=True)
class Narrowed:
    condition: str | None  # None: nothing to pin (a tool without arguments)
    calls: tuple[int, ...]  # the indexes of the calls it covers
    notes: tuple[str, ...] = ()


def words(text: str) -> set[str]:
    """`recipientIban`, `user_email`, `Channel name.` → their lowercase words."""
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", text)
    return {w for w in re.split(r"[^A-Za-z0-9]+", spaced.lower()) if w}


def free_text(name: str, schema: dict, values: list) -> bool:
    if schema.get("type") not in (None, "string") or "enum" in schema or "format" in schema or "const" in schema:
        return False
    if any(not isinstance(v, str) for v in values):
        return False
    named = words(name)
    if named & ID_WORDS:
        return False
    if named & FREE_WORDS:
        return True
    described = words(schema.get("description", "")) if isinstance(schema.get("description"), str) else set()
    if described & FREE_WORDS and not described & _DESCRIBED_IDS:
        return True
    return any("\n" in v or len(v.split()) >= 4 or (len(v) > 80 and " " in v) for v in values)


def literal(value) -> str | None:
    """`value` as the DSL writes it, or None where it cannot (an object, null, a number in exponent form)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, (int, float)):
        text = repr(value)
        return text if _NUMBER.fullmatch(text) else None
    if isinstance(value, (list, tuple)):
        items = [literal(v) for v in value]
        texts = [text for text in items if text is not None]
        return "[" + ", ".join(texts) + "]" if len(texts) == len(items) else None
    return None


def _hosts(values: list) -> list[str] | None:
    """The hosts of `values` when every one is an http(s) URL with a host (`common.hosts` reads it), else None."""
    from ..common.hosts import HostError, url_host

    hosts = []
    for value in values:
        if not isinstance(value, str) or not _URL.match(value):
            return None
        try:
            host, _port = url_host(value)
        except HostError:
            return None
        hosts.append(host)
    return hosts


def _pin(name: str, values: list, how: str = "exact") -> str:
    hosts = _hosts(values)
    if hosts:
        fact, texts = f"args.{name}.host", [json.dumps(h) for h in hosts]
    else:  # `narrow` pins only values every one of which `literal` can write
        fact, texts = f"args.{name}", [text for v in values if (text := literal(v)) is not None]
    distinct = sorted(set(texts))
    if how == "shape" and not hosts:
        shaped = _shape(f"args.{name}", values, len(distinct) > 1)
        if shaped is not None:
            return shaped
    return f"{fact} == {distinct[0]}" if len(distinct) == 1 else f"{fact} in [{', '.join(distinct)}]"


_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_SEPARATORS = "-_/.:@ "
MIN_PREFIX = 3  # a shared beginning shorter than this says nothing about what the values are


def _shape(fact: str, values: list, several: bool) -> str | None:
    """The class the values share, as a condition (`--generalize shape`), or None to list them: arrays by their
    items and most items seen, dates by their shape; and where `several` distinct values were seen, numbers by
    their range, identifiers by a shared beginning (up to its last separator) or e-mail addresses by their
    shared domain (one value is its own class)."""
    if all(isinstance(v, (list, tuple)) for v in values):
        written = [literal(i) for v in values for i in v]
        if any(isinstance(i, (list, tuple, dict)) for v in values for i in v):
            return None
        items = sorted({text for text in written if text is not None})
        if len(items) < len(set(written)):  # an item the language cannot write
            return None
        longest = max(len(v) for v in values)
        return f"{fact} all in [{', '.join(items)}] and length({fact}) <= {longest}"
    if not several:
        return (
            f'{fact} matches "????-??-??"' if all(isinstance(v, str) and _DATE.fullmatch(v) for v in values) else None
        )
    if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
        low, high = literal(min(values)), literal(max(values))
        return None if low is None or high is None else f"{fact} >= {low} and {fact} <= {high}"
    if not all(isinstance(v, str) for v in values):
        return None
    if all(_DATE.fullmatch(v) for v in values):
        return f'{fact} matches "????-??-??"'
    domains = {v.rpartition("@")[2] for v in values}
    if all(v.count("@") == 1 and v.index("@") > 0 for v in values) and len(domains) == 1:
        domain = domains.pop()
        if _plain(domain) and "." in domain:
            return f"{fact} matches {json.dumps('*@' + domain, ensure_ascii=False)}"
    prefix = _shared_beginning(values)
    if len(prefix) >= MIN_PREFIX and _plain(prefix):
        return f"{fact} matches {json.dumps(prefix + '*', ensure_ascii=False)}"
    return None


def _shared_beginning(values: list[str]) -> str:
    """The values' common prefix, cut back to its last separator when it has one (`INV-0012`, `INV-0019` →
    `INV-`): a beginning that ends inside a number or a word is a coincidence of the values seen."""
    import os.path

    prefix = os.path.commonprefix(values)
    cut = max(prefix.rfind(c) for c in _SEPARATORS)
    return prefix[: cut + 1] if cut >= 0 else prefix


def _plain(text: str) -> bool:
    """Text a glob holds literally (policy globs have no escape for `*` and `?`)."""
    return "*" not in text and "?" not in text and '"' not in text and "\\" not in text


def narrow(arguments: list[dict], schema: dict, how: str = "exact") -> list[Narrowed]:
    """The conditions covering `arguments` (each a call's argument object), pinning every argument but free text:
    to the values seen (`exact`), or to the class they share (`shape`: `_shape`)."""
    properties = schema.get("properties")
    if not isinstance(properties, dict):
        properties = {}
    seen: dict[str, list] = defaultdict(list)
    for args in arguments:
        for key, value in args.items():
            seen[key].append(value)
    notes = []
    pinned = []
    for key in sorted(seen):
        prop = properties.get(key)
        if not isinstance(prop, dict):
            prop = {}
        if free_text(key, prop, seen[key]):
            continue
        if not _expressible(key):
            notes.append(f"`{key}` left open: `args.NAME` cannot spell its name")
            continue
        if _hosts(seen[key]) is None and any(literal(v) is None for v in seen[key]):
            notes.append(f"args.{key} left open: a value the language cannot write (an object, null)")
            continue
        pinned.append(key)
    # a pinned-kind argument the schema offers and no call gave: its absence is what the calls did
    absent = [
        key
        for key in sorted(properties)
        if key not in seen
        and _expressible(key)
        and isinstance(properties[key], dict)
        and not free_text(key, properties[key], [])
    ]
    groups: dict[tuple, list[int]] = defaultdict(list)
    for index, args in enumerate(arguments):
        groups[tuple(key in args for key in pinned)].append(index)
    out = []
    for present, indexes in sorted(groups.items(), reverse=True):
        parts = [
            _pin(key, [arguments[i][key] for i in indexes], how) if given else f"not has args.{key}"
            for key, given in zip(pinned, present)
        ]
        parts += [f"not has args.{key}" for key in absent]
        out.append(Narrowed(" and ".join(parts) or None, tuple(indexes), tuple(notes)))
    return out


def _expressible(key: str) -> bool:
    """An argument name `args.NAME` can spell (the DSL's NAME)."""
    return re.fullmatch(r"[A-Za-z_][A-Za-z0-9_\-]*", key) is not None
