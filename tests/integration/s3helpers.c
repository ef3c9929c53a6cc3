/*
 * s3helpers - shared by the S3 integration tests (test_s3*.c): per-test buckets made with curl
 * (SigV4) on the RGW that scripts/rgw started, an environment isolated from the machine's AWS
 * configuration, running the CLI with a check that no output ever holds a secret, and a mixed
 * checkpoint tree.
 */
#include "s3helpers.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

char EP[256], VEP[256], AK[128], SK[128], OAK[128], OSK[128], REGION[64], BUCKET[64];
char SRC[PATH_MAX], DEST[PATH_MAX];

static void env_copy(char *out, size_t len, const char *name)
{
    const char *v = getenv(name);

    cr_assert(v && *v, "%s is not set (scripts/rgw's env file sets it)", name);
    cr_assert(strlen(v) < len, "%s is too long", name);
    snprintf(out, len, "%s", v);
}

/* s3it-<tag>-<pid>-<time>: lowercase letters, digits and '-', 3..63 characters. The time
 * keeps a reused pid from meeting an old run's bucket on a long-lived RGW (creating a bucket
 * one already owns succeeds there). */
static void bucket_name(const char *tag)
{
    char *p;
    size_t n;

    snprintf(BUCKET, sizeof(BUCKET), "s3it-%.36s-%ld-%lx", tag, (long)getpid(),
             (unsigned long)time(NULL) & 0xffffffful);
    for (p = BUCKET; *p; p++)
        *p = isalnum((unsigned char)*p) ? (char)tolower((unsigned char)*p) : '-';
    n = strlen(BUCKET);
    while (n > 3 && BUCKET[n - 1] == '-')
        BUCKET[--n] = '\0';
}

/* Runs curl signed as the test user; argv tail (NULL-terminated) goes before the URL. The URL
 * is ENDPOINT/BUCKET/path_query (path_query "" for the bucket itself). */
void s3_curl(th_run *r, const char *method, const char *path_query, ...)
{
    char sigv4[128], user[300], url[PATH_MAX];
    char *argv[S3IT_MAX_ARGS];
    const char *a;
    va_list ap;
    int n = 0;

    snprintf(sigv4, sizeof(sigv4), "aws:amz:%s:s3", REGION);
    snprintf(user, sizeof(user), "%s:%s", AK, SK);
    TH_PATH(url, "%s/%s%s%s", EP, BUCKET, *path_query ? "/" : "", path_query);
    argv[n++] = (char *)S3IT_CURL_BIN;
    argv[n++] = (char *)"-sS";
    argv[n++] = (char *)"-f";
    argv[n++] = (char *)"--aws-sigv4";
    argv[n++] = sigv4;
    argv[n++] = (char *)"--user";
    argv[n++] = user;
    argv[n++] = (char *)"-H";
    argv[n++] = (char *)"x-amz-content-sha256: UNSIGNED-PAYLOAD";
    argv[n++] = (char *)"-X";
    argv[n++] = (char *)method;
    va_start(ap, path_query);
    while ((a = va_arg(ap, const char *)) && n < S3IT_MAX_ARGS - 2)
        argv[n++] = (char *)a;
    va_end(ap);
    argv[n++] = url;
    argv[n] = NULL;
    TH_ASSERT_OK(th_run_argv(r, argv, NULL));
}

/* curl must succeed (HTTP 2xx); its stdout is returned (malloc'ed). */
char *s3_curl_ok(const char *method, const char *path_query, const char *a1, const char *a2)
{
    th_run r;
    char *out;

    s3_curl(&r, method, path_query, a1, a2, NULL);
    TH_ASSERT_EXIT(r, 0);
    out = r.out;
    r.out = NULL;
    th_run_free(&r);
    return out;
}

int count_str(const char *hay, const char *needle)
{
    int n = 0;
    size_t len = strlen(needle);

    while ((hay = strstr(hay, needle))) {
        n++;
        hay += len;
    }
    return n;
}

/* ListObjectsV2 of the whole bucket (the tests stay under 1000 keys). */
char *list_keys(void)
{
    return s3_curl_ok("GET", "?list-type=2", NULL, NULL);
}

/* ListMultipartUploads of the whole bucket. */
char *list_uploads(void)
{
    return s3_curl_ok("GET", "?uploads=", NULL, NULL);
}

int key_exists(const char *key)
{
    char want[PATH_MAX], *xml = list_keys();
    int hit;

    TH_PATH(want, "<Key>%s</Key>", key);
    hit = strstr(xml, want) != NULL;
    free(xml);
    return hit;
}

void get_object(const char *key, const char *out_path)
{
    free(s3_curl_ok("GET", key, "-o", out_path));
}

void s3_url(char *out, size_t len, const char *prefix)
{
    if (prefix && *prefix)
        th_path(out, len, "s3://%s/%s", BUCKET, prefix);
    else
        th_path(out, len, "s3://%s", BUCKET);
}

/* Every test starts here: skip without RGW, isolate from the machine's AWS configuration, point
 * the AWS_* variables at the test user (children inherit them; each test is its own process),
 * and create a fresh bucket. */
