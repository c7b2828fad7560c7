"""Signed policy bundles: sources + catalog overlays + a signed manifest of view fingerprints and a revision.

In: declaration files, overlay folders, an ed25519 key. Out: a deterministic bundle.tar.gz; and back,
a verified Program (size limits, signature, member digests, safe members, fingerprints) held by
`BundleHolder`, which never swaps to a bundle of an older revision than the one it serves.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import threading
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Callable

from ..compiler.catalog_overlay import overlaid_catalog
from .output_file import replace_file
from ..compiler.diagnostics import DshError, invalid_request
from ..compiler.facts import PLATFORMS
from ..compiler.program import Program, SourceFile, read_paths, shipped_sources
from ..compiler.request import Request

if TYPE_CHECKING:  # cryptography loads when a key or a signature is used, not with every dshc command
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

FORMAT = 2  # 2: the manifest carries `revision`
MANIFEST, SIGNATURE = "manifest.json", "manifest.sig"
MAX_MEMBER = 4 * 1024 * 1024  # a policy source or overlay file is kilobytes; more is an attack or a mistake
MAX_TOTAL = 16 * 1024 * 1024
MAX_MEMBERS = 2_000
# what the tar stream may inflate to: the members plus a header block, a PAX header and padding each;
# checked while decompressing, so a small file that inflates to gigabytes is refused after this many bytes
MAX_UNPACKED = MAX_TOTAL + MAX_MEMBERS * 4 * 512


def _refuse(message: str, help: str | None = None) -> DshError:
    return DshError([invalid_request(message, help or "rebuild the bundle with `dshc build` and the right key")])


# --- keys ----------------------------------------------------------------------------------
def new_key(path: str) -> str:
    """Write an ed25519 private key (mode 0600) at `path` and its public key at `path.pub`."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    key = Ed25519PrivateKey.generate()
    private = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(private)
        os.chmod(path, 0o600)
        Path(path + ".pub").write_bytes(
            key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        )
    except OSError as exc:
        raise _refuse(f"cannot write the key `{path}`: {exc.strerror or exc}", "choose a folder you can write to")
    return path + ".pub"


def _private_key(path: str) -> Ed25519PrivateKey:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    try:
        key = serialization.load_pem_private_key(Path(path).read_bytes(), password=None)
    except (OSError, ValueError) as exc:
        raise _refuse(f"cannot read the signing key `{path}`: {exc}", "make one with `dshc build --new-key KEYFILE`")
    if not isinstance(key, Ed25519PrivateKey):
        raise _refuse(f"`{path}` is not an ed25519 private key", "make one with `dshc build --new-key KEYFILE`")
    return key


def _public_key(path: str) -> Ed25519PublicKey:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    try:
        key = serialization.load_pem_public_key(Path(path).read_bytes())
    except (OSError, ValueError) as exc:
        raise _refuse(
            f"cannot read the trusted key `{path}`: {exc}", "pass the `.pub` file `dshc build --new-key` wrote"
        )
    if not isinstance(key, Ed25519PublicKey):
        raise _refuse(f"`{path}` is not an ed25519 public key", "pass the `.pub` file `dshc build --new-key` wrote")
    return key


# --- what a bundle fixes -------------------------------------------------------------------
def shipped_digest() -> str:
    h = hashlib.sha256()
    for f in shipped_sources():
        h.update(f.path.encode() + b"\0" + hashlib.sha256(f.data).digest())
    return "sha256:" + h.hexdigest()


def view_fingerprints(program: Program) -> dict[str, str]:
    """Every preset × host × platform the program declares → its fingerprint (or the error code)."""
    found = {}
    presets = sorted(program.resolved.presets)
    for host in sorted(program.resolved.hosts):
        for preset in presets:
            for platform in PLATFORMS:
                key = f"preset={preset},host={host},platform={platform}"
                try:
                    found[key] = program.view(Request(host=host, preset=preset, platform=platform)).fingerprint
                except DshError as exc:
                    found[key] = "error:" + exc.diagnostics[0].code
    return found


def _program(sources: list[SourceFile], overlay_dirs: list[str], shipped: bool) -> Program:
    return Program.from_files((shipped_sources() if shipped else []) + sources, overlaid_catalog(overlay_dirs))


# --- build ---------------------------------------------------------------------------------
def default_revision(environ=os.environ) -> int:
    """$SOURCE_DATE_EPOCH (reproducible builds), else the current Unix time in seconds."""
    import time

    text = environ.get("SOURCE_DATE_EPOCH", "")
    return int(text) if text.isascii() and text.isdigit() else int(time.time())


