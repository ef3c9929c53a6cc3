/*
 * test_resume - the real s3ckpt CLI killed in the middle of a push or a pull (SIGKILL: no
 * cleanup code runs) and then re-run: the store never shows a half-written checkpoint, DEST
 * never holds a half-restored tree, and the re-run completes the job, reusing what the killed
 * run already finished.
 */
#include <errno.h>
#include <ftw.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "helpers.h"

TestSuite(resume, .init = th_setup, .fini = th_teardown, .timeout = 420);

#define BIG_FILES 4
#define BIG_FILE_BYTES (100ull * 1000 * 1000) /* 4 x 100 MB of float32: ~400 MB */
#define POLL_LIMIT_SECS 180.0

static char STORE[PATH_MAX], URL[PATH_MAX];

static void paths(void)
{
    TH_PATH(STORE, "%s/store", th_root);
    th_store_url(URL, sizeof(URL), STORE);
}

static void make_tree(const char *dir, int files, uint64_t bytes, uint64_t seed)
{
    char f[PATH_MAX];
    int i;

    TH_ASSERT_OK(th_mkdirs(dir, 0755));
    for (i = 0; i < files; i++) {
        th_path(f, sizeof(f), "%s/layer-%02d.f32", dir, i);
        TH_ASSERT_OK(th_write_floats(f, bytes, seed + (uint64_t)i));
    }
}

static double mono(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static char *log_text(const char *log)
{
    char *s = th_read_file(log, NULL);

    return s ? s : strdup("(no log)");
}

/* Polls until ready(arg) or the child exits; fails the test if the child exits first (the
 * job finished before it could be interrupted) or nothing happens in time. */
static void wait_until(pid_t pid, int (*ready)(const char *), const char *arg, const char *log,
                       const char *what)
{
    double t0 = mono();

    for (;;) {
        int st;
        pid_t w;

        if (ready(arg))
            return;
        w = waitpid(pid, &st, WNOHANG);
        if (w == pid) {
            th_bg_pid = 0;
            cr_assert_fail("the child ended (status 0x%x) before %s; nothing was interrupted.\n"
                           "--- its output:\n%s",
                           st, what, log_text(log));
        }
        cr_assert(mono() - t0 < POLL_LIMIT_SECS, "no sign of %s after %.0f s", what,
                  POLL_LIMIT_SECS);
        usleep(1000);
    }
}

/* Starts S3CKPT_BIN with the given arguments (NULL-terminated) in the background, its output
 * going to log; teardown kills it if the test ends first. */
static pid_t spawn_s3ckpt(const char *log, ...) __attribute__((sentinel));
static pid_t spawn_s3ckpt(const char *log, ...)
{
    char *argv[32];
    const char *a;
    va_list ap;
    int n = 0;
    pid_t pid;

    argv[n++] = (char *)S3CKPT_BIN;
    va_start(ap, log);
    while ((a = va_arg(ap, const char *)) && n < 31)
        argv[n++] = (char *)a;
    va_end(ap);
    argv[n] = NULL;
    pid = th_bg_pid = th_spawn_bg(argv, log);
    cr_assert_gt(pid, 0, "%s", th_error());
    return pid;
}

static void kill9(pid_t pid, const char *log)
{
    int st = th_kill_reap(pid);

    th_bg_pid = 0;
    cr_assert(st != -1 && WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL,
              "the child was not killed by SIGKILL (status 0x%x): it had already finished.\n"
              "--- its output:\n%s",
              st, log_text(log));
}

static void assert_latest(const char *name)
{
    char p[PATH_MAX], want[300], *s;

    TH_PATH(p, "%s/latest", STORE);
    s = th_read_file(p, NULL);
    cr_assert_not_null(s, "%s", th_error());
    snprintf(want, sizeof(want), "%s\n", name);
    cr_assert_str_eq(s, want, "latest holds \"%s\", expected \"%s\"", s, want);
    free(s);
}

static uint64_t json_u64(const char *json, const char *key)
{
    uint64_t v = 0;

    cr_assert_eq(th_json_u64(json, key, &v), 0, "%s in: %s", th_error(), json);
    return v;
}

static int committed_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    return flag == FTW_F && S_ISREG(sb->st_mode) && path[ftw->base] != '.';
}

/* A committed data object (not a hidden temp name) exists under dir. */
static int committed_object_in(const char *dir)
{
    return th_exists(dir) && nftw(dir, committed_one, 16, FTW_PHYS) == 1;
}

