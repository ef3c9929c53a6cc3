/*
 * test_s3 - the real s3ckpt CLI against a real S3 server (Ceph RGW from scripts/rgw): trees come
 * back byte for byte and mode for mode through s3://bucket/prefix stores (path style and virtual
 * host, deep prefixes and the bucket root, multipart objects, every wire checksum), the catalog
 * commands work on S3, two pushes of one name race to exactly one winner, a push killed with
 * SIGKILL resumes by reusing its uploaded parts, cleanup aborts what it left, and the objects are
 * plain S3 objects that aws-cli and zstd read.
 *
 * Each test makes its own bucket (curl with SigV4), so tests share nothing and run in parallel.
 * Errors and integrity failures are in test_s3_errors.c.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "s3helpers.h"

TestSuite(s3, .init = th_setup, .fini = th_teardown, .timeout = 180);

/* push SRC to url as ck, pull it into DEST, compare; extra options go to push and pull. */
static void round_trip(const char *url, const char *opt1, const char *opt2)
{
    S3CK_EXPECT(0, "push", SRC, url, "--name", "ck", opt1 ? opt1 : "--no-progress",
                opt2 ? opt2 : "--no-progress");
    S3CK_EXPECT(0, "pull", url, DEST, "--name", "ck", opt1 ? opt1 : "--no-progress",
                opt2 ? opt2 : "--no-progress");
    TH_ASSERT_TREES_EQUAL(SRC, DEST);
}

/* ---- round trips ---- */

Test(s3, mixed_tree_round_trips_path_style)
{
    char url[PATH_MAX], *xml;

    s3_begin("mixed-path");
    make_mixed_tree(SRC, 1);
    s3_url(url, sizeof(url), "ckpts");
    round_trip(url, "--addressing", "path");
    /* exactly one object per file, the manifest and latest: no lock, probe or temporary left */
    xml = list_keys();
    cr_assert_eq(count_str(xml, "<Key>"), 8, "unexpected objects:\n%s", xml);
    cr_assert(strstr(xml, "<Key>ckpts/ck/manifest.json</Key>"), "%s", xml);
    cr_assert(strstr(xml, "<Key>ckpts/ck/data/optim/nested/deep/tiny.bin</Key>"), "%s", xml);
    cr_assert(strstr(xml, "<Key>ckpts/ck/data/empty.bin</Key>"), "%s", xml);
    cr_assert(strstr(xml, "<Key>ckpts/latest</Key>"), "%s", xml);
    free(xml);
    xml = list_uploads();
    cr_assert_eq(count_str(xml, "<Upload>"), 0, "uploads left:\n%s", xml);
    free(xml);
}

Test(s3, mixed_tree_round_trips_virtual_host)
{
    char url[PATH_MAX];
    th_run r;

    s3_begin("mixed-vhost");
    make_mixed_tree(SRC, 2);
    s3_url(url, sizeof(url), "ckpts");
    S3CK_EXPECT(0, "push", SRC, url, "--name", "ck", "--addressing", "virtual", "--endpoint", VEP);
    S3CK_EXPECT(0, "pull", url, DEST, "--name", "ck", "--addressing", "virtual", "--endpoint", VEP);
    TH_ASSERT_TREES_EQUAL(SRC, DEST);
    /* the same objects through the path-style endpoint */
    cr_assert(key_exists("ckpts/ck/manifest.json"));
    TH_ASSERT_OK(th_rm_rf(DEST));
    S3CK_EXPECT(0, "pull", url, DEST, "--name", "ck", "--addressing", "path");
    TH_ASSERT_TREES_EQUAL(SRC, DEST);
    /* the option is not ignored: a bucket cannot be a subdomain of an IP address */
    s3ck(&r, "ls", url, "--addressing", "virtual", "--endpoint", EP, NULL);
    cr_assert(r.status == 2 || r.status == 7,
              "--addressing virtual on %s: exit %d, expected 2 or 7 (was it path style?)\n%s", EP,
              r.status, r.err);
    th_run_free(&r);
}

Test(s3, file_over_two_parts_is_uploaded_multipart_and_round_trips)
{
    char url[PATH_MAX], f[PATH_MAX], *xml, *e;
    th_run r;

    s3_begin("multipart");
    TH_PATH(f, "%s/big.bin", SRC);
    TH_ASSERT_OK(th_write_random(f, 40ull * 1000 * 1000, 3));
    s3_url(url, sizeof(url), "mp");
    s3ck(&r, "push", SRC, url, "--name", "ck", "--part-size", "5M", "--json", NULL);
    TH_ASSERT_EXIT(r, 0);
    cr_assert_geq(json_u64(r.out, "parts_uploaded"), 3, "a 40 MB file at --part-size 5M: %s",
                  r.out);
    th_run_free(&r);
    /* a multipart object's ETag is "<md5 of the part md5s>-<parts>" */
    xml = list_keys();
    e = strstr(xml, "<Key>mp/ck/data/big.bin</Key>");
    cr_assert_not_null(e, "no data object in the listing:\n%s", xml);
    e = strstr(e, "<ETag>");
    cr_assert(e && strchr(e, '-') && strchr(e, '-') < strstr(e, "</ETag>"),
              "the data object's ETag is not a multipart one:\n%s", xml);
    free(xml);
    S3CK_EXPECT(0, "pull", url, DEST, "--name", "ck");
    TH_ASSERT_TREES_EQUAL(SRC, DEST);
}

Test(s3, three_hundred_small_files_round_trip)
{
    char url[PATH_MAX], p[PATH_MAX];
    th_run r;
    int i;

    s3_begin("many-small");
    for (i = 0; i < 300; i++) {
        TH_PATH(p, "%s/shard-%02d", SRC, i % 12);
        TH_ASSERT_OK(th_mkdirs(p, 0755));
        TH_PATH(p, "%s/shard-%02d/t-%03d.bin", SRC, i % 12, i);
        TH_ASSERT_OK(th_write_random(p, (uint64_t)(i * 37 % 5000), (uint64_t)i + 100));
    }
    s3_url(url, sizeof(url), "many");
    round_trip(url, NULL, NULL);
    s3ck(&r, "show", url, "--name", "ck", "--json", NULL);
    TH_ASSERT_EXIT(r, 0);
    cr_assert_eq(json_u64(r.out, "files"), 300, "%s", r.out);
    th_run_free(&r);
}

