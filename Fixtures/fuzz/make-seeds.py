#!/usr/bin/env python3
"""Writes the seed corpora for the fuzz targets in Fuzz/ (run from anywhere; deterministic).

    python3 Fixtures/fuzz/make-seeds.py [path/to/cases.json]

response-parser/: one file per case of the HTTP/1 response corpus
(Fixtures/corpora/http1-responses/responses/cases.json, the raw_b64 of each case), plus the
hand-written cases below. Each file is one control byte followed by the bytes a server sent. The
control byte is what FuzzResponseParser reads: bits 0-1 the request method (0 GET, 1 HEAD,
2 CONNECT, 3 none recorded), bits 2-7 the piece size of the split run minus one. A case's method
picks bits 0-1; the piece size cycles through a few values so the seeds start with varied splits.
Cases over MAX_SEED_BYTES (the 1 MiB head-limit cases, the 64 KiB bodies) are left out: seeds stay
small and fast, and the fuzzer grows large inputs itself up to -max_len. Files are named
<case id>.bin; the directory is emptied first, so the script alone defines it.

cache-headers/: header blocks for FuzzCacheHeaders (one `Name: value` field per line), written from
CACHE_SEEDS below: the Cache-Control, Vary, HTTP-date, Age, ETag and Location cases of RFC 9111's
rules as Bluebonnet's tests state them.
"""
import base64
import gzip
import json
import os
import sys
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_CASES = os.path.join(HERE, "..", "corpora", "http1-responses",
                             "responses", "cases.json")
METHODS = {"GET": 0, "HEAD": 1, "CONNECT": 2}
PIECE_SIZES = [1, 2, 3, 7, 16, 64]
MAX_SEED_BYTES = 16 * 1024

