"""Opening a tenant-named PostgreSQL or MariaDB/MySQL connection, and nothing more.

A source URL gives host, port, user, password and database; the drivers receive those
and the few TLS settings of ``TLS_PARAMETERS``, never the URL itself, so nothing a URL
can say (``init_command``, ``local_infile``, ``unix_socket``, ``read_default_file``,
``options``, ``service``, ``passfile``, host lists...) reaches a driver. Every
connection goes to an address the outbound policy (``shared/outbound.py``) allowed,
re-checked on the socket actually connected; it waits at most the policy's connect
timeout, and (MySQL) each read or write at most its read timeout.

A failure to connect says one thing whatever the driver said (refused, timed out,
reset, not the protocol), so errors map no network; credentials the server refused
are said as such. No driver text of a failed connection reaches a message.
"""
from __future__ import annotations

import contextlib
import logging
import os
import socket
import ssl
import weakref
from dataclasses import dataclass

import psycopg
import pymysql

from shared.errors import OutboundRefused, SourceRefused, SourceUnreachable
from shared.outbound import OutboundPolicy

logger = logging.getLogger(__name__)

# What a URL may say besides host, port, user, password and database: TLS only, and no
# file paths (they would name files on the worker's host). postgresql: libpq's sslmode,
# and sslrootcert=system (the system's CAs); mysql: TLS verified against the system's
# CAs, with (identity) or without the host name check.
TLS_PARAMETERS: dict[str, dict[str, frozenset[str]]] = {
    "postgresql": {"sslmode": frozenset({"disable", "allow", "prefer", "require",
                                         "verify-ca", "verify-full"}),
                   "sslrootcert": frozenset({"system"})},
    "mysql": {"ssl_verify_cert": frozenset({"true", "false"}),
              "ssl_verify_identity": frozenset({"true", "false"})},
}
BACKENDS = {"postgresql": "postgresql", "mysql": "mysql", "mariadb": "mysql"}
DEFAULT_PORTS = {"postgresql": 5432, "mysql": 3306}
# MySQL errors meaning the server answered and refused the login or the database;
# PostgreSQL's: SQLSTATE classes 28 (authorization) and 3D (no such database).
_MYSQL_REFUSED = {1044, 1045, 1049, 1130, 1698}
_PG_REFUSED = ("28", "3D")
# libpq reads client certificates and passwords from the worker user's home by default;
# a tenant's server must never receive the operator's.
_NO_FILE = "/nonexistent/sunrise-no-client-file"
# Addresses of one host name tried before giving up (an IPv4 and an IPv6 address, and
# a spare of each, are what real database hosts resolve to).
MAX_ADDRESSES_TRIED = 4
# The socket each open MySQL connection runs on (pymysql names it only privately).
_MYSQL_FILENOS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


@dataclass(frozen=True)
class Endpoint:
    """What a connection is built from: no other part of the URL survives."""

    backend: str  # "postgresql" or "mysql"
    host: str
    port: int
    user: str
    password: str | None
    database: str
    tls: tuple[tuple[str, str], ...] = ()


