#!/usr/bin/env python3
"""Bluebonnet's replay server: serves the HTTP/1 response corpus byte for byte over raw TCP.

  python3 replay_server.py PORT [--host 127.0.0.1] [--cases FILE] [--hold 5] [--verbose]
  python3 replay_server.py --self-check [--cases FILE]

Python 3.11 standard library only. Binds loopback only (127.0.0.0/8 or ::1; any other --host is
refused). PORT 0 lets the OS pick. The first line on stdout is `LISTENING <port> CASES <count>`
(flushed): that line is the readiness signal. Stops on SIGTERM/SIGINT: closes every connection
and exits 0. The corpus is Fixtures/corpora/http1-responses/responses/cases.json unless --cases
names another file (its README has the format).

Every request is read whole: the head (up to 64 KiB, parsed by http_head.py), then any body
(Content-Length or chunked), which is discarded. Then:

| path (query)                       | behaviour |
|------------------------------------|-----------|
| /case/<id>?close=0|1&hold=S&split=N&delay_ms=D | exactly the case's raw bytes, nothing added. Then, per the case's `server.close_after_write` (or `close`), FIN and close once the client closes (at most 2 s later); or keep the connection open for a next request for S seconds (default --hold). `split=N`: write the bytes in N-byte pieces, one write each (TCP_NODELAY), `delay_ms=D` apart |
| /conn                              | 200 JSON {"conn": n, "request_index": k}: n numbers TCP connections (1 = first accepted), k counts requests on this one (1 = fresh), keep-alive |
| /cases                             | 200 JSON list of the case ids, sorted, keep-alive |
| anything else, or an unknown id    | 404, then close |

A request whose method is not the case's (`GET` or `HEAD`) is still served; a warning goes to
stderr. A malformed request or query gets 400 and a close. A connection waits 30 s for its first
request, then --hold seconds (or the last case's `hold`) for each next one, and closes after that.

--self-check starts this script on an OS-picked port, checks every case and every feature above
against it with plain sockets, and exits 0 when all passed (1 otherwise), printing what failed.
"""
import argparse
import asyncio
import base64
import ipaddress
import json
import os
import select
import signal
import socket
import subprocess
import sys
import time
from urllib.parse import parse_qs, unquote, urlsplit

from http_head import BadRequest, parse_head

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_CASES = os.path.normpath(
    os.path.join(HERE, "..", "corpora", "http1-responses", "responses", "cases.json"))
MAX_HEAD = 64 * 1024
FIRST_REQUEST_WAIT = 30.0
CLOSE_LINGER = 2.0


class Case:
    """One corpus case: what to write and whether to close after it."""

    def __init__(self, record):
        self.id = record["id"]
        self.method = record.get("method", "GET")
        self.raw = base64.b64decode(record["raw_b64"], validate=True)
        self.close_after_write = bool(record["server"]["close_after_write"])
        if len(self.raw) != record["raw_len"]:
            raise ValueError(f"case {self.id}: raw_b64 has {len(self.raw)} bytes, raw_len says {record['raw_len']}")


def load_cases(path):
    """The corpus as {id: Case}; raises ValueError for a file that is not one."""
    with open(path, encoding="utf-8") as f:
        records = json.load(f)["cases"]
    cases = {}
    for record in records:
        case = Case(record)
        if case.id in cases:
            raise ValueError(f"case id {case.id!r} appears twice")
        cases[case.id] = case
    return cases


def pieces(raw, split):
    """raw in split-byte pieces (one piece when split <= 0)."""
    if split <= 0:
        return [raw]
    return [raw[i:i + split] for i in range(0, len(raw), split)]


