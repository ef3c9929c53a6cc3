/*
 * test_badinput - the real s3ckpt CLI against damaged stores, hostile manifests, bad command
 * lines and a full disk. Each case asserts the exit code and what stderr says, and that nothing
 * appears under the final destination name (nor anywhere outside it).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "helpers.h"

TestSuite(badinput, .init = th_setup, .fini = th_teardown, .timeout = 180);

static char SRC[PATH_MAX], STORE[PATH_MAX], URL[PATH_MAX], OUT[PATH_MAX], DEST[PATH_MAX],
    MAN[PATH_MAX];

static void paths(void)
{
    TH_PATH(SRC, "%s/src", th_root);
    TH_PATH(STORE, "%s/store", th_root);
    TH_PATH(OUT, "%s/out", th_root);
    TH_PATH(DEST, "%s/dest", OUT);
    TH_PATH(MAN, "%s/ck/manifest.json", STORE);
    th_store_url(URL, sizeof(URL), STORE);
    TH_ASSERT_OK(th_mkdirs(SRC, 0755));
    TH_ASSERT_OK(th_mkdirs(OUT, 0755));
}

/* Checkpoint "ck": a.bin of size_a random bytes and, if size_b, b.bin of size_b. */
static void make_ck(uint64_t size_a, uint64_t size_b)
{
    char f[PATH_MAX];

    paths();
    TH_PATH(f, "%s/a.bin", SRC);
    TH_ASSERT_OK(th_write_random(f, size_a, 101));
    if (size_b) {
        TH_PATH(f, "%s/b.bin", SRC);
        TH_ASSERT_OK(th_write_random(f, size_b, 102));
    }
    TH_S3CKPT_EXPECT(0, "push", SRC, URL, "--name", "ck");
}

static void data_object(char *out, size_t len, const char *file)
{
    th_path(out, len, "%s/ck/data/%s", STORE, file);
}

/* Replaces `from` by `to` in the manifest, asserting it occurs exactly `count` times. */
static void edit_manifest(const char *from, const char *to, int count)
{
    int n = th_file_replace(MAN, from, to);

    cr_assert_eq(n, count, "manifest edit \"%s\" -> \"%s\": %d matches, expected %d (%s)", from, to,
                 n, count, n < 0 ? th_error() : "format changed?");
}

/* pull --name ck into DEST: asserts the exit code, that stderr holds one of the needles, and
 * that DEST does not exist afterwards. */
static void pull_fails(int code, const char *needle, const char *alt)
{
    th_run r;

    TH_ASSERT_OK(th_s3ckpt(&r, "pull", URL, DEST, "--name", "ck", NULL));
    TH_ASSERT_EXIT(r, code);
    cr_assert(strstr(r.err, needle) || (alt && strstr(r.err, alt)),
              "%s\n  stderr lacks \"%s\"%s%s%s\n--- stderr:\n%s", r.cmd, needle,
              alt ? " (or \"" : "", alt ? alt : "", alt ? "\")" : "", r.err);
    cr_assert(!th_exists(DEST), "a failed pull left %s", DEST);
    th_run_free(&r);
}

/* A hostile manifest is refused before anything is created on disk: the destination's parent
 * stays empty (no DEST, no partial directory), and show and verify refuse it too. */
static void manifest_refused(const char *needle)
{
    th_run r;

    pull_fails(4, needle, NULL);
    cr_assert_eq(th_dir_count(OUT), 0, "a refused manifest still created something in %s", OUT);
    TH_ASSERT_OK(th_s3ckpt(&r, "show", URL, "--name", "ck", NULL));
    TH_ASSERT_EXIT(r, 4);
    TH_ASSERT_STDERR_HAS(r, needle);
    th_run_free(&r);
    TH_ASSERT_OK(th_s3ckpt(&r, "verify", URL, "--name", "ck", "--deep", NULL));
    TH_ASSERT_EXIT(r, 4);
    TH_ASSERT_STDERR_HAS(r, needle);
    th_run_free(&r);
    /* ls skips it with a warning instead of failing the whole listing */
    TH_ASSERT_OK(th_s3ckpt(&r, "ls", URL, "--json", NULL));
    TH_ASSERT_EXIT(r, 0);
    cr_assert_eq(th_json_array_len(r.out), 0, "ls lists an invalid checkpoint: %s", r.out);
    TH_ASSERT_STDERR_HAS(r, "ck");
    th_run_free(&r);
}

/* ---- damaged data objects ---- */

