/*
 * test_roundtrip - the real s3ckpt CLI against a file store: what is pushed comes back byte for
 * byte and mode for mode, and the catalog commands (ls, show, verify, rm, prune, latest) do what
 * their help says.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "helpers.h"

TestSuite(roundtrip, .init = th_setup, .fini = th_teardown, .timeout = 180);

/* Paths every test uses, under its own temp directory. */
static char SRC[PATH_MAX], STORE[PATH_MAX], URL[PATH_MAX], DEST[PATH_MAX];

static void paths(void)
{
    TH_PATH(SRC, "%s/src", th_root);
    TH_PATH(STORE, "%s/store", th_root);
    TH_PATH(DEST, "%s/dest", th_root);
    th_store_url(URL, sizeof(URL), STORE);
    TH_ASSERT_OK(th_mkdirs(SRC, 0755));
}

static void file_in(char *out, size_t len, const char *dir, const char *rel)
{
    th_path(out, len, "%s/%s", dir, rel);
}

/* The entry of show --json for path, as a malloc'ed JSON object. */
static char *show_entry(const char *name, const char *path)
{
    th_run r;
    char *e;

    TH_ASSERT_OK(th_s3ckpt(&r, "show", URL, "--name", name, "--json", NULL));
    TH_ASSERT_EXIT(r, 0);
    e = th_json_object_with(r.out, "path", path);
    cr_assert_not_null(e, "show --json has no entry \"%s\":\n%s", path, r.out);
    th_run_free(&r);
    return e;
}

static uint64_t entry_u64(const char *obj, const char *key)
{
    uint64_t v = 0;

    cr_assert_eq(th_json_u64(obj, key, &v), 0, "%s", th_error());
    return v;
}

static void push_pull_compare(const char *chunk_size)
{
    if (chunk_size)
        TH_S3CKPT_EXPECT(0, "push", SRC, URL, "--name", "ck", "--chunk-size", chunk_size);
    else
        TH_S3CKPT_EXPECT(0, "push", SRC, URL, "--name", "ck");
    TH_S3CKPT_EXPECT(0, "pull", URL, DEST, "--name", "ck");
    TH_ASSERT_TREES_EQUAL(SRC, DEST);
}

static char *latest(void)
{
    char p[PATH_MAX];
    char *s;

    file_in(p, sizeof(p), STORE, "latest");
    s = th_read_file(p, NULL);
    cr_assert_not_null(s, "%s", th_error());
    return s;
}

static void assert_latest(const char *name)
{
    char want[300], *s = latest();

    snprintf(want, sizeof(want), "%s\n", name);
    cr_assert_str_eq(s, want, "latest holds \"%s\", expected \"%s\"", s, want);
    free(s);
}

/* ---- sizes and chunk boundaries ---- */

Test(roundtrip, empty_file_comes_back_empty)
{
    char f[PATH_MAX], *e;

    paths();
    file_in(f, sizeof(f), SRC, "empty.bin");
    TH_ASSERT_OK(th_write_text(f, ""));
    push_pull_compare(NULL);
    e = show_entry("ck", "empty.bin");
    cr_assert_eq(entry_u64(e, "size"), 0);
    cr_assert_eq(entry_u64(e, "chunks"), 0);
    free(e);
}

Test(roundtrip, one_byte_file_comes_back)
{
    char f[PATH_MAX], *e;

    paths();
    file_in(f, sizeof(f), SRC, "one.bin");
    TH_ASSERT_OK(th_write_text(f, "\x7f"));
    push_pull_compare(NULL);
    e = show_entry("ck", "one.bin");
    cr_assert_eq(entry_u64(e, "size"), 1);
    cr_assert_eq(entry_u64(e, "chunks"), 1);
    free(e);
}

Test(roundtrip, file_of_exactly_one_chunk_is_one_chunk)
{
    char f[PATH_MAX], *e;

    paths();
    file_in(f, sizeof(f), SRC, "w.bin");
    TH_ASSERT_OK(th_write_random(f, 65536, 11));
    push_pull_compare("64K");
    e = show_entry("ck", "w.bin");
    cr_assert_eq(entry_u64(e, "size"), 65536);
    cr_assert_eq(entry_u64(e, "chunks"), 1, "a 65536-byte file at 64K chunks: %s", e);
    free(e);
}

Test(roundtrip, one_chunk_plus_one_byte_is_two_chunks)
{
    char f[PATH_MAX], *e;

    paths();
    file_in(f, sizeof(f), SRC, "w.bin");
    TH_ASSERT_OK(th_write_random(f, 65537, 12));
    push_pull_compare("64K");
    e = show_entry("ck", "w.bin");
    cr_assert_eq(entry_u64(e, "size"), 65537);
    cr_assert_eq(entry_u64(e, "chunks"), 2, "a 65537-byte file at 64K chunks: %s", e);
    free(e);
}

Test(roundtrip, large_float32_file_comes_back, .timeout = 600)
{
    const uint64_t size = 300ull * 1000 * 1000; /* 71.5 chunks of 4 MiB: a short last one */
    char f[PATH_MAX], *e;

    paths();
    file_in(f, sizeof(f), SRC, "weights.f32");
    TH_ASSERT_OK(th_write_floats(f, size, 13));
    {
        th_run r;
        uint64_t v = 0;

        /* --no-adapt: a store faster than the compressor (a sanitizer build against the page
         * cache) would rightly get raw chunks, and this test is about the codec */
        TH_ASSERT_OK(th_s3ckpt(&r, "push", SRC, URL, "--name", "ck", "--no-adapt", "--json", NULL));
        TH_ASSERT_EXIT(r, 0);
        cr_assert_eq(th_json_u64(r.out, "raw_bytes", &v), 0, "%s", th_error());
        cr_assert_eq(v, size);
        cr_assert_eq(th_json_u64(r.out, "files", &v), 0, "%s", th_error());
        cr_assert_eq(v, 1);
        th_run_free(&r);
    }
    TH_S3CKPT_EXPECT(0, "pull", URL, DEST, "--name", "ck");
    TH_ASSERT_TREES_EQUAL(SRC, DEST);
    e = show_entry("ck", "weights.f32");
    cr_assert_eq(entry_u64(e, "size"), size);
    cr_assert_eq(entry_u64(e, "chunks"), (size + (4u << 20) - 1) / (4u << 20));
    cr_assert_lt(entry_u64(e, "stored_bytes"), size, "float32 data did not compress: %s", e);
    free(e);
}

