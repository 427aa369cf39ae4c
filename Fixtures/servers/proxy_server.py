#!/usr/bin/env python3
"""Bluebonnet's HTTP proxy fixture: forwards absolute-form requests and opens CONNECT tunnels.

  python3 proxy_server.py [--port 0] [--log FILE] [--auth USER:PASS] [--refuse-connect STATUS]
                          [--stall-connect] [--drop-connect WHEN] [--tls CERT KEY]
                          [--tls-origin CERT KEY]

Python 3.11 standard library only. Binds 127.0.0.1 only; with --port 0 (the default) the OS picks
the port. The first line on stdout is `LISTENING <port>` (flushed), the readiness signal; with
--tls-origin it reads `LISTENING <port> ORIGIN <tls-port>`. Stops on SIGTERM/SIGINT.

What it does (RFC 9110 §3.7, §9.3.6; RFC 9112 §3.2):

- `GET http://host:port/path HTTP/1.1` (absolute-form, any method): forwarded to the origin with an
  origin-form request line over a fresh connection; `Proxy-Authorization`, `Proxy-Connection` and
  the hop-by-hop fields are not forwarded. The origin's whole response comes back with
  `Content-Length` (its chunking undone, its content coding untouched); the client connection stays
  open unless the client asks to close (keep-alive, so tests can see reuse).
- `CONNECT host:port HTTP/1.1`: connects to host:port, answers `200 Connection established`, then
  copies bytes both ways until either side closes. Only loopback targets are allowed (403 otherwise).
- A request in origin-form (not meant for a proxy) gets 400.
- --auth USER:PASS: every request must carry `Proxy-Authorization: Basic base64(USER:PASS)`, or it
  gets `407 Proxy Authentication Required` with `Proxy-Authenticate: Basic realm="fixture"` and a
  body (which a client must never show as the origin's response).
- --refuse-connect STATUS (403 or 407): every CONNECT is answered STATUS with a body, then closed.
- --stall-connect: every CONNECT is read and logged, then never answered (the client's timeout);
  the connection closes when the client closes it.
- --drop-connect before|after: a proxy that drops the tunnel. `before`: every CONNECT is read and
  logged, then the connection is closed (FIN) without an answer. `after`: the target is connected
  to and `200 Connection established` sent, then the client's first record (a TLS ClientHello)
  is read and both connections are closed (FIN) before a byte is relayed.
- --tls CERT KEY: the proxy itself speaks TLS (an `https://` proxy) on its port.
- --log FILE: one JSON object per request line received, written and flushed before the request is
  acted on: {"conn": n, "method", "target", "version", "headers": [[name, value], ...], "action"},
  where conn numbers client connections from 1 and action is forward, tunnel, refused, stalled,
  dropped or bad.
- --tls-origin CERT KEY: also serve HTTPS on another loopback port (the "origin" behind a
  tunnel): every request gets 200 JSON {"conn", "request_index", "method", "target", "headers"},
  keep-alive. It shows what arrived inside the tunnel (`Proxy-Authorization` must not).
"""
import argparse
import asyncio
import base64
import ipaddress
import json
import signal
import ssl
import sys
from urllib.parse import urlsplit

from http_head import BadRequest, parse_head

MAX_HEAD = 64 * 1024
HOP_BY_HOP = {
    "connection", "keep-alive", "proxy-authorization", "proxy-authenticate", "proxy-connection",
    "te", "trailer", "transfer-encoding", "upgrade",
}


def header(headers, name):
    for key, value in headers:
        if key.lower() == name:
            return value
    return None


def wants_close(version, headers):
    tokens = [t.strip().lower() for t in (header(headers, "connection") or "").split(",")]
    if "close" in tokens:
        return True
    return version == "HTTP/1.0" and "keep-alive" not in tokens


def is_loopback(host):
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


