/*
 * test_chunker - how a push cuts its source: files into chunks (ck_chunk_count/ck_chunk_len)
 * and a directory tree into a sorted entry list (ck_walk_run), refusing links and special
 * files. Walk tests build a tree under a mkdtemp directory and remove it afterwards.
 */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "err.h"
#include "manifest.h"
#include "walk.h"

#define MIB ((uint64_t)1 << 20)
#define CS (4 * MIB)

/* ---- chunk arithmetic ---- */

Test(chunker, zero_bytes_have_zero_chunks)
{
    cr_assert_eq(ck_chunk_count(0, CS), 0);
}

Test(chunker, one_byte_is_one_chunk_of_one_byte)
{
    cr_assert_eq(ck_chunk_count(1, CS), 1);
    cr_assert_eq(ck_chunk_len(1, CS, 0), 1);
}

Test(chunker, exactly_one_chunk)
{
    cr_assert_eq(ck_chunk_count(CS, CS), 1);
    cr_assert_eq(ck_chunk_len(CS, CS, 0), CS);
}

Test(chunker, one_chunk_plus_one_byte)
{
    cr_assert_eq(ck_chunk_count(CS + 1, CS), 2);
    cr_assert_eq(ck_chunk_len(CS + 1, CS, 0), CS);
    cr_assert_eq(ck_chunk_len(CS + 1, CS, 1), 1);
}

Test(chunker, one_chunk_minus_one_byte)
{
    cr_assert_eq(ck_chunk_count(CS - 1, CS), 1);
    cr_assert_eq(ck_chunk_len(CS - 1, CS, 0), CS - 1);
}

Test(chunker, sizes_near_2_pow_40)
{
    uint64_t t = (uint64_t)1 << 40;

    cr_assert_eq(ck_chunk_count(t, CS), 262144);
    cr_assert_eq(ck_chunk_len(t, CS, 262143), CS);
    cr_assert_eq(ck_chunk_count(t + 5, CS), 262145);
    cr_assert_eq(ck_chunk_len(t + 5, CS, 262143), CS);
    cr_assert_eq(ck_chunk_len(t + 5, CS, 262144), 5);
    cr_assert_eq(ck_chunk_count(t - 1, CS), 262144);
    cr_assert_eq(ck_chunk_len(t - 1, CS, 262143), CS - 1);
}

Test(chunker, largest_chunk_size_fits_uint32_length)
{
    uint64_t t = (uint64_t)1 << 40;

    cr_assert_eq(ck_chunk_count(t + 1, CK_CHUNK_MAX), 4097);
    cr_assert_eq(ck_chunk_len(t + 1, CK_CHUNK_MAX, 0), (uint32_t)CK_CHUNK_MAX);
    cr_assert_eq(ck_chunk_len(t + 1, CK_CHUNK_MAX, 4096), 1);
}

Test(chunker, chunk_lengths_add_up_to_size)
{
    const uint64_t sizes[] = {1, 2, 65535, 65536, 65537, 1000000, 3 * CS - 7, 10 * CS};
    const uint64_t chunk_sizes[] = {CK_CHUNK_MIN, 100000, CS};
    size_t a, b;

    for (a = 0; a < sizeof(sizes) / sizeof(sizes[0]); a++)
        for (b = 0; b < sizeof(chunk_sizes) / sizeof(chunk_sizes[0]); b++) {
            uint64_t size = sizes[a], cs = chunk_sizes[b], n = ck_chunk_count(size, cs), i, sum = 0;

            for (i = 0; i < n; i++) {
                uint32_t len = ck_chunk_len(size, cs, i);

                cr_assert(len > 0 && len <= cs, "size %llu cs %llu chunk %llu len %u",
                          (unsigned long long)size, (unsigned long long)cs, (unsigned long long)i,
                          len);
                if (i + 1 < n)
                    cr_assert_eq(len, cs, "only the last chunk may be short");
                sum += len;
            }
            cr_assert_eq(sum, size);
        }
}

/* ---- walk ---- */

static char root[64];
static ck_err err;
static ck_walk w;

