/*
 * test_s3_faults - push and pull through tests/tools/faultproxy, which sits between the CLI and
 * Ceph RGW and injects connection resets (mid-response and mid-upload), 500s, 503 SlowDown with
 * Retry-After, stalls and truncated bodies on a fixed schedule. Every transfer must still
 * restore byte for byte, and the retries must show in the --json counters and the proxy's
 * own fault counts. Needs RGW (scripts/test starts it; S3CKPT_TEST_* in the environment).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "s3helpers.h"

#ifndef S3CKPT_FAULTPROXY
#error "S3CKPT_FAULTPROXY must name the fault proxy binary"
#endif

static pid_t proxy_pid;
static char proxy_url[128];

/* Starts the proxy in front of RGW with the given fault schedule; its stats go to
 * th_root/proxy.json. */
static void start_proxy(const char *faults)
{
    char upstream[128], portfile[PATH_MAX], stats[PATH_MAX], log[PATH_MAX];
    const char *ep = getenv("S3CKPT_TEST_ENDPOINT");
    int i;

    cr_assert(strncmp(ep, "http://", 7) == 0, "endpoint %s", ep);
    snprintf(upstream, sizeof(upstream), "%s", ep + 7);
    TH_PATH(portfile, "%s/proxy.port", th_root);
    TH_PATH(stats, "%s/proxy.json", th_root);
    TH_PATH(log, "%s/proxy.log", th_root);
    char *argv[] = {S3CKPT_FAULTPROXY, "--upstream", upstream,   "--port-file",  portfile,
                    "--stats-file",    stats,        "--faults", (char *)faults, NULL};
    proxy_pid = th_spawn_bg(argv, log);
    cr_assert(proxy_pid > 0, "cannot start the proxy: %s", th_error());
    th_bg_pid = proxy_pid; /* killed at teardown whatever happens */
    for (i = 0; i < 500 && !th_exists(portfile); i++) {
        struct timespec ts = {0, 10 * 1000 * 1000};

        nanosleep(&ts, NULL);
    }
    {
        char *port = th_read_file(portfile, NULL);

        cr_assert_not_null(port, "the proxy wrote no port file (log %s)", log);
        snprintf(proxy_url, sizeof(proxy_url), "http://127.0.0.1:%d", atoi(port));
        free(port);
    }
}

/* Faults the proxy injected so far (sum over kinds). */
static uint64_t proxy_faults(void)
{
    char path[PATH_MAX];
    char *json, *f;
    uint64_t total = 0;

    TH_PATH(path, "%s/proxy.json", th_root);
    json = th_read_file(path, NULL);
    cr_assert_not_null(json, "no proxy stats at %s", path);
    f = strstr(json, "\"faults\"");
    cr_assert_not_null(f, "proxy stats without faults: %s", json);
    for (f = strchr(f, '{'); f && *f && *f != '}'; f++) {
        if (*f == ':') {
            total += strtoull(f + 1, NULL, 10);
        }
    }
    free(json);
    return total;
}

static void make_tree(const char *src)
{
    char p[PATH_MAX];

    TH_PATH(p, "%s/shards", src);
    TH_ASSERT_OK(th_mkdirs(p, 0755));
    TH_PATH(p, "%s/model.f32", src);
    TH_ASSERT_OK(th_write_floats(p, 24u << 20, 1)); /* several parts of 5 MiB */
    TH_PATH(p, "%s/optim.bin", src);
    TH_ASSERT_OK(th_write_random(p, 7u << 20, 2));
    for (int i = 0; i < 12; i++) {
        TH_PATH(p, "%s/shards/s%02d.bin", src, i);
        TH_ASSERT_OK(th_write_random(p, 100000 + (uint64_t)i * 7777, 10 + (uint64_t)i));
    }
    TH_PATH(p, "%s/state.json", src);
    TH_ASSERT_OK(th_write_text(p, "{\"epoch\": 3, \"step\": 1200}\n"));
}