Test(badinput, flipped_byte_in_data_object_fails_pull_and_deep_verify)
{
    char obj[PATH_MAX];
    th_run r;

    make_ck(100000, 0);
    data_object(obj, sizeof(obj), "a.bin");
    TH_ASSERT_OK(th_flip_byte(obj, 50000)); /* inside the frame's (raw, incompressible) block */
    pull_fails(4, "digest mismatch", "checksum");
    TH_ASSERT_OK(th_s3ckpt(&r, "verify", URL, "--name", "ck", "--deep", NULL));
    TH_ASSERT_EXIT(r, 4);
    cr_assert(strstr(r.err, "digest mismatch") || strstr(r.err, "checksum"), "stderr:\n%s", r.err);
    th_run_free(&r);
}

Test(badinput, swapped_data_objects_fail_the_digest_check)
{
    char a[PATH_MAX], b[PATH_MAX], t[PATH_MAX];
    th_run r;

    /* same size, so every frame is well-formed and only the chunk digests can tell */
    make_ck(100000, 100000);
    data_object(a, sizeof(a), "a.bin");
    data_object(b, sizeof(b), "b.bin");
    TH_PATH(t, "%s.swap", a);
    cr_assert_eq(rename(a, t), 0);
    cr_assert_eq(rename(b, a), 0);
    cr_assert_eq(rename(t, b), 0);
    pull_fails(4, "digest mismatch", NULL);
    TH_ASSERT_OK(th_s3ckpt(&r, "verify", URL, "--name", "ck", "--deep", NULL));
    TH_ASSERT_EXIT(r, 4);
    TH_ASSERT_STDERR_HAS(r, "digest mismatch");
    th_run_free(&r);
}

Test(badinput, truncated_data_object_fails_with_truncated)
{
    char obj[PATH_MAX];
    struct stat sb;
    th_run r;

    make_ck(300000, 0);
    data_object(obj, sizeof(obj), "a.bin");
    cr_assert_eq(stat(obj, &sb), 0);
    cr_assert_eq(truncate(obj, sb.st_size / 2), 0); /* cuts into the frame */
    pull_fails(4, "truncated", NULL);
    TH_ASSERT_OK(th_s3ckpt(&r, "verify", URL, "--name", "ck", NULL)); /* sizes only */
    TH_ASSERT_EXIT(r, 4);
    th_run_free(&r);
    TH_ASSERT_OK(th_s3ckpt(&r, "verify", URL, "--name", "ck", "--deep", NULL));
    TH_ASSERT_EXIT(r, 4);
    TH_ASSERT_STDERR_HAS(r, "truncated");
    th_run_free(&r);
}

Test(badinput, deleted_data_object_fails_with_missing)
{
    char obj[PATH_MAX];
    th_run r;

    make_ck(100000, 5000);
    data_object(obj, sizeof(obj), "b.bin");
    cr_assert_eq(unlink(obj), 0);
    pull_fails(4, "missing", NULL);
    TH_ASSERT_OK(th_s3ckpt(&r, "verify", URL, "--name", "ck", NULL));
    TH_ASSERT_EXIT(r, 4);
    TH_ASSERT_STDERR_HAS(r, "missing");
    th_run_free(&r);
}

/* ---- hostile manifests ---- */

Test(badinput, manifest_with_dotdot_path_is_refused_and_writes_nothing_outside)
{
    int tmp_x_before = th_exists("/tmp/x");

    make_ck(1000, 0);
    edit_manifest("\"path\":\"a.bin\"", "\"path\":\"../x\"", 1);
    edit_manifest("\"key\":\"data/a.bin\"", "\"key\":\"data/../x\"", 1);
    manifest_refused("unsafe path");
    cr_assert(!th_tree_has_name(th_root, "x"), "a file named x appeared under %s", th_root);
    cr_assert_eq(th_exists("/tmp/x"), tmp_x_before, "/tmp/x appeared");
}

Test(badinput, manifest_with_absolute_path_is_refused_and_writes_nothing_outside)
{
    int etc_x_before = th_exists("/etc/x");

    make_ck(1000, 0);
    edit_manifest("\"path\":\"a.bin\"", "\"path\":\"/etc/x\"", 1);
    edit_manifest("\"key\":\"data/a.bin\"", "\"key\":\"data//etc/x\"", 1);
    manifest_refused("unsafe path");
    cr_assert_eq(th_exists("/etc/x"), etc_x_before, "/etc/x appeared");
    cr_assert(!th_tree_has_name(th_root, "x"), "a file named x appeared under %s", th_root);
}