Test(roundtrip, sparse_file_comes_back_sparse, .timeout = 300)
{
    const uint64_t size = 2ull << 30, block = 1u << 20;
    const uint64_t offs[] = {0, (1ull << 30) + 12345, size - block};
    char f[PATH_MAX], g[PATH_MAX];
    struct stat sb;

    paths();
    file_in(f, sizeof(f), SRC, "sparse.bin");
    TH_ASSERT_OK(th_write_sparse(f, size, offs, 3, block, 14));
    push_pull_compare(NULL);
    file_in(g, sizeof(g), DEST, "sparse.bin");
    cr_assert_eq(stat(g, &sb), 0);
    cr_assert_eq((uint64_t)sb.st_size, size);
    /* 3 MiB of data touches at most 6 chunks of 4 MiB; everything else must stay a hole */
    cr_assert_lt((uint64_t)sb.st_blocks * 512, 64ull << 20,
                 "restored file allocates %llu bytes of %llu: holes were filled",
                 (unsigned long long)sb.st_blocks * 512, (unsigned long long)size);
}

/* ---- trees, names, modes ---- */

Test(roundtrip, thousand_small_files_in_nested_dirs_come_back)
{
    char d[PATH_MAX], f[PATH_MAX];
    th_run r;
    uint64_t files = 0;
    char *top;
    int i, j, k;

    paths();
    for (i = 0; i < 10; i++) {
        for (j = 0; j < 10; j++) {
            TH_PATH(d, "%s/shard-%02d/part-%02d", SRC, i, j);
            TH_ASSERT_OK(th_mkdirs(d, 0755));
            for (k = 0; k < 10; k++) {
                int n = i * 100 + j * 10 + k;

                TH_PATH(f, "%s/tensor-%04d.bin", d, n);
                TH_ASSERT_OK(th_write_random(f, (uint64_t)(n * 37 % 3001), (uint64_t)n));
            }
        }
    }
    push_pull_compare(NULL);
    TH_ASSERT_OK(th_s3ckpt(&r, "show", URL, "--name", "ck", "--json", NULL));
    TH_ASSERT_EXIT(r, 0);
    top = strdup(r.out);
    cr_assert_eq(th_json_u64(top, "files", &files), 0, "%s", th_error());
    cr_assert_eq(files, 1000);
    free(top);
    th_run_free(&r);
}

Test(roundtrip, nested_empty_dirs_come_back)
{
    char d[PATH_MAX], f[PATH_MAX];

    paths();
    TH_PATH(d, "%s/a/b/c", SRC);
    TH_ASSERT_OK(th_mkdirs(d, 0755));
    TH_PATH(d, "%s/a/empty", SRC);
    TH_ASSERT_OK(th_mkdirs(d, 0755));
    TH_PATH(d, "%s/z/y", SRC);
    TH_ASSERT_OK(th_mkdirs(d, 0755));
    TH_PATH(f, "%s/a/file.bin", SRC);
    TH_ASSERT_OK(th_write_random(f, 1000, 15));
    push_pull_compare(NULL);
    TH_PATH(d, "%s/a/b/c", DEST);
    cr_assert_eq(th_dir_count(d), 0);
}

Test(roundtrip, names_with_spaces_and_utf8_come_back)
{
    char d[PATH_MAX], f[PATH_MAX];

    paths();
    TH_PATH(d, "%s/\xc3\xbc \xc3\xb1", SRC); /* "ü ñ" */
    TH_ASSERT_OK(th_mkdirs(d, 0755));
    TH_PATH(f, "%s/\xe6\x97\xa5\xe6\x9c\xac.bin", d); /* "日本.bin" */
    TH_ASSERT_OK(th_write_random(f, 5000, 16));
    TH_PATH(f, "%s/with  two spaces .txt", SRC);
    TH_ASSERT_OK(th_write_text(f, "hello\n"));
    push_pull_compare(NULL);
    TH_PATH(f, "%s/\xc3\xbc \xc3\xb1/\xe6\x97\xa5\xe6\x9c\xac.bin", DEST);
    cr_assert(th_exists(f), "%s was not restored", f);
}

Test(roundtrip, file_and_dir_modes_are_kept)
{
    static const struct {
        const char *name;
        mode_t mode;
    } files[] = {{"private.bin", 0600}, {"group.bin", 0640}, {"run.sh", 0755}, {"ro.txt", 0444}};
    char f[PATH_MAX], d[PATH_MAX];
    struct stat sb;
    size_t i;

    paths();
    for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
        file_in(f, sizeof(f), SRC, files[i].name);
        TH_ASSERT_OK(th_write_random(f, 100 + i, 17 + i));
        cr_assert_eq(chmod(f, files[i].mode), 0);
    }
    TH_PATH(d, "%s/locked", SRC);
    TH_ASSERT_OK(th_mkdirs(d, 0755));
    TH_PATH(f, "%s/inner.bin", d);
    TH_ASSERT_OK(th_write_random(f, 10, 30));
    cr_assert_eq(chmod(d, 0750), 0);
    push_pull_compare(NULL);
    for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
        file_in(f, sizeof(f), DEST, files[i].name);
        cr_assert_eq(stat(f, &sb), 0);
        cr_assert_eq(sb.st_mode & 07777, files[i].mode, "%s: mode %04o, expected %04o",
                     files[i].name, sb.st_mode & 07777, files[i].mode);
    }
    TH_PATH(d, "%s/locked", DEST);
    cr_assert_eq(stat(d, &sb), 0);
    cr_assert_eq(sb.st_mode & 07777, 0750, "dir mode %04o", sb.st_mode & 07777);
}

