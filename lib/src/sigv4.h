/* sigv4 - AWS Signature Version 4 for the Authorization header (S3 flavour: the path is signed
 * as sent, never normalized). Pure: no I/O, no clock, no global state; reentrant. The only
 * OpenSSL HMAC/SHA-256 user. */
#ifndef CK_SIGV4_H
#define CK_SIGV4_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"

/* Room that is always enough for an Authorization value when the access key is at most
 * CK_SIGV4_KEY_MAX bytes and the signed header names fit in 3 KiB. */
#define CK_SIGV4_AUTH_MAX 4096
#define CK_SIGV4_KEY_MAX 256    /* access and secret key, bytes */
#define CK_SIGV4_HEADERS_MAX 64 /* headers per request */
#define CK_SIGV4_PARAMS_MAX 256 /* query parameters per request */
#define CK_SIGV4_CREQ_MAX 65536 /* canonical request, bytes */
#define CK_SIGV4_UNSIGNED_PAYLOAD "UNSIGNED-PAYLOAD"

typedef struct ck_sigv4_header {
    const char *name;
    const char *value;
} ck_sigv4_header;

typedef struct ck_sigv4_request {
    const char *method; /* "GET", "PUT", ... */
    const char *path;   /* URI path as sent on the wire, already encoded by ck_sigv4_uri_encode
                           (S3: each segment encoded once, '/' kept, no normalization) */
    const char *query;  /* query string as sent on the wire (without '?'), "" for none */
    const ck_sigv4_header *headers;
    size_t nheaders;          /* ALL headers to sign, including host,
                                 x-amz-date, x-amz-content-sha256 and x-amz-security-token when
                                 present; names in any case; values trimmed/collapsed by sign */
    const char *payload_hash; /* lowercase hex SHA-256 of the body, or "UNSIGNED-PAYLOAD" */
    const char *amz_date;     /* "20150830T123600Z" (from ck_sigv4_amz_date) */
    const char *region;       /* "us-east-1" */
    const char *service;      /* "s3" */
} ck_sigv4_request;

/* Formats t (UTC, seconds since epoch) as the x-amz-date value "YYYYMMDDTHHMMSSZ". t outside
 * years 0000..9999 is clamped to the nearest representable second. */
void ck_sigv4_amz_date(int64_t t, char out[17]);

/* Computes the Authorization header value ("AWS4-HMAC-SHA256 Credential=AKID/20150830/us-east-1/
 * service/aws4_request, SignedHeaders=..., Signature=...") into auth (NUL-terminated).
 * When creq/sts are non-NULL the canonical request and the string to sign are appended to them
 * (for tests and debugging; neither contains the secret).
 *
 * Input rules (each violation is S3CKPT_EINVAL, auth is then ""):
 *  - method: 1..16 uppercase letters; path: starts with '/', only unreserved bytes, '/' and
 *    %XX with uppercase hex (what ck_sigv4_uri_encode produces);
 *  - query: '&'-separated k[=v]; each part is %-decoded ('+' is a literal plus) and re-encoded,
 *    a malformed %-escape is an error; empty parts are ignored; at most CK_SIGV4_PARAMS_MAX;
 *  - headers: 1..CK_SIGV4_HEADERS_MAX, names are HTTP tokens, values hold no control bytes
 *    other than tab (no CR/LF); a host header and an x-amz-date header equal to amz_date are
 *    required; an x-amz-content-sha256 header, when present, must equal payload_hash;
 *    repeated names are joined with ',' in the order given;
 *  - payload_hash: 64 lowercase hex digits or "UNSIGNED-PAYLOAD"; amz_date: YYYYMMDDTHHMMSSZ;
 *    region/service: 1..64 bytes of [A-Za-z0-9._-]; access_key: 1..CK_SIGV4_KEY_MAX printable
 *    bytes without '/', ',', ' '; secret_key: 1..CK_SIGV4_KEY_MAX bytes;
 *  - the canonical request must fit CK_SIGV4_CREQ_MAX and the result must fit auth_len.
 * S3CKPT_ENOMEM on allocation (or libcrypto) failure. Never logs, stores or returns the secret;
 * key material on the stack is cleansed before returning. */
s3ckpt_status ck_sigv4_sign(const ck_sigv4_request *req, const char *access_key,
                            const char *secret_key, char *auth, size_t auth_len, ck_buf *creq,
                            ck_buf *sts);

/* S3 URI encoding: unreserved A-Za-z0-9-._~ kept, everything else %XX (uppercase hex); '/' kept
 * when keep_slash. Appends to out (the buffer's cap and allocation errors apply). */
s3ckpt_status ck_sigv4_uri_encode(ck_buf *out, const char *s, size_t len, int keep_slash);

/* Lowercase hex SHA-256 of data into hex[65]. On a libcrypto failure (allocation) hex is "",
 * which ck_sigv4_sign rejects as a payload hash. */
void ck_sha256_hex(const void *data, size_t len, char hex[65]);

#endif
