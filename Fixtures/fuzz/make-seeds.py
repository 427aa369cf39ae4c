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

cookies/, auth-challenges/, download-ranges/, multipart/, redirects/: the seeds of FuzzCookies,
FuzzAuthChallenges, FuzzDownloadRanges, FuzzMultipart and FuzzRedirects, written from the tables
below (each file's layout is the one its target's source describes): Set-Cookie lines of RFC
6265bis's examples and rules, WWW-Authenticate fields of RFC 7616 §3.9 and RFC 9110 §11, the three
Content-Range forms of RFC 9110 §14.4 and resume data as Bluebonnet writes it, multipart forms
with names to escape and bodies holding boundary-like bytes, Location values of RFC 3986 §5.4's
examples.
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


# FuzzCookies: byte 0 picks the origin (0 http://example.com/, 1 https://example.com/a/b,
# 2 https://www.example.com/dir/page, 3 http://sub.example.co.uk/x/, 4 https://127.0.0.1:8443/p,
# 5 http://localhost/, 6 https://user.github.io/repo/, 7 https://EXAMPLE.com/A/), then Set-Cookie lines.
COOKIE_SEEDS = {
    "basic": (1, "SID=31d4d96e407aad42\nlang=en-US; Path=/; Domain=example.com\n"),
    "attributes": (1, "a=1; Secure; HttpOnly; SameSite=Strict; Path=/a\nb=2; Max-Age=3600; SameSite=None; Secure\n"
                      "c=3; Expires=Wed, 09 Jun 2100 10:18:14 GMT\nd=4; Max-Age=0\n"),
    "domains": (2, "w=1; Domain=.example.com\nx=2; Domain=www.example.com\ny=3; Domain=other.com\nz=4; Domain=com\n"
                   "v=5; Domain=EXAMPLE.COM.\n"),
    "public-suffix": (3, "a=1; Domain=co.uk\nb=2; Domain=example.co.uk\nc=3; Domain=sub.example.co.uk; Path=/x\n"),
    "github-io": (6, "a=1; Domain=github.io\nb=2; Domain=user.github.io; Path=/repo\n"),
    "prefixes": (1, "__Secure-a=1; Secure\n__Host-b=2; Secure; Path=/\n__Host-c=3; Secure; Path=/; Domain=example.com\n"
                    "__Secure-d=4\n__host-e=5; Secure; Path=/\n"),
    "insecure-secure": (0, "s=1; Secure\n__Secure-t=2; Secure\nu=3\n"),
    "paths": (2, "p=1; Path=/dir\nq=2; Path=/dir/\nr=3; Path=dir\ns=4; Path=/dir/page/more\nt=5\n"),
    "ip-host": (4, "a=1\nb=2; Domain=127.0.0.1\nc=3; Domain=0.0.1\n"),
    "localhost": (5, "a=1; Domain=localhost\nb=2\n"),
    "odd-syntax": (0, "=v\nn=\n  x = y ; path = /z ;;; secure\n\"q\"=\"w\"\nno-equals\n;a=b\nc=d;e\ttab=val\n"),
    "dates": (1, "a=1; Expires=Sun, 06 Nov 1994 08:49:37 GMT\nb=2; expires=Sunday, 06-Nov-94 08:49:37 GMT\n"
                 "c=3; Expires=Sun Nov  6 08:49:37 1994\nd=4; Expires=99 Jan 1 0:0:0\ne=5; Max-Age=99999999999999999999\n"
                 "f=6; Max-Age=-5\ng=7; Max-Age=1e3\n"),
    "uppercase-host": (7, "a=1; Domain=Example.COM; Path=/A\nb=2\n"),
    "replace": (1, "a=1; Path=/\na=2; Path=/\na=3; Path=/a\na=; Max-Age=0; Path=/\n"),
    "joined": (1, "a=1, b=2; Expires=Wed, 09 Jun 2100 10:18:14 GMT, c=3\n"),
}

