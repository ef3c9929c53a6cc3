/*
 * s3 - S3 requests for one bucket: URL and query building, SigV4 signing (re-done on every
 * attempt, so a retry never replays a stale date), retries and error mapping, and a small
 * AIMD concurrency limit that halves on 503 SlowDown and creeps back up on success.
 *
 * Every request goes through do_request(): wait for a concurrency token, sign, run it on the
 * transfer engine, classify the answer (done, retry after a delay, fail). Failures are recorded
 * on the client's error with the operation, the key, the part, the HTTP status, the S3 error
 * code and the request id, never a credential.
 */
#define _GNU_SOURCE
#include "s3.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "checksum.h"
#include "http.h"
#include "sigv4.h"

struct ck_s3 {
    ck_http *http;
    ck_err *err;
    char *bucket;
    char *scheme;    /* "http" or "https" */
    char *hostport;  /* endpoint host[:port] */
    char *base_path; /* endpoint path prefix without trailing '/', usually "" */
    int virtual_host;
    char *access_key, *secret_key, *session_token, *region;
    unsigned max_attempts;
    int64_t clock_offset_s;
    const atomic_int *cancel;
    void (*log)(void *ud, int level, const char *line);
    void *log_ud;
    /* adaptive concurrency, guarded by lock */
    pthread_mutex_t lock;
    pthread_cond_t cond;
    unsigned limit, max_limit, inflight, successes;
    int64_t last_decrease_s;
    int probed, probe_sum, probe_cond;
    unsigned probe_verified;
    ck_s3_counters counters;
};

/* ---- setup ---- */

static char *dup_or_empty(const char *s)
{
    return strdup(s ? s : "");
}

static s3ckpt_status parse_endpoint(ck_s3 *s, const char *endpoint, const char *region)
{
    const char *p, *slash;
    size_t n;

    if (!endpoint || !*endpoint) {
        char host[200];

        snprintf(host, sizeof(host), "s3.%s.amazonaws.com", region);
        s->scheme = strdup("https");
        s->hostport = strdup(host);
        s->base_path = strdup("");
        return s->scheme && s->hostport && s->base_path ? S3CKPT_OK : S3CKPT_ENOMEM;
    }
    if (strncmp(endpoint, "http://", 7) == 0) {
        s->scheme = strdup("http");
        p = endpoint + 7;
    } else if (strncmp(endpoint, "https://", 8) == 0) {
        s->scheme = strdup("https");
        p = endpoint + 8;
    } else {
        return ck_err_set(s->err, S3CKPT_ECONFIG,
                          "endpoint \"%s\": expected http://host[:port] or https://host[:port]",
                          endpoint);
    }
    slash = strchr(p, '/');
    n = slash ? (size_t)(slash - p) : strlen(p);
    if (n && memchr(p, '@', n)) /* never echo it: it may hold a password */
        return ck_err_set(s->err, S3CKPT_ECONFIG,
                          "endpoint: a user or password in the URL is not supported; use "
                          "credentials (AWS_ACCESS_KEY_ID, --profile)");
    if (n == 0 || strpbrk(p, "?# \t\r\n"))
        return ck_err_set(s->err, S3CKPT_ECONFIG,
                          "endpoint \"%s\": expected http(s)://host[:port] with no query or spaces",
                          endpoint);
    /* libcurl leaves a scheme's default port out of Host: sign what it sends */
    if ((strcmp(s->scheme ? s->scheme : "", "http") == 0 && n > 3 &&
         !memcmp(p + n - 3, ":80", 3)) ||
        (strcmp(s->scheme ? s->scheme : "", "https") == 0 && n > 4 &&
         !memcmp(p + n - 4, ":443", 4)))
        n -= strcmp(s->scheme, "http") == 0 ? 3 : 4;
    if (p[n - 1] == ':')
        return ck_err_set(s->err, S3CKPT_ECONFIG, "endpoint \"%s\": the port is missing", endpoint);
    s->hostport = strndup(p, n);
    p = slash ? slash : "";
    n = strlen(p);
    while (n && p[n - 1] == '/')
        n--;
    s->base_path = strndup(p, n);
    return s->scheme && s->hostport && s->base_path ? S3CKPT_OK : S3CKPT_ENOMEM;
}

/* Bucket names that can be a DNS label: virtual-host addressing works for them. */
static int dns_compatible(const char *b)
{
    size_t n = strlen(b), i;

    if (n < 3 || n > 63)
        return 0;
    for (i = 0; i < n; i++)
        if (!((b[i] >= 'a' && b[i] <= 'z') || (b[i] >= '0' && b[i] <= '9') || b[i] == '-'))
            return 0;
    return b[0] != '-' && b[n - 1] != '-';
}

s3ckpt_status ck_s3_new(ck_s3 **out, const ck_s3_config *cfg, ck_err *err)
{
    ck_http_opts ho = {0};
    ck_s3 *s;
    s3ckpt_status st;

    *out = NULL;
    if (!(s = calloc(1, sizeof(*s))))
        return ck_err_set(err, S3CKPT_ENOMEM, "out of memory");
    s->err = err;
    pthread_mutex_init(&s->lock, NULL);
    pthread_cond_init(&s->cond, NULL);
    s->region = dup_or_empty(cfg->region && *cfg->region ? cfg->region : "us-east-1");
    s->bucket = dup_or_empty(cfg->bucket);
    s->access_key = dup_or_empty(cfg->access_key);
    s->secret_key = dup_or_empty(cfg->secret_key);
    s->session_token = dup_or_empty(cfg->session_token);
    if (!s->region || !s->bucket || !s->access_key || !s->secret_key || !s->session_token) {
        st = ck_err_set(err, S3CKPT_ENOMEM, "out of memory");
        goto fail;
    }
    if ((st = parse_endpoint(s, cfg->endpoint, s->region)))
        goto fail;
    switch (cfg->addressing) {
    case CK_S3_ADDR_PATH:
        s->virtual_host = 0;
        break;
    case CK_S3_ADDR_VIRTUAL:
        s->virtual_host = 1;
        if (!dns_compatible(s->bucket)) {
            st = ck_err_set(err, S3CKPT_ECONFIG,
                            "bucket \"%s\" cannot be used with virtual-host addressing (not a "
                            "DNS label); use --addressing path",
                            s->bucket);
            goto fail;
        }
        break;
    default: /* AWS: virtual host; custom endpoints: path style */
        s->virtual_host = (!cfg->endpoint || !*cfg->endpoint) && dns_compatible(s->bucket);
    }
    s->max_attempts = cfg->max_attempts ? cfg->max_attempts : 8;
    s->clock_offset_s = cfg->clock_offset_s;
    s->cancel = cfg->cancel;
    s->log = cfg->log;
    s->log_ud = cfg->log_ud;
    s->max_limit = s->limit = cfg->concurrency ? cfg->concurrency : 8;
    ho.max_connections = s->max_limit + 2;
    ho.low_speed_time_s = cfg->low_speed_time_s;
    ho.ca_bundle = cfg->ca_bundle;
    ho.cancel = cfg->cancel;
    if (ck_http_new(&s->http, &ho)) {
        st = ck_err_set(err, S3CKPT_ENOMEM, "cannot start the HTTP engine");
        goto fail;
    }
    *out = s;
    return S3CKPT_OK;
fail:
    ck_s3_free(s);
    return st;
}

