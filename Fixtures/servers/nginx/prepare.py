#!/usr/bin/env python3
"""Prepares an nginx prefix for Bluebonnet's integration tests (Python 3 standard library only).

  python3 prepare.py PREFIX --port P [--tls-port T --cert CHAIN.pem --key KEY.pem]
                    [--docroot DIR] [--no-big]
  nginx -p PREFIX/ -c PREFIX/nginx.conf -e PREFIX/logs/error.log

Writes PREFIX/nginx.conf from nginx.conf.template beside this file, makes PREFIX/logs and
PREFIX/tmp, and makes the docroot (default PREFIX/docroot). A docroot that already holds the
marker file `.complete` is reused as it is: TestServer passes a shared cache folder named after
this script's SHA-256, so the files are written once per machine and script version, not at every
start. A new docroot is built beside its final name and renamed into place, so concurrent runs
never see a half-written one. The docroot holds:

| file        | size               | content |
|-------------|--------------------|---------|
| small.txt   | 100 B              | one line of text, padded with '.' to 100 bytes, ending in '\\n' |
| data.json   | 100,000 B          | a JSON array of small objects (gzip-compressible; nginx gzips it) |
| 1m.bin      | 1 MiB              | the offset pattern below |
| 64m.bin     | 64 MiB             | the offset pattern below (skipped with --no-big) |

Offset pattern: 16-byte lines; the line at byte offset o reads "%015x\\n" % o, so any slice of a
body says where it belongs and a dropped, repeated or reordered piece is visible. Generation
writes 1 MiB blocks built with one bytes.replace each (64 MiB in well under a second).

Both listen addresses are 127.0.0.1 (loopback only). TLS is on only when --tls-port, --cert and
--key are all given.
"""
import argparse
import json
import os
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
BLOCK = 1 << 20
_KEY = b"KKKKKKKKKK"
_template = []


def offset_block(k):
    """MiB number k of the offset pattern."""
    if not _template:
        _template.append(b"".join(_KEY + b"%05x\n" % off for off in range(0, BLOCK, 16)))
    return _template[0].replace(_KEY, b"%010x" % k)


def write_pattern(path, mib):
    with open(path, "wb") as f:
        for k in range(mib):
            f.write(offset_block(k))


def small_text():
    line = b"Bluebonnet small fixture: 100 bytes exactly."
    return line + b"." * (99 - len(line)) + b"\n"


def data_json(size=100_000):
    parts = []
    length = 1  # "["
    i = 0
    while True:
        item = json.dumps({"id": i, "name": "item-%05d" % i, "tags": ["alpha", "beta", "gamma"][: i % 3 + 1],
                           "value": (i * 7919) % 1000, "active": i % 2 == 0}, separators=(",", ":")).encode()
        if length + len(item) + 1 + len(',{"pad":""}]') > size:
            break
        parts.append(item)
        length += len(item) + 1
        i += 1
    body = b"[" + b",".join(parts)
    pad = size - len(body) - len(',{"pad":""}]')
    body += b',{"pad":"' + b"x" * pad + b'"}]'
    assert len(body) == size, len(body)
    json.loads(body)
    return body


def make_docroot(docroot, big):
    if os.path.exists(os.path.join(docroot, ".complete")):
        return
    building = f"{docroot}.building-{os.getpid()}"
    os.makedirs(building)
    with open(os.path.join(building, "small.txt"), "wb") as f:
        f.write(small_text())
    with open(os.path.join(building, "data.json"), "wb") as f:
        f.write(data_json())
    write_pattern(os.path.join(building, "1m.bin"), 1)
    if big:
        write_pattern(os.path.join(building, "64m.bin"), 64)
    open(os.path.join(building, ".complete"), "wb").close()
    os.makedirs(os.path.dirname(docroot), exist_ok=True)
    try:
        os.rename(building, docroot)
    except OSError:  # another run finished first (or a partial one is in the way)
        shutil.rmtree(building, ignore_errors=True)
        if not os.path.exists(os.path.join(docroot, ".complete")):
            raise


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("prefix")
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--tls-port", type=int)
    ap.add_argument("--cert")
    ap.add_argument("--key")
    ap.add_argument("--docroot", help="where the files are (reused when complete); default PREFIX/docroot")
    ap.add_argument("--no-big", action="store_true", help="skip 64m.bin")
    a = ap.parse_args()

    prefix = os.path.abspath(a.prefix)
    for d in ("logs", "tmp"):
        os.makedirs(os.path.join(prefix, d), exist_ok=True)
    docroot = os.path.abspath(a.docroot or os.path.join(prefix, "docroot"))
    make_docroot(docroot, big=not a.no_big)

    listen = [f"        listen 127.0.0.1:{a.port};"]
    tls = (a.tls_port, a.cert, a.key)
    if any(tls) and not all(tls):
        sys.exit("prepare.py: TLS needs --tls-port, --cert and --key together")
    if all(tls):
        listen += [f"        listen 127.0.0.1:{a.tls_port} ssl;",
                   f"        ssl_certificate {os.path.abspath(a.cert)};",
                   f"        ssl_certificate_key {os.path.abspath(a.key)};",
                   "        ssl_protocols TLSv1.2 TLSv1.3;",
                   "        ssl_session_cache shared:tls:1m;"]
    user = ""
    if os.geteuid() == 0:  # the worker would otherwise drop to `nobody` and lose the docroot
        import grp
        import pwd
        user = f"user {pwd.getpwuid(0).pw_name} {grp.getgrgid(0).gr_name};"
    with open(os.path.join(HERE, "nginx.conf.template"), encoding="utf-8") as f:
        conf = f.read()
    conf = conf.replace("@USER@", user).replace("@LISTEN@", "\n".join(listen)).replace("@PREFIX@", prefix).replace("@DOCROOT@", docroot)
    with open(os.path.join(prefix, "nginx.conf"), "w", encoding="utf-8") as f:
        f.write(conf)


if __name__ == "__main__":
    main()
