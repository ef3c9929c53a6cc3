/*
 * http - the transfer engine: one thread drives a libcurl multi handle with many requests in
 * flight over reused connections. Callers on any thread hand it a request and block until it
 * finishes; request bodies are read straight from the caller's buffer and ranged responses are
 * written straight into the caller's buffer, so no byte of a part or frame is copied twice.
 */
#ifndef CK_HTTP_H
#define CK_HTTP_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "buf.h"

typedef struct ck_http ck_http;

typedef struct ck_http_opts {
    unsigned max_connections; /* connections kept open (and requests at once); 0: 16 */
    long connect_timeout_ms;  /* 0: 10 s */
    long low_speed_time_s;    /* abort a transfer moving < 1 byte/s for this long; 0: 60 s */
    const char *ca_bundle;    /* NULL: the system's */
    const atomic_int *cancel; /* non-zero aborts every transfer at once (optional) */
} ck_http_opts;

#define CK_HTTP_HDR_MAX 128

typedef struct ck_http_req {
    /* in */
    const char *method;
    const char *url;
    const char *const *headers; /* "Name: value" lines */
    size_t nheaders;
    const void *body; /* request body, read in place; NULL: none */
    uint64_t body_len;
    unsigned char *dst; /* 2xx response body goes here (at most dst_cap bytes) ... */
    size_t dst_cap;
    size_t resp_max; /* ... else (and for error bodies) into resp, capped at resp_max */
    int head;        /* HEAD: no body expected */
    /* out */
    long status;        /* HTTP status; 0 when no response arrived */
    int transport;      /* 0: a response arrived; else a libcurl error code */
    int timed_out;      /* transport failure was a timeout */
    int connect_failed; /* the connection could not be made */
    int tls_failed;     /* TLS handshake or certificate verification failed */
    char transport_msg[256];
    ck_buf resp;
    size_t dst_len;
    int dst_overflow; /* the body was longer than dst_cap */
    uint64_t content_length;
    int has_content_length;
    char etag[CK_HTTP_HDR_MAX];
    char request_id[CK_HTTP_HDR_MAX];
    char retry_after[32];
    char date[64];
    char content_range[CK_HTTP_HDR_MAX];
    /* engine */
    int done;
    pthread_cond_t *wake; /* the waiting caller's, signalled when done is set */
    void *easy;
    struct ck_http_req *next;
} ck_http_req;

s3ckpt_status ck_http_global_init(void);
s3ckpt_status ck_http_new(ck_http **out, const ck_http_opts *opts);
void ck_http_free(ck_http *h);
/* Runs r to completion (blocking). Returns OK when a response arrived (whatever its status),
 * ECANCELED, ENOMEM; transport failures are OK too, with r->transport set. The caller
 * initialises r with ck_http_req_init and releases it with ck_http_req_cleanup. */
s3ckpt_status ck_http_run(ck_http *h, ck_http_req *r);
void ck_http_req_init(ck_http_req *r);
/* Requests started from now on ignore the cancel flag. */
void ck_http_ignore_cancel(ck_http *h);
void ck_http_req_cleanup(ck_http_req *r);

#endif
