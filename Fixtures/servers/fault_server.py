#!/usr/bin/env python3
"""Bluebonnet's fault server: a raw-TCP HTTP/1.1 server that misbehaves on purpose.

  python3 fault_server.py [--host 127.0.0.1] [--port 0] [--also-ipv6]

Python 3.11 standard library only. Binds loopback only (127.0.0.0/8 or ::1; any other --host is
refused). With --port 0 (the default) the OS picks the port. The first line on stdout is always
`LISTENING <port>` (flushed): that line is the readiness signal. With --also-ipv6 the same port is
also bound on ::1 when the machine has IPv6 (best effort; the line then reads
`LISTENING <port> ipv6`). With --unix PATH the same paths are also served on that Unix-domain
socket (`LISTENING <port> unix`). Stops on SIGTERM/SIGINT: closes every connection and exits 0.

Every connection reads the request head properly (up to 64 KiB) and, for the paths that answer,
the whole body (Content-Length or chunked; `Expect: 100-continue` gets `100 Continue` first)
before it acts. HTTP/1.1 connections stay open unless the client sends `Connection: close`;
HTTP/1.0 ones close unless it sends `Connection: keep-alive`. HEAD gets the same head, no body.
Body bytes are the pattern `0123456789abcdef` repeated, so truncation is easy to see.

| path (query)                         | behaviour |
|--------------------------------------|-----------|
| /ok?size=N                           | 200, Content-Length N (default 2: "ok"), keep-alive |
| /conn                                | 200 JSON {"conn": n, "request_index": k}: n numbers TCP connections (1 = first accepted), k counts requests on this one (1 = fresh) |
| /close-idle?after_ms=D               | 200 keep-alive, then FIN once the connection has been idle D ms (default 100); a request arriving earlier is served and the idle limit stays D |
| /close-after-response                | 200 with `Connection: keep-alive`, then FIN at once (a stale pooled connection) |
| /rst-after-response                  | 200 with `Connection: keep-alive`, then RST (SO_LINGER 0) once the client has ACKed the response |
| /close-on-next-request?together=N    | 200 keep-alive (with N > 1: only once N such requests have arrived, at most 10 s, so that N concurrent requests surely hold N connections); the next request on the connection is read whole, then FIN without an answer (the server closed an idle connection just as the client reused it, RFC 9112 §9.3.1, made deterministic) |
| /reset-mid-body?size=N&after=K       | Content-Length N (default 1000), K bytes (default N/2), RST after they are ACKed |
| /close-mid-body?size=N&after=K       | same, FIN instead of RST |
| /chunked-truncated                   | chunked body, three chunks, no last chunk, then FIN |
| /stall-head                          | reads the whole request (and anything after it), never answers; closes when the client does |
| /accept-never-answer                 | reads the head only (routing needs it), then neither reads nor answers; closes after --hold s |
| /stall-body?size=N&after=K           | head with Content-Length N (default 1000) + K bytes (default N/2), then nothing; closes when the client does |
| /slow?bytes_per_s=B&size=N           | Content-Length N (default 1000) sent at about B bytes/s (default 1000), 20 ms steps |
| /no-read                             | reads the head only, shrinks the socket's SO_RCVBUF to 4 KiB and stops reading, never answers: a large upload blocks (idle-write timeout); closes after --hold s |
| /resumable?size=N&cut=K&etag=E&lm=0  | a resumable resource: N bytes of the pattern (default 100000) with `ETag: "E"` (default `v1`; `W/"E"` when `weak=1`) and, unless `lm=0`, a fixed `Last-Modified`; `Accept-Ranges: bytes`. `Range: bytes=S-` (and `S-E`) gets 206 with `Content-Range` when `If-Range` is absent or matches, the whole 200 otherwise; a range past the end gets 416 with `Content-Range: bytes */N`. With `cut=K`, a response that starts at byte 0 sends only K body bytes, then FIN (a download cut once, so a resumed request completes); with `hold=1` it stalls there instead, until the client closes |
| /form                                | reads a multipart/form-data body (at most 64 MiB) and answers JSON {"multipart", "defects", "body_length", "parts": [{"name", "filename", "content_type", "length", "sha256"}]} as Python's standard `email` parser reads it (an independent check of what a client sends), keep-alive |
| /garbage                             | 1 KiB of deterministic random-looking non-HTTP bytes, then FIN |
| /raw?b64=DATA                        | exactly the base64-decoded DATA (standard or URL-safe alphabet, padding optional), then FIN |
| /echo                                | 200 JSON {"method", "target", "version", "headers": [[name, value], ...], "body_length", "body_sha256"}, keep-alive |
| /redirect?to=URL&status=S            | S (default 302) with `Location: URL`, empty body |
| /status/S?retry_after=V              | status S with a short text body (none for 1xx/204/304); with `retry_after`, a `Retry-After: V` field |
| /hits?path=P                         | 200 JSON {"hits": n}: how many requests for path P (without its query) this server has read so far, this one aside |
| /received?path=P                     | 200 JSON {"hits": n, "received": m}: n as /hits gives it; m also counts the requests for P it read and then dropped unanswered (`/close-on-next-request`, `/vanish-on-next-request`) |
| /early-hints?count=N                 | N (default 1, at most 10) `103 Early Hints` heads, each with its own `Link` field, then 200 "ok", keep-alive |
| /trailers                            | 200 chunked "first second " with `Trailer: X-Checksum, X-Count` and those two trailer fields after the last chunk, keep-alive |
| /latin1                              | 200 "ok" with obs-text: `X-Latin1: caf\\xe9 na\\xefve` (ISO-8859-1 bytes E9, EF: not UTF-8), `X-UTF8: caf\\xc3\\xa9` (the UTF-8 of "café"), `X-Ascii: plain`, keep-alive |
| /trickle-head?bytes_per_s=B         | a 200 head (about 120 bytes) sent one byte at a time at B bytes/s (default 1), then "ok"; closes when the client does |
| /endless-headers?line=N              | a status line, then `X-Filler-k` field lines of about N bytes each (default 1000) without end (stops at 64 MiB or when the client closes): a head past any limit |
| /informational-flood?count=N         | N informational heads (alternately `100 Continue` and `103 Early Hints`; default 1000, at most 100000), then 200 "ok", keep-alive; stops early when the client closes |
| /chunk-extension?bytes=N             | 200 chunked whose first chunk-size line carries an N-byte extension (`1;x=aaaa…`, default 1 MiB), then the chunk "o", "k" and the last chunk; stops early when the client closes |
| /vanish-on-next-request              | 200 keep-alive; the next request on the connection is read (head only), then nothing: no answer, no FIN, no RST (a peer that vanished, seen from the client) until the client closes or --hold s pass |
| any path with idle_close_max_ms=M    | served as usual; then the connection waits at most a random D in [0, M] ms (drawn after each response, seeded by the connection's number) for the next request and closes (FIN) when it has not come: idle keep-alive connections closed at random points, racing the client's reuse (RFC 9112 §9.3.1) |
| a connection whose first byte is 0x16 | a TLS handshake record: the ClientHello record is read, and nothing is ever answered (a TLS peer that stops mid-handshake); closes when the client does |
| anything else                        | 404 |

Malformed requests get 400 and a close. The RST/FIN-after-ACK paths wait (bounded, 2 s) until the
kernel's send queue is empty (SIOCOUTQ), so the client has the bytes before the reset arrives.
"""
import argparse
import asyncio
import base64
import email.parser
import email.policy
import fcntl
import hashlib
import http
import ipaddress
import json
import random
import signal
import socket
import struct
import sys
import termios
from urllib.parse import parse_qs, urlsplit