Test(roundtrip, single_file_source_is_restored_under_its_basename)
{
    char f[PATH_MAX], g[PATH_MAX];

    paths();
    file_in(f, sizeof(f), SRC, "model.safetensors");
    TH_ASSERT_OK(th_write_floats(f, 3u << 20, 18));
    TH_S3CKPT_EXPECT(0, "push", f, URL, "--name", "single");
    TH_S3CKPT_EXPECT(0, "pull", URL, DEST, "--name", "single");
    cr_assert_eq(th_dir_count(DEST), 1, "DEST should hold just the file");
    file_in(g, sizeof(g), DEST, "model.safetensors");
    TH_ASSERT_TREES_EQUAL(f, g);
}

/* ---- metadata, latest ---- */

Test(roundtrip, step_name_and_meta_show_in_ls_and_show)
{
    char f[PATH_MAX], v[256];
    char *o;
    th_run r;
    uint64_t step = 0;

    paths();
    file_in(f, sizeof(f), SRC, "w.bin");
    TH_ASSERT_OK(th_write_random(f, 10000, 19));
    TH_S3CKPT_EXPECT(0, "push", SRC, URL, "--name", "run-a.7", "--step", "42", "--meta", "epoch=3",
                     "--meta", "lr=0.001");
    TH_S3CKPT_EXPECT(0, "push", SRC, URL, "--step", "7");

    TH_ASSERT_OK(th_s3ckpt(&r, "ls", URL, "--json", NULL));
    TH_ASSERT_EXIT(r, 0);
    cr_assert_eq(th_json_array_len(r.out), 2, "ls --json: %s", r.out);
    o = th_json_object_with(r.out, "name", "run-a.7");
    cr_assert_not_null(o, "ls --json lacks run-a.7: %s", r.out);
    cr_assert_eq(th_json_u64(o, "step", &step), 0, "%s", th_error());
    cr_assert_eq(step, 42);
    cr_assert_eq(th_json_member(o, "meta", v, sizeof(v)), 0, "%s", th_error());
    cr_assert(strstr(v, "\"epoch\":\"3\"") && strstr(v, "\"lr\":\"0.001\""), "meta: %s", v);
    cr_assert_eq(th_json_member(o, "latest", v, sizeof(v)), 0);
    cr_assert_str_eq(v, "true");
    free(o);
    /* --step without --name names the checkpoint step-<8 digits> */
    o = th_json_object_with(r.out, "name", "step-00000007");
    cr_assert_not_null(o, "ls --json lacks step-00000007: %s", r.out);
    cr_assert_eq(th_json_u64(o, "step", &step), 0);
    cr_assert_eq(step, 7);
    free(o);
    th_run_free(&r);

    TH_ASSERT_OK(th_s3ckpt(&r, "show", URL, "--name", "run-a.7", "--json", NULL));
    TH_ASSERT_EXIT(r, 0);
    cr_assert_eq(th_json_member(r.out, "name", v, sizeof(v)), 0);
    cr_assert_str_eq(v, "run-a.7");
    cr_assert_eq(th_json_u64(r.out, "step", &step), 0);
    cr_assert_eq(step, 42);
    cr_assert_eq(th_json_member(r.out, "meta", v, sizeof(v)), 0);
    cr_assert(strstr(v, "\"epoch\":\"3\"") && strstr(v, "\"lr\":\"0.001\""), "meta: %s", v);
    th_run_free(&r);
}

Test(roundtrip, latest_moves_to_higher_steps_only)
{
    char f[PATH_MAX];
    char *o;
    th_run r;

    paths();
    file_in(f, sizeof(f), SRC, "w.bin");
    TH_ASSERT_OK(th_write_random(f, 1000, 20));
    TH_S3CKPT_EXPECT(0, "push", SRC, URL, "--step", "10");
    assert_latest("step-00000010");
    TH_S3CKPT_EXPECT(0, "push", SRC, URL, "--step", "20");
    assert_latest("step-00000020");
    TH_S3CKPT_EXPECT(0, "push", SRC, URL, "--step", "15");
    assert_latest("step-00000020");

    TH_ASSERT_OK(th_s3ckpt(&r, "ls", URL, "--json", NULL));
    TH_ASSERT_EXIT(r, 0);
    o = th_json_object_with(r.out, "name", "step-00000020");
    cr_assert(o && strstr(o, "\"latest\":true"), "ls: %s", r.out);
    free(o);
    o = th_json_object_with(r.out, "name", "step-00000015");
    cr_assert(o && strstr(o, "\"latest\":false"), "ls: %s", r.out);
    free(o);
    th_run_free(&r);
    /* pull without --name takes latest */
    TH_S3CKPT_EXPECT(0, "pull", URL, DEST);
    TH_ASSERT_TREES_EQUAL(SRC, DEST);
}

Test(roundtrip, no_latest_leaves_latest_alone)
{
    char f[PATH_MAX];

    paths();
    file_in(f, sizeof(f), SRC, "w.bin");
    TH_ASSERT_OK(th_write_random(f, 1000, 21));
    TH_S3CKPT_EXPECT(0, "push", SRC, URL, "--step", "1");
    TH_S3CKPT_EXPECT(0, "push", SRC, URL, "--step", "2", "--no-latest");
    assert_latest("step-00000001");
    TH_S3CKPT_EXPECT(0, "show", URL, "--name", "step-00000002");
}

/* ---- exists / not empty ---- */