Test(badinput, manifest_with_duplicate_paths_is_refused)
{
    make_ck(1000, 1000);
    edit_manifest("\"path\":\"b.bin\"", "\"path\":\"a.bin\"", 1);
    edit_manifest("\"key\":\"data/b.bin\"", "\"key\":\"data/a.bin\"", 1);
    manifest_refused("duplicate path");
}

Test(badinput, manifest_whose_file_size_disagrees_with_its_chunks_is_refused)
{
    make_ck(100000, 0);
    edit_manifest("\"size\":100000,", "\"size\":100001,", 1);
    edit_manifest("\"bytes\":100000,", "\"bytes\":100001,", 1); /* totals stay consistent */
    manifest_refused("raw bytes");
}

Test(badinput, manifest_whose_object_size_disagrees_with_its_chunks_is_refused)
{
    char from[96], to[96], *e, *m;
    uint64_t osize = 0;

    make_ck(100000, 0);
    m = th_read_file(MAN, NULL);
    cr_assert_not_null(m);
    e = th_json_object_with(m, "path", "a.bin");
    cr_assert_not_null(e, "manifest: %s", m);
    cr_assert_eq(th_json_u64(e, "object_size", &osize), 0, "%s", th_error());
    snprintf(from, sizeof(from), "\"object_size\":%llu,", (unsigned long long)osize);
    snprintf(to, sizeof(to), "\"object_size\":%llu,", (unsigned long long)osize + 1);
    edit_manifest(from, to, 1);
    snprintf(from, sizeof(from), "\"stored_bytes\":%llu}", (unsigned long long)osize);
    snprintf(to, sizeof(to), "\"stored_bytes\":%llu}", (unsigned long long)osize + 1);
    edit_manifest(from, to, 1);
    free(e);
    free(m);
    manifest_refused("stored lengths add up");
}

Test(badinput, manifest_whose_totals_disagree_with_entries_is_refused)
{
    make_ck(1000, 2000);
    edit_manifest("\"files\":2,", "\"files\":3,", 1);
    manifest_refused("totals");
}

Test(badinput, frame_holding_more_than_the_declared_raw_length_is_refused)
{
    char *m, *e, chunks[256], from[300], to[300];

    /* One chunk of 100000 random bytes. The manifest is edited to say the file (and its only
     * chunk) has 99900 bytes, consistently: it passes validation (the stored frame still fits
     * the bound of a 99900-byte frame), but the frame declares 100000. */
    make_ck(100000, 0);
    m = th_read_file(MAN, NULL);
    cr_assert_not_null(m);
    e = th_json_object_with(m, "path", "a.bin");
    cr_assert_not_null(e);
    cr_assert_eq(th_json_member(e, "chunks", chunks, sizeof(chunks)), 0, "%s", th_error());
    cr_assert_eq(strncmp(chunks, "[[100000,", 9), 0, "chunks: %s", chunks);
    snprintf(from, sizeof(from), "\"chunks\":%s", chunks);
    snprintf(to, sizeof(to), "\"chunks\":[[99900,%s", chunks + 9);
    edit_manifest(from, to, 1);
    edit_manifest("\"size\":100000,", "\"size\":99900,", 1);
    edit_manifest("\"bytes\":100000,", "\"bytes\":99900,", 1);
    free(e);
    free(m);
    TH_S3CKPT_EXPECT(0, "show", URL, "--name", "ck"); /* the manifest itself is valid */
    pull_fails(4, "frames declare", "decompress");
    TH_PATH(from, "%s/a.bin", DEST);
    cr_assert(!th_exists(from));
    {
        th_run r;

        TH_ASSERT_OK(th_s3ckpt(&r, "verify", URL, "--name", "ck", "--deep", NULL));
        TH_ASSERT_EXIT(r, 4);
        th_run_free(&r);
    }
}

Test(badinput, manifest_of_unknown_format_version_is_refused)
{
    th_run r;

    make_ck(1000, 0);
    edit_manifest("\"version\":1,", "\"version\":2,", 1);
    manifest_refused("version");
    TH_ASSERT_OK(th_s3ckpt(&r, "pull", URL, DEST, "--name", "ck", NULL));
    TH_ASSERT_STDERR_HAS(r, "version 2");
    th_run_free(&r);
}