static void wipe(char *p)
{
    if (p) {
        volatile char *v = p;

        while (*v)
            *v++ = 0;
    }
}

void ck_s3_free(ck_s3 *s)
{
    if (!s)
        return;
    ck_http_free(s->http);
    wipe(s->secret_key);
    wipe(s->session_token);
    free(s->bucket);
    free(s->scheme);
    free(s->hostport);
    free(s->base_path);
    free(s->access_key);
    free(s->secret_key);
    free(s->session_token);
    free(s->region);
    pthread_mutex_destroy(&s->lock);
    pthread_cond_destroy(&s->cond);
    free(s);
}

void ck_s3_counters_get(ck_s3 *s, ck_s3_counters *out)
{
    pthread_mutex_lock(&s->lock);
    *out = s->counters;
    pthread_mutex_unlock(&s->lock);
}

void ck_s3_ignore_cancel(ck_s3 *s)
{
    s->cancel = NULL;
    ck_http_ignore_cancel(s->http);
}

unsigned ck_s3_concurrency(const ck_s3 *s)
{
    return s->max_limit;
}

const char *ck_s3_bucket(const ck_s3 *s)
{
    return s->bucket;
}

static void logf_(ck_s3 *s, int level, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void logf_(ck_s3 *s, int level, const char *fmt, ...)
{
    char line[512];
    va_list ap;

    if (!s->log)
        return;
    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    s->log(s->log_ud, level, line);
}

/* ---- concurrency ---- */

static void token_take(ck_s3 *s)
{
    pthread_mutex_lock(&s->lock);
    while (s->inflight >= s->limit)
        pthread_cond_wait(&s->cond, &s->lock);
    s->inflight++;
    s->counters.requests++;
    pthread_mutex_unlock(&s->lock);
}

/* outcome: 0 success, 1 throttled, 2 other */
static void token_give(ck_s3 *s, int outcome)
{
    pthread_mutex_lock(&s->lock);
    s->inflight--;
    if (outcome == 1) {
        struct timespec now;

        clock_gettime(CLOCK_MONOTONIC, &now);
        s->counters.throttled++;
        if (now.tv_sec > s->last_decrease_s) { /* a burst of SlowDowns halves it once */
            s->limit = s->limit > 1 ? s->limit / 2 : 1;
            s->last_decrease_s = now.tv_sec;
        }
        s->successes = 0;
    } else if (outcome == 0 && s->limit < s->max_limit && ++s->successes >= 2 * s->limit) {
        s->limit++; /* additive increase: one more after two windows without a SlowDown */
        s->successes = 0;
    }
    pthread_cond_broadcast(&s->cond);
    pthread_mutex_unlock(&s->lock);
}

/* ---- one request ---- */

#define MAX_HDRS 12

typedef struct s3_req {
    const char *op; /* "GetObject", for messages */
    const char *method;
    const char *key;   /* NULL: the bucket itself */
    const char *query; /* wire query, encoded; "" none */
    ck_sigv4_header hdr[MAX_HDRS];
    size_t nhdr;
    const void *body;
    uint64_t body_len;
    char payload_hash[65]; /* "" -> UNSIGNED-PAYLOAD */
    unsigned char *dst;
    size_t dst_cap;
    size_t resp_max;
    int head;
    unsigned part; /* for messages */
    int quiet;
    ck_http_req http;
} s3_req;

static void add_header(s3_req *q, const char *name, const char *value)
{
    if (q->nhdr < MAX_HDRS) {
        q->hdr[q->nhdr].name = name;
        q->hdr[q->nhdr].value = value;
        q->nhdr++;
    }
}

/* Builds URL, path and host for key. */
static s3ckpt_status build_target(ck_s3 *s, const char *key, ck_buf *url, ck_buf *path,
                                  ck_buf *host)
{
    s3ckpt_status st;

    if (s->virtual_host)
        st = ck_buf_printf(host, "%s.%s", s->bucket, s->hostport);
    else
        st = ck_buf_printf(host, "%s", s->hostport);
    if (!st)
        st = ck_buf_printf(path, "%s/", s->base_path);
    if (!st && !s->virtual_host) {
        st = ck_sigv4_uri_encode(path, s->bucket, strlen(s->bucket), 0);
        if (!st && key)
            st = ck_buf_append(path, "/", 1);
    }
    if (!st && key)
        st = ck_sigv4_uri_encode(path, key, strlen(key), 1);
    if (!st)
        st = ck_buf_printf(url, "%s://%s%s", s->scheme, host->data, path->data);
    return st;
}

static void describe(ck_s3 *s, const s3_req *q, char *out, size_t n)
{
    if (q->key && q->part)
        snprintf(out, n, "%s s3://%s/%s part %u", q->op, s->bucket, q->key, q->part);
    else if (q->key)
        snprintf(out, n, "%s s3://%s/%s", q->op, s->bucket, q->key);
    else
        snprintf(out, n, "%s s3://%s", q->op, s->bucket);
}

static pthread_once_t seed_once = PTHREAD_ONCE_INIT;

static void seed_jitter(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    /* every process its own jitter: nodes that fail together must not retry together */
    srand((unsigned)ts.tv_nsec ^ (unsigned)ts.tv_sec ^ ((unsigned)getpid() << 16));
}

/* Milliseconds to wait before attempt `attempt` (1-based retry count): full jitter. */
static long backoff_ms(unsigned attempt)
{
    long cap = 100L << (attempt < 7 ? attempt : 7); /* 200 ms .. 12.8 s */
    unsigned r;

    pthread_once(&seed_once, seed_jitter);
    r = (unsigned)rand(); /* jitter only; not security relevant */

    if (cap > 10000)
        cap = 10000;
    return (long)(r % (unsigned long)cap) + 1;
}

static void sleep_ms(ck_s3 *s, long ms)
{
    while (ms > 0 && !(s->cancel && atomic_load(s->cancel))) {
        long step = ms > 100 ? 100 : ms;
        struct timespec ts = {step / 1000, (step % 1000) * 1000000L};

        nanosleep(&ts, NULL);
        ms -= step;
    }
}

static long retry_after_ms(const ck_http_req *h)
{
    long v = 0;
    const char *p = h->retry_after;

    if (!*p)
        return 0;
    for (; *p >= '0' && *p <= '9' && v < 3600; p++)
        v = v * 10 + (*p - '0');
    if (*p)
        return 0; /* an HTTP date: not worth parsing, the backoff applies */
    return v > 60 ? 60000 : v * 1000;
}

static int is_code(const ck_s3_error *e, const char *code)
{
    return strcmp(e->code, code) == 0;
}

/* Classifies a finished attempt: 0 done (success or final failure), 1 retry. */
static int should_retry(const s3_req *q, const ck_s3_error *e)
{
    const ck_http_req *h = &q->http;

    if (h->transport)
        return !h->dst_overflow && !h->tls_failed;
    if (h->status == 501)
        return 0; /* NotImplemented: asking again changes nothing */
    if (h->status >= 500 || h->status == 429 || h->status == 408)
        return 1;
    if (h->status == 400 && (is_code(e, "RequestTimeout") || is_code(e, "BadDigest") ||
                             is_code(e, "XAmzContentSHA256Mismatch") ||
                             is_code(e, "IncompleteBody") || is_code(e, "SlowDown")))
        return 1; /* a body damaged on the way is sent again */
    return 0;
}

static s3ckpt_status fail_status(ck_s3 *s, s3_req *q, const ck_s3_error *e, unsigned attempts)
{
    const ck_http_req *h = &q->http;
    char what[1400], detail[700];
    s3ckpt_status st;
    const char *hint = "";

    describe(s, q, what, sizeof(what));
    if (h->transport) {
        st = S3CKPT_ENETWORK;
        if (h->dst_overflow) {
            st = S3CKPT_EPROTOCOL;
            snprintf(detail, sizeof(detail), "the store sent more bytes than were asked for");
        } else if (h->tls_failed) {
            st = S3CKPT_ECONFIG;
            snprintf(detail, sizeof(detail),
                     "TLS with %s failed (%s); check the endpoint and --ca-bundle / "
                     "AWS_CA_BUNDLE",
                     s->hostport, h->transport_msg);
        } else if (h->connect_failed) {
            snprintf(detail, sizeof(detail), "cannot reach %s://%s (%s)", s->scheme, s->hostport,
                     h->transport_msg);
        } else {
            snprintf(detail, sizeof(detail), "%s%s", h->transport_msg,
                     h->timed_out ? " (timed out)" : "");
        }
        if (attempts > 1)
            return ck_err_set(s->err, st, "%s: %s, after %u attempts", what, detail, attempts);
        return ck_err_set(s->err, st, "%s: %s", what, detail);
    }
    switch (h->status) {
    case 403:
    case 401:
        st = S3CKPT_EAUTH;
        if (is_code(e, "SignatureDoesNotMatch"))
            hint = "; the secret key does not match the access key (check "
                   "AWS_SECRET_ACCESS_KEY or the profile's credentials)";
        else if (is_code(e, "InvalidAccessKeyId"))
            hint = "; the store does not know this access key";
        else if (is_code(e, "RequestTimeTooSkewed"))
            hint = "; this machine's clock differs too much from the store's: fix the clock "
                   "(e.g. with chrony or ntpd)";
        else if (!s->access_key[0])
            hint = "; no credentials were found (set AWS_ACCESS_KEY_ID and "
                   "AWS_SECRET_ACCESS_KEY or use --profile)";
        break;
    case 404:
        st = S3CKPT_ENOTFOUND;
        if (is_code(e, "NoSuchBucket"))
            hint = "; the bucket does not exist";
        else if (is_code(e, "NoSuchUpload"))
            hint = "; the multipart upload is gone (aborted or completed elsewhere)";
        break;
    case 412:
        st = S3CKPT_EEXISTS;
        break;
    case 503:
    case 429:
        st = is_code(e, "SlowDown") || h->status == 429 ? S3CKPT_ETHROTTLED : S3CKPT_ESERVER;
        break;
    case 301:
    case 307:
        st = S3CKPT_ECONFIG;
        hint = "; the bucket is in another region or behind another endpoint (set --region or "
               "--endpoint)";
        break;
    default:
        st = S3CKPT_ESERVER;
        if (is_code(e, "BadDigest") || is_code(e, "InvalidDigest") ||
            is_code(e, "XAmzContentSHA256Mismatch"))
            st = S3CKPT_ECORRUPT;
        else if (is_code(e, "SlowDown"))
            st = S3CKPT_ETHROTTLED;
        else if (is_code(e, "AuthorizationHeaderMalformed")) {
            st = S3CKPT_ECONFIG;
            hint = "; the region is probably wrong (set --region or AWS_REGION)";
        }
    }
    if ((st == S3CKPT_ENOTFOUND && (q->quiet & CK_S3_QUIET_404) && !is_code(e, "NoSuchBucket")) ||
        (st == S3CKPT_EEXISTS && (q->quiet & CK_S3_QUIET_412)))
        return st;
    snprintf(detail, sizeof(detail), "HTTP %ld%s%s%s%s%s%s%s", h->status, e->code[0] ? " " : "",
             e->code, e->message[0] ? ": " : "", e->message,
             e->request_id[0] || h->request_id[0] ? " (request id " : "",
             e->request_id[0] ? e->request_id : h->request_id,
             e->request_id[0] || h->request_id[0] ? ")" : "");
    if (attempts > 1)
        return ck_err_set(s->err, st, "%s: %s%s, after %u attempts", what, detail, hint, attempts);
    return ck_err_set(s->err, st, "%s: %s%s", what, detail, hint);
}

static s3ckpt_status sign_into(ck_s3 *s, s3_req *q, ck_buf *path, ck_buf *host, char **lines,
                               ck_buf *store)
{
    ck_sigv4_header all[MAX_HDRS + 4];
    char amz_date[17], auth[CK_SIGV4_AUTH_MAX];
    const char *phash = q->payload_hash[0] ? q->payload_hash : "UNSIGNED-PAYLOAD";
    size_t n = 0, i;
    s3ckpt_status st;

    ck_sigv4_amz_date((int64_t)time(NULL) + s->clock_offset_s, amz_date);
    all[n].name = "host";
    all[n++].value = host->data;
    all[n].name = "x-amz-date";
    all[n++].value = amz_date;
    all[n].name = "x-amz-content-sha256";
    all[n++].value = phash;
    if (s->session_token[0]) {
        all[n].name = "x-amz-security-token";
        all[n++].value = s->session_token;
    }
    for (i = 0; i < q->nhdr; i++)
        all[n++] = q->hdr[i];
    store->len = 0;
    /* header lines live in one buffer; offsets are turned into pointers at the end */
    {
        size_t offs[MAX_HDRS + 5], k = 0;

        for (i = 1; i < n; i++) { /* host is set by libcurl from the URL */
            offs[k++] = store->len;
            if ((st = ck_buf_printf(store, "%s: %s", all[i].name, all[i].value)) ||
                (st = ck_buf_append(store, "", 1)))
                return st;
        }
        if (s->access_key[0]) {
            ck_sigv4_request r = {q->method, path->data, q->query,  all, n,
                                  phash,     amz_date,   s->region, "s3"};

            if ((st = ck_sigv4_sign(&r, s->access_key, s->secret_key, auth, sizeof(auth), NULL,
                                    NULL)))
                return st;
            offs[k++] = store->len;
            if ((st = ck_buf_printf(store, "Authorization: %s", auth)) ||
                (st = ck_buf_append(store, "", 1)))
                return st;
            wipe(auth);
        }
        for (i = 0; i < k; i++)
            lines[i] = store->data + offs[i];
        q->http.nheaders = k;
    }
    return S3CKPT_OK;
}

static s3ckpt_status do_request(ck_s3 *s, s3_req *q, ck_s3_result *res)
{
    ck_buf url, path, host, hdrs;
    char *lines[MAX_HDRS + 5];
    ck_s3_error e;
    unsigned attempt = 0;
    s3ckpt_status st;

    ck_buf_init(&url, 8192);
    ck_buf_init(&path, 8192);
    ck_buf_init(&host, 512);
    ck_buf_init(&hdrs, 16384);
    memset(res, 0, sizeof(*res));
    if ((st = build_target(s, q->key, &url, &path, &host))) {
        st = ck_err_set(s->err, st, "%s: key too long or out of memory", q->op);
        goto out;
    }
    if (q->query && *q->query) {
        if ((st = ck_buf_printf(&url, "?%s", q->query))) {
            st = ck_err_set(s->err, st, "%s: query too long", q->op);
            goto out;
        }
    }
    for (;;) {
        long wait_ms;
        int outcome;

        memset(&e, 0, sizeof(e));
        if ((st = sign_into(s, q, &path, &host, lines, &hdrs))) {
            st = ck_err_set(s->err, st, "%s: cannot sign the request", q->op);
            goto out;
        }
        q->http.method = q->head ? "HEAD" : q->method;
        q->http.url = url.data;
        q->http.headers = (const char *const *)lines;
        q->http.body = q->body;
        q->http.body_len = q->body_len;
        q->http.dst = q->dst;
        q->http.dst_cap = q->dst_cap;
        q->http.head = q->head;
        q->http.resp.max = q->resp_max ? q->resp_max : (64 << 10);
        token_take(s);
        st = ck_http_run(s->http, &q->http);
        attempt++;
        if (!st && q->http.status >= 300 && q->http.resp.len)
            ck_s3xml_error(q->http.resp.data, q->http.resp.len, &e);
        outcome = q->http.status == 503 || (q->http.status == 400 && is_code(&e, "SlowDown"))
                      ? 1
                      : (q->http.status >= 200 && q->http.status < 300 ? 0 : 2);
        token_give(s, outcome);
        if (st) { /* canceled */
            st = ck_err_set(s->err, S3CKPT_ECANCELED, "%s: canceled", q->op);
            goto out;
        }
        if (!q->http.transport && q->http.status >= 200 && q->http.status < 300)
            break;
        if (!should_retry(q, &e) || attempt >= s->max_attempts ||
            (q->http.connect_failed && attempt >= 3)) {
            st = fail_status(s, q, &e, attempt);
            res->err = e;
            res->status = q->http.status;
            goto out;
        }
        wait_ms = backoff_ms(attempt);
        if (retry_after_ms(&q->http) > wait_ms)
            wait_ms = retry_after_ms(&q->http);
        if (q->http.connect_failed)
            wait_ms = 100L * attempt;
        pthread_mutex_lock(&s->lock);
        s->counters.retries++;
        pthread_mutex_unlock(&s->lock);
        {
            char what[1400];

            describe(s, q, what, sizeof(what));
            if (q->http.transport)
                logf_(s, 1, "%s: %s; retrying in %ld ms", what, q->http.transport_msg, wait_ms);
            else
                logf_(s, 1, "%s: HTTP %ld %s; retrying in %ld ms", what, q->http.status, e.code,
                      wait_ms);
        }
        sleep_ms(s, wait_ms);
        if (s->cancel && atomic_load(s->cancel)) {
            st = ck_err_set(s->err, S3CKPT_ECANCELED, "%s: canceled", q->op);
            goto out;
        }
    }
    res->status = q->http.status;
    snprintf(res->etag, sizeof(res->etag), "%.*s", (int)sizeof(res->etag) - 1, q->http.etag);
    res->size = q->http.has_content_length ? q->http.content_length : 0;
out:
    ck_buf_cleanup(&url);
    ck_buf_cleanup(&path);
    ck_buf_cleanup(&host);
    if (hdrs.data)
        memset(hdrs.data, 0, hdrs.cap); /* held the token and the signature */
    ck_buf_cleanup(&hdrs);
    return st;
}

static void req_init(s3_req *q, const char *op, const char *method, const char *key)
{
    memset(q, 0, sizeof(*q));
    q->op = op;
    q->method = method;
    q->key = key;
    q->query = "";
    ck_http_req_init(&q->http);
}

static void req_cleanup(s3_req *q)
{
    ck_http_req_cleanup(&q->http);
}

/* ---- operations ---- */

s3ckpt_status ck_s3_get_object(ck_s3 *s, const char *key, size_t max, ck_buf *out,
                               ck_s3_result *res, int quiet)
{
    s3_req q;
    s3ckpt_status st;

    req_init(&q, "GetObject", "GET", key);
    q.quiet = quiet;
    q.resp_max = max + 1;
    st = do_request(s, &q, res);
    if (!st) {
        if (q.http.resp.len > max)
            st = ck_err_set(s->err, S3CKPT_EPROTOCOL, "GetObject s3://%s/%s: larger than %zu bytes",
                            s->bucket, key, max);
        else
            st = ck_buf_append(out, q.http.resp.data ? q.http.resp.data : "", q.http.resp.len);
        res->size = q.http.resp.len;
    }
    req_cleanup(&q);
    return st;
}

/* Parses "bytes a-b/total" into total; -1 when malformed. */
static int content_range_total(const char *cr, uint64_t *first, uint64_t *last, uint64_t *total)
{
    unsigned long long a, b, t;
    int used = 0;

    if (sscanf(cr, "bytes %llu-%llu/%llu%n", &a, &b, &t, &used) != 3 || cr[used])
        return -1;
    *first = a;
    *last = b;
    *total = t;
    return 0;
}

s3ckpt_status ck_s3_get_range(ck_s3 *s, const char *key, const char *if_match, uint64_t off,
                              void *dst, size_t n, ck_s3_result *res)
{
    char range[64];
    s3_req q;
    uint64_t first, last, total;
    s3ckpt_status st;

    if (n == 0)
        return S3CKPT_OK;
    snprintf(range, sizeof(range), "bytes=%" PRIu64 "-%" PRIu64, off, off + n - 1);
    req_init(&q, "GetObject", "GET", key);
    add_header(&q, "range", range);
    if (if_match && *if_match)
        add_header(&q, "if-match", if_match);
    q.dst = dst;
    q.dst_cap = n;
    q.quiet = CK_S3_QUIET_412;
    q.quiet |= CK_S3_QUIET_404;
    st = do_request(s, &q, res);
    if (st == S3CKPT_ENOTFOUND && strcmp(res->err.code, "NoSuchBucket")) {
        st = ck_err_set(s->err, S3CKPT_ECORRUPT,
                        "GetObject s3://%s/%s: the object is missing (%s%s%s)", s->bucket, key,
                        res->err.code[0] ? res->err.code : "HTTP 404",
                        res->err.request_id[0] ? ", request id " : "", res->err.request_id);
    } else if (st == S3CKPT_EEXISTS) {
        st = ck_err_set(s->err, S3CKPT_ECORRUPT,
                        "GetObject s3://%s/%s: the object changed after the manifest was "
                        "written (ETag is no longer %s)",
                        s->bucket, key, if_match);
    } else if (!st && (q.http.dst_len != n ||
                       (q.http.status == 206 &&
                        (content_range_total(q.http.content_range, &first, &last, &total) ||
                         first != off || last != off + n - 1)))) {
        st = ck_err_set(s->err, S3CKPT_ECORRUPT,
                        "GetObject s3://%s/%s bytes %" PRIu64 "..%" PRIu64
                        ": got %zu bytes (%s); the object is shorter than recorded",
                        s->bucket, key, off, off + n, q.http.dst_len,
                        q.http.content_range[0] ? q.http.content_range : "no Content-Range");
    } else if (!st && q.http.status == 200 && off != 0) {
        st = ck_err_set(s->err, S3CKPT_EPROTOCOL,
                        "GetObject s3://%s/%s: the store ignored the Range header", s->bucket, key);
    }
    req_cleanup(&q);
    return st;
}

s3ckpt_status ck_s3_head_object(ck_s3 *s, const char *key, ck_s3_result *res, int quiet)
{
    s3_req q;
    s3ckpt_status st;

    req_init(&q, "HeadObject", "HEAD", key);
    q.head = 1;
    q.quiet = quiet;
    st = do_request(s, &q, res);
    if (!st && !q.http.has_content_length)
        st = ck_err_set(s->err, S3CKPT_EPROTOCOL, "HeadObject s3://%s/%s: no Content-Length",
                        s->bucket, key);
    req_cleanup(&q);
    return st;
}

/* Adds the wire checksum header for body (value storage in sumbuf). */
static void add_checksum(s3_req *q, ck_s3_checksum sum, const void *body, size_t len,
                         char sumbuf[CK_S3_SUM_MAX])
{
    unsigned char d[16];

    if (sum == CK_S3_SUM_MD5) {
        ck_md5_bytes(body, len, d);
        ck_base64(d, 16, sumbuf, CK_S3_SUM_MAX);
        add_header(q, "content-md5", sumbuf);
    } else if (sum == CK_S3_SUM_CRC32C) {
        uint32_t c = ck_crc32c(0, body, len);

        d[0] = (unsigned char)(c >> 24);
        d[1] = (unsigned char)(c >> 16);
        d[2] = (unsigned char)(c >> 8);
        d[3] = (unsigned char)c;
        ck_base64(d, 4, sumbuf, CK_S3_SUM_MAX);
        add_header(q, "x-amz-checksum-crc32c", sumbuf);
    } else if (sum == CK_S3_SUM_SHA256) {
        ck_sha256_hex(body, len, q->payload_hash); /* signed: the server recomputes it */
    }
}

s3ckpt_status ck_s3_put_object(ck_s3 *s, const char *key, const void *body, size_t len,
                               ck_s3_checksum sum, const char *if_none_match, const char *if_match,
                               ck_s3_result *res, int quiet)
{
    char sumbuf[CK_S3_SUM_MAX] = "";
    s3_req q;
    s3ckpt_status st;

    req_init(&q, "PutObject", "PUT", key);
    q.body = body;
    q.body_len = len;
    q.quiet = quiet;
    add_checksum(&q, sum, body, len, sumbuf);
    if (if_none_match)
        add_header(&q, "if-none-match", if_none_match);
    if (if_match)
        add_header(&q, "if-match", if_match);
    st = do_request(s, &q, res);
    req_cleanup(&q);
    return st;
}

s3ckpt_status ck_s3_delete_object(ck_s3 *s, const char *key)
{
    ck_s3_result res;
    s3_req q;
    s3ckpt_status st;

    req_init(&q, "DeleteObject", "DELETE", key);
    q.quiet = CK_S3_QUIET_404;
    st = do_request(s, &q, &res);
    req_cleanup(&q);
    return st == S3CKPT_ENOTFOUND ? S3CKPT_OK : st;
}

typedef struct del_err {
    ck_s3 *s;
    s3ckpt_status st;
} del_err;

static s3ckpt_status delete_failed(void *ud, const char *key, const char *code, const char *message)
{
    del_err *d = ud;

    if (!strcmp(code, "NoSuchKey"))
        return S3CKPT_OK;
    d->st = ck_err_set(d->s->err, !strcmp(code, "AccessDenied") ? S3CKPT_EAUTH : S3CKPT_ESERVER,
                       "DeleteObjects s3://%s/%s: %s%s%s", d->s->bucket, key, code,
                       message[0] ? ": " : "", message);
    return d->st;
}

s3ckpt_status ck_s3_delete_objects(ck_s3 *s, const char *const *keys, size_t n)
{
    unsigned char md5[16];
    char sum[CK_S3_SUM_MAX];
    del_err d = {s, S3CKPT_OK};
    ck_s3_result res;
    ck_buf body;
    s3_req q;
    s3ckpt_status st;

    if (n == 0)
        return S3CKPT_OK;
    ck_buf_init(&body, (size_t)4 << 20);
    if ((st = ck_s3xml_delete_body(&body, keys, n, 1))) {
        ck_buf_cleanup(&body);
        return ck_err_set(s->err, st, "DeleteObjects s3://%s: cannot build the request (%zu keys)",
                          s->bucket, n);
    }
    req_init(&q, "DeleteObjects", "POST", NULL);
    q.query = "delete=";
    q.body = body.data;
    q.body_len = body.len;
    ck_sha256_hex(body.data, body.len, q.payload_hash);
    ck_md5_bytes(body.data, body.len, md5); /* S3 requires it on DeleteObjects */
    ck_base64(md5, 16, sum, sizeof(sum));
    add_header(&q, "content-md5", sum);
    q.resp_max = (size_t)4 << 20;
    st = do_request(s, &q, &res);
    if (!st) {
        st = ck_s3xml_delete_result(q.http.resp.data ? q.http.resp.data : "", q.http.resp.len,
                                    delete_failed, &d);
        if (st == S3CKPT_EPROTOCOL)
            st = ck_err_set(s->err, st, "DeleteObjects s3://%s: malformed answer", s->bucket);
    }
    req_cleanup(&q);
    ck_buf_cleanup(&body);
    return st;
}

/* Appends "&name=value" (value URI-encoded) to a query. */
static s3ckpt_status query_add(ck_buf *b, const char *name, const char *value)
{
    s3ckpt_status st = ck_buf_printf(b, "%s%s=", b->len ? "&" : "", name);

    return st ? st : ck_sigv4_uri_encode(b, value, strlen(value), 0);
}

s3ckpt_status ck_s3_create_upload(ck_s3 *s, const char *key, ck_s3_checksum sum,
                                  char upload_id[CK_S3_UPLOADID_MAX])
{
    ck_s3_result res;
    s3_req q;
    s3ckpt_status st;

    req_init(&q, "CreateMultipartUpload", "POST", key);
    q.query = "uploads=";
    if (sum == CK_S3_SUM_CRC32C) /* parts then carry x-amz-checksum-crc32c (AWS insists) */
        add_header(&q, "x-amz-checksum-algorithm", "CRC32C");
    ck_sha256_hex("", 0, q.payload_hash);
    st = do_request(s, &q, &res);
    if (!st &&
        ck_s3xml_initiate(q.http.resp.data ? q.http.resp.data : "", q.http.resp.len, upload_id))
        st = ck_err_set(s->err, S3CKPT_EPROTOCOL,
                        "CreateMultipartUpload s3://%s/%s: no UploadId in the answer", s->bucket,
                        key);
    req_cleanup(&q);
    return st;
}

s3ckpt_status ck_s3_upload_part(ck_s3 *s, const char *key, const char *upload_id, unsigned part,
                                const void *body, size_t len, ck_s3_checksum sum, ck_s3_result *res)
{
    char sumbuf[CK_S3_SUM_MAX] = "", num[16];
    ck_buf query;
    s3_req q;
    s3ckpt_status st;

    ck_buf_init(&query, 4096);
    snprintf(num, sizeof(num), "%u", part);
    if ((st = query_add(&query, "partNumber", num)) ||
        (st = query_add(&query, "uploadId", upload_id))) {
        ck_buf_cleanup(&query);
        return ck_err_set(s->err, st, "UploadPart: upload id too long");
    }
    req_init(&q, "UploadPart", "PUT", key);
    q.query = query.data;
    q.part = part;
    q.body = body;
    q.body_len = len;
    add_checksum(&q, sum, body, len, sumbuf);
    st = do_request(s, &q, res);
    if (!st && sum == CK_S3_SUM_CRC32C)
        snprintf(res->crc32c, sizeof(res->crc32c), "%.15s", sumbuf);
    if (!st && !res->etag[0])
        st = ck_err_set(s->err, S3CKPT_EPROTOCOL, "UploadPart s3://%s/%s part %u: no ETag",
                        s->bucket, key, part);
    req_cleanup(&q);
    ck_buf_cleanup(&query);
    return st;
}

/* The ETag of a completed multipart object, read with HEAD into res: 1 when key exists with
 * a multipart ETag of n parts ("...-n"), else 0 (nothing recorded). For endpoints whose
 * Complete answer has an empty <ETag> (Ceph RGW Pacific), and for a Complete whose earlier
 * attempt got through with its answer lost (then NoSuchUpload). */
static int multipart_etag(ck_s3 *s, const char *key, size_t n, ck_s3_result *res)
{
    ck_s3_result head;
    char suffix[24];
    size_t el, sl;

    snprintf(suffix, sizeof(suffix), "-%zu\"", n);
    sl = strlen(suffix);
    if (ck_s3_head_object(s, key, &head, CK_S3_QUIET_404) != S3CKPT_OK ||
        (el = strlen(head.etag)) < sl || strcmp(head.etag + el - sl, suffix))
        return 0;
    snprintf(res->etag, sizeof(res->etag), "%s", head.etag);
    return 1;
}

s3ckpt_status ck_s3_complete_upload(ck_s3 *s, const char *key, const char *upload_id,
                                    const ck_s3_part *parts, size_t n, ck_s3_result *res)
{
    ck_buf query, body;
    ck_s3_error e;
    s3_req q;
    s3ckpt_status st;
    unsigned round;

    ck_buf_init(&query, 4096);
    ck_buf_init(&body, (size_t)64 << 20);
    req_init(&q, "CompleteMultipartUpload", "POST", key);
    if ((st = query_add(&query, "uploadId", upload_id)) ||
        (st = ck_s3xml_complete_body(&body, parts, n))) {
        st = ck_err_set(s->err, st, "CompleteMultipartUpload s3://%s/%s: cannot build request",
                        s->bucket, key);
        goto out;
    }
    q.query = query.data;
    q.body = body.data;
    q.body_len = body.len;
    ck_sha256_hex(body.data, body.len, q.payload_hash);
    q.resp_max = 64 << 10;
    q.quiet = CK_S3_QUIET_404;
    for (round = 1;; round++) {
        st = do_request(s, &q, res);
        if (st == S3CKPT_ENOTFOUND) {
            /* NoSuchUpload: a lost answer to an earlier attempt (ours, or libcurl's own resend
             * on a reused connection) may have completed it; else the upload is gone */
            if (multipart_etag(s, key, n, res)) {
                st = S3CKPT_OK;
                goto out;
            }
            st = ck_err_set(s->err, S3CKPT_ENOTFOUND,
                            "CompleteMultipartUpload s3://%s/%s: %s (request id %s); the upload "
                            "is gone (aborted, or completed by another push)",
                            s->bucket, key, res->err.code[0] ? res->err.code : "HTTP 404",
                            res->err.request_id);
        }
        if (st)
            goto out;
        /* a 200 can still carry an <Error>: not completed; S3 says to retry it */
        memset(&e, 0, sizeof(e));
        if (!q.http.resp.len || ck_s3xml_error(q.http.resp.data, q.http.resp.len, &e) != 0)
            break;
        if (round < 4 && (is_code(&e, "InternalError") || is_code(&e, "SlowDown") ||
                          is_code(&e, "ServiceUnavailable"))) {
            logf_(s, 1, "CompleteMultipartUpload s3://%s/%s: HTTP 200 with %s; retrying", s->bucket,
                  key, e.code);
            sleep_ms(s, backoff_ms(round));
            continue;
        }
        st = ck_err_set(s->err, S3CKPT_ESERVER,
                        "CompleteMultipartUpload s3://%s/%s: HTTP %ld with error %s%s%s "
                        "(request id %s)",
                        s->bucket, key, q.http.status, e.code, e.message[0] ? ": " : "", e.message,
                        e.request_id);
        goto out;
    }
    if (ck_s3xml_complete(q.http.resp.data ? q.http.resp.data : "", q.http.resp.len, res->etag) &&
        !multipart_etag(s, key, n, res))
        st = ck_err_set(s->err, S3CKPT_EPROTOCOL,
                        "CompleteMultipartUpload s3://%s/%s: no ETag in the answer, and the "
                        "object is not there with the ETag of %zu parts",
                        s->bucket, key, n);
out:
    req_cleanup(&q);
    ck_buf_cleanup(&query);
    ck_buf_cleanup(&body);
    return st;
}

s3ckpt_status ck_s3_abort_upload(ck_s3 *s, const char *key, const char *upload_id)
{
    ck_buf query;
    ck_s3_result res;
    s3_req q;
    s3ckpt_status st;

    ck_buf_init(&query, 4096);
    if ((st = query_add(&query, "uploadId", upload_id))) {
        ck_buf_cleanup(&query);
        return ck_err_set(s->err, st, "AbortMultipartUpload: upload id too long");
    }
    req_init(&q, "AbortMultipartUpload", "DELETE", key);
    q.query = query.data;
    q.quiet = CK_S3_QUIET_404;
    st = do_request(s, &q, &res);
    req_cleanup(&q);
    ck_buf_cleanup(&query);
    return st == S3CKPT_ENOTFOUND ? S3CKPT_OK : st;
}

#define LIST_BODY_MAX ((size_t)8 << 20)

s3ckpt_status ck_s3_list_objects(ck_s3 *s, const char *prefix, int delimited, ck_s3xml_obj_fn *fn,
                                 void *ud)
{
    char token[2048] = "";
    ck_buf query;
    s3ckpt_status st = S3CKPT_OK;
    int truncated = 1;

    ck_buf_init(&query, 8192);
    while (truncated && !st) {
        ck_s3_result res;
        s3_req q;

        query.len = 0;
        if ((st = query_add(&query, "list-type", "2")) ||
            (st = query_add(&query, "prefix", prefix)) ||
            (st = query_add(&query, "encoding-type", "url")) ||
            (delimited && (st = query_add(&query, "delimiter", "/"))) ||
            (token[0] && (st = query_add(&query, "continuation-token", token)))) {
            st = ck_err_set(s->err, st, "ListObjectsV2: prefix too long");
            break;
        }
        req_init(&q, "ListObjectsV2", "GET", NULL);
        q.query = query.data;
        q.resp_max = LIST_BODY_MAX;
        st = do_request(s, &q, &res);
        if (!st) {
            char before[sizeof(token)];

            memcpy(before, token, sizeof(token));
            st = ck_s3xml_list_objects(q.http.resp.data ? q.http.resp.data : "", q.http.resp.len,
                                       fn, ud, &truncated, token, sizeof(token));
            if (st == S3CKPT_EPROTOCOL || (!st && truncated && !strcmp(before, token)))
                st = ck_err_set(s->err, S3CKPT_EPROTOCOL,
                                "ListObjectsV2 s3://%s/%s: malformed answer (or a page token "
                                "that does not move on)",
                                s->bucket, prefix);
        }
        req_cleanup(&q);
    }
    ck_buf_cleanup(&query);
    return st;
}

s3ckpt_status ck_s3_list_uploads(ck_s3 *s, const char *prefix, ck_s3xml_upload_fn *fn, void *ud)
{
    char key_marker[CK_S3_KEY_MAX] = "", id_marker[CK_S3_UPLOADID_MAX] = "";
    ck_buf query;
    s3ckpt_status st = S3CKPT_OK;
    int truncated = 1;

    ck_buf_init(&query, 8192);
    while (truncated && !st) {
        ck_s3_result res;
        s3_req q;

        query.len = 0;
        if ((st = query_add(&query, "uploads", "")) || (st = query_add(&query, "prefix", prefix)) ||
            (st = query_add(&query, "encoding-type", "url")) ||
            (key_marker[0] && (st = query_add(&query, "key-marker", key_marker))) ||
            (id_marker[0] && (st = query_add(&query, "upload-id-marker", id_marker)))) {
            st = ck_err_set(s->err, st, "ListMultipartUploads: prefix too long");
            break;
        }
        req_init(&q, "ListMultipartUploads", "GET", NULL);
        q.query = query.data;
        q.resp_max = LIST_BODY_MAX;
        st = do_request(s, &q, &res);
        if (!st) {
            char kb[sizeof(key_marker)], ib[sizeof(id_marker)];

            memcpy(kb, key_marker, sizeof(kb));
            memcpy(ib, id_marker, sizeof(ib));
            st = ck_s3xml_list_uploads(q.http.resp.data ? q.http.resp.data : "", q.http.resp.len,
                                       fn, ud, &truncated, key_marker, sizeof(key_marker),
                                       id_marker, sizeof(id_marker));
            if (st == S3CKPT_EPROTOCOL ||
                (!st && truncated && !strcmp(kb, key_marker) && !strcmp(ib, id_marker)))
                st = ck_err_set(s->err, S3CKPT_EPROTOCOL,
                                "ListMultipartUploads s3://%s/%s: malformed answer (or "
                                "markers that do not move on)",
                                s->bucket, prefix);
        }
        req_cleanup(&q);
    }
    ck_buf_cleanup(&query);
    return st;
}

s3ckpt_status ck_s3_list_parts(ck_s3 *s, const char *key, const char *upload_id,
                               ck_s3xml_part_fn *fn, void *ud)
{
    ck_buf query;
    s3ckpt_status st = S3CKPT_OK;
    unsigned marker = 0;
    int truncated = 1;

    ck_buf_init(&query, 8192);
    while (truncated && !st) {
        ck_s3_result res;
        char num[16];
        s3_req q;

        query.len = 0;
        snprintf(num, sizeof(num), "%u", marker);
        if ((st = query_add(&query, "uploadId", upload_id)) ||
            (marker && (st = query_add(&query, "part-number-marker", num)))) {
            st = ck_err_set(s->err, st, "ListParts: upload id too long");
            break;
        }
        req_init(&q, "ListParts", "GET", key);
        q.query = query.data;
        q.resp_max = LIST_BODY_MAX;
        q.quiet = CK_S3_QUIET_404;
        st = do_request(s, &q, &res);
        if (!st) {
            unsigned before = marker;

            st = ck_s3xml_list_parts(q.http.resp.data ? q.http.resp.data : "", q.http.resp.len, fn,
                                     ud, &truncated, &marker);
            if (st == S3CKPT_EPROTOCOL || (!st && truncated && marker <= before))
                st = ck_err_set(s->err, S3CKPT_EPROTOCOL, "ListParts s3://%s/%s: malformed answer",
                                s->bucket, key);
        }
        req_cleanup(&q);
    }
    ck_buf_cleanup(&query);
    return st;
}

/* Sends q (a PUT of the probe body, once, no retry) and says whether the endpoint refused it
 * with 400 and the S3 error code `code`. */
static int refused_with(ck_s3 *s, s3_req *q, const char *probe_key, const char *code)
{
    ck_buf url, path, host, hdrs;
    char *lines[MAX_HDRS + 5];
    int refused = 0;
    s3ckpt_status st;

    q->quiet = CK_S3_QUIET_404 | CK_S3_QUIET_412;
    q->http.resp.max = 4096;
    ck_buf_init(&url, 8192);
    ck_buf_init(&path, 8192);
    ck_buf_init(&host, 512);
    ck_buf_init(&hdrs, 16384);
    st = build_target(s, probe_key, &url, &path, &host);
    if (!st)
        st = sign_into(s, q, &path, &host, lines, &hdrs);
    if (!st) {
        q->http.method = "PUT";
        q->http.url = url.data;
        q->http.headers = (const char *const *)lines;
        q->http.body = q->body;
        q->http.body_len = q->body_len;
        token_take(s);
        st = ck_http_run(s->http, &q->http);
        token_give(s, 2);
    }
    if (!st && q->http.status == 400 && q->http.resp.len) {
        ck_s3_error pe;

        memset(&pe, 0, sizeof(pe));
        refused =
            ck_s3xml_error(q->http.resp.data, q->http.resp.len, &pe) == 0 && is_code(&pe, code);
    }
    ck_buf_cleanup(&url);
    ck_buf_cleanup(&path);
    ck_buf_cleanup(&host);
    ck_buf_cleanup(&hdrs);
    return refused;
}

/* 1 when SHA-256 of a buffer costs less CPU than MD5 here (SHA-NI: about 2 GB/s against 0.8). */
static int sha256_cheaper(void)
{
    enum { N = 256 << 10 };
    unsigned char *buf = malloc(N), md5[16];
    char hex[65];
    struct timespec t0, t1, t2;
    double a = 0, b = 0;
    int round;

    if (!buf)
        return 0;
    memset(buf, 0x5a, N);                 /* touched: no page faults in the timing */
    for (round = 0; round < 2; round++) { /* the second round counts: both warm */
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
        ck_md5_bytes(buf, N, md5);
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t1);
        ck_sha256_hex(buf, N, hex);
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t2);
        a = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
        b = (double)(t2.tv_sec - t1.tv_sec) + (double)(t2.tv_nsec - t1.tv_nsec) / 1e9;
    }
    free(buf);
    return b < a;
}

