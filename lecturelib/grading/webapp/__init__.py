"""The grading web app: ``lecturelib gradebook serve --gradebook FILE`` (instructors only).

Rubric grading of written answers question by question, overrides of automatic scores,
the class's results and the audit trail, on a local Tornado server with a random token,
or for a grading team with personal sign-in links and roles (``gradebook staff``), over
HTTPS on a network.
See :mod:`.app` for the security model and :mod:`.render` for how answers are shown.
The student edition of the course ships without this package.

May import: ``lecturelib.grading.core``, ``lecturelib.grading.gradebook``,
``lecturelib.grading.course``.
"""

from __future__ import annotations

import asyncio
import secrets
import socket
import sys

from ..core.notebook import GradingError
from ..gradebook.allocation import check_graders

__all__ = ["serve", "start"]


def _listen(host: str, port: int) -> list[socket.socket]:
    import tornado.netutil

    try:
        return tornado.netutil.bind_sockets(port, address=host)
    except OSError as exc:
        raise GradingError(f"cannot listen on {host}:{port}: {exc.strerror}") from None
    except socket.gaierror:
        raise GradingError(f"cannot listen on {host!r}: not an address of this machine") from None


LOOPBACK = ("127.0.0.1", "localhost", "::1")


def self_signed(host: str, folder) -> tuple[str, str, str, str]:
    """A certificate for ``host`` (and the loopback names) made with ``cryptography``,
    valid for 30 days, with its key, written in ``folder``: ``(cert path, key path, SHA-256
    fingerprint of the certificate, base64 SHA-256 of its public key)``; the fingerprint is
    what the staff compare with what their browser shows."""
    import base64
    import datetime
    import ipaddress
    import os
    from pathlib import Path

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    names: list[x509.GeneralName] = [x509.DNSName("localhost"),
                                     x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
    try:
        if host not in LOOPBACK and host not in ("0.0.0.0", "::"):
            names.append(x509.IPAddress(ipaddress.ip_address(host)))
    except ValueError:
        names.append(x509.DNSName(host))
    now = datetime.datetime.now(datetime.timezone.utc)
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "lecturelib grading app")])
    cert = (x509.CertificateBuilder().subject_name(subject).issuer_name(subject)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=30))
            .add_extension(x509.SubjectAlternativeName(names), critical=False)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .sign(key, hashes.SHA256()))
    folder = Path(folder)
    cert_path, key_path = folder / "cert.pem", folder / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    fd = os.open(key_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                  serialization.NoEncryption()))
    fingerprint = cert.fingerprint(hashes.SHA256()).hex(":").upper()
    spki = key.public_key().public_bytes(serialization.Encoding.DER,
                                         serialization.PublicFormat.SubjectPublicKeyInfo)
    digest = hashes.Hash(hashes.SHA256())
    digest.update(spki)
    return str(cert_path), str(key_path), fingerprint, base64.b64encode(digest.finalize()).decode()


def _ssl_context(cert: str, key: str):
    import ssl

    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    try:
        context.load_cert_chain(cert, key)
    except (OSError, ssl.SSLError) as exc:
        raise GradingError(f"cannot use --tls-cert/--tls-key: {getattr(exc, 'strerror', None) or exc}") from None
    return context


def check_transport(host: str, tls_cert, tls_key, tls_self_signed: bool, insecure_http: bool) -> bool:
    """Whether the app speaks HTTPS; refuse options that do not go together, and plain HTTP
    off this machine without ``insecure_http``."""
    if bool(tls_cert) != bool(tls_key):
        raise GradingError("--tls-cert and --tls-key go together")
    if tls_cert and tls_self_signed:
        raise GradingError("--tls-self-signed makes its own certificate: leave out --tls-cert/--tls-key")
    tls = bool(tls_cert or tls_self_signed)
    if not tls and host not in LOOPBACK and not insecure_http:
        raise GradingError(f"listening on {host} without TLS would send every grade and sign-in link "
                           "in clear: give --tls-cert/--tls-key or --tls-self-signed (or "
                           "--insecure-http on a network you trust)")
    return tls


