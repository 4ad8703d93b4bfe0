"""The grading web app: ``lecturelib gradebook serve --gradebook FILE`` (instructors only).

Rubric grading of written answers question by question, overrides of automatic scores,
the class's results and the audit trail, on a local Tornado server with a random token.
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


def start(gradebook_path, *, host: str = "127.0.0.1", port: int = 0, anonymous: bool = False,
          token: str | None = None, roster=None, graders=(), double_mark: float = 0.0):
    """Start the app on the running asyncio loop; return ``(url, server, context)``.

    ``url`` holds the token (``http://HOST:PORT/?token=...``).  Stop ``server``, then
    ``context.renderer`` (the answers' rendering process: ``close()``) and ``context.book``.
    ``roster`` (a :class:`~lecturelib.grading.course.roster.Roster`) names the students when
    not ``anonymous``; ``graders`` share each question
    (:func:`..gradebook.allocation.check_graders`).
    """
    import tornado.httpserver

    from .app import make_app

    if not 0 <= port <= 65535:
        raise GradingError(f"--port must be between 0 and 65535, got {port}")
    graders = check_graders(graders, double_mark)
    sockets = _listen(host, port)
    port = sockets[0].getsockname()[1]
    token = token or secrets.token_urlsafe(32)
    app, ctx = make_app(gradebook_path, token=token, anonymous=anonymous, host=_url_host(host), port=port,
                        roster=roster, graders=graders, double_mark=double_mark)
    server = tornado.httpserver.HTTPServer(app, xheaders=False, max_body_size=1 << 20)
    server.add_sockets(sockets)
    return f"http://{_url_host(host)}:{port}/?token={token}", server, ctx


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host


def serve(gradebook_path, *, host: str = "127.0.0.1", port: int = 0, anonymous: bool = False,
          roster=None, graders=(), double_mark: float = 0.0) -> int:
    """Run the app until interrupted (the ``lecturelib gradebook serve`` command)."""
    graders = check_graders(graders, double_mark)
    if host not in ("127.0.0.1", "localhost", "::1"):
        print(f"lecturelib: warning: listening on {host}: anyone who can reach it and has the "
              "token can grade; the traffic is not encrypted", file=sys.stderr)

    async def main():
        url, server, ctx = start(gradebook_path, host=host, port=port, anonymous=anonymous,
                                 roster=roster, graders=graders, double_mark=double_mark)
        print("The grading app is running. Open this address in your browser (it holds the "
              "access token; share it only with your graders):")
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
