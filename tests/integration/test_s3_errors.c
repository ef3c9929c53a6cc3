/*
 * test_s3_errors - the real s3ckpt CLI against a real S3 server (Ceph RGW from scripts/rgw) when
 * things go wrong: bad credentials, a missing bucket, an unreachable endpoint, a skewed clock,
 * another user's bucket, malformed store URLs and options, each with its documented exit code
 * and a message that names the cause and never a secret; and data objects changed, truncated or
 * deleted behind the manifest's back, which pull and verify must refuse (exit 4) without leaving
 * a tree under DEST.
 *
 * Each test makes its own bucket (curl with SigV4), so tests share nothing and run in parallel.
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "s3helpers.h"

TestSuite(s3err, .init = th_setup, .fini = th_teardown, .timeout = 180);

/* A pushed checkpoint "ck" of the mixed tree under prefix "st"; its URL into url. */
static void pushed(char *url, size_t len)
{
    make_mixed_tree(SRC, 77);
    s3_url(url, len, "st");
    S3CK_EXPECT(0, "push", SRC, url, "--name", "ck");
}

/* Runs a failing command: exit code, stderr needles (NULL-terminated), and DEST untouched. */
static void expect_fail(int code, const char *const needles[], ...) __attribute__((sentinel));
static void expect_fail(int code, const char *const needles[], ...)
{
    va_list ap;
    th_run r;
    size_t i;

    va_start(ap, needles);
    s3ck_v(&r, ap); /* also asserts that no secret shows */
    va_end(ap);
    TH_ASSERT_EXIT(r, code);
    for (i = 0; needles && needles[i]; i++)
        TH_ASSERT_STDERR_HAS(r, needles[i]);
    cr_assert(!th_exists(DEST), "%s: a failed command created %s", r.cmd, DEST);
    th_run_free(&r);
}

/* ---- credentials and reachability ---- */

Test(s3err, wrong_secret_is_an_auth_error_that_shows_no_secret)
{
    static const char *const sig[] = {"SignatureDoesNotMatch", NULL};
    char url[PATH_MAX];

    s3_begin("wrong-secret");
    pushed(url, sizeof(url));
    setenv("AWS_SECRET_ACCESS_KEY", S3IT_WRONG_SECRET, 1);
    /* -vv: the most output there is; none of it may hold either secret */
    expect_fail(6, sig, "push", SRC, url, "--name", "ck2", "-vv", NULL);
    expect_fail(6, sig, "ls", url, "-vv", NULL);
    expect_fail(6, sig, "pull", url, DEST, "-vv", NULL);
    expect_fail(6, sig, "verify", url, "--deep", "-vv", NULL);
    cr_assert(!key_exists("st/ck2/manifest.json"), "a push with a wrong secret wrote");
}

Test(s3err, unknown_access_key_is_an_auth_error)
{
    static const char *const key[] = {"InvalidAccessKeyId", NULL};
    char url[PATH_MAX];

    s3_begin("unknown-key");
    pushed(url, sizeof(url));
    setenv("AWS_ACCESS_KEY_ID", "S3CKPTNOSUCHKEY0000", 1);
    expect_fail(6, key, "ls", url, NULL);
    expect_fail(6, key, "pull", url, DEST, NULL);
    expect_fail(6, key, "push", SRC, url, "--name", "ck2", NULL);
}

Test(s3err, missing_credentials_are_an_auth_error)
{
    static const char *const none[] = {"credentials", NULL};
    char url[PATH_MAX];

    s3_begin("no-creds");
    pushed(url, sizeof(url));
    unsetenv("AWS_ACCESS_KEY_ID");
    unsetenv("AWS_SECRET_ACCESS_KEY");
    expect_fail(6, none, "ls", url, NULL);
    expect_fail(6, none, "push", SRC, url, "--name", "ck2", NULL);
}

Test(s3err, missing_bucket_is_not_found)
{
    static const char *const nsb[] = {"NoSuchBucket", NULL};
    char url[PATH_MAX];

    s3_begin("no-bucket");
    make_mixed_tree(SRC, 3);
    TH_PATH(url, "s3://%.50s-none/x", BUCKET);
    expect_fail(3, nsb, "ls", url, NULL);
    expect_fail(3, nsb, "pull", url, DEST, NULL);
    expect_fail(3, nsb, "push", SRC, url, "--name", "ck", NULL);
    expect_fail(3, nsb, "cleanup", url, "--older-than", "0", NULL);
}

Test(s3err, unreachable_endpoint_is_a_network_error)
{
    static const char *const unreach[] = {"cannot reach", "127.0.0.1:1", NULL};
    char url[PATH_MAX];

    s3_begin("unreachable");
    make_mixed_tree(SRC, 4);
    s3_url(url, sizeof(url), "x");
    expect_fail(7, unreach, "ls", url, "--endpoint", "http://127.0.0.1:1", NULL);
    expect_fail(7, unreach, "pull", url, DEST, "--endpoint", "http://127.0.0.1:1", NULL);
    expect_fail(7, unreach, "push", SRC, url, "--name", "ck", "--endpoint", "http://127.0.0.1:1",
                NULL);
    /* the same through AWS_ENDPOINT_URL */
    setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:1", 1);
    expect_fail(7, unreach, "ls", url, NULL);
}