void s3_begin(const char *tag)
{
    static const char *const unset[] = {"AWS_ENDPOINT_URL_S3",
                                        "AWS_CA_BUNDLE",
                                        "AWS_PROFILE",
                                        "AWS_DEFAULT_PROFILE",
                                        "AWS_SESSION_TOKEN",
                                        "AWS_DEFAULT_REGION",
                                        "AWS_SECURITY_TOKEN",
                                        "S3CKPT_CLOCK_OFFSET_S",
                                        "AWS_IGNORE_CONFIGURED_ENDPOINT_URLS",
                                        "AWS_WEB_IDENTITY_TOKEN_FILE",
                                        "AWS_ROLE_ARN",
                                        "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
                                        "AWS_CONTAINER_CREDENTIALS_FULL_URI",
                                        "http_proxy",
                                        "HTTP_PROXY",
                                        "https_proxy",
                                        "HTTPS_PROXY",
                                        "all_proxy",
                                        "ALL_PROXY"};
    const char *ep = getenv("S3CKPT_TEST_ENDPOINT");
    char empty[PATH_MAX];
    size_t i;

    if (!ep || !*ep)
        cr_skip_test(S3IT_SKIP_MSG);
    env_copy(EP, sizeof(EP), "S3CKPT_TEST_ENDPOINT");
    env_copy(VEP, sizeof(VEP), "S3CKPT_TEST_VHOST_ENDPOINT");
    env_copy(AK, sizeof(AK), "S3CKPT_TEST_ACCESS_KEY");
    env_copy(SK, sizeof(SK), "S3CKPT_TEST_SECRET_KEY");
    env_copy(OAK, sizeof(OAK), "S3CKPT_TEST_OTHER_ACCESS_KEY");
    env_copy(OSK, sizeof(OSK), "S3CKPT_TEST_OTHER_SECRET_KEY");
    env_copy(REGION, sizeof(REGION), "S3CKPT_TEST_REGION");
    for (i = 0; i < sizeof(unset) / sizeof(unset[0]); i++)
        unsetenv(unset[i]);
    TH_PATH(empty, "%s/aws-empty", th_root);
    TH_ASSERT_OK(th_write_text(empty, ""));
    setenv("AWS_CONFIG_FILE", empty, 1);
    setenv("AWS_SHARED_CREDENTIALS_FILE", empty, 1);
    setenv("AWS_ACCESS_KEY_ID", AK, 1);
    setenv("AWS_SECRET_ACCESS_KEY", SK, 1);
    setenv("AWS_ENDPOINT_URL", EP, 1);
    setenv("AWS_REGION", REGION, 1);
    TH_PATH(SRC, "%s/src", th_root);
    TH_PATH(DEST, "%s/dest", th_root);
    TH_ASSERT_OK(th_mkdirs(SRC, 0755));
    bucket_name(tag);
    free(s3_curl_ok("PUT", "", NULL, NULL));
}

void s3ck_v(th_run *r, va_list ap)
{
    char *argv[S3IT_MAX_ARGS + 2];
    const char *a;
    int n = 0;

    argv[n++] = (char *)S3CKPT_BIN;
    while ((a = va_arg(ap, const char *))) {
        cr_assert(n < S3IT_MAX_ARGS, "too many arguments");
        argv[n++] = (char *)a;
    }
    argv[n] = NULL;
    TH_ASSERT_OK(th_run_argv(r, argv, NULL));
    cr_assert(!strstr(r->out, SK) && !strstr(r->err, SK) && !strstr(r->out, OSK) &&
                  !strstr(r->err, OSK) && !strstr(r->out, S3IT_WRONG_SECRET) &&
                  !strstr(r->err, S3IT_WRONG_SECRET),
              "%s: a secret key appears in the output:\n%s\n%s", r->cmd, r->out, r->err);
}

void s3ck(th_run *r, ...)
{
    va_list ap;

    va_start(ap, r);
    s3ck_v(r, ap);
    va_end(ap);
}

uint64_t json_u64(const char *obj, const char *key)
{
    uint64_t v = 0;

    cr_assert_eq(th_json_u64(obj, key, &v), 0, "%s", th_error());
    return v;
}

/* Files of every kind a checkpoint has, with distinct modes: random and float data, nested
 * directories, an empty file and an empty directory. */
void make_mixed_tree(const char *dir, uint64_t seed)
{
    char p[PATH_MAX];

    TH_PATH(p, "%s/optim/nested/deep", dir);
    TH_ASSERT_OK(th_mkdirs(p, 0755));
    TH_PATH(p, "%s/emptydir", dir);
    TH_ASSERT_OK(th_mkdirs(p, 0755));
    cr_assert_eq(chmod(p, 0700), 0);
    TH_PATH(p, "%s/model.bin", dir);
    TH_ASSERT_OK(th_write_random(p, (3u << 20) + 17, seed));
    TH_PATH(p, "%s/optim/state.f32", dir);
    TH_ASSERT_OK(th_write_floats(p, (2u << 20) + 6, seed + 1));
    TH_PATH(p, "%s/optim/nested/deep/tiny.bin", dir);
    TH_ASSERT_OK(th_write_random(p, 70001, seed + 2));
    TH_PATH(p, "%s/empty.bin", dir);
    TH_ASSERT_OK(th_write_text(p, ""));
    TH_PATH(p, "%s/private.json", dir);
    TH_ASSERT_OK(th_write_text(p, "{\"epoch\": 3}\n"));
    cr_assert_eq(chmod(p, 0600), 0);
    TH_PATH(p, "%s/run.sh", dir);
    TH_ASSERT_OK(th_write_text(p, "#!/bin/sh\nexit 0\n"));
    cr_assert_eq(chmod(p, 0755), 0);
    TH_PATH(p, "%s/optim", dir);
    cr_assert_eq(chmod(p, 0750), 0);
}

void put_object(const char *key, const char *path)
{
    char data[PATH_MAX + 2];

    TH_PATH(data, "@%s", path);
    free(s3_curl_ok("PUT", key, "--data-binary", data));
}
