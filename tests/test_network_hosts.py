"""Hosts in the language: `network allow|deny "HOST", …` lines (checked, formatted, composed so a child only
narrows) and rules on the hosts a call reaches (`args.url.host`, `args.command.hosts`), deciding every spelling
of a host alike. Bypass spellings: PayloadsAllTheThings' SSRF list and Orange Tsai's "A New Era of SSRF"
(Black Hat USA 2017), as in tests/test_hosts.py."""

from __future__ import annotations

import pytest

from dshc.cli.host import sandbox_settings
from dshc.compiler.fmt import format_document
from dshc.compiler.program import Program, SourceFile, parse_files
from dshc.compiler.request import Request
from dshc.compiler.shell import analyse
from dshc.compiler.command_hosts import segment_hosts
from dshc.runtime.sandbox import SandboxUnavailable, confinement_in, plan
from dshc.runtime.sandbox.probe import Probe

POLICIES = """
policy egress {
  sandbox workspace-write
  network allow "registry.npmjs.org", "*.github.com", "pypi.org:443"
  network deny "169.254.169.254", "metadata.google.internal"
  default allow
}
policy narrower extends egress {
  network allow "api.github.com", "evil.example"
  network deny "10.0.0.0/8"
}
policy everything-but {
  sandbox workspace-write
  network allow
  network deny "169.254.0.0/16"
}
policy rules {
  default allow
  ask web_fetch when not args.url.host in ["docs.python.org", "*.github.com"]
  deny web_fetch when args.url.host in ["169.254.169.254", "metadata.google.internal"]
  deny bash when args.command.hosts matches "*.onion"
  deny bash when args.command.hosts in ["169.254.169.254", "metadata.google.internal"]
}
policy allow-listed {
  default deny
  allow bash when args.command matches "curl *" and args.command.hosts in ["registry.npmjs.org"]
}
"""


@pytest.fixture(scope="module")
def program() -> Program:
    return Program.load(texts={"net.dsh": POLICIES})


def policy(program, name):
    return program.composition(Request(host="web", policy=name)).policy


def check(cli, tmp_path, text):
    path = tmp_path / "p.dsh"
    path.write_text(text)
    return cli("check", str(path))


# ---------------------------------------------------------------- the lines


def test_hosts_reach_the_composed_policy_and_a_child_only_narrows(program):
    settings = sandbox_settings(policy(program, "narrower"))
    assert settings["network"] is True
    # both levels' lists: a host must be in each (evil.example is in the child's only, so never admitted)
    assert settings["network_allow"] == (
        ("registry.npmjs.org", "*.github.com", "pypi.org:443"),
        ("api.github.com", "evil.example"),
    )
    assert settings["network_deny"] == ("169.254.169.254", "metadata.google.internal", "10.0.0.0/8")
    plain = sandbox_settings(policy(program, "everything-but"))
    assert plain["network"] is True and plain["network_allow"] == () and plain["network_deny"] == ("169.254.0.0/16",)


@pytest.mark.parametrize(
    "line, col, message",
    [
        ('network allow "*github.com"', 17, "`*` stands only for whole labels"),
        ('network allow "ok.example", "api.*.com"', 31, "`*` stands only for whole labels"),
        ('network deny "pypi.org:99999"', 16, "is not a port"),
        ('network deny "1.2.3.4.5"', 16, "neither an IPv4 address nor a host name"),
        ('network allow "a b.example"', 17, "space"),
        ('network alow "x.example"', 11, "network must be `allow` or `deny`"),
    ],
)
def test_a_malformed_host_is_an_error_at_its_place(cli, tmp_path, line, col, message):
    result = check(cli, tmp_path, f"policy p {{\n  sandbox workspace-write\n  {line}\n}}\n")
    assert result.code == 2
    assert f"p.dsh:3:{col}: error[DSH109]" in result.out + result.err
    assert message in result.out + result.err


def test_contradicting_lines_are_errors(cli, tmp_path):
    text = 'policy p {\n  sandbox workspace-write\n  network deny\n  network allow "x.example"\n}\n'
    result = check(cli, tmp_path, text)
    assert result.code == 2 and "p.dsh:3:11: error[DSH109]" in result.out + result.err
    full = 'policy p {\n  sandbox danger-full-access\n  network allow "x.example"\n}\n'
    result = check(cli, tmp_path, full)
    assert result.code == 2 and "host lists need a sandbox" in result.out + result.err