HAND_WRITTEN = {
    "hand-chunked-trailers": (0, b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                                 b"5;name=value;q=\"a\\\"b\"\r\nhello\r\n6\r\n world\r\n"
                                 b"0\r\nExpires: never\r\nX-Checksum: abc\r\n\r\n"),
    "hand-pipelined-pair": (0, b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello"
                               b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"),
    "hand-1xx-then-200": (0, b"HTTP/1.1 100 Continue\r\n\r\n"
                             b"HTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload\r\n\r\n"
                             b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"),
    "hand-until-close-http10": (0, b"HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\nbody until EOF"),
    "hand-head-response": (1, b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n"
                              b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nx"),
    "hand-connect-tunnel": (2, b"HTTP/1.1 200 Connection Established\r\n\r\n\x16\x03\x01\x00\x05hello"),
    "hand-obs-fold-lf-only": (3, b"HTTP/1.1 200 OK\nX-Folded: a\n  b\nContent-Length: 3\n\nabc"),
    "hand-chunked-lf-only": (0, b"HTTP/1.1 200 OK\nTransfer-Encoding: chunked\n\n3\nabc\n0\n\n"),
}


CACHE_SEEDS = {
    "max-age": "Cache-Control: max-age=60\nDate: Sun, 06 Nov 1994 08:49:37 GMT\nETag: \"v1\"\n",
    "quoted-max-age": "Cache-Control: foo=\"max-age=60\", private=\"a, max-age=9\", max-age=\"007\"\n",
    "leading-zeros-clamp": "Cache-Control: max-age=0000060, s-maxage=99999999999999999999\nAge: 2147483649\n",
    "invalid-values": "Cache-Control: max-age=abc, max-stale, min-fresh=-1, stale-if-error=\"x\nAge: 1, 2\nAge: x\n",
    "escapes": "Cache-Control: x=\"a\\\"b\\\\c\", no-cache=\"Set-Cookie, X-Id\", NO-STORE, Must-Understand\n",
    "expires-forms": ("Date: Sun, 06 Nov 1994 08:49:37 GMT\nExpires: Sunday, 06-Nov-94 09:49:37 GMT\n"
                      "Last-Modified: Sun Nov  6 07:49:37 1994\nExpires: 0\n"),
    "heuristic": "Date: Mon, 07 Nov 1994 08:49:37 GMT\nLast-Modified: Sun, 06 Nov 1994 08:49:37 GMT\nCache-Control: public\n",
    "vary": "Vary: Accept-Encoding, accept\nVary: *\nVary: X-A ,X-B,, \"q\"\nAccept: text/html\n",
    "stale-extensions": "Cache-Control: max-age=1, stale-while-revalidate=30, stale-if-error=600, must-revalidate\nETag: W/\"w\"\n",
    "locations": ("Location: ../x/./y?z#f\nContent-Location: HTTPS://EXAMPLE.com:443/r\nLocation: //evil.example/\n"
                  "http://[::1]:8080/a/../b\n"),
    "hop-by-hop": "Connection: close, X-Hop\nX-Hop: 1\nKeep-Alive: timeout=5\nCache-Control: max-age=5\nPragma: no-cache\n",
    "request-directives": "Cache-Control: only-if-cached, max-stale=30, min-fresh=5, no-cache\nAuthorization: Bearer x\n",
}


def control(method, index):
    return bytes([METHODS.get(method, 0) | ((PIECE_SIZES[index % len(PIECE_SIZES)] - 1) << 2)])


def write(directory, name, data):
    with open(os.path.join(directory, name + ".bin"), "wb") as f:
        f.write(data)


def main():
    cases_path = sys.argv[1] if len(sys.argv) > 1 else DEFAULT_CASES
    with open(cases_path) as f:
        cases = json.load(f)["cases"]

    out = os.path.join(HERE, "response-parser")
    os.makedirs(out, exist_ok=True)
    for name in os.listdir(out):
        os.remove(os.path.join(out, name))
    written = 0
    for index, case in enumerate(cases):
        raw = base64.b64decode(case["raw_b64"])
        if len(raw) > MAX_SEED_BYTES:
            continue
        written += 1
        safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in case["id"])
        write(out, safe, control(case.get("method", "GET"), index) + raw)
    for index, (name, (method_bits, raw)) in enumerate(sorted(HAND_WRITTEN.items())):
        write(out, name, bytes([method_bits | ((PIECE_SIZES[index % len(PIECE_SIZES)] - 1) << 2)]) + raw)
    print(f"{written + len(HAND_WRITTEN)} seeds in {os.path.relpath(out)}")

    out = os.path.join(HERE, "content-decoder")
    os.makedirs(out, exist_ok=True)
    for name in os.listdir(out):
        os.remove(os.path.join(out, name))
    text = b"Bluebonnet decodes gzip and deflate bodies. " * 20
    seeds = {
        "gzip-text": (0, gzip.compress(text, compresslevel=9, mtime=0)),
        "gzip-empty": (0, gzip.compress(b"", mtime=0)),
        "gzip-two-members": (0, gzip.compress(b"first ", mtime=0) + gzip.compress(b"second", mtime=0)),
        "gzip-zeros-64k": (0, gzip.compress(bytes(65536), compresslevel=9, mtime=0)),
        "gzip-truncated": (0, gzip.compress(text, mtime=0)[:-6]),
        "deflate-zlib": (1, zlib.compress(text, 9)),
        "deflate-raw": (1, raw_deflate(text)),
        "deflate-stored": (1, zlib.compress(b"stored block", 0)),
        "gzip-then-deflate": (2, zlib.compress(gzip.compress(text, mtime=0))),
        "identity": (3, b"plain bytes"),
    }
    for index, (name, (codings, body)) in enumerate(sorted(seeds.items())):
        write(out, name, bytes([codings | ((PIECE_SIZES[index % len(PIECE_SIZES)] - 1) << 2)]) + body)
    count = len(seeds)
    for index, case in enumerate(cases):
        if not case["id"].startswith("ce-"):
            continue
        raw = base64.b64decode(case["raw_b64"])
        head, _, body = raw.partition(b"\r\n\r\n")
        lowered = head.lower()
        codings = 0 if b"gzip" in lowered else 1 if b"deflate" in lowered else None
        if b"gzip" in lowered and b"deflate" in lowered:
            codings = None  # stacked in the other order than control value 2 means
        if codings is None or b"chunked" in lowered or not body or len(body) > MAX_SEED_BYTES:
            continue
        write(out, "corpus-" + case["id"], bytes([codings | ((PIECE_SIZES[index % len(PIECE_SIZES)] - 1) << 2)]) + body)
        count += 1
    print(f"{count} seeds in {os.path.relpath(out)}")

    out = os.path.join(HERE, "cache-headers")
    os.makedirs(out, exist_ok=True)
    for name in os.listdir(out):
        os.remove(os.path.join(out, name))
    for name, text in sorted(CACHE_SEEDS.items()):
        write(out, name, text.encode())
    print(f"{len(CACHE_SEEDS)} seeds in {os.path.relpath(out)}")


def raw_deflate(data):
    compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
    return compressor.compress(data) + compressor.flush()


if __name__ == "__main__":
    main()