def build(paths, catalogs, output: str, key_path: str, shipped: bool = True, revision: int | None = None) -> dict:
    """Write the signed bundle; returns its manifest. `revision`: a server never swaps to a lower one."""
    key = _private_key(key_path)
    revision = default_revision() if revision is None else revision
    members: dict[str, bytes] = {}
    sources = read_paths(paths)
    for index, f in enumerate(sources):
        members[f"sources/{index:04d}/{Path(f.path).name}"] = f.data
    for index, folder in enumerate(catalogs):
        root = Path(folder)
        try:
            for file in sorted(p for p in root.rglob("*") if p.is_file()):
                members[f"catalogs/{index:02d}/{file.relative_to(root).as_posix()}"] = file.read_bytes()
        except OSError as exc:
            raise _refuse(f"cannot read the catalog overlay `{folder}`: {exc.strerror or exc}", "check --catalog")
    program = _program(
        [SourceFile(n, d) for n, d in members.items() if n.startswith("sources/")],
        [str(Path(c)) for c in catalogs],
        shipped,
    )
    manifest = {
        "format": FORMAT,
        "dshc_version": _version(),
        "revision": revision,
        "shipped": {"included": False, "digest": shipped_digest()} if shipped else None,
        "members": {name: "sha256:" + hashlib.sha256(data).hexdigest() for name, data in sorted(members.items())},
        "views": view_fingerprints(program),
    }
    text = json.dumps(manifest, sort_keys=True, indent=1).encode()
    members[MANIFEST] = text
    members[SIGNATURE] = key.sign(text).hex().encode()
    replace_file(output, _tar(members), "the bundle")  # a watched folder never shows half a bundle
    return manifest


def _tar(members: dict[str, bytes]) -> bytes:
    import tarfile  # tarfile and tempfile load with a bundle command, not with every `dshc` process

    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name in sorted(members):
            info = tarfile.TarInfo(name)
            info.size, info.mtime, info.mode = len(members[name]), 0, 0o644
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            tar.addfile(info, io.BytesIO(members[name]))
    out = io.BytesIO()
    import gzip

    with gzip.GzipFile(fileobj=out, mode="wb", mtime=0, filename="") as gz:  # mtime 0: same inputs, same bytes
        gz.write(raw.getvalue())
    return out.getvalue()


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("dshc")
    except PackageNotFoundError:
        return "0"


# --- load ----------------------------------------------------------------------------------
class _Capped:
    """A decompressed stream that refuses to yield more than `limit` bytes (never reads past limit + 1)."""

    def __init__(self, stream, limit: int, path: str):
        self.stream, self.left, self.limit, self.path = stream, limit, limit, path

    def read(self, size: int = -1) -> bytes:
        size = self.left + 1 if size is None or size < 0 else min(size, self.left + 1)
        data = self.stream.read(size)
        self.left -= len(data)
        if self.left < 0:
            raise _refuse(f"bundle `{self.path}` unpacks to more than {self.limit} bytes, over the limit")
        return data


def read_members(path: str) -> dict[str, bytes]:
    """The regular members of the tar at `path`, in memory (never extracted: CVE-2007-4559), or a refusal.

    Refused: a file or a decompressed stream over the limits (checked while reading, before any member or
    header is held whole), absolute or `..` names, links, devices, directories, fifos, duplicates,
    oversized members.
    """
    import gzip
    import tarfile
    import zlib

    members: dict[str, bytes] = {}
    total = 0
    try:
        if os.stat(path).st_size > MAX_UNPACKED:
            raise _refuse(f"bundle `{path}` is over {MAX_UNPACKED} bytes, over the limit")
        # a stream read ("r|"): tarfile never seeks, so every byte it sees passed through the cap
        with (
            open(path, "rb") as raw,
            gzip.GzipFile(fileobj=raw, mode="rb") as unzipped,
            tarfile.open(fileobj=_Capped(unzipped, MAX_UNPACKED, path), mode="r|") as tar,  # type: ignore[call-overload]  # "r|" only reads; the stub wants write/seek
        ):
            for count, info in enumerate(tar, 1):
                name = info.name
                parts = PurePosixPath(name).parts
                if count > MAX_MEMBERS:
                    raise _refuse(f"bundle `{path}` has more than {MAX_MEMBERS} members")
                if (
                    name.startswith("/")
                    or "\\" in name
                    or not parts
                    or ".." in parts
                    or "." in parts
                    or ":" in parts[0]
                ):
                    raise _refuse(f"bundle `{path}` has member `{name}` outside the bundle")
                if not info.isreg():
                    raise _refuse(
                        f"bundle `{path}` has member `{name}` that is not a regular file "
                        "(links, devices and folders are refused)"
                    )
                if name in members:
                    raise _refuse(f"bundle `{path}` has member `{name}` twice")
                if info.size > MAX_MEMBER or total + info.size > MAX_TOTAL:
                    raise _refuse(f"bundle `{path}` has member `{name}` of {info.size} bytes, over the limit")
                data = tar.extractfile(info).read(info.size + 1)
                if len(data) != info.size:
                    raise _refuse(f"bundle `{path}` has member `{name}` whose size does not match its header")
                total += info.size
                members[name] = data
    except (OSError, tarfile.TarError, EOFError, zlib.error) as exc:
        raise _refuse(f"bundle `{path}` is not a readable tar.gz: {exc}")
    return members


