#!/usr/bin/env python3
"""Bluebonnet's authentication server: an expiring bearer token with a refresh endpoint, and HTTP
Digest authentication (RFC 7616) checked independently of the client, with Python's hashlib.

  python3 auth_server.py [--port 0]

Python 3.11 standard library only. Binds 127.0.0.1 only; with --port 0 (the default) the OS picks
the port. The first line on stdout is `LISTENING <port>` (flushed): the readiness signal. Stops on
SIGTERM/SIGINT. HTTP/1.1 with keep-alive, one thread per connection.

| path (query)                                  | behaviour |
|-----------------------------------------------|-----------|
| /token/protected                              | 200 JSON {"token"} when `Authorization: Bearer <current token>`; otherwise 401 with `WWW-Authenticate: Bearer` |
| POST /token/refresh?delay_ms=D                | waits D ms (default 0), then makes a new current token `t<n>` (n counts refreshes) and answers 200 JSON {"token"} |
| POST /token/expire                            | the current token stops being accepted (a refresh makes a new one) |
| /stats                                        | 200 JSON {"refreshes", "bearer_accepted", "bearer_refused", "digest_authorizations", "digest_accepted", "digest_challenges"} |
| /digest/QOP/ALGS/USER/PASSWD?stale=N&userhash=1&split=1&then=URL | Digest. QOP: `auth`, `auth-int`, `auth,auth-int` or `none` (no qop, RFC 2069). ALGS: algorithms separated by `+` (MD5, MD5-sess, SHA-256, SHA-256-sess, SHA-512-256, SHA-512-256-sess), one challenge each, in that order (in one `WWW-Authenticate` field, or one field each with split=1). USER and PASSWD are percent-decoded (UTF-8). A correct answer gets 200 JSON {"authenticated", "user", "algorithm", "qop", "nc"}; with stale=N the first N correct answers (counted per path) get 401 with `stale=true` and a new nonce instead. A wrong or replayed answer (an `nc` not above the last one for its nonce) gets 401 with a fresh challenge. userhash=1 offers `userhash=true`. nextnonce=1 adds `Authentication-Info: nextnonce="…"` (RFC 7616 §3.5) to a 200, with a new nonce the server takes. With then=URL a correct answer gets 302 to URL instead of 200. |
| /redirect?to=URL                              | 302 to URL |
| anything else                                 | 404 |

Digest checks: the nonce must be one this server issued and not made stale, the algorithm one the
path offers, `uri` the request target, `realm` this server's, `qop` one offered (`auth-int` hashes
the body), the user name plain, `username*` (RFC 8187) or hashed (userhash), and `response` the
RFC 7616 §3.4.1 value.
"""
import argparse
import hashlib
import json
import os
import re
import signal
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

REALM = "bluebonnet@127.0.0.1"
HASHES = {"MD5": "md5", "SHA-256": "sha256", "SHA-512-256": "sha512_256"}

lock = threading.Lock()
state = {
    "token": "t0",
    "valid": True,
    "refreshes": 0,
    "bearer_accepted": 0,
    "bearer_refused": 0,
    "digest_authorizations": 0,
    "digest_accepted": 0,
    "digest_challenges": 0,
}
nonces = {}  # nonce -> {"last_nc": int, "stale": bool}
stale_left = {}  # path -> answers still to call stale


def digest_hash(algorithm, data):
    base = algorithm[:-5] if algorithm.endswith("-sess") else algorithm
    return hashlib.new(HASHES[base], data).hexdigest()


