/*
 * http - the libcurl transfer engine (the only libcurl user).
 *
 * One thread owns a CURLM and every easy handle: callers queue a request under the engine's
 * mutex, wake the multi handle and sleep on their own condition variable until the transfer
 * thread marks the request done (one per caller: a finished request wakes only its caller, not
 * every thread waiting on the engine). Many requests are in flight at once on that one thread
 * (curl's multi model); connections and DNS results are reused across requests through the multi
 * handle. Request bodies are read in place from the caller's buffer and 2xx response bodies land in
 * the caller's buffer, so a part or a frame is never copied twice. Retries, signing and error
 * mapping belong to s3.c: this layer only moves bytes.
 */
#define _GNU_SOURCE
#include "http.h"

#include <curl/curl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

struct ck_http {
    CURLM *multi;
    pthread_t thread;
    int thread_started;
    pthread_mutex_t lock;
    ck_http_req *queue; /* submitted, not yet handed to the multi handle (guarded by lock) */
    int stop;           /* guarded by lock */
    ck_http_opts opts;
    char *ca_bundle;
    CURL **idle; /* easy handles kept for reuse (transfer thread only) */
    size_t nidle, idle_cap;
};

typedef struct easy_ctx {
    ck_http_req *req;
    struct curl_slist *headers;
    uint64_t body_off;
    const atomic_int *cancel;
    char errbuf[CURL_ERROR_SIZE];
} easy_ctx;

static pthread_once_t global_once = PTHREAD_ONCE_INIT;
static CURLcode global_rc;

static void global_init_once(void)
{
    global_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
}

s3ckpt_status ck_http_global_init(void)
{
    pthread_once(&global_once, global_init_once);
    return global_rc == CURLE_OK ? S3CKPT_OK : S3CKPT_ENOMEM;
}

void ck_http_req_init(ck_http_req *r)
{
    memset(r, 0, sizeof(*r));
    ck_buf_init(&r->resp, 64 << 10);
}

void ck_http_req_cleanup(ck_http_req *r)
{
    ck_buf_cleanup(&r->resp);
}

/* Resets every output field before a (re)try. */
static void reset_outputs(ck_http_req *r)
{
    r->status = 0;
    r->transport = 0;
    r->timed_out = r->connect_failed = r->tls_failed = 0;
    r->transport_msg[0] = '\0';
    r->resp.len = 0;
    if (r->resp.data)
        r->resp.data[0] = '\0';
    r->dst_len = 0;
    r->dst_overflow = 0;
    r->content_length = 0;
    r->has_content_length = 0;
    r->etag[0] = r->request_id[0] = r->retry_after[0] = r->date[0] = r->content_range[0] = '\0';
    r->done = 0;
}

static void copy_value(char *dst, size_t cap, const char *v, size_t n)
{
    while (n && (v[n - 1] == '\r' || v[n - 1] == '\n' || v[n - 1] == ' ' || v[n - 1] == '\t'))
        n--;
    while (n && (*v == ' ' || *v == '\t')) {
        v++;
        n--;
    }
    if (n >= cap)
        n = cap - 1; /* longer values are not ones we act on */
    memcpy(dst, v, n);
    dst[n] = '\0';
}

static int header_is(const char *line, size_t n, const char *name, const char **value)
{
    size_t k = strlen(name);

    if (n <= k || line[k] != ':' || strncasecmp(line, name, k))
        return 0;
    *value = line + k + 1;
    return 1;
}

static size_t on_header(char *line, size_t size, size_t nitems, void *ud)
{
    easy_ctx *x = ud;
    ck_http_req *r = x->req;
    size_t n = size * nitems;
    const char *v;

    if (n > 5 && memcmp(line, "HTTP/", 5) == 0) {
        /* a new status line (also after 100 Continue): forget the previous headers */
        const char *sp = memchr(line, ' ', n);
        long st = 0;

        for (sp = sp ? sp + 1 : line + n; sp < line + n && *sp >= '0' && *sp <= '9'; sp++)
            st = st * 10 + (*sp - '0');
        r->status = st;
        r->etag[0] = r->request_id[0] = r->retry_after[0] = r->date[0] = '\0';
        r->content_range[0] = '\0';
        r->has_content_length = 0;
        return n;
    }
    if (header_is(line, n, "etag", &v))
        copy_value(r->etag, sizeof(r->etag), v, n - (size_t)(v - line));
    else if (header_is(line, n, "x-amz-request-id", &v))
        copy_value(r->request_id, sizeof(r->request_id), v, n - (size_t)(v - line));
    else if (header_is(line, n, "retry-after", &v))
        copy_value(r->retry_after, sizeof(r->retry_after), v, n - (size_t)(v - line));
    else if (header_is(line, n, "date", &v))
        copy_value(r->date, sizeof(r->date), v, n - (size_t)(v - line));
    else if (header_is(line, n, "content-range", &v))
        copy_value(r->content_range, sizeof(r->content_range), v, n - (size_t)(v - line));
    else if (header_is(line, n, "content-length", &v)) {
        uint64_t len = 0;
        int digits = 0;
        const char *e = line + n;

        while (v < e && (*v == ' ' || *v == '\t'))
            v++;
        for (; v < e && *v >= '0' && *v <= '9' && digits < 19; v++, digits++)
            len = len * 10 + (uint64_t)(*v - '0');
        r->content_length = len;
        r->has_content_length = digits > 0;
    }
    return n;
}

