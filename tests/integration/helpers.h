/*
 * helpers - shared by the CLI integration tests: temp directories, deterministic test data,
 * running the real s3ckpt binary (no shell) with its output captured, comparing trees byte for
 * byte and mode for mode, and a little JSON picking for --json output.
 *
 * Every function that can fail returns -1 (or NULL) and leaves a reason in th_error(); tests
 * assert on the return value and print that reason.
 */
#ifndef S3CKPT_IT_HELPERS_H
#define S3CKPT_IT_HELPERS_H

#include <criterion/criterion.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifndef S3CKPT_BIN
#error "S3CKPT_BIN must name the s3ckpt binary under test"
#endif

/* Reason for the last helper failure (thread-unsafe, per process; tests are single-threaded). */
const char *th_error(void);

/* ---- paths and temp directories ---- */

/* snprintf into a PATH_MAX buffer; aborts the test if it does not fit. */
#define TH_PATH(buf, ...) th_path((buf), sizeof(buf), __VA_ARGS__)
void th_path(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Creates /tmp/s3ckpt-it-<tag>-XXXXXX (mode 0755); writes its path into out (PATH_MAX). */
int th_tmpdir(char *out, const char *tag);
/* rm -rf: removes path and everything below it (no symlinks followed). 0 if gone. */
int th_rm_rf(const char *path);
/* mkdir -p with the given mode for each created component. */
int th_mkdirs(const char *path, mode_t mode);
int th_exists(const char *path); /* lstat succeeds */
/* 1 if any entry at or below root (root itself excluded) has exactly this file name. */
int th_tree_has_name(const char *root, const char *name);
/* 1 if any entry below root has a file name containing `part`; its path goes to found (may be
 * NULL, else PATH_MAX bytes). */
int th_tree_has_name_part(const char *root, const char *part, char *found);
/* Number of entries directly in dir (-1 if it cannot be read). */
int th_dir_count(const char *dir);
/* The store URL for a directory: file://<abs path>. */
void th_store_url(char *out, size_t len, const char *dir);

/* ---- test data ---- */

/* Random bytes from a seeded xoshiro256** (incompressible). */
int th_write_random(const char *path, uint64_t size, uint64_t seed);
/* float32 values distributed about like N(0, 0.02): checkpoint-like, compresses a little. */
int th_write_floats(const char *path, uint64_t size, uint64_t seed);
/* Written zeros (allocated, not sparse). */
int th_write_zeros(const char *path, uint64_t size);
/* A sparse file of apparent size `size`: ftruncate, then `n` random blocks of `block` bytes at
 * the given offsets. */
int th_write_sparse(const char *path, uint64_t size, const uint64_t *offsets, size_t n,
                    size_t block, uint64_t seed);
int th_write_text(const char *path, const char *text);
/* n bytes of data. */
int th_write_bytes(const char *path, const void *data, size_t n);
/* Whole file into a NUL-terminated malloc'ed buffer (len optional). NULL on failure. */
char *th_read_file(const char *path, size_t *len);
/* Replaces every occurrence of `from` by `to` in the file; returns the count (-1: I/O error). */
int th_file_replace(const char *path, const char *from, const char *to);
/* Flips (xor 0xff) the byte at offset off; off < 0 counts from the end. */
int th_flip_byte(const char *path, int64_t off);

/* ---- running commands ---- */

typedef struct th_run {
    int status;     /* exit code; -signal when killed by a signal; -1000 if it could not run */
    char *out;      /* captured stdout, NUL-terminated */
    char *err;      /* captured stderr, NUL-terminated */
    double secs;    /* wall time */
    char cmd[1024]; /* the command line, for messages */
} th_run;

typedef struct th_run_opts {
    const char *cwd;      /* chdir here before exec (NULL: inherit) */
    uint64_t fsize_limit; /* > 0: RLIMIT_FSIZE in the child, SIGXFSZ ignored */
} th_run_opts;

/* Runs argv[0] with argv (NULL-terminated, no shell), capturing stdout and stderr. */
int th_run_argv(th_run *r, char *const argv[], const th_run_opts *o);
/* Runs S3CKPT_BIN with the given arguments (NULL-terminated). */
int th_s3ckpt(th_run *r, ...) __attribute__((sentinel));
int th_s3ckpt_opts(th_run *r, const th_run_opts *o, ...) __attribute__((sentinel));
void th_run_free(th_run *r);

/* Starts argv in the background, stdout and stderr into log_path (NULL: /dev/null). */
pid_t th_spawn_bg(char *const argv[], const char *log_path);
/* SIGKILL a pid we started, then reap it; returns its wait status (-1 on error). */
int th_kill_reap(pid_t pid);

/* ---- comparing trees ---- */

/* Compares two files or trees: same set of entries, same types, same permission bits (the
 * roots' own modes are not compared: a checkpoint does not record them), same sizes and bytes.
 * 0 if equal; -1 with the first difference in th_error(). Holes present in both files are
 * skipped, so comparing big sparse files costs what their data costs. */
int th_tree_equal(const char *a, const char *b);

/* ---- JSON picking (enough for the CLI's --json output) ---- */

/* The outermost (then first) JSON object in json that has the member "key":"value" (a string
 * value compared in its escaped form), as a malloc'ed copy; NULL if none. */
char *th_json_object_with(const char *json, const char *key, const char *value);
/* The raw text of member `key` of the outermost object of obj (strings without their quotes),
 * into out; -1 if absent. */
int th_json_member(const char *obj, const char *key, char *out, size_t out_len);
/* Integer member; -1 if absent or not an unsigned integer. */
int th_json_u64(const char *obj, const char *key, uint64_t *out);
/* Number of top-level elements of a JSON array (-1 if not an array). */
int th_json_array_len(const char *json);

/* ---- assertion shorthands ---- */

#define TH_ASSERT_OK(expr) cr_assert((expr) == 0, "%s failed: %s", #expr, th_error())

/* Asserts the exit status of a run and shows the command and its output when it differs. */
#define TH_ASSERT_EXIT(run, code)                                                                  \
    cr_assert_eq((run).status, (code),                                                             \
                 "%s\n  exit %d, expected %d\n--- stdout:\n%s\n--- stderr:\n%s", (run).cmd,        \
                 (run).status, (code), (run).out ? (run).out : "", (run).err ? (run).err : "")

#define TH_ASSERT_STDERR_HAS(run, needle)                                                          \
    cr_assert(strstr((run).err ? (run).err : "", (needle)) != NULL,                                \
              "%s\n  stderr lacks \"%s\"\n--- stderr:\n%s", (run).cmd, (needle),                   \
              (run).err ? (run).err : "")

/* Runs s3ckpt with the arguments, asserts the exit code, and frees the output. */
#define TH_S3CKPT_EXPECT(code, ...)                                                                \
    do {                                                                                           \
        th_run th_r_;                                                                              \
        TH_ASSERT_OK(th_s3ckpt(&th_r_, __VA_ARGS__, NULL));                                        \
        TH_ASSERT_EXIT(th_r_, (code));                                                             \
        th_run_free(&th_r_);                                                                       \
    } while (0)

/* ---- per-test fixture: .init = th_setup, .fini = th_teardown ---- */

extern char th_root[PATH_MAX];    /* this test's temp directory */
extern pid_t th_bg_pid;           /* a background child to SIGKILL at teardown (0: none) */
extern char th_mounted[PATH_MAX]; /* a mount point to detach at teardown ("": none) */
void th_setup(void);
void th_teardown(void);

#define TH_ASSERT_TREES_EQUAL(a, b)                                                                \
    cr_assert(th_tree_equal((a), (b)) == 0, "trees differ (%s vs %s): %s", (a), (b), th_error())

#endif
