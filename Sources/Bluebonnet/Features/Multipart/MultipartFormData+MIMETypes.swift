extension MultipartFormData {
    /// The MIME type for a file name extension (`png` → `image/png`), case-insensitively;
    /// `application/octet-stream` for extensions not in Bluebonnet's table.
    ///
    /// Alamofire asks the system (`UTType`) on Apple platforms; Linux has no such registry a
    /// library can rely on (`/etc/mime.types` is often missing in containers), so Bluebonnet
    /// carries a table of common types, using the IANA-registered name where there is one
    /// (`application/gzip`, RFC 6713; `text/javascript`, RFC 9239). Pass a MIME type to
    /// `append(_:withName:fileName:mimeType:)` for anything else.
    public static func mimeType(forPathExtension pathExtension: String) -> String {
        let key = String(decoding: pathExtension.utf8.map { $0 >= 65 && $0 <= 90 ? $0 + 32 : $0 }, as: UTF8.self)
        return mimeTypesByExtension[key] ?? "application/octet-stream"
    }

    /// Extensions (lowercase, without the dot) to MIME types.
    static let mimeTypesByExtension: [String: String] = [
        // Text
        "txt": "text/plain", "text": "text/plain", "log": "text/plain", "conf": "text/plain",
        "html": "text/html", "htm": "text/html", "css": "text/css", "csv": "text/csv",
        "tsv": "text/tab-separated-values", "md": "text/markdown", "markdown": "text/markdown",
        "rtf": "text/rtf", "ics": "text/calendar", "vcf": "text/vcard", "js": "text/javascript",
        "mjs": "text/javascript", "xml": "application/xml", "yaml": "application/yaml", "yml": "application/yaml",
        "json": "application/json", "jsonld": "application/ld+json", "geojson": "application/geo+json",
        "ndjson": "application/x-ndjson", "toml": "application/toml", "sql": "application/sql",
        // Images
        "png": "image/png", "jpg": "image/jpeg", "jpeg": "image/jpeg", "jpe": "image/jpeg", "gif": "image/gif",
        "webp": "image/webp", "avif": "image/avif", "heic": "image/heic", "heif": "image/heif",
        "bmp": "image/bmp", "tif": "image/tiff", "tiff": "image/tiff", "svg": "image/svg+xml",
        "ico": "image/vnd.microsoft.icon", "jxl": "image/jxl",
        // Audio
        "mp3": "audio/mpeg", "m4a": "audio/mp4", "aac": "audio/aac", "wav": "audio/wav", "flac": "audio/flac",
        "ogg": "audio/ogg", "oga": "audio/ogg", "opus": "audio/opus", "mid": "audio/midi", "midi": "audio/midi",
        "weba": "audio/webm", "aif": "audio/aiff", "aiff": "audio/aiff",
        // Video
        "mp4": "video/mp4", "m4v": "video/mp4", "mov": "video/quicktime", "webm": "video/webm",
        "mkv": "video/x-matroska", "avi": "video/x-msvideo", "mpeg": "video/mpeg", "mpg": "video/mpeg",
        "ogv": "video/ogg", "3gp": "video/3gpp", "ts": "video/mp2t",
        // Fonts
        "woff": "font/woff", "woff2": "font/woff2", "ttf": "font/ttf", "otf": "font/otf",
        // Archives and compressed data
        "zip": "application/zip", "gz": "application/gzip", "tgz": "application/gzip", "tar": "application/x-tar",
        "bz2": "application/x-bzip2", "xz": "application/x-xz", "zst": "application/zstd", "7z": "application/x-7z-compressed",
        "rar": "application/vnd.rar", "br": "application/x-brotli",
        // Documents
        "pdf": "application/pdf", "epub": "application/epub+zip", "ps": "application/postscript",
        "doc": "application/msword",
        "docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        "xls": "application/vnd.ms-excel",
        "xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
        "ppt": "application/vnd.ms-powerpoint",
        "pptx": "application/vnd.openxmlformats-officedocument.presentationml.presentation",
        "odt": "application/vnd.oasis.opendocument.text", "ods": "application/vnd.oasis.opendocument.spreadsheet",
        "odp": "application/vnd.oasis.opendocument.presentation",
        // Binaries and other data
        "bin": "application/octet-stream", "wasm": "application/wasm", "jar": "application/java-archive",
        "apk": "application/vnd.android.package-archive", "deb": "application/vnd.debian.binary-package",
        "rpm": "application/x-rpm", "dmg": "application/x-apple-diskimage", "iso": "application/x-iso9660-image",
        "sqlite": "application/vnd.sqlite3", "db": "application/vnd.sqlite3", "parquet": "application/vnd.apache.parquet",
        "pem": "application/x-pem-file", "crt": "application/x-x509-ca-cert", "der": "application/x-x509-ca-cert",
        "p12": "application/x-pkcs12", "pfx": "application/x-pkcs12",
        "plist": "application/x-plist", "pb": "application/x-protobuf",
        "sh": "application/x-sh",
    ]
}