Test(roundtrip, pushing_an_existing_name_needs_force)
{
    char f[PATH_MAX];
    th_run r;

    paths();
    file_in(f, sizeof(f), SRC, "w.bin");
    TH_ASSERT_OK(th_write_random(f, 5000, 22));
    TH_S3CKPT_EXPECT(0, "push", SRC, URL, "--name", "ck");
    TH_ASSERT_OK(th_write_random(f, 7000, 23));
    TH_ASSERT_OK(th_s3ckpt(&r, "push", SRC, URL, "--name", "ck", NULL));
    TH_ASSERT_EXIT(r, 8);
    TH_ASSERT_STDERR_HAS(r, "already exists");
    th_run_free(&r);
    TH_S3CKPT_EXPECT(0, "push", SRC, URL, "--name", "ck", "--force");
    TH_S3CKPT_EXPECT(0, "pull", URL, DEST, "--name", "ck");
    TH_ASSERT_TREES_EQUAL(SRC, DEST); /* the replacement, not the first push */
}

Test(roundtrip, pull_into_non_empty_dest_needs_force)
{
    char f[PATH_MAX], ref[PATH_MAX], partial[PATH_MAX];
    th_run r;

    paths();
    file_in(f, sizeof(f), SRC, "w.bin");
    TH_ASSERT_OK(th_write_random(f, 5000, 24));
    TH_PATH(f, "%s/sub", SRC);
    TH_ASSERT_OK(th_mkdirs(f, 0755));
    TH_PATH(f, "%s/sub/x.bin", SRC);
    TH_ASSERT_OK(th_write_random(f, 300, 25));
    TH_S3CKPT_EXPECT(0, "push", SRC, URL, "--name", "ck");

    /* DEST holds an unrelated file and an older w.bin; REF is the same, for comparing */
    TH_PATH(ref, "%s/ref", th_root);
    TH_ASSERT_OK(th_mkdirs(DEST, 0755));
    TH_ASSERT_OK(th_mkdirs(ref, 0755));
    file_in(f, sizeof(f), DEST, "keep.txt");
    TH_ASSERT_OK(th_write_text(f, "mine\n"));
    file_in(f, sizeof(f), ref, "keep.txt");
    TH_ASSERT_OK(th_write_text(f, "mine\n"));
    file_in(f, sizeof(f), DEST, "w.bin");
    TH_ASSERT_OK(th_write_text(f, "old\n"));
    file_in(f, sizeof(f), ref, "w.bin");
    TH_ASSERT_OK(th_write_text(f, "old\n"));

    TH_ASSERT_OK(th_s3ckpt(&r, "pull", URL, DEST, "--name", "ck", NULL));
    TH_ASSERT_EXIT(r, 8);
    TH_ASSERT_STDERR_HAS(r, "not empty");
    th_run_free(&r);
    TH_ASSERT_TREES_EQUAL(ref, DEST); /* untouched */
    TH_PATH(partial, "%s/.dest.s3ckpt-partial", th_root);
    cr_assert(!th_exists(partial), "a refused pull left %s", partial);

    TH_S3CKPT_EXPECT(0, "pull", URL, DEST, "--name", "ck", "--force");
    /* the checkpoint's files replace same-named ones; other files stay */
    file_in(f, sizeof(f), ref, "w.bin");
    TH_ASSERT_OK(th_write_random(f, 5000, 24));
    TH_PATH(f, "%s/sub", ref);
    TH_ASSERT_OK(th_mkdirs(f, 0755));
    TH_PATH(f, "%s/sub/x.bin", ref);
    TH_ASSERT_OK(th_write_random(f, 300, 25));
    TH_ASSERT_TREES_EQUAL(ref, DEST);
    TH_PATH(partial, "%s/.dest.s3ckpt-partial", th_root);
    cr_assert(!th_exists(partial), "pull --force left %s", partial);
}

Test(roundtrip, pull_into_existing_empty_dest_needs_no_force)
{
    char f[PATH_MAX];

    paths();
    file_in(f, sizeof(f), SRC, "w.bin");
    TH_ASSERT_OK(th_write_random(f, 5000, 26));
    TH_S3CKPT_EXPECT(0, "push", SRC, URL, "--name", "ck");
    TH_ASSERT_OK(th_mkdirs(DEST, 0755));
    TH_S3CKPT_EXPECT(0, "pull", URL, DEST, "--name", "ck");
    TH_ASSERT_TREES_EQUAL(SRC, DEST);
}

/* A data object is a standard .zst stream (frames, then a skippable chunk index): the zstd CLI
 * restores the file from it without s3ckpt. */
Test(roundtrip, data_object_decompresses_with_the_zstd_cli)
{
    char f[PATH_MAX], obj[PATH_MAX], out[PATH_MAX];
    char *argv[] = {(char *)"/usr/bin/zstd",
                    (char *)"-d",
                    (char *)"-q",
                    (char *)"-f",
                    obj,
                    (char *)"-o",
                    out,
                    NULL};
    size_t a_len, b_len;
    char *a, *b;
    th_run r;

    paths();
    file_in(f, sizeof(f), SRC, "m.f32");
    TH_ASSERT_OK(th_write_floats(f, (9u << 20) + 3, 31)); /* 3 chunks */
    TH_S3CKPT_EXPECT(0, "push", SRC, URL, "--name", "ck", "--filter", "none");
    TH_PATH(obj, "%s/ck/data/m.f32", STORE);
    TH_PATH(out, "%s/unzstd.bin", th_root);
    TH_ASSERT_OK(th_run_argv(&r, argv, NULL));
    TH_ASSERT_EXIT(r, 0);
    th_run_free(&r);
    a = th_read_file(f, &a_len);
    b = th_read_file(out, &b_len);
    cr_assert(a && b, "%s", th_error());
    cr_assert_eq(a_len, b_len, "zstd -d gave %zu bytes, the file has %zu", b_len, a_len);
    cr_assert(memcmp(a, b, a_len) == 0, "zstd -d output differs from the pushed file");
    free(a);
    free(b);
}

/* Names up to the 255-byte limit fit: in the store (temporary names are fixed-length) and as
 * DEST (the partial directory's name is shortened). */
