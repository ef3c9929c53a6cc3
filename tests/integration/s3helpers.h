/*
 * s3helpers - shared by the S3 integration tests: see s3helpers.c. Every test calls s3_begin()
 * first (it skips the test when no RGW is configured).
 */
#ifndef S3CKPT_IT_S3HELPERS_H
#define S3CKPT_IT_S3HELPERS_H

#include <stdarg.h>
#include <stdint.h>

#include "helpers.h"

#define S3IT_SKIP_MSG                                                                              \
    "S3 tests need RGW: run scripts/test, or scripts/rgw start DIR and source DIR/env"
#define S3IT_CURL_BIN "/usr/bin/curl"
#define S3IT_MAX_ARGS 64
/* A wrong secret the tests use; no output may show it either. */
#define S3IT_WRONG_SECRET "wrong-S3CKPT-secret-7f3a9c1e55d2"

/* From S3CKPT_TEST_* (set by s3_begin): endpoint, virtual-host endpoint, the test user's and
 * the other user's keys, region; this test's bucket and its source and destination dirs. */
extern char EP[256], VEP[256], AK[128], SK[128], OAK[128], OSK[128], REGION[64], BUCKET[64];
extern char SRC[PATH_MAX], DEST[PATH_MAX];

/* Skips without RGW, isolates from the machine's AWS setup, points AWS_* at the test user and
 * makes a fresh bucket s3it-<tag>-<pid>-<time>. */
void s3_begin(const char *tag);
/* curl signed as the test user on ENDPOINT/BUCKET/path_query; the NULL-terminated tail goes
 * before the URL. */
void s3_curl(th_run *r, const char *method, const char *path_query, ...) __attribute__((sentinel));
/* The same, which must succeed; returns its stdout (malloc'ed). */
char *s3_curl_ok(const char *method, const char *path_query, const char *a1, const char *a2);
char *list_keys(void);    /* ListObjectsV2 of the bucket (first 1000 keys) */
char *list_uploads(void); /* ListMultipartUploads of the bucket */
int key_exists(const char *key);
void get_object(const char *key, const char *out_path);
void put_object(const char *key, const char *path);
int count_str(const char *hay, const char *needle);
void s3_url(char *out, size_t len, const char *prefix);
/* Runs s3ckpt with the arguments (NULL-terminated); no output may ever hold a secret key. */
void s3ck(th_run *r, ...) __attribute__((sentinel));
void s3ck_v(th_run *r, va_list ap);
uint64_t json_u64(const char *obj, const char *key);
/* Files of every kind a checkpoint has, with distinct modes. */
void make_mixed_tree(const char *dir, uint64_t seed);

#define S3CK_EXPECT(code, ...)                                                                     \
    do {                                                                                           \
        th_run s3r_;                                                                               \
        s3ck(&s3r_, __VA_ARGS__, NULL);                                                            \
        TH_ASSERT_EXIT(s3r_, (code));                                                              \
        th_run_free(&s3r_);                                                                        \
    } while (0)

#endif