def start(gradebook_path, *, host: str = "127.0.0.1", port: int = 0, anonymous: bool = False,
          token: str | None = None, roster=None, graders=(), double_mark: float = 0.0,
          instructor: str = "instructor", tls_cert: str | None = None, tls_key: str | None = None,
          tls_self_signed: bool = False, insecure_http: bool = False):
    """Start the app on the running asyncio loop; return ``(url, server, context)``.

    Without staff in the gradebook, ``url`` holds the single token
    (``http://HOST:PORT/?token=...``) of one person, ``instructor``; with staff, it is the
    app's address and each person signs in with their own link (:mod:`..gradebook.staff`).
    Stop ``server``, then ``context.renderer`` (the answers' rendering process:
    ``close()``) and ``context.book``.  ``roster`` (a
    :class:`~lecturelib.grading.course.roster.Roster`) names the students when not
    ``anonymous``; ``graders`` share each question
    (:func:`..gradebook.allocation.check_graders`), and with staff are people on it.

    HTTPS: ``tls_cert`` and ``tls_key`` (PEM files), or ``tls_self_signed`` (a certificate
    made now: ``context.fingerprint`` is its SHA-256, ``context.spki`` its public key's).
    Off loopback, plain HTTP is refused unless ``insecure_http``.
    """
    import tempfile

    import tornado.httpserver

    from ..gradebook import staff
    from ..gradebook.manual import check_grader
    from ..gradebook.store import Gradebook
    from .app import make_app

    if not 0 <= port <= 65535:
        raise GradingError(f"--port must be between 0 and 65535, got {port}")
    graders = check_graders(graders, double_mark)
    check_grader(instructor)
    tls = check_transport(host, tls_cert, tls_key, tls_self_signed, insecure_http)
    with Gradebook(gradebook_path) as book:
        people = {p["name"] for p in staff.members(book.db) if not p["revoked_at"]}
    if people and set(graders) - people:
        raise GradingError(f"--graders names someone not on the staff: "
                           f"{', '.join(sorted(set(graders) - people))[:100]}")
    fingerprint = spki = ""
    ssl_options = None
    if tls_self_signed:
        with tempfile.TemporaryDirectory() as folder:
            cert, key, fingerprint, spki = self_signed(host, folder)
            ssl_options = _ssl_context(cert, key)
    elif tls:
        ssl_options = _ssl_context(tls_cert, tls_key)
    sockets = _listen(host, port)
    port = sockets[0].getsockname()[1]
    token = token or secrets.token_urlsafe(32)
    app, ctx = make_app(gradebook_path, token=token, anonymous=anonymous, host=_url_host(host), port=port,
                        roster=roster, graders=graders, double_mark=double_mark,
                        instructor=instructor, tls=tls, names=_machine_names() if host in ("0.0.0.0", "::") else ())
    ctx.fingerprint, ctx.spki = fingerprint, spki
    server = tornado.httpserver.HTTPServer(app, xheaders=False, max_body_size=1 << 20,
                                           ssl_options=ssl_options)
    server.add_sockets(sockets)
    base = f"{'https' if tls else 'http'}://{_url_host(host)}:{port}/"
    return (base if people else f"{base}?token={token}"), server, ctx


def _machine_names() -> list[str]:
    """This machine's name and addresses, as another machine's browser names it in ``Host``
    when the app listens on every address."""
    name = socket.gethostname()
    found = {name, socket.getfqdn()}
    try:
        found |= {_url_host(info[4][0]) for info in socket.getaddrinfo(name, None)}
    except socket.gaierror:
        pass
    return sorted(found)


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host


def serve(gradebook_path, *, host: str = "127.0.0.1", port: int = 0, anonymous: bool = False,
          roster=None, graders=(), double_mark: float = 0.0, **security) -> int:
    """Run the app until interrupted (the ``lecturelib gradebook serve`` command);
    ``security``: the keywords of :func:`start` from ``instructor`` on."""
    graders = check_graders(graders, double_mark)
    check_transport(host, security.get("tls_cert"), security.get("tls_key"),
                    security.get("tls_self_signed", False), security.get("insecure_http", False))
    if host not in LOOPBACK and security.get("insecure_http"):
        print(f"lecturelib: warning: listening on {host} over plain HTTP (--insecure-http): anyone "
              "on the network path can read the grades and the sign-in links", file=sys.stderr)

    async def main():
        url, server, ctx = start(gradebook_path, host=host, port=port, anonymous=anonymous,
                                 roster=roster, graders=graders, double_mark=double_mark, **security)
        if ctx.fingerprint:
            print("A self-signed certificate was made for this run; its SHA-256 fingerprint (the "
                  "staff check that their browser shows the same):")
            print(f"    {ctx.fingerprint}")
        if "?token=" in url:
            print("The grading app is running. Open this address in your browser (it holds the "
                  "access token: it is yours alone):")
        else:
            print("The grading app is running for its staff, each with their own sign-in link "
                  "(lecturelib gradebook staff add|link), at:")
        print(f"    {url}", flush=True)
        try:
            await asyncio.Event().wait()
        finally:
            server.stop()
            ctx.renderer.close()
            ctx.book.close()

    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        print("lecturelib: the grading app stopped", file=sys.stderr)
    return 0