Test(roundtrip, longest_file_and_dest_names_come_back)
{
    char name[241], f[PATH_MAX], dest[PATH_MAX];

    paths();
    memset(name, 'n', sizeof(name) - 1);
    name[sizeof(name) - 1] = '\0';
    file_in(f, sizeof(f), SRC, name);
    TH_ASSERT_OK(th_write_random(f, 5000, 28));
    TH_S3CKPT_EXPECT(0, "push", SRC, URL, "--name", "ck");
    TH_PATH(dest, "%s/%s", th_root, name);
    TH_S3CKPT_EXPECT(0, "pull", URL, dest, "--name", "ck");
    TH_ASSERT_TREES_EQUAL(SRC, dest);
}

/* DEST is created like mkdir would create it (umask 022 here), not private to the puller. */
Test(roundtrip, new_dest_gets_the_usual_directory_mode)
{
    char f[PATH_MAX];
    struct stat sb;

    paths();
    file_in(f, sizeof(f), SRC, "w.bin");
    TH_ASSERT_OK(th_write_random(f, 5000, 27));
    TH_S3CKPT_EXPECT(0, "push", SRC, URL, "--name", "ck");
    umask(022);
    TH_S3CKPT_EXPECT(0, "pull", URL, DEST, "--name", "ck");
    cr_assert_eq(stat(DEST, &sb), 0);
    cr_assert_eq(sb.st_mode & 0777, 0755, "DEST has mode %o", (unsigned)(sb.st_mode & 0777));
}

Test(roundtrip, dotfiles_and_a_file_named_like_the_pull_marker_come_back)
{
    char f[PATH_MAX];

    /* ".s3ckpt-pull" is the name of the marker pull keeps in its partial directory; a
     * checkpoint file of that name must not be taken for it */
    paths();
    file_in(f, sizeof(f), SRC, ".hidden");
    TH_ASSERT_OK(th_write_text(f, "x\n"));
    file_in(f, sizeof(f), SRC, ".s3ckpt-pull");
    TH_ASSERT_OK(th_write_text(f, "a user's file\n"));
    file_in(f, sizeof(f), SRC, "a.bin");
    TH_ASSERT_OK(th_write_random(f, 1000, 40));
    push_pull_compare(NULL);
}

Test(roundtrip, stale_partial_dir_of_another_pull_is_discarded)
{
    char f[PATH_MAX], partial[PATH_MAX];

    paths();
    file_in(f, sizeof(f), SRC, "w.bin");
    TH_ASSERT_OK(th_write_random(f, 70000, 41));
    TH_S3CKPT_EXPECT(0, "push", SRC, URL, "--name", "ck", "--chunk-size", "64K");
    /* a partial directory left by some other, interrupted pull */
    TH_PATH(partial, "%s/.dest.s3ckpt-partial", th_root);
    TH_ASSERT_OK(th_mkdirs(partial, 0700));
    /* its marker, beside it, names another store and checkpoint */
    TH_PATH(f, "%s/.dest.s3ckpt-partial.marker", th_root);
    TH_ASSERT_OK(
        th_write_text(f, "s3ckpt-pull 1\nfile:///elsewhere\nother\n2020-01-01T00:00:00Z\n"));
    file_in(f, sizeof(f), partial, "junk.bin");
    TH_ASSERT_OK(th_write_random(f, 100, 42));
    file_in(f, sizeof(f), partial, "w.bin");
    TH_ASSERT_OK(th_write_random(f, 70000, 43));
    TH_S3CKPT_EXPECT(0, "pull", URL, DEST, "--name", "ck");
    TH_ASSERT_TREES_EQUAL(SRC, DEST); /* no junk.bin, and w.bin is the checkpoint's */
    cr_assert(!th_exists(partial), "pull left %s", partial);
    cr_assert(!th_exists(f), "pull left the marker %s", f);
}

/* DEST is a mount point (another filesystem than its parent): rename cannot move a tree into
 * it, so pull stages inside it and moves each file; nothing of the staging is left. */
Test(roundtrip, pull_into_a_mount_point)
{
    char f[PATH_MAX], mnt[PATH_MAX];

    paths();
    file_in(f, sizeof(f), SRC, "sub");
    TH_ASSERT_OK(th_mkdirs(f, 0755));
    file_in(f, sizeof(f), SRC, "sub/w.bin");
    TH_ASSERT_OK(th_write_random(f, 300000, 44));
    TH_S3CKPT_EXPECT(0, "push", SRC, URL, "--name", "ck", "--chunk-size", "64K");
    TH_PATH(mnt, "%s/mnt", th_root);
    TH_ASSERT_OK(th_mkdirs(mnt, 0755));
    if (mount("tmpfs", mnt, "tmpfs", 0, "size=16m")) {
        cr_log_warn("skipped: mounting a tmpfs failed (%s); this test needs root", strerror(errno));
        cr_skip_test("mounting a tmpfs failed: %s", strerror(errno));
    }
    snprintf(th_mounted, sizeof(th_mounted), "%s", mnt);
    TH_S3CKPT_EXPECT(0, "pull", URL, mnt, "--name", "ck");
    TH_ASSERT_TREES_EQUAL(SRC, mnt);
    TH_S3CKPT_EXPECT(0, "pull", URL, mnt, "--name", "ck", "--force");
    TH_ASSERT_TREES_EQUAL(SRC, mnt);
}