class Proxy:
    def __init__(self, args):
        self.args = args
        self.connections = 0
        self.log = open(args.log, "a", buffering=1) if args.log else None
        self.expected_auth = None
        if args.auth:
            self.expected_auth = "Basic " + base64.b64encode(args.auth.encode()).decode()

    def record(self, conn, method, target, version, headers, action):
        if self.log:
            entry = {"conn": conn, "method": method, "target": target, "version": version,
                     "headers": [[n, v] for n, v in headers], "action": action}
            self.log.write(json.dumps(entry) + "\n")
            self.log.flush()

    async def handle(self, reader, writer):
        self.connections += 1
        conn = self.connections
        try:
            while True:
                try:
                    raw = await reader.readuntil(b"\r\n\r\n")
                except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
                    return
                try:
                    method, target, version, headers = parse_head(raw[:-4])
                except BadRequest:
                    await self.answer(writer, 400, "Bad Request", b"bad request\n", close=True)
                    return
                refusal = self.refusal(method, headers)
                if refusal is not None:
                    self.record(conn, method, target, version, headers, "refused")
                    status, reason, extra = refusal
                    await self.answer(writer, status, reason, b"refused by the proxy fixture\n", extra, close=True)
                    return
                if method == "CONNECT" and self.args.stall_connect:
                    self.record(conn, method, target, version, headers, "stalled")
                    await reader.read()
                    return
                if method == "CONNECT" and self.args.drop_connect == "before":
                    self.record(conn, method, target, version, headers, "dropped")
                    return
                if method == "CONNECT":
                    self.record(conn, method, target, version, headers, "tunnel")
                    await self.tunnel(target, reader, writer)
                    return
                if not target.lower().startswith("http://"):
                    self.record(conn, method, target, version, headers, "bad")
                    await self.answer(writer, 400, "Bad Request", b"absolute-form expected\n", close=True)
                    return
                self.record(conn, method, target, version, headers, "forward")
                close = wants_close(version, headers)
                await self.forward(method, target, headers, reader, writer, close)
                if close:
                    return
        finally:
            writer.close()

    def refusal(self, method, headers):
        if method == "CONNECT" and self.args.refuse_connect:
            status = self.args.refuse_connect
            if status == 407:
                return 407, "Proxy Authentication Required", [("Proxy-Authenticate", 'Basic realm="fixture"')]
            return status, "Forbidden", []
        if self.expected_auth and header(headers, "proxy-authorization") != self.expected_auth:
            return 407, "Proxy Authentication Required", [("Proxy-Authenticate", 'Basic realm="fixture"')]
        return None

    async def answer(self, writer, status, reason, body, extra=(), close=False):
        lines = [f"HTTP/1.1 {status} {reason}", "Content-Type: text/plain", f"Content-Length: {len(body)}"]
        lines += [f"{n}: {v}" for n, v in extra]
        if close:
            lines.append("Connection: close")
        writer.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body)
        await writer.drain()

    async def tunnel(self, target, reader, writer):
        host, _, port = target.rpartition(":")
        if not host or not port.isdigit() or not is_loopback(host):
            await self.answer(writer, 403, "Forbidden", b"only loopback targets\n", close=True)
            return
        try:
            up_reader, up_writer = await asyncio.open_connection(host.strip("[]"), int(port))
        except OSError:
            await self.answer(writer, 502, "Bad Gateway", b"cannot reach the target\n", close=True)
            return
        writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
        await writer.drain()
        if self.args.drop_connect == "after":
            # Read the client's first record (its TLS ClientHello) so that the close is a FIN,
            # not a reset for unread bytes, then drop both sides.
            up_writer.close()
            try:
                header = await reader.readexactly(5)
                await reader.readexactly(int.from_bytes(header[3:5], "big"))
            except (asyncio.IncompleteReadError, ConnectionError):
                pass
            return

        async def pipe(source, sink):
            try:
                while data := await source.read(65536):
                    sink.write(data)
                    await sink.drain()
            except (ConnectionError, asyncio.CancelledError):
                pass
            finally:
                try:
                    sink.write_eof()
                except (OSError, RuntimeError):
                    pass

        await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))
        up_writer.close()

    async def forward(self, method, target, headers, reader, writer, close):
        length = header(headers, "content-length")
        if header(headers, "transfer-encoding"):
            await self.answer(writer, 501, "Not Implemented", b"chunked request bodies are not forwarded\n", close=True)
            return
        body = await reader.readexactly(int(length)) if length else b""
        url = urlsplit(target)
        if not url.hostname or not is_loopback(url.hostname):
            await self.answer(writer, 403, "Forbidden", b"only loopback origins\n", close=close)
            return
        path = (url.path or "/") + (f"?{url.query}" if url.query else "")
        lines = [f"{method} {path} HTTP/1.1"]
        lines += [f"{n}: {v}" for n, v in headers if n.lower() not in HOP_BY_HOP]
        lines.append("Connection: close")
        try:
            up_reader, up_writer = await asyncio.open_connection(url.hostname, url.port or 80)
        except OSError:
            await self.answer(writer, 502, "Bad Gateway", b"cannot reach the origin\n", close=close)
            return
        up_writer.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body)
        await up_writer.drain()
        status_head = await up_reader.readuntil(b"\r\n\r\n")
        status_line, _, rest = status_head[:-4].decode("latin-1").partition("\r\n")
        response_headers = [tuple(x.strip(" \t") for x in line.split(":", 1)) for line in rest.split("\r\n") if line]
        if method == "HEAD" or status_line.split(" ")[1] in ("204", "304"):
            content = b""
        elif header(response_headers, "transfer-encoding"):
            content = await self.read_chunked(up_reader)
        elif header(response_headers, "content-length") is not None:
            content = await up_reader.readexactly(int(header(response_headers, "content-length")))
        else:
            content = await up_reader.read()
        up_writer.close()
        kept = [(n, v) for n, v in response_headers if n.lower() not in HOP_BY_HOP and n.lower() != "content-length"]
        if method != "HEAD":
            kept.append(("Content-Length", str(len(content))))
        elif header(response_headers, "content-length") is not None:
            kept.append(("Content-Length", header(response_headers, "content-length")))
        if close:
            kept.append(("Connection", "close"))
        out = status_line + "\r\n" + "".join(f"{n}: {v}\r\n" for n, v in kept) + "\r\n"
        writer.write(out.encode("latin-1") + content)
        await writer.drain()

    @staticmethod
    async def read_chunked(reader):
        content = b""
        while True:
            size = int((await reader.readuntil(b"\r\n")).split(b";")[0].strip(), 16)
            if size == 0:
                while (await reader.readuntil(b"\r\n")) != b"\r\n":
                    pass
                return content
            content += await reader.readexactly(size)
            await reader.readexactly(2)