static void walk_setup(void)
{
    snprintf(root, sizeof(root), "/tmp/s3ckpt-walk-XXXXXX");
    cr_assert_not_null(mkdtemp(root));
    ck_err_init(&err);
    memset(&w, 0, sizeof(w));
}

static int rm_one(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(p);
}

static void walk_teardown(void)
{
    ck_walk_cleanup(&w);
    ck_err_cleanup(&err);
    nftw(root, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static void make_file(const char *rel, size_t size, mode_t mode)
{
    char p[256];
    int fd;

    snprintf(p, sizeof(p), "%s/%s", root, rel);
    fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    cr_assert_geq(fd, 0, "create %s", p);
    cr_assert_eq(ftruncate(fd, (off_t)size), 0);
    cr_assert_eq(fchmod(fd, mode), 0);
    close(fd);
}

static void make_dir(const char *rel, mode_t mode)
{
    char p[256];

    snprintf(p, sizeof(p), "%s/%s", root, rel);
    cr_assert_eq(mkdir(p, 0700), 0, "mkdir %s", p);
    cr_assert_eq(chmod(p, mode), 0);
}

TestSuite(walk, .init = walk_setup, .fini = walk_teardown);

Test(walk, lists_tree_sorted_with_dirs_sizes_and_modes)
{
    static const struct {
        const char *path;
        int is_dir;
        uint64_t size;
        uint32_t mode;
    } want[] = {
        {"a", 1, 0, 0750},     {"a/x.bin", 0, 100, 0600}, {"a/y", 1, 0, 0755},
        {"a/y/z", 0, 1, 0444}, {"a-c", 1, 0, 0700},       {"a.b", 0, 70000, 0644},
        {"b.txt", 0, 5, 0640},
    };
    size_t i;

    make_file("b.txt", 5, 0640);
    make_file("a.b", 70000, 0644);
    make_dir("a-c", 0700);
    make_dir("a", 0750);
    make_dir("a/y", 0755);
    make_file("a/x.bin", 100, 0600);
    make_file("a/y/z", 1, 0444);

    cr_assert_eq(ck_walk_run(&w, root, &err), S3CKPT_OK, "%s", err.msg);
    cr_assert_eq(w.n, sizeof(want) / sizeof(want[0]));
    for (i = 0; i < w.n; i++) {
        cr_assert_str_eq(w.entries[i].path, want[i].path, "entry %zu", i);
        cr_assert_eq(w.entries[i].is_dir, want[i].is_dir, "%s", want[i].path);
        cr_assert_eq(w.entries[i].size, want[i].size, "%s", want[i].path);
        cr_assert_eq(w.entries[i].mode, want[i].mode, "%s: mode %o", want[i].path,
                     w.entries[i].mode);
    }
    cr_assert_str_eq(w.base, root);
}

Test(walk, empty_directory_gives_no_entries)
{
    cr_assert_eq(ck_walk_run(&w, root, &err), S3CKPT_OK, "%s", err.msg);
    cr_assert_eq(w.n, 0);
}

Test(walk, trailing_slash_on_source_is_ignored)
{
    char src[80];
    char *local;

    make_file("f", 3, 0644);
    snprintf(src, sizeof(src), "%s//", root);
    cr_assert_eq(ck_walk_run(&w, src, &err), S3CKPT_OK, "%s", err.msg);
    cr_assert_str_eq(w.base, root);
    cr_assert_eq(w.n, 1);
    local = ck_walk_local_path(&w, &w.entries[0]);
    cr_assert_not_null(local);
    cr_assert_eq(strncmp(local, root, strlen(root)), 0);
    cr_assert_str_eq(local + strlen(root), "/f");
    free(local);
}

Test(walk, setuid_bits_are_not_recorded)
{
    make_file("tool", 1, 04755);
    cr_assert_eq(ck_walk_run(&w, root, &err), S3CKPT_OK, "%s", err.msg);
    cr_assert_eq(w.n, 1);
    cr_assert_eq(w.entries[0].mode, 0755, "mode %o", w.entries[0].mode);
}

Test(walk, single_file_source_is_one_entry_named_by_basename)
{
    char src[80];
    char *local;

    make_dir("d", 0755);
    make_file("d/model.pt", 1234, 0640);
    snprintf(src, sizeof(src), "%s/d/model.pt", root);
    cr_assert_eq(ck_walk_run(&w, src, &err), S3CKPT_OK, "%s", err.msg);
    cr_assert_eq(w.n, 1);
    cr_assert_str_eq(w.entries[0].path, "model.pt");
    cr_assert_eq(w.entries[0].is_dir, 0);
    cr_assert_eq(w.entries[0].size, 1234);
    cr_assert_eq(w.entries[0].mode, 0640);
    local = ck_walk_local_path(&w, &w.entries[0]);
    cr_assert_str_eq(local, src);
    free(local);
}

Test(walk, symlink_inside_tree_is_unsupported)
{
    char p[128];

    make_file("target", 10, 0644);
    snprintf(p, sizeof(p), "%s/link", root);
    cr_assert_eq(symlink("target", p), 0);
    cr_assert_eq(ck_walk_run(&w, root, &err), S3CKPT_EUNSUPPORTED);
    cr_assert_not_null(strstr(err.msg, "symbolic link"), "%s", err.msg);
    cr_assert_not_null(strstr(err.msg, "/link is a"), "message should name the path: %s", err.msg);
    cr_assert_eq(ck_err_status(&err), S3CKPT_EUNSUPPORTED);
}

Test(walk, symlink_to_directory_deep_in_tree_is_unsupported)
{
    char p[128];

    make_dir("sub", 0755);
    make_dir("sub/deeper", 0755);
    snprintf(p, sizeof(p), "%s/sub/deeper/escape", root);
    cr_assert_eq(symlink("/etc", p), 0);
    cr_assert_eq(ck_walk_run(&w, root, &err), S3CKPT_EUNSUPPORTED);
    cr_assert_not_null(strstr(err.msg, "sub/deeper/escape is a symbolic link"), "%s", err.msg);
}

Test(walk, symlink_as_source_is_unsupported)
{
    char p[128];

    make_dir("real", 0755);
    snprintf(p, sizeof(p), "%s/alias", root);
    cr_assert_eq(symlink("real", p), 0);
    cr_assert_eq(ck_walk_run(&w, p, &err), S3CKPT_EUNSUPPORTED);
    cr_assert_not_null(strstr(err.msg, "symbolic link"), "%s", err.msg);
}

Test(walk, fifo_is_refused)
{
    char p[128];

    snprintf(p, sizeof(p), "%s/pipe", root);
    cr_assert_eq(mkfifo(p, 0644), 0);
    cr_assert_eq(ck_walk_run(&w, root, &err), S3CKPT_EUNSUPPORTED);
    cr_assert_not_null(strstr(err.msg, "FIFO"), "%s", err.msg);
}

Test(walk, fifo_as_source_is_refused)
{
    char p[128];

    snprintf(p, sizeof(p), "%s/pipe", root);
    cr_assert_eq(mkfifo(p, 0644), 0);
    cr_assert_eq(ck_walk_run(&w, p, &err), S3CKPT_EUNSUPPORTED);
    cr_assert_not_null(strstr(err.msg, "FIFO"), "%s", err.msg);
}

Test(walk, file_name_with_control_character_is_refused)
{
    make_file("bad\nname", 1, 0644);
    cr_assert_eq(ck_walk_run(&w, root, &err), S3CKPT_EUNSUPPORTED);
    cr_assert_not_null(strstr(err.msg, "control character"), "%s", err.msg);
}

Test(walk, single_file_source_with_control_character_is_refused)
{
    char src[80];

    /* the same rule as for a file inside a pushed directory */
    make_file("bad\nname", 1, 0644);
    snprintf(src, sizeof(src), "%s/bad\nname", root);
    cr_assert_eq(ck_walk_run(&w, src, &err), S3CKPT_EUNSUPPORTED, "walk accepted \"%s\"", src);
    cr_assert_not_null(strstr(err.msg, "control character"), "%s", err.msg);
}

Test(walk, missing_source_is_not_found)
{
    char p[128];

    snprintf(p, sizeof(p), "%s/nope", root);
    cr_assert_eq(ck_walk_run(&w, p, &err), S3CKPT_ENOTFOUND);
    cr_assert_not_null(strstr(err.msg, "nope"), "%s", err.msg);
}