Test(s3, utf8_space_and_reserved_character_names_round_trip)
{
    static const char *const names[] = {
        "dir with spaces/file with spaces.bin", "na\xc3\xafve caf\xc3\xa9/\xc3\xa9t\xc3\xa9.bin",
        "\xe6\x97\xa5\xe6\x9c\xac/\xe3\x83\x95\xe3\x82\xa1\xe3\x82\xa4\xe3\x83\xab.txt",
        "reserved/a+b=c&d;e,f@g$h!i'j(k)l*m~n%20o[p]#q?r.bin"};
    char url[PATH_MAX], p[PATH_MAX], *slash;
    size_t i;

    s3_begin("utf8-names");
    for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        TH_PATH(p, "%s/%s", SRC, names[i]);
        slash = strrchr(p, '/');
        *slash = '\0';
        TH_ASSERT_OK(th_mkdirs(p, 0755));
        *slash = '/';
        TH_ASSERT_OK(th_write_random(p, 1000 + i, 40 + i));
    }
    s3_url(url, sizeof(url), "names");
    round_trip(url, NULL, NULL);
    cr_assert(key_exists("names/ck/data/dir with spaces/file with spaces.bin"));
}

/* Keys are the prefix's and the paths' bytes, never percent-decoded: "%41" stays "%41". The
 * listings (ls, cleanup) and batch deletes (rm) must encode them as well as single requests. */
Test(s3, prefix_with_spaces_utf8_and_reserved_characters_works_for_every_command)
{
    static const char *const prefix = "my ckpts/\xc3\xbcn\xc3\xaf+x=y&z~%41";
    char url[PATH_MAX], p[PATH_MAX], *xml;
    th_run r;

    s3_begin("odd-prefix");
    TH_PATH(p, "%s/a&b <c>", SRC);
    TH_ASSERT_OK(th_mkdirs(p, 0755));
    TH_PATH(p, "%s/a&b <c>/d&e\".bin", SRC);
    TH_ASSERT_OK(th_write_random(p, 3000, 44));
    TH_PATH(p, "%s/plain.bin", SRC);
    TH_ASSERT_OK(th_write_random(p, 3000, 45));
    s3_url(url, sizeof(url), prefix);
    S3CK_EXPECT(0, "push", SRC, url, "--step", "1");
    S3CK_EXPECT(0, "push", SRC, url, "--step", "2");
    S3CK_EXPECT(0, "pull", url, DEST);
    TH_ASSERT_TREES_EQUAL(SRC, DEST);
    xml = list_keys();
    cr_assert(strstr(xml, "<Key>my ckpts/\xc3\xbcn\xc3\xaf+x=y&amp;z~%41/latest</Key>"),
              "keys are not the prefix's bytes:\n%s", xml);
    free(xml);
    s3ck(&r, "ls", url, "--json", NULL);
    TH_ASSERT_EXIT(r, 0);
    cr_assert_eq(th_json_array_len(r.out), 2, "%s", r.out);
    th_run_free(&r);
    S3CK_EXPECT(0, "verify", url, "--deep");
    S3CK_EXPECT(0, "cleanup", url, "--older-than", "0");
    S3CK_EXPECT(0, "rm", url, "--name", "step-00000001");
    S3CK_EXPECT(0, "rm", url, "--name", "step-00000002", "--force");
    xml = list_keys();
    cr_assert_eq(count_str(xml, "<Key>"), 0, "rm left objects:\n%s", xml);
    free(xml);
}

/* A fresh push learns what already exists with one listing, not one request per file: its
 * request count stays near one PUT per small file. */
Test(s3, a_fresh_push_of_small_files_sends_about_one_request_per_file)
{
    char url[PATH_MAX], p[PATH_MAX];
    uint64_t requests;
    th_run r;
    int i;

    s3_begin("fresh");
    TH_ASSERT_OK(th_mkdirs(SRC, 0755));
    for (i = 0; i < 200; i++) {
        TH_PATH(p, "%s/f%03d.bin", SRC, i);
        TH_ASSERT_OK(th_write_random(p, 1000, (uint64_t)i + 7));
    }
    s3_url(url, sizeof(url), "fresh");
    s3ck(&r, "push", SRC, url, "--step", "1", "--json", NULL);
    TH_ASSERT_EXIT(r, 0);
    requests = json_u64(r.out, "requests");
    cr_assert_eq(json_u64(r.out, "parts_uploaded"), 200, "%s", r.out);
    /* 200 PUTs + probe, lock, listings, manifest, latest: a few dozen at most, not 400 */
    cr_assert_lt(requests, 240, "%" PRIu64 " requests for 200 files: %s", requests, r.out);
    th_run_free(&r);
}

Test(s3, single_file_push_round_trips)
{
    char url[PATH_MAX], f[PATH_MAX], got[PATH_MAX];

    s3_begin("single-file");
    TH_PATH(f, "%s/weights.f32", SRC);
    TH_ASSERT_OK(th_write_floats(f, (5u << 20) + 1, 5));
    s3_url(url, sizeof(url), "one");
    S3CK_EXPECT(0, "push", f, url, "--name", "ck");
    S3CK_EXPECT(0, "pull", url, DEST, "--name", "ck");
    TH_PATH(got, "%s/weights.f32", DEST);
    TH_ASSERT_TREES_EQUAL(f, got);
    cr_assert_eq(th_dir_count(DEST), 1, "DEST holds more than the one file");
}

