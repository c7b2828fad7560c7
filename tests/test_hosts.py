"""Host spellings: one canonical form per host, patterns on whole labels, and the allow/deny decision.

The bypass spellings come from public reports: the PayloadsAllTheThings SSRF list
(https://github.com/swisskyrepo/PayloadsAllTheThings/tree/master/Server%20Side%20Request%20Forgery, "Bypass
localhost with IPv6 / decimal / octal / hex / short forms", "Bypass using rare address", "Bypass using a
unicode"), Orange Tsai's "A New Era of SSRF - Exploiting URL Parser in Trending Programming Languages"
(Black Hat USA 2017: `a@b@c`, `\\@`, `#@`, full-width and circled digits) and trailing-dot names that escape
suffix and equality checks (the `example.com.` form, cf. CVE-2021-23017's resolver, curl's CVE-2022-27779
cookie domain `example.com.`).
"""

import pytest

from dshc.common.hosts import HostError, HostRules, Pattern, canonical_host, split_host_port, url_host

# every spelling of 127.0.0.1 a report lists: each must be one host, so a deny of 127.0.0.1 catches it
LOOPBACK_SPELLINGS = [
    "127.0.0.1",
    "2130706433",
    "0177.0.0.1",
    "0x7f.0.0.1",
    "0x7f000001",
    "017700000001",
    "127.1",
    "127.0.1",
    "0x7f.1",
    "0177.1",
    "0x7F.0.0.1",
    "127.0.0.1.",
    "[::ffff:127.0.0.1]",
    "::ffff:127.0.0.1",
    "::ffff:7f00:1",
    "[0:0:0:0:0:ffff:127.0.0.1]",
    "[::127.0.0.1]",
    "①②⑦.⓪.⓪.①",
    "１２７.０.０.１",
    "127。0。0。1",
]
METADATA_SPELLINGS = [
    "169.254.169.254",
    "2852039166",
    "0xa9fea9fe",
    "0251.0376.0251.0376",
    "0xa9.0xfe.0xa9.0xfe",
    "169.254.43518",
    "[::ffff:a9fe:a9fe]",
    "[::ffff:169.254.169.254]",
    "169.254.169.254.",
]
NAME_SPELLINGS = ["example.com", "EXAMPLE.COM", "Example.Com.", "ｅｘａｍｐｌｅ.ｃｏｍ", "ⓔⓧⓐⓜⓟⓛⓔ.com", "example。com"]


@pytest.mark.parametrize("spelling", LOOPBACK_SPELLINGS)
def test_every_loopback_spelling_is_one_host(spelling):
    assert canonical_host(spelling) == "127.0.0.1"


@pytest.mark.parametrize("spelling", METADATA_SPELLINGS)
def test_every_metadata_address_spelling_is_one_host(spelling):
    assert canonical_host(spelling) == "169.254.169.254"


@pytest.mark.parametrize("spelling", NAME_SPELLINGS)
def test_every_name_spelling_is_one_host(spelling):
    assert canonical_host(spelling) == "example.com"


def test_international_names_take_their_ascii_form():
    assert canonical_host("bücher.de") == canonical_host("xn--bcher-kva.de") == "xn--bcher-kva.de"


def test_ipv6_has_one_spelling():
    assert canonical_host("[0:0:0:0:0:0:0:1]") == canonical_host("::1") == "::1"
    assert canonical_host("[FD00:0::1]") == "fd00::1"


@pytest.mark.parametrize(
    "text",
    [
        "",
        "exa mple.com",
        "example.com\n",
        "a..b",
        "example.com..",
        "1.2.3.4.5",
        "256.1.1.1",
        "1.2.3.0x",
        "08.1.1.1",
        "4294967296",
        "127.0.0.1/x",
        "user@host",
        "ex%61mple.com",
        "[::1",
        "[fe80::1%eth0]",
        "-bad.com",
        "a" * 64 + ".com",
        "evil.com\\@good.com",
        "host\x00.com",
    ],
)
def test_an_unparsable_host_is_an_error(text):
    with pytest.raises(HostError):
        canonical_host(text)


@pytest.mark.parametrize(
    "url, host, port",
    [
        ("https://registry.npmjs.org/-/v1/search", "registry.npmjs.org", 443),
        ("http://example.com:8080/x", "example.com", 8080),
        ("http://user:pass@example.com/", "example.com", 80),
        ("HTTPS://EXAMPLE.COM./", "example.com", 443),
        ("http://[::ffff:a9fe:a9fe]/latest/meta-data/", "169.254.169.254", 80),
        ("http://0251.0376.0251.0376/", "169.254.169.254", 80),
        # the host is what comes before `#` or `?`, whatever follows an `@` there (Orange Tsai, 2017)
        ("http://evil.com#@good.com/", "evil.com", 80),
        ("http://evil.com?@good.com/", "evil.com", 80),
        ("http://good.com@evil.com/", "evil.com", 80),
        ("//evil.com/x", "evil.com", None),
        ("example.com/path", "example.com", None),
        ("https://api.github.com.evil.com/", "api.github.com.evil.com", 443),
    ],
)
def test_url_host(url, host, port):
    assert url_host(url) == (host, port)


