"""Where a batch's notebooks run: local threads (each job a sandboxed subprocess) or the
workers of a Dask distributed cluster, reached over mutual TLS only."""

from __future__ import annotations

import concurrent.futures
from pathlib import Path

from ..core.notebook import GradingError
from ..core.report import plain
from ..core.submissions import display


def scheduler_security(address: str, tls_ca=None, tls_cert=None, tls_key=None):
    """The ``distributed.Security`` to reach the Dask scheduler at ``address`` with.

    Only mutual TLS is accepted, on this machine as off it: a ``tls://`` address and the
    three files (the certificate authority that signed the cluster's certificates, and this
    client's own certificate and key); the scheduler and workers must be started with
    certificates of the same authority, and then refuse any client without one.  A plain
    ``tcp://`` scheduler admits every process that can reach its port, on loopback every
    local user's, which could replace the workers' code and hand out other students'
    results; it is refused.
    """
    from distributed.comm import parse_address, parse_host_port
    from distributed.security import Security

    try:
        scheme, location = parse_address(address)
        if scheme in ("tcp", "tls"):
            parse_host_port(location, default_port=8786)
    except (ValueError, TypeError):
        raise GradingError(f"--scheduler: not a Dask address: {display(address)}") from None
    if scheme != "tls":
        raise GradingError(f"--scheduler {display(address)}: refused: the Dask path must be tls:// "
                           "with client certificates (--tls-ca, --tls-cert, --tls-key), on loopback "
                           "too: a plain tcp:// scheduler admits any local process as a client")
    files = {"--tls-ca": tls_ca, "--tls-cert": tls_cert, "--tls-key": tls_key}
    missing = [flag for flag, value in files.items() if not value]
    if missing:
        raise GradingError(f"--scheduler tls://... needs {', '.join(missing)} (mutual TLS: "
                           "the cluster's certificate authority, this client's certificate "
                           "and its key)")
    for flag, value in files.items():
        if not Path(value).is_file():
            raise GradingError(f"{flag}: no such file: {display(value)}")
    return Security(tls_ca_file=str(tls_ca), tls_client_cert=str(tls_cert),
                    tls_client_key=str(tls_key), require_encryption=True)


class Executor:
    """Local threads (each job is a sandboxed subprocess) or a Dask distributed cluster."""

    def __init__(self, jobs: int, scheduler: str | None, security=None):
        self.client = None
        if scheduler:
            try:
                from distributed import Client
            except ImportError:
                raise GradingError("--scheduler needs the 'distributed' package") from None
            try:
                self.client = Client(scheduler, timeout=30, security=security)
            except (OSError, TimeoutError, ValueError) as exc:
                raise GradingError(f"cannot reach the Dask scheduler at {display(scheduler)}: "
                                   f"{plain(str(exc), 200)}") from None
        else:
            self.pool = concurrent.futures.ThreadPoolExecutor(max_workers=jobs)

    def submit(self, fn, *args, **kwargs):
        if self.client is not None:
            return self.client.submit(fn, *args, pure=False, **kwargs)
        return self.pool.submit(fn, *args, **kwargs)

    def as_completed(self, futures):
        if self.client is not None:
            from distributed import as_completed

            return as_completed(futures)
        return concurrent.futures.as_completed(futures)

    def close(self):
        if self.client is not None:
            self.client.close()
        else:
            self.pool.shutdown(wait=True, cancel_futures=True)