/* Runs push (or pull) with --json and returns its retries count. */
static uint64_t run_json(const char *what, char *const *args)
{
    th_run r;
    uint64_t retries = 0;

    TH_ASSERT_OK(th_run_argv(&r, args, NULL));
    TH_ASSERT_EXIT(r, 0);
    cr_assert(th_json_u64(r.out, "retries", &retries) == 0, "%s: no retries in %s", what, r.out);
    th_run_free(&r);
    return retries;
}

/* retried: the faults must have caused retries (a pause alone need not). */
static void round_trip(const char *tag, const char *faults, const char *extra, int retried)
{
    char src[PATH_MAX], dst[PATH_MAX], store[256];
    uint64_t push_retries, pull_retries;

    s3_begin(tag);
    start_proxy(faults);
    TH_PATH(src, "%s/src", th_root);
    TH_PATH(dst, "%s/dst", th_root);
    make_tree(src);
    snprintf(store, sizeof(store), "s3://%s/ck", BUCKET);
    {
        char *push[] = {
            S3CKPT_BIN, "push",          src,       store,         "--step", "7",
            "--json",   "--endpoint",    proxy_url, "--part-size", "5M",     "--chunk-size",
            "1M",       "--concurrency", "4",       (char *)extra, NULL};
        char *pull[] = {S3CKPT_BIN, "pull",          store, dst,           "--json", "--endpoint",
                        proxy_url,  "--concurrency", "4",   (char *)extra, NULL};

        push_retries = run_json("push", push);
        pull_retries = run_json("pull", pull);
    }
    TH_ASSERT_TREES_EQUAL(src, dst);
    cr_assert_gt(proxy_faults(), 0, "the proxy injected nothing");
    if (retried)
        cr_assert_gt(push_retries + pull_retries, 0,
                     "faults were injected, but nothing was retried");
    /* what RGW holds is complete too: a deep verify straight against it */
    TH_S3CKPT_EXPECT(0, "verify", store, "--deep", "--endpoint", getenv("S3CKPT_TEST_ENDPOINT"));
}

TestSuite(s3_faults, .init = th_setup, .fini = th_teardown, .timeout = 600);

Test(s3_faults, resets_500s_and_truncated_bodies_are_retried_byte_for_byte)
{
    round_trip("mix", "reset:7,500:11,trunc:13,reset_req@PUT:9", NULL, 1);
}

Test(s3_faults, slowdown_with_retry_after_is_honoured_and_retried)
{
    round_trip("slow", "503:5:1", NULL, 1);
}

Test(s3_faults, a_stalled_response_resumes_after_the_pause)
{
    round_trip("stall", "stall@GET:4:1500", NULL, 0);
}

Test(s3_faults, a_response_that_stalls_for_good_times_out_and_is_retried)
{
    /* the proxy never finishes every 6th response: only the client's timeout gets it going */
    round_trip("hang", "stall:6:0", "--timeout=2", 1);
}

/* A byte of an upload body damaged on the way: the server recomputes the checksum it was given,
 * refuses the body (XAmzContentSHA256Mismatch, BadDigest), and the client sends it again. */
Test(s3_faults, a_body_damaged_on_the_way_is_refused_by_the_signed_sha256_and_sent_again)
{
    round_trip("flip-sha", "flip@PUT:3", "--wire-checksum=sha256", 1);
}

Test(s3_faults, a_body_damaged_on_the_way_is_refused_by_content_md5_and_sent_again)
{
    round_trip("flip-md5", "flip@PUT:3", "--wire-checksum=md5", 1);
}