static size_t on_body(char *data, size_t size, size_t nmemb, void *ud)
{
    easy_ctx *x = ud;
    ck_http_req *r = x->req;
    size_t n = size * nmemb;

    if (r->dst && r->status >= 200 && r->status < 300) {
        if (n > r->dst_cap - r->dst_len) {
            r->dst_overflow = 1;
            return 0; /* aborts the transfer: more bytes than the range asked for */
        }
        memcpy(r->dst + r->dst_len, data, n);
        r->dst_len += n;
        return n;
    }
    /* error bodies and small responses: keep what fits the cap, drop the rest */
    if (r->resp.len < r->resp.max) {
        size_t room = r->resp.max - r->resp.len;

        if (ck_buf_append(&r->resp, data, n < room ? n : room))
            return 0;
    }
    return n;
}

static size_t on_read(char *dst, size_t size, size_t nitems, void *ud)
{
    easy_ctx *x = ud;
    ck_http_req *r = x->req;
    uint64_t left = r->body_len - x->body_off;
    size_t n = size * nitems;

    if (n > left)
        n = (size_t)left;
    memcpy(dst, (const char *)r->body + x->body_off, n);
    x->body_off += n;
    return n;
}

/* Rewinds the body when libcurl must send it again on a new connection. */
static int on_seek(void *ud, curl_off_t off, int origin)
{
    easy_ctx *x = ud;

    if (origin != SEEK_SET || off < 0 || (uint64_t)off > x->req->body_len)
        return CURL_SEEKFUNC_FAIL;
    x->body_off = (uint64_t)off;
    return CURL_SEEKFUNC_OK;
}

static int on_progress(void *ud, curl_off_t dt, curl_off_t dn, curl_off_t ut, curl_off_t un)
{
    easy_ctx *x = ud;

    (void)dt;
    (void)dn;
    (void)ut;
    (void)un;
    return x->cancel && atomic_load(x->cancel) ? 1 : 0;
}

static CURL *take_easy(ck_http *h)
{
    CURL *e;

    if (h->nidle) {
        e = h->idle[--h->nidle];
        curl_easy_reset(e);
        return e;
    }
    return curl_easy_init();
}

static void put_easy(ck_http *h, CURL *e)
{
    if (h->nidle == h->idle_cap) {
        size_t cap = h->idle_cap ? h->idle_cap * 2 : 16;
        CURL **n = realloc(h->idle, cap * sizeof(*n));

        if (!n) {
            curl_easy_cleanup(e);
            return;
        }
        h->idle = n;
        h->idle_cap = cap;
    }
    h->idle[h->nidle++] = e;
}

