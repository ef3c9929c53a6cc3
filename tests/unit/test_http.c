/*
 * test_http - the transfer engine against a tiny scripted HTTP/1.1 server on 127.0.0.1 (a
 * thread of this test): request bodies arrive whole, 2xx bodies land in the caller's buffer,
 * error bodies in the capped response buffer, an over-long body is refused, headers are
 * picked up, cancel aborts a stalled transfer, a refused connection is reported as such, and
 * many requests run at once from many threads.
 */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "http.h"

/* ---- the scripted server: one response per connection, chosen by the request path ---- */

static int srv_fd = -1;
static int srv_port;
static atomic_int srv_stop;
static pthread_t srv_thread;

static size_t read_head(int fd, char *buf, size_t cap)
{
    size_t n = 0;

    while (n + 1 < cap) {
        ssize_t k = read(fd, buf + n, 1);

        if (k <= 0)
            break;
        n++;
        if (n >= 4 && memcmp(buf + n - 4, "\r\n\r\n", 4) == 0)
            break;
    }
    buf[n] = '\0';
    return n;
}

static void write_all(int fd, const void *p, size_t n)
{
    const char *c = p;

    while (n) {
        ssize_t k = write(fd, c, n);

        if (k <= 0)
            return;
        c += k;
        n -= (size_t)k;
    }
}

static void *serve_one(void *arg)
{
    int fd = (int)(intptr_t)arg;
    char head[8192], resp[512];
    const char *cl;

    read_head(fd, head, sizeof(head));
    if (strstr(head, "PUT /sum ")) {
        /* reads the body, answers with its length and byte sum */
        unsigned long long len = 0, sum = 0, got = 0;
        unsigned char buf[65536];

        cl = strcasestr(head, "content-length:");
        if (cl)
            len = strtoull(cl + 15, NULL, 10);
        while (got < len) {
            ssize_t k = read(fd, buf, sizeof(buf) < len - got ? sizeof(buf) : len - got);

            if (k <= 0)
                break;
            for (ssize_t i = 0; i < k; i++)
                sum += buf[i];
            got += (unsigned long long)k;
        }
        {
            char body[64];
            int bl = snprintf(body, sizeof(body), "%llu %llu", got, sum);
            int n = snprintf(resp, sizeof(resp),
                             "HTTP/1.1 200 OK\r\nETag: \"abc\"\r\nx-amz-request-id: R1\r\n"
                             "Content-Length: %d\r\nConnection: close\r\n\r\n%s",
                             bl, body);
            write_all(fd, resp, (size_t)n);
        }
    } else if (strstr(head, "GET /ten ")) {
        const char *r = "HTTP/1.1 206 Partial Content\r\nContent-Range: bytes 0-9/100\r\n"
                        "Content-Length: 10\r\nConnection: close\r\n\r\n0123456789";
        write_all(fd, r, strlen(r));
    } else if (strstr(head, "GET /error ")) {
        const char *r = "HTTP/1.1 503 Slow Down\r\nRetry-After: 3\r\nContent-Length: 40\r\n"
                        "Connection: close\r\n\r\n<Error><Code>SlowDown</Code></Error>    ";
        write_all(fd, r, strlen(r));
    } else if (strstr(head, "GET /stall ")) {
        const char *r = "HTTP/1.1 200 OK\r\nContent-Length: 100\r\nConnection: close\r\n\r\n01";
        write_all(fd, r, strlen(r));
        while (!atomic_load(&srv_stop))
            usleep(10000); /* never sends the rest */
    }
    close(fd);
    return NULL;
}

static void *server(void *arg)
{
    (void)arg;
    while (!atomic_load(&srv_stop)) {
        int c = accept(srv_fd, NULL, NULL);
        pthread_t t;

        if (c < 0)
            continue;
        if (pthread_create(&t, NULL, serve_one, (void *)(intptr_t)c) == 0)
            pthread_detach(t);
        else
            close(c);
    }
    return NULL;
}