Test(badinput, manifest_that_is_not_json_is_refused)
{
    size_t len;
    char *m;

    make_ck(1000, 0);
    m = th_read_file(MAN, &len);
    cr_assert_not_null(m);
    m[len / 2] = '\0';
    TH_ASSERT_OK(th_write_text(MAN, m));
    free(m);
    manifest_refused("JSON");
}

/* ---- not found, bad URLs ---- */

Test(badinput, missing_checkpoint_is_not_found)
{
    th_run r;

    make_ck(1000, 0);
    TH_ASSERT_OK(th_s3ckpt(&r, "pull", URL, DEST, "--name", "no-such-ck", NULL));
    TH_ASSERT_EXIT(r, 3);
    TH_ASSERT_STDERR_HAS(r, "no-such-ck");
    th_run_free(&r);
    cr_assert(!th_exists(DEST));
    TH_S3CKPT_EXPECT(3, "show", URL, "--name", "no-such-ck");
    TH_S3CKPT_EXPECT(3, "verify", URL, "--name", "no-such-ck");
}

Test(badinput, missing_store_is_not_found)
{
    char missing[PATH_MAX], url[PATH_MAX + 16];
    th_run r;

    paths();
    TH_PATH(missing, "/nonexistent-s3ckpt-it-%ld/store", (long)getpid());
    th_store_url(url, sizeof(url), missing);
    TH_ASSERT_OK(th_s3ckpt(&r, "pull", url, DEST, NULL));
    TH_ASSERT_EXIT(r, 3);
    TH_ASSERT_STDERR_HAS(r, "no such directory");
    th_run_free(&r);
    cr_assert(!th_exists(DEST), "pull from a missing store created %s", DEST);
    TH_S3CKPT_EXPECT(3, "pull", url, DEST, "--name", "ck");
    TH_S3CKPT_EXPECT(3, "ls", url);
    TH_S3CKPT_EXPECT(3, "show", url);
    TH_S3CKPT_EXPECT(3, "verify", url);
    cr_assert(!th_exists(missing), "a reader created the missing store %s", missing);
    cr_assert(!th_exists(DEST));
}

Test(badinput, store_without_latest_is_not_found)
{
    paths();
    TH_ASSERT_OK(th_mkdirs(STORE, 0755));
    TH_S3CKPT_EXPECT(3, "pull", URL, DEST);
    TH_S3CKPT_EXPECT(3, "show", URL);
    cr_assert(!th_exists(DEST));
}

Test(badinput, bad_store_url_is_a_usage_error)
{
    static const char *const urls[] = {"relative/store", "./store", "file://relative/store",
                                       "http://localhost:1/bucket", "file:store"};
    th_run_opts o = {.cwd = NULL};
    char f[PATH_MAX];
    th_run r;
    size_t i;

    paths();
    TH_PATH(f, "%s/a.bin", SRC);
    TH_ASSERT_OK(th_write_random(f, 100, 103));
    o.cwd = th_root; /* a relative store must not be created relative to the working dir */
    for (i = 0; i < sizeof(urls) / sizeof(urls[0]); i++) {
        TH_ASSERT_OK(th_s3ckpt_opts(&r, &o, "push", SRC, urls[i], NULL));
        TH_ASSERT_EXIT(r, 2);
        TH_ASSERT_STDERR_HAS(r, "file:///");
        th_run_free(&r);
        TH_ASSERT_OK(th_s3ckpt_opts(&r, &o, "pull", urls[i], DEST, NULL));
        TH_ASSERT_EXIT(r, 2);
        TH_ASSERT_STDERR_HAS(r, "file:///");
        th_run_free(&r);
        TH_ASSERT_OK(th_s3ckpt_opts(&r, &o, "ls", urls[i], NULL));
        TH_ASSERT_EXIT(r, 2);
        th_run_free(&r);
        TH_ASSERT_OK(th_s3ckpt_opts(&r, &o, "show", urls[i], NULL));
        TH_ASSERT_EXIT(r, 2);
        th_run_free(&r);
    }
    /* only src and out exist: no "relative", "store" or "file:store" was created */
    cr_assert_eq(th_dir_count(th_root), 2, "a bad store URL created something in %s", th_root);
    cr_assert_eq(th_dir_count(OUT), 0);
}