/* Sets up an easy handle for r. Nonzero on failure (the request then fails with ENOMEM). */
static int setup(ck_http *h, ck_http_req *r)
{
    CURL *e = take_easy(h);
    easy_ctx *x = calloc(1, sizeof(*x));
    size_t i;
    int has_type = 0;

    if (!e || !x)
        goto fail;
    x->req = r;
    pthread_mutex_lock(&h->lock);
    x->cancel = h->opts.cancel;
    pthread_mutex_unlock(&h->lock);
    for (i = 0; i < r->nheaders; i++) {
        struct curl_slist *n = curl_slist_append(x->headers, r->headers[i]);

        if (!n)
            goto fail;
        x->headers = n;
        if (strncasecmp(r->headers[i], "content-type:", 13) == 0)
            has_type = 1;
    }
    /* no 100-continue round trip; no form content type libcurl would add to a POST */
    if (!(x->headers = curl_slist_append(x->headers, "Expect:")) ||
        (!has_type && !(x->headers = curl_slist_append(x->headers, "Content-Type:"))))
        goto fail;
    curl_easy_setopt(e, CURLOPT_PRIVATE, x);
    curl_easy_setopt(e, CURLOPT_URL, r->url);
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_PATH_AS_IS, 1L); /* S3 keys are sent exactly as signed */
    curl_easy_setopt(e, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_1);
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, x->headers);
    curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(e, CURLOPT_HEADERDATA, x);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, x);
    curl_easy_setopt(e, CURLOPT_ERRORBUFFER, x->errbuf);
    curl_easy_setopt(e, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(e, CURLOPT_XFERINFOFUNCTION, on_progress);
    curl_easy_setopt(e, CURLOPT_XFERINFODATA, x);
    curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, h->opts.connect_timeout_ms);
    curl_easy_setopt(e, CURLOPT_LOW_SPEED_LIMIT, 1L);
    curl_easy_setopt(e, CURLOPT_LOW_SPEED_TIME, h->opts.low_speed_time_s);
    curl_easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L);
    curl_easy_setopt(e, CURLOPT_BUFFERSIZE, 256L << 10);
    curl_easy_setopt(e, CURLOPT_UPLOAD_BUFFERSIZE, 512L << 10);
    if (h->ca_bundle)
        curl_easy_setopt(e, CURLOPT_CAINFO, h->ca_bundle);
    if (r->head) {
        curl_easy_setopt(e, CURLOPT_NOBODY, 1L);
    } else if (strcmp(r->method, "PUT") == 0) {
        curl_easy_setopt(e, CURLOPT_UPLOAD, 1L);
        curl_easy_setopt(e, CURLOPT_INFILESIZE_LARGE, (curl_off_t)r->body_len);
        curl_easy_setopt(e, CURLOPT_READFUNCTION, on_read);
        curl_easy_setopt(e, CURLOPT_READDATA, x);
        curl_easy_setopt(e, CURLOPT_SEEKFUNCTION, on_seek);
        curl_easy_setopt(e, CURLOPT_SEEKDATA, x);
    } else if (strcmp(r->method, "POST") == 0) {
        curl_easy_setopt(e, CURLOPT_POST, 1L);
        curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)r->body_len);
        curl_easy_setopt(e, CURLOPT_POSTFIELDS, r->body ? (const char *)r->body : "");
    } else if (strcmp(r->method, "GET") != 0) {
        curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, r->method);
    }
    if (curl_multi_add_handle(h->multi, e) != CURLM_OK)
        goto fail;
    r->easy = e;
    return 0;
fail:
    if (x)
        curl_slist_free_all(x->headers);
    free(x);
    if (e)
        put_easy(h, e);
    return -1;
}

static void finish(ck_http *h, CURL *e, CURLcode rc)
{
    easy_ctx *x = NULL;
    ck_http_req *r;

    curl_easy_getinfo(e, CURLINFO_PRIVATE, (char **)&x);
    r = x->req;
    curl_multi_remove_handle(h->multi, e);
    if (rc != CURLE_OK) {
        r->transport = (int)rc;
        r->timed_out = rc == CURLE_OPERATION_TIMEDOUT;
        r->connect_failed = rc == CURLE_COULDNT_CONNECT || rc == CURLE_COULDNT_RESOLVE_HOST ||
                            rc == CURLE_COULDNT_RESOLVE_PROXY;
        r->tls_failed = rc == CURLE_PEER_FAILED_VERIFICATION || rc == CURLE_SSL_CACERT_BADFILE ||
                        rc == CURLE_SSL_CERTPROBLEM || rc == CURLE_SSL_CONNECT_ERROR ||
                        rc == CURLE_SSL_CRL_BADFILE || rc == CURLE_SSL_ISSUER_ERROR;
        copy_value(r->transport_msg, sizeof(r->transport_msg),
                   x->errbuf[0] ? x->errbuf : curl_easy_strerror(rc),
                   strlen(x->errbuf[0] ? x->errbuf : curl_easy_strerror(rc)));
    }
    curl_slist_free_all(x->headers);
    free(x);
    curl_easy_setopt(e, CURLOPT_PRIVATE, NULL);
    curl_easy_setopt(e, CURLOPT_ERRORBUFFER, NULL);
    put_easy(h, e);
    pthread_mutex_lock(&h->lock);
    r->easy = NULL;
    r->done = 1;
    pthread_cond_signal(r->wake);
    pthread_mutex_unlock(&h->lock);
}