static void start_server(void)
{
    struct sockaddr_in a = {0};
    socklen_t al = sizeof(a);
    struct timeval tv = {0, 200000};

    srv_fd = socket(AF_INET, SOCK_STREAM, 0);
    cr_assert(srv_fd >= 0);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    cr_assert_eq(bind(srv_fd, (struct sockaddr *)&a, sizeof(a)), 0);
    cr_assert_eq(listen(srv_fd, 64), 0);
    setsockopt(srv_fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)); /* accept wakes to stop */
    getsockname(srv_fd, (struct sockaddr *)&a, &al);
    srv_port = ntohs(a.sin_port);
    atomic_store(&srv_stop, 0);
    cr_assert_eq(pthread_create(&srv_thread, NULL, server, NULL), 0);
}

static void stop_server(void)
{
    atomic_store(&srv_stop, 1);
    pthread_join(srv_thread, NULL);
    close(srv_fd);
}

TestSuite(http, .init = start_server, .fini = stop_server, .timeout = 60);

static void url(char *out, size_t n, const char *path)
{
    snprintf(out, n, "http://127.0.0.1:%d%s", srv_port, path);
}

/* A GET of the scripted server's path (URL kept in u) whose 2xx body goes to dst. */
static void get_req(ck_http_req *r, char *u, size_t un, const char *path, unsigned char *dst,
                    size_t cap)
{
    ck_http_req_init(r);
    url(u, un, path);
    r->method = "GET";
    r->url = u;
    r->dst = dst;
    r->dst_cap = cap;
}

Test(http, put_body_is_read_in_place_and_arrives_whole)
{
    size_t len = (5u << 20) + 123, i;
    unsigned char *body = malloc(len);
    unsigned long long sum = 0, got_len = 0, got_sum = 0;
    char u[128];
    ck_http *h;
    ck_http_req r;

    cr_assert_not_null(body);
    for (i = 0; i < len; i++) {
        body[i] = (unsigned char)(i * 31 + 7);
        sum += body[i];
    }
    cr_assert_eq(ck_http_new(&h, NULL), S3CKPT_OK);
    ck_http_req_init(&r);
    url(u, sizeof(u), "/sum");
    r.method = "PUT";
    r.url = u;
    r.body = body;
    r.body_len = len;
    cr_assert_eq(ck_http_run(h, &r), S3CKPT_OK);
    cr_assert_eq(r.transport, 0, "%s", r.transport_msg);
    cr_assert_eq(r.status, 200);
    cr_assert_str_eq(r.etag, "\"abc\"");
    cr_assert_str_eq(r.request_id, "R1");
    cr_assert_eq(sscanf(r.resp.data, "%llu %llu", &got_len, &got_sum), 2, "%s", r.resp.data);
    cr_assert_eq(got_len, len);
    cr_assert_eq(got_sum, sum);
    ck_http_req_cleanup(&r);
    ck_http_free(h);
    free(body);
}

Test(http, ranged_body_lands_in_the_callers_buffer_with_its_content_range)
{
    unsigned char dst[10];
    char u[128];
    ck_http *h;
    ck_http_req r;

    cr_assert_eq(ck_http_new(&h, NULL), S3CKPT_OK);
    get_req(&r, u, sizeof(u), "/ten", dst, sizeof(dst));
    cr_assert_eq(ck_http_run(h, &r), S3CKPT_OK);
    cr_assert_eq(r.status, 206);
    cr_assert_eq(r.dst_len, 10);
    cr_assert_eq(memcmp(dst, "0123456789", 10), 0);
    cr_assert_str_eq(r.content_range, "bytes 0-9/100");
    cr_assert_eq(r.resp.len, 0, "a 2xx body must not also go to the response buffer");
    ck_http_req_cleanup(&r);
    ck_http_free(h);
}

Test(http, a_body_longer_than_the_buffer_is_refused_not_overrun)
{
    unsigned char dst[16];
    char u[128];
    ck_http *h;
    ck_http_req r;

    memset(dst, 0xee, sizeof(dst));
    cr_assert_eq(ck_http_new(&h, NULL), S3CKPT_OK);
    get_req(&r, u, sizeof(u), "/ten", dst, 4);
    cr_assert_eq(ck_http_run(h, &r), S3CKPT_OK);
    cr_assert(r.dst_overflow);
    cr_assert_neq(r.transport, 0);
    cr_assert_eq(dst[4], 0xee, "wrote past the capacity");
    ck_http_req_cleanup(&r);
    ck_http_free(h);
}