Test(badinput, invalid_checkpoint_names_are_usage_errors)
{
    static const char *const names[] = {"latest", ".hidden", "a/b", "../x", "", "sp ace"};
    char f[PATH_MAX];
    th_run r;
    size_t i;

    make_ck(1000, 0);
    for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        TH_ASSERT_OK(th_s3ckpt(&r, "push", SRC, URL, "--name", names[i], NULL));
        TH_ASSERT_EXIT(r, 2);
        TH_ASSERT_STDERR_HAS(r, "name");
        th_run_free(&r);
        TH_S3CKPT_EXPECT(2, "pull", URL, DEST, "--name", names[i]);
        TH_S3CKPT_EXPECT(2, "show", URL, "--name", names[i]);
        TH_S3CKPT_EXPECT(2, "verify", URL, "--name", names[i]);
        TH_S3CKPT_EXPECT(2, "rm", URL, "--name", names[i]);
    }
    cr_assert(!th_exists(DEST));
    cr_assert(!th_tree_has_name(th_root, "x"), "a file named x appeared under %s", th_root);
    TH_PATH(f, "%s/latest", STORE);
    cr_assert(th_exists(f), "latest was removed");
    cr_assert(!th_tree_has_name(STORE, "a") && !th_tree_has_name(STORE, "b") &&
                  !th_tree_has_name(STORE, "sp ace") && !th_tree_has_name(STORE, "hidden"),
              "a refused name left something in the store");
}

Test(badinput, latest_holding_garbage_is_an_integrity_error)
{
    char f[PATH_MAX];
    th_run r;

    make_ck(1000, 0);
    TH_PATH(f, "%s/latest", STORE);
    TH_ASSERT_OK(th_write_text(f, "../x\n"));
    TH_ASSERT_OK(th_s3ckpt(&r, "pull", URL, DEST, NULL));
    TH_ASSERT_EXIT(r, 4);
    TH_ASSERT_STDERR_HAS(r, "latest");
    th_run_free(&r);
    cr_assert_eq(th_dir_count(OUT), 0);
    TH_S3CKPT_EXPECT(4, "show", URL);
    TH_S3CKPT_EXPECT(4, "verify", URL);
    cr_assert(!th_tree_has_name(th_root, "x"));
    /* naming the checkpoint still works */
    TH_S3CKPT_EXPECT(0, "pull", URL, DEST, "--name", "ck");
    TH_ASSERT_TREES_EQUAL(SRC, DEST);
    /* and the next push repairs latest */
    TH_S3CKPT_EXPECT(0, "push", SRC, URL, "--name", "ck2");
    {
        char *l = th_read_file(f, NULL);

        cr_assert(l && !strcmp(l, "ck2\n"), "latest holds \"%s\" after a push", l ? l : "");
        free(l);
    }
}

Test(badinput, latest_naming_a_missing_checkpoint_is_not_found)
{
    char f[PATH_MAX];

    make_ck(1000, 0);
    TH_PATH(f, "%s/latest", STORE);
    TH_ASSERT_OK(th_write_text(f, "gone\n"));
    TH_S3CKPT_EXPECT(3, "pull", URL, DEST);
    TH_S3CKPT_EXPECT(3, "show", URL);
    cr_assert(!th_exists(DEST));
}

Test(badinput, dest_that_is_a_file_is_refused)
{
    char *s;
    th_run r;

    make_ck(1000, 0);
    TH_ASSERT_OK(th_write_text(DEST, "not a directory\n"));
    TH_ASSERT_OK(th_s3ckpt(&r, "pull", URL, DEST, "--name", "ck", "--force", NULL));
    TH_ASSERT_EXIT(r, 8);
    TH_ASSERT_STDERR_HAS(r, "not a directory");
    th_run_free(&r);
    s = th_read_file(DEST, NULL);
    cr_assert(s && !strcmp(s, "not a directory\n"), "the file at DEST was changed");
    free(s);
    TH_S3CKPT_EXPECT(2, "pull", URL, ".", "--name", "ck");
}

/* ---- sources the format cannot hold ---- */

Test(badinput, symlink_in_pushed_dir_is_refused)
{
    char f[PATH_MAX], l[PATH_MAX];
    th_run r;

    paths();
    TH_PATH(f, "%s/a.bin", SRC);
    TH_ASSERT_OK(th_write_random(f, 1000, 104));
    TH_PATH(l, "%s/sub", SRC);
    TH_ASSERT_OK(th_mkdirs(l, 0755));
    TH_PATH(l, "%s/sub/link.bin", SRC);
    cr_assert_eq(symlink("../a.bin", l), 0);
    TH_ASSERT_OK(th_s3ckpt(&r, "push", SRC, URL, "--name", "ck", NULL));
    TH_ASSERT_EXIT(r, 10);
    TH_ASSERT_STDERR_HAS(r, "symbolic link");
    TH_ASSERT_STDERR_HAS(r, "sub/link.bin");
    th_run_free(&r);
    cr_assert(!th_tree_has_name(STORE, "manifest.json"), "a refused push committed a manifest");
    TH_PATH(f, "%s/latest", STORE);
    cr_assert(!th_exists(f), "a refused push wrote latest");
}

