/*
 * cref: the C reference client of the throughput harness (Benchmarks/README.md, "throughput").
 *
 * The simplest fast HTTP/1.1 client: one blocking socket, 256 KiB reads, keep-alive, bodies
 * framed by Content-Length or chunked, optional OpenSSL. It stands for "what the kernel, the
 * server and OpenSSL allow one connection to do" in the bulk, upload and handshake scenarios,
 * where wrk (which reads in small pieces and keeps no body) is not the limit.
 *
 *   cref --host 127.0.0.1 --port P --path /64m.bin [--method POST --upload N] [--tls --ca CA.pem]
 *        [--new-conn [--resume]] [--memory] --expect BYTES [--warmup S] [--duration S]
 *        [--scenario NAME]
 *
 * Prints one JSON line with the keys of the Swift worker's result (Measurement.swift).
 * Built by the coordinator at run time: cc -O2 cref.c -lssl -lcrypto.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define READ_SIZE (256 * 1024)
#define BUF_CAP (READ_SIZE + 64 * 1024)

/* ---- options ---- */
static const char *host = "127.0.0.1", *path = "/", *method = "GET", *ca = NULL, *scenario = "";
static int port = 0, use_tls = 0, new_conn = 0, resume = 0, memory = 0;
static long upload = 0, expect = -1;
static double warmup = 1, duration = 5;

/* ---- latency histogram: 64 buckets per power of two, as LatencyHistogram in Swift ---- */
#define SUB_BITS 6
#define SUB_COUNT (1 << SUB_BITS)
#define BUCKETS ((64 - SUB_BITS) * SUB_COUNT)
static uint64_t hist[BUCKETS], hist_total;

static int hist_index(uint64_t v) {
    if (v < SUB_COUNT) return (int)v;
    int magnitude = 63 - __builtin_clzll(v), shift = magnitude - SUB_BITS;
    int idx = (shift + 1) * SUB_COUNT + (int)((v >> shift) & (SUB_COUNT - 1));
    return idx < BUCKETS ? idx : BUCKETS - 1;
}

static double hist_midpoint(int i) {
    if (i < SUB_COUNT) return i;
    int shift = i / SUB_COUNT - 1, sub = i % SUB_COUNT;
    return (double)((uint64_t)(SUB_COUNT + sub) << shift) + (double)(1ULL << shift) / 2;
}

static double hist_percentile_us(double q) {
    if (!hist_total) return 0;
    uint64_t rank = (uint64_t)((double)hist_total * q + 0.999999), seen = 0;
    if (rank < 1) rank = 1;
    for (int i = 0; i < BUCKETS; i++) {
        seen += hist[i];
        if (hist[i] && seen >= rank) return hist_midpoint(i) / 1000.0;
    }
    return 0;
}

static uint64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000ULL + (uint64_t)t.tv_nsec;
}

static double cpu_seconds(void) {
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return u.ru_utime.tv_sec + u.ru_utime.tv_usec / 1e6 + u.ru_stime.tv_sec + u.ru_stime.tv_usec / 1e6;
}

static long peak_rss_kib(void) {
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kib = 0;
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "VmHWM:", 6)) kib = strtol(line + 6, NULL, 10);
    if (f) fclose(f);
    return kib;
}

/* ---- connection ---- */
static SSL_CTX *ctx;
static SSL_SESSION *saved_session;
static int fd = -1;
static SSL *ssl;
static long handshakes, resumed;
static unsigned char *rbuf;
static size_t rpos, rlen; /* unread bytes are rbuf[rpos..<rlen] */
static char last_error[200];

static void fail(const char *what) {
    if (!last_error[0]) snprintf(last_error, sizeof last_error, "%s (errno %d)", what, errno);
}