s3ckpt_status ck_s3_probe(ck_s3 *s, const char *probe_key, ck_s3_checksum *sum_out,
                          unsigned *verified_out, int *conditional_out)
{
    static const char body[] = "s3ckpt capability probe\n";
    ck_s3_result res;
    s3_req q;
    s3ckpt_status st;
    int cond = 0;
    unsigned verified = 1u << CK_S3_SUM_MD5;
    ck_s3_checksum sum = CK_S3_SUM_MD5;

    pthread_mutex_lock(&s->lock);
    if (s->probed) {
        *sum_out = (ck_s3_checksum)s->probe_sum;
        *verified_out = s->probe_verified;
        *conditional_out = s->probe_cond;
        pthread_mutex_unlock(&s->lock);
        return S3CKPT_OK;
    }
    pthread_mutex_unlock(&s->lock);
    if ((st = ck_s3_put_object(s, probe_key, body, sizeof(body) - 1, CK_S3_SUM_MD5, NULL, NULL,
                               &res, 0)))
        return st;
    /* conditional create on an existing key must be refused */
    st = ck_s3_put_object(s, probe_key, body, sizeof(body) - 1, CK_S3_SUM_OFF, "*", NULL, &res,
                          CK_S3_QUIET_412);
    if (st == S3CKPT_EEXISTS)
        cond = 1;
    else if (st)
        goto out;
    /* a wrong CRC32C must be refused by an endpoint that checks it */
    req_init(&q, "PutObject", "PUT", probe_key);
    q.body = body;
    q.body_len = sizeof(body) - 1;
    add_header(&q, "x-amz-checksum-crc32c", "AAAAAA==");
    if (refused_with(s, &q, probe_key, "BadDigest"))
        verified |= 1u << CK_S3_SUM_CRC32C;
    req_cleanup(&q);
    /* and a signed payload hash that is not the body's (the signature itself is right) */
    req_init(&q, "PutObject", "PUT", probe_key);
    q.body = body;
    q.body_len = sizeof(body) - 1;
    ck_sha256_hex("not the body", 12, q.payload_hash);
    if (refused_with(s, &q, probe_key, "XAmzContentSHA256Mismatch"))
        verified |= 1u << CK_S3_SUM_SHA256;
    req_cleanup(&q);
    if (verified & 1u << CK_S3_SUM_CRC32C)
        sum = CK_S3_SUM_CRC32C;
    else if (verified & 1u << CK_S3_SUM_SHA256 && sha256_cheaper())
        sum = CK_S3_SUM_SHA256;
    /* the right value of the one auto takes must pass (a failure is recorded) */
    st = S3CKPT_OK;
    if (sum != CK_S3_SUM_MD5)
        st = ck_s3_put_object(s, probe_key, body, sizeof(body) - 1, sum, NULL, NULL, &res, 0);
out:
    ck_s3_delete_object(s, probe_key);
    if (st)
        return st;
    logf_(s, 1,
          "endpoint %s://%s: conditional writes %s; x-amz-checksum-crc32c %s; signed payload "
          "SHA-256 %s",
          s->scheme, s->hostport, cond ? "honoured" : "NOT honoured (HEAD checks instead)",
          verified & 1u << CK_S3_SUM_CRC32C ? "verified" : "not verified",
          verified & 1u << CK_S3_SUM_SHA256 ? "verified" : "not verified");
    pthread_mutex_lock(&s->lock);
    s->probed = 1;
    s->probe_sum = (int)sum;
    s->probe_verified = verified;
    s->probe_cond = cond;
    pthread_mutex_unlock(&s->lock);
    *sum_out = sum;
    *verified_out = verified;
    *conditional_out = cond;
    return S3CKPT_OK;
}