from http_head import BadRequest, parse_head as parse_request_head

MAX_HEAD = 64 * 1024
MAX_FORM = 64 * 1024 * 1024
PATTERN = b"0123456789abcdef"




def pattern_bytes(n, start=0):
    """n bytes of PATTERN, as if the pattern started at offset 0 of the body."""
    if n <= 0:
        return b""
    reps = (start % len(PATTERN) + n) // len(PATTERN) + 1
    s = start % len(PATTERN)
    return (PATTERN * reps)[s:s + n]


def parse_form(content_type, body):
    """A multipart/form-data body as Python's standard `email` package reads it: an independent
    parser of what clients send (RFC 7578). Each part's name, filename, type, length, SHA-256."""
    head = b"MIME-Version: 1.0\r\nContent-Type: " + content_type.encode("latin-1") + b"\r\n\r\n"
    message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(head + body)
    parts = []
    if message.is_multipart():
        for part in message.iter_parts():
            disposition = part["Content-Disposition"]
            params = dict(disposition.params) if disposition is not None else {}
            payload = part.get_payload(decode=True) or b""
            ctype = part["Content-Type"]
            parts.append({
                "name": params.get("name"), "filename": params.get("filename"),
                "content_type": str(ctype) if ctype is not None else None,
                "length": len(payload), "sha256": hashlib.sha256(payload).hexdigest(),
            })
    return {"multipart": message.is_multipart(), "defects": [type(d).__name__ for d in message.defects],
            "body_length": len(body), "parts": parts}


