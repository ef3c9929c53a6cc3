/*
 * faultproxy - a fault-injecting HTTP/1.1 relay for the S3 tests.
 *
 * Sits between the S3 client (libcurl, plain http on 127.0.0.1) and a real S3 server and
 * forwards requests and responses byte for byte. Messages are framed (head; body by
 * Content-Length or chunked; responses also "no body" for HEAD/204/304/1xx, or "until close")
 * only so the proxy knows where a message ends and where to cut it: bytes are never re-encoded.
 *
 * Faults fire on a deterministic schedule so a test can prove that push/pull still succeed and
 * that retries happened: each rule counts the requests it matches and fires on every EVERY-th
 * one; when several rules fire on one request the first in the list wins. The stats file says
 * how many requests arrived and how many faults of each kind were injected; it is rewritten
 * (temp + rename) as each request arrives (so after every fault) and at exit, so a test may
 * read it while the proxy runs.
 *
 * Usage:
 *   faultproxy --upstream HOST:PORT --port-file PATH [--listen-port N] [--faults SPEC]
 *              [--stats-file PATH] [--seed N] [--rate MB_PER_S]
 *   SPEC  = RULE{,RULE}      RULE = KIND[@FILTER]:EVERY[:ARG]
 *   EVERY N: every N-th matching request; N!: the N-th matching request only
 *   KIND  reset      forward; send the response head and half the body; then RST the client
 *         reset_req  read part of the request body (after a 100 Continue if asked); then RST
 *         500        do not forward; drain the body; answer 500 InternalError (S3 XML)
 *         503        do not forward; drain the body; answer 503 SlowDown, Retry-After: ARG (1)
 *         stall      forward; pause half way through the response body for ARG ms (3000);
 *                    ARG 0 pauses until the client gives up and closes
 *         trunc      forward; send the head (true Content-Length) and part of the body; FIN
 *         flip       forward, with one byte of the request body inverted on the way (a
 *                    Content-Length body; where the cut would fall)
 *   FILTER  METHOD, METHOD followed by a substring of the request target starting with '/' or
 *           '?', or such a substring alone: reset@PUT:5  503@GET/manifests/:4
 *           500@POST?uploads:1  trunc@?partNumber=:3
 *   A response without a body (HEAD, 204, 304, Content-Length: 0) is cut in the middle of its
 *   head instead; for trunc nothing is sent (the client sees an empty reply), because a client
 *   takes EOF inside such a head as the end of a response that merely lacks some headers.
 *   --rate N relays at most N MB/s (10^6 bytes), both directions sharing one token bucket:
 *   a link of that speed for whichever direction carries the data (benchmarks of a slow store).
 *   --seed 0 (the default) keeps the schedule exactly "every N-th" and cuts at half; another
 *   seed shifts each rule's phase and moves the cut (1/8 .. 7/8), still deterministically.
 *
 * Shape: one thread per client connection, each with its own lazily opened upstream
 * connection (re-opened when upstream closed it); a signal thread turns SIGTERM/SIGINT into an
 * orderly stop (live connections are shut down, the stats file is written, exit 0). Shared
 * mutable state is the rule counters and stats under g_mu and the connection registry under
 * g_reg_mu; everything else is read-only once the threads start.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* POLLRDHUP, memmem */
#endif

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#define HEAD_CAP (64 * 1024) /* request/response line + headers */
#define LINE_CAP (16 * 1024) /* one chunk-size or trailer line */
#define RD_CAP (256 * 1024)  /* per-socket read buffer */
#define MAX_RULES 32
#define FILTER_CAP 256
#define CLOSE_DRAIN_MS 1000 /* how long a graceful close waits for the client's FIN */
#define STOP_WAIT_MS 5000   /* how long shutdown waits for connection threads */

enum kind { K_RESET, K_RESET_REQ, K_500, K_503, K_STALL, K_TRUNC, K_FLIP, K_COUNT };
static const char *const kind_names[K_COUNT] = {"reset", "reset_req", "500", "503",
                                                "stall", "trunc",     "flip"};

/* Outcome of moving bytes from a reader to a sink. */
enum res {
    RL_OK = 0,
    RL_SRC_EOF,  /* the source closed (before a complete message) */
    RL_SRC_ERR,  /* the source failed */
    RL_SINK_ERR, /* the destination failed or went away */
    RL_FAULT,    /* the armed fault fired; the caller finishes it */
    RL_PROTO,    /* unparsable framing */
    RL_TOO_BIG,  /* a head or line over its cap */
};

/* What to do with the client connection after a request. */
enum act { ACT_KEEP, ACT_CLOSE, ACT_RESET, ACT_DROP };

struct rule {
    enum kind kind;
    uint64_t every;
    uint64_t arg;            /* 503: Retry-After seconds; stall: ms; else unused */
    uint64_t phase;          /* fires when (matched + phase) % every == 0 */
    bool once;               /* "N!": fires on the N-th matching request only */
    char method[32];         /* "" = any */
    char target[FILTER_CAP]; /* "" = any, else a substring of the request target */
    char spec[FILTER_CAP + 64];
    uint64_t matched, fired; /* guarded by g_mu */
};

/* A fault chosen for one request (a copy, so no lock is needed to act on it). */
struct fault {
    bool on;
    enum kind kind;
    uint64_t arg;
    unsigned cut_eighths; /* where to cut a body, in eighths */
    uint64_t reqno;
};

struct config {
    struct sockaddr_storage up_addr;
    socklen_t up_addrlen;
    int up_family;
    unsigned listen_port;
    const char *port_file;
    const char *stats_file;
    uint64_t seed;
    struct rule rules[MAX_RULES];
    size_t nrules;
};

/* Read-only after main() parses the command line. */
static struct config g_cfg;

/* Stats and rule counters. */
static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static uint64_t g_requests, g_connections, g_faults[K_COUNT];
/* Serialises stats file writes so an older snapshot never replaces a newer one. */
static pthread_mutex_t g_stats_file_mu = PTHREAD_MUTEX_INITIALIZER;

static atomic_bool g_stop;

struct rd {
    int fd;
    size_t off, len;
    unsigned char *buf; /* RD_CAP bytes */
};

struct msg {
    char raw[HEAD_CAP + 1];
    size_t len;
    /* parsed */
    char method[32];
    size_t target_off, target_len;
    int minor;  /* HTTP/1.minor */
    int status; /* responses */
    bool has_cl;
    uint64_t cl;
    bool te, chunked; /* Transfer-Encoding present; its last coding is chunked */
    bool conn_close, conn_keepalive, expect_continue;
};

struct conn {
    int cfd, ufd; /* ufd changes under g_reg_mu (shutdown reads it) */
    bool up_used; /* ufd has already carried a request */
    struct rd crd, urd;
    struct msg req, resp;
    struct conn *prev, *next;
};