def parse_endpoint(url, display: str) -> Endpoint:
    """The ``Endpoint`` of a SQLAlchemy ``URL``; raises SourceRefused naming what is
    refused (a query parameter, no host, a host list or path, no user or database)."""
    backend = BACKENDS.get(url.get_backend_name())
    if backend is None:
        raise SourceRefused(f"{display}: not a PostgreSQL or MySQL URL.", source=display)
    allowed = TLS_PARAMETERS[backend]
    tls = []
    for name, value in url.query.items():
        values = value if isinstance(value, tuple) else (value,)
        if name not in allowed:
            raise SourceRefused(
                f"{display}: the URL parameter {name!r} is not accepted; only "
                f"{', '.join(sorted(allowed))} may be given (docs/outbound.md).",
                source=display, parameter=name)
        if len(values) != 1 or values[0].lower() not in allowed[name]:
            raise SourceRefused(f"{display}: {name} must be one of "
                                f"{', '.join(sorted(allowed[name]))}.", source=display,
                                parameter=name)
        tls.append((name, values[0].lower()))
    host = (url.host or "").strip("[]")
    if not host:
        raise SourceRefused(f"{display} names no host; give host[:port].", source=display)
    if not all(c.isalnum() or c in "-.:" for c in host):
        raise SourceRefused(f"{display}: the host must be one name or address (no lists, "
                            "paths or sockets).", source=display)
    if not url.username or not url.database:
        raise SourceRefused(f"{display} must name a user and a database.", source=display)
    return Endpoint(backend, host, url.port or DEFAULT_PORTS[backend], url.username,
                    url.password, url.database, tuple(tls))


def check_destination(endpoint: Endpoint, policy: OutboundPolicy, display: str,
                      schemas: tuple[str, ...] = ()) -> list[str]:
    """The allowed addresses of ``endpoint``; raises SourceRefused when the policy refuses
    it, or any of ``schemas`` (MySQL: other databases on that server) is the app's."""
    try:
        addresses = policy.resolve(endpoint.host, endpoint.port, database=endpoint.database)
        for schema in schemas:
            for address in addresses:
                policy.check_address(address, endpoint.port, host=endpoint.host,
                                     database=schema)
    except OutboundRefused as exc:
        raise SourceRefused(f"{display}: {exc.detail}", source=display) from None
    return addresses


def connect(endpoint: Endpoint, policy: OutboundPolicy, display: str,
            schemas: tuple[str, ...] = ()):
    """A DBAPI connection to ``endpoint`` through the first allowed address that answers
    (of the first ``MAX_ADDRESSES_TRIED``). Raises SourceRefused or SourceUnreachable
    (one wording for every network failure)."""
    addresses = check_destination(endpoint, policy, display, schemas)
    open_one = _open_postgres if endpoint.backend == "postgresql" else _open_mysql
    refused, said = False, None
    # Each address may take the whole connect timeout: a name resolving to many silent
    # addresses would hold the caller (an API request, for run_sql) that many times over.
    for address in addresses[:MAX_ADDRESSES_TRIED]:
        try:
            return open_one(endpoint, address, policy, display)
        except SourceRefused:
            raise
        except Exception as exc:
            # A server not speaking the protocol makes a driver raise anything (struct,
            # index, decoding errors): each is "unreachable", said the same way.
            refused = refused or _credentials_refused(exc)
            said = said or _postgres_refusal(exc, endpoint.password)
            logger.info("import: cannot connect to %s at %s: %s", display, address,
                        type(exc).__name__)
    if refused:
        raise SourceUnreachable(f"Could not connect to {display}: the server refused the "
                                "user, password or database.", source=display)
    if said:
        raise SourceUnreachable(f"Could not connect to {display}: PostgreSQL refused the "
                                f"connection: {said}", source=display)
    raise SourceUnreachable(unreachable_message(display), source=display)


def unreachable_message(display: str) -> str:
    """What every network failure of a connection says (item 7 of issue 31)."""
    return (f"Could not connect to {display}: no PostgreSQL or MySQL server answered "
            "there in time.")


def _open_mysql(endpoint: Endpoint, address: str, policy: OutboundPolicy, display: str):
    tls = dict(endpoint.tls)
    context = None
    if tls.get("ssl_verify_identity") == "true" or tls.get("ssl_verify_cert") == "true":
        context = ssl.create_default_context()
        context.check_hostname = tls.get("ssl_verify_identity") == "true"
    conn = pymysql.connections.Connection(
        host=endpoint.host, port=endpoint.port, user=endpoint.user,
        password=endpoint.password or "", database=endpoint.database, charset="utf8mb4",
        connect_timeout=policy.connect_timeout_s, read_timeout=policy.read_timeout_s,
        write_timeout=policy.read_timeout_s, local_infile=False, ssl=context,
        program_name="sunrise-import", defer_connect=True)
    sock = _checked_socket(address, endpoint, policy, display)
    # Read before connecting: TLS, if any, takes the descriptor over during the handshake
    # and leaves ``sock`` detached (-1), which would mark every idle connection closed.
    fileno = sock.fileno()
    try:
        conn.connect(sock)
    except BaseException:
        sock.close()
        raise
    _MYSQL_FILENOS[conn] = fileno
    return conn