def reason(status):
    try:
        return http.HTTPStatus(status).phrase
    except ValueError:
        return "Status"


class Request:
    def __init__(self, method, target, version, headers):
        self.method = method
        self.target = target
        self.version = version
        self.headers = headers  # list of (name, value) as received
        parts = urlsplit(target)
        self.path = parts.path
        self.query = {k: v[-1] for k, v in parse_qs(parts.query, keep_blank_values=True).items()}
        self.body_length = 0
        self.body_sha256 = hashlib.sha256().hexdigest()

    def header(self, name):
        name = name.lower()
        for n, v in self.headers:
            if n.lower() == name:
                return v
        return None

    def tokens(self, name):
        out = []
        name = name.lower()
        for n, v in self.headers:
            if n.lower() == name:
                out += [t.strip().lower() for t in v.split(",") if t.strip()]
        return out

    def wants_close(self):
        conn = self.tokens("connection")
        if self.version == "HTTP/1.0":
            return "keep-alive" not in conn
        return "close" in conn

    def int_arg(self, name, default):
        try:
            return int(self.query.get(name, default))
        except ValueError:
            raise BadRequest(f"query {name} must be an integer")


def parse_head(raw):
    return Request(*parse_request_head(raw))


class Connection:
    def __init__(self, server, reader, writer, number):
        self.server = server
        self.reader = reader
        self.writer = writer
        self.number = number
        self.requests = 0
        self.idle_limit = None  # seconds; set by /close-idle
        self.drop_next = False  # set by /close-on-next-request
        self.vanish_next = False  # set by /vanish-on-next-request
        self.prefix = b""  # bytes read ahead of the head reader (the TLS sniff's first byte)
        self.random_idle_max = None  # seconds; set by idle_close_max_ms (random idle closes)
        self.rng = random.Random(number)
        self.sock = writer.get_extra_info("socket")

    # -- reading -------------------------------------------------------------------------------

    async def read_head(self):
        try:
            raw = self.prefix + await self.reader.readuntil(b"\r\n\r\n")
        except asyncio.LimitOverrunError:
            raise BadRequest("head too large")
        self.prefix = b""
        return parse_head(raw[:-4])

    async def read_body(self, req):
        digest = hashlib.sha256()
        total = 0
        kept = bytearray() if req.path == "/form" else None

        def take(data):
            digest.update(data)
            if kept is not None:
                if len(kept) + len(data) > MAX_FORM:
                    raise BadRequest("form too large")
                kept.extend(data)

        if "100-continue" in req.tokens("expect") and req.version == "HTTP/1.1":
            self.writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
            await self.writer.drain()
        te = req.tokens("transfer-encoding")
        if te:
            if te[-1] != "chunked":
                raise BadRequest("unsupported transfer-encoding")
            while True:
                line = await self.reader.readuntil(b"\r\n")
                size_text = line[:-2].split(b";", 1)[0].strip()
                try:
                    size = int(size_text, 16)
                except ValueError:
                    raise BadRequest("bad chunk size")
                if size == 0:
                    while (await self.reader.readuntil(b"\r\n")) != b"\r\n":
                        pass  # trailers
                    break
                data = await self.reader.readexactly(size)
                take(data)
                total += size
                if await self.reader.readexactly(2) != b"\r\n":
                    raise BadRequest("bad chunk end")
        else:
            lengths = set(req.tokens("content-length"))
            if len(lengths) > 1:
                raise BadRequest("conflicting content-length")
            if lengths:
                try:
                    remaining = int(lengths.pop())
                except ValueError:
                    raise BadRequest("bad content-length")
                while remaining > 0:
                    data = await self.reader.read(min(remaining, 1 << 16))
                    if not data:
                        raise asyncio.IncompleteReadError(b"", remaining)
                    take(data)
                    total += len(data)
                    remaining -= len(data)
        req.body_length = total
        req.body_sha256 = digest.hexdigest()
        req.body = bytes(kept) if kept is not None else None

    # -- writing -------------------------------------------------------------------------------

    def head(self, status, headers=(), length=None, close=False, keep_alive_header=False):
        lines = [f"HTTP/1.1 {status} {reason(status)}", "Server: bluebonnet-fault"]
        lines += [f"{n}: {v}" for n, v in headers]
        if length is not None:
            lines.append(f"Content-Length: {length}")
        if close:
            lines.append("Connection: close")
        elif keep_alive_header:
            lines.append("Connection: keep-alive")
        return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")

    async def respond(self, req, status, body=b"", ctype="text/plain; charset=utf-8", headers=(),
                      close=False, keep_alive_header=False):
        no_body = status in (204, 304) or 100 <= status < 200
        hdrs = list(headers)
        if not no_body:
            hdrs.insert(0, ("Content-Type", ctype))
        out = self.head(status, hdrs, None if no_body else len(body), close, keep_alive_header)
        if req.method != "HEAD" and not no_body:
            out += body
        self.writer.write(out)
        await self.writer.drain()

    async def wait_sent(self, limit=2.0):
        """Until the kernel send queue (unsent + unacknowledged bytes) is empty, bounded."""
        loop = asyncio.get_running_loop()
        end = loop.time() + limit
        buf = bytearray(4)
        while loop.time() < end:
            try:
                fcntl.ioctl(self.sock.fileno(), termios.TIOCOUTQ, buf)
            except OSError:
                return
            if struct.unpack("i", buf)[0] == 0:
                return
            await asyncio.sleep(0.001)

    async def fin(self):
        try:
            await self.writer.drain()
            await self.wait_sent()
            self.sock.shutdown(socket.SHUT_WR)
        except OSError:
            pass
        self.writer.close()

    async def rst(self):
        try:
            await self.writer.drain()
            await self.wait_sent()
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        except OSError:
            pass
        self.writer.transport.abort()

    async def hold_until_peer_closes(self):
        """Read and discard until EOF (the client closed) or the server stops."""
        while await self.reader.read(1 << 16):
            pass

    async def hold_without_reading(self):
        self.writer.transport.pause_reading()
        await asyncio.sleep(self.server.hold)

    # -- the loop ------------------------------------------------------------------------------

    async def run(self):
        try:
            # A TLS ClientHello (a handshake record, content type 22) instead of HTTP: read the
            # record and never answer, a TLS peer that stops mid-handshake.
            first = await self.reader.read(1)
            if not first:
                return
            if first == b"\x16":
                header = await self.reader.readexactly(4)
                await self.reader.readexactly(struct.unpack("!H", header[2:4])[0])
                await self.hold_until_peer_closes()
                return
            self.prefix = first  # the first byte of the first request head
            while True:
                try:
                    if self.random_idle_max is not None:
                        limit = self.rng.uniform(0, self.random_idle_max)
                        req = await asyncio.wait_for(self.read_head(), limit)
                    elif self.idle_limit is not None:
                        req = await asyncio.wait_for(self.read_head(), self.idle_limit)
                    else:
                        req = await self.read_head()
                except asyncio.TimeoutError:
                    await self.fin()
                    return
                except asyncio.IncompleteReadError:
                    return  # the client closed between requests
                self.requests += 1
                self.server.received[req.path] = self.server.received.get(req.path, 0) + 1
                if self.vanish_next:
                    await self.hold_without_reading()
                    return
                if self.drop_next:
                    if req.path not in ("/no-read", "/accept-never-answer", "/stall-head", "/vanish-on-next-request"):
                        await self.read_body(req)  # read whole, so the close is a FIN, not an RST
                    await self.fin()
                    return
                keep = await self.dispatch(req)
                if not keep:
                    return
        except BadRequest as e:
            try:
                self.writer.write(self.head(400, [("Content-Type", "text/plain")], len(str(e)), True)
                                  + str(e).encode())
                await self.writer.drain()
            except OSError:
                pass
        except (ConnectionError, asyncio.IncompleteReadError, OSError):
            pass
        finally:
            self.writer.close()

    async def resumable(self, req, close):
        """RFC 9110 §14 ranges over a fixed resource; see the module docstring's table."""
        size = max(0, req.int_arg("size", 100000))
        cut = req.int_arg("cut", -1)
        tag = req.query.get("etag", "v1")
        etag = ('W/"%s"' if req.query.get("weak", "0") == "1" else '"%s"') % tag
        headers = [("Content-Type", "application/octet-stream"), ("ETag", etag), ("Accept-Ranges", "bytes")]
        if req.query.get("lm", "1") != "0":
            headers.append(("Last-Modified", "Tue, 24 Nov 2026 05:00:00 GMT"))
        start, end = 0, size - 1
        status = 200
        wanted = req.header("range")
        if_range = req.header("if-range")
        validators = {etag, "Tue, 24 Nov 2026 05:00:00 GMT"}
        if wanted and wanted.startswith("bytes=") and (if_range is None or if_range in validators and not if_range.startswith("W/")):
            first, _, last = wanted[len("bytes="):].partition("-")
            if first.isdigit():
                start = int(first)
                end = min(int(last), size - 1) if last.isdigit() else size - 1
                if start >= size:
                    await self.respond(req, 416, b"range not satisfiable\n",
                                       headers=[("Content-Range", f"bytes */{size}")] + headers[1:], close=close)
                    return not close
                status = 206
                headers.append(("Content-Range", f"bytes {start}-{end}/{size}"))
        body = pattern_bytes(end - start + 1, start)
        out = self.head(status, headers, len(body), close)
        if req.method == "HEAD":
            self.writer.write(out)
            await self.writer.drain()
            return not close
        if cut >= 0 and start == 0 and cut < len(body):
            self.writer.write(out + body[:cut])
            if req.query.get("hold", "0") == "1":
                # Stall after the cut instead of closing: the client decides how it ends.
                await self.writer.drain()
                await self.hold_until_peer_closes()
            else:
                await self.fin()
            return False
        self.writer.write(out + body)
        await self.writer.drain()
        return not close

    async def dispatch(self, req):
        """Serves one request; returns whether the connection goes on to the next."""
        p = req.path
        # Paths that must not read the body (or anything) first.
        if p == "/no-read":
            try:
                self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            except OSError:
                pass
            await self.hold_without_reading()
            return False
        if p == "/accept-never-answer":
            await self.hold_without_reading()
            return False
        if p == "/stall-head":
            await self.hold_until_peer_closes()
            return False

        await self.read_body(req)
        close = req.wants_close()
        self.server.hits[p] = self.server.hits.get(p, 0) + 1
        if "idle_close_max_ms" in req.query:
            self.random_idle_max = max(0, req.int_arg("idle_close_max_ms", 0)) / 1000

        if p == "/ok":
            n = req.int_arg("size", -1)
            body = b"ok" if n < 0 else pattern_bytes(n)
            await self.respond(req, 200, body, "application/octet-stream", close=close)
        elif p == "/conn":
            body = json.dumps({"conn": self.number, "request_index": self.requests}).encode()
            await self.respond(req, 200, body, "application/json", close=close)
        elif p == "/close-idle":
            self.idle_limit = max(0, req.int_arg("after_ms", 100)) / 1000
            await self.respond(req, 200, b"ok", close=close, keep_alive_header=True)
        elif p == "/close-after-response":
            await self.respond(req, 200, b"ok", keep_alive_header=True)
            await self.fin()
            return False
        elif p == "/close-on-next-request":
            self.drop_next = True
            together = req.int_arg("together", 0)
            if together > 1:
                await self.server.meet(together)
            await self.respond(req, 200, b"ok", close=close, keep_alive_header=True)
        elif p == "/rst-after-response":
            await self.respond(req, 200, b"ok", keep_alive_header=True)
            await self.rst()
            return False
        elif p == "/vanish-on-next-request":
            self.vanish_next = True
            await self.respond(req, 200, b"ok", close=close, keep_alive_header=True)
        elif p == "/trickle-head":
            rate = max(1, req.int_arg("bytes_per_s", 1))
            out = self.head(200, [("Content-Type", "text/plain"), ("X-Trickle", "one byte at a time")], 2) + b"ok"
            for i in range(len(out)):
                self.writer.write(out[i:i + 1])
                await self.writer.drain()
                await asyncio.sleep(1 / rate)
            await self.hold_until_peer_closes()
            return False
        elif p == "/endless-headers":
            line = max(16, req.int_arg("line", 1000))
            self.writer.write(b"HTTP/1.1 200 OK\r\nServer: bluebonnet-fault\r\n")
            sent, k = 0, 0
            while sent < 64 << 20:
                field = b"X-Filler-%d: " % k
                chunk = field + b"f" * max(1, line - len(field) - 2) + b"\r\n"
                self.writer.write(chunk)
                await self.writer.drain()
                sent += len(chunk)
                k += 1
            await self.fin()
            return False
        elif p == "/informational-flood":
            count = min(100000, max(0, req.int_arg("count", 1000)))
            for i in range(count):
                if i % 2 == 0:
                    self.writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
                else:
                    self.writer.write(self.head(103, [("Link", f"</s{i}.css>; rel=preload; as=style")]))
                if i % 64 == 63:
                    await self.writer.drain()
            await self.respond(req, 200, b"ok", close=close)
        elif p == "/chunk-extension":
            size = max(0, req.int_arg("bytes", 1 << 20))
            self.writer.write(self.head(200, [("Content-Type", "text/plain"), ("Transfer-Encoding", "chunked")])
                              + b"1;x=")
            sent = 0
            while sent < size:
                n = min(1 << 14, size - sent)
                self.writer.write(b"a" * n)
                await self.writer.drain()
                sent += n
            self.writer.write(b"\r\no\r\n1\r\nk\r\n0\r\n\r\n")
            await self.writer.drain()
            return not close
        elif p == "/form":
            body = json.dumps(parse_form(req.header("content-type") or "", req.body or b"")).encode()
            await self.respond(req, 200, body, "application/json", close=close)
        elif p == "/resumable":
            return await self.resumable(req, close)
        elif p in ("/reset-mid-body", "/close-mid-body", "/stall-body"):
            size = max(0, req.int_arg("size", 1000))
            after = min(size, max(0, req.int_arg("after", size // 2)))
            self.writer.write(self.head(200, [("Content-Type", "application/octet-stream")], size)
                              + pattern_bytes(after))
            if p == "/reset-mid-body":
                await self.rst()
            elif p == "/close-mid-body":
                await self.fin()
            else:
                await self.writer.drain()
                await self.hold_until_peer_closes()
            return False
        elif p == "/chunked-truncated":
            out = self.head(200, [("Content-Type", "text/plain"), ("Transfer-Encoding", "chunked")])
            for part in (b"first ", b"second ", b"third "):
                out += b"%x\r\n%s\r\n" % (len(part), part)
            self.writer.write(out)
            await self.fin()
            return False
        elif p == "/slow":
            size = max(0, req.int_arg("size", 1000))
            rate = max(1, req.int_arg("bytes_per_s", 1000))
            self.writer.write(self.head(200, [("Content-Type", "application/octet-stream")], size, close))
            step = max(1, rate // 50)  # 20 ms steps
            sent = 0
            while sent < size:
                n = min(step, size - sent)
                self.writer.write(pattern_bytes(n, sent))
                await self.writer.drain()
                sent += n
                if sent < size:
                    await asyncio.sleep(n / rate)
        elif p == "/garbage":
            rng = random.Random(0xB1EB0)
            junk = bytes(rng.randrange(256) for _ in range(1024))
            self.writer.write(b"\x00\xff" + junk)  # never starts like "HTTP/"
            await self.fin()
            return False
        elif p == "/raw":
            data = req.query.get("b64", "")
            data = data.replace(" ", "+").replace("-", "+").replace("_", "/")
            try:
                raw = base64.b64decode(data + "=" * (-len(data) % 4), validate=True)
            except ValueError:
                raise BadRequest("b64 is not base64")
            self.writer.write(raw)
            await self.fin()
            return False
        elif p == "/echo":
            body = json.dumps({
                "method": req.method, "target": req.target, "version": req.version,
                "headers": [[n, v] for n, v in req.headers],
                "body_length": req.body_length, "body_sha256": req.body_sha256,
            }).encode()
            await self.respond(req, 200, body, "application/json", close=close)
        elif p == "/redirect":
            status = req.int_arg("status", 302)
            await self.respond(req, status, headers=[("Location", req.query.get("to", "/"))], close=close)
        elif p == "/early-hints":
            # RFC 8297: informational heads before the final one; a client skips or keeps them.
            count = min(10, max(0, req.int_arg("count", 1)))
            for i in range(count):
                self.writer.write(self.head(103, [("Link", f"</style{i}.css>; rel=preload; as=style")]))
            await self.respond(req, 200, b"ok", close=close)
        elif p == "/trailers":
            # RFC 9112 §7.1.2: fields after the last chunk, announced by Trailer (RFC 9110 §6.6.2).
            out = self.head(200, [("Content-Type", "text/plain"), ("Transfer-Encoding", "chunked"),
                                  ("Trailer", "X-Checksum, X-Count")], close=close)
            if req.method != "HEAD":
                for part in (b"first ", b"second "):
                    out += b"%x\r\n%s\r\n" % (len(part), part)
                out += b"0\r\nX-Checksum: 5ca1ab1e\r\nX-Count: 2\r\n\r\n"
            self.writer.write(out)
            await self.writer.drain()
        elif p == "/latin1":
            # obs-text (RFC 9110 §5.5): head() writes latin-1, so each str char below is one byte.
            await self.respond(req, 200, b"ok", headers=[
                ("X-Latin1", "caf\xe9 na\xefve"), ("X-UTF8", "caf\xc3\xa9"), ("X-Ascii", "plain")], close=close)
        elif p.startswith("/status/"):
            try:
                status = int(p[len("/status/"):])
            except ValueError:
                raise BadRequest("status must be an integer")
            if not 100 <= status <= 999:
                raise BadRequest("status out of range")
            extra = [("Retry-After", req.query["retry_after"])] if "retry_after" in req.query else []
            await self.respond(req, status, f"{status} {reason(status)}\n".encode(), headers=extra, close=close)
        elif p == "/hits":
            path = req.query.get("path", "")
            body = json.dumps({"hits": self.server.hits.get(path, 0)}).encode()
            await self.respond(req, 200, body, "application/json", close=close)
        elif p == "/received":
            path = req.query.get("path", "")
            body = json.dumps({"hits": self.server.hits.get(path, 0),
                               "received": self.server.received.get(path, 0)}).encode()
            await self.respond(req, 200, body, "application/json", close=close)
        else:
            await self.respond(req, 404, b"no such fault\n", close=close)
        return not close


class FaultServer:
    def __init__(self, hold):
        self.hold = hold
        self.count = 0
        self.hits = {}
        self.received = {}
        self.tasks = set()
        self.met = 0  # requests arrived at the meeting point (/close-on-next-request?together=N)
        self.all_met = asyncio.Event()

    async def meet(self, count):
        """Waits until `count` requests have called this (bounded: 10 s)."""
        self.met += 1
        if self.met >= count:
            self.all_met.set()
        try:
            await asyncio.wait_for(self.all_met.wait(), 10)
        except asyncio.TimeoutError:
            pass

    async def handle(self, reader, writer):
        self.count += 1
        task = asyncio.current_task()
        self.tasks.add(task)
        try:
            await Connection(self, reader, writer, self.count).run()
        except asyncio.CancelledError:
            writer.transport.abort()
        finally:
            self.tasks.discard(task)


def loopback(host):
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


async def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--host", default="127.0.0.1", help="a loopback address (127.0.0.0/8 or ::1)")
    ap.add_argument("--port", type=int, default=0, help="0 = the OS picks (printed as LISTENING <port>)")
    ap.add_argument("--also-ipv6", action="store_true", help="also bind ::1 on the same port if possible")
    ap.add_argument("--hold", type=float, default=120, help="seconds /no-read and /accept-never-answer hold a connection")
    ap.add_argument("--unix", default=None, help="also serve on this Unix-domain socket path (created; removed at exit)")
    args = ap.parse_args()
    if not loopback(args.host):
        sys.exit(f"fault_server: refusing to bind {args.host!r}: loopback addresses only")

    fault = FaultServer(args.hold)
    servers = [await asyncio.start_server(fault.handle, args.host, args.port, limit=MAX_HEAD,
                                          reuse_address=True)]
    port = servers[0].sockets[0].getsockname()[1]
    suffix = ""
    if args.also_ipv6 and args.host != "::1":
        try:
            servers.append(await asyncio.start_server(fault.handle, "::1", port, limit=MAX_HEAD))
            suffix = " ipv6"
        except OSError:
            pass
    if args.unix:
        servers.append(await asyncio.start_unix_server(fault.handle, args.unix, limit=MAX_HEAD))
        suffix += " unix"
    print(f"LISTENING {port}{suffix}", flush=True)

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    for s in servers:
        s.close()
    for t in list(fault.tasks):
        t.cancel()
    await asyncio.gather(*fault.tasks, return_exceptions=True)


if __name__ == "__main__":
    asyncio.run(main())
