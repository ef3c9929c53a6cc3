/*
 * test_store_url - store URLs (ck_store_file_path, ck_store_open) and the file store backend:
 * conditional puts, listing, removal of emptied prefixes, readers and writers. Each store test
 * runs on a fresh mkdtemp directory that is removed afterwards.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store.h"

/* ---- ck_store_file_path ---- */

static void path_ok(const char *url, const char *want)
{
    char out[256];

    memset(out, 0, sizeof(out));
    cr_assert_eq(ck_store_file_path(url, out, sizeof(out)), 0, "%s rejected", url);
    cr_assert_str_eq(out, want, "%s", url);
}

static void path_bad(const char *url)
{
    char out[256];

    cr_assert_eq(ck_store_file_path(url, out, sizeof(out)), -1, "%s accepted", url);
}

Test(store_url, file_url_gives_absolute_path)
{
    path_ok("file:///a/b", "/a/b");
    path_ok("file:///", "/");
    path_ok("file:///srv/ckpt/", "/srv/ckpt/");
}

Test(store_url, percent_decodes)
{
    path_ok("file:///a%20b/c", "/a b/c");
    path_ok("file:///x%2fy%2Fz", "/x/y/z");
    path_ok("file:///%C3%BC", "/\xc3\xbc");
}

Test(store_url, accepts_localhost_host)
{
    path_ok("file://localhost/x", "/x");
    path_ok("file://localhost/", "/");
}

Test(store_url, rejects_relative_or_other_host)
{
    path_bad("file://x");
    path_bad("file://x/y");
    path_bad("file://localhost");
    path_bad("file://");
    path_bad("file:relative");
}

Test(store_url, rejects_percent_encoded_nul)
{
    path_bad("file:///a%00b");
}

Test(store_url, rejects_bad_percent_escapes)
{
    path_bad("file:///a%zz");
    path_bad("file:///a%2");
    path_bad("file:///a%");
    path_bad("file:///a%g0");
}

Test(store_url, rejects_other_schemes)
{
    path_bad("s3://bucket/x");
    path_bad("/plain/path");
}

Test(store_url, rejects_path_that_does_not_fit)
{
    char out[6];

    cr_assert_eq(ck_store_file_path("file:///abcd", out, sizeof(out)), 0);
    cr_assert_str_eq(out, "/abcd");
    cr_assert_eq(ck_store_file_path("file:///abcde", out, sizeof(out)), -1);
}

/* ---- ck_store_open ---- */

static void open_fails(const char *url, s3ckpt_status want, const char *needle)
{
    ck_store *s = (ck_store *)&s; /* must be reset to NULL */
    ck_err e;

    ck_err_init(&e);
    cr_assert_eq(ck_store_open(&s, url, 0, NULL, &e), want, "%s", url);
    cr_assert_null(s);
    cr_assert_eq(ck_err_status(&e), want);
    cr_assert_not_null(strstr(e.msg, needle), "\"%s\" lacks \"%s\"", e.msg, needle);
    ck_err_cleanup(&e);
}

Test(store_url, bad_s3_urls_are_config_errors_naming_the_url)
{
    open_fails("s3://", S3CKPT_ECONFIG, "3 to 63");
    open_fails("s3://ab/x", S3CKPT_ECONFIG, "s3://ab/x");
    open_fails("s3://bucket//x", S3CKPT_ECONFIG, "empty parts");
    open_fails("s3://buc ket/x", S3CKPT_ECONFIG, "bucket name");
    open_fails("http://bucket/x", S3CKPT_ECONFIG, "s3://bucket/prefix");
}

static void s3_parses(const char *url, const char *bucket, const char *prefix)
{
    char b[64], p[256], why[120];

    cr_assert_eq(ck_store_s3_parse(url, b, sizeof(b), p, sizeof(p), why, sizeof(why)), 0, "%s: %s",
                 url, why);
    cr_assert_str_eq(b, bucket, "%s", url);
    cr_assert_str_eq(p, prefix, "%s", url);
}

Test(store_url, s3_url_splits_into_bucket_and_slash_terminated_prefix)
{
    s3_parses("s3://bucket", "bucket", "");
    s3_parses("s3://bucket/", "bucket", "");
    s3_parses("s3://bucket/run-42", "bucket", "run-42/");
    s3_parses("s3://bucket/a/b/c/", "bucket", "a/b/c/");
    s3_parses("s3://my.bucket-1/x y", "my.bucket-1", "x y/");
}

