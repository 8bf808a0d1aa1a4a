"""Where a connection a tenant names may go: the one outbound policy.

Every outbound connection whose destination a tenant chooses (a live dataset's database,
a batch's webhook; schedule deliveries and live datasets reuse it) asks this module
first, after DNS resolution, and again at connect time with the address the socket
really uses, so a name that resolves to one address when checked and to another when
connected (DNS rebinding) gains nothing: callers connect to the addresses ``resolve``
returned, never to the name.

The rules (docs/outbound.md is the operator's page):

- public addresses are allowed;
- private (RFC 1918, ULA), loopback, link-local, CGNAT (100.64/10), unspecified,
  multicast and reserved addresses only when ``SUNRISE_OUTBOUND_ALLOW`` lists them (an
  address, a CIDR, or the host name the tenant wrote, each with an optional port);
- cloud metadata addresses only when listed as that exact address (a CIDR around them
  is not enough);
- the app's own database (host, port and database name) and Redis never, even when
  listed: they are compared by resolved address, and when they live on loopback every
  loopback and unspecified address on their port counts as them.
"""
from __future__ import annotations

import ipaddress
import logging
import socket
from dataclasses import dataclass
from urllib.parse import urlsplit

from shared.errors import OutboundRefused

logger = logging.getLogger(__name__)

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network

# Instance metadata services (AWS, GCP and Azure IMDS; AWS IPv6 IMDS; ECS task metadata;
# Alibaba; Azure's wireserver, a public address).
METADATA = frozenset(ipaddress.ip_address(a) for a in (
    "169.254.169.254", "fd00:ec2::254", "169.254.170.2", "100.100.100.200", "168.63.129.16"))
_SHARED = ipaddress.ip_network("100.64.0.0/10")
_DEFAULT_PORTS = {"mysql": 3306, "mariadb": 3306, "postgresql": 5432, "postgres": 5432,
                  "redis": 6379, "rediss": 6379}


@dataclass(frozen=True)
class AllowEntry:
    """One item of the allow list: an address range, or a host name, and maybe a port."""

    network: Network | None
    name: str | None
    port: int | None

    @classmethod
    def parse(cls, text: str) -> AllowEntry:
        """``host``, ``host:port``, ``[v6]``, ``[v6]:port``, an address or a CIDR.
        Raises ValueError for anything else."""
        text = text.strip().lower().rstrip(".")
        if "/" in text:
            return cls(ipaddress.ip_network(text, strict=False), None, None)
        host, port = text, None
        if text.startswith("["):
            host, _, rest = text[1:].partition("]")
            port = int(rest[1:]) if rest.startswith(":") else None
        elif text.count(":") == 1:
            host, _, port_text = text.partition(":")
            port = int(port_text)
        try:
            address = _plain(ipaddress.ip_address(host))
            return cls(ipaddress.ip_network(address), None, port)
        except ValueError:
            if not host or not all(c.isalnum() or c in "-._" for c in host):
                raise ValueError(f"not a host, host:port or CIDR: {text!r}") from None
            return cls(None, host, port)

    def allows(self, address: IPAddress, port: int, host: str | None) -> bool:
        if self.port is not None and self.port != port:
            return False
        if self.name is not None:
            return host is not None and _name(host) == self.name
        if address in METADATA:  # only the exact address opens a metadata service
            return self.network.num_addresses == 1 and address in self.network
        return address.version == self.network.version and address in self.network


@dataclass(frozen=True)
class Forbidden:
    """An endpoint no tenant may reach: the app's database (``database`` set: only that
    database there) or Redis (any use of the port)."""

    what: str
    addresses: frozenset[IPAddress]
    port: int
    database: str | None = None

    def covers(self, address: IPAddress, port: int, database: str | None) -> bool:
        if port != self.port:
            return False
        if database is not None and self.database is not None \
                and database.lower() != self.database.lower():
            return False
        if address in self.addresses:
            return True
        local = any(a.is_loopback or a.is_unspecified for a in self.addresses)
        return local and (address.is_loopback or address.is_unspecified)