def plain_response(status, phrase, body, ctype, close):
    head = [f"HTTP/1.1 {status} {phrase}", "Server: bluebonnet-replay",
            f"Content-Type: {ctype}", f"Content-Length: {len(body)}"]
    if close:
        head.append("Connection: close")
    return ("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + body


class Query:
    """The options of a /case/<id> request."""

    def __init__(self, query, default_hold):
        values = {k: v[-1] for k, v in parse_qs(query, keep_blank_values=True).items()}
        self.close = None
        if "close" in values:
            self.close = values["close"] not in ("0", "false", "")
        self.hold = self.number(values, "hold", default_hold, float)
        self.split = self.number(values, "split", 0, int)
        self.delay = self.number(values, "delay_ms", 0, float) / 1000

    @staticmethod
    def number(values, name, default, kind):
        if name not in values or values[name] == "":
            return default
        try:
            value = kind(values[name])
        except ValueError:
            raise BadRequest(f"query {name} must be a number")
        if value < 0:
            raise BadRequest(f"query {name} must not be negative")
        return value


class Connection:
    def __init__(self, server, reader, writer, number):
        self.server = server
        self.reader = reader
        self.writer = writer
        self.number = number
        self.requests = 0
        # How long to wait for the next request: long for the first, then the hold (--hold, or
        # the last case's `hold`).
        self.wait = FIRST_REQUEST_WAIT
        self.hold = server.hold
        self.sock = writer.get_extra_info("socket")
        if self.sock is not None:
            self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    # -- reading -------------------------------------------------------------------------------

    async def read_request(self):
        """The next request's (method, target), its body read and dropped; None when the client
        closed or stayed silent past self.wait."""
        try:
            raw = await asyncio.wait_for(self.reader.readuntil(b"\r\n\r\n"), self.wait)
        except (asyncio.TimeoutError, asyncio.IncompleteReadError):
            return None
        except asyncio.LimitOverrunError:
            raise BadRequest("request head over 64 KiB")
        method, target, _version, headers = parse_head(raw[:-4])
        await self.discard_body(headers)
        return method, target

    async def discard_body(self, headers):
        codings = [t.strip().lower() for n, v in headers if n.lower() == "transfer-encoding"
                   for t in v.split(",") if t.strip()]
        lengths = {v.strip() for n, v in headers if n.lower() == "content-length"}
        if codings:
            if codings[-1] != "chunked":
                raise BadRequest("a request body must end with chunked")
            while True:
                line = await self.reader.readuntil(b"\r\n")
                try:
                    size = int(line[:-2].split(b";", 1)[0].strip(), 16)
                except ValueError:
                    raise BadRequest("bad chunk size")
                if size == 0:
                    while await self.reader.readuntil(b"\r\n") != b"\r\n":
                        pass  # trailer fields
                    return
                await self.reader.readexactly(size)
                if await self.reader.readexactly(2) != b"\r\n":
                    raise BadRequest("chunk data not followed by CRLF")
        if len(lengths) > 1:
            raise BadRequest("conflicting Content-Length")
        if lengths:
            text = lengths.pop()
            if not text.isdigit():
                raise BadRequest("bad Content-Length")
            remaining = int(text)
            while remaining > 0:
                data = await self.reader.read(min(remaining, 1 << 16))
                if not data:
                    raise asyncio.IncompleteReadError(b"", remaining)
                remaining -= len(data)

    # -- writing -------------------------------------------------------------------------------

    async def send(self, data):
        self.writer.write(data)
        await self.writer.drain()

    async def close_gracefully(self):
        """FIN, then wait (bounded) for the client's own close before closing: closing with unread
        request bytes would send RST, which could destroy response bytes still in flight."""
        try:
            await self.writer.drain()
            self.writer.write_eof()
            await asyncio.wait_for(self.drain_until_eof(), CLOSE_LINGER)
        except (asyncio.TimeoutError, OSError):
            pass

    async def drain_until_eof(self):
        while await self.reader.read(1 << 16):
            pass

    # -- the loop ------------------------------------------------------------------------------

    async def run(self):
        try:
            while True:
                request = await self.read_request()
                if request is None:
                    await self.close_gracefully()
                    return
                self.requests += 1
                if not await self.dispatch(*request):
                    await self.close_gracefully()
                    return
                self.wait = self.hold
        except BadRequest as e:
            try:
                await self.send(plain_response(400, "Bad Request", f"{e}\n".encode(), "text/plain", True))
                await self.close_gracefully()
            except OSError:
                pass
        except (ConnectionError, asyncio.IncompleteReadError, OSError):
            pass
        finally:
            self.writer.close()

    async def dispatch(self, method, target):
        """Serves one request; returns whether the connection goes on to the next."""
        url = urlsplit(target)
        path = unquote(url.path)
        if path == "/conn":
            body = json.dumps({"conn": self.number, "request_index": self.requests}).encode()
            await self.send(plain_response(200, "OK", body, "application/json", False))
            return True
        if path == "/cases":
            body = json.dumps(sorted(self.server.cases)).encode()
            await self.send(plain_response(200, "OK", body, "application/json", False))
            return True
        case = self.server.cases.get(path[len("/case/"):]) if path.startswith("/case/") else None
        if case is None:
            await self.send(plain_response(404, "Not Found", b"not a case: use /case/<id>, /cases or /conn\n",
                                           "text/plain", True))
            return False
        query = Query(url.query, self.server.hold)
        if method != case.method:
            print(f"replay_server: warning: case {case.id} is meant for {case.method}, got {method}",
                  file=sys.stderr, flush=True)
        for piece in pieces(case.raw, query.split):
            await self.send(piece)
            if query.delay and query.split > 0:
                await asyncio.sleep(query.delay)
        close = case.close_after_write if query.close is None else query.close
        self.server.log(f"served {case.id}: {len(case.raw)} bytes, then {'close' if close else 'hold'}")
        self.hold = query.hold
        return not close


class ReplayServer:
    def __init__(self, cases, hold, verbose):
        self.cases = cases
        self.hold = hold
        self.verbose = verbose
        self.count = 0
        self.tasks = set()

    def log(self, message):
        if self.verbose:
            print(f"replay_server: {message}", file=sys.stderr, flush=True)

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


async def serve(args):
    try:
        cases = load_cases(args.cases)
    except (OSError, ValueError, KeyError) as e:
        sys.exit(f"replay_server: cannot load {args.cases}: {e}")
    replay = ReplayServer(cases, args.hold, args.verbose)
    server = await asyncio.start_server(replay.handle, args.host, args.port, limit=MAX_HEAD,
                                        reuse_address=True)
    port = server.sockets[0].getsockname()[1]
    print(f"LISTENING {port} CASES {len(cases)}", flush=True)

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    server.close()
    for task in list(replay.tasks):
        task.cancel()
    await asyncio.gather(*replay.tasks, return_exceptions=True)


# -- self-check: this script as a child process, driven with plain blocking sockets ---------------

TIMEOUT = 10.0


class Client:
    """One blocking connection to the server under test."""

    def __init__(self, port):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT)
        self.buffer = b""

    def close(self):
        self.sock.close()

    def send(self, data):
        self.sock.sendall(data)

    def request(self, method, target, extra=b""):
        self.send(f"{method} {target} HTTP/1.1\r\nHost: 127.0.0.1\r\n".encode() + extra)

    def fill(self):
        """Reads once more into the buffer; False at EOF."""
        data = self.sock.recv(1 << 16)
        self.buffer += data
        return bool(data)

    def exactly(self, n):
        while len(self.buffer) < n and self.fill():
            pass
        data, self.buffer = self.buffer[:n], self.buffer[n:]
        return data

    def to_eof(self):
        while self.fill():
            pass
        data, self.buffer = self.buffer, b""
        return data

    def response(self):
        """(status, body) of a Content-Length framed response."""
        while b"\r\n\r\n" not in self.buffer:
            if not self.fill():
                raise AssertionError(f"EOF inside a response head: {self.buffer[:80]!r}")
        head, self.buffer = self.buffer.split(b"\r\n\r\n", 1)
        lines = head.decode("latin-1").split("\r\n")
        length = 0
        for line in lines[1:]:
            name, _, value = line.partition(":")
            if name.lower() == "content-length":
                length = int(value)
        return int(lines[0].split(" ")[1]), self.exactly(length)

    def conn(self):
        self.request("GET", "/conn", b"\r\n")
        status, body = self.response()
        if status != 200:
            raise AssertionError(f"/conn answered {status}")
        answer = json.loads(body)
        return answer["conn"], answer["request_index"]