static void conn_close(void) {
    if (ssl) {
        /* close_notify: OpenSSL marks the session of a connection freed without it unresumable. */
        SSL_shutdown(ssl);
        if (resume) {
            SSL_SESSION *s = SSL_get1_session(ssl);
            if (s) {
                if (saved_session) SSL_SESSION_free(saved_session);
                saved_session = s;
            }
        }
        SSL_free(ssl);
        ssl = NULL;
    }
    if (fd >= 0) close(fd);
    fd = -1;
    rpos = rlen = 0;
}

static int conn_open(void) {
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    inet_pton(AF_INET, host, &a.sin_addr);
    fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0) { fail("connect"); conn_close(); return -1; }
    if (use_tls) {
        ssl = SSL_new(ctx);
        SSL_set_fd(ssl, fd);
        X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), host);
        if (resume && saved_session) SSL_set_session(ssl, saved_session);
        if (SSL_connect(ssl) != 1) {
            ERR_error_string_n(ERR_get_error(), last_error, sizeof last_error);
            conn_close();
            return -1;
        }
        handshakes++;
        if (SSL_session_reused(ssl)) resumed++;
    }
    return 0;
}

static long conn_read(void *into, size_t n) {
    if (ssl) {
        int r = SSL_read(ssl, into, (int)n);
        return r > 0 ? r : -1;
    }
    ssize_t r;
    do r = read(fd, into, n); while (r < 0 && errno == EINTR);
    return r > 0 ? r : -1;
}