@pytest.mark.parametrize(
    "url",
    [
        "http://a@evil.com@good.com/",  # parsers take the first or the last `@` (Orange Tsai, 2017)
        "http://good.com\\@evil.com/",  # `\` is `/` to browsers, part of the userinfo to others
        "http://evil.com\t.good.com/",  # browsers drop tabs; other parsers keep them
        "http://ex%61mple.com/",  # browsers decode the host, others do not
        "http://127.0.0.1 evil.com/",  # glibc inet_aton accepts text after a space
        "http://example.com:99999/",
        "http://example.com:+80/",
        "http:///path",
        "file:///etc/passwd",
        "mailto:someone@example.com",
        7,
    ],
)
def test_a_url_read_two_ways_is_refused(url):
    with pytest.raises(HostError):
        url_host(url)


def test_split_host_port():
    assert split_host_port("pypi.org:443") == ("pypi.org", 443)
    assert split_host_port("[::1]:22") == ("::1", 22)
    assert split_host_port("::1") == ("::1", None)
    with pytest.raises(HostError):
        split_host_port("[::1]x")


@pytest.mark.parametrize(
    "host, expected",
    [
        ("api.github.com", True),
        ("a.b.github.com", True),
        ("API.GitHub.com.", True),
        ("github.com", False),
        ("evilgithub.com", False),
        ("github.com.evil.com", False),
        ("api.github.com.evil.com", False),
        ("github.co", False),
    ],
)
def test_wildcard_matches_whole_labels_only(host, expected):
    assert Pattern("*.github.com").matches(canonical_host(host)) is expected


def test_a_name_pattern_matches_that_name_only():
    pattern = Pattern("api.github.com")
    assert pattern.matches("api.github.com")
    assert not pattern.matches("api.github.com.evil.com")
    assert not pattern.matches("xapi.github.com")


def test_ports_and_networks():
    assert Pattern("pypi.org:443").matches("pypi.org", 443)
    assert not Pattern("pypi.org:443").matches("pypi.org", 80)
    assert not Pattern("pypi.org:443").matches("pypi.org")
    assert Pattern("pypi.org").matches("pypi.org", 8443)
    assert Pattern("10.0.0.0/8").matches("10.9.8.7")
    assert not Pattern("10.0.0.0/8").matches("11.0.0.1")
    assert not Pattern("10.0.0.0/8").matches("ten.example")
    assert Pattern("[fd00::/8]").matches("fd12::1")
    assert Pattern("0x0a.0/8").matches("10.1.1.1")
    assert Pattern("[::ffff:127.0.0.1]:80").matches("127.0.0.1", 80)
    assert Pattern("*").matches("anything.example") and Pattern("*:443").matches("x.example", 443)
    assert not Pattern("*.example").matches("10.0.0.1")


@pytest.mark.parametrize(
    "text",
    [
        "*github.com",
        "api*.github.com",
        "*.*.github.com",
        "api.*.com",
        "**",
        "*.",
        "*.10.0.0.1",
        "10.0.0.0/33",
        "10.0.0.0/x",
        "pypi.org:",
        "pypi.org:http",
        " pypi.org",
        "a..b",
        "[::1]x",
        "",
    ],
)
def test_a_malformed_pattern_is_an_error(text):
    with pytest.raises(HostError):
        Pattern(text)


def test_deny_wins_and_covers_every_spelling():
    rules = HostRules(allow=[("*",)], deny=("169.254.169.254", "metadata.google.internal"))
    for spelling in METADATA_SPELLINGS:
        assert rules.decide(spelling, 80)[0] is False, spelling
    assert rules.decide("METADATA.google.internal.", 80)[0] is False
    assert rules.decide("example.com", 443) == (True, "allowed")


def test_a_name_resolving_to_a_denied_address_is_refused():
    rules = HostRules(allow=[("*.example",)], deny=("169.254.0.0/16",))
    allowed, why = rules.decide("meta.example", 80, addresses=("169.254.169.254",))
    assert not allowed and "169.254.169.254" in why
    assert rules.decide("meta.example", 80, addresses=("192.0.2.1",))[0]


def test_every_allow_level_must_admit_a_host():
    rules = HostRules(allow=[("*.github.com", "registry.npmjs.org"), ("api.github.com",)])
    assert rules.decide("api.github.com", 443)[0]
    allowed, why = rules.decide("registry.npmjs.org", 443)
    assert not allowed and "api.github.com" in why


def test_an_unparsable_host_is_denied():
    rules = HostRules(allow=[("*",)])
    for bad in ("", "a..b", "1.2.3.4.5", "exa mple.com", "evil.com\\@good.com"):
        allowed, why = rules.decide(bad, 80)
        assert not allowed and "unparsable" in why