Test(roundtrip, unfinished_push_is_unlisted_and_rm_cleans_it_up)
{
    char f[PATH_MAX], d[PATH_MAX];
    th_run r;

    paths();
    file_in(f, sizeof(f), SRC, "w.bin");
    TH_ASSERT_OK(th_write_random(f, 3000, 44));
    TH_S3CKPT_EXPECT(0, "push", SRC, URL, "--name", "done", "--step", "1");
    TH_S3CKPT_EXPECT(0, "push", SRC, URL, "--name", "half", "--no-latest");
    /* what a push that died before its commit point leaves: data, no manifest */
    TH_PATH(f, "%s/half/manifest.json", STORE);
    cr_assert_eq(unlink(f), 0);
    TH_ASSERT_OK(th_s3ckpt(&r, "ls", URL, "--json", NULL));
    TH_ASSERT_EXIT(r, 0);
    cr_assert_eq(th_json_array_len(r.out), 1, "ls lists an unfinished push: %s", r.out);
    cr_assert_null(strstr(r.out, "half"), "ls: %s", r.out);
    th_run_free(&r);
    TH_S3CKPT_EXPECT(3, "pull", URL, DEST, "--name", "half");
    cr_assert(!th_exists(DEST));
    TH_S3CKPT_EXPECT(3, "show", URL, "--name", "half");
    TH_S3CKPT_EXPECT(0, "rm", URL, "--name", "half");
    TH_PATH(d, "%s/half", STORE);
    cr_assert(!th_exists(d), "rm left the unfinished push's data in %s", d);
    TH_PATH(d, "%s/done/manifest.json", STORE);
    cr_assert(th_exists(d), "rm of another name touched \"done\"");
}

/* ---- verify, rm, prune ---- */

Test(roundtrip, verify_and_deep_verify_pass_on_a_good_checkpoint)
{
    char f[PATH_MAX];
    th_run r;

    paths();
    file_in(f, sizeof(f), SRC, "a.bin");
    TH_ASSERT_OK(th_write_floats(f, 9u << 20, 27));
    file_in(f, sizeof(f), SRC, "b.bin");
    TH_ASSERT_OK(th_write_random(f, 12345, 28));
    TH_S3CKPT_EXPECT(0, "push", SRC, URL, "--step", "5");
    TH_ASSERT_OK(th_s3ckpt(&r, "verify", URL, NULL));
    TH_ASSERT_EXIT(r, 0);
    cr_assert(strstr(r.out, "verified"), "verify said: %s", r.out);
    th_run_free(&r);
    TH_ASSERT_OK(th_s3ckpt(&r, "verify", URL, "--deep", "--name", "step-00000005", NULL));
    TH_ASSERT_EXIT(r, 0);
    cr_assert(strstr(r.out, "verified (deep)"), "verify --deep said: %s", r.out);
    th_run_free(&r);
}

Test(roundtrip, rm_removes_and_protects_latest)
{
    char f[PATH_MAX], d[PATH_MAX];
    th_run r;

    paths();
    file_in(f, sizeof(f), SRC, "w.bin");
    TH_ASSERT_OK(th_write_random(f, 3000, 29));
    TH_S3CKPT_EXPECT(0, "push", SRC, URL, "--step", "1");
    TH_S3CKPT_EXPECT(0, "push", SRC, URL, "--step", "2");

    TH_S3CKPT_EXPECT(0, "rm", URL, "--name", "step-00000001");
    TH_PATH(d, "%s/step-00000001", STORE);
    cr_assert(!th_exists(d), "rm left %s", d);
    TH_ASSERT_OK(th_s3ckpt(&r, "ls", URL, "--json", NULL));
    TH_ASSERT_EXIT(r, 0);
    cr_assert_null(strstr(r.out, "step-00000001"), "ls still lists it: %s", r.out);
    cr_assert_eq(th_json_array_len(r.out), 1, "ls: %s", r.out);
    th_run_free(&r);

    TH_ASSERT_OK(th_s3ckpt(&r, "rm", URL, "--name", "step-00000002", NULL));
    TH_ASSERT_EXIT(r, 8);
    TH_ASSERT_STDERR_HAS(r, "latest");
    th_run_free(&r);
    TH_PATH(f, "%s/step-00000002/manifest.json", STORE);
    cr_assert(th_exists(f), "a refused rm removed the manifest");
    assert_latest("step-00000002");

    TH_S3CKPT_EXPECT(0, "rm", URL, "--name", "step-00000002", "--force");
    TH_PATH(d, "%s/step-00000002", STORE);
    cr_assert(!th_exists(d), "rm --force left %s", d);
    TH_PATH(f, "%s/latest", STORE);
    cr_assert(!th_exists(f), "rm --force of the latest checkpoint left latest");
    TH_ASSERT_OK(th_s3ckpt(&r, "ls", URL, "--json", NULL));
    TH_ASSERT_EXIT(r, 0);
    cr_assert_eq(th_json_array_len(r.out), 0, "ls: %s", r.out);
    th_run_free(&r);
    /* and a removed name is not found */
    TH_S3CKPT_EXPECT(3, "rm", URL, "--name", "step-00000001");
}