# FuzzAuthChallenges: line 0 the user name, then WWW-Authenticate field values.
AUTH_SEEDS = {
    "rfc7616-example": "Mufasa\nDigest realm=\"http-auth@example.org\", qop=\"auth, auth-int\", algorithm=SHA-256, "
                       "nonce=\"7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v\", opaque=\"FQhe/qaU925kfnzjCev0ciny7QMkPqMAFRtzCUYo5tdS\"\n"
                       "Digest realm=\"http-auth@example.org\", qop=\"auth, auth-int\", algorithm=MD5, "
                       "nonce=\"7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v\", opaque=\"FQhe/qaU925kfnzjCev0ciny7QMkPqMAFRtzCUYo5tdS\"\n",
    "userhash-utf8": "J\u00e4s\u00f8n Doe\nDigest realm=\"api@example.org\", qop=auth, algorithm=SHA-512-256, "
                     "nonce=\"5TsQWLVdgBdmrQ0XsxbDODV+57QdFR34I9HAbC/RVvkK\", opaque=\"HRPCssKJSGjCrkzDg8OhwpzCiGPChXYjwrI2QmXDnsOS\", "
                     "charset=UTF-8, userhash=true\n",
    "several-in-one": "user\nBasic realm=\"simple\", Newauth realm=\"apps\", type=1, title=\"Login to \\\"apps\\\"\", "
                      "Digest realm=\"x\", nonce=\"n\", algorithm=SHA-256-sess, qop=\"auth-int\"\n",
    "token68": "user\nNegotiate YIIFyQYGKwYBBQUCoIIFvTCCBbmgMDAuBgkqhkiC9xIBAgIGCSqGSIb3EgECAgYKKwYBBAGCNwICHgYKKwYBBAGCNwICCg==\n"
               "Bearer realm=\"example\", error=\"invalid_token\", error_description=\"The access token expired\"\n",
    "rfc2069": "Mufasa\nDigest realm=\"testrealm@host.com\", nonce=\"dcd98b7102dd2f0e8b11d0f600bfb0c093\", opaque=\"5ccc069c403ebaf9f0171e9517f40e41\"\n",
    "odd-syntax": "a\"b\\c\n , ,Digest   realm = \"r\" ,, nonce=n, stale=TRUE, algorithm=md5-SESS, qop=\"auth-int,auth\"\n"
                  "Digest realm=\"unterminated\nDigest nonce=\"\", algorithm=SHA-1\nBasic\n",
    "escapes": "\u00fcser\tname\nDigest realm=\"a\\\"b\\\\c\\d\", nonce=\"\\\"\", opaque=\"\\\\\", qop=auth\n",
}

# FuzzDownloadRanges: the whole file is a Content-Range value and resume data at once; files
# starting with 8 count bytes also exercise the NUL-separated field layout.
RANGE_SEEDS = {
    "content-range": b"bytes 21010-47021/47022",
    "content-range-unknown": b"bytes 0-0/*",
    "content-range-unsatisfied": b"bytes */47022",
    "content-range-spaces": b" \tBYTES  9223372036854775806-9223372036854775806/9223372036854775807 ",
    "content-range-bad": b"bytes 5-4/10",
    "resume-data": json.dumps({"bytesReceived": 1024, "entityTag": "\"v1\"", "format": "bluebonnet-resume-data",
                               "headers": [["Accept", "*/*"], ["Range", "bytes=0-"]], "lastModified": "Sun, 06 Nov 1994 08:49:37 GMT",
                               "temporaryFile": "/tmp/file.download", "totalBytes": 4096, "url": "https://example.com/file.bin",
                               "version": 1}, sort_keys=True, separators=(",", ":")).encode(),
    "resume-data-weak": json.dumps({"bytesReceived": 0, "entityTag": "W/\"w\"", "format": "bluebonnet-resume-data",
                                    "headers": [], "temporaryFile": "", "url": "http://a/b", "version": 1}).encode(),
    "resume-data-bad": b"{\"format\":\"bluebonnet-resume-data\",\"version\":2,\"url\":\"\",\"headers\":[[\"a\"]],"
                       b"\"temporaryFile\":1,\"bytesReceived\":-1}",
    "fields": (4096 << 16 | 0x8000 | 4000).to_bytes(8, "little") + b"https://example.com/f\0/tmp/f.part\0\"tag\"\0"
              b"Sun, 06 Nov 1994 08:49:37 GMT\0Accept\0*/*",
    "fields-invalid": (2**64 - 1).to_bytes(8, "little") + b"not a url\0\0W/\"weak\"\0\0X\0",
}


def multipart_seed(parts, boundary=None):
    """FuzzMultipart's layout: control byte, optional boundary, then each part's fields."""
    out = bytearray([1 if boundary is not None else 0])
    if boundary is not None:
        out += bytes([len(boundary)]) + boundary
    for name, filename, mime, body in parts:
        for text in (name, filename, mime):
            out += b"\xff" if text is None else bytes([len(text)]) + text
        out += len(body).to_bytes(2, "little") + body
    return bytes(out)