Test(s3, small_chunk_size_with_many_chunks_round_trips)
{
    char url[PATH_MAX], f[PATH_MAX], *e;
    th_run r;

    s3_begin("chunks-64k");
    TH_PATH(f, "%s/w.f32", SRC);
    TH_ASSERT_OK(th_write_floats(f, 9ull * 1000 * 1000, 6)); /* 138 chunks of 64 KiB */
    TH_PATH(f, "%s/r.bin", SRC);
    TH_ASSERT_OK(th_write_random(f, 3ull * 65536 + 1, 7));
    s3_url(url, sizeof(url), "small");
    S3CK_EXPECT(0, "push", SRC, url, "--name", "ck", "--chunk-size", "64K", "--part-size", "5M");
    S3CK_EXPECT(0, "pull", url, DEST, "--name", "ck");
    TH_ASSERT_TREES_EQUAL(SRC, DEST);
    s3ck(&r, "show", url, "--name", "ck", "--json", NULL);
    TH_ASSERT_EXIT(r, 0);
    e = th_json_object_with(r.out, "path", "w.f32");
    cr_assert_not_null(e, "%s", r.out);
    cr_assert_eq(json_u64(e, "chunks"), 138, "%s", e);
    free(e);
    e = th_json_object_with(r.out, "path", "r.bin");
    cr_assert_not_null(e, "%s", r.out);
    cr_assert_eq(json_u64(e, "chunks"), 4, "%s", e);
    free(e);
    th_run_free(&r);
    S3CK_EXPECT(0, "verify", url, "--name", "ck", "--deep");
}

Test(s3, prefix_of_several_levels_keeps_every_key_under_it)
{
    char url[PATH_MAX], *xml;
    int all, under;

    s3_begin("deep-prefix");
    make_mixed_tree(SRC, 8);
    s3_url(url, sizeof(url), "a/b/c");
    round_trip(url, NULL, NULL);
    xml = list_keys();
    all = count_str(xml, "<Key>");
    under = count_str(xml, "<Key>a/b/c/");
    cr_assert_gt(all, 0);
    cr_assert_eq(all, under, "keys outside a/b/c/:\n%s", xml);
    cr_assert(strstr(xml, "<Key>a/b/c/latest</Key>"), "%s", xml);
    cr_assert(strstr(xml, "<Key>a/b/c/ck/manifest.json</Key>"), "%s", xml);
    free(xml);
    S3CK_EXPECT(0, "ls", url);
    S3CK_EXPECT(0, "verify", url, "--deep");
}

Test(s3, bucket_root_store_round_trips)
{
    char url[PATH_MAX], *xml;
    th_run r;

    s3_begin("bucket-root");
    make_mixed_tree(SRC, 9);
    s3_url(url, sizeof(url), NULL);
    round_trip(url, NULL, NULL);
    xml = list_keys();
    cr_assert(strstr(xml, "<Key>latest</Key>"), "no latest at the bucket root:\n%s", xml);
    cr_assert(strstr(xml, "<Key>ck/manifest.json</Key>"), "%s", xml);
    cr_assert(strstr(xml, "<Key>ck/data/model.bin</Key>"), "%s", xml);
    free(xml);
    s3ck(&r, "ls", url, "--json", NULL);
    TH_ASSERT_EXIT(r, 0);
    cr_assert_eq(th_json_array_len(r.out), 1, "%s", r.out);
    th_run_free(&r);
}

Test(s3, every_wire_checksum_round_trips)
{
    static const char *const sums[] = {"md5", "off", "crc32c", "sha256", "auto"};
    char url[PATH_MAX], prefix[32], dest[PATH_MAX];
    size_t i;

    s3_begin("wire-checksum");
    make_mixed_tree(SRC, 10);
    for (i = 0; i < sizeof(sums) / sizeof(sums[0]); i++) {
        snprintf(prefix, sizeof(prefix), "sum-%s", sums[i]);
        s3_url(url, sizeof(url), prefix);
        TH_PATH(dest, "%s/dest-%s", th_root, sums[i]);
        S3CK_EXPECT(0, "push", SRC, url, "--name", "ck", "--wire-checksum", sums[i], "--part-size",
                    "5M");
        S3CK_EXPECT(0, "pull", url, dest, "--name", "ck", "--wire-checksum", sums[i]);
        TH_ASSERT_TREES_EQUAL(SRC, dest);
    }
}

/* The probe finds what RGW checks: it refuses a signed payload hash that is not the body's
 * (XAmzContentSHA256Mismatch) and ignores x-amz-checksum-crc32c (Pacific). */
Test(s3, probe_finds_that_rgw_verifies_the_signed_payload_sha256_but_not_crc32c)
{
    char url[PATH_MAX];
    th_run r;

    s3_begin("probe");
    make_mixed_tree(SRC, 3);
    s3_url(url, sizeof(url), "p");
    s3ck(&r, "push", SRC, url, "--name", "ck", "-v", NULL);
    TH_ASSERT_EXIT(r, 0);
    cr_assert(strstr(r.err, "x-amz-checksum-crc32c not verified; signed payload SHA-256 verified"),
              "%s", r.err);
    cr_assert(strstr(r.err, "wire checksum: sha256") || strstr(r.err, "wire checksum: md5"),
              "auto chose neither of the two checks RGW makes:\n%s", r.err);
    th_run_free(&r);
}

Test(s3, multipart_object_round_trips_with_every_wire_checksum)
{
    static const char *const sums[] = {"md5", "off", "crc32c", "sha256"};
    char url[PATH_MAX], prefix[32], dest[PATH_MAX], f[PATH_MAX];
    th_run r;
    size_t i;

    s3_begin("wire-mp");
    TH_PATH(f, "%s/big.bin", SRC);
    TH_ASSERT_OK(th_write_random(f, 20ull * 1000 * 1000, 11));
    for (i = 0; i < sizeof(sums) / sizeof(sums[0]); i++) {
        snprintf(prefix, sizeof(prefix), "sum-%s", sums[i]);
        s3_url(url, sizeof(url), prefix);
        TH_PATH(dest, "%s/dest-%s", th_root, sums[i]);
        s3ck(&r, "push", SRC, url, "--name", "ck", "--wire-checksum", sums[i], "--part-size", "5M",
             "--json", NULL);
        TH_ASSERT_EXIT(r, 0);
        cr_assert_geq(json_u64(r.out, "parts_uploaded"), 2, "%s: %s", sums[i], r.out);
        th_run_free(&r);
        S3CK_EXPECT(0, "pull", url, dest, "--name", "ck");
        TH_ASSERT_TREES_EQUAL(SRC, dest);
    }
}

/* ---- configuration sources ---- */