@dataclass(frozen=True)
class OutboundPolicy:
    """The allow list and the endpoints never allowed. Picklable plain data."""

    allow: tuple[AllowEntry, ...] = ()
    forbidden: tuple[Forbidden, ...] = ()
    # How long a driver may wait to connect, and for one read or write once connected.
    connect_timeout_s: float = 10.0
    read_timeout_s: float = 300.0

    @classmethod
    def from_settings(cls, settings) -> OutboundPolicy:
        """The policy of ``settings``: ``outbound_allow`` plus the deprecated
        ``webhook_allowed_hosts``; the app database and Redis forbidden."""
        entries = [*settings.outbound_allow, *settings.webhook_allowed_hosts]
        forbidden = [_forbidden("the app's database", settings.database_url, database=True),
                     _forbidden("the app's Redis", settings.redis_url, database=False)]
        return cls(tuple(AllowEntry.parse(e) for e in entries if e.strip()),
                   tuple(f for f in forbidden if f is not None),
                   settings.outbound_connect_timeout_s, settings.outbound_read_timeout_s)

    def resolve(self, host: str, port: int, *, database: str | None = None) -> list[str]:
        """The addresses ``host`` resolves to, each checked (see ``check_address``); the
        caller connects to these, not to ``host``. ``database`` names the database a
        connection opens (None: not a database connection). Raises OutboundRefused when
        the name does not resolve or any of its addresses is refused."""
        if not host:
            raise OutboundRefused("The destination names no host.")
        try:
            infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except (OSError, UnicodeError):
            raise OutboundRefused(f"The host {host!r} cannot be resolved.") from None
        addresses = list(dict.fromkeys(info[4][0] for info in infos))
        for address in addresses:
            self.check_address(address, port, host=host, database=database)
        return addresses

    def check_address(self, ip: str, port: int, *, host: str | None = None,
                      database: str | None = None) -> None:
        """Raise OutboundRefused unless a connection to ``ip``:``port`` (reached through
        the name ``host``, for ``database``) is allowed. Call it with the address a socket
        is really connected to."""
        address = _plain(ipaddress.ip_address(ip.split("%", 1)[0]))
        shown = host or str(address)
        for endpoint in self.forbidden:
            if endpoint.covers(address, port, database):
                logger.warning("outbound: refused %s:%s (%s): %s", shown, port, address,
                               endpoint.what)
                raise OutboundRefused(f"{shown}:{port} is {endpoint.what}; it is never a "
                                      "destination.")
        kind = restricted_kind(address)
        if kind is None or any(e.allows(address, port, host) for e in self.allow):
            return
        logger.info("outbound: refused %s:%s (%s, %s)", shown, port, address, kind)
        raise OutboundRefused(f"{shown}:{port} is a {kind} address; the operator must list it "
                              "in SUNRISE_OUTBOUND_ALLOW.")


def restricted_kind(address: IPAddress) -> str | None:
    """Why ``address`` needs listing (e.g. "loopback"), or None for a public address."""
    address = _plain(address)
    embedded = _embedded_ipv4(address)
    if embedded is not None and restricted_kind(embedded):
        return restricted_kind(embedded)
    for kind, test in (("cloud metadata", lambda a: a in METADATA),
                       ("loopback", lambda a: a.is_loopback),
                       ("unspecified", lambda a: a.is_unspecified),
                       ("link-local", lambda a: a.is_link_local),
                       ("multicast", lambda a: a.is_multicast),
                       ("shared (CGNAT)", lambda a: a.version == 4 and a in _SHARED),
                       ("reserved", lambda a: a.is_reserved),
                       ("private", lambda a: a.is_private),
                       ("reserved", lambda a: not a.is_global)):
        if test(address):
            return kind
    return None


def endpoint_of(url: str) -> tuple[str, int] | None:
    """(host, port) of a URL with a host (the scheme's usual port when none is given)."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.split("+", 1)[0].lower()
    if not parts.hostname:
        return None
    return parts.hostname, port or _DEFAULT_PORTS.get(scheme, 0)


def _forbidden(what: str, url: str, *, database: bool) -> Forbidden | None:
    endpoint = endpoint_of(url)
    if endpoint is None:  # sqlite, a Unix socket: nothing reachable over TCP
        return None
    host, port = endpoint
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        addresses = {_plain(ipaddress.ip_address(i[4][0].split("%", 1)[0])) for i in infos}
    except (OSError, UnicodeError, ValueError):
        # Unresolvable here: nothing can reach it by that name either; keep the literal.
        addresses = set()
    name = urlsplit(url).path.lstrip("/").split("/", 1)[0] if database else None
    return Forbidden(what, frozenset(addresses), port, name or None)


def _plain(address: IPAddress) -> IPAddress:
    """An IPv4-mapped IPv6 address as the IPv4 address it is."""
    if address.version == 6 and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def _embedded_ipv4(address: IPAddress) -> ipaddress.IPv4Address | None:
    """The IPv4 address inside a 6to4 or NAT64 (64:ff9b::/96) address."""
    if address.version != 6:
        return None
    if address.sixtofour is not None:
        return address.sixtofour
    if address in ipaddress.ip_network("64:ff9b::/96"):
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return None


def _name(host: str) -> str:
    return host.strip().lower().rstrip(".")