class EchoOrigin:
    """HTTPS origin for tunnels: answers every request with what it received, as JSON."""

    def __init__(self):
        self.connections = 0

    async def handle(self, reader, writer):
        self.connections += 1
        conn = self.connections
        index = 0
        try:
            while True:
                try:
                    raw = await reader.readuntil(b"\r\n\r\n")
                    method, target, version, headers = parse_head(raw[:-4])
                except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError, BadRequest):
                    return
                length = header(headers, "content-length")
                if length:
                    await reader.readexactly(int(length))
                index += 1
                body = json.dumps({"conn": conn, "request_index": index, "method": method, "target": target,
                                   "headers": [[n, v] for n, v in headers]}).encode()
                close = wants_close(version, headers)
                head = ["HTTP/1.1 200 OK", "Content-Type: application/json", f"Content-Length: {len(body)}"]
                if close:
                    head.append("Connection: close")
                writer.write(("\r\n".join(head) + "\r\n\r\n").encode() + body)
                await writer.drain()
                if close:
                    return
        finally:
            writer.close()


async def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--port", type=int, default=0, help="0 = the OS picks (printed as LISTENING <port>)")
    ap.add_argument("--log", default=None, help="append one JSON line per request received")
    ap.add_argument("--auth", default=None, help="USER:PASS required as Proxy-Authorization: Basic")
    ap.add_argument("--refuse-connect", type=int, choices=[403, 407], default=None, help="answer every CONNECT so")
    ap.add_argument("--stall-connect", action="store_true", help="never answer CONNECT")
    ap.add_argument("--drop-connect", choices=["before", "after"], default=None,
                    help="close every CONNECT before answering it, or right after its 200")
    ap.add_argument("--tls", nargs=2, metavar=("CERT", "KEY"), default=None, help="serve the proxy itself over TLS")
    ap.add_argument("--tls-origin", nargs=2, metavar=("CERT", "KEY"), default=None, help="also serve an HTTPS echo origin")
    args = ap.parse_args()

    proxy = Proxy(args)
    proxy_tls = None
    if args.tls:
        proxy_tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        proxy_tls.load_cert_chain(args.tls[0], args.tls[1])
    server = await asyncio.start_server(proxy.handle, "127.0.0.1", args.port, ssl=proxy_tls, limit=MAX_HEAD)
    port = server.sockets[0].getsockname()[1]
    line = f"LISTENING {port}"
    servers = [server]
    if args.tls_origin:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(args.tls_origin[0], args.tls_origin[1])
        origin = await asyncio.start_server(EchoOrigin().handle, "127.0.0.1", 0, ssl=context, limit=MAX_HEAD)
        servers.append(origin)
        line += f" ORIGIN {origin.sockets[0].getsockname()[1]}"
    print(line, flush=True)

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    for s in servers:
        s.close()


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        pass
    sys.exit(0)