Test(resume, push_killed_midway_is_invisible_and_a_rerun_completes_it)
{
    char a[PATH_MAX], b[PATH_MAX], data[PATH_MAX], man[PATH_MAX], log[PATH_MAX], out[PATH_MAX],
        found[PATH_MAX];
    th_run r;
    pid_t pid;

    paths();
    TH_PATH(a, "%s/ckpt-a", th_root);
    TH_PATH(b, "%s/ckpt-b", th_root);
    make_tree(a, 2, 3u << 20, 201);
    make_tree(b, BIG_FILES, BIG_FILE_BYTES, 301);
    TH_S3CKPT_EXPECT(0, "push", a, URL, "--step", "1");

    TH_PATH(log, "%s/push.log", th_root);
    TH_PATH(data, "%s/step-00000002/data", STORE);
    TH_PATH(man, "%s/step-00000002/manifest.json", STORE);
    pid = spawn_s3ckpt(log, "push", b, URL, "--step", "2", "--workers", "1", "--no-progress", NULL);
    /* wait for the first of B's data objects to be committed, so the re-run has one to keep */
    wait_until(pid, committed_object_in, data, log, "a committed data object of B");
    kill9(pid, log);

    /* B is invisible: no manifest, not listed, not pullable; latest still names A */
    cr_assert(!th_exists(man), "the killed push left a manifest");
    assert_latest("step-00000001");
    TH_ASSERT_OK(th_s3ckpt(&r, "ls", URL, "--json", NULL));
    TH_ASSERT_EXIT(r, 0);
    cr_assert_eq(th_json_array_len(r.out), 1, "ls lists the unfinished push: %s", r.out);
    cr_assert_null(strstr(r.out, "step-00000002"), "ls: %s", r.out);
    th_run_free(&r);
    TH_PATH(out, "%s/pulled-b-early", th_root);
    TH_S3CKPT_EXPECT(3, "pull", URL, out, "--name", "step-00000002");
    cr_assert(!th_exists(out));
    TH_PATH(out, "%s/pulled-latest", th_root);
    TH_S3CKPT_EXPECT(0, "pull", URL, out);
    TH_ASSERT_TREES_EQUAL(a, out);

    /* the same push again completes B and keeps what the killed run had committed */
    TH_ASSERT_OK(th_s3ckpt(&r, "push", b, URL, "--step", "2", "--workers", "1", "--json", NULL));
    TH_ASSERT_EXIT(r, 0);
    cr_assert_geq(json_u64(r.out, "reused_bytes"), BIG_FILE_BYTES,
                  "the re-run did not keep the object committed before the kill: %s", r.out);
    cr_assert_eq(json_u64(r.out, "raw_bytes"), BIG_FILES * BIG_FILE_BYTES);
    th_run_free(&r);
    cr_assert(th_exists(man), "the re-run did not commit a manifest");
    cr_assert(!th_tree_has_name_part(data, ".s3ckpt-tmp.", found),
              "the re-run left the killed run's temp file %s", found);
    assert_latest("step-00000002");
    TH_S3CKPT_EXPECT(0, "verify", URL, "--name", "step-00000002", "--deep");
    TH_PATH(out, "%s/pulled-b", th_root);
    TH_S3CKPT_EXPECT(0, "pull", URL, out, "--name", "step-00000002");
    TH_ASSERT_TREES_EQUAL(b, out);
}

/* Some restored file (not the marker) in the partial directory holds at least three chunks'
 * worth of data. With one worker the chunks are written one after another, so its first two
 * chunks are then complete on disk: the re-run has something to keep even after the test damages
 * the first. (Mere st_blocks > 0 is seen while the very first pwrite is still under way, and
 * a re-run then has nothing to keep.) */
#define PARTIAL_MIN_BYTES (12ll << 20)

static char partial_file[PATH_MAX];

static int has_data_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    if (flag != FTW_F || !S_ISREG(sb->st_mode) ||
        (long long)sb->st_blocks * 512 < PARTIAL_MIN_BYTES ||
        !strcmp(path + ftw->base, ".s3ckpt-pull"))
        return 0;
    snprintf(partial_file, sizeof(partial_file), "%s", path);
    return 1;
}

static int partial_has_data(const char *dir)
{
    return th_exists(dir) && nftw(dir, has_data_one, 16, FTW_PHYS) == 1;
}