Test(badinput, fifo_in_pushed_dir_is_refused)
{
    char f[PATH_MAX];
    th_run r;

    paths();
    TH_PATH(f, "%s/a.bin", SRC);
    TH_ASSERT_OK(th_write_random(f, 1000, 105));
    TH_PATH(f, "%s/pipe", SRC);
    cr_assert_eq(mkfifo(f, 0644), 0);
    TH_ASSERT_OK(th_s3ckpt(&r, "push", SRC, URL, "--name", "ck", NULL));
    TH_ASSERT_EXIT(r, 10);
    TH_ASSERT_STDERR_HAS(r, "FIFO");
    th_run_free(&r);
    cr_assert(!th_tree_has_name(STORE, "manifest.json"), "a refused push committed a manifest");
}

Test(badinput, control_character_in_source_name_is_refused)
{
    char f[PATH_MAX];
    th_run r;

    paths();
    TH_PATH(f, "%s/a.bin", SRC);
    TH_ASSERT_OK(th_write_random(f, 1000, 107));
    TH_PATH(f, "%s/bad\nname.bin", SRC);
    TH_ASSERT_OK(th_write_text(f, "x"));
    TH_ASSERT_OK(th_s3ckpt(&r, "push", SRC, URL, "--name", "ck", NULL));
    TH_ASSERT_EXIT(r, 10);
    TH_ASSERT_STDERR_HAS(r, "control character");
    th_run_free(&r);
    cr_assert(!th_tree_has_name(STORE, "manifest.json"), "a refused push committed a manifest");
}

Test(badinput, store_inside_pushed_dir_is_refused)
{
    char f[PATH_MAX], store[PATH_MAX], url[PATH_MAX + 16];
    th_run r;

    paths();
    TH_PATH(f, "%s/a.bin", SRC);
    TH_ASSERT_OK(th_write_random(f, 1000, 106));
    TH_PATH(store, "%s/inner-store", SRC);
    th_store_url(url, sizeof(url), store);
    TH_ASSERT_OK(th_s3ckpt(&r, "push", SRC, url, "--name", "ck", NULL));
    TH_ASSERT_EXIT(r, 2);
    TH_ASSERT_STDERR_HAS(r, "inside");
    th_run_free(&r);
    cr_assert(!th_tree_has_name(store, "manifest.json"), "the nested push was committed");
}

Test(badinput, non_utf8_file_name_and_metadata_are_refused)
{
    char f[PATH_MAX];
    th_run r;

    paths();
    TH_PATH(f, "%s/a.bin", SRC);
    TH_ASSERT_OK(th_write_random(f, 1000, 108));
    TH_ASSERT_OK(th_s3ckpt(&r, "push", SRC, URL, "--meta", "k=\xfe", NULL));
    TH_ASSERT_EXIT(r, 2);
    TH_ASSERT_STDERR_HAS(r, "UTF-8");
    th_run_free(&r);
    TH_PATH(f, "%s/bad\xff.bin", SRC);
    TH_ASSERT_OK(th_write_text(f, "x"));
    TH_ASSERT_OK(th_s3ckpt(&r, "push", SRC, URL, "--name", "ck", NULL));
    TH_ASSERT_EXIT(r, 10);
    TH_ASSERT_STDERR_HAS(r, "UTF-8");
    th_run_free(&r);
    cr_assert(!th_tree_has_name(STORE, "manifest.json"), "a refused push committed a manifest");
}

/* ---- a shared parent directory, an existing DEST ---- */

/* pull --force never writes through a symbolic link already in DEST, and never changes the
 * mode of what it points to. */
