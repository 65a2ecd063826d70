"""Move bytes over QUIC with aioquic, for an emulation's worked example.

    python examples/quic_transfer.py server [--port 4433] [--bytes N]
    python examples/quic_transfer.py client HOST [--port 4433]

The server sends N bytes on one stream to each client that opens one and
closes it; the client prints the bytes it received, the time it took and
the goodput. A self-signed certificate is made at start (the client does
not verify it: the point is the transport, not the identity).
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import ssl
import tempfile
import time
from pathlib import Path

from aioquic.asyncio import QuicConnectionProtocol, connect, serve
from aioquic.quic.configuration import QuicConfiguration
from aioquic.quic.events import StreamDataReceived

ALPN = ["satqm-transfer"]


def _certificate(directory: Path) -> tuple[Path, Path]:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "satqm")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .sign(key, hashes.SHA256())
    )
    c, k = directory / "cert.pem", directory / "key.pem"
    c.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    k.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return c, k


class Sender(QuicConnectionProtocol):
    """Server side: answer a client's stream with `size` bytes."""

    size = 0

    def quic_event_received(self, event: object) -> None:
        if isinstance(event, StreamDataReceived) and event.end_stream:
            self._quic.send_stream_data(event.stream_id, b"q" * self.size, end_stream=True)
            self.transmit()


class Receiver(QuicConnectionProtocol):
    """Client side: count the bytes of the answer until its end."""

    def __init__(self, *args: object, **kw: object) -> None:
        super().__init__(*args, **kw)
        self.received = 0
        self.done = asyncio.get_event_loop().create_future()

    def quic_event_received(self, event: object) -> None:
        if isinstance(event, StreamDataReceived):
            self.received += len(event.data)
            if event.end_stream and not self.done.done():
                self.done.set_result(self.received)


async def run_server(port: int, size: int) -> None:
    with tempfile.TemporaryDirectory() as d:
        cert, key = _certificate(Path(d))
        config = QuicConfiguration(is_client=False, alpn_protocols=ALPN)
        config.load_cert_chain(cert, key)
        Sender.size = size
        await serve("0.0.0.0", port, configuration=config, create_protocol=Sender)
        await asyncio.Future()


async def run_client(host: str, port: int) -> None:
    config = QuicConfiguration(is_client=True, alpn_protocols=ALPN, verify_mode=ssl.CERT_NONE)
    t0 = time.monotonic()
    async with connect(host, port, configuration=config, create_protocol=Receiver) as c:
        stream = c._quic.get_next_available_stream_id()
        c._quic.send_stream_data(stream, b"get", end_stream=True)
        c.transmit()
        n = await c.done
    dt = time.monotonic() - t0
    print(f"received {n} bytes in {dt:.3f} s: {n * 8 / dt / 1e6:.3f} Mbit/s", flush=True)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="role", required=True)
    s = sub.add_parser("server")
    s.add_argument("--port", type=int, default=4433)
    s.add_argument("--bytes", type=int, default=1_000_000)
    c = sub.add_parser("client")
    c.add_argument("host")
    c.add_argument("--port", type=int, default=4433)
    a = p.parse_args()
    if a.role == "server":
        asyncio.run(run_server(a.port, a.bytes))
    else:
        asyncio.run(run_client(a.host, a.port))


if __name__ == "__main__":
    main()
