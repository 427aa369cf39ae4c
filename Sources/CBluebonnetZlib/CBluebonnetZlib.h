#ifndef C_BLUEBONNET_ZLIB_H
#define C_BLUEBONNET_ZLIB_H

#include <zlib.h>

// zlib's *Init2 entry points are macros (they pass ZLIB_VERSION and sizeof(z_stream)),
// which Swift cannot import: one static inline wrapper per macro, nothing else.

/// Why: `inflateInit2` is a macro over `inflateInit2_`.
static inline int cbluebonnet_inflateInit2(z_streamp strm, int windowBits) {
    return inflateInit2(strm, windowBits);
}

/// Why: `deflateInit2` is a macro over `deflateInit2_`.
static inline int cbluebonnet_deflateInit2(z_streamp strm, int level, int method,
                                          int windowBits, int memLevel, int strategy) {
    return deflateInit2(strm, level, method, windowBits, memLevel, strategy);
}

#endif