Test(s3, credentials_and_endpoint_come_from_profile_files_and_variables)
{
    char url[PATH_MAX], creds[PATH_MAX], conf[PATH_MAX], text[1024], dest[PATH_MAX];

    s3_begin("config");
    make_mixed_tree(SRC, 12);
    s3_url(url, sizeof(url), "cfg");
    /* credentials only in a shared credentials file, picked by AWS_PROFILE */
    TH_PATH(creds, "%s/credentials", th_root);
    TH_PATH(conf, "%s/config", th_root);
    snprintf(text, sizeof(text),
             "[default]\naws_access_key_id = NOTTHEKEY\naws_secret_access_key = nothesecret\n"
             "[s3it]\naws_access_key_id = %s\naws_secret_access_key = %s\n",
             AK, SK);
    TH_ASSERT_OK(th_write_text(creds, text));
    snprintf(text, sizeof(text), "[profile s3it]\nregion = %s\n", REGION);
    TH_ASSERT_OK(th_write_text(conf, text));
    cr_assert_eq(chmod(creds, 0600), 0);
    setenv("AWS_SHARED_CREDENTIALS_FILE", creds, 1);
    setenv("AWS_CONFIG_FILE", conf, 1);
    unsetenv("AWS_ACCESS_KEY_ID");
    unsetenv("AWS_SECRET_ACCESS_KEY");
    setenv("AWS_PROFILE", "s3it", 1);
    /* AWS_ENDPOINT_URL_S3 wins over AWS_ENDPOINT_URL (here unreachable) */
    setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:1", 1);
    setenv("AWS_ENDPOINT_URL_S3", EP, 1);
    S3CK_EXPECT(0, "push", SRC, url, "--name", "ck");
    /* --profile wins over AWS_PROFILE; --endpoint over both variables */
    setenv("AWS_PROFILE", "nosuchprofile", 1);
    setenv("AWS_ENDPOINT_URL_S3", "http://127.0.0.1:1", 1);
    S3CK_EXPECT(0, "pull", url, DEST, "--name", "ck", "--profile", "s3it", "--endpoint", EP);
    TH_ASSERT_TREES_EQUAL(SRC, DEST);
    /* environment keys win over the profile files */
    unsetenv("AWS_PROFILE");
    setenv("AWS_ACCESS_KEY_ID", AK, 1);
    setenv("AWS_SECRET_ACCESS_KEY", SK, 1);
    TH_PATH(dest, "%s/dest2", th_root);
    S3CK_EXPECT(0, "pull", url, dest, "--name", "ck", "--endpoint", EP);
    TH_ASSERT_TREES_EQUAL(SRC, dest);
}

/* ---- catalog commands ---- */

Test(s3, ls_show_verify_and_deep_verify_work_on_s3)
{
    char url[PATH_MAX], *e, v[64];
    th_run r;

    s3_begin("catalog");
    make_mixed_tree(SRC, 13);
    s3_url(url, sizeof(url), "cat");
    S3CK_EXPECT(0, "push", SRC, url, "--step", "100", "--meta", "epoch=3");
    S3CK_EXPECT(0, "push", SRC, url, "--step", "200", "--meta", "epoch=4");

    s3ck(&r, "ls", url, "--json", NULL);
    TH_ASSERT_EXIT(r, 0);
    cr_assert_eq(th_json_array_len(r.out), 2, "%s", r.out);
    e = th_json_object_with(r.out, "name", "step-00000200");
    cr_assert_not_null(e, "%s", r.out);
    cr_assert_eq(th_json_member(e, "latest", v, sizeof(v)), 0, "%s", th_error());
    cr_assert_str_eq(v, "true", "%s", e);
    cr_assert_eq(json_u64(e, "step"), 200);
    free(e);
    e = th_json_object_with(r.out, "name", "step-00000100");
    cr_assert_not_null(e, "%s", r.out);
    cr_assert_eq(th_json_member(e, "latest", v, sizeof(v)), 0, "%s", th_error());
    cr_assert_str_eq(v, "false", "%s", e);
    free(e);
    th_run_free(&r);

    s3ck(&r, "ls", url, NULL);
    TH_ASSERT_EXIT(r, 0);
    cr_assert(strstr(r.out, "* step-00000200"), "ls does not mark latest:\n%s", r.out);
    th_run_free(&r);

    s3ck(&r, "show", url, "--json", NULL); /* latest */
    TH_ASSERT_EXIT(r, 0);
    cr_assert(strstr(r.out, "\"name\":\"step-00000200\""), "%s", r.out);
    cr_assert(strstr(r.out, "\"epoch\":\"4\""), "%s", r.out);
    e = th_json_object_with(r.out, "path", "optim/state.f32");
    cr_assert_not_null(e, "%s", r.out);
    cr_assert_eq(json_u64(e, "size"), (2u << 20) + 6);
    free(e);
    th_run_free(&r);

    s3ck(&r, "show", url, "--name", "step-00000100", NULL);
    TH_ASSERT_EXIT(r, 0);
    cr_assert(strstr(r.out, "epoch"), "%s", r.out);
    th_run_free(&r);

    S3CK_EXPECT(0, "verify", url);
    S3CK_EXPECT(0, "verify", url, "--deep");
    S3CK_EXPECT(0, "verify", url, "--name", "step-00000100", "--deep");
}

Test(s3, rm_deletes_every_object_and_protects_latest)
{
    char url[PATH_MAX], *xml;
    th_run r;

    s3_begin("rm");
    make_mixed_tree(SRC, 14);
    s3_url(url, sizeof(url), "rm");
    S3CK_EXPECT(0, "push", SRC, url, "--step", "1");
    S3CK_EXPECT(0, "push", SRC, url, "--step", "2");
    cr_assert(key_exists("rm/step-00000001/manifest.json"));

    S3CK_EXPECT(0, "rm", url, "--name", "step-00000001");
    xml = list_keys();
    cr_assert(!strstr(xml, "<Key>rm/step-00000001/"), "rm left objects:\n%s", xml);
    cr_assert(strstr(xml, "<Key>rm/step-00000002/manifest.json</Key>"), "%s", xml);
    free(xml);
    S3CK_EXPECT(3, "rm", url, "--name", "step-00000001");

    s3ck(&r, "rm", url, "--name", "step-00000002", NULL);
    TH_ASSERT_EXIT(r, 8);
    TH_ASSERT_STDERR_HAS(r, "latest");
    th_run_free(&r);
    cr_assert(key_exists("rm/step-00000002/manifest.json"), "a refused rm deleted the manifest");

    S3CK_EXPECT(0, "rm", url, "--name", "step-00000002", "--force");
    xml = list_keys();
    cr_assert(!strstr(xml, "<Key>rm/"), "rm --force left objects:\n%s", xml);
    free(xml);
    s3ck(&r, "ls", url, "--json", NULL);
    TH_ASSERT_EXIT(r, 0);
    cr_assert_eq(th_json_array_len(r.out), 0, "%s", r.out);
    th_run_free(&r);
}

