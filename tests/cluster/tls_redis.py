"""A redis-server that speaks only TLS, on a free port, with a self-signed certificate made here (the
`cryptography` package): for the `rediss://` tests."""

from __future__ import annotations

import datetime
import ipaddress
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from cluster.parts import find_binary, free_port
from mcpkit.cluster import RedisBackplane, StoreRefused


def self_signed(directory: Path, dns_name: str | None = None) -> tuple[Path, Path]:
    """A certificate for 127.0.0.1 (or only for the host name `dns_name`) and its key, made here (the
    cryptography package)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, dns_name or "127.0.0.1")])
    alternative = x509.DNSName(dns_name) if dns_name else x509.IPAddress(ipaddress.ip_address("127.0.0.1"))
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([alternative]), False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = directory / "redis.crt", directory / "redis.key"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    return cert_path, key_path


@contextmanager
def tls_redis(directory: Path) -> Iterator[str]:
    """A redis-server speaking only TLS on a free port; yields its rediss:// URL trusting its certificate."""
    cert, key = self_signed(directory)
    port = free_port()
    argv = [find_binary("redis-server", "redis-server"), "--port", "0", "--tls-port", str(port)]
    argv += ["--tls-cert-file", str(cert), "--tls-key-file", str(key), "--tls-ca-cert-file", str(cert)]
    argv += ["--tls-auth-clients", "no", "--bind", "127.0.0.1", "--save", "", "--dir", str(directory)]
    log = directory / "redis-tls.log"
    with log.open("wb") as sink:
        process = subprocess.Popen(argv, stdout=sink, stderr=subprocess.STDOUT)
    url = f"rediss://127.0.0.1:{port}/0?ssl_ca_certs={cert}"
    try:
        _wait(url, process)
        yield url
    finally:
        process.terminate()
        process.wait(10)


def _wait(url: str, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 20
    while True:
        assert process.poll() is None, "redis-server with TLS exited (built without TLS?)"
        try:
            RedisBackplane(url).check()
            return
        except StoreRefused:
            assert time.monotonic() < deadline, "redis-server with TLS did not answer within 20 s"
            time.sleep(0.05)