static pthread_mutex_t g_reg_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_reg_cv = PTHREAD_COND_INITIALIZER;
static struct conn *g_conns;
static size_t g_active;

/* ---------------------------------------------------------------- small helpers */

static uint64_t mix64(uint64_t x)
{
    x += 0x9E3779B97F4A7C15u;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9u;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBu;
    return x ^ (x >> 31);
}

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* Parses a whole decimal string into *out; returns 0, or -1 on junk or overflow. */
static int parse_u64(const char *s, size_t n, uint64_t *out)
{
    uint64_t v = 0;
    if (n == 0 || n > 19)
        return -1;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        v = v * 10u + (uint64_t)(s[i] - '0');
    }
    *out = v;
    return 0;
}

static bool slice_ieq(const char *p, size_t n, const char *lit)
{
    return strlen(lit) == n && strncasecmp(p, lit, n) == 0;
}

static void trim(const char **p, size_t *n)
{
    while (*n > 0 && (**p == ' ' || **p == '\t')) {
        (*p)++;
        (*n)--;
    }
    while (*n > 0 && ((*p)[*n - 1] == ' ' || (*p)[*n - 1] == '\t'))
        (*n)--;
}

/* --rate: every relayed byte, both directions together, takes its turn on one timeline
 * running at g_rate_bps; a sender sleeps until its bytes' turn has passed. */
static uint64_t g_rate_bps;
static uint64_t g_rate_next_ns;
static pthread_mutex_t g_rate_mu = PTHREAD_MUTEX_INITIALIZER;
#define RATE_SLICE ((size_t)64 << 10)

static void pace(size_t n)
{
    struct timespec ts;
    uint64_t now, end;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    now = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
    pthread_mutex_lock(&g_rate_mu);
    if (g_rate_next_ns < now)
        g_rate_next_ns = now;
    g_rate_next_ns += (uint64_t)((double)n * 1e9 / (double)g_rate_bps);
    end = g_rate_next_ns;
    pthread_mutex_unlock(&g_rate_mu);
    ts.tv_sec = (time_t)(end / 1000000000u);
    ts.tv_nsec = (long)(end % 1000000000u);
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
        ;
}