/* More objects than one DeleteObjects request takes (1000): all of them go. */
Test(s3, rm_of_a_checkpoint_with_more_files_than_one_delete_batch_removes_all)
{
    char url[PATH_MAX], p[PATH_MAX], *xml;
    int i;

    s3_begin("rmbig");
    for (i = 0; i < 1205; i++) {
        TH_PATH(p, "%s/f%04d.txt", SRC, i);
        if (i == 0)
            TH_ASSERT_OK(th_mkdirs(SRC, 0755));
        TH_ASSERT_OK(th_write_text(p, "x\n"));
    }
    s3_url(url, sizeof(url), "big");
    S3CK_EXPECT(0, "push", SRC, url, "--name", "many", "--no-latest");
    cr_assert(key_exists("big/many/data/f0000.txt"));
    S3CK_EXPECT(0, "rm", url, "--name", "many");
    xml = list_keys();
    cr_assert(!strstr(xml, "<Key>big/"), "rm left objects:\n%.2000s", xml);
    free(xml);
}

Test(s3, prune_keeps_last_n_and_latest)
{
    static const char *const steps[] = {"10", "20", "30", "40"};
    char url[PATH_MAX], f[PATH_MAX], *xml;
    th_run r;
    size_t i;

    s3_begin("prune");
    TH_PATH(f, "%s/w.bin", SRC);
    TH_ASSERT_OK(th_write_random(f, 5000, 15));
    s3_url(url, sizeof(url), "pr");
    for (i = 0; i < 4; i++)
        S3CK_EXPECT(0, "push", SRC, url, "--step", steps[i]);

    s3ck(&r, "prune", url, "--keep-last", "2", "--dry-run", NULL);
    TH_ASSERT_EXIT(r, 0);
    cr_assert(strstr(r.out, "would delete step-00000010\n"), "%s", r.out);
    cr_assert(strstr(r.out, "would delete step-00000020\n"), "%s", r.out);
    th_run_free(&r);
    cr_assert(key_exists("pr/step-00000010/manifest.json"), "--dry-run deleted");

    s3ck(&r, "prune", url, "--keep-last", "2", NULL);
    TH_ASSERT_EXIT(r, 0);
    cr_assert(strstr(r.out, "deleted step-00000010\n"), "%s", r.out);
    cr_assert(strstr(r.out, "deleted step-00000020\n"), "%s", r.out);
    cr_assert(strstr(r.out, "kept step-00000030\n"), "%s", r.out);
    cr_assert(strstr(r.out, "kept step-00000040\n"), "%s", r.out);
    th_run_free(&r);
    xml = list_keys();
    cr_assert(!strstr(xml, "<Key>pr/step-00000010/"), "prune left objects:\n%s", xml);
    cr_assert(!strstr(xml, "<Key>pr/step-00000020/"), "prune left objects:\n%s", xml);
    cr_assert(strstr(xml, "<Key>pr/step-00000030/manifest.json</Key>"), "%s", xml);
    free(xml);

    /* keep-last 0 never deletes what latest names */
    S3CK_EXPECT(0, "prune", url, "--keep-last", "0");
    s3ck(&r, "ls", url, "--json", NULL);
    TH_ASSERT_EXIT(r, 0);
    cr_assert_eq(th_json_array_len(r.out), 1, "%s", r.out);
    cr_assert(strstr(r.out, "step-00000040"), "%s", r.out);
    th_run_free(&r);
}

Test(s3, latest_moves_to_higher_steps_only)
{
    char url[PATH_MAX], f[PATH_MAX], got[PATH_MAX], *text;

    s3_begin("latest");
    TH_PATH(f, "%s/w.bin", SRC);
    TH_ASSERT_OK(th_write_random(f, 1000, 16));
    s3_url(url, sizeof(url), "l");
    TH_PATH(got, "%s/latest", th_root);
    S3CK_EXPECT(0, "push", SRC, url, "--step", "10");
    S3CK_EXPECT(0, "push", SRC, url, "--step", "20");
    S3CK_EXPECT(0, "push", SRC, url, "--step", "15");
    get_object("l/latest", got);
    text = th_read_file(got, NULL);
    cr_assert_not_null(text, "%s", th_error());
    cr_assert_str_eq(text, "step-00000020\n");
    free(text);
    S3CK_EXPECT(0, "push", SRC, url, "--step", "30", "--no-latest");
    get_object("l/latest", got);
    text = th_read_file(got, NULL);
    cr_assert_not_null(text, "%s", th_error());
    cr_assert_str_eq(text, "step-00000020\n", "--no-latest moved latest");
    free(text);
    S3CK_EXPECT(0, "pull", url, DEST);
    TH_ASSERT_TREES_EQUAL(SRC, DEST);
}

Test(s3, pushing_an_existing_name_needs_force)
{
    char url[PATH_MAX], f[PATH_MAX];
    th_run r;

    s3_begin("force");
    TH_PATH(f, "%s/w.bin", SRC);
    TH_ASSERT_OK(th_write_random(f, 5000, 17));
    s3_url(url, sizeof(url), "f");
    S3CK_EXPECT(0, "push", SRC, url, "--name", "ck");
    TH_ASSERT_OK(th_write_random(f, 7000, 18));
    s3ck(&r, "push", SRC, url, "--name", "ck", NULL);
    TH_ASSERT_EXIT(r, 8);
    TH_ASSERT_STDERR_HAS(r, "already exists");
    th_run_free(&r);
    S3CK_EXPECT(0, "push", SRC, url, "--name", "ck", "--force");
    S3CK_EXPECT(0, "pull", url, DEST, "--name", "ck");
    TH_ASSERT_TREES_EQUAL(SRC, DEST); /* the replacement, not the first push */
}

