"""The hosts one simple shell command names (`args.command.hosts`): the URLs of curl and wget, git remotes given
as URLs, ssh/scp/rsync targets, nc/socat/telnet addresses, package managers' registry flags. In: a Segment;
out: (canonical hosts, whether every host-naming word could be read). A host the text does not hold (a git
remote's name, a script's own connections) is the sandbox's proxy's to check, not this module's."""

from __future__ import annotations

from ..common.hosts import HostError, split_host_port, url_host

# options that take a value, per program (the value is never an operand); options that name a host themselves
_VALUED = {
    "curl": frozenset(
        "-o -O -X -H -d -u -A -e -b -c -F -T -w -m -r -E -K -C -Y -y -z --output --request --header "
        "--data --data-raw --data-binary --data-urlencode --user --user-agent --referer --cookie "
        "--cookie-jar --form --upload-file --write-out --max-time --range --cert --key --cacert "
        "--config --connect-timeout --retry --output-dir --continue-at".split()
    ),
    "wget": frozenset(
        "-O -o -a -P -U -T -t -w -e -i -B --output-document --output-file --append-output "
        "--directory-prefix --user-agent --timeout --tries --wait --execute --input-file --base "
        "--header --user --password --post-data --post-file --referer".split()
    ),
    "ssh": frozenset("-b -c -D -E -e -F -I -i -L -l -m -O -o -p -Q -R -S -W -w -B".split()),
    "scp": frozenset("-c -F -i -l -o -P -S -X -J".split()),
    "rsync": frozenset(
        "-e --rsh --exclude --include --filter --files-from --port --password-file --log-file --rsync-path".split()
    ),
    "nc": frozenset("-e -g -G -i -I -O -p -P -q -s -T -V -w -W -x -X -c".split()),
    "telnet": frozenset("-b -e -l -n".split()),
}
_VALUED["ncat"] = _VALUED["netcat"] = _VALUED["nc"]
_PROXY_OPTIONS = frozenset({"-x", "--proxy", "--preproxy", "--doh-url", "-J"})  # the value is a host reached too
# what makes the host reached differ from the one written, or names hosts in a file: the text alone cannot say
_REDIRECTING = {
    "curl": frozenset({"--resolve", "--connect-to", "-K", "--config"}),
    "wget": frozenset({"-i", "--input-file"}),
}
_REGISTRY_OPTIONS = frozenset({"--registry", "--index-url", "--extra-index-url", "-i", "--index", "--default-index"})
_REGISTRY_PROGRAMS = frozenset({"npm", "npx", "pnpm", "yarn", "bun", "pip", "pip3", "uv", "poetry", "pipx"})
_SOCAT_TYPES = (
    "TCP:",
    "TCP4:",
    "TCP6:",
    "TCP-CONNECT:",
    "OPENSSL:",
    "SSL:",
    "UDP:",
    "UDP4:",
    "UDP6:",
    "UDP-CONNECT:",
    "OPENSSL-CONNECT:",
    "SOCKS4:",
    "SOCKS4A:",
    "PROXY:",
)
_GIT_URL_COMMANDS = frozenset({"clone", "fetch", "pull", "push", "ls-remote", "remote", "submodule"})