Test(resume, pull_killed_midway_leaves_no_dest_and_a_rerun_reuses_only_verified_chunks)
{
    char src[PATH_MAX], dest[PATH_MAX], partial_dir[PATH_MAX], log[PATH_MAX], full[PATH_MAX];
    char marker[PATH_MAX];
    uint64_t transferred, full_transferred;
    th_run r;
    pid_t pid;

    paths();
    TH_PATH(src, "%s/ckpt", th_root);
    make_tree(src, BIG_FILES, BIG_FILE_BYTES, 401);
    TH_S3CKPT_EXPECT(0, "push", src, URL, "--name", "big");

    TH_PATH(dest, "%s/restore/dest", th_root);
    TH_PATH(partial_dir, "%s/restore/.dest.s3ckpt-partial", th_root);
    TH_PATH(marker, "%s/restore/.dest.s3ckpt-partial.marker", th_root);
    TH_PATH(log, "%s/pull.log", th_root);
    pid = spawn_s3ckpt(log, "pull", URL, dest, "--name", "big", "--workers", "1", "--no-progress",
                       NULL);
    wait_until(pid, partial_has_data, partial_dir, log, "restored data in the partial directory");
    kill9(pid, log);

    cr_assert(!th_exists(dest), "the killed pull left %s", dest);
    cr_assert(th_exists(partial_dir), "the killed pull left no partial directory to resume");
    cr_assert(th_exists(marker), "the killed pull left no marker beside %s", partial_dir);
    /* damage the first (complete) chunk on disk: the re-run must notice and fetch it again */
    TH_ASSERT_OK(th_flip_byte(partial_file, 100));

    TH_ASSERT_OK(th_s3ckpt(&r, "pull", URL, dest, "--name", "big", "--json", NULL));
    TH_ASSERT_EXIT(r, 0);
    TH_ASSERT_TREES_EQUAL(src, dest);
    transferred = json_u64(r.out, "transferred_bytes");
    cr_assert_gt(json_u64(r.out, "reused_bytes"), 0, "the re-run fetched everything again: %s",
                 r.out);
    cr_assert_lt(transferred, json_u64(r.out, "stored_bytes"), "%s", r.out);
    th_run_free(&r);
    /* stored_bytes also counts bytes a pull never reads (e.g. each object's chunk index), so
     * compare with what an uninterrupted pull of the same checkpoint reads */
    TH_PATH(full, "%s/restore/full", th_root);
    TH_ASSERT_OK(th_s3ckpt(&r, "pull", URL, full, "--name", "big", "--json", NULL));
    TH_ASSERT_EXIT(r, 0);
    full_transferred = json_u64(r.out, "transferred_bytes");
    cr_assert_eq(json_u64(r.out, "reused_bytes"), 0, "a fresh pull reused bytes: %s", r.out);
    th_run_free(&r);
    cr_assert_lt(transferred, full_transferred,
                 "the resumed pull read %llu stored bytes, a full pull reads %llu",
                 (unsigned long long)transferred, (unsigned long long)full_transferred);
    cr_assert(!th_exists(partial_dir), "a completed pull left %s", partial_dir);
    cr_assert(!th_exists(marker), "a completed pull left %s", marker);
}

/* A re-run push checks many leftover objects without keeping a descriptor open for each: with
 * 600 leftovers and a limit of 200 open files it still completes, reusing every object. */
Test(resume, push_rerun_over_many_leftover_objects_stays_within_the_fd_limit)
{
    char src[PATH_MAX], f[PATH_MAX], man[PATH_MAX];
    char *argv[] = {(char *)"/usr/bin/prlimit",
                    (char *)"--nofile=200",
                    (char *)S3CKPT_BIN,
                    (char *)"push",
                    src,
                    URL,
                    (char *)"--name",
                    (char *)"many",
                    (char *)"--json",
                    NULL};
    uint64_t reused = 0, raw = 0;
    th_run r;
    int i;

    paths();
    TH_PATH(src, "%s/many", th_root);
    TH_ASSERT_OK(th_mkdirs(src, 0755));
    for (i = 0; i < 600; i++) {
        TH_PATH(f, "%s/f%03d.bin", src, i);
        TH_ASSERT_OK(th_write_random(f, 1000 + (uint64_t)i, 500 + (uint64_t)i));
    }
    TH_S3CKPT_EXPECT(0, "push", src, URL, "--name", "many");
    TH_PATH(man, "%s/many/manifest.json", STORE);
    cr_assert_eq(unlink(man), 0); /* as if the push had been killed just before its commit */
    TH_ASSERT_OK(th_run_argv(&r, argv, NULL));
    TH_ASSERT_EXIT(r, 0);
    cr_assert_eq(th_json_u64(r.out, "reused_bytes", &reused), 0, "%s", th_error());
    cr_assert_eq(th_json_u64(r.out, "raw_bytes", &raw), 0, "%s", th_error());
    cr_assert_eq(reused, raw, "the re-run rewrote objects it could keep: %s", r.out);
    th_run_free(&r);
    TH_S3CKPT_EXPECT(0, "verify", URL, "--name", "many", "--deep");
}