/* ---- concurrency ---- */

static pid_t spawn_s3ckpt(const char *log, ...) __attribute__((sentinel));
static pid_t spawn_s3ckpt(const char *log, ...)
{
    char *argv[S3IT_MAX_ARGS + 2];
    const char *a;
    va_list ap;
    int n = 0;
    pid_t pid;

    argv[n++] = (char *)S3CKPT_BIN;
    va_start(ap, log);
    while ((a = va_arg(ap, const char *)) && n < S3IT_MAX_ARGS)
        argv[n++] = (char *)a;
    va_end(ap);
    argv[n] = NULL;
    pid = th_spawn_bg(argv, log);
    cr_assert_gt(pid, 0, "%s", th_error());
    return pid;
}

static int wait_exit(pid_t pid)
{
    int st;

    while (waitpid(pid, &st, 0) < 0)
        cr_assert_eq(errno, EINTR, "waitpid: %s", strerror(errno));
    return WIFEXITED(st) ? WEXITSTATUS(st) : -WTERMSIG(st);
}

static char *log_text(const char *log)
{
    char *s = th_read_file(log, NULL);

    return s ? s : strdup("(no log)");
}

Test(s3, concurrent_pushes_of_one_name_have_exactly_one_winner)
{
    char url[PATH_MAX], src1[PATH_MAX], src2[PATH_MAX], f[PATH_MAX], log1[PATH_MAX], log2[PATH_MAX],
        *l1, *l2, *xml;
    pid_t p1, p2;
    int s1, s2;

    s3_begin("race");
    TH_PATH(src1, "%s/one", th_root);
    TH_PATH(src2, "%s/two", th_root);
    TH_ASSERT_OK(th_mkdirs(src1, 0755));
    TH_ASSERT_OK(th_mkdirs(src2, 0755));
    TH_PATH(f, "%s/w.bin", src1);
    TH_ASSERT_OK(th_write_random(f, 12ull << 20, 21));
    TH_PATH(f, "%s/w.bin", src2);
    TH_ASSERT_OK(th_write_random(f, 12ull << 20, 22));
    TH_PATH(f, "%s/only-in-two.txt", src2);
    TH_ASSERT_OK(th_write_text(f, "two\n"));
    s3_url(url, sizeof(url), "race");
    TH_PATH(log1, "%s/push1.log", th_root);
    TH_PATH(log2, "%s/push2.log", th_root);
    p1 = spawn_s3ckpt(log1, "push", src1, url, "--name", "ck", "--part-size", "5M", NULL);
    p2 = spawn_s3ckpt(log2, "push", src2, url, "--name", "ck", "--part-size", "5M", NULL);
    s1 = wait_exit(p1);
    s2 = wait_exit(p2);
    l1 = log_text(log1);
    l2 = log_text(log2);
    cr_assert((s1 == 0 && s2 == 8) || (s1 == 8 && s2 == 0),
              "exits %d and %d, expected one 0 and one 8\n--- push 1:\n%s\n--- push 2:\n%s", s1, s2,
              l1, l2);
    cr_assert(!strstr(l1, SK) && !strstr(l2, SK), "a secret in the output");
    free(l1);
    free(l2);
    S3CK_EXPECT(0, "pull", url, DEST);
    TH_ASSERT_TREES_EQUAL(s1 == 0 ? src1 : src2, DEST);
    S3CK_EXPECT(0, "verify", url, "--deep");
    /* the loser left nothing behind: no lock, no upload */
    xml = list_keys();
    cr_assert(!strstr(xml, ".s3ckpt-locks"), "a lock object is left:\n%s", xml);
    free(xml);
    xml = list_uploads();
    cr_assert_eq(count_str(xml, "<Upload>"), 0, "uploads left:\n%s", xml);
    free(xml);
}

/* ---- interrupted pushes ---- */

/* The UploadId of the first multipart upload in the bucket (out: 512 bytes), or 0 if none. */
static int first_upload(char *out, size_t len)
{
    char *xml = list_uploads(), *a, *b;
    int found = 0;

    a = strstr(xml, "<UploadId>");
    if (a) {
        a += strlen("<UploadId>");
        b = strstr(a, "</UploadId>");
        if (b && (size_t)(b - a) < len) {
            memcpy(out, a, (size_t)(b - a));
            out[b - a] = '\0';
            found = 1;
        }
    }
    free(xml);
    return found;
}

static double mono(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Starts s3ckpt with the arguments after log (NULL-terminated) and SIGKILLs it once the multipart
 * upload of key has at least min_parts parts in the store. Fails if the push ends first. The
 * callers push with --level 16 --no-adapt so that it runs for seconds: adaptive compression
 * would rightly never use a level that much slower than the store. */
static void push_and_kill_midway(const char *key, int min_parts, const char *log, ...)
    __attribute__((sentinel));
static void push_and_kill_midway(const char *key, int min_parts, const char *log, ...)
{
    char *argv[S3IT_MAX_ARGS + 2], id[512], q[1024];
    double t0 = mono();
    int n = 0, st, parts = 0;
    const char *a;
    va_list ap;

    argv[n++] = (char *)S3CKPT_BIN;
    va_start(ap, log);
    while ((a = va_arg(ap, const char *))) {
        cr_assert(n < S3IT_MAX_ARGS, "too many arguments");
        argv[n++] = (char *)a;
    }
    va_end(ap);
    argv[n] = NULL;
    th_bg_pid = th_spawn_bg(argv, log);
    cr_assert_gt(th_bg_pid, 0, "%s", th_error());
    for (;;) {
        pid_t w = waitpid(th_bg_pid, &st, WNOHANG);

        if (w == th_bg_pid) {
            char *l = log_text(log);

            th_bg_pid = 0;
            cr_assert_fail("the push ended (status 0x%x) before it could be killed with %d "
                           "parts uploaded (had %d):\n%s",
                           st, min_parts, parts, l);
        }
        cr_assert_lt(mono() - t0, 150.0, "no %d parts of %s after 150 s", min_parts, key);
        if (first_upload(id, sizeof(id))) {
            char *xml;

            TH_PATH(q, "%s?uploadId=%s", key, id);
            xml = s3_curl_ok("GET", q, NULL, NULL);
            parts = count_str(xml, "<Part>");
            free(xml);
            if (parts >= min_parts)
                break;
        }
        usleep(50 * 1000);
    }
    st = th_kill_reap(th_bg_pid);
    th_bg_pid = 0;
    cr_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL,
              "the push ended on its own (status 0x%x) instead of being killed", st);
}