Test(store_url, s3_url_refuses_control_characters_and_overlong_buckets)
{
    char b[64], p[256], why[120];

    cr_assert_neq(
        ck_store_s3_parse("s3://bucket/a\nb", b, sizeof(b), p, sizeof(p), why, sizeof(why)), 0);
    cr_assert_neq(
        ck_store_s3_parse("s3://"
                          "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa/x",
                          b, sizeof(b), p, sizeof(p), why, sizeof(why)),
        0);
    cr_assert_neq(ck_store_s3_parse("s3:///x", b, sizeof(b), p, sizeof(p), why, sizeof(why)), 0);
}

Test(store_url, s3_store_opens_without_network_and_names_no_local_root)
{
    ck_store *s = NULL;
    ck_err e;

    ck_err_init(&e);
    /* nothing is sent until the first request: an unreachable endpoint is fine here */
    setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:1", 1);
    setenv("AWS_ACCESS_KEY_ID", "AKIDTEST", 1);
    setenv("AWS_SECRET_ACCESS_KEY", "secret", 1);
    cr_assert_eq(ck_store_open(&s, "s3://bucket/p", 0, NULL, &e), S3CKPT_OK, "%s", e.msg);
    cr_assert_null(s->local_root);
    ck_store_free(s);
    ck_err_cleanup(&e);
}

Test(store_url, http_url_is_a_config_error_naming_the_accepted_forms)
{
    open_fails("http://example.com/x", S3CKPT_ECONFIG, "http://example.com/x");
    open_fails("http://example.com/x", S3CKPT_ECONFIG, "file:///absolute/path");
}

Test(store_url, relative_file_url_is_a_config_error)
{
    open_fails("file://relative/dir", S3CKPT_ECONFIG, "file:///absolute/path");
}

Test(store_url, empty_url_is_a_config_error)
{
    open_fails("", S3CKPT_ECONFIG, "no store");
}

/* ---- the file store ---- */

static char root[64];
static char url[96];
static ck_err err;
static ck_store *st;

static void store_setup(void)
{
    snprintf(root, sizeof(root), "/tmp/s3ckpt-store-XXXXXX");
    cr_assert_not_null(mkdtemp(root));
    snprintf(url, sizeof(url), "file://%s", root);
    ck_err_init(&err);
    st = NULL;
    cr_assert_eq(ck_store_open(&st, url, 0, NULL, &err), S3CKPT_OK, "%s", err.msg);
}

static int rm_one(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(p);
}