/* A push canceled by SIGINT: the CLI's handler cancels the client, the push exits 130 and
 * commits nothing. */
Test(resume, push_interrupted_by_sigint_exits_130_and_commits_nothing)
{
    char src[PATH_MAX], data[PATH_MAX], log[PATH_MAX], found[PATH_MAX];
    int st = 0;
    pid_t pid;

    paths();
    TH_PATH(src, "%s/ckpt", th_root);
    make_tree(src, 2, BIG_FILE_BYTES, 501);
    TH_PATH(data, "%s/ck/data", STORE);
    TH_PATH(log, "%s/push.log", th_root);
    pid = spawn_s3ckpt(log, "push", src, URL, "--name", "ck", "--workers", "1", "--no-progress",
                       NULL);
    wait_until(pid, th_exists, data, log, "the checkpoint's data directory");
    cr_assert_eq(kill(pid, SIGINT), 0);
    while (waitpid(pid, &st, 0) < 0)
        ;
    th_bg_pid = 0;
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 130,
              "SIGINT: status 0x%x, expected exit 130\n--- output:\n%s", st, log_text(log));
    TH_PATH(found, "%s/ck/manifest.json", STORE);
    cr_assert(!th_exists(found), "an interrupted push committed a manifest");
    TH_PATH(found, "%s/latest", STORE);
    cr_assert(!th_exists(found), "an interrupted push wrote latest");
    cr_assert(!th_tree_has_name_part(data, ".s3ckpt-tmp.", found),
              "the interrupted push left its temp file %s", found);
}

/* A re-run push keeps objects an interrupted run committed, after checking them against the
 * local files. An object damaged in the store meanwhile (bit rot, a torn write before the
 * interrupted run's final sync) must not be kept: a push that succeeds has committed a
 * checkpoint that verifies. */
Test(resume, push_rerun_does_not_keep_a_damaged_leftover_object)
{
    char src[PATH_MAX], data[PATH_MAX], obj[PATH_MAX], log[PATH_MAX], out[PATH_MAX];
    th_run r;
    pid_t pid;
    int i;

    paths();
    TH_PATH(src, "%s/ckpt", th_root);
    TH_ASSERT_OK(th_mkdirs(src, 0755));
    for (i = 0; i < 4; i++) {
        TH_PATH(obj, "%s/part-%d.bin", src, i);
        TH_ASSERT_OK(th_write_random(obj, 50ull * 1000 * 1000, 601 + (uint64_t)i));
    }
    TH_PATH(data, "%s/ck/data", STORE);
    TH_PATH(obj, "%s/part-0.bin", data);
    TH_PATH(log, "%s/push.log", th_root);
    pid = spawn_s3ckpt(log, "push", src, URL, "--name", "ck", "--workers", "1", "--no-progress",
                       NULL);
    wait_until(pid, th_exists, obj, log, "the first committed data object");
    kill9(pid, log);
    /* damage the first frame of the committed object; its chunk index stays intact */
    TH_ASSERT_OK(th_flip_byte(obj, 1000000));

    TH_ASSERT_OK(th_s3ckpt(&r, "push", src, URL, "--name", "ck", "--json", NULL));
    TH_ASSERT_EXIT(r, 0);
    th_run_free(&r);
    TH_ASSERT_OK(th_s3ckpt(&r, "verify", URL, "--name", "ck", "--deep", NULL));
    TH_ASSERT_EXIT(r, 0);
    th_run_free(&r);
    TH_PATH(out, "%s/pulled", th_root);
    TH_S3CKPT_EXPECT(0, "pull", URL, out, "--name", "ck");
    TH_ASSERT_TREES_EQUAL(src, out);
}

/* ---- concurrent pushes ---- */

/* A push killed after its manifest was committed but before `latest` moved (simulated with
 * --no-latest): re-running it refuses to rewrite the checkpoint (exit 8) but gives `latest`
 * the move it missed, so a pull of latest gets the new checkpoint. */