Test(s3, killed_push_resumes_reusing_uploaded_parts, .timeout = 300)
{
    char url[PATH_MAX], full_url[PATH_MAX], old_src[PATH_MAX], old_dest[PATH_MAX], f[PATH_MAX],
        log[PATH_MAX], *xml;
    uint64_t full_parts, parts, reused;
    th_run r;

    s3_begin("resume");
    /* 60 MB at zstd level 16 takes seconds to compress, so the kill lands mid-way */
    TH_PATH(f, "%s/big.bin", SRC);
    TH_ASSERT_OK(th_write_random(f, 60ull * 1000 * 1000, 31));
    TH_PATH(old_src, "%s/old", th_root);
    TH_ASSERT_OK(th_mkdirs(old_src, 0755));
    TH_PATH(f, "%s/w.bin", old_src);
    TH_ASSERT_OK(th_write_random(f, 100000, 32));
    s3_url(url, sizeof(url), "p");
    s3_url(full_url, sizeof(full_url), "full");

    /* the reference: the same push, uninterrupted, into another prefix. --no-adapt: parts
     * are reused only where the re-run compresses each chunk as the killed run did, and
     * adaptive compression decides from timings (docs/FORMAT.md) */
    s3ck(&r, "push", SRC, full_url, "--name", "ck", "--part-size", "5M", "--concurrency", "2",
         "--level", "16", "--no-adapt", "--json", NULL);
    TH_ASSERT_EXIT(r, 0);
    full_parts = json_u64(r.out, "parts_uploaded");
    cr_assert_geq(full_parts, 5, "%s", r.out);
    th_run_free(&r);

    S3CK_EXPECT(0, "push", old_src, url, "--name", "old", "--step", "1");
    /* --workers 1 only slows the run down (each chunk is compressed the same either way) */
    TH_PATH(log, "%s/killed.log", th_root);
    push_and_kill_midway("p/ck/data/big.bin", 2, log, "push", SRC, url, "--name", "ck", "--step",
                         "2", "--part-size", "5M", "--concurrency", "2", "--level", "16",
                         "--no-adapt", "--workers", "1", NULL);

    /* the interrupted push is invisible; the earlier checkpoint still pulls as latest */
    xml = list_uploads();
    cr_assert_geq(count_str(xml, "<Upload>"), 1, "no upload left by the killed push:\n%s", xml);
    free(xml);
    cr_assert(!key_exists("p/ck/manifest.json"), "the killed push committed a manifest");
    TH_PATH(old_dest, "%s/old-dest", th_root);
    S3CK_EXPECT(0, "pull", url, old_dest);
    TH_ASSERT_TREES_EQUAL(old_src, old_dest);
    s3ck(&r, "ls", url, "--json", NULL);
    TH_ASSERT_EXIT(r, 0);
    cr_assert_eq(th_json_array_len(r.out), 1, "ls lists the unfinished push: %s", r.out);
    th_run_free(&r);

    /* the re-run completes the push and keeps the parts already in the store */
    s3ck(&r, "push", SRC, url, "--name", "ck", "--step", "2", "--part-size", "5M", "--concurrency",
         "2", "--level", "16", "--no-adapt", "--json", NULL);
    TH_ASSERT_EXIT(r, 0);
    parts = json_u64(r.out, "parts_uploaded");
    reused = json_u64(r.out, "parts_reused");
    cr_assert_gt(reused, 0, "the re-run reused no part: %s", r.out);
    cr_assert_lt(parts, full_parts, "the re-run uploaded %llu parts, a full push %llu: %s",
                 (unsigned long long)parts, (unsigned long long)full_parts, r.out);
    th_run_free(&r);
    xml = list_uploads();
    cr_assert_eq(count_str(xml, "<Upload>"), 0, "uploads left after the re-run:\n%s", xml);
    free(xml);
    S3CK_EXPECT(0, "pull", url, DEST);
    TH_ASSERT_TREES_EQUAL(SRC, DEST);
    S3CK_EXPECT(0, "verify", url, "--deep");
}

Test(s3, cleanup_aborts_the_uploads_of_a_killed_push, .timeout = 240)
{
    char url[PATH_MAX], f[PATH_MAX], log[PATH_MAX], *xml;
    th_run r;

    s3_begin("cleanup");
    TH_PATH(f, "%s/big.bin", SRC);
    TH_ASSERT_OK(th_write_random(f, 40ull * 1000 * 1000, 41));
    s3_url(url, sizeof(url), "c");
    TH_PATH(log, "%s/killed.log", th_root);
    push_and_kill_midway("c/ck/data/big.bin", 1, log, "push", SRC, url, "--name", "ck",
                         "--part-size", "5M", "--level", "16", "--no-adapt", "--workers", "1",
                         NULL);
    xml = list_uploads();
    cr_assert_eq(count_str(xml, "<Upload>"), 1, "%s", xml);
    free(xml);

    /* the default age (24 h) spares a fresh upload; --dry-run only lists */
    S3CK_EXPECT(0, "cleanup", url);
    s3ck(&r, "cleanup", url, "--older-than", "0", "--dry-run", NULL);
    TH_ASSERT_EXIT(r, 0);
    cr_assert(strstr(r.out, "ck/data/big.bin"), "--dry-run does not name the upload:\n%s", r.out);
    th_run_free(&r);
    xml = list_uploads();
    cr_assert_eq(count_str(xml, "<Upload>"), 1, "cleanup without --older-than 0 aborted:\n%s", xml);
    free(xml);

    s3ck(&r, "cleanup", url, "--older-than", "0", NULL);
    TH_ASSERT_EXIT(r, 0);
    cr_assert(strstr(r.out, "ck/data/big.bin"), "cleanup does not name the upload:\n%s", r.out);
    th_run_free(&r);
    xml = list_uploads();
    cr_assert_eq(count_str(xml, "<Upload>"), 0, "uploads left after cleanup:\n%s", xml);
    free(xml);
    /* a push of the name still works afterwards */
    S3CK_EXPECT(0, "push", SRC, url, "--name", "ck", "--part-size", "5M");
    S3CK_EXPECT(0, "pull", url, DEST);
    TH_ASSERT_TREES_EQUAL(SRC, DEST);
}