def segment_hosts(segment) -> tuple[frozenset[str], bool]:
    """(the hosts `segment` names, every one of them read): a wrapper's own words only (`sudo curl …` names its
    hosts in the wrapped segment), a word with an expansion (`$URL`) in a host's place makes it incomplete."""
    argv = segment.argv[: segment.wraps] if segment.wraps is not None else segment.argv
    if not argv:
        return frozenset(), True
    program = argv[0].rsplit("/", 1)[-1]
    literal = segment.literal_words
    found: set[str] = set()
    complete = not segment.opaque

    def add(text: str, index: int, read) -> None:
        nonlocal complete
        if index >= literal:
            complete = False  # an expansion: its value is not in the text
            return
        try:
            found.add(read(text)[0])
        except HostError:
            complete = False

    if program in ("curl", "wget"):
        for index, word, option in _operands(argv, _VALUED[program] | _REDIRECTING[program]):
            if option in _PROXY_OPTIONS:
                add(word, index, url_host)
            elif option in _REDIRECTING[program]:
                complete = False
            elif option is None:
                add(word, index, url_host)
    elif program in ("ssh", "scp", "rsync", "sftp"):
        operands = list(_operands(argv, _VALUED.get(program, frozenset())))
        for index, word, option in operands:
            if option == "-J":
                for jump in word.split(","):
                    add(jump, index, _user_host)
            elif option in ("-o",) and word.lower().startswith(("proxycommand", "proxyjump", "hostname")):
                complete = False
            elif option is None and program in ("ssh", "sftp"):
                add(word, index, _user_host)
                break  # the rest is the remote command
            elif option is None and ("://" in word or ":" in word.split("/", 1)[0]):
                add(word, index, _remote_path)
    elif program in ("nc", "ncat", "netcat", "telnet"):
        if "-l" in argv or "--listen" in argv:
            return frozenset(), complete
        operands = [(index, word) for index, word, option in _operands(argv, _VALUED[program]) if option is None]
        if operands:
            add(operands[0][1], operands[0][0], split_host_port)
    elif program == "socat":
        for index, word in enumerate(argv[1:], 1):
            head = word.upper()
            kind = next((t for t in _SOCAT_TYPES if head.startswith(t)), None)
            if kind is not None:
                add(word[len(kind) :].split(",", 1)[0], index, _host_colon_port)
    elif program == "git":
        words = [word for word in argv[1:] if not word.startswith("-")]
        if words and words[0] in _GIT_URL_COMMANDS:
            for index, word in enumerate(argv):
                if index and ("://" in word or _scp_like(word)):
                    add(word, index, _remote_path)
    if program in _REGISTRY_PROGRAMS:
        for index, word in enumerate(argv):
            name, equals, value = word.partition("=")
            if name in _REGISTRY_OPTIONS and (program.startswith("pip") or program == "uv" or name != "-i"):
                if equals:
                    add(value, index, url_host)
                elif index + 1 < len(argv):
                    add(argv[index + 1], index + 1, url_host)
    return frozenset(found), complete


def _operands(argv, valued):
    """(index, word, the option it is the value of, or None for an operand) for each word after the program."""
    index, end = 1, False
    while index < len(argv):
        word = argv[index]
        if end or not word.startswith("-") or word == "-":
            yield index, word, None
        elif word == "--":
            end = True
        elif word.startswith("--") and "=" in word:
            name, _, value = word.partition("=")
            yield index, value, name
        elif word in valued or word in _PROXY_OPTIONS:
            if index + 1 < len(argv):
                yield index + 1, argv[index + 1], word
            index += 1
        index += 1


def _user_host(text: str) -> tuple[str, int | None]:
    """`user@host`, `host`, `ssh://user@host:port`."""
    if "://" in text:
        return url_host(text)
    if text.count("@") > 1:
        raise HostError(f"`{text}`: more than one `@`")
    return split_host_port(text.rpartition("@")[2])


def _scp_like(word: str) -> bool:
    head = word.split("/", 1)[0]
    return ":" in head and not head.startswith(("-", "."))


def _remote_path(text: str) -> tuple[str, int | None]:
    """A URL, or `[user@]host:path` (scp, rsync, git); `[v6]:path` too."""
    if "://" in text:
        return url_host(text)
    if text.startswith("[") or "@[" in text:
        return _user_host(text.split("]:", 1)[0] + "]")
    return _user_host(text.split(":", 1)[0])


def _host_colon_port(text: str) -> tuple[str, int | None]:
    """socat's `HOST:PORT` (an IPv6 host in brackets)."""
    return split_host_port(text)