Test(roundtrip, prune_keeps_last_n_every_k_steps_and_latest)
{
    static const char *const steps[] = {"50", "100", "150", "175", "200", "250"};
    static const char *const kept[] = {"step-00000100", "step-00000175", "step-00000200",
                                       "step-00000250"};
    static const char *const gone[] = {"step-00000050", "step-00000150"};
    char f[PATH_MAX], d[PATH_MAX], line[64];
    th_run r;
    size_t i;

    paths();
    file_in(f, sizeof(f), SRC, "w.bin");
    TH_ASSERT_OK(th_write_random(f, 2000, 31));
    /* latest ends at 175: 200 and 250 are pushed with --no-latest, so the one latest names is
     * neither among the last 2 nor a multiple of 100, and only the latest rule keeps it */
    for (i = 0; i < 6; i++) {
        if (i >= 4)
            TH_S3CKPT_EXPECT(0, "push", SRC, URL, "--step", steps[i], "--no-latest");
        else
            TH_S3CKPT_EXPECT(0, "push", SRC, URL, "--step", steps[i]);
    }
    assert_latest("step-00000175");

    TH_ASSERT_OK(th_s3ckpt(&r, "prune", URL, "--keep-last", "2", "--keep-every-steps", "100",
                           "--dry-run", NULL));
    TH_ASSERT_EXIT(r, 0);
    for (i = 0; i < 2; i++) {
        snprintf(line, sizeof(line), "would delete %s\n", gone[i]);
        cr_assert(strstr(r.out, line), "dry run lacks \"%s\":\n%s", line, r.out);
        TH_PATH(d, "%s/%s/manifest.json", STORE, gone[i]);
        cr_assert(th_exists(d), "--dry-run deleted %s", gone[i]);
    }
    th_run_free(&r);

    TH_ASSERT_OK(
        th_s3ckpt(&r, "prune", URL, "--keep-last", "2", "--keep-every-steps", "100", NULL));
    TH_ASSERT_EXIT(r, 0);
    for (i = 0; i < 2; i++) {
        snprintf(line, sizeof(line), "deleted %s\n", gone[i]);
        cr_assert(strstr(r.out, line), "prune output lacks \"%s\":\n%s", line, r.out);
        TH_PATH(d, "%s/%s", STORE, gone[i]);
        cr_assert(!th_exists(d), "prune left %s", gone[i]);
    }
    for (i = 0; i < 4; i++) {
        snprintf(line, sizeof(line), "kept %s\n", kept[i]);
        cr_assert(strstr(r.out, line), "prune output lacks \"%s\":\n%s", line, r.out);
        TH_PATH(d, "%s/%s/manifest.json", STORE, kept[i]);
        cr_assert(th_exists(d), "prune deleted %s", kept[i]);
    }
    th_run_free(&r);
    assert_latest("step-00000175");
    TH_ASSERT_OK(th_s3ckpt(&r, "ls", URL, "--json", NULL));
    TH_ASSERT_EXIT(r, 0);
    cr_assert_eq(th_json_array_len(r.out), 4, "ls after prune: %s", r.out);
    th_run_free(&r);

    /* keep-last 0 still never deletes what latest names */
    TH_S3CKPT_EXPECT(0, "prune", URL, "--keep-last", "0");
    TH_PATH(d, "%s/step-00000175/manifest.json", STORE);
    cr_assert(th_exists(d), "prune --keep-last 0 deleted the latest checkpoint");
    assert_latest("step-00000175");
}

/* ---- command line ---- */

static const char *const commands[] = {"push", "pull", "ls", "show", "verify", "rm", "prune"};

Test(roundtrip, help_of_every_command_exits_0_with_usage)
{
    th_run r;
    size_t i;

    for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
        TH_ASSERT_OK(th_s3ckpt(&r, commands[i], "--help", NULL));
        TH_ASSERT_EXIT(r, 0);
        cr_assert(strstr(r.out, "Usage:"), "%s --help printed:\n%s", commands[i], r.out);
        th_run_free(&r);
    }
    TH_ASSERT_OK(th_s3ckpt(&r, "--help", NULL));
    TH_ASSERT_EXIT(r, 0);
    cr_assert(strstr(r.out, "Usage:"), "s3ckpt --help printed:\n%s", r.out);
    th_run_free(&r);
}

Test(roundtrip, unknown_option_or_command_exits_2)
{
    th_run r;
    size_t i;

    paths();
    for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
        TH_ASSERT_OK(th_s3ckpt(&r, commands[i], "--no-such-option", URL, NULL));
        TH_ASSERT_EXIT(r, 2);
        cr_assert(strstr(r.err, "no-such-option") || strstr(r.err, "unknown option"),
                  "%s: stderr does not name the bad option:\n%s", commands[i], r.err);
        th_run_free(&r);
    }
    TH_ASSERT_OK(th_s3ckpt(&r, "frobnicate", NULL));
    TH_ASSERT_EXIT(r, 2);
    th_run_free(&r);
    TH_ASSERT_OK(th_s3ckpt(&r, NULL));
    TH_ASSERT_EXIT(r, 2);
    cr_assert(strstr(r.err, "Usage:"), "s3ckpt without a command: %s", r.err);
    th_run_free(&r);
    cr_assert(!th_exists(STORE), "a refused command created the store");
}

Test(roundtrip, bad_option_values_and_missing_arguments_exit_2)
{
    char f[PATH_MAX];
    th_run r;

    paths();
    file_in(f, sizeof(f), SRC, "w.bin");
    TH_ASSERT_OK(th_write_random(f, 100, 45));
    TH_S3CKPT_EXPECT(2, "push", SRC, URL, "--meta", "no-equals-sign");
    TH_S3CKPT_EXPECT(2, "push", SRC, URL, "--meta", "=value");
    TH_S3CKPT_EXPECT(2, "push", SRC, URL, "--step", "-1");
    TH_S3CKPT_EXPECT(2, "push", SRC, URL, "--step", "12x");
    TH_S3CKPT_EXPECT(2, "push", SRC, URL, "--chunk-size", "1K");
    TH_S3CKPT_EXPECT(2, "push", SRC, URL, "--chunk-size", "512M");
    TH_S3CKPT_EXPECT(2, "push", SRC, URL, "--workers", "0");
    TH_S3CKPT_EXPECT(2, "push", SRC, URL, "--level", "0");
    TH_S3CKPT_EXPECT(2, "push", SRC, URL, "--max-memory", "10K");
    TH_S3CKPT_EXPECT(2, "push", SRC);
    TH_S3CKPT_EXPECT(2, "push", SRC, URL, "extra");
    TH_S3CKPT_EXPECT(2, "pull", URL);
    TH_S3CKPT_EXPECT(2, "ls");
    TH_S3CKPT_EXPECT(2, "rm", URL);
    TH_S3CKPT_EXPECT(2, "prune", URL);
    TH_S3CKPT_EXPECT(2, "prune", URL, "--keep-last", "2", "--keep-every-steps", "0");
    cr_assert(!th_exists(STORE), "a refused command created the store");
    /* the same push with good values works */
    TH_ASSERT_OK(th_s3ckpt(&r, "push", SRC, URL, "--meta", "k=v=w", "--step", "3", "--chunk-size",
                           "64K", "--workers", "1", "--level", "3", "--max-memory", "16M", NULL));
    TH_ASSERT_EXIT(r, 0);
    th_run_free(&r);
}