@dataclass(frozen=True)
class LoadedBundle:
    path: str
    digest: str  # sha256 of the signed manifest: which bundle this is
    manifest: dict
    program: Program

    @property
    def revision(self) -> int:
        return self.manifest["revision"]


def _signed(path: str, trust: str) -> tuple[dict[str, bytes], bytes, dict]:
    """The bundle's members (manifest and signature taken out), its manifest's text and value, once the
    signature, format and revision are checked; nothing is compiled yet."""
    key = _public_key(trust)
    members = read_members(path)
    if MANIFEST not in members or SIGNATURE not in members:
        raise _refuse(f"bundle `{path}` is unsigned: it needs {MANIFEST} and {SIGNATURE}")
    text = members.pop(MANIFEST)
    from cryptography.exceptions import InvalidSignature

    try:
        key.verify(bytes.fromhex(members.pop(SIGNATURE).decode("ascii")), text)
    except (InvalidSignature, ValueError, UnicodeDecodeError):
        raise _refuse(
            f"bundle `{path}` is not signed by the trusted key `{trust}`",
            "check --trust, or rebuild the bundle; a changed manifest breaks the signature",
        )
    manifest = json.loads(text)
    if manifest.get("format") != FORMAT:
        raise _refuse(
            f"bundle `{path}` is of format {manifest.get('format')}, not {FORMAT} (it has no revision)",
            "rebuild it with this dshc",
        )
    revision = manifest.get("revision")
    if type(revision) is not int or revision < 0:
        raise _refuse(f"bundle `{path}` has no revision in its manifest", "rebuild it with this dshc")
    return members, text, manifest


def load(path: str, trust: str) -> LoadedBundle:
    """Verify and load the bundle at `path` signed by the key in `trust`; raises DshError."""
    import tempfile

    members, text, manifest = _signed(path, trust)
    listed = manifest.get("members", {})
    if set(listed) != set(members):
        raise _refuse(f"bundle `{path}` holds members its manifest does not list, or lacks some it lists")
    for name, data in members.items():
        if listed[name] != "sha256:" + hashlib.sha256(data).hexdigest():
            raise _refuse(f"bundle `{path}` member `{name}` does not match its digest in the manifest")
    shipped = manifest.get("shipped")
    if shipped is not None and shipped.get("digest") != shipped_digest():
        raise _refuse(
            f"bundle `{path}` was built against other shipped sources (dshc {manifest.get('dshc_version')})",
            "rebuild it with this dshc, or with --no-shipped so it carries every declaration",
        )
    sources = [SourceFile(f"{path}:{n}", d) for n, d in sorted(members.items()) if n.startswith("sources/")]
    with tempfile.TemporaryDirectory(prefix="dshc-bundle-") as tmp:
        overlays = sorted({n.split("/")[1] for n in members if n.startswith("catalogs/")})
        for name, data in members.items():
            if name.startswith("catalogs/"):
                target = Path(tmp, name)
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(data)
        program = _program(sources, [str(Path(tmp, "catalogs", o)) for o in overlays], shipped is not None)
    if view_fingerprints(program) != manifest.get("views"):
        raise _refuse(
            f"bundle `{path}`: the views this dshc compiles differ from the fingerprints in its manifest",
            "rebuild the bundle with this dshc",
        )
    return LoadedBundle(path, "sha256:" + hashlib.sha256(text).hexdigest(), manifest, program)


def _bundles(path: str) -> list[Path]:
    found = sorted(Path(path).glob("*.tar.gz"), key=lambda p: (p.stat().st_mtime_ns, p.name))
    if not found:
        raise _refuse(f"no `*.tar.gz` bundle in `{path}`", "build one with `dshc build -o DIR/NAME.tar.gz`")
    return found


