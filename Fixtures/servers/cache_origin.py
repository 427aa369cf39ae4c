#!/usr/bin/env python3
"""A scripted HTTP origin for the cache tests: it answers with the caching fields a test asks for
and counts what it received, so a test can tell a cache hit (no request reached the origin) from
a revalidation (a conditional request, answered 304) and a miss.

Binds a loopback address only, on a port the OS picks, printed as `LISTENING <port>`.

GET/HEAD /r/<name>?<fields>   the resource <name>. Query parameters become response fields:
    cc=<Cache-Control>  expires=<value>  lm=<Last-Modified>  vary=<Vary>  age=<Age>
    etag=<value> (etag=auto: "v<version>")  date=<value> (date=omit: no Date)
    status=<code> (default 200)  body=<text>
  The body is "<name> v<version> #<request number>" unless body= is given. A request whose
  If-None-Match names the current ETag, or whose If-Modified-Since is not before lm=, is
  answered 304 with the same fields (no body).
POST/PUT/PATCH/DELETE /r/<name>?location=<URI>&content_location=<URI>
  counted; 200 with the given Location / Content-Location fields.
POST /bump/<name>      the resource's version + 1 (its ETag changes with etag=auto).
POST /fail/<name>?status=<code>   every GET of <name> is answered <code> from now on
  (status=0: answered normally again).
GET /stats/<name>      JSON: {"requests", "conditional", "not_modified", "unsafe"} for <name>.
"""

import argparse
import email.utils
import ipaddress
import json
import sys
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LOCK = threading.Lock()
STATS = {}  # name -> dict of counters
VERSIONS = {}  # name -> int
FAILING = {}  # name -> status


def stats(name):
    return STATS.setdefault(name, {"requests": 0, "conditional": 0, "not_modified": 0, "unsafe": 0})


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    def send(self, status, fields, body=b""):
        self.send_response(status)
        for name, value in fields:
            self.send_header(name, value)
        if status not in (204, 304):
            self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD" and status not in (204, 304):
            self.wfile.write(body)

    def route(self):
        url = urllib.parse.urlsplit(self.path)
        query = dict(urllib.parse.parse_qsl(url.query, keep_blank_values=True))
        parts = url.path.strip("/").split("/", 1)
        return (parts[0], parts[1] if len(parts) > 1 else ""), query

    def do_GET(self):
        (kind, name), query = self.route()
        if kind == "stats":
            with LOCK:
                body = json.dumps(stats(name)).encode()
            self.send(200, [("Content-Type", "application/json"), ("Cache-Control", "no-store")], body)
            return
        if kind != "r":
            self.send(404, [], b"not found")
            return
        conditional = self.headers.get("If-None-Match") is not None or self.headers.get("If-Modified-Since") is not None
        with LOCK:
            counters = stats(name)
            counters["requests"] += 1
            if conditional:
                counters["conditional"] += 1
            number = counters["requests"]
            version = VERSIONS.get(name, 1)
            failing = FAILING.get(name, 0)
        if failing:
            self.send(failing, [("Content-Type", "text/plain")], f"{name} failing {failing}".encode())
            return
        fields = []
        if query.get("date") != "omit":
            fields.append(("Date", query.get("date") or email.utils.formatdate(usegmt=True)))
        etag = query.get("etag")
        if etag == "auto":
            etag = f'"v{version}"'
        for key, field in (("cc", "Cache-Control"), ("expires", "Expires"), ("lm", "Last-Modified"),
                           ("vary", "Vary"), ("age", "Age")):
            if key in query:
                fields.append((field, query[key]))
        if etag:
            fields.append(("ETag", etag))
        inm = self.headers.get("If-None-Match")
        ims = self.headers.get("If-Modified-Since")
        not_modified = False
        if inm is not None and etag:
            tags = [t.strip() for t in inm.split(",")]
            bare = etag[2:] if etag.startswith("W/") else etag
            not_modified = "*" in tags or any((t[2:] if t.startswith("W/") else t) == bare for t in tags)
        elif ims is not None and "lm" in query:
            since = email.utils.parsedate_to_datetime(ims)
            modified = email.utils.parsedate_to_datetime(query["lm"])
            not_modified = since is not None and modified is not None and modified <= since
        if not_modified:
            with LOCK:
                stats(name)["not_modified"] += 1
            self.send(304, fields)
            return
        body = query.get("body", f"{name} v{version} #{number}").encode()
        fields.append(("Content-Type", "text/plain"))
        self.send(int(query.get("status", "200")), fields, body)

    do_HEAD = do_GET

    def unsafe(self):
        (kind, name), query = self.route()
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        if kind == "bump":
            with LOCK:
                VERSIONS[name] = VERSIONS.get(name, 1) + 1
            self.send(204, [])
            return
        if kind == "fail":
            with LOCK:
                FAILING[name] = int(query.get("status", "503"))
            self.send(204, [])
            return
        with LOCK:
            stats(name)["unsafe"] += 1
        fields = [("Content-Type", "text/plain")]
        if "location" in query:
            fields.append(("Location", query["location"]))
        if "content_location" in query:
            fields.append(("Content-Location", query["content_location"]))
        self.send(int(query.get("status", "200")), fields, b"done")

    do_POST = unsafe
    do_PUT = unsafe
    do_PATCH = unsafe
    do_DELETE = unsafe


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--host", default="127.0.0.1", help="a loopback address")
    ap.add_argument("--port", type=int, default=0, help="0 = the OS picks (printed as LISTENING <port>)")
    args = ap.parse_args()
    if not ipaddress.ip_address(args.host).is_loopback:
        sys.exit(f"cache_origin: refusing to bind {args.host!r}: loopback addresses only")
    server = ThreadingHTTPServer((args.host, args.port), Handler)
    server.daemon_threads = True
    print(f"LISTENING {server.server_address[1]}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