Test(s3err, skewed_clock_is_an_auth_error_that_names_the_clock)
{
    static const char *const skew[] = {"RequestTimeTooSkewed", "clock", NULL};
    char url[PATH_MAX];

    s3_begin("skew");
    pushed(url, sizeof(url));
    setenv("S3CKPT_CLOCK_OFFSET_S", "3600", 1);
    expect_fail(6, skew, "ls", url, NULL);
    expect_fail(6, skew, "pull", url, DEST, NULL);
    expect_fail(6, skew, "push", SRC, url, "--name", "ck2", NULL);
}

Test(s3err, user_without_access_to_the_bucket_is_denied)
{
    static const char *const denied[] = {"AccessDenied", NULL};
    char url[PATH_MAX], *xml;

    s3_begin("other-user");
    pushed(url, sizeof(url));
    setenv("AWS_ACCESS_KEY_ID", OAK, 1);
    setenv("AWS_SECRET_ACCESS_KEY", OSK, 1);
    expect_fail(6, denied, "ls", url, NULL);
    expect_fail(6, denied, "show", url, NULL);
    expect_fail(6, denied, "pull", url, DEST, NULL);
    expect_fail(6, denied, "push", SRC, url, "--name", "intruder", NULL);
    expect_fail(6, denied, "rm", url, "--name", "ck", "--force", NULL);
    xml = list_keys();
    cr_assert(!strstr(xml, "intruder"), "the other user wrote:\n%s", xml);
    cr_assert(strstr(xml, "<Key>st/ck/manifest.json</Key>"), "the other user deleted:\n%s", xml);
    free(xml);
}

/* ---- names ---- */

Test(s3err, missing_checkpoint_is_not_found)
{
    char url[PATH_MAX], empty[PATH_MAX];

    s3_begin("missing-name");
    pushed(url, sizeof(url));
    expect_fail(3, NULL, "pull", url, DEST, "--name", "nope", NULL);
    expect_fail(3, NULL, "show", url, "--name", "nope", NULL);
    expect_fail(3, NULL, "verify", url, "--name", "nope", NULL);
    expect_fail(3, NULL, "rm", url, "--name", "nope", NULL);
    /* a prefix holding nothing has no latest */
    s3_url(empty, sizeof(empty), "nothing-here");
    expect_fail(3, NULL, "pull", empty, DEST, NULL);
    expect_fail(3, NULL, "show", empty, NULL);
}

/* ---- usage and configuration ---- */

Test(s3err, bad_store_urls_are_usage_errors)
{
    char long_bucket[80], dslash[PATH_MAX], dslash2[PATH_MAX], ctl[PATH_MAX];
    const char *urls[8];
    size_t i;

    s3_begin("bad-urls");
    make_mixed_tree(SRC, 5);
    memset(long_bucket, 0, sizeof(long_bucket));
    memcpy(long_bucket, "s3://", 5);
    memset(long_bucket + 5, 'a', 64);
    TH_PATH(dslash, "s3://%s//x", BUCKET);
    TH_PATH(dslash2, "s3://%s/x//y", BUCKET);
    TH_PATH(ctl, "s3://%s/a\tb", BUCKET);
    urls[0] = "s3://";
    urls[1] = "s3://ab";
    urls[2] = "s3://b//x";
    urls[3] = long_bucket;
    urls[4] = dslash;
    urls[5] = dslash2;
    urls[6] = ctl;
    urls[7] = "s3:/x";
    for (i = 0; i < sizeof(urls) / sizeof(urls[0]); i++) {
        expect_fail(2, NULL, "ls", urls[i], NULL);
        expect_fail(2, NULL, "push", SRC, urls[i], "--name", "ck", NULL);
        expect_fail(2, NULL, "pull", urls[i], DEST, NULL);
    }
    cr_assert(!key_exists("x//y/ck/manifest.json") && !key_exists("/x/ck/manifest.json"),
              "a refused URL was written to");
}

Test(s3err, bad_s3_option_values_are_usage_errors)
{
    static const char *const opts[][2] = {{"--part-size", "4M"},
                                          {"--part-size", "5G"},
                                          {"--addressing", "bogus"},
                                          {"--wire-checksum", "sha1"},
                                          {"--concurrency", "0"},
                                          {"--concurrency", "257"},
                                          {"--timeout", "0"},
                                          {"--profile", "nosuchprofile"},
                                          {"--endpoint", "ftp://127.0.0.1:21"},
                                          {"--endpoint", "not a url"},
                                          {"--region", "bad/region"}};
    char url[PATH_MAX];
    size_t i;

    s3_begin("bad-opts");
    pushed(url, sizeof(url));
    for (i = 0; i < sizeof(opts) / sizeof(opts[0]); i++) {
        expect_fail(2, NULL, "ls", url, opts[i][0], opts[i][1], NULL);
        expect_fail(2, NULL, "push", SRC, url, "--name", "ck2", opts[i][0], opts[i][1], NULL);
    }
    setenv("AWS_PROFILE", "nosuchprofile", 1);
    expect_fail(2, NULL, "ls", url, NULL);
    cr_assert(!key_exists("st/ck2/manifest.json"), "a refused push wrote");
}

