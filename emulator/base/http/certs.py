"""The throw-away TLS identity ``serve`` listens with when clients must send a token.

Why TLS at all: kubectl (client-go) sends a kubeconfig's credentials only over TLS; against
an ``http://`` server it drops the bearer token and every request is 401. So when a token is
required, ``serve`` listens on ``https://`` with a certificate made for this run: a
self-signed CA (in the kubeconfig as ``certificate-authority-data``, so clients verify the
server as they verify a real cluster's) and a server certificate it signs for the loopback
names and the listen address. Keys are fresh per run (``secrets``-grade, not the scenario's
seed: they are not simulation state) and never written anywhere but a private temporary
directory that is removed as soon as the server's ``SSLContext`` has loaded them.

This module owns making the certificates and the server's ``SSLContext``. It does not own
whether TLS is used (``serve.py``) nor the kubeconfig (``kubeconfig.py``).
"""

from __future__ import annotations

import datetime as dt
import ipaddress
import ssl
import tempfile
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

__all__ = ["Identity", "make_identity", "server_context"]

VALIDITY = dt.timedelta(days=7)
"""Long enough for any session; the certificates die with the process anyway."""


@dataclass(frozen=True, slots=True)
class Identity:
    ca_pem: bytes
    """The CA certificate (PEM), for the kubeconfig's ``certificate-authority-data``."""
    cert_pem: bytes
    """The server's certificate (PEM), signed by the CA."""
    key_pem: bytes
    """The server's private key (PEM, unencrypted)."""


def _names(address: str) -> list[x509.GeneralName]:
    names: list[x509.GeneralName] = [
        x509.DNSName("localhost"),
        x509.IPAddress(ipaddress.ip_address("127.0.0.1")),
        x509.IPAddress(ipaddress.ip_address("::1")),
    ]
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        if address and address != "localhost":
            names.append(x509.DNSName(address))
    else:
        if not ip.is_loopback:
            names.append(x509.IPAddress(ip))
    return names


def make_identity(address: str, *, now: dt.datetime | None = None) -> Identity:
    """A fresh CA and a server certificate valid for loopback and ``address``.

    ``now`` (default: the wall clock, as certificate validity is about real time, not the
    simulation's) starts the validity period, an hour early to absorb clock skew.
    """
    start = (now or dt.datetime.now(dt.UTC)) - dt.timedelta(hours=1)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "kube-emulator-ca")])
    ca_ski = x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key())
    ca = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(start)
        .not_valid_after(start + VALIDITY)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            _key_usage(ca=True),
            critical=True,
        )
        .add_extension(ca_ski, critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "kube-apiserver")]))
        .issuer_name(ca_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(start)
        .not_valid_after(start + VALIDITY)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(
            _key_usage(ca=False),
            critical=True,
        )
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(x509.SubjectAlternativeName(_names(address)), critical=False)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_subject_key_identifier(ca_ski), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    return Identity(
        ca_pem=ca.public_bytes(serialization.Encoding.PEM),
        cert_pem=cert.public_bytes(serialization.Encoding.PEM),
        key_pem=key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        ),
    )


def server_context(identity: Identity) -> ssl.SSLContext:
    """The server side ``SSLContext`` for ``identity`` (TLS 1.2 or later)."""
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    # ``load_cert_chain`` reads files only: a private directory (mode 0700), gone at once.
    with tempfile.TemporaryDirectory(prefix="kube-emulator-tls-") as tmp:
        chain, key = Path(tmp) / "server.crt", Path(tmp) / "server.key"
        chain.write_bytes(identity.cert_pem + identity.ca_pem)
        key.touch(mode=0o600)
        key.write_bytes(identity.key_pem)
        context.load_cert_chain(chain, key)
    return context


def _key_usage(*, ca: bool) -> x509.KeyUsage:
    """Digital signature for both; certificate and CRL signing for the CA only."""
    return x509.KeyUsage(
        digital_signature=True,
        content_commitment=False,
        key_encipherment=False,
        data_encipherment=False,
        key_agreement=False,
        key_cert_sign=ca,
        crl_sign=ca,
        encipher_only=False,
        decipher_only=False,
    )