Test(resume, push_rerun_after_commit_moves_the_latest_it_missed)
{
    char src[PATH_MAX];
    th_run r;

    paths();
    TH_PATH(src, "%s/src", th_root);
    make_tree(src, 2, 100000, 5);
    TH_S3CKPT_EXPECT(0, "push", src, URL, "--step", "1");
    TH_S3CKPT_EXPECT(0, "push", src, URL, "--step", "2", "--no-latest");
    TH_ASSERT_OK(th_s3ckpt(&r, "show", URL, "--json", NULL));
    TH_ASSERT_EXIT(r, 0);
    cr_assert_not_null(strstr(r.out, "step-00000001"), "%s", r.out);
    th_run_free(&r);

    TH_ASSERT_OK(th_s3ckpt(&r, "push", src, URL, "--step", "2", NULL));
    TH_ASSERT_EXIT(r, 8);
    TH_ASSERT_STDERR_HAS(r, "latest is up to date");
    th_run_free(&r);
    TH_ASSERT_OK(th_s3ckpt(&r, "show", URL, "--json", NULL));
    TH_ASSERT_EXIT(r, 0);
    cr_assert_not_null(strstr(r.out, "step-00000002"), "latest did not move: %s", r.out);
    th_run_free(&r);
}

TestSuite(concurrent, .init = th_setup, .fini = th_teardown, .timeout = 300);

static pid_t spawn_push(const char *src, const char *url, const char *name, const char *step,
                        const char *log)
{
    char *argv[16];
    int n = 0;
    pid_t pid;

    argv[n++] = (char *)S3CKPT_BIN;
    argv[n++] = (char *)"push";
    argv[n++] = (char *)src;
    argv[n++] = (char *)url;
    if (name) {
        argv[n++] = (char *)"--name";
        argv[n++] = (char *)name;
    }
    if (step) {
        argv[n++] = (char *)"--step";
        argv[n++] = (char *)step;
    }
    argv[n++] = (char *)"--workers";
    argv[n++] = (char *)"1";
    argv[n++] = (char *)"--no-progress";
    argv[n] = NULL;
    pid = th_spawn_bg(argv, log);
    cr_assert_gt(pid, 0, "%s", th_error());
    return pid;
}

static int reap(pid_t pid)
{
    int st;

    while (waitpid(pid, &st, 0) < 0)
        cr_assert_eq(errno, EINTR, "waitpid: %s", strerror(errno));
    return WIFEXITED(st) ? WEXITSTATUS(st) : -WTERMSIG(st);
}

/* Two pushes of different content race for one name: one commits, the other is told the name
 * was taken (exit 8), and the committed checkpoint is intact: the loser's data objects must not
 * replace the winner's. Repeated a few times, since who wins and how the runs overlap varies. */
Test(concurrent, racing_pushes_to_one_name_commit_one_intact_checkpoint)
{
    char src[2][PATH_MAX], store[PATH_MAX], url[PATH_MAX + 16], log[2][PATH_MAX], out[PATH_MAX];
    int round, k, rc[2], winner;

    for (k = 0; k < 2; k++) {
        TH_PATH(src[k], "%s/src-%d", th_root, k);
        TH_PATH(log[k], "%s/push-%d.log", th_root, k);
        TH_ASSERT_OK(th_mkdirs(src[k], 0755));
        for (round = 0; round < 8; round++) {
            char f[PATH_MAX];

            TH_PATH(f, "%s/shard-%d.bin", src[k], round);
            TH_ASSERT_OK(th_write_random(f, 12u << 20, 700 + (uint64_t)(k * 10 + round)));
        }
    }
    for (round = 0; round < 3; round++) {
        pid_t pid[2];

        TH_PATH(store, "%s/store-%d", th_root, round);
        th_store_url(url, sizeof(url), store);
        for (k = 0; k < 2; k++)
            pid[k] = th_bg_pid = spawn_push(src[k], url, "same", NULL, log[k]);
        for (k = 0; k < 2; k++)
            rc[k] = reap(pid[k]);
        th_bg_pid = 0;
        cr_assert((rc[0] == 0 && rc[1] == 8) || (rc[0] == 8 && rc[1] == 0),
                  "round %d: exit codes %d and %d, expected one 0 and one 8", round, rc[0], rc[1]);
        winner = rc[0] == 0 ? 0 : 1;
        {
            th_run r;

            TH_ASSERT_OK(th_s3ckpt(&r, "verify", url, "--name", "same", "--deep", NULL));
            cr_assert_eq(r.status, 0,
                         "round %d: push %d committed \"same\" (the other exited 8), but the "
                         "checkpoint does not verify: exit %d\n%s",
                         round, winner, r.status, r.err);
            th_run_free(&r);
        }
        TH_PATH(out, "%s/pulled-%d", th_root, round);
        TH_S3CKPT_EXPECT(0, "pull", url, out, "--name", "same");
        TH_ASSERT_TREES_EQUAL(src[winner], out);
    }
}