class SelfCheck:
    def __init__(self, cases_path):
        self.cases_path = cases_path
        self.cases = load_cases(cases_path)
        self.results = []  # (name, failure or None)

    def check(self, name, function, *args):
        try:
            failure = function(*args)
        except (AssertionError, OSError, ValueError, KeyError, subprocess.SubprocessError) as e:
            failure = f"{type(e).__name__}: {e}"
        self.results.append((name, failure))

    def start(self, extra=()):
        """This script on port 0; (process, port) once it printed its LISTENING line."""
        process = subprocess.Popen([sys.executable, os.path.abspath(__file__), "0", "--cases", self.cases_path, *extra],
                                   stdin=subprocess.DEVNULL, stdout=subprocess.PIPE)
        line = b""
        deadline = time.monotonic() + 30
        while not line.endswith(b"\n"):
            remaining = deadline - time.monotonic()
            ready, _, _ = select.select([process.stdout], [], [], max(0, remaining))
            chunk = os.read(process.stdout.fileno(), 1) if ready else b""
            if not chunk:
                process.kill()
                process.wait()
                raise AssertionError(f"no LISTENING line (exit status {process.returncode}, read {line!r})")
            line += chunk
        words = line.decode().split()
        if len(words) != 4 or words[0] != "LISTENING" or words[2] != "CASES" or int(words[3]) != len(self.cases):
            process.kill()
            process.wait()
            raise AssertionError(f"unexpected readiness line {line!r}")
        return process, int(words[1])

    # -- the checks (each returns None when it passed, or what went wrong) --------------------

    def case_served(self, port, case, query):
        client = Client(port)
        try:
            client.request(case.method, f"/case/{case.id}{query}", b"\r\n")
            if case.close_after_write:
                got = client.to_eof()
                return None if got == case.raw else f"got {len(got)} bytes, not the case's {len(case.raw)}"
            got = client.exactly(len(case.raw))
            if got != case.raw:
                return f"got {len(got)} bytes, not the case's {len(case.raw)}"
            # The connection stayed open, nothing follows the case: the next answer is /conn's.
            _, index = client.conn()
            return None if index == 2 else f"/conn after the case says request_index {index}"
        finally:
            client.close()

    def close_overridden(self, port, case, close):
        client = Client(port)
        try:
            client.request(case.method, f"/case/{case.id}?close={close}", b"\r\n")
            if close == 1:
                got = client.to_eof()
                return None if got == case.raw else f"close=1: got {len(got)} bytes before EOF"
            if client.exactly(len(case.raw)) != case.raw:
                return "close=0: the bytes differ"
            _, index = client.conn()
            return None if index == 2 else f"close=0: /conn says request_index {index}"
        finally:
            client.close()

    def hold_expires(self, port, case):
        client = Client(port)
        try:
            client.request(case.method, f"/case/{case.id}?hold=0.2", b"\r\n")
            if client.exactly(len(case.raw)) != case.raw:
                return "the bytes differ"
            rest = client.to_eof()  # EOF well within TIMEOUT: the server gave up holding
            return None if rest == b"" else f"{len(rest)} bytes after the case"
        finally:
            client.close()

    def lists_cases(self, port):
        client = Client(port)
        try:
            client.request("GET", "/cases", b"\r\n")
            status, body = client.response()
            ids = json.loads(body)
            return None if status == 200 and ids == sorted(self.cases) else f"/cases: {status}, {len(ids)} ids"
        finally:
            client.close()

    def counts_connections(self, port):
        first, second = Client(port), Client(port)
        try:
            a, b = first.conn(), first.conn()
            c = second.conn()
            if (a[1], b[1], c[1]) != (1, 2, 1) or a[0] != b[0] or c[0] == a[0]:
                return f"/conn answers {a}, {b} on one connection and {c} on another"
            return None
        finally:
            first.close()
            second.close()

    def discards_bodies(self, port):
        # Bodies that are requests themselves: read as a request, one would be answered 404.
        inner = b"GET /nope HTTP/1.1\r\nHost: x\r\n\r\n"
        client = Client(port)
        try:
            client.request("POST", "/conn", b"Content-Length: %d\r\n\r\n%s" % (len(inner), inner))
            first = client.response()
            client.request("POST", "/conn", b"Transfer-Encoding: chunked\r\n\r\n%x;x=y\r\n%s\r\n0\r\nT: 1\r\n\r\n"
                           % (len(inner), inner))
            second = client.response()
            _, index = client.conn()
            if first[0] != 200 or second[0] != 200 or index != 3:
                return f"after two bodies: {first[0]}, {second[0]}, request_index {index}"
            return None
        finally:
            client.close()

    def answers_status(self, port, raw_request, status):
        client = Client(port)
        try:
            client.send(raw_request)
            got, _ = client.response()
            if got != status:
                return f"answered {got}"
            rest = client.to_eof()
            return None if rest == b"" else f"{len(rest)} bytes after the answer"
        finally:
            client.close()

    def stops_on(self, sig):
        process, port = self.start()
        client = Client(port)
        try:
            client.conn()  # a live connection, which stopping must close
            process.send_signal(sig)
            status = process.wait(timeout=TIMEOUT)
            try:
                closed = client.to_eof() == b""
            except ConnectionResetError:
                closed = True  # aborted rather than closed: gone either way
            return None if status == 0 and closed else f"exit status {status}, connection closed: {closed}"
        finally:
            client.close()
            if process.poll() is None:
                process.kill()
                process.wait()

    def refuses_other_hosts(self):
        result = subprocess.run([sys.executable, os.path.abspath(__file__), "0", "--host", "0.0.0.0"],
                                stdin=subprocess.DEVNULL, capture_output=True, timeout=TIMEOUT)
        if result.returncode == 0 or b"loopback" not in result.stderr:
            return f"--host 0.0.0.0: exit status {result.returncode}, {result.stderr[:120]!r}"
        return None

    def splits(self):
        raw = bytes(range(256)) * 3
        for split in (0, 1, 7, 1000):
            parts = pieces(raw, split)
            if b"".join(parts) != raw or (split > 0 and max(map(len, parts)) > split):
                return f"pieces(…, {split}) does not cut the bytes right"
        return None

    def run(self):
        self.check("pieces", self.splits)
        self.check("--host 0.0.0.0 refused", self.refuses_other_hosts)
        self.check("SIGTERM stops it", self.stops_on, signal.SIGTERM)
        self.check("SIGINT stops it", self.stops_on, signal.SIGINT)
        process, port = self.start()
        try:
            for case in self.cases.values():
                self.check(f"/case/{case.id}", self.case_served, port, case, "")
            small = [c for c in self.cases.values() if len(c.raw) < 4096][::9]
            for case in small:
                for query in ("?split=1", "?split=7&delay_ms=1"):
                    self.check(f"/case/{case.id}{query}", self.case_served, port, case, query)
            closing = next(c for c in self.cases.values() if c.close_after_write)
            holding = next(c for c in self.cases.values() if not c.close_after_write)
            self.check(f"/case/{closing.id}?close=0", self.close_overridden, port, closing, 0)
            self.check(f"/case/{holding.id}?close=1", self.close_overridden, port, holding, 1)
            self.check(f"/case/{holding.id}?hold=0.2", self.hold_expires, port, holding)
            self.check("/cases", self.lists_cases, port)
            self.check("/conn", self.counts_connections, port)
            self.check("request bodies are discarded", self.discards_bodies, port)
            self.check("/nope is 404", self.answers_status, port, b"GET /nope HTTP/1.1\r\nHost: x\r\n\r\n", 404)
            self.check("an unknown case is 404", self.answers_status, port,
                       b"GET /case/no-such-case HTTP/1.1\r\nHost: x\r\n\r\n", 404)
            self.check("a bad query is 400", self.answers_status, port,
                       f"GET /case/{holding.id}?split=x HTTP/1.1\r\nHost: x\r\n\r\n".encode(), 400)
            self.check("a bad request line is 400", self.answers_status, port, b"NONSENSE\r\n\r\n", 400)
        finally:
            process.terminate()
            process.wait(timeout=TIMEOUT)
        failed = [(name, failure) for name, failure in self.results if failure]
        for name, failure in failed:
            print(f"FAIL {name}: {failure}")
        print(f"self-check: {len(self.cases)} cases, {len(self.results)} checks, "
              f"{len(self.results) - len(failed)} passed, {len(failed)} failed")
        return 1 if failed else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("port", nargs="?", type=int, help="0 = the OS picks (printed as LISTENING <port> ...)")
    ap.add_argument("--host", default="127.0.0.1", help="a loopback address (127.0.0.0/8 or ::1)")
    ap.add_argument("--cases", default=DEFAULT_CASES, help="the corpus file (default: the repository's)")
    ap.add_argument("--hold", type=float, default=5.0,
                    help="seconds a connection kept open after a case waits for the next request")
    ap.add_argument("--verbose", "-v", action="store_true", help="log every case served to stderr")
    ap.add_argument("--self-check", action="store_true", help="check this server against the corpus and exit")
    args = ap.parse_args()
    if args.self_check:
        sys.exit(SelfCheck(args.cases).run())
    if args.port is None:
        ap.error("PORT is required (0 lets the OS pick)")
    if not loopback(args.host):
        sys.exit(f"replay_server: refusing to bind {args.host!r}: loopback addresses only")
    asyncio.run(serve(args))


if __name__ == "__main__":
    main()
