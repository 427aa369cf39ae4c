#!/usr/bin/env python3
"""Parses a multipart/form-data body with Python's standard `email` package: an independent
reader of what MultipartFormData encodes (see Tests/BluebonnetTests/Multipart/).

Usage: parse_form.py CONTENT-TYPE BODY-FILE

Prints one JSON object: {"multipart": bool, "defects": [...], "parts": [{"name", "filename",
"content_type", "length", "sha256", "defects"}]}.

The body is parsed as bytes with the modern header parser (`email.policy.HTTP`), which reads
raw UTF-8 in header parameters as UTF-8 (RFC 7578 §5.1 form data is UTF-8, names and file names
included). Payloads come back as the bytes sent (no Content-Transfer-Encoding is used).
"""
import hashlib
import json
import sys
from email import policy
from email.parser import BytesParser


def main():
    content_type, path = sys.argv[1], sys.argv[2]
    with open(path, "rb") as body_file:
        body = body_file.read()
    head = b"MIME-Version: 1.0\r\nContent-Type: " + content_type.encode("ascii") + b"\r\n\r\n"
    message = BytesParser(policy=policy.HTTP).parsebytes(head + body)
    parts = []
    for part in message.iter_parts():
        disposition = part["Content-Disposition"]
        params = dict(disposition.params) if disposition is not None else {}
        payload = part.get_payload(decode=True) or b""
        content_type_header = part["Content-Type"]
        parts.append({
            "name": params.get("name"),
            "filename": params.get("filename"),
            "content_type": str(content_type_header) if content_type_header is not None else None,
            "length": len(payload),
            "sha256": hashlib.sha256(payload).hexdigest(),
            "defects": [type(defect).__name__ for defect in part.defects],
        })
    json.dump({
        "multipart": message.is_multipart(),
        "defects": [type(defect).__name__ for defect in message.defects],
        "parts": parts,
    }, sys.stdout)


if __name__ == "__main__":
    main()