def parse_auth_params(text):
    """Parameters of one Digest credentials value: name=token or name="quoted\\"string"."""
    params = {}
    pattern = re.compile(r'\s*([!#$%&\'*+.^_`|~0-9A-Za-z-]+)\s*=\s*("((?:[^"\\]|\\.)*)"|[^,\s]*)\s*(,|$)')
    position = 0
    while position < len(text):
        match = pattern.match(text, position)
        if not match:
            return None
        name = match.group(1).lower()
        value = re.sub(r"\\(.)", r"\1", match.group(3)) if match.group(3) is not None else match.group(2)
        params[name] = value
        position = match.end()
    return params


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format, *args):
        pass

    def send_json(self, status, body, headers=()):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in headers:
            self.send_header(name, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def read_body(self):
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def handle_any(self):
        body = self.read_body()
        url = urllib.parse.urlsplit(self.path)
        query = urllib.parse.parse_qs(url.query)
        parts = url.path.split("/")
        if url.path == "/token/protected":
            return self.bearer()
        if url.path == "/token/refresh" and self.command == "POST":
            delay = int(query.get("delay_ms", ["0"])[0])
            if delay:
                time.sleep(delay / 1000)
            with lock:
                state["refreshes"] += 1
                state["token"] = "t%d" % state["refreshes"]
                state["valid"] = True
                token = state["token"]
            return self.send_json(200, {"token": token})
        if url.path == "/token/expire" and self.command == "POST":
            with lock:
                state["valid"] = False
            return self.send_json(200, {"expired": True})
        if url.path == "/stats":
            with lock:
                snapshot = {k: v for k, v in state.items() if k not in ("token", "valid")}
            return self.send_json(200, snapshot)
        if url.path == "/redirect":
            self.send_response(302)
            self.send_header("Location", query["to"][0])
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if len(parts) == 6 and parts[1] == "digest":
            return self.digest(parts[2], parts[3].split("+"), urllib.parse.unquote(parts[4]),
                               urllib.parse.unquote(parts[5]), query, body)
        self.send_json(404, {"error": "not found"})

    def bearer(self):
        authorization = self.headers.get("Authorization", "")
        with lock:
            ok = state["valid"] and authorization == "Bearer " + state["token"]
            state["bearer_accepted" if ok else "bearer_refused"] += 1
            token = state["token"]
        if ok:
            return self.send_json(200, {"token": token})
        self.send_json(401, {"error": "token refused"}, [("WWW-Authenticate", 'Bearer realm="bluebonnet"')])

    def challenge(self, qop, algorithms, query, stale):
        values = []
        with lock:
            state["digest_challenges"] += 1
            for algorithm in algorithms:
                nonce = os.urandom(18).hex()
                nonces[nonce] = {"last_nc": 0, "stale": False}
                fields = ['realm="%s"' % REALM]
                if qop != "none":
                    fields.append('qop="%s"' % qop)
                fields += ['algorithm=%s' % algorithm, 'nonce="%s"' % nonce, 'opaque="op\\"aque"']
                if stale:
                    fields.append("stale=true")
                if query.get("userhash") == ["1"]:
                    fields.append("userhash=true")
                values.append("Digest " + ", ".join(fields))
        headers = [("WWW-Authenticate", v) for v in values] if query.get("split") == ["1"] else \
            [("WWW-Authenticate", ", ".join(values))]
        self.send_json(401, {"authenticated": False}, headers)

    def digest(self, qop, algorithms, user, password, query, body):
        authorization = self.headers.get("Authorization", "")
        if not authorization.lower().startswith("digest "):
            return self.challenge(qop, algorithms, query, False)
        with lock:
            state["digest_authorizations"] += 1
        p = parse_auth_params(authorization[7:])
        if p is None or not self.check(p, qop, algorithms, user, password, query, body):
            return self.challenge(qop, algorithms, query, False)
        key = self.path
        with lock:
            if key not in stale_left:
                stale_left[key] = int(query.get("stale", ["0"])[0])
            if stale_left[key] > 0:
                stale_left[key] -= 1
                nonces[p["nonce"]]["stale"] = True
                make_stale = True
            else:
                make_stale = False
                state["digest_accepted"] += 1
        if make_stale:
            return self.challenge(qop, algorithms, query, True)
        if "then" in query:
            self.send_response(302)
            self.send_header("Location", query["then"][0])
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        headers = []
        if query.get("nextnonce") == ["1"]:
            nonce = os.urandom(18).hex()
            with lock:
                nonces[nonce] = {"last_nc": 0, "stale": False}
            headers.append(("Authentication-Info", 'nextnonce="%s", qop=auth' % nonce))
        self.send_json(200, {"authenticated": True, "user": user, "algorithm": p["algorithm"],
                             "qop": p.get("qop"), "nc": p.get("nc"), "nonce": p["nonce"]}, headers)

    def check(self, p, qop, algorithms, user, password, query, body):
        algorithm = p.get("algorithm", "MD5")
        if algorithm not in algorithms or p.get("realm") != REALM or p.get("uri") != self.path:
            return False
        if p.get("opaque") != 'op"aque':
            return False
        with lock:
            entry = nonces.get(p.get("nonce"))
            if entry is None or entry["stale"]:
                return False
        # The user name: hashed, RFC 8187 extended, or plain.
        if query.get("userhash") == ["1"]:
            if p.get("userhash") != "true" or p.get("username") != digest_hash(algorithm, ("%s:%s" % (user, REALM)).encode()):
                return False
        elif "username*" in p:
            charset, _, encoded = p["username*"].partition("''")
            if charset.upper() != "UTF-8" or urllib.parse.unquote(encoded) != user:
                return False
        elif p.get("username") != user:
            return False
        a1 = ("%s:%s:%s" % (user, REALM, password)).encode()
        ha1 = digest_hash(algorithm, a1)
        if algorithm.endswith("-sess"):
            ha1 = digest_hash(algorithm, ("%s:%s:%s" % (ha1, p["nonce"], p.get("cnonce", ""))).encode())
        given_qop = p.get("qop")
        offered = [] if qop == "none" else qop.split(",")
        if (given_qop not in offered) if offered else (given_qop is not None):
            return False
        a2 = "%s:%s" % (self.command, p["uri"])
        if given_qop == "auth-int":
            a2 += ":" + digest_hash(algorithm, body)
        ha2 = digest_hash(algorithm, a2.encode())
        if given_qop:
            try:
                nc = int(p.get("nc", ""), 16)
            except ValueError:
                return False
            with lock:
                if nc <= entry["last_nc"]:
                    return False
                entry["last_nc"] = nc
            expected = digest_hash(algorithm, ("%s:%s:%s:%s:%s:%s" % (ha1, p["nonce"], p["nc"], p.get("cnonce", ""),
                                                                      given_qop, ha2)).encode())
        else:
            expected = digest_hash(algorithm, ("%s:%s:%s" % (ha1, p["nonce"], ha2)).encode())
        return p.get("response") == expected

    do_GET = do_POST = do_PUT = do_HEAD = do_DELETE = handle_any


class Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=0)
    arguments = parser.parse_args()
    server = Server(("127.0.0.1", arguments.port), Handler)
    signal.signal(signal.SIGTERM, lambda *_: threading.Thread(target=server.shutdown).start())
    print("LISTENING %d" % server.server_address[1], flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