Test(http, an_error_body_goes_to_the_response_buffer_with_retry_after)
{
    unsigned char dst[64];
    char u[128];
    ck_http *h;
    ck_http_req r;

    cr_assert_eq(ck_http_new(&h, NULL), S3CKPT_OK);
    get_req(&r, u, sizeof(u), "/error", dst, sizeof(dst));
    cr_assert_eq(ck_http_run(h, &r), S3CKPT_OK);
    cr_assert_eq(r.status, 503);
    cr_assert_str_eq(r.retry_after, "3");
    cr_assert_eq(r.dst_len, 0);
    cr_assert_not_null(strstr(r.resp.data, "<Code>SlowDown</Code>"));
    ck_http_req_cleanup(&r);
    ck_http_free(h);
}

typedef struct cancel_arg {
    atomic_int *flag;
} cancel_arg;

static void *cancel_later(void *arg)
{
    cancel_arg *c = arg;

    usleep(300000);
    atomic_store(c->flag, 1);
    return NULL;
}

Test(http, cancel_aborts_a_stalled_transfer)
{
    static atomic_int cancel;
    ck_http_opts o = {0};
    cancel_arg ca = {&cancel};
    unsigned char dst[100];
    pthread_t t;
    char u[128];
    ck_http *h;
    ck_http_req r;

    atomic_store(&cancel, 0);
    o.cancel = &cancel;
    cr_assert_eq(ck_http_new(&h, &o), S3CKPT_OK);
    get_req(&r, u, sizeof(u), "/stall", dst, sizeof(dst));
    pthread_create(&t, NULL, cancel_later, &ca);
    cr_assert_eq(ck_http_run(h, &r), S3CKPT_ECANCELED);
    pthread_join(t, NULL);
    ck_http_req_cleanup(&r);
    ck_http_free(h);
}

Test(http, a_stalled_transfer_times_out_after_the_low_speed_time)
{
    ck_http_opts o = {0};
    unsigned char dst[100];
    char u[128];
    ck_http *h;
    ck_http_req r;

    o.low_speed_time_s = 1;
    cr_assert_eq(ck_http_new(&h, &o), S3CKPT_OK);
    get_req(&r, u, sizeof(u), "/stall", dst, sizeof(dst));
    cr_assert_eq(ck_http_run(h, &r), S3CKPT_OK);
    cr_assert(r.timed_out, "transport %d: %s", r.transport, r.transport_msg);
    ck_http_req_cleanup(&r);
    ck_http_free(h);
}

Test(http, a_refused_connection_is_reported_as_connect_failed)
{
    char u[128];
    ck_http *h;
    ck_http_req r;

    cr_assert_eq(ck_http_new(&h, NULL), S3CKPT_OK);
    ck_http_req_init(&r);
    snprintf(u, sizeof(u), "http://127.0.0.1:1/x");
    r.method = "GET";
    r.url = u;
    cr_assert_eq(ck_http_run(h, &r), S3CKPT_OK);
    cr_assert(r.connect_failed, "transport %d: %s", r.transport, r.transport_msg);
    cr_assert_eq(r.status, 0);
    ck_http_req_cleanup(&r);
    ck_http_free(h);
}

typedef struct many_arg {
    ck_http *h;
    int ok;
} many_arg;

static void *many_requests(void *arg)
{
    many_arg *m = arg;
    unsigned char dst[10];
    char u[128];
    int i;

    url(u, sizeof(u), "/ten");
    for (i = 0; i < 20; i++) {
        ck_http_req r;

        ck_http_req_init(&r);
        r.method = "GET";
        r.url = u;
        r.dst = dst;
        r.dst_cap = sizeof(dst);
        if (ck_http_run(m->h, &r) == S3CKPT_OK && r.status == 206 && r.dst_len == 10 &&
            memcmp(dst, "0123456789", 10) == 0)
            m->ok++;
        ck_http_req_cleanup(&r);
    }
    return NULL;
}

Test(http, many_threads_share_one_engine)
{
    pthread_t t[8];
    many_arg m[8];
    ck_http *h;
    int i, ok = 0;

    cr_assert_eq(ck_http_new(&h, NULL), S3CKPT_OK);
    for (i = 0; i < 8; i++) {
        m[i].h = h;
        m[i].ok = 0;
        pthread_create(&t[i], NULL, many_requests, &m[i]);
    }
    for (i = 0; i < 8; i++) {
        pthread_join(t[i], NULL);
        ok += m[i].ok;
    }
    cr_assert_eq(ok, 160);
    ck_http_free(h);
}