/* bf16 from a float32 file: the top two bytes of every value. */
static void write_bf16(const char *path, const char *from_f32)
{
    size_t n, i;
    unsigned char *f = (unsigned char *)th_read_file(from_f32, &n), *h;

    cr_assert_not_null(f, "%s", th_error());
    h = malloc(n / 2 + 1);
    cr_assert_not_null(h);
    for (i = 0; i + 4 <= n; i += 4)
        memcpy(h + i / 2, f + i + 2, 2);
    TH_ASSERT_OK(th_write_bytes(path, h, n / 4 * 2));
    free(f);
    free(h);
}

static void assert_filter(const char *path, const char *want)
{
    char *e = show_entry("ck", path), got[32];

    cr_assert_eq(th_json_member(e, "filter", got, sizeof(got)), 0, "%s", th_error());
    cr_assert_str_eq(got, want, "%s: filter %s, expected %s", path, got, want);
    free(e);
}

Test(roundtrip, auto_filter_groups_float32_and_bf16_bytes_and_leaves_other_files_alone)
{
    char f[PATH_MAX], h[PATH_MAX], r[PATH_MAX], t[PATH_MAX];

    paths();
    file_in(f, sizeof(f), SRC, "w.f32");
    file_in(h, sizeof(h), SRC, "w.bf16");
    file_in(r, sizeof(r), SRC, "r.bin");
    file_in(t, sizeof(t), SRC, "state.json");
    TH_ASSERT_OK(th_write_floats(f, (6u << 20) + 2, 41)); /* a tail that is no whole value */
    write_bf16(h, f);
    TH_ASSERT_OK(th_write_random(r, 3u << 20, 42));
    TH_ASSERT_OK(th_write_text(t, "{\"epoch\": 3, \"step\": 1200, \"lr\": 0.0003}\n"));
    push_pull_compare(NULL);
    assert_filter("w.f32", "float4");
    assert_filter("w.bf16", "float2");
    assert_filter("r.bin", "none");
    assert_filter("state.json", "none");
    TH_S3CKPT_EXPECT(0, "verify", URL, "--name", "ck", "--deep");
}

Test(roundtrip, every_explicit_filter_is_lossless_on_any_data)
{
    static const char *const filters[] = {"none", "bytes2", "bytes4", "float2", "float4"};
    char f[PATH_MAX], r[PATH_MAX], dest[PATH_MAX], name[16];
    size_t i;

    paths();
    file_in(f, sizeof(f), SRC, "w.f32");
    file_in(r, sizeof(r), SRC, "odd.bin");
    TH_ASSERT_OK(th_write_floats(f, (5u << 20) + 1, 43));
    TH_ASSERT_OK(th_write_random(r, 70001, 44));
    for (i = 0; i < sizeof(filters) / sizeof(filters[0]); i++) {
        snprintf(name, sizeof(name), "ck-%s", filters[i]);
        TH_S3CKPT_EXPECT(0, "push", SRC, URL, "--name", name, "--filter", filters[i]);
        TH_PATH(dest, "%s/dest-%s", th_root, filters[i]);
        TH_S3CKPT_EXPECT(0, "pull", URL, dest, "--name", name);
        TH_ASSERT_TREES_EQUAL(SRC, dest);
    }
}

Test(roundtrip, unknown_filter_is_a_usage_error)
{
    char f[PATH_MAX];

    paths();
    file_in(f, sizeof(f), SRC, "a.bin");
    TH_ASSERT_OK(th_write_random(f, 100, 45));
    TH_S3CKPT_EXPECT(2, "push", SRC, URL, "--filter", "bitshuffle");
    cr_assert(!th_exists(STORE) || th_dir_count(STORE) == 0);
}

Test(roundtrip, no_adapt_compresses_every_chunk_as_asked)
{
    char f[PATH_MAX];
    uint64_t raw = 1;
    th_run r;

    paths();
    file_in(f, sizeof(f), SRC, "w.f32");
    TH_ASSERT_OK(th_write_floats(f, 40u << 20, 46));
    TH_ASSERT_OK(th_s3ckpt(&r, "push", SRC, URL, "--name", "ck", "--no-adapt", "--json", NULL));
    TH_ASSERT_EXIT(r, 0);
    cr_assert_eq(th_json_u64(r.out, "chunks_raw", &raw), 0, "%s", th_error());
    cr_assert_eq(raw, 0, "--no-adapt stored %llu chunks raw", (unsigned long long)raw);
    th_run_free(&r);
}

/* A compressor far slower than the store (zstd level 19 against a local disk): adaptive
 * compression stores most chunks with less effort, and the checkpoint still restores exactly. */
Test(roundtrip, adaptive_compression_backs_off_when_the_store_is_faster_than_the_compressor)
{
    char f[PATH_MAX];
    uint64_t full = 0, fast = 0, raw = 0, chunks = 0;
    th_run r;

    paths();
    file_in(f, sizeof(f), SRC, "w.bin");
    TH_ASSERT_OK(th_write_floats(f, 40u << 20, 47));
    TH_ASSERT_OK(th_s3ckpt(&r, "push", SRC, URL, "--name", "ck", "--level", "19", "--filter",
                           "none", "--chunk-size", "1M", "--json", NULL));
    TH_ASSERT_EXIT(r, 0);
    cr_assert_eq(th_json_u64(r.out, "chunks_full", &full), 0, "%s", th_error());
    cr_assert_eq(th_json_u64(r.out, "chunks_fast", &fast), 0, "%s", th_error());
    cr_assert_eq(th_json_u64(r.out, "chunks_raw", &raw), 0, "%s", th_error());
    cr_assert_eq(th_json_u64(r.out, "chunks", &chunks), 0, "%s", th_error());
    cr_assert_eq(full + fast + raw, chunks, "%s", r.out);
    cr_assert_geq(fast + raw, chunks / 4, "level 19 kept for nearly every chunk: %s", r.out);
    th_run_free(&r);
    TH_S3CKPT_EXPECT(0, "pull", URL, DEST, "--name", "ck");
    TH_ASSERT_TREES_EQUAL(SRC, DEST);
}