static void fail_unstarted(ck_http *h, ck_http_req *r)
{
    r->transport = CURLE_OUT_OF_MEMORY;
    snprintf(r->transport_msg, sizeof(r->transport_msg), "out of memory setting up the request");
    pthread_mutex_lock(&h->lock);
    r->done = 1;
    pthread_cond_signal(r->wake);
    pthread_mutex_unlock(&h->lock);
}

static void *transfer_thread(void *arg)
{
    ck_http *h = arg;
    int running = 0;

    for (;;) {
        ck_http_req *q, *next;
        CURLMsg *m;
        int left;

        pthread_mutex_lock(&h->lock);
        q = h->queue;
        h->queue = NULL;
        if (h->stop && !q && running == 0) {
            pthread_mutex_unlock(&h->lock);
            break;
        }
        pthread_mutex_unlock(&h->lock);
        /* the queue is LIFO; add in submission order so early requests start first */
        {
            ck_http_req *rev = NULL;

            for (; q; q = next) {
                next = q->next;
                q->next = rev;
                rev = q;
            }
            q = rev;
        }
        for (; q; q = next) {
            next = q->next;
            if (setup(h, q))
                fail_unstarted(h, q);
        }
        curl_multi_perform(h->multi, &running);
        while ((m = curl_multi_info_read(h->multi, &left)))
            if (m->msg == CURLMSG_DONE)
                finish(h, m->easy_handle, m->data.result);
        curl_multi_poll(h->multi, NULL, 0, 1000, NULL);
    }
    return NULL;
}

s3ckpt_status ck_http_new(ck_http **out, const ck_http_opts *opts)
{
    ck_http *h;

    *out = NULL;
    if (ck_http_global_init())
        return S3CKPT_ENOMEM;
    if (!(h = calloc(1, sizeof(*h))))
        return S3CKPT_ENOMEM;
    if (opts)
        h->opts = *opts;
    if (!h->opts.max_connections)
        h->opts.max_connections = 16;
    if (h->opts.connect_timeout_ms <= 0)
        h->opts.connect_timeout_ms = 10000;
    if (h->opts.low_speed_time_s <= 0)
        h->opts.low_speed_time_s = 60;
    if (opts && opts->ca_bundle && *opts->ca_bundle && !(h->ca_bundle = strdup(opts->ca_bundle)))
        goto fail;
    h->opts.ca_bundle = NULL;
    pthread_mutex_init(&h->lock, NULL);
    if (!(h->multi = curl_multi_init()))
        goto fail;
    curl_multi_setopt(h->multi, CURLMOPT_MAX_TOTAL_CONNECTIONS, (long)h->opts.max_connections);
    curl_multi_setopt(h->multi, CURLMOPT_MAXCONNECTS, (long)h->opts.max_connections);
    if (pthread_create(&h->thread, NULL, transfer_thread, h))
        goto fail;
    h->thread_started = 1;
    *out = h;
    return S3CKPT_OK;
fail:
    ck_http_free(h);
    return S3CKPT_ENOMEM;
}

void ck_http_free(ck_http *h)
{
    size_t i;

    if (!h)
        return;
    if (h->thread_started) {
        pthread_mutex_lock(&h->lock);
        h->stop = 1;
        pthread_mutex_unlock(&h->lock);
        curl_multi_wakeup(h->multi);
        pthread_join(h->thread, NULL);
    }
    for (i = 0; i < h->nidle; i++)
        curl_easy_cleanup(h->idle[i]);
    free(h->idle);
    if (h->multi)
        curl_multi_cleanup(h->multi);
    pthread_mutex_destroy(&h->lock);
    free(h->ca_bundle);
    free(h);
}

void ck_http_ignore_cancel(ck_http *h)
{
    pthread_mutex_lock(&h->lock);
    h->opts.cancel = NULL;
    pthread_mutex_unlock(&h->lock);
}

s3ckpt_status ck_http_run(ck_http *h, ck_http_req *r)
{
    pthread_cond_t done;

    reset_outputs(r);
    pthread_cond_init(&done, NULL);
    r->wake = &done;
    pthread_mutex_lock(&h->lock);
    r->next = h->queue;
    h->queue = r;
    pthread_mutex_unlock(&h->lock);
    curl_multi_wakeup(h->multi);
    pthread_mutex_lock(&h->lock);
    while (!r->done)
        pthread_cond_wait(&done, &h->lock);
    r->wake = NULL;
    pthread_mutex_unlock(&h->lock);
    pthread_cond_destroy(&done); /* signalled under the lock, so no one touches it any more */
    if (r->transport == CURLE_ABORTED_BY_CALLBACK)
        return S3CKPT_ECANCELED; /* only the cancel flag aborts from a callback */
    return S3CKPT_OK;
}