def newest(path: str) -> str:
    """FILE itself, or the newest `*.tar.gz` in DIR (by mtime, then name): what a poll looks at."""
    return str(_bundles(path)[-1]) if os.path.isdir(path) else path


def highest(path: str, trust: str) -> str:
    """FILE itself, or DIR's validly signed bundle of the highest revision (the newest of those): where a
    server starts, so an old bundle given a fresh mtime is not chosen at a restart either."""
    if not os.path.isdir(path):
        return path
    ranked = []
    for order, found in enumerate(_bundles(path)):
        try:
            ranked.append((_signed(str(found), trust)[2]["revision"], order, str(found)))
        except DshError:
            continue  # a bad bundle is refused when it is the newest; here it is just not a candidate
    return max(ranked)[2] if ranked else newest(path)


# --- the hot swap --------------------------------------------------------------------------
class BundleHolder:
    """The bundle being served; `poll()` swaps in a newer verified one atomically; a bad one, or one of an
    older revision (a validly signed bundle of last month, dropped in again), is refused.

    Readers take `current()` once per decision, so an in-flight decision finishes on the Program it began on.
    """

    def __init__(self, path: str, trust: str, warn: Callable[[str], object]):
        self.path, self.trust, self.warn = path, trust, warn
        chosen = highest(path, trust)
        try:  # stamped before the load: a bundle replaced meanwhile is seen as new by the next poll
            self._seen = _stamp(chosen)
        except OSError as exc:
            raise _refuse(
                f"cannot read the bundle `{chosen}`: {exc.strerror or exc}",
                "pass a bundle file, or a folder holding `*.tar.gz` bundles",
            ) from None
        self._current = load(chosen, trust)
        self._lock = threading.Lock()  # one poll at a time; readers never take it

    def current(self) -> LoadedBundle:
        return self._current

    def poll(self) -> bool:
        """Load the bundle again if it changed; True when a new one is now served."""
        with self._lock:
            try:
                chosen = newest(self.path)
                stamp = _stamp(chosen)
            except (DshError, OSError):
                return False
            if stamp == self._seen:
                return False
            self._seen = stamp
            try:
                loaded = load(chosen, self.trust)
            except DshError as exc:
                from ..compiler.render import human

                self.warn(
                    f"dshc serve: refused the new bundle `{chosen}`; still serving "
                    f"`{self._current.path}`\n" + human(exc.diagnostics)
                )
                return False
            if loaded.digest == self._current.digest:
                return False
            if loaded.revision <= self._current.revision:
                self.warn(
                    f"dshc serve: refused the bundle `{chosen}` of revision {loaded.revision}: "
                    f"`{self._current.path}` of revision {self._current.revision} is served, and a "
                    "bundle only replaces an older one (build the next with a higher --revision)"
                )
                return False
            self._current = loaded  # one reference store: readers see the old or the new bundle, never a mix
            return True


def _stamp(path: str):
    st = os.stat(path)
    return (path, st.st_mtime_ns, st.st_size, st.st_ino)


def serve_holder(path: str, trust: str | None, err) -> BundleHolder:
    """The holder `dshc serve --bundle` reads; refusals go to stderr (stdout may be the protocol)."""
    if not trust:
        raise _refuse(
            "--bundle needs --trust PUBKEY to verify the signature", "the `.pub` file `dshc build --new-key` wrote"
        )
    return BundleHolder(path, trust, lambda text: (err.write(text.rstrip("\n") + "\n"), err.flush()))


# --- command -------------------------------------------------------------------------------


def cmd_build(args, out, err) -> int:
    if args.new_key:
        public = new_key(args.new_key)
        out.write(
            json.dumps({"key": args.new_key, "public": public}) + "\n"
            if args.json
            else f"wrote {args.new_key} (private, 0600) and {public}\n"
        )
        if not args.output:
            return 0
    if not args.output or not (args.key or args.new_key):
        raise _refuse("`dshc build` needs -o BUNDLE and --key KEYFILE", "or --new-key KEYFILE to make a keypair")
    manifest = build(
        args.paths,
        args.catalog,
        args.output,
        args.key or args.new_key,
        shipped=not args.no_shipped,
        revision=args.revision,
    )
    if args.json:
        out.write(
            json.dumps(
                {
                    "bundle": args.output,
                    "revision": manifest["revision"],
                    "views": len(manifest["views"]),
                    "members": len(manifest["members"]),
                }
            )
            + "\n"
        )
    else:
        out.write(
            f"wrote {args.output}: revision {manifest['revision']}, {len(manifest['members'])} members, "
            f"{len(manifest['views'])} views\n"
        )
    return 0
