"""The HTTP/1.1 request-head parser Bluebonnet's Python fixtures share (standard library only).

fault_server.py, proxy_server.py and replay_server.py import it from beside themselves (Python
puts a script's own folder first on sys.path).
"""


class BadRequest(Exception):
    """The client sent something the fixture answers with 400."""


def parse_head(raw):
    """Parses a request head without its final CRLF CRLF: (method, target, version, headers),
    headers as (name, value) pairs in order, values trimmed of spaces and tabs.

    Raises BadRequest for a request line that is not three parts ending in HTTP/1.x, or a header
    line without a colon or with whitespace around the name.
    """
    lines = raw.decode("latin-1").split("\r\n")
    parts = lines[0].split(" ")
    if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
        raise BadRequest("bad request line")
    headers = []
    for line in lines[1:]:
        if not line:
            continue
        name, sep, value = line.partition(":")
        if not sep or not name or name != name.strip():
            raise BadRequest("bad header line")
        headers.append((name, value.strip(" \t")))
    return parts[0], parts[1], parts[2], headers
