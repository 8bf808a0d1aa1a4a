"""A loopback TLS terminator in front of a plain server, for testing TLS clients
(rediss://) against the real Redis without a TLS-enabled Redis on the machine.

Each client's TLS session ends in the proxy; the bytes go on in the clear to the
target. Whatever the target writes at once reaches the client as one TLS record
(one ``sendall``), which lets a test put bytes in a client's TLS buffer on purpose.
"""
from __future__ import annotations

import datetime as dt
import ipaddress
import socket
import ssl
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from tests.utils.tcp_proxy import TcpProxy

HANDSHAKE_TIMEOUT_S = 5


def self_signed_certificate(directory: Path) -> tuple[Path, Path]:
    """Write a certificate for 127.0.0.1 (and ``localhost``) and its key into
    ``directory``; return their paths. The certificate is its own CA: a client that
    trusts it (``ssl_ca_certs``) verifies the proxy, with its host name."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "sunrise test TLS proxy")])
    now = dt.datetime.now(dt.UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name).issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([
            x509.IPAddress(ipaddress.ip_address("127.0.0.1")), x509.DNSName("localhost"),
        ]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = directory / "proxy-cert.pem", directory / "proxy-key.pem"
    cert_path.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption()))
    return cert_path, key_path


class TlsProxy(TcpProxy):
    """Serves TLS on ``127.0.0.1:<port>`` with ``cert_path``/``key_path`` and forwards
    the decrypted stream to ``target``; a client that fails the handshake is dropped."""

    def __init__(self, target_host: str, target_port: int, cert_path: Path, key_path: Path):
        super().__init__(target_host, target_port)
        self._context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        self._context.load_cert_chain(cert_path, key_path)

    def _accepted(self, client: socket.socket) -> socket.socket:
        client.settimeout(HANDSHAKE_TIMEOUT_S)
        return self._context.wrap_socket(client, server_side=True)