def test_the_lines_format_and_round_trip():
    text = (
        'policy p {\n  network allow "registry.npmjs.org",   "*.github.com","pypi.org:443", '
        '"files.pythonhosted.org", "static.crates.io", "index.crates.io"\n  network deny "169.254.169.254"\n}\n'
    )
    (document,), diagnostics, _ = parse_files([SourceFile("p.dsh", text.encode())])
    assert not diagnostics
    formatted = format_document(document)
    assert formatted == (
        'policy p {\n  network allow "registry.npmjs.org", "*.github.com", "pypi.org:443", '
        '"files.pythonhosted.org",\n                "static.crates.io", "index.crates.io"\n'
        '  network deny "169.254.169.254"\n}\n'
    )
    (again,), _, _ = parse_files([SourceFile("p.dsh", formatted.encode())])
    assert again == document and format_document(again) == formatted


# ---------------------------------------------------------------- rules on hosts


def decide(program, name, tool, args):
    request = Request(preset="standard", host="web", policy=name)
    indexed = program.decide(request, tool, args, workspace="/ws", gates=False)
    if tool == "bash":  # (web_fetch is mounted by no shipped preset: only the policy's word is compared)
        assert program.decide_unindexed(request, tool, args, workspace="/ws").effect == indexed.effect
    return indexed.effect


METADATA_URLS = [
    "http://169.254.169.254/latest/meta-data/",
    "http://2852039166/",
    "http://0xa9fea9fe/",
    "http://0251.0376.0251.0376/",
    "http://[::ffff:a9fe:a9fe]/",
    "http://169.254.169.254./",
    "http://[::ffff:169.254.169.254]:80/",
    "http://METADATA.google.internal./computeMetadata/v1/",
    "http://user@169.254.169.254/",
    "http://169.254.43518/",
]


@pytest.mark.parametrize("url", METADATA_URLS)
def test_a_url_host_rule_meets_every_spelling(program, url):
    assert decide(program, "rules", "web_fetch", {"url": url}) == "deny"


@pytest.mark.parametrize(
    "url, effect",
    [
        ("https://docs.python.org/3/", "allow"),
        ("https://api.github.com/repos", "allow"),
        ("https://API.GitHub.com./repos", "allow"),
        ("https://github.com.evil.example/", "ask"),
        ("https://evilgithub.com/", "ask"),
        ("https://docs.python.org.evil.example/", "ask"),
        ("http://evil.example#@docs.python.org/", "ask"),
        ("http://docs.python.org@evil.example/", "ask"),
        # two readings: never taken for the allowed one (Orange Tsai, 2017)
        ("http://docs.python.org\\@evil.example/", "deny"),
        ("http://a@docs.python.org@evil.example/", "deny"),
    ],
)
def test_a_url_host_list_decides_by_host_not_text(program, url, effect):
    assert decide(program, "rules", "web_fetch", {"url": url}) == effect


@pytest.mark.parametrize(
    "command",
    [
        "curl -s http://2852039166/latest/meta-data/",
        "wget -qO- http://[::ffff:a9fe:a9fe]/",
        "curl http://hidden.onion/x",
        "sudo curl http://x.ONION./",
        "bash -c 'curl http://169.254.169.254/'",
        "curl -x http://169.254.169.254:80 http://ok.example/",
        "nc 0251.0376.0251.0376 80",
        "socat - TCP:169.254.169.254:80",
        "ssh root@metadata.google.internal",
        "curl $URL",
        "curl 'http://a@ok.example@169.254.169.254/'",
    ],
)
def test_a_command_host_rule_meets_every_spelling_and_the_unknown(program, command):
    assert decide(program, "rules", "bash", {"command": command, "description": "d"}) == "deny"


@pytest.mark.parametrize(
    "command, effect",
    [
        ("curl https://registry.npmjs.org/left-pad", "allow"),
        ("curl https://registry.npmjs.org.evil.example/", "deny"),
        ("curl https://registry.npmjs.org/x https://evil.example/", "deny"),  # every host must be admitted
        ("curl $REGISTRY/left-pad", "deny"),  # an expansion is not known
        ("curl --resolve registry.npmjs.org:443:203.0.113.7 https://registry.npmjs.org/", "deny"),
        ("ls", "deny"),  # no host: the allow does not apply
    ],
)
def test_an_allow_on_command_hosts_admits_only_surely_listed_hosts(program, command, effect):
    assert decide(program, "allow-listed", "bash", {"command": command, "description": "d"}) == effect