static int conn_write_all(const unsigned char *p, size_t n) {
    while (n) {
        long w = ssl ? SSL_write(ssl, p, (int)n) : write(fd, p, n);
        if (w <= 0) { if (!ssl && errno == EINTR) continue; fail("write"); return -1; }
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Read more into rbuf, up to 256 KiB at once (the unread rest is moved to the front first when
 * less room than that is left); -1 on EOF or error. */
static int fill(void) {
    if (rpos == rlen) rpos = rlen = 0;
    if (rpos > 0 && BUF_CAP - rlen < READ_SIZE) { memmove(rbuf, rbuf + rpos, rlen - rpos); rlen -= rpos; rpos = 0; }
    if (rlen == BUF_CAP) { fail("head too large"); return -1; }
    size_t room = BUF_CAP - rlen;
    long n = conn_read(rbuf + rlen, room < READ_SIZE ? room : READ_SIZE);
    if (n <= 0) { fail("read"); return -1; }
    rlen += (size_t)n;
    return 0;
}

/* ---- body sink ---- */
static unsigned char *mem;
static size_t mem_len, mem_cap;
static long body_bytes;

static void sink(const unsigned char *p, size_t n) {
    body_bytes += (long)n;
    if (!memory) return;
    if (mem_len + n > mem_cap) {
        mem_cap = mem_cap ? mem_cap * 2 : 64 * 1024;
        while (mem_cap < mem_len + n) mem_cap *= 2;
        mem = realloc(mem, mem_cap);
    }
    memcpy(mem + mem_len, p, n);
    mem_len += n;
}

/* Moves exactly `n` body bytes to the sink: first what is buffered, then reads of 256 KiB.
 * Into memory with room (Content-Length): straight into the body, never past it, so a big body
 * is copied once. Otherwise into rbuf, where whatever follows the body (the next chunk-size line,
 * the next response) stays for the parser: one read serves many small chunks. */
static int body_exact(size_t n) {
    for (;;) {
        size_t take = rlen - rpos < n ? rlen - rpos : n;
        sink(rbuf + rpos, take);
        rpos += take;
        n -= take;
        if (!n) return 0;
        /* rbuf is drained here */
        size_t want = n < READ_SIZE ? n : READ_SIZE;
        if (memory && mem_cap >= mem_len + want) {
            long got = conn_read(mem + mem_len, want);
            if (got <= 0) { fail("read body"); return -1; }
            mem_len += (size_t)got;
            body_bytes += got;
            n -= (size_t)got;
            if (!n) return 0;
        } else if (fill() != 0) {
            return -1;
        }
    }
}

/* One CRLF-terminated line from rbuf (filling as needed); returns its length, sets *line. */
static long take_line(char **line) {
    for (;;) {
        unsigned char *p = memmem(rbuf + rpos, rlen - rpos, "\r\n", 2);
        if (p) {
            *line = (char *)rbuf + rpos;
            long len = (long)(p - (rbuf + rpos));
            rpos += (size_t)len + 2;
            return len;
        }
        if (fill() != 0) return -1;
    }
}

static char request_head[1024];
static unsigned char *request_bytes;
static size_t request_len;

/* One request and its response; 0 when it passed every check. */
static int exchange(void) {
    if (fd < 0 && conn_open() != 0) return -1;
    if (conn_write_all(request_bytes, request_len) != 0) { conn_close(); return -1; }
    /* head */
    unsigned char *end;
    while (!(end = memmem(rbuf + rpos, rlen - rpos, "\r\n\r\n", 4)))
        if (fill() != 0) { conn_close(); return -1; }
    char *head = (char *)rbuf + rpos;
    size_t head_len = (size_t)(end - (rbuf + rpos)) + 4;
    int status = (head_len > 12) ? atoi(head + 9) : 0;
    long content_length = -1;
    int chunked = 0, close_after = new_conn;
    for (char *l = strstr(head, "\r\n") + 2; l < (char *)end; l = strstr(l, "\r\n") + 2) {
        if (!strncasecmp(l, "Content-Length:", 15)) content_length = strtol(l + 15, NULL, 10);
        else if (!strncasecmp(l, "Transfer-Encoding:", 18) && strcasestr(l, "chunked") < strstr(l, "\r\n") && strcasestr(l, "chunked")) chunked = 1;
        else if (!strncasecmp(l, "Connection:", 11) && strncasecmp(l + 11 + strspn(l + 11, " "), "close", 5) == 0) close_after = 1;
    }
    rpos += head_len;
    body_bytes = 0;
    mem_len = 0;
    if (memory && content_length > 0 && (size_t)content_length > mem_cap) {
        free(mem);
        mem_cap = (size_t)content_length;
        mem = malloc(mem_cap);
    }
    int ok = 0;
    if (chunked) {
        for (;;) {
            char *line;
            if (take_line(&line) < 0) { ok = -1; break; }
            size_t size = strtoul(line, NULL, 16);
            if (size == 0) {
                long len;
                do len = take_line(&line); while (len > 0); /* trailers, then the empty line */
                if (len < 0) ok = -1;
                break;
            }
            if (body_exact(size) != 0 || take_line(&line) != 0) { ok = -1; break; }
        }
    } else if (content_length > 0) {
        ok = body_exact((size_t)content_length);
    }
    if (memory) { /* a client hands every body over and lets it go: no buffer reused across responses */
        free(mem);
        mem = NULL;
        mem_cap = 0;
    }
    if (ok != 0) { conn_close(); return -1; }
    if (close_after) conn_close();
    int expected_status = upload > 0 ? 204 : 200;
    if (status != expected_status) { snprintf(last_error, sizeof last_error, "status %d", status); return -1; }
    if (expect >= 0 && body_bytes != expect) {
        snprintf(last_error, sizeof last_error, "body %ld bytes, expected %ld", body_bytes, expect);
        return -1;
    }
    return 0;
}

int main(int argc, char **argv) {
    signal(SIGPIPE, SIG_IGN);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : "";
        if (!strcmp(a, "--host")) host = v, i++;
        else if (!strcmp(a, "--port")) port = atoi(v), i++;
        else if (!strcmp(a, "--path")) path = v, i++;
        else if (!strcmp(a, "--method")) method = v, i++;
        else if (!strcmp(a, "--upload")) upload = atol(v), i++;
        else if (!strcmp(a, "--ca")) ca = v, i++;
        else if (!strcmp(a, "--expect")) expect = atol(v), i++;
        else if (!strcmp(a, "--warmup")) warmup = atof(v), i++;
        else if (!strcmp(a, "--duration")) duration = atof(v), i++;
        else if (!strcmp(a, "--scenario")) scenario = v, i++;
        else if (!strcmp(a, "--tls")) use_tls = 1;
        else if (!strcmp(a, "--new-conn")) new_conn = 1;
        else if (!strcmp(a, "--resume")) resume = 1;
        else if (!strcmp(a, "--memory")) memory = 1;
        else { fprintf(stderr, "cref: unknown argument %s\n", a); return 64; }
    }
    if (use_tls) {
        ctx = SSL_CTX_new(TLS_client_method());
        SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
        if (!ca || SSL_CTX_load_verify_locations(ctx, ca, NULL) != 1) { fprintf(stderr, "cref: cannot load CA\n"); return 1; }
        /* Sessions are offered only when asked (--resume): SSL_set_session on the next connect. */
        SSL_CTX_set_session_cache_mode(ctx, resume ? SSL_SESS_CACHE_CLIENT : SSL_SESS_CACHE_OFF);
    }
    rbuf = malloc(BUF_CAP);
    int n = snprintf(request_head, sizeof request_head,
                     "%s %s HTTP/1.1\r\nHost: %s:%d\r\nUser-Agent: bluebonnet-cref\r\nAccept: */*\r\n%s",
                     method, path, host, port, new_conn ? "Connection: close\r\n" : "");
    if (upload > 0) n += snprintf(request_head + n, sizeof request_head - (size_t)n, "Content-Length: %ld\r\n", upload);
    n += snprintf(request_head + n, sizeof request_head - (size_t)n, "\r\n");
    request_len = (size_t)n + (size_t)upload;
    request_bytes = malloc(request_len);
    memcpy(request_bytes, request_head, (size_t)n);
    memset(request_bytes + n, 'u', (size_t)upload);

    long requests = 0, failures = 0, bytes = 0;
    uint64_t warm_end = now_ns() + (uint64_t)(warmup * 1e9);
    while (now_ns() < warm_end) exchange();
    handshakes = resumed = 0;
    last_error[0] = 0;
    double cpu0 = cpu_seconds();
    uint64_t start = now_ns(), deadline = start + (uint64_t)(duration * 1e9);
    while (now_ns() < deadline) {
        uint64_t t0 = now_ns();
        if (exchange() == 0) {
            requests++;
            bytes += body_bytes + upload;
            uint64_t d = now_ns() - t0;
            hist[hist_index(d)]++;
            hist_total++;
        } else {
            failures++;
        }
    }
    double wall = (double)(now_ns() - start) / 1e9, cpu = cpu_seconds() - cpu0;
    conn_close();
    char note[300] = "";
    if (use_tls && new_conn)
        snprintf(note, sizeof note, "%ld of %ld handshakes resumed", resumed, handshakes);
    if (last_error[0]) {
        size_t len = strlen(note);
        snprintf(note + len, sizeof note - len, "%sfirst failure: %s", len ? "; " : "", last_error);
    }
    for (char *c = note; *c; c++) if (*c == '"' || *c == '\\') *c = '\'';
    printf("{\"bytes\":%ld,\"client\":\"cref\",\"cpu_s\":%.6f,\"failures\":%ld,\"note\":%s%s%s,"
           "\"p50_us\":%.3f,\"p99_us\":%.3f,\"peak_rss_kib\":%ld,\"requests\":%ld,\"scenario\":\"%s\",\"wall_s\":%.6f}\n",
           bytes, cpu, failures, note[0] ? "\"" : "", note[0] ? note : "null", note[0] ? "\"" : "",
           hist_percentile_us(0.5), hist_percentile_us(0.99), peak_rss_kib(), requests, scenario, wall);
    return 0;
}