Test(s3_faults, a_store_that_keeps_failing_ends_in_a_store_error_naming_the_request)
{
    char src[PATH_MAX], store[256];
    th_run r;

    s3_begin("down");
    start_proxy("500:1");
    TH_PATH(src, "%s/src", th_root);
    TH_ASSERT_OK(th_mkdirs(src, 0755));
    {
        char p[PATH_MAX];

        TH_PATH(p, "%s/w.bin", src);
        TH_ASSERT_OK(th_write_random(p, 1000, 1));
    }
    snprintf(store, sizeof(store), "s3://%s/ck", BUCKET);
    TH_ASSERT_OK(th_s3ckpt(&r, "push", src, store, "--step", "1", "--endpoint", proxy_url, NULL));
    TH_ASSERT_EXIT(r, 9);
    TH_ASSERT_STDERR_HAS(r, "InternalError");
    TH_ASSERT_STDERR_HAS(r, "attempts");
    th_run_free(&r);
    /* and nothing was committed */
    TH_S3CKPT_EXPECT(3, "show", store, "--name", "step-00000001", "--endpoint",
                     getenv("S3CKPT_TEST_ENDPOINT"));
}

/* The answer to the manifest's create-if-absent PUT (or the lock's) is lost and the request
 * retried: the retry sees 412, yet the object is ours. The push must succeed, not report that
 * another push committed first. */
Test(s3_faults, a_lost_answer_to_a_conditional_create_is_not_taken_for_a_rival)
{
    char src[PATH_MAX], dst[PATH_MAX], store[256];
    th_run r;

    s3_begin("lost");
    start_proxy("reset@PUT/manifest.json:1!,reset@PUT/.s3ckpt-locks/:1!");
    TH_PATH(src, "%s/src", th_root);
    TH_PATH(dst, "%s/dst", th_root);
    make_tree(src);
    snprintf(store, sizeof(store), "s3://%s/ck", BUCKET);
    TH_ASSERT_OK(th_s3ckpt(&r, "push", src, store, "--step", "3", "--endpoint", proxy_url, NULL));
    TH_ASSERT_EXIT(r, 0);
    th_run_free(&r);
    cr_assert_eq(proxy_faults(), 2, "both answers should have been cut");
    TH_S3CKPT_EXPECT(0, "pull", store, dst, "--endpoint", getenv("S3CKPT_TEST_ENDPOINT"));
    TH_ASSERT_TREES_EQUAL(src, dst);
}

/* Ctrl-C while uploads are in flight: exit 130 with a message saying so, and the name's lock
 * object is deleted (another host could not take it over). */
Test(s3_faults, an_interrupted_push_says_canceled_and_leaves_no_lock)
{
    char src[PATH_MAX], store[256], log[PATH_MAX];
    int status = 0;
    pid_t pid;
    th_run r;

    s3_begin("intr");
    start_proxy("stall@PUT/data/:1:20000");
    TH_PATH(src, "%s/src", th_root);
    TH_PATH(log, "%s/push.log", th_root);
    make_tree(src);
    snprintf(store, sizeof(store), "s3://%s/ck", BUCKET);
    {
        char *argv[] = {S3CKPT_BIN, "push",       src,       store, "--name",
                        "n1",       "--endpoint", proxy_url, NULL};

        pid = th_spawn_bg(argv, log);
        cr_assert(pid > 0, "%s", th_error());
    }
    sleep(2); /* well into the stalled upload */
    kill(pid, SIGINT);
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 130, "status %d", status);
    {
        char *out = th_read_file(log, NULL);

        cr_assert_not_null(out);
        cr_assert_not_null(strstr(out, "cancel"), "no word of the cancel: %s", out);
        cr_assert_null(strstr(out, "success"), "%s", out);
        free(out);
    }
    /* curl -f fails on the 404 it should get; -w still prints the status */
    s3_curl(&r, "GET", "ck/.s3ckpt-locks/n1", "-o", "/dev/null", "-w", "%{http_code}", NULL);
    cr_assert_str_eq(r.out, "404", "the lock object is still there (HTTP %s)", r.out);
    th_run_free(&r);
    /* and the name is free for the next push, which completes */
    TH_S3CKPT_EXPECT(0, "push", src, store, "--name", "n1", "--endpoint",
                     getenv("S3CKPT_TEST_ENDPOINT"));
}