Test(badinput, force_pull_does_not_follow_a_symlinked_directory_in_dest)
{
    char f[PATH_MAX], outside[PATH_MAX], link[PATH_MAX];
    struct stat sb;
    th_run r;

    paths();
    TH_PATH(f, "%s/sub", SRC);
    TH_ASSERT_OK(th_mkdirs(f, 0755));
    TH_PATH(f, "%s/sub/b.txt", SRC);
    TH_ASSERT_OK(th_write_text(f, "b\n"));
    TH_S3CKPT_EXPECT(0, "push", SRC, URL, "--name", "ck");
    TH_PATH(outside, "%s/outside", th_root);
    TH_ASSERT_OK(th_mkdirs(outside, 0711));
    TH_ASSERT_OK(th_mkdirs(DEST, 0755));
    TH_PATH(link, "%s/sub", DEST);
    cr_assert_eq(symlink(outside, link), 0);
    TH_ASSERT_OK(th_s3ckpt(&r, "pull", URL, DEST, "--name", "ck", "--force", NULL));
    TH_ASSERT_EXIT(r, 8);
    TH_ASSERT_STDERR_HAS(r, "sub");
    th_run_free(&r);
    cr_assert_eq(th_dir_count(outside), 0, "pull wrote through the link into %s", outside);
    cr_assert_eq(stat(outside, &sb), 0);
    cr_assert_eq(sb.st_mode & 0777, 0711, "pull changed the mode of %s to %o", outside,
                 (unsigned)(sb.st_mode & 0777));
}

/* Someone who can write to DEST's parent plants a symlink where the partial directory goes
 * (and a matching marker): pull does not resume into it, and DEST becomes a real directory. */
Test(badinput, planted_symlink_at_the_partial_directory_is_not_followed)
{
    char f[PATH_MAX], victim[PATH_MAX], partial[PATH_MAX];
    struct stat sb;

    make_ck(1000, 0);
    TH_PATH(victim, "%s/victim", th_root);
    TH_ASSERT_OK(th_mkdirs(victim, 0755));
    TH_PATH(partial, "%s/.dest.s3ckpt-partial", OUT);
    cr_assert_eq(symlink(victim, partial), 0);
    TH_PATH(f, "%s/.dest.s3ckpt-partial.marker", OUT);
    cr_assert_eq(symlink("/nonexistent-marker-target", f), 0);
    TH_S3CKPT_EXPECT(0, "pull", URL, DEST, "--name", "ck");
    cr_assert_eq(th_dir_count(victim), 0, "pull wrote into the planted link's target");
    cr_assert_eq(lstat(DEST, &sb), 0);
    cr_assert(S_ISDIR(sb.st_mode), "DEST is not a real directory");
    TH_ASSERT_TREES_EQUAL(SRC, DEST);
}

/* A partial directory owned by another user (in a shared parent like /tmp) is neither resumed
 * nor deleted: the pull is refused with exit 8 and the directory's contents stay. */
Test(badinput, partial_directory_of_another_user_is_left_alone)
{
    char partial[PATH_MAX], f[PATH_MAX];
    th_run r;

    make_ck(1000, 0);
    TH_PATH(partial, "%s/.dest.s3ckpt-partial", OUT);
    TH_ASSERT_OK(th_mkdirs(partial, 0777));
    TH_PATH(f, "%s/theirs.txt", partial);
    TH_ASSERT_OK(th_write_text(f, "not yours\n"));
    cr_assert_eq(chown(partial, 2001, 2001), 0, "chown: %s", strerror(errno));
    TH_ASSERT_OK(th_s3ckpt(&r, "pull", URL, DEST, "--name", "ck", NULL));
    TH_ASSERT_EXIT(r, 8);
    TH_ASSERT_STDERR_HAS(r, "another user");
    th_run_free(&r);
    cr_assert(th_exists(f), "pull deleted another user's file %s", f);
    cr_assert(!th_exists(DEST), "a refused pull created %s", DEST);
}

/* A push in progress holds the name: a second push and an rm of it fail at once (exit 8)
 * instead of overwriting or deleting its objects. The lock is held here the way a push holds
 * it (flock on the store's lock file). */
Test(badinput, push_and_rm_of_a_name_being_pushed_fail_at_once)
{
    char f[PATH_MAX];
    th_run r;
    int fd;

    make_ck(1000, 0);
    TH_PATH(f, "%s/.s3ckpt-locks", STORE);
    TH_ASSERT_OK(th_mkdirs(f, 0755));
    TH_PATH(f, "%s/.s3ckpt-locks/ck", STORE);
    fd = open(f, O_RDWR | O_CREAT, 0644);
    cr_assert_geq(fd, 0);
    cr_assert_eq(flock(fd, LOCK_EX | LOCK_NB), 0);
    TH_ASSERT_OK(th_s3ckpt(&r, "rm", URL, "--name", "ck", "--force", NULL));
    TH_ASSERT_EXIT(r, 8);
    TH_ASSERT_STDERR_HAS(r, "being written by a push");
    th_run_free(&r);
    TH_ASSERT_OK(th_s3ckpt(&r, "push", SRC, URL, "--name", "ck", "--force", NULL));
    TH_ASSERT_EXIT(r, 8);
    TH_ASSERT_STDERR_HAS(r, "another s3ckpt process");
    th_run_free(&r);
    TH_S3CKPT_EXPECT(0, "verify", URL, "--name", "ck", "--deep"); /* untouched */
    close(fd);
    TH_S3CKPT_EXPECT(0, "rm", URL, "--name", "ck", "--force");
    cr_assert(!th_exists(f), "rm left the lock file %s", f);
}