/* Sends all n bytes; returns 0, or -1 when the peer is gone. */
static int send_all(int fd, const void *data, size_t n)
{
    const unsigned char *p = data;
    while (n > 0) {
        size_t take = g_rate_bps && n > RATE_SLICE ? RATE_SLICE : n;
        ssize_t w;
        if (g_rate_bps)
            pace(take);
        w = send(fd, p, take, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Where a cut at `eighths` of n bytes falls: always < n for n > 0, so bytes remain. */
static uint64_t cut_at(uint64_t n, unsigned eighths)
{
    uint64_t c;
    if (n == 0)
        return 0;
    c = n / 8u * eighths + n % 8u * eighths / 8u;
    return c < n ? c : n - 1;
}

/* ---------------------------------------------------------------- stats */

/* Writes PATH via PATH.tmp + rename so readers never see a partial file. */
static int write_file_atomic(const char *path, const char *data, size_t n)
{
    char tmp[4096];
    int fd, rc = -1;
    if (snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid()) >= (int)sizeof tmp)
        return -1;
    fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return -1;
    if (write(fd, data, n) == (ssize_t)n)
        rc = 0;
    if (close(fd) != 0)
        rc = -1;
    if (rc == 0 && rename(tmp, path) != 0)
        rc = -1;
    if (rc != 0)
        unlink(tmp);
    return rc;
}

/* Appends s to buf as a JSON string body (quotes and backslashes escaped). */
static size_t json_escape(char *buf, size_t cap, size_t at, const char *s)
{
    for (; *s && at + 2 < cap; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            buf[at++] = '\\';
        buf[at++] = ch < 0x20 ? '?' : (char)ch;
    }
    return at;
}

static void stats_write(void)
{
    static char out[64 * 1024];
    uint64_t req, conns, faults[K_COUNT], matched[MAX_RULES], fired[MAX_RULES];
    size_t at = 0;
    if (!g_cfg.stats_file)
        return;
    pthread_mutex_lock(&g_stats_file_mu);
    pthread_mutex_lock(&g_mu);
    req = g_requests;
    conns = g_connections;
    memcpy(faults, g_faults, sizeof faults);
    for (size_t i = 0; i < g_cfg.nrules; i++) {
        matched[i] = g_cfg.rules[i].matched;
        fired[i] = g_cfg.rules[i].fired;
    }
    pthread_mutex_unlock(&g_mu);

#define OUT(...)                                                                                   \
    do {                                                                                           \
        int n_ = snprintf(out + at, sizeof out - at, __VA_ARGS__);                                 \
        if (n_ > 0)                                                                                \
            at += (size_t)n_ < sizeof out - at ? (size_t)n_ : sizeof out - at - 1;                 \
    } while (0)
    OUT("{\"requests\": %" PRIu64 ", \"connections\": %" PRIu64 ", \"faults\": {", req, conns);
    for (int k = 0; k < K_COUNT; k++)
        OUT("%s\"%s\": %" PRIu64, k ? ", " : "", kind_names[k], faults[k]);
    OUT("}, \"rules\": [");
    for (size_t i = 0; i < g_cfg.nrules; i++) {
        OUT("%s{\"rule\": \"", i ? ", " : "");
        at = json_escape(out, sizeof out, at, g_cfg.rules[i].spec);
        OUT("\", \"matched\": %" PRIu64 ", \"fired\": %" PRIu64 "}", matched[i], fired[i]);
    }
    OUT("]}\n");
#undef OUT
    if (write_file_atomic(g_cfg.stats_file, out, at) != 0)
        fprintf(stderr, "faultproxy: cannot write stats file %s: %s\n", g_cfg.stats_file,
                strerror(errno));
    pthread_mutex_unlock(&g_stats_file_mu);
}

/* Counts one request and picks the fault for it (first firing rule wins). */
static struct fault fault_pick(const struct msg *req)
{
    struct fault f = {0};
    const char *target = req->raw + req->target_off;
    pthread_mutex_lock(&g_mu);
    f.reqno = ++g_requests;
    for (size_t i = 0; i < g_cfg.nrules; i++) {
        struct rule *r = &g_cfg.rules[i];
        if (r->method[0] && strcmp(r->method, req->method) != 0)
            continue;
        if (r->target[0] && !memmem(target, req->target_len, r->target, strlen(r->target)))
            continue;
        r->matched++;
        if (!f.on && (r->once ? r->matched == r->every : (r->matched + r->phase) % r->every == 0)) {
            f.on = true;
            f.kind = r->kind;
            f.arg = r->arg;
            r->fired++;
            g_faults[r->kind]++;
        }
    }
    pthread_mutex_unlock(&g_mu);
    f.cut_eighths = g_cfg.seed ? 1u + (unsigned)(mix64(g_cfg.seed ^ f.reqno) % 7u) : 4u;
    if (f.on)
        fprintf(stderr, "faultproxy: request %" PRIu64 " %s %.*s: %s\n", f.reqno, req->method,
                (int)(req->target_len > 200 ? 200 : req->target_len), target, kind_names[f.kind]);
    stats_write(); /* before acting, so a client that saw the fault also sees it counted */
    return f;
}

/* ---------------------------------------------------------------- reading */

/*
 * Reads more bytes after the buffered ones (compacting a full buffer first).
 * Returns bytes read (> 0), 0 on EOF, -1 on error, -2 when the buffer holds RD_CAP unread bytes.
 */
static ssize_t rd_fill(struct rd *r)
{
    if (r->off == r->len) {
        r->off = 0;
        r->len = 0;
    } else if (r->len == RD_CAP && r->off > 0) {
        memmove(r->buf, r->buf + r->off, r->len - r->off);
        r->len -= r->off;
        r->off = 0;
    }
    if (r->len == RD_CAP)
        return -2;
    for (;;) {
        ssize_t n = recv(r->fd, r->buf + r->len, RD_CAP - r->len, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n > 0)
            r->len += (size_t)n;
        return n < 0 ? -1 : n;
    }
}

/* Length of the head (through its empty line) at p, or 0 if it is not complete. */
static size_t head_end(const unsigned char *p, size_t n)
{
    for (size_t i = 0; i + 1 < n; i++) {
        if (p[i] != '\n')
            continue;
        if (p[i + 1] == '\n')
            return i + 2;
        if (p[i + 1] == '\r' && i + 2 < n && p[i + 2] == '\n')
            return i + 3;
    }
    return 0;
}

/*
 * Reads one message head into m->raw and consumes it from r. Empty lines before a request
 * line are skipped. RL_SRC_EOF means a clean EOF before any byte of the head.
 */
static int read_head(struct rd *r, struct msg *m, bool is_request)
{
    for (;;) {
        size_t avail, end;
        ssize_t got;
        while (is_request && r->off < r->len && (r->buf[r->off] == '\r' || r->buf[r->off] == '\n'))
            r->off++;
        avail = r->len - r->off;
        end = head_end(r->buf + r->off, avail);
        if (end) {
            if (end > HEAD_CAP)
                return RL_TOO_BIG;
            memcpy(m->raw, r->buf + r->off, end);
            m->raw[end] = '\0';
            m->len = end;
            r->off += end;
            return RL_OK;
        }
        if (avail >= HEAD_CAP)
            return RL_TOO_BIG;
        got = rd_fill(r);
        if (got == 0)
            return avail == 0 ? RL_SRC_EOF : RL_PROTO;
        if (got < 0)
            return RL_SRC_ERR;
    }
}

/* Finds one line (through '\n') at the read position, filling as needed; not consumed. */
static int rd_line(struct rd *r, size_t *len)
{
    size_t scanned = 0;
    for (;;) {
        const unsigned char *base = r->buf + r->off;
        const unsigned char *nl = memchr(base + scanned, '\n', r->len - r->off - scanned);
        ssize_t got;
        if (nl) {
            *len = (size_t)(nl - base) + 1;
            return *len > LINE_CAP ? RL_TOO_BIG : RL_OK;
        }
        scanned = r->len - r->off;
        if (scanned > LINE_CAP)
            return RL_TOO_BIG;
        got = rd_fill(r);
        if (got == 0)
            return RL_SRC_EOF;
        if (got < 0)
            return RL_SRC_ERR;
    }
}

/* ---------------------------------------------------------------- parsing */

/* Parses m->raw: start line and the headers that decide framing and connection reuse. */
static int parse_head(struct msg *m, bool is_request)
{
    const char *p = m->raw, *end = m->raw + m->len;
    const char *eol = memchr(p, '\n', (size_t)(end - p));
    size_t n;
    char last_te[32] = "";

    m->method[0] = '\0';
    m->target_off = m->target_len = 0;
    m->minor = 1;
    m->status = 0;
    m->has_cl = m->te = m->chunked = false;
    m->cl = 0;
    m->conn_close = m->conn_keepalive = m->expect_continue = false;
    if (!eol)
        return -1;
    n = (size_t)(eol - p);
    if (n > 0 && p[n - 1] == '\r')
        n--;
    if (is_request) {
        const char *sp1 = memchr(p, ' ', n), *sp2;
        if (!sp1 || sp1 == p || (size_t)(sp1 - p) >= sizeof m->method)
            return -1;
        memcpy(m->method, p, (size_t)(sp1 - p));
        m->method[sp1 - p] = '\0';
        sp2 = memchr(sp1 + 1, ' ', n - (size_t)(sp1 + 1 - p));
        if (!sp2 || sp2 == sp1 + 1)
            return -1;
        m->target_off = (size_t)(sp1 + 1 - m->raw);
        m->target_len = (size_t)(sp2 - sp1 - 1);
        if ((size_t)(p + n - sp2 - 1) != 8 || memcmp(sp2 + 1, "HTTP/1.", 7) != 0 || sp2[8] < '0' ||
            sp2[8] > '9')
            return -1;
        m->minor = sp2[8] - '0';
    } else {
        if (n < 12 || memcmp(p, "HTTP/1.", 7) != 0 || p[7] < '0' || p[7] > '9' || p[8] != ' ')
            return -1;
        m->minor = p[7] - '0';
        for (int i = 9; i < 12; i++) {
            if (p[i] < '0' || p[i] > '9')
                return -1;
            m->status = m->status * 10 + (p[i] - '0');
        }
    }

    for (p = eol + 1; p < end; p = eol + 1) {
        const char *colon, *val;
        size_t vlen;
        eol = memchr(p, '\n', (size_t)(end - p));
        if (!eol)
            break;
        n = (size_t)(eol - p);
        if (n > 0 && p[n - 1] == '\r')
            n--;
        if (n == 0)
            break; /* the empty line ending the head */
        colon = memchr(p, ':', n);
        if (!colon || colon == p || memchr(p, ' ', (size_t)(colon - p)) ||
            memchr(p, '\t', (size_t)(colon - p)))
            return -1;
        val = colon + 1;
        vlen = n - (size_t)(val - p);
        trim(&val, &vlen);
        if (slice_ieq(p, (size_t)(colon - p), "content-length")) {
            uint64_t v;
            if (parse_u64(val, vlen, &v) != 0 || (m->has_cl && v != m->cl))
                return -1;
            m->has_cl = true;
            m->cl = v;
        } else if (slice_ieq(p, (size_t)(colon - p), "transfer-encoding") ||
                   slice_ieq(p, (size_t)(colon - p), "connection")) {
            bool te = slice_ieq(p, (size_t)(colon - p), "transfer-encoding");
            while (vlen > 0) {
                const char *comma = memchr(val, ',', vlen);
                const char *tok = val;
                size_t tlen = comma ? (size_t)(comma - val) : vlen;
                val += comma ? tlen + 1 : tlen;
                vlen -= comma ? tlen + 1 : tlen;
                trim(&tok, &tlen);
                if (tlen == 0)
                    continue;
                if (te) {
                    m->te = true;
                    snprintf(last_te, sizeof last_te, "%.*s", (int)tlen, tok);
                } else if (slice_ieq(tok, tlen, "close")) {
                    m->conn_close = true;
                } else if (slice_ieq(tok, tlen, "keep-alive")) {
                    m->conn_keepalive = true;
                }
            }
        } else if (slice_ieq(p, (size_t)(colon - p), "expect")) {
            if (slice_ieq(val, vlen, "100-continue"))
                m->expect_continue = true;
        }
    }
    m->chunked = m->te && strcasecmp(last_te, "chunked") == 0;
    return 0;
}

/* Parses a chunk-size line ("1a2b[;ext]\r\n"); returns 0 or -1. */
static int parse_chunk_size(const unsigned char *p, size_t n, uint64_t *size)
{
    uint64_t v = 0;
    size_t i = 0;
    for (; i < n; i++) {
        int d;
        if (p[i] >= '0' && p[i] <= '9')
            d = p[i] - '0';
        else if (p[i] >= 'a' && p[i] <= 'f')
            d = p[i] - 'a' + 10;
        else if (p[i] >= 'A' && p[i] <= 'F')
            d = p[i] - 'A' + 10;
        else
            break;
        if (i >= 15)
            return -1;
        v = v * 16u + (uint64_t)d;
    }
    if (i == 0)
        return -1;
    while (i < n && (p[i] == ' ' || p[i] == '\t'))
        i++;
    if (i < n && p[i] != ';' && p[i] != '\r' && p[i] != '\n')
        return -1;
    *size = v;
    return 0;
}

static bool is_empty_line(const unsigned char *p, size_t n)
{
    return (n == 1 && p[0] == '\n') || (n == 2 && p[0] == '\r' && p[1] == '\n');
}

/* ---------------------------------------------------------------- sinks */

/*
 * Where relayed bytes go: a socket, or nowhere (draining). An armed sink fires its fault when
 * `cut` bytes have passed; for bodies of unknown length the cut is placed lazily (inside the
 * first chunk, or inside the first read of an until-close body).
 */
struct sink {
    int fd; /* -1: discard */
    bool armed, cut_known;
    enum kind kind;
    uint64_t cut, sent, stall_ms;
    unsigned eighths;
    bool flip; /* flip: invert the byte at offset flip_at on its way through */
    uint64_t flip_at;
};

/* Waits ms (0: until the client leaves); RL_OK when the time is up, RL_SINK_ERR if it left. */
static int stall_wait(int fd, uint64_t ms)
{
    uint64_t start = now_ms();
    for (;;) {
        struct pollfd pfd = {.fd = fd, .events = POLLRDHUP};
        int slice = 100, n;
        if (atomic_load(&g_stop))
            return RL_SINK_ERR;
        if (ms) {
            uint64_t el = now_ms() - start;
            if (el >= ms)
                return RL_OK;
            if (ms - el < 100)
                slice = (int)(ms - el);
        }
        n = poll(&pfd, 1, slice);
        if (n < 0 && errno != EINTR)
            return RL_SINK_ERR;
        if (n > 0 && (pfd.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL)))
            return RL_SINK_ERR;
    }
}

static int sink_emit(struct sink *s, const unsigned char *p, size_t n)
{
    for (;;) {
        size_t take = n;
        if (s->armed && s->cut_known && s->sent == s->cut) {
            int st;
            if (s->kind != K_STALL)
                return RL_FAULT;
            s->armed = false;
            st = stall_wait(s->fd, s->stall_ms);
            if (st != RL_OK)
                return st;
        }
        if (n == 0)
            return RL_OK;
        if (s->armed && s->cut_known && s->cut - s->sent < take)
            take = (size_t)(s->cut - s->sent);
        if (s->flip && s->flip_at >= s->sent && s->flip_at - s->sent < take) {
            unsigned char b = (unsigned char)~p[s->flip_at - s->sent];

            if (s->flip_at > s->sent) { /* the bytes before it as they are */
                take = (size_t)(s->flip_at - s->sent);
            } else {
                s->flip = false;
                if (s->fd >= 0 && send_all(s->fd, &b, 1) != 0)
                    return RL_SINK_ERR;
                s->sent++;
                p++;
                n--;
                continue;
            }
        }
        if (s->fd >= 0 && send_all(s->fd, p, take) != 0)
            return RL_SINK_ERR;
        s->sent += take;
        p += take;
        n -= take;
    }
}

/* ---------------------------------------------------------------- relaying bodies */

static int relay_exact(struct rd *r, struct sink *s, uint64_t n)
{
    while (n > 0) {
        size_t take;
        int st;
        if (r->off == r->len) {
            ssize_t got = rd_fill(r);
            if (got == 0)
                return RL_SRC_EOF;
            if (got < 0)
                return RL_SRC_ERR;
        }
        take = r->len - r->off;
        if (take > n)
            take = (size_t)n;
        st = sink_emit(s, r->buf + r->off, take);
        r->off += take;
        if (st != RL_OK)
            return st;
        n -= take;
    }
    return RL_OK;
}

/* Emits the line of length n at the read position and consumes it. */
static int emit_line(struct rd *r, struct sink *s, size_t n)
{
    int st = sink_emit(s, r->buf + r->off, n);
    r->off += n;
    return st;
}

static int relay_chunked(struct rd *r, struct sink *s)
{
    size_t ll;
    uint64_t size;
    int st;
    for (;;) {
        st = rd_line(r, &ll);
        if (st != RL_OK)
            return st;
        if (parse_chunk_size(r->buf + r->off, ll, &size) != 0)
            return RL_PROTO;
        if (s->armed && !s->cut_known) {
            s->cut = s->sent + (size ? ll + cut_at(size, s->eighths) : 1);
            s->cut_known = true;
        }
        st = emit_line(r, s, ll);
        if (st != RL_OK)
            return st;
        if (size == 0)
            break;
        st = relay_exact(r, s, size);
        if (st != RL_OK)
            return st;
        st = rd_line(r, &ll);
        if (st != RL_OK)
            return st;
        if (!is_empty_line(r->buf + r->off, ll))
            return RL_PROTO;
        st = emit_line(r, s, ll);
        if (st != RL_OK)
            return st;
    }
    for (;;) { /* trailer section, up to and including its empty line */
        bool last;
        st = rd_line(r, &ll);
        if (st != RL_OK)
            return st;
        last = is_empty_line(r->buf + r->off, ll);
        st = emit_line(r, s, ll);
        if (st != RL_OK || last)
            return st;
    }
}

static int relay_until_close(struct rd *r, struct sink *s)
{
    for (;;) {
        if (r->off < r->len) {
            size_t n = r->len - r->off;
            int st;
            if (s->armed && !s->cut_known) {
                s->cut = s->sent + cut_at(n, s->eighths);
                s->cut_known = true;
            }
            st = sink_emit(s, r->buf + r->off, n);
            r->off = r->len;
            if (st != RL_OK)
                return st;
        }
        ssize_t got = rd_fill(r);
        if (got == 0)
            return RL_OK;
        if (got < 0)
            return RL_SRC_ERR;
    }
}

static bool req_has_body(const struct msg *req)
{
    return req->chunked || (!req->te && req->has_cl && req->cl > 0);
}

/* Relays the request body from the client (framing already validated). */
static int relay_req_body(struct conn *c, struct sink *s)
{
    if (c->req.chunked)
        return relay_chunked(&c->crd, s);
    if (c->req.has_cl)
        return relay_exact(&c->crd, s, c->req.cl);
    return RL_OK;
}

/* ---------------------------------------------------------------- connections */

static void conn_set_upstream(struct conn *c, int fd)
{
    pthread_mutex_lock(&g_reg_mu);
    c->ufd = fd;
    pthread_mutex_unlock(&g_reg_mu);
    c->urd.fd = fd;
    c->urd.off = c->urd.len = 0;
    c->up_used = false;
}

static void up_close(struct conn *c)
{
    int fd = c->ufd;
    if (fd < 0)
        return;
    conn_set_upstream(c, -1);
    close(fd);
}

/* True if an idle upstream connection was closed by the server (or sent unasked bytes). */
static bool up_dead(const struct conn *c)
{
    struct pollfd pfd = {.fd = c->ufd, .events = POLLIN | POLLRDHUP};
    if (c->urd.off != c->urd.len)
        return true;
    return poll(&pfd, 1, 0) != 0;
}

static void set_nodelay(int fd)
{
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

/* Makes sure c has a usable upstream connection; returns 0 or -1. */
static int up_ensure(struct conn *c)
{
    int fd;
    if (c->ufd >= 0 && up_dead(c))
        up_close(c);
    if (c->ufd >= 0)
        return 0;
    fd = socket(g_cfg.up_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    while (connect(fd, (const struct sockaddr *)&g_cfg.up_addr, g_cfg.up_addrlen) != 0) {
        if (errno != EINTR) {
            fprintf(stderr, "faultproxy: connect upstream: %s\n", strerror(errno));
            close(fd);
            return -1;
        }
    }
    set_nodelay(fd);
    conn_set_upstream(c, fd);
    return 0;
}

/* Answers with a response made here (not forwarded); `head_only` for HEAD requests. */
static int send_local(int fd, int status, const char *reason, const char *extra_headers,
                      const char *body, bool head_only, bool close_conn)
{
    char head[1024];
    size_t blen = strlen(body);
    int n =
        snprintf(head, sizeof head,
                 "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n%s"
                 "Connection: %s\r\n\r\n",
                 status, reason, body[0] == '<' ? "application/xml" : "text/plain",
                 head_only ? (size_t)0 : blen, extra_headers, close_conn ? "close" : "keep-alive");
    if (n < 0 || (size_t)n >= sizeof head)
        return -1;
    if (send_all(fd, head, (size_t)n) != 0)
        return -1;
    return head_only ? 0 : send_all(fd, body, blen);
}

static bool req_wants_close(const struct msg *req)
{
    return req->conn_close || (req->minor == 0 && !req->conn_keepalive);
}

static int send_continue(int fd)
{
    static const char cont[] = "HTTP/1.1 100 Continue\r\n\r\n";
    return send_all(fd, cont, sizeof cont - 1);
}

/* 500 / 503: drain the request body, then answer with an S3 error document. */
static enum act answer_error(struct conn *c, const struct fault *f)
{
    struct sink drain = {.fd = -1};
    char body[512], extra[256];
    bool is503 = f->kind == K_503;
    bool close_conn = req_wants_close(&c->req);
    int n;

    if (req_has_body(&c->req)) {
        if (c->req.expect_continue && send_continue(c->cfd) != 0)
            return ACT_DROP;
        if (relay_req_body(c, &drain) != RL_OK)
            return ACT_DROP;
    }
    n = snprintf(body, sizeof body,
                 "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>%s</Code>"
                 "<Message>%s</Message><RequestId>fp-%" PRIu64 "</RequestId></Error>\n",
                 is503 ? "SlowDown" : "InternalError",
                 is503 ? "Please reduce your request rate."
                       : "We encountered an internal error. Please try again.",
                 f->reqno);
    if (n < 0 || (size_t)n >= sizeof body)
        return ACT_DROP;
    if (is503)
        n = snprintf(extra, sizeof extra,
                     "Retry-After: %" PRIu64 "\r\nx-amz-request-id: fp-%" PRIu64 "\r\n", f->arg,
                     f->reqno);
    else
        n = snprintf(extra, sizeof extra, "x-amz-request-id: fp-%" PRIu64 "\r\n", f->reqno);
    if (n < 0 || (size_t)n >= sizeof extra)
        return ACT_DROP;
    if (send_local(c->cfd, is503 ? 503 : 500, is503 ? "Slow Down" : "Internal Server Error", extra,
                   body, strcmp(c->req.method, "HEAD") == 0, close_conn) != 0)
        return ACT_DROP;
    return close_conn ? ACT_CLOSE : ACT_KEEP;
}

/* reset_req: take part of the request body, then reset the client. */
static enum act reset_request(struct conn *c, const struct fault *f)
{
    struct sink take = {.fd = -1, .armed = true, .kind = K_RESET_REQ, .eighths = f->cut_eighths};
    int st;
    if (!req_has_body(&c->req))
        return ACT_RESET;
    if (c->req.expect_continue && send_continue(c->cfd) != 0)
        return ACT_DROP;
    if (!c->req.chunked) {
        take.cut = cut_at(c->req.cl, f->cut_eighths);
        take.cut_known = true;
    }
    st = relay_req_body(c, &take);
    return st == RL_FAULT || st == RL_OK ? ACT_RESET : ACT_DROP;
}

/* How one relayed response ended. */
enum resp_res {
    RR_FINAL,       /* a complete final response reached the client */
    RR_INTERIM,     /* a 1xx reached the client; the final one follows */
    RR_UP_EMPTY,    /* upstream closed before sending a byte */
    RR_UP_BAD,      /* upstream failed before anything reached the client */
    RR_BROKEN,      /* the exchange broke after bytes reached the client (or it left) */
    RR_FAULT_RESET, /* the fault fired: reset the client */
    RR_FAULT_FIN,   /* the fault fired: close the client normally */
};

/*
 * Reads one response from upstream and relays it to the client, applying the fault (if any)
 * to a final response. *close_after says whether the connections cannot carry another request.
 */
static enum resp_res relay_response(struct conn *c, const struct fault *f, bool *close_after)
{
    struct msg *m = &c->resp;
    struct sink s = {.fd = c->cfd};
    enum { NONE, EXACT, CHUNKED, UNTIL_CLOSE } framing;
    int st = read_head(&c->urd, m, false);
    bool body;

    if (st == RL_SRC_EOF)
        return RR_UP_EMPTY;
    if (st != RL_OK || parse_head(m, false) != 0)
        return RR_UP_BAD;
    if (m->status >= 100 && m->status < 200 && m->status != 101) {
        if (send_all(c->cfd, m->raw, m->len) != 0)
            return RR_BROKEN;
        return RR_INTERIM;
    }
    if (strcmp(c->req.method, "HEAD") == 0 || m->status == 204 || m->status == 304)
        framing = NONE;
    else if (m->te)
        framing = m->chunked ? CHUNKED : UNTIL_CLOSE;
    else if (m->has_cl)
        framing = m->cl > 0 ? EXACT : NONE;
    else
        framing = UNTIL_CLOSE;
    body = framing != NONE;
    *close_after = m->conn_close || (m->minor == 0 && !m->conn_keepalive) ||
                   framing == UNTIL_CLOSE || m->status == 101;

    if (f->on && (f->kind == K_RESET || f->kind == K_STALL || f->kind == K_TRUNC)) {
        s.kind = f->kind;
        s.stall_ms = f->arg;
        s.eighths = f->cut_eighths;
        if (!body) {
            /* nothing to cut but the head; a client takes EOF inside the headers of a
               response without Content-Length as its end, so trunc sends nothing at all */
            s.armed = true;
            s.cut_known = true;
            s.cut = f->kind == K_TRUNC ? 0 : cut_at(m->len, s.eighths);
        }
    }
    st = sink_emit(&s, (const unsigned char *)m->raw, m->len);
    if (st == RL_OK && body) {
        s.sent = 0;
        s.armed = f->on && (f->kind == K_RESET || f->kind == K_STALL || f->kind == K_TRUNC);
        if (framing == EXACT) {
            s.cut = cut_at(m->cl, s.eighths);
            s.cut_known = true;
            st = relay_exact(&c->urd, &s, m->cl);
        } else if (framing == CHUNKED) {
            st = relay_chunked(&c->urd, &s);
        } else {
            st = relay_until_close(&c->urd, &s);
        }
    }
    if (st == RL_FAULT)
        return s.kind == K_RESET ? RR_FAULT_RESET : RR_FAULT_FIN;
    return st == RL_OK ? RR_FINAL : RR_BROKEN;
}

enum wait_res { W_CLIENT, W_UPSTREAM, W_ERR };

/* With Expect: 100-continue, waits until upstream answers or the client sends anyway. */
static enum wait_res wait_either(struct conn *c)
{
    for (;;) {
        struct pollfd p[2] = {{.fd = c->cfd, .events = POLLIN}, {.fd = c->ufd, .events = POLLIN}};
        int n;
        if (c->crd.off != c->crd.len)
            return W_CLIENT;
        if (c->urd.off != c->urd.len)
            return W_UPSTREAM;
        if (atomic_load(&g_stop))
            return W_ERR;
        n = poll(p, 2, 200);
        if (n < 0 && errno != EINTR)
            return W_ERR;
        if (n > 0 && p[1].revents)
            return W_UPSTREAM;
        if (n > 0 && p[0].revents)
            return W_CLIENT;
    }
}

static enum act bad_gateway(struct conn *c)
{
    send_local(c->cfd, 502, "Bad Gateway", "", "faultproxy: upstream failed\n", false, true);
    return ACT_CLOSE;
}

/* Forwards the request upstream and the response back, applying a response-side fault. */
static enum act forward(struct conn *c, const struct fault *f)
{
    bool body = req_has_body(&c->req), reused, close_after = false, up_broken = false;
    bool first = true;
    int attempt = 0;
    enum resp_res rr;

again:
    if (up_ensure(c) != 0)
        return bad_gateway(c);
    reused = c->up_used;
    c->up_used = true;
    if (send_all(c->ufd, c->req.raw, c->req.len) != 0) {
        up_close(c);
        if (reused && attempt++ == 0)
            goto again;
        return bad_gateway(c);
    }

    if (body) {
        struct sink up = {.fd = c->ufd};
        int st;
        if (f->on && f->kind == K_FLIP && c->req.has_cl && !c->req.chunked) {
            up.flip = true; /* once per forward: a retry of ours sends it again, intact */
            up.flip_at = cut_at(c->req.cl, f->cut_eighths);
        }
        if (c->req.expect_continue) {
            enum wait_res w = wait_either(c);
            if (w == W_ERR) {
                up_close(c);
                return ACT_DROP;
            }
            if (w == W_UPSTREAM) {
                rr = relay_response(c, f, &close_after);
                first = false;
                if (rr != RR_INTERIM) {
                    /* a final answer before the body: the client's next bytes are unknown */
                    up_close(c);
                    if (rr == RR_UP_EMPTY || rr == RR_UP_BAD)
                        return bad_gateway(c);
                    if (rr == RR_FAULT_RESET)
                        return ACT_RESET;
                    return rr == RR_BROKEN ? ACT_DROP : ACT_CLOSE;
                }
            }
        }
        st = relay_req_body(c, &up);
        if (st == RL_SINK_ERR) {
            up_broken = true; /* upstream stopped reading: maybe it answered early */
        } else if (st != RL_OK) {
            up_close(c);
            if (st == RL_PROTO)
                send_local(c->cfd, 400, "Bad Request", "", "faultproxy: bad chunked body\n", false,
                           true);
            return ACT_DROP;
        }
    }

    for (;;) {
        rr = relay_response(c, f, &close_after);
        if (rr == RR_INTERIM) {
            first = false;
            continue;
        }
        if (rr == RR_UP_EMPTY && first && reused && !body && attempt++ == 0) {
            up_close(c);
            goto again; /* a kept-alive upstream connection closed under us */
        }
        break;
    }
    switch (rr) {
    case RR_FINAL:
        if (close_after || up_broken)
            up_close(c);
        return close_after || up_broken || req_wants_close(&c->req) ? ACT_CLOSE : ACT_KEEP;
    case RR_UP_EMPTY: /* mirror upstream: the client sees an empty reply */
        up_close(c);
        return ACT_DROP;
    case RR_UP_BAD:
        up_close(c);
        return bad_gateway(c);
    case RR_FAULT_RESET:
        up_close(c);
        return ACT_RESET;
    case RR_FAULT_FIN:
        up_close(c);
        return ACT_CLOSE;
    default:
        up_close(c);
        return ACT_DROP;
    }
}

/* Serves one request on the client connection. */
static enum act handle_one(struct conn *c)
{
    struct fault f;
    int st = read_head(&c->crd, &c->req, true);

    if (st == RL_TOO_BIG) {
        send_local(c->cfd, 431, "Request Header Fields Too Large", "",
                   "faultproxy: request head over 64 KiB\n", false, true);
        return ACT_CLOSE;
    }
    if (st != RL_OK)
        return ACT_DROP;
    if (parse_head(&c->req, true) != 0 || (c->req.te && !c->req.chunked)) {
        send_local(c->cfd, 400, "Bad Request", "", "faultproxy: bad request head\n", false, true);
        return ACT_CLOSE;
    }
    f = fault_pick(&c->req);
    if (f.on && (f.kind == K_500 || f.kind == K_503))
        return answer_error(c, &f);
    if (f.on && f.kind == K_RESET_REQ)
        return reset_request(c, &f);
    return forward(c, &f);
}

static void conn_register(struct conn *c)
{
    pthread_mutex_lock(&g_reg_mu);
    c->next = g_conns;
    if (g_conns)
        g_conns->prev = c;
    g_conns = c;
    g_active++;
    pthread_mutex_unlock(&g_reg_mu);
}

static void conn_unregister(struct conn *c)
{
    pthread_mutex_lock(&g_reg_mu);
    if (c->prev)
        c->prev->next = c->next;
    else
        g_conns = c->next;
    if (c->next)
        c->next->prev = c->prev;
    g_active--;
    pthread_cond_broadcast(&g_reg_cv);
    pthread_mutex_unlock(&g_reg_mu);
}

static void conn_free(struct conn *c)
{
    if (!c)
        return;
    free(c->crd.buf);
    free(c->urd.buf);
    free(c);
}

/* Closes with FIN: stop sending, let the client read everything, wait briefly for its FIN. */
static void close_gracefully(int fd)
{
    unsigned char sink[4096];
    uint64_t start = now_ms();
    shutdown(fd, SHUT_WR);
    while (!atomic_load(&g_stop) && now_ms() - start < CLOSE_DRAIN_MS) {
        struct pollfd pfd = {.fd = fd, .events = POLLIN};
        if (poll(&pfd, 1, 100) <= 0)
            continue;
        if (recv(fd, sink, sizeof sink, MSG_DONTWAIT) <= 0) /* data is discarded */
            break;
    }
}

static void close_reset(int fd)
{
    struct linger lg = {.l_onoff = 1, .l_linger = 0};
    setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
}

static void *conn_main(void *arg)
{
    struct conn *c = arg;
    enum act a;
    do {
        a = handle_one(c);
    } while (a == ACT_KEEP && !atomic_load(&g_stop));
    up_close(c);
    conn_unregister(c);
    if (a == ACT_CLOSE)
        close_gracefully(c->cfd);
    else if (a == ACT_RESET)
        close_reset(c->cfd);
    close(c->cfd);
    conn_free(c);
    return NULL;
}

/* ---------------------------------------------------------------- startup */

static int add_rule(const char *spec, size_t len)
{
    struct rule *r;
    char tmp[FILTER_CAP + 64], *kind, *filter, *every, *arg;
    uint64_t v;
    static const struct {
        const char *name;
        enum kind kind;
    } names[] = {{"reset", K_RESET}, {"reset_req", K_RESET_REQ}, {"500", K_500},  {"503", K_503},
                 {"stall", K_STALL}, {"trunc", K_TRUNC},         {"flip", K_FLIP}};
    size_t i;

    if (g_cfg.nrules == MAX_RULES || len == 0 || len >= sizeof tmp)
        goto bad;
    r = &g_cfg.rules[g_cfg.nrules];
    memcpy(tmp, spec, len);
    tmp[len] = '\0';
    memcpy(r->spec, tmp, len + 1);

    kind = tmp;
    every = strchr(tmp, ':');
    if (!every)
        goto bad;
    *every++ = '\0';
    arg = strchr(every, ':');
    if (arg)
        *arg++ = '\0';
    filter = strchr(kind, '@');
    if (filter)
        *filter++ = '\0';
    for (i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(kind, names[i].name) == 0)
            break;
    if (i == sizeof names / sizeof names[0])
        goto bad;
    r->kind = names[i].kind;
    r->once = every[0] && every[strlen(every) - 1] == '!';
    if (parse_u64(every, strlen(every) - r->once, &r->every) != 0 || r->every == 0)
        goto bad;
    r->arg = r->kind == K_503 ? 1 : r->kind == K_STALL ? 3000 : 0;
    if (arg) {
        if ((r->kind != K_503 && r->kind != K_STALL) || parse_u64(arg, strlen(arg), &v) != 0 ||
            v > 86400000u)
            goto bad;
        r->arg = v;
    }
    if (filter) {
        size_t mlen = strcspn(filter, "/?");
        if (mlen >= sizeof r->method || (mlen == 0 && filter[0] == '\0'))
            goto bad;
        if (mlen == 1 && filter[0] == '*')
            mlen = 0; /* any method */
        else
            memcpy(r->method, filter, mlen);
        r->method[mlen] = '\0';
        snprintf(r->target, sizeof r->target, "%s", filter + strcspn(filter, "/?"));
    }
    r->phase = g_cfg.seed ? mix64(g_cfg.seed * 31u + g_cfg.nrules) % r->every : 0;
    g_cfg.nrules++;
    return 0;
bad:
    fprintf(stderr, "faultproxy: bad fault rule '%.*s' (want KIND[@FILTER]:EVERY[:ARG])\n",
            (int)len, spec);
    return -1;
}

static int parse_faults(const char *spec)
{
    while (*spec) {
        size_t len = strcspn(spec, ",");
        if (add_rule(spec, len) != 0)
            return -1;
        spec += len;
        if (*spec == ',')
            spec++;
    }
    return 0;
}

static int resolve_upstream(const char *hostport)
{
    char host[256];
    const char *colon = strrchr(hostport, ':');
    const char *h = hostport;
    size_t hlen;
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *res = NULL;
    int rc;

    if (!colon || colon == hostport || colon[1] == '\0')
        return -1;
    hlen = (size_t)(colon - hostport);
    if (h[0] == '[' && hlen > 2 && h[hlen - 1] == ']') {
        h++;
        hlen -= 2;
    }
    if (hlen >= sizeof host)
        return -1;
    memcpy(host, h, hlen);
    host[hlen] = '\0';
    rc = getaddrinfo(host, colon + 1, &hints, &res);
    if (rc != 0) {
        fprintf(stderr, "faultproxy: upstream %s: %s\n", hostport, gai_strerror(rc));
        return -1;
    }
    memcpy(&g_cfg.up_addr, res->ai_addr, res->ai_addrlen);
    g_cfg.up_addrlen = res->ai_addrlen;
    g_cfg.up_family = res->ai_family;
    freeaddrinfo(res);
    return 0;
}

static void usage(void)
{
    fprintf(stderr,
            "usage: faultproxy --upstream HOST:PORT --port-file PATH [--listen-port N]\n"
            "                  [--faults SPEC] [--stats-file PATH] [--seed N]\n"
            "                  [--rate MB_PER_S]\n"
            "  SPEC: KIND[@FILTER]:EVERY[:ARG],...  KIND: reset reset_req 500 503 stall flip "
            "trunc\n");
}

/* Parses argv into g_cfg; returns 0 or -1. */
static int parse_args(int argc, char **argv, const char **upstream, const char **faults)
{
    for (int i = 1; i < argc; i++) {
        const char *opt = argv[i], *val;
        uint64_t v;
        if (i + 1 >= argc) {
            usage();
            return -1;
        }
        val = argv[++i];
        if (strcmp(opt, "--upstream") == 0) {
            *upstream = val;
        } else if (strcmp(opt, "--port-file") == 0) {
            g_cfg.port_file = val;
        } else if (strcmp(opt, "--stats-file") == 0) {
            g_cfg.stats_file = val;
        } else if (strcmp(opt, "--faults") == 0) {
            *faults = val;
        } else if (strcmp(opt, "--listen-port") == 0) {
            if (parse_u64(val, strlen(val), &v) != 0 || v > 65535) {
                fprintf(stderr, "faultproxy: bad --listen-port '%s'\n", val);
                return -1;
            }
            g_cfg.listen_port = (unsigned)v;
        } else if (strcmp(opt, "--rate") == 0) {
            if (parse_u64(val, strlen(val), &v) != 0 || v == 0 || v > 1000000) {
                fprintf(stderr, "faultproxy: bad --rate '%s' (MB/s, 1..1000000)\n", val);
                return -1;
            }
            g_rate_bps = v * 1000000u;
        } else if (strcmp(opt, "--seed") == 0) {
            if (parse_u64(val, strlen(val), &v) != 0) {
                fprintf(stderr, "faultproxy: bad --seed '%s'\n", val);
                return -1;
            }
            g_cfg.seed = v;
        } else {
            usage();
            return -1;
        }
    }
    if (!*upstream || !g_cfg.port_file) {
        usage();
        return -1;
    }
    return 0;
}

static int listen_local(unsigned port, unsigned *bound)
{
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    socklen_t len = sizeof sa;
    int one = 1, fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(fd, (struct sockaddr *)&sa, sizeof sa) != 0 || listen(fd, 128) != 0 ||
        getsockname(fd, (struct sockaddr *)&sa, &len) != 0) {
        fprintf(stderr, "faultproxy: listen on 127.0.0.1:%u: %s\n", port, strerror(errno));
        close(fd);
        return -1;
    }
    *bound = ntohs(sa.sin_port);
    return fd;
}

struct sig_ctx {
    sigset_t set;
    int listen_fd;
};

static void *signal_main(void *arg)
{
    struct sig_ctx *sc = arg;
    int sig = 0;
    sigwait(&sc->set, &sig);
    atomic_store(&g_stop, true);
    shutdown(sc->listen_fd, SHUT_RDWR); /* wakes accept() */
    return NULL;
}

/* Shuts every live connection down and waits (bounded) for their threads to finish. */
static void stop_connections(void)
{
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += STOP_WAIT_MS / 1000;
    pthread_mutex_lock(&g_reg_mu);
    for (struct conn *c = g_conns; c; c = c->next) {
        shutdown(c->cfd, SHUT_RDWR);
        if (c->ufd >= 0)
            shutdown(c->ufd, SHUT_RDWR);
    }
    while (g_active > 0)
        if (pthread_cond_timedwait(&g_reg_cv, &g_reg_mu, &deadline) == ETIMEDOUT)
            break;
    if (g_active > 0)
        fprintf(stderr, "faultproxy: %zu connections still busy at exit\n", g_active);
    pthread_mutex_unlock(&g_reg_mu);
}

static struct conn *conn_new(int cfd)
{
    struct conn *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->crd.buf = malloc(RD_CAP);
    c->urd.buf = malloc(RD_CAP);
    if (!c->crd.buf || !c->urd.buf) {
        conn_free(c);
        return NULL;
    }
    c->cfd = cfd;
    c->crd.fd = cfd;
    c->ufd = -1;
    c->urd.fd = -1;
    return c;
}

static void accept_loop(int lfd)
{
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    while (!atomic_load(&g_stop)) {
        pthread_t t;
        struct conn *c;
        int cfd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
        if (cfd < 0) {
            if (atomic_load(&g_stop))
                break;
            if (errno == EINTR || errno == ECONNABORTED)
                continue;
            if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
                usleep(10000);
                continue;
            }
            fprintf(stderr, "faultproxy: accept: %s\n", strerror(errno));
            break;
        }
        set_nodelay(cfd);
        c = conn_new(cfd);
        if (!c) {
            close(cfd);
            continue;
        }
        pthread_mutex_lock(&g_mu);
        g_connections++;
        pthread_mutex_unlock(&g_mu);
        conn_register(c);
        if (pthread_create(&t, &attr, conn_main, c) != 0) {
            conn_unregister(c);
            close(cfd);
            conn_free(c);
        }
    }
    pthread_attr_destroy(&attr);
}

int main(int argc, char **argv)
{
    const char *upstream = NULL, *faults = "";
    struct sig_ctx sc;
    pthread_t sig_thread;
    unsigned port = 0;
    char portbuf[32];
    int n;

    signal(SIGPIPE, SIG_IGN);
    if (parse_args(argc, argv, &upstream, &faults) != 0)
        return 2;
    if (parse_faults(faults) != 0 || resolve_upstream(upstream) != 0)
        return 2;

    sigemptyset(&sc.set);
    sigaddset(&sc.set, SIGINT);
    sigaddset(&sc.set, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &sc.set, NULL); /* every thread inherits this */

    sc.listen_fd = listen_local(g_cfg.listen_port, &port);
    if (sc.listen_fd < 0)
        return 1;
    n = snprintf(portbuf, sizeof portbuf, "%u\n", port);
    if (write_file_atomic(g_cfg.port_file, portbuf, (size_t)n) != 0) {
        fprintf(stderr, "faultproxy: cannot write port file %s: %s\n", g_cfg.port_file,
                strerror(errno));
        return 1;
    }
    stats_write();
    if (pthread_create(&sig_thread, NULL, signal_main, &sc) != 0)
        return 1;

    accept_loop(sc.listen_fd);
    if (!atomic_load(&g_stop))
        kill(getpid(), SIGTERM); /* accept failed: let the signal thread finish */
    pthread_join(sig_thread, NULL);
    stop_connections();
    stats_write();
    close(sc.listen_fd);
    return 0;
}