@pytest.mark.parametrize(
    "command, hosts",
    [
        ("git clone git@github.com:a/b.git", {"github.com"}),
        ("git remote add o ssh://git@h.example:2222/r", {"h.example"}),
        ("scp f.txt deploy@prod.example:/tmp/", {"prod.example"}),
        ("rsync -a src/ host.example:/dst", {"host.example"}),
        ("ssh -p 2222 -J jump.example deploy@prod.example uptime", {"jump.example", "prod.example"}),
        ("nc 203.0.113.7 4444", {"203.0.113.7"}),
        ("nc -l 4444", set()),
        ("npm install --registry=https://r.example/ x", {"r.example"}),
        ("pip install -i https://pypi.example/simple y", {"pypi.example"}),
        ("curl -o out.html https://x.example/", {"x.example"}),
        ("curl -i https://x.example/", {"x.example"}),
        ("git push origin main", set()),
    ],
)
def test_hosts_a_command_names(command, hosts):
    found = set()
    for segment in analyse(command).segments:
        named, complete = segment_hosts(segment)
        assert complete
        found |= named
    assert found == hosts


@pytest.mark.parametrize(
    "command",
    [
        "curl --connect-to ok.example:443:evil.example:443 https://ok.example/",
        "curl -K urls.txt",
        "curl --resolve ok.example:443:203.0.113.7 https://ok.example/",
        "wget -i urls.txt",
        "curl $URL",
        "curl 'http://a@b.example@c.example/'",
        "ssh -o ProxyCommand='nc evil.example 22' ok.example",
    ],
)
def test_a_command_whose_hosts_the_text_cannot_settle_is_not_complete(command):
    assert not all(segment_hosts(segment)[1] for segment in analyse(command).segments)


def test_a_host_rule_on_the_wrong_field_or_test_is_an_error(cli, tmp_path):
    text = (
        'policy p {\n  deny bash when args.command.host matches "x.example"\n'
        "  deny bash when args.command.hosts inside workspace\n"
        '  deny web_fetch when args.url.host matches "*x.example"\n}\n'
    )
    out = check(cli, tmp_path, text)
    text = out.out + out.err
    assert out.code == 2
    assert "p.dsh:2:18: error[DSH208]" in text and "p.dsh:3:18: error[DSH305]" in text
    assert "p.dsh:4:23: error[DSH109]" in text


# ---------------------------------------------------------------- failing closed


LINUX = Probe(
    platform="linux", landlock_abi=6, network_namespace=True, seccomp=True, bwrap="/usr/bin/bwrap", sandbox_exec=None
)


NO_NETNS = Probe(platform="linux", landlock_abi=6, network_namespace=False, seccomp=True, bwrap=None, sandbox_exec=None)
MAC = Probe(
    platform="darwin",
    landlock_abi=0,
    network_namespace=False,
    seccomp=False,
    bwrap=None,
    sandbox_exec="/usr/bin/sandbox-exec",
)


@pytest.mark.parametrize("backend, found", [("bwrap", LINUX), ("auto", NO_NETNS), ("auto", MAC)])
def test_host_lists_without_a_proxy_refuse_the_command(tmp_path, backend, found):
    # even with the policy's opt-out of failing closed: a host list is never traded for the whole network
    conf = confinement_in(
        "workspace-write",
        str(tmp_path),
        str(tmp_path),
        network=True,
        network_allow=[("registry.npmjs.org",)],
        fallback_unsandboxed=True,
        backend=backend,
    )
    with pytest.raises(SandboxUnavailable) as refused:
        plan(conf, ["true"], -1, found=found)
    assert "a proxy that admits only the hosts the policy lists" in refused.value.missing


def test_host_lists_start_the_command_behind_the_proxy(tmp_path):
    conf = confinement_in(
        "workspace-write",
        str(tmp_path),
        str(tmp_path),
        network=True,
        network_allow=[("registry.npmjs.org",)],
        network_deny=["169.254.169.254"],
    )
    launch = plan(conf, ["true"], -1, found=LINUX, parent=4242, events_fd=7)
    assert launch.mechanism.startswith("landlock+egress-proxy")
    # (7: the fd the proxy writes its refusals to, `procs.EgressEvents`)
    assert launch.argv[3].endswith("egress.py") and launch.argv[4:8] == [
        "4242",
        "7",
        '[["registry.npmjs.org"]]',
        '["169.254.169.254"]',
    ]
    launcher = launch.argv[launch.argv.index("--") + 1 :]
    # the launcher: in its own network namespace, local sockets closed (`0`), started by the proxy's process
    assert launcher[3].endswith("launch.py") and launcher[5:9] == ["landlock+mounts", "0", "0", "0"]


def test_network_on_without_lists_is_unchanged(tmp_path):
    conf = confinement_in("workspace-write", str(tmp_path), str(tmp_path), network=True)
    assert plan(conf, ["true"], -1, found=LINUX).mechanism.startswith("landlock")