/* A checkpoint whose chunks need more buffer memory than the bound is refused up front with
 * a hint, not allocated anyway. */
Test(badinput, chunks_larger_than_the_memory_bound_allow_are_refused)
{
    char f[PATH_MAX];
    th_run r;

    paths();
    TH_PATH(f, "%s/a.bin", SRC);
    TH_ASSERT_OK(th_write_random(f, 1000, 109));
    TH_S3CKPT_EXPECT(0, "push", SRC, URL, "--name", "ck", "--chunk-size", "64M", "--max-memory",
                     "512M");
    TH_ASSERT_OK(th_s3ckpt(&r, "pull", URL, DEST, "--name", "ck", "--max-memory", "64M", NULL));
    TH_ASSERT_EXIT(r, 2);
    TH_ASSERT_STDERR_HAS(r, "--max-memory");
    th_run_free(&r);
    cr_assert(!th_exists(DEST));
    TH_S3CKPT_EXPECT(0, "pull", URL, DEST, "--name", "ck", "--max-memory", "512M");
    TH_ASSERT_TREES_EQUAL(SRC, DEST);
}

/* ---- local I/O failures ---- */

/* A checkpoint of 30 MB of incompressible data, for the disk-full cases. */
static void make_big_ck(void)
{
    char f[PATH_MAX];
    int i;

    paths();
    for (i = 0; i < 3; i++) {
        TH_PATH(f, "%s/shard-%d.bin", SRC, i);
        TH_ASSERT_OK(th_write_random(f, 10u << 20, 110 + (uint64_t)i));
    }
    TH_S3CKPT_EXPECT(0, "push", SRC, URL, "--name", "ck");
}

static void pull_with_fsize_limit(const char *dest)
{
    th_run_opts o = {.fsize_limit = 8u << 20};
    th_run r;

    TH_ASSERT_OK(th_s3ckpt_opts(&r, &o, "pull", URL, dest, "--name", "ck", NULL));
    TH_ASSERT_EXIT(r, 5);
    TH_ASSERT_STDERR_HAS(r, "File too large");
    th_run_free(&r);
    cr_assert(!th_exists(dest), "a failed pull left %s", dest);
}

Test(badinput, full_disk_during_pull_exits_5)
{
    char mnt[PATH_MAX], dest[PATH_MAX];
    th_run r;

    make_big_ck();
    TH_PATH(mnt, "%s/small-fs", th_root);
    TH_ASSERT_OK(th_mkdirs(mnt, 0755));
    if (mount("tmpfs", mnt, "tmpfs", 0, "size=8m") == 0) {
        fprintf(stderr, "badinput::full_disk_during_pull_exits_5: method: 8 MiB tmpfs at %s\n",
                mnt);
        snprintf(th_mounted, sizeof(th_mounted), "%s", mnt);
        TH_PATH(dest, "%s/dest", mnt);
        TH_ASSERT_OK(th_s3ckpt(&r, "pull", URL, dest, "--name", "ck", NULL));
        TH_ASSERT_EXIT(r, 5);
        TH_ASSERT_STDERR_HAS(r, "No space left on device");
        th_run_free(&r);
        cr_assert(!th_exists(dest), "a failed pull left %s", dest);
        cr_assert_eq(umount(mnt), 0, "umount %s: %s", mnt, strerror(errno));
        th_mounted[0] = '\0';
    } else {
        fprintf(stderr,
                "badinput::full_disk_during_pull_exits_5: method: RLIMIT_FSIZE 8 MiB (mount "
                "failed: %s)\n",
                strerror(errno));
        TH_PATH(dest, "%s/dest", OUT);
        pull_with_fsize_limit(dest);
    }
}

Test(badinput, file_size_limit_during_pull_exits_5)
{
    make_big_ck();
    pull_with_fsize_limit(DEST);
}