/* rm --help: "Also cleans up what an unfinished push of that name left behind" - on S3 that is
 * its finished data objects, its lock and its incomplete multipart uploads. */
Test(s3, rm_of_a_killed_push_removes_its_objects_and_uploads, .timeout = 240)
{
    char url[PATH_MAX], f[PATH_MAX], log[PATH_MAX], *xml;

    s3_begin("rm-killed");
    TH_PATH(f, "%s/a-small.bin", SRC); /* finished before the big one starts */
    TH_ASSERT_OK(th_write_random(f, 3000, 42));
    TH_PATH(f, "%s/big.bin", SRC);
    TH_ASSERT_OK(th_write_random(f, 40ull * 1000 * 1000, 43));
    s3_url(url, sizeof(url), "r");
    TH_PATH(log, "%s/killed.log", th_root);
    push_and_kill_midway("r/ck/data/big.bin", 1, log, "push", SRC, url, "--name", "ck",
                         "--part-size", "5M", "--level", "16", "--no-adapt", "--workers", "1",
                         NULL);
    S3CK_EXPECT(0, "rm", url, "--name", "ck");
    xml = list_keys();
    cr_assert(!strstr(xml, "<Key>r/"), "rm left objects of the unfinished push:\n%s", xml);
    free(xml);
    xml = list_uploads();
    cr_assert_eq(count_str(xml, "<Upload>"), 0,
                 "rm left the unfinished push's multipart upload:\n%s", xml);
    free(xml);
}

/* ---- interoperability with aws-cli ---- */

static void need_aws_cli(void)
{
    if (access("/usr/bin/aws", X_OK))
        cr_skip_test("aws-cli v2 is not installed at "
                     "/usr/bin/aws"
                     " (scripts/rgw install --aws)");
    if (access("/usr/bin/zstd", X_OK))
        cr_skip_test("the zstd CLI is not installed at "
                     "/usr/bin/zstd");
}

Test(s3, data_object_read_by_aws_cli_decompresses_with_zstd)
{
    char url[PATH_MAX], f[PATH_MAX], obj[PATH_MAX], out[PATH_MAX];
    char *argv[] = {(char *)"/bin/sh",
                    (char *)"-c",
                    (char *)"\"$1\" s3 cp \"$2\" - --endpoint-url \"$3\" --region \"$4\" "
                            "--only-show-errors | \"$5\" -d -c > \"$6\"",
                    (char *)"sh",
                    (char *)"/usr/bin/aws",
                    obj,
                    EP,
                    REGION,
                    (char *)"/usr/bin/zstd",
                    out,
                    NULL};
    th_run r;

    s3_begin("aws-read");
    need_aws_cli();
    TH_PATH(f, "%s/m.f32", SRC);
    TH_ASSERT_OK(th_write_floats(f, (9u << 20) + 3, 51)); /* 3 chunks */
    s3_url(url, sizeof(url), "ck");
    S3CK_EXPECT(0, "push", SRC, url, "--name", "m1", "--filter",
                "none"); /* zstd -d: no ungrouping */
    TH_PATH(obj, "s3://%s/ck/m1/data/m.f32", BUCKET);
    TH_PATH(out, "%s/unzstd.bin", th_root);
    TH_ASSERT_OK(th_run_argv(&r, argv, NULL));
    TH_ASSERT_EXIT(r, 0);
    th_run_free(&r);
    TH_ASSERT_TREES_EQUAL(f, out);
}

Test(s3, ls_and_pull_ignore_foreign_objects_uploaded_by_aws_cli)
{
    static const char *const foreign[] = {"ck/readme.txt", "ck/notack/x", "ck/ck1/extra.bin",
                                          "ck/.hidden", "top-level.txt"};
    char url[PATH_MAX], root_url[PATH_MAX], f[PATH_MAX], dst[PATH_MAX];
    char *argv[] = {(char *)"/usr/bin/aws",
                    (char *)"s3",
                    (char *)"cp",
                    (char *)"--only-show-errors",
                    (char *)"--endpoint-url",
                    EP,
                    (char *)"--region",
                    REGION,
                    f,
                    dst,
                    NULL};
    th_run r;
    size_t i;

    s3_begin("aws-foreign");
    need_aws_cli();
    make_mixed_tree(SRC, 52);
    s3_url(url, sizeof(url), "ck");
    s3_url(root_url, sizeof(root_url), NULL);
    S3CK_EXPECT(0, "push", SRC, url, "--name", "ck1");
    TH_PATH(f, "%s/foreign.txt", th_root);
    TH_ASSERT_OK(th_write_text(f, "not a checkpoint\n"));
    for (i = 0; i < sizeof(foreign) / sizeof(foreign[0]); i++) {
        TH_PATH(dst, "s3://%s/%s", BUCKET, foreign[i]);
        TH_ASSERT_OK(th_run_argv(&r, argv, NULL));
        TH_ASSERT_EXIT(r, 0);
        th_run_free(&r);
    }
    cr_assert(key_exists("ck/notack/x"), "aws-cli did not upload");

    s3ck(&r, "ls", url, "--json", NULL);
    TH_ASSERT_EXIT(r, 0);
    cr_assert_eq(th_json_array_len(r.out), 1, "ls lists foreign objects: %s", r.out);
    cr_assert(strstr(r.out, "\"name\":\"ck1\""), "%s", r.out);
    th_run_free(&r);
    s3ck(&r, "ls", root_url, "--json", NULL);
    TH_ASSERT_EXIT(r, 0);
    cr_assert_eq(th_json_array_len(r.out), 0, "ls of the bucket root: %s", r.out);
    th_run_free(&r);
    S3CK_EXPECT(0, "pull", url, DEST);
    TH_ASSERT_TREES_EQUAL(SRC, DEST);
    S3CK_EXPECT(0, "verify", url, "--deep");
}