MULTIPART_SEEDS = {
    "fields": multipart_seed([(b"comment", None, None, b"Lorem ipsum"), (b"n", None, b"text/plain", b"")]),
    "file": multipart_seed([(b"upload", b"unicorn.png", b"image/png", bytes(range(256)))]),
    "escapes": multipart_seed([(b"a\"b\\c", b"f\"i\\le%22.txt", b"text/plain; charset=utf-8", b"x"),
                               (b"\xc3\xa9t\xc3\xa9", b"\xe2\x98\x83.txt", None, b"\r\n\r\n")]),
    "line-breaks": multipart_seed([(b"bad\r\nname", None, None, b"x"), (b"ok", b"a\x00b", None, b"y")]),
    "boundary-like-body": multipart_seed([(b"a", None, None, b"\r\n--alamofire.boundary.\r\n--\r\n--alamofire.boundary.0123456789abcdef--"),
                                          (b"b", None, None, b"--")]),
    "custom-boundary": multipart_seed([(b"a", None, None, b"--xyz"), (b"b", None, None, b"\r\n--xy\r\n")], boundary=b"xyz"),
    "custom-boundary-in-body": multipart_seed([(b"a", None, None, b"before\r\n--b\r\nafter")], boundary=b"b"),
    "empty": b"\x00",
}

# FuzzRedirects: byte 0 = base index (bits 0-3) | status index << 4 (0 301, 1 302, 2 303, 3 307,
# 4 308) | 0x80 to allow https -> http; then the Location value.
REDIRECT_SEEDS = {
    "rfc3986-normal": (8, ["g:h", "g", "./g", "g/", "/g", "//g", "?y", "g?y", "#s", "g#s", "g?y#s", ";x", "g;x",
                           "", ".", "./", "..", "../", "../g", "../..", "../../", "../../g"]),
    "rfc3986-abnormal": (8 | 1 << 4, ["../../../g", "../../../../g", "/./g", "/../g", "g.", ".g", "g..", "..g",
                                      "./../g", "./g/.", "g/./h", "g/../h", "g;x=1/./y", "g;x=1/../y", "g?y/./x",
                                      "g?y/../x", "g#s/./x", "g#s/../x", "http:g"]),
    "downgrade": (1 | 3 << 4, ["http://example.com/a", "HTTP://example.com/", " http://example.com/", "//example.com/x"]),
    "downgrade-allowed": (1 | 4 << 4 | 0x80, ["http://example.com/a", "http:g"]),
    "origins": (4 | 2 << 4, ["https://example.com:443/x", "https://example.com:0443/", "https://a@example.com/",
                             "https://example.com.evil.test/", "https://evil.test\\@example.com/", "https://[::1]/",
                             "https://example.com:+443/", "https://EXAMPLE.COM./"]),
    "encoding": (13, ["/caf\u00e9 bar?q=\u00fc#\u2deb", "/%7e/%2F/%zz", "/a b/../c", "//\u00e9xample.com/", "/\u0301/x"]),
    "schemes": (14, ["ftp://example.com/", "javascript:alert(1)", "file:///etc/passwd", "https:", "https://", "https:///x",
                     "data:,x"]),
    "ipv6": (5, ["//[::1]:1/x", "//[::1/x", "/v6/../../z", "https://[fe80::1%25eth0]/"]),
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

    for directory, seeds in [
        ("cookies", {name: bytes([origin]) + text.encode() for name, (origin, text) in COOKIE_SEEDS.items()}),
        ("auth-challenges", {name: text.encode() for name, text in AUTH_SEEDS.items()}),
        ("download-ranges", RANGE_SEEDS),
        ("multipart", MULTIPART_SEEDS),
        ("redirects", {f"{name}-{index}": bytes([control]) + location.encode()
                       for name, (control, locations) in REDIRECT_SEEDS.items()
                       for index, location in enumerate(locations)}),
    ]:
        out = os.path.join(HERE, directory)
        os.makedirs(out, exist_ok=True)
        for name in os.listdir(out):
            os.remove(os.path.join(out, name))
        for name, data in sorted(seeds.items()):
            write(out, name, data)
        print(f"{len(seeds)} seeds in {os.path.relpath(out)}")


def raw_deflate(data):
    compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
    return compressor.compress(data) + compressor.flush()


if __name__ == "__main__":
    main()