Test(concurrent, racing_pushes_leave_latest_at_the_highest_step)
{
    static const char *const steps[] = {"3", "6", "1", "5", "2", "4"};
    char src[PATH_MAX], f[PATH_MAX], log[PATH_MAX], *latest;
    pid_t pid[6];
    th_run r;
    int i;

    paths();
    TH_PATH(src, "%s/src", th_root);
    TH_ASSERT_OK(th_mkdirs(src, 0755));
    TH_PATH(f, "%s/w.bin", src);
    TH_ASSERT_OK(th_write_random(f, 2u << 20, 801));
    for (i = 0; i < 6; i++) {
        TH_PATH(log, "%s/push-%d.log", th_root, i);
        pid[i] = spawn_push(src, URL, NULL, steps[i], log);
    }
    for (i = 0; i < 6; i++) {
        int rc = reap(pid[i]);

        TH_PATH(log, "%s/push-%d.log", th_root, i);
        cr_assert_eq(rc, 0, "push --step %s: exit %d\n%s", steps[i], rc, log_text(log));
    }
    TH_PATH(f, "%s/latest", STORE);
    latest = th_read_file(f, NULL);
    cr_assert(latest && !strcmp(latest, "step-00000006\n"), "latest holds \"%s\"",
              latest ? latest : "(missing)");
    free(latest);
    TH_ASSERT_OK(th_s3ckpt(&r, "ls", URL, "--json", NULL));
    TH_ASSERT_EXIT(r, 0);
    cr_assert_eq(th_json_array_len(r.out), 6, "ls: %s", r.out);
    th_run_free(&r);
}

/* Data objects left by a push that stopped before its manifest, written with another filter
 * than the re-run chooses, are rewritten rather than kept: their frames would decode to the
 * wrong byte order. With the same filter they are kept. */
Test(resume, push_rerun_keeps_leftover_objects_only_when_their_filter_matches)
{
    char src[PATH_MAX], f[PATH_MAX], man[PATH_MAX], out[PATH_MAX];
    th_run r;

    paths();
    TH_PATH(src, "%s/ckpt", th_root);
    TH_ASSERT_OK(th_mkdirs(src, 0755));
    TH_PATH(f, "%s/w.f32", src);
    TH_ASSERT_OK(th_write_floats(f, 9u << 20, 701));
    TH_PATH(man, "%s/ck/manifest.json", STORE);

    TH_S3CKPT_EXPECT(0, "push", src, URL, "--name", "ck", "--filter", "none");
    TH_ASSERT_OK(unlink(man) ? -1 : 0); /* as if it stopped just before the commit */
    TH_ASSERT_OK(
        th_s3ckpt(&r, "push", src, URL, "--name", "ck", "--filter", "none", "--json", NULL));
    TH_ASSERT_EXIT(r, 0);
    cr_assert_eq(json_u64(r.out, "reused_bytes"), 9u << 20, "same filter, not kept: %s", r.out);
    th_run_free(&r);

    TH_ASSERT_OK(unlink(man) ? -1 : 0);
    TH_ASSERT_OK(th_s3ckpt(&r, "push", src, URL, "--name", "ck", "--json", NULL)); /* auto */
    TH_ASSERT_EXIT(r, 0);
    cr_assert_eq(json_u64(r.out, "reused_bytes"), 0, "kept an object of another filter: %s", r.out);
    th_run_free(&r);
    TH_ASSERT_OK(th_s3ckpt(&r, "show", URL, "--name", "ck", "--json", NULL));
    TH_ASSERT_EXIT(r, 0);
    cr_assert_not_null(strstr(r.out, "\"filter\":\"float4\""), "%s", r.out);
    th_run_free(&r);
    TH_S3CKPT_EXPECT(0, "verify", URL, "--name", "ck", "--deep");
    TH_PATH(out, "%s/pulled", th_root);
    TH_S3CKPT_EXPECT(0, "pull", URL, out, "--name", "ck");
    TH_ASSERT_TREES_EQUAL(src, out);
}
