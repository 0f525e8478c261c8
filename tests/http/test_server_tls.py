"""HTTPS: kubectl sends a kubeconfig's bearer token only over TLS, so ``HttpSettings``
takes an ``ssl_context``; the URL handed to ``on_ready`` is then ``https://``."""

from __future__ import annotations

import asyncio
import datetime
import ipaddress
import ssl
from pathlib import Path

import aiohttp
import pytest

from emulator.base.http.server import HttpApi, HttpSettings
from tests.http.server_support import new_api

x509 = pytest.importorskip("cryptography.x509", reason="cryptography makes the test certificate")

pytestmark = [pytest.mark.asyncio, pytest.mark.real_time]


def _self_signed(tmp: Path) -> ssl.SSLContext:
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "emulator")])
    start = datetime.datetime(2020, 1, 1, tzinfo=datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(1)
        .not_valid_before(start)
        .not_valid_after(start + datetime.timedelta(days=36500))
        .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), False)
        .sign(key, hashes.SHA256())
    )
    (tmp / "cert.pem").write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    (tmp / "key.pem").write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ctx.load_cert_chain(tmp / "cert.pem", tmp / "key.pem")
    return ctx


async def test_https_with_a_bearer_token(tmp_path: Path) -> None:
    http = HttpApi(new_api(), HttpSettings(port=0, token="t0k", ssl_context=_self_signed(tmp_path)))
    ready: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    client_ctx = ssl.create_default_context(cafile=str(tmp_path / "cert.pem"))
    async with asyncio.TaskGroup() as tg:
        task = tg.create_task(http.serve(ready.set_result), name="http:serve")
        url = await ready
        assert url.startswith("https://127.0.0.1:")
        async with aiohttp.ClientSession() as session:
            for token, code in (("t0k", 200), ("nope", 401)):
                headers = {"Authorization": f"Bearer {token}"}
                async with session.get(f"{url}/api/v1/nodes", headers=headers, ssl=client_ctx) as resp:
                    assert resp.status == code
        task.cancel()