static void store_teardown(void)
{
    ck_store_free(st);
    ck_err_cleanup(&err);
    nftw(root, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

TestSuite(file_store, .init = store_setup, .fini = store_teardown);

static void put(const char *key, const char *data)
{
    cr_assert_eq(st->ops->put(st, key, data, strlen(data), CK_PUT_OVERWRITE, NULL, NULL), S3CKPT_OK,
                 "put %s: %s", key, err.msg);
}

static void assert_content(const char *key, const char *want)
{
    ck_buf b;

    ck_buf_init(&b, 1 << 20);
    cr_assert_eq(st->ops->get(st, key, 1 << 20, &b, NULL), S3CKPT_OK, "get %s: %s", key, err.msg);
    cr_assert_eq(b.len, strlen(want));
    cr_assert_str_eq(b.data, want);
    ck_buf_cleanup(&b);
}

static int exists(const char *rel)
{
    char p[256];
    struct stat sb;

    snprintf(p, sizeof(p), "%s/%s", root, rel);
    return stat(p, &sb) == 0;
}

Test(file_store, open_missing_root_without_create_is_not_found)
{
    char u[128];
    ck_store *s = NULL;
    ck_err e;

    ck_err_init(&e);
    snprintf(u, sizeof(u), "file://%s/missing", root);
    cr_assert_eq(ck_store_open(&s, u, 0, NULL, &e), S3CKPT_ENOTFOUND);
    cr_assert_null(s);
    cr_assert_not_null(strstr(e.msg, "no such directory"), "%s", e.msg);
    ck_err_cleanup(&e);
}

Test(file_store, open_with_create_makes_the_root)
{
    char u[128];
    ck_store *s = NULL;
    ck_err e;

    ck_err_init(&e);
    snprintf(u, sizeof(u), "file://%s/new/deeper%%20dir", root);
    cr_assert_eq(ck_store_open(&s, u, 1, NULL, &e), S3CKPT_OK, "%s", e.msg);
    cr_assert_not_null(s);
    cr_assert(exists("new/deeper dir"));
    ck_store_free(s);
    ck_err_cleanup(&e);
}

Test(file_store, put_then_get_returns_the_bytes_and_size)
{
    ck_obj_info info;
    ck_buf b;

    put("ck/manifest.json", "{\"x\":1}");
    ck_buf_init(&b, 100);
    cr_assert_eq(st->ops->get(st, "ck/manifest.json", 100, &b, &info), S3CKPT_OK, "%s", err.msg);
    cr_assert_str_eq(b.data, "{\"x\":1}");
    cr_assert_eq(info.size, 7);
    cr_assert_neq(info.etag[0], '\0', "get should report an etag");
    ck_buf_cleanup(&b);
}

Test(file_store, get_missing_key_is_not_found)
{
    ck_buf b;

    ck_buf_init(&b, 100);
    cr_assert_eq(st->ops->get(st, "nope", 100, &b, NULL), S3CKPT_ENOTFOUND);
    ck_buf_cleanup(&b);
}

Test(file_store, get_larger_than_max_bytes_is_einval)
{
    ck_buf b;

    put("big", "0123456789");
    ck_buf_init(&b, 4);
    cr_assert_eq(st->ops->get(st, "big", 4, &b, NULL), S3CKPT_EINVAL);
    cr_assert_not_null(strstr(err.msg, "larger than 4 bytes"), "%s", err.msg);
    ck_buf_cleanup(&b);
}

Test(file_store, unsafe_keys_are_refused)
{
    cr_assert_eq(st->ops->put(st, "../escape", "x", 1, CK_PUT_OVERWRITE, NULL, NULL),
                 S3CKPT_EINVAL);
    cr_assert_not_null(strstr(err.msg, "bad key"), "%s", err.msg);
    ck_err_reset(&err);
    cr_assert_eq(st->ops->put(st, "/abs", "x", 1, CK_PUT_OVERWRITE, NULL, NULL), S3CKPT_EINVAL);
    ck_err_reset(&err);
    cr_assert_eq(st->ops->remove(st, "a/../../x"), S3CKPT_EINVAL);
}

Test(file_store, put_if_absent_refuses_existing_key_and_keeps_content)
{
    cr_assert_eq(st->ops->put(st, "ck/manifest.json", "first", 5, CK_PUT_IF_ABSENT, NULL, NULL),
                 S3CKPT_OK, "%s", err.msg);
    cr_assert_eq(st->ops->put(st, "ck/manifest.json", "second", 6, CK_PUT_IF_ABSENT, NULL, NULL),
                 S3CKPT_EEXISTS);
    assert_content("ck/manifest.json", "first");
}

Test(file_store, put_if_absent_leaves_no_temp_files)
{
    DIR *d;
    struct dirent *de;
    int n = 0;

    st->ops->put(st, "k", "a", 1, CK_PUT_IF_ABSENT, NULL, NULL);
    st->ops->put(st, "k", "b", 1, CK_PUT_IF_ABSENT, NULL, NULL);
    d = opendir(root);
    cr_assert_not_null(d);
    while ((de = readdir(d))) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
            continue;
        cr_assert_str_eq(de->d_name, "k", "leftover %s", de->d_name);
        n++;
    }
    closedir(d);
    cr_assert_eq(n, 1);
}

Test(file_store, put_if_match_with_current_etag_replaces)
{
    ck_obj_info i1, i2;

    cr_assert_eq(st->ops->put(st, "latest", "v1\n", 3, CK_PUT_OVERWRITE, NULL, &i1), S3CKPT_OK);
    cr_assert_neq(i1.etag[0], '\0');
    cr_assert_eq(st->ops->put(st, "latest", "v2\n", 3, CK_PUT_IF_MATCH, i1.etag, &i2), S3CKPT_OK,
                 "%s", err.msg);
    cr_assert_str_neq(i1.etag, i2.etag);
    assert_content("latest", "v2\n");
}

Test(file_store, put_if_match_with_stale_etag_is_eexists)
{
    ck_obj_info i1, i2;

    cr_assert_eq(st->ops->put(st, "latest", "v1\n", 3, CK_PUT_OVERWRITE, NULL, &i1), S3CKPT_OK);
    cr_assert_eq(st->ops->put(st, "latest", "v2\n", 3, CK_PUT_IF_MATCH, i1.etag, &i2), S3CKPT_OK);
    /* someone else moved it on: our etag is stale */
    cr_assert_eq(st->ops->put(st, "latest", "v3\n", 3, CK_PUT_IF_MATCH, i1.etag, NULL),
                 S3CKPT_EEXISTS);
    assert_content("latest", "v2\n");
}

Test(file_store, put_if_match_on_missing_key_is_eexists)
{
    cr_assert_eq(st->ops->put(st, "latest", "v1\n", 3, CK_PUT_IF_MATCH, "\"abc\"", NULL),
                 S3CKPT_EEXISTS);
    cr_assert_not(exists("latest"));
}

Test(file_store, put_etag_matches_get_etag)
{
    ck_obj_info pi, gi;
    ck_buf b;

    cr_assert_eq(st->ops->put(st, "obj", "hello", 5, CK_PUT_OVERWRITE, NULL, &pi), S3CKPT_OK);
    ck_buf_init(&b, 100);
    cr_assert_eq(st->ops->get(st, "obj", 100, &b, &gi), S3CKPT_OK);
    cr_assert_str_eq(pi.etag, gi.etag);
    ck_buf_cleanup(&b);
}

typedef struct listing {
    char keys[32][128];
    int prefix[32];
    uint64_t size[32];
    int n;
} listing;

static s3ckpt_status collect(void *ud, const char *key, int is_prefix, const ck_obj_info *info)
{
    listing *l = ud;

    cr_assert_lt(l->n, 32);
    snprintf(l->keys[l->n], sizeof(l->keys[0]), "%s", key);
    l->prefix[l->n] = is_prefix;
    l->size[l->n] = info->size;
    l->n++;
    return S3CKPT_OK;
}

static int find_key(const listing *l, const char *key)
{
    int i;

    for (i = 0; i < l->n; i++)
        if (strcmp(l->keys[i], key) == 0)
            return i;
    return -1;
}

static void populate(void)
{
    put("ck1/manifest.json", "m1");
    put("ck1/data/a", "a");
    put("ck1/data/sub/b", "b");
    put("ck2/manifest.json", "m2");
    put("latest", "ck2\n");
}

Test(file_store, list_delimited_gives_keys_and_prefixes_of_one_level)
{
    listing l = {0};

    populate();
    cr_assert_eq(st->ops->list(st, "", 1, collect, &l), S3CKPT_OK, "%s", err.msg);
    cr_assert_eq(l.n, 3);
    cr_assert_geq(find_key(&l, "ck1/"), 0);
    cr_assert_geq(find_key(&l, "ck2/"), 0);
    cr_assert_geq(find_key(&l, "latest"), 0);
    cr_assert_eq(l.prefix[find_key(&l, "ck1/")], 1);
    cr_assert_eq(l.prefix[find_key(&l, "latest")], 0);
}

Test(file_store, list_delimited_under_a_prefix)
{
    listing l = {0};

    populate();
    cr_assert_eq(st->ops->list(st, "ck1/", 1, collect, &l), S3CKPT_OK, "%s", err.msg);
    cr_assert_eq(l.n, 2);
    cr_assert_eq(l.prefix[find_key(&l, "ck1/data/")], 1);
    cr_assert_eq(l.prefix[find_key(&l, "ck1/manifest.json")], 0);
}

Test(file_store, list_recursive_gives_every_key_under_prefix)
{
    listing l = {0};

    populate();
    cr_assert_eq(st->ops->list(st, "ck1/", 0, collect, &l), S3CKPT_OK, "%s", err.msg);
    cr_assert_eq(l.n, 3);
    cr_assert_geq(find_key(&l, "ck1/manifest.json"), 0);
    cr_assert_geq(find_key(&l, "ck1/data/a"), 0);
    cr_assert_geq(find_key(&l, "ck1/data/sub/b"), 0);
    cr_assert_eq(l.prefix[find_key(&l, "ck1/data/sub/b")], 0);
    cr_assert_lt(find_key(&l, "ck2/manifest.json"), 0);
    /* listed with their sizes */
    cr_assert_eq(l.size[find_key(&l, "ck1/manifest.json")], 2);
    cr_assert_eq(l.size[find_key(&l, "ck1/data/a")], 1);
}

static s3ckpt_status collect_existing(void *ud, const char *key, int is_prefix,
                                      const ck_obj_info *listed)
{
    ck_obj_info info;

    if (!is_prefix)
        cr_assert_eq(st->ops->head(st, key, &info), S3CKPT_OK, "listed key \"%s\" does not exist",
                     key);
    return collect(ud, key, is_prefix, listed);
}

Test(file_store, list_with_prefix_not_ending_in_slash_reports_only_real_keys)
{
    listing l = {0};
    s3ckpt_status rc;
    int i;

    populate();
    /* refusing such a prefix would be fine; inventing keys is not */
    rc = st->ops->list(st, "ck1", 0, collect_existing, &l);
    cr_assert(rc == S3CKPT_OK || rc == S3CKPT_EINVAL, "list: %d %s", rc, err.msg);
    for (i = 0; i < l.n; i++)
        cr_assert_eq(strncmp(l.keys[i], "ck1", 3), 0, "%s", l.keys[i]);
}

Test(file_store, get_of_a_prefix_is_not_found)
{
    ck_buf b;
    ck_obj_info info;

    populate();
    ck_buf_init(&b, 100);
    /* like a bucket: "ck1" is not a key just because "ck1/..." keys exist */
    cr_assert_eq(st->ops->get(st, "ck1", 100, &b, NULL), S3CKPT_ENOTFOUND, "%s", err.msg);
    cr_assert_eq(st->ops->head(st, "ck1", &info), S3CKPT_ENOTFOUND);
    ck_buf_cleanup(&b);
}

Test(file_store, list_of_missing_prefix_is_empty)
{
    listing l = {0};

    populate();
    cr_assert_eq(st->ops->list(st, "nope/", 0, collect, &l), S3CKPT_OK);
    cr_assert_eq(l.n, 0);
}

Test(file_store, list_recursive_from_root_gives_all_keys)
{
    listing l = {0};

    populate();
    cr_assert_eq(st->ops->list(st, "", 0, collect, &l), S3CKPT_OK);
    cr_assert_eq(l.n, 5);
    cr_assert_geq(find_key(&l, "latest"), 0);
    cr_assert_geq(find_key(&l, "ck2/manifest.json"), 0);
}

static s3ckpt_status stop_after_one(void *ud, const char *key, int is_prefix,
                                    const ck_obj_info *info)
{
    int *calls = ud;

    (void)key;
    (void)is_prefix;
    (void)info;
    (*calls)++;
    return S3CKPT_ECANCELED;
}

Test(file_store, list_stops_at_callback_error)
{
    int calls = 0;

    populate();
    cr_assert_eq(st->ops->list(st, "", 0, stop_after_one, &calls), S3CKPT_ECANCELED);
    cr_assert_eq(calls, 1);
    calls = 0;
    cr_assert_eq(st->ops->list(st, "", 1, stop_after_one, &calls), S3CKPT_ECANCELED);
    cr_assert_eq(calls, 1);
}

Test(file_store, remove_drops_emptied_parent_dirs_but_not_the_root)
{
    populate();
    cr_assert_eq(st->ops->remove(st, "ck1/data/sub/b"), S3CKPT_OK, "%s", err.msg);
    cr_assert_not(exists("ck1/data/sub/b"));
    cr_assert_not(exists("ck1/data/sub"), "empty prefix left behind");
    cr_assert(exists("ck1/data/a"));
    cr_assert_eq(st->ops->remove(st, "ck1/data/a"), S3CKPT_OK);
    cr_assert_not(exists("ck1/data"));
    cr_assert(exists("ck1/manifest.json"));
    cr_assert_eq(st->ops->remove(st, "ck1/manifest.json"), S3CKPT_OK);
    cr_assert_not(exists("ck1"));
    cr_assert_eq(st->ops->remove(st, "ck2/manifest.json"), S3CKPT_OK);
    cr_assert_eq(st->ops->remove(st, "latest"), S3CKPT_OK);
    cr_assert(exists(""), "the store root must survive");
}

Test(file_store, remove_of_missing_key_is_ok)
{
    cr_assert_eq(st->ops->remove(st, "never/was"), S3CKPT_OK);
    cr_assert(exists(""));
}

Test(file_store, head_reports_size)
{
    ck_obj_info info;

    put("obj", "12345");
    cr_assert_eq(st->ops->head(st, "obj", &info), S3CKPT_OK);
    cr_assert_eq(info.size, 5);
    cr_assert_eq(st->ops->head(st, "missing", &info), S3CKPT_ENOTFOUND);
}

Test(file_store, read_at_returns_exact_ranges)
{
    ck_reader *r = NULL;
    char out[16];

    put("data/x", "0123456789");
    cr_assert_eq(st->ops->open_read(st, "data/x", "", &r), S3CKPT_OK, "%s", err.msg);
    cr_assert_eq(st->ops->read_at(r, 0, out, 10), S3CKPT_OK);
    cr_assert_eq(memcmp(out, "0123456789", 10), 0);
    cr_assert_eq(st->ops->read_at(r, 7, out, 3), S3CKPT_OK);
    cr_assert_eq(memcmp(out, "789", 3), 0);
    cr_assert_eq(st->ops->read_at(r, 10, out, 0), S3CKPT_OK);
    st->ops->close_read(r);
}

Test(file_store, read_at_beyond_end_is_corrupt_truncated)
{
    ck_reader *r = NULL;
    char out[32];

    put("data/x", "0123456789");
    cr_assert_eq(st->ops->open_read(st, "data/x", "", &r), S3CKPT_OK, "%s", err.msg);
    cr_assert_eq(st->ops->read_at(r, 5, out, 10), S3CKPT_ECORRUPT);
    cr_assert_not_null(strstr(err.msg, "truncated"), "%s", err.msg);
    cr_assert_not_null(strstr(err.msg, "data/x"), "%s", err.msg);
    ck_err_reset(&err);
    cr_assert_eq(st->ops->read_at(r, 11, out, 0), S3CKPT_ECORRUPT);
    cr_assert_not_null(strstr(err.msg, "truncated"), "%s", err.msg);
    ck_err_reset(&err);
    cr_assert_eq(st->ops->read_at(r, UINT64_MAX, out, 2), S3CKPT_ECORRUPT);
    st->ops->close_read(r);
}

Test(file_store, reader_keeps_the_version_it_opened)
{
    ck_reader *r = NULL;
    char out[8];

    put("data/x", "old!");
    cr_assert_eq(st->ops->open_read(st, "data/x", "", &r), S3CKPT_OK);
    put("data/x", "new!");
    cr_assert_eq(st->ops->read_at(r, 0, out, 4), S3CKPT_OK);
    cr_assert_eq(memcmp(out, "old!", 4), 0);
    st->ops->close_read(r);
}

Test(file_store, open_read_of_missing_object_is_corrupt)
{
    ck_reader *r = (ck_reader *)&r;

    cr_assert_eq(st->ops->open_read(st, "data/missing", "", &r), S3CKPT_ECORRUPT);
    cr_assert_null(r);
    cr_assert_not_null(strstr(err.msg, "missing"), "%s", err.msg);
}

Test(file_store, writer_object_is_invisible_until_commit)
{
    ck_writer *w = NULL;
    ck_obj_info info;
    ck_buf b;

    cr_assert_eq(st->ops->open_write(st, "ck/data/big", 0, &w), S3CKPT_OK, "%s", err.msg);
    cr_assert_eq(st->ops->write(w, "part1-", 6), S3CKPT_OK);
    cr_assert_eq(st->ops->write(w, "part2", 5), S3CKPT_OK);
    ck_buf_init(&b, 100);
    cr_assert_eq(st->ops->get(st, "ck/data/big", 100, &b, NULL), S3CKPT_ENOTFOUND);
    ck_buf_cleanup(&b);
    cr_assert_eq(st->ops->commit(w, &info), S3CKPT_OK, "%s", err.msg);
    cr_assert_eq(info.size, 11);
    assert_content("ck/data/big", "part1-part2");
}

Test(file_store, aborted_writer_leaves_nothing)
{
    ck_writer *w = NULL;
    listing l = {0};

    cr_assert_eq(st->ops->open_write(st, "ck/data/big", 0, &w), S3CKPT_OK, "%s", err.msg);
    cr_assert_eq(st->ops->write(w, "xyz", 3), S3CKPT_OK);
    st->ops->abort(w);
    st->ops->abort(NULL);
    cr_assert_eq(st->ops->list(st, "", 0, collect, &l), S3CKPT_OK);
    cr_assert_eq(l.n, 0, "left behind: %s", l.n ? l.keys[0] : "");
}

Test(file_store, sync_succeeds)
{
    put("a", "1");
    cr_assert_eq(st->ops->sync(st), S3CKPT_OK, "%s", err.msg);
}