Test(s3err, a_memory_bound_too_small_for_chunks_and_parts_is_refused_up_front)
{
    static const char *const why[] = {"raise --max-memory", NULL};
    char url[PATH_MAX];

    s3_begin("mem");
    pushed(url, sizeof(url));
    /* two 4 MiB chunk slots (8 MiB + zstd bound each) and two 64 MiB parts cannot fit 48 MiB */
    expect_fail(2, why, "push", SRC, url, "--name", "ck3", "--max-memory", "48M", "--part-size",
                "64M", NULL);
    cr_assert(!key_exists("st/ck3/manifest.json"), "a refused push wrote");
}

/* ---- integrity: objects changed behind the manifest's back ---- */

#define MODEL_KEY "st/ck/data/model.bin"

Test(s3err, overwritten_data_object_fails_pull_and_verify)
{
    static const char *const changed[] = {"ck/data/model.bin", "ETag", NULL};
    char url[PATH_MAX], obj[PATH_MAX];

    s3_begin("overwritten");
    pushed(url, sizeof(url));
    TH_PATH(obj, "%s/object", th_root);
    get_object(MODEL_KEY, obj);
    TH_ASSERT_OK(th_flip_byte(obj, 1000)); /* same size, different bytes */
    put_object(MODEL_KEY, obj);
    expect_fail(4, changed, "pull", url, DEST, NULL);
    expect_fail(4, changed, "verify", url, NULL);
    expect_fail(4, changed, "verify", url, "--deep", NULL);
    /* a re-run fails the same way: nothing of it became DEST meanwhile */
    expect_fail(4, changed, "pull", url, DEST, NULL);
}

/* With the manifest's ETag cleared (a store that reports none), the chunk digests still catch a
 * changed object. */
Test(s3err, overwritten_data_object_without_an_etag_fails_the_digest_check)
{
    char url[PATH_MAX], obj[PATH_MAX], man[PATH_MAX], from[256], *text, *k, *e, *end;

    s3_begin("no-etag");
    pushed(url, sizeof(url));
    TH_PATH(man, "%s/manifest.json", th_root);
    get_object("st/ck/manifest.json", man);
    text = th_read_file(man, NULL);
    cr_assert_not_null(text, "%s", th_error());
    k = strstr(text, "\"key\":\"data/model.bin\"");
    cr_assert_not_null(k, "no data/model.bin entry in the manifest:\n%s", text);
    e = strstr(k, "\"etag\":\"");
    cr_assert_not_null(e, "no etag in the manifest entry:\n%s", k);
    for (end = e + 8; *end && *end != '"'; end++) /* the closing quote of the JSON string */
        if (*end == '\\' && end[1])
            end++;
    cr_assert(*end && end - e < (long)sizeof(from) && end > e + 8, "empty or odd etag: %s", e);
    memcpy(from, e, (size_t)(end - e + 1));
    from[end - e + 1] = '\0';
    free(text);
    cr_assert_eq(th_file_replace(man, from, "\"etag\":\"\""), 1, "%s", th_error());
    put_object("st/ck/manifest.json", man);
    S3CK_EXPECT(0, "verify", url, "--deep"); /* the edited manifest itself is valid */

    TH_PATH(obj, "%s/object", th_root);
    get_object(MODEL_KEY, obj);
    TH_ASSERT_OK(th_flip_byte(obj, 1000));
    put_object(MODEL_KEY, obj);
    expect_fail(4, NULL, "pull", url, DEST, NULL);
    expect_fail(4, NULL, "verify", url, "--deep", NULL);
}

Test(s3err, truncated_data_object_is_an_integrity_error)
{
    static const char *const named[] = {"ck/data/model.bin", NULL};
    char url[PATH_MAX], obj[PATH_MAX];

    s3_begin("truncated");
    pushed(url, sizeof(url));
    TH_PATH(obj, "%s/object", th_root);
    get_object(MODEL_KEY, obj);
    cr_assert_eq(truncate(obj, 1000), 0);
    put_object(MODEL_KEY, obj);
    expect_fail(4, named, "pull", url, DEST, NULL);
    expect_fail(4, named, "verify", url, NULL);
}

/* The file store reports a deleted data object as an integrity failure (exit 4, "missing"; see
 * test_badinput): a committed checkpoint that lacks one of its objects is damaged, not absent.
 * S3 must say the same. */
Test(s3err, deleted_data_object_is_an_integrity_error)
{
    static const char *const named[] = {"ck/data/model.bin", NULL};
    static const char *const missing[] = {"ck/data/model.bin", "missing", NULL};
    char url[PATH_MAX];

    s3_begin("deleted");
    pushed(url, sizeof(url));
    free(s3_curl_ok("DELETE", MODEL_KEY, NULL, NULL));
    cr_assert(!key_exists(MODEL_KEY), "the object is still there");
    expect_fail(4, missing, "verify", url, NULL);
    expect_fail(4, named, "pull", url, DEST, NULL);
}
