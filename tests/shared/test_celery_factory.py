"""The Celery app's broker connection keeps what the URL asks for: our transport for
redis:// and rediss://, and TLS, with the certificate checked, for rediss://."""
from __future__ import annotations

import ssl

import pytest
from kombu.exceptions import OperationalError

from shared.broker_transport import Transport
from shared.celery_factory import make_celery
from shared.config import Settings
from tests.utils.redis_urls import tls_url


def _broker(url: str):
    """A broker connection of the app made for ``url`` (not yet connected)."""
    app = make_celery(Settings(redis_url=url))
    # A handshake that gets no answer, or a refused certificate, fails the test at once.
    app.conf.broker_transport_options.update(socket_connect_timeout=0.5, socket_timeout=0.5,
                                             max_retries=0)
    return app.connection_for_write()


def test_a_redis_url_uses_our_transport_in_the_clear(redis_url):
    with _broker(redis_url) as conn:
        assert isinstance(conn.transport, Transport)
        assert not conn.ssl
        assert conn.default_channel.client.ping() is True


def test_a_rediss_url_uses_our_transport_and_checks_the_certificate(redis_url):
    with _broker(tls_url(redis_url)) as conn:
        assert isinstance(conn.transport, Transport)
        assert conn.ssl == {"ssl_cert_reqs": ssl.CERT_REQUIRED}


def test_the_urls_ssl_parameters_win(redis_url):
    url = tls_url(redis_url, ssl_cert_reqs="none", ssl_ca_certs="/etc/sunrise/ca.pem")
    with _broker(url) as conn:
        assert conn.ssl == {"ssl_cert_reqs": ssl.CERT_NONE, "ssl_ca_certs": "/etc/sunrise/ca.pem"}


def test_rediss_to_a_plain_redis_fails_rather_than_talking_in_the_clear(redis_url):
    with (_broker(tls_url(redis_url, ssl_cert_reqs="none")) as conn,
          pytest.raises(OperationalError, match="Timeout connecting")):
        conn.default_channel.client.ping()


def test_the_broker_talks_tls_and_checks_the_certificate(redis_url, tls_proxy):
    url = tls_url(redis_url, tls_proxy.port, ssl_ca_certs=str(tls_proxy.cert_path))
    with _broker(url) as conn:
        client = conn.default_channel.client
        assert client.ping() is True
        pooled = client.connection_pool.get_connection()
        try:
            assert isinstance(pooled._sock, ssl.SSLSocket)
        finally:
            client.connection_pool.release(pooled)
    with (_broker(tls_url(redis_url, tls_proxy.port)) as conn,
          pytest.raises(OperationalError, match="CERTIFICATE_VERIFY_FAILED")):
        conn.default_channel.client.ping()
