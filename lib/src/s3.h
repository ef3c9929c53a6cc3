/*
 * s3 - S3 operations = http + sigv4 + s3xml: signing, retries with backoff, error mapping and
 * adaptive concurrency for one bucket on one endpoint. Thread-safe: many threads run requests
 * at once through the one transfer engine.
 */
#ifndef CK_S3_H
#define CK_S3_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "err.h"
#include "s3xml.h"

typedef struct ck_s3 ck_s3;

typedef enum ck_s3_checksum {
    CK_S3_SUM_AUTO = 0, /* probed: crc32c where the endpoint verifies it, else the cheaper here of
                           sha256 (where verified) and md5 */
    CK_S3_SUM_CRC32C = 1,
    CK_S3_SUM_MD5 = 2,
    CK_S3_SUM_OFF = 3,
    CK_S3_SUM_SHA256 = 4 /* the SigV4 payload hash, signed (x-amz-content-sha256) */
} ck_s3_checksum;

typedef enum ck_s3_addressing {
    CK_S3_ADDR_AUTO = 0, /* virtual-host on AWS, path-style on custom endpoints */
    CK_S3_ADDR_PATH = 1,
    CK_S3_ADDR_VIRTUAL = 2
} ck_s3_addressing;

typedef struct ck_s3_config {
    const char *bucket;
    const char *endpoint; /* "" or NULL: AWS (https://s3.<region>.amazonaws.com) */
    const char *region;
    const char *access_key; /* NULL or "": anonymous (unsigned requests) */
    const char *secret_key;
    const char *session_token;
    const char *ca_bundle;
    ck_s3_addressing addressing;
    unsigned concurrency;     /* requests in flight at most; 0: 8 */
    long low_speed_time_s;    /* 0: 60 */
    unsigned max_attempts;    /* per request; 0: 8 */
    int64_t clock_offset_s;   /* added to the local clock when signing (tests) */
    const atomic_int *cancel; /* optional */
    void (*log)(void *ud, int level, const char *line);
    void *log_ud;
} ck_s3_config;

typedef struct ck_s3_counters {
    uint64_t requests, retries, throttled;
} ck_s3_counters;

s3ckpt_status ck_s3_new(ck_s3 **out, const ck_s3_config *cfg, ck_err *err);
void ck_s3_free(ck_s3 *s);
void ck_s3_counters_get(ck_s3 *s, ck_s3_counters *out);
unsigned ck_s3_concurrency(const ck_s3 *s);
/* From now on requests run to completion whatever the cancel flag says (cleanup after a
 * canceled operation, e.g. deleting the name lock). */
void ck_s3_ignore_cancel(ck_s3 *s);
/* "s3://bucket/key" style label for messages. */
const char *ck_s3_bucket(const ck_s3 *s);

/* Result of one request: what the store said. */
#define CK_S3_SUM_MAX 32 /* base64 of a checksum, NUL-terminated */

typedef struct ck_s3_result {
    long status;
    char crc32c[16]; /* UploadPart: the base64 CRC32C sent, "" when none */
    char etag[CK_S3_ETAG_MAX];
    uint64_t size; /* Content-Length of a HEAD, or object size from Content-Range */
    ck_s3_error err;
} ck_s3_result;

/* Flags saying which answers are expected and must not be recorded as the client's error. */
#define CK_S3_QUIET_404 1 /* ENOTFOUND returned, not recorded */
#define CK_S3_QUIET_412 2 /* EEXISTS returned, not recorded */

/* Whole object (at most max bytes, EPROTOCOL beyond) into out. */
s3ckpt_status ck_s3_get_object(ck_s3 *s, const char *key, size_t max, ck_buf *out,
                               ck_s3_result *res, int quiet);
/* Exactly n bytes at off into dst; if_match pins the version (412 -> ECORRUPT: the object
 * changed). */
s3ckpt_status ck_s3_get_range(ck_s3 *s, const char *key, const char *if_match, uint64_t off,
                              void *dst, size_t n, ck_s3_result *res);
s3ckpt_status ck_s3_head_object(ck_s3 *s, const char *key, ck_s3_result *res, int quiet);
/* PutObject with a wire checksum; if_none_match "*" or if_match an ETag, else NULL. */
s3ckpt_status ck_s3_put_object(ck_s3 *s, const char *key, const void *body, size_t len,
                               ck_s3_checksum sum, const char *if_none_match, const char *if_match,
                               ck_s3_result *res, int quiet);
s3ckpt_status ck_s3_delete_object(ck_s3 *s, const char *key);
/* DeleteObjects: up to 1000 keys in one request; a key the store could not delete fails the
 * call naming it (missing keys are not failures). */
s3ckpt_status ck_s3_delete_objects(ck_s3 *s, const char *const *keys, size_t n);
/* sum CRC32C announces x-amz-checksum-algorithm: its parts must then carry CRC32C. */
s3ckpt_status ck_s3_create_upload(ck_s3 *s, const char *key, ck_s3_checksum sum,
                                  char upload_id[CK_S3_UPLOADID_MAX]);
/* md5_hex (optional out, 33 bytes) receives the MD5 of the body when it was computed. */
s3ckpt_status ck_s3_upload_part(ck_s3 *s, const char *key, const char *upload_id, unsigned part,
                                const void *body, size_t len, ck_s3_checksum sum,
                                ck_s3_result *res);
s3ckpt_status ck_s3_complete_upload(ck_s3 *s, const char *key, const char *upload_id,
                                    const ck_s3_part *parts, size_t n, ck_s3_result *res);
s3ckpt_status ck_s3_abort_upload(ck_s3 *s, const char *key, const char *upload_id);
/* Every key under prefix (paginated); delimited: only one level (prefixes end in '/'). */
s3ckpt_status ck_s3_list_objects(ck_s3 *s, const char *prefix, int delimited, ck_s3xml_obj_fn *fn,
                                 void *ud);
s3ckpt_status ck_s3_list_uploads(ck_s3 *s, const char *prefix, ck_s3xml_upload_fn *fn, void *ud);
s3ckpt_status ck_s3_list_parts(ck_s3 *s, const char *key, const char *upload_id,
                               ck_s3xml_part_fn *fn, void *ud);
/* Which checksums the endpoint verifies (verified_out: bit 1 << ck_s3_checksum; Content-MD5 is
 * taken as verified), the one `auto` uses (sum_out), and whether it honours conditional
 * writes: probed once with a scratch object under probe_key, then remembered. */
s3ckpt_status ck_s3_probe(ck_s3 *s, const char *probe_key, ck_s3_checksum *sum_out,
                          unsigned *verified_out, int *conditional_out);

#endif