def socket_fileno(conn) -> int | None:
    """The file descriptor of the socket under a connection ``connect`` opened (-1 once
    closed), or None when it is not known (so nothing can be said of it)."""
    if isinstance(conn, psycopg.Connection):
        return -1 if conn.closed else conn.fileno()
    if isinstance(conn, pymysql.connections.Connection) and not conn.open:
        return -1
    return _MYSQL_FILENOS.get(conn)


def _checked_socket(address: str, endpoint: Endpoint, policy: OutboundPolicy,
                    display: str) -> socket.socket:
    """A TCP socket connected to ``address``, whose peer the policy allows."""
    sock = socket.create_connection((address, endpoint.port), timeout=policy.connect_timeout_s)
    try:
        policy.check_address(sock.getpeername()[0], endpoint.port, host=endpoint.host,
                             database=endpoint.database)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
    except OutboundRefused as exc:
        sock.close()
        raise SourceRefused(f"{display}: {exc.detail}", source=display) from None
    return sock


def _open_postgres(endpoint: Endpoint, address: str, policy: OutboundPolicy, display: str):
    tls = dict(endpoint.tls)
    conn = psycopg.connect(
        host=endpoint.host, hostaddr=address, port=endpoint.port, user=endpoint.user,
        password=endpoint.password or "", dbname=endpoint.database,
        # libpq counts whole seconds and takes at least 2.
        connect_timeout=max(2, round(policy.connect_timeout_s)),
        keepalives=1, keepalives_idle=30, keepalives_interval=10, keepalives_count=3,
        tcp_user_timeout=int(policy.read_timeout_s * 1000),
        application_name="sunrise-import", passfile=os.devnull, sslcert=_NO_FILE,
        sslkey=_NO_FILE, gssencmode="disable", require_auth="!gss,!sspi",
        sslmode=tls.get("sslmode", "prefer"), **({"sslrootcert": "system"}
                                                 if "sslrootcert" in tls else {}))
    try:
        policy.check_address(conn.info.hostaddr, endpoint.port, host=endpoint.host,
                             database=endpoint.database)
    except OutboundRefused as exc:
        with contextlib.suppress(psycopg.Error):
            conn.close()
        raise SourceRefused(f"{display}: {exc.detail}", source=display) from None
    return conn


def _postgres_refusal(exc: Exception, password: str | None) -> str | None:
    """PostgreSQL's own words when the server answered the connection with an error (a
    wrong password, an unknown role or database, no pg_hba.conf entry, too many
    connections). libpq keeps no SQLSTATE for start-up errors: its message carries the
    server's ``FATAL:`` line, which is what is read here. None for network failures."""
    if not isinstance(exc, psycopg.OperationalError):
        return None
    _, found, rest = str(exc).partition("FATAL:")
    line = rest.strip().splitlines()[0].strip() if found and rest.strip() else ""
    if not line:
        return None
    if password and password in line:
        return "(its message is withheld: it repeats the password)"
    return line.rstrip(".") + "."


def _credentials_refused(exc: Exception) -> bool:
    if isinstance(exc, pymysql.err.OperationalError) and exc.args:
        return exc.args[0] in _MYSQL_REFUSED
    sqlstate = getattr(exc, "sqlstate", None) or ""
    return sqlstate[:2] in _PG_REFUSED
