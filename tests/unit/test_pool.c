/*
 * test_pool - worker threads and a fixed set of slots: every submitted job runs exactly once,
 * on a valid worker, and never more slots exist than were asked for, whatever the job count.
 */
#include <criterion/criterion.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pool.h"

#define JOBS 2000

typedef struct counts {
    atomic_int runs[JOBS];
    atomic_int total;
    atomic_uint max_worker;
    atomic_int bad_worker;
    atomic_int concurrent, max_concurrent;
    unsigned nworkers;
    int slow_entry; /* entry that sleeps, -1 for none */
    atomic_int slow_finished;
} counts;

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

    nanosleep(&ts, NULL);
}

static void count_job(ck_slot *s, unsigned worker, void *ctx)
{
    counts *c = ctx;
    int now = atomic_fetch_add(&c->concurrent, 1) + 1, prev;
    unsigned m;

    prev = atomic_load(&c->max_concurrent);
    while (now > prev && !atomic_compare_exchange_weak(&c->max_concurrent, &prev, now))
        ;
    if (worker >= c->nworkers)
        atomic_store(&c->bad_worker, 1);
    m = atomic_load(&c->max_worker);
    while (worker > m && !atomic_compare_exchange_weak(&c->max_worker, &m, worker))
        ;
    if ((int)s->entry == c->slow_entry) {
        sleep_ms(300);
        atomic_store(&c->slow_finished, 1);
    } else if (s->entry % 7 == 0) {
        sleep_ms(1);
    }
    /* the slot's buffer is ours alone while the job runs */
    memset(s->raw, (int)(s->entry & 0xff), s->raw_cap);
    s->digest.b[0] = (unsigned char)(s->entry & 0xff);
    atomic_fetch_add(&c->runs[s->entry], 1);
    atomic_fetch_add(&c->total, 1);
    atomic_fetch_sub(&c->concurrent, 1);
}

static counts *counts_new(unsigned nworkers)
{
    counts *c = calloc(1, sizeof(*c));

    cr_assert_not_null(c);
    c->nworkers = nworkers;
    c->slow_entry = -1;
    return c;
}

/* Collects one finished slot, checks its result, releases it. */
static void collect(ck_pool *p, ck_slot *which)
{
    ck_slot *s = ck_pool_wait(p, which);

    cr_assert_not_null(s);
    cr_assert_eq(s->status, S3CKPT_OK);
    cr_assert_eq(s->digest.b[0], (unsigned char)(s->entry & 0xff), "slot result mixed up");
    cr_assert_eq(s->raw[s->raw_cap - 1], (unsigned char)(s->entry & 0xff));
    ck_pool_release(p, s);
}

static int seen_index(ck_slot **seen, size_t nseen, ck_slot *s)
{
    size_t i;

    for (i = 0; i < nseen; i++)
        if (seen[i] == s)
            return (int)i;
    return -1;
}

static void run_all(unsigned nworkers, size_t nslots)
{
    counts *c = counts_new(nworkers);
    ck_slot *seen[64];
    size_t nseen = 0, i;
    ck_pool *p;

    cr_assert_eq(ck_pool_new(&p, nworkers, nslots, 4096, 64, count_job, c), S3CKPT_OK);
    cr_assert_eq(ck_pool_workers(p), nworkers);
    cr_assert_eq(ck_pool_slots(p), nslots);
    for (i = 0; i < JOBS; i++) {
        ck_slot *s;

        while (!(s = ck_pool_acquire(p)))
            collect(p, NULL);
        if (seen_index(seen, nseen, s) < 0) {
            cr_assert_lt(nseen, nslots, "more distinct slots than the pool has");
            seen[nseen++] = s;
        }
        cr_assert_eq(s->raw_cap, 4096);
        cr_assert_eq(s->stored_cap, 64);
        cr_assert_leq(ck_pool_inflight(p), nslots);
        s->entry = i;
        ck_pool_submit(p, s);
    }
    while (ck_pool_inflight(p))
        collect(p, NULL);
    cr_assert_null(ck_pool_wait(p, NULL));
    ck_pool_free(p);

    cr_assert_eq(atomic_load(&c->total), JOBS);
    for (i = 0; i < JOBS; i++)
        cr_assert_eq(atomic_load(&c->runs[i]), 1, "job %zu ran %d times", i,
                     atomic_load(&c->runs[i]));
    cr_assert_eq(atomic_load(&c->bad_worker), 0, "worker index >= nworkers");
    cr_assert_lt(atomic_load(&c->max_worker), nworkers);
    cr_assert_leq(atomic_load(&c->max_concurrent), (int)nworkers);
    cr_assert_leq(nseen, nslots);
    free(c);
}

Test(pool, runs_every_slot_exactly_once_with_four_workers)
{
    run_all(4, 8);
}

Test(pool, runs_every_slot_exactly_once_with_one_worker_and_one_slot)
{
    run_all(1, 1);
}

Test(pool, runs_every_slot_exactly_once_with_more_workers_than_slots)
{
    run_all(8, 3);
}

/* Like count_job, but every job takes 100 ms, so jobs submitted together overlap. */
static void sleepy_job(ck_slot *s, unsigned worker, void *ctx)
{
    counts *c = ctx;
    int now = atomic_fetch_add(&c->concurrent, 1) + 1, prev;

    prev = atomic_load(&c->max_concurrent);
    while (now > prev && !atomic_compare_exchange_weak(&c->max_concurrent, &prev, now))
        ;
    if (worker >= c->nworkers)
        atomic_store(&c->bad_worker, 1);
    sleep_ms(100);
    atomic_fetch_add(&c->runs[s->entry], 1);
    atomic_fetch_sub(&c->concurrent, 1);
}

Test(pool, work_runs_on_several_workers_at_once)
{
    counts *c = counts_new(4);
    ck_slot *s[4];
    ck_pool *p;
    size_t i;

    cr_assert_eq(ck_pool_new(&p, 4, 4, 16, 0, sleepy_job, c), S3CKPT_OK);
    for (i = 0; i < 4; i++) {
        s[i] = ck_pool_acquire(p);
        cr_assert_not_null(s[i]);
        s[i]->entry = i;
    }
    for (i = 0; i < 4; i++)
        ck_pool_submit(p, s[i]);
    for (i = 0; i < 4; i++) {
        cr_assert_eq(ck_pool_wait(p, s[i]), s[i]);
        ck_pool_release(p, s[i]);
    }
    ck_pool_free(p);
    for (i = 0; i < 4; i++)
        cr_assert_eq(atomic_load(&c->runs[i]), 1);
    cr_assert_eq(atomic_load(&c->bad_worker), 0);
    cr_assert_geq(atomic_load(&c->max_concurrent), 2, "four 100 ms jobs never overlapped");
    free(c);
}

Test(pool, acquire_returns_null_when_all_slots_are_taken_and_a_slot_after_release)
{
    counts *c = counts_new(2);
    ck_slot *a, *b, *d, *again;
    ck_pool *p;

    cr_assert_eq(ck_pool_new(&p, 2, 3, 16, 16, count_job, c), S3CKPT_OK);
    a = ck_pool_acquire(p);
    b = ck_pool_acquire(p);
    d = ck_pool_acquire(p);
    cr_assert(a && b && d);
    cr_assert(a != b && b != d && a != d);
    cr_assert_null(ck_pool_acquire(p));
    ck_pool_release(p, b);
    again = ck_pool_acquire(p);
    cr_assert_eq(again, b);
    cr_assert_null(ck_pool_acquire(p));
    ck_pool_release(p, a);
    ck_pool_release(p, b);
    ck_pool_release(p, d);
    ck_pool_free(p);
    free(c);
}

Test(pool, done_but_unreleased_slot_is_not_free)
{
    counts *c = counts_new(1);
    ck_slot *s, *got;
    ck_pool *p;

    cr_assert_eq(ck_pool_new(&p, 1, 1, 16, 16, count_job, c), S3CKPT_OK);
    s = ck_pool_acquire(p);
    cr_assert_not_null(s);
    s->entry = 1;
    ck_pool_submit(p, s);
    cr_assert_null(ck_pool_acquire(p), "slot in flight handed out again");
    got = ck_pool_wait(p, NULL);
    cr_assert_eq(got, s);
    cr_assert_null(ck_pool_acquire(p), "collected but unreleased slot handed out again");
    ck_pool_release(p, s);
    cr_assert_eq(ck_pool_acquire(p), s);
    ck_pool_release(p, s);
    ck_pool_free(p);
    free(c);
}

/* A two-worker pool running a slow job (entry 1) and a fast one (entry 2). */
static ck_pool *start_slow_and_fast(counts *c, ck_slot **slow, ck_slot **fast)
{
    ck_pool *p;

    cr_assert_eq(ck_pool_new(&p, 2, 2, 16, 16, count_job, c), S3CKPT_OK);
    c->slow_entry = 1;
    *slow = ck_pool_acquire(p);
    *fast = ck_pool_acquire(p);
    (*slow)->entry = 1;
    (*fast)->entry = 2;
    ck_pool_submit(p, *slow);
    ck_pool_submit(p, *fast);
    return p;
}

Test(pool, wait_for_a_specific_slot_waits_for_that_slot)
{
    counts *c = counts_new(2);
    ck_slot *slow, *fast, *got;
    ck_pool *p;

    p = start_slow_and_fast(c, &slow, &fast);
    got = ck_pool_wait(p, slow);
    cr_assert_eq(got, slow, "wait(slow) returned another slot");
    cr_assert_eq(atomic_load(&c->slow_finished), 1, "wait(slow) returned before it finished");
    cr_assert_eq(ck_pool_inflight(p), 1);
    got = ck_pool_wait(p, fast);
    cr_assert_eq(got, fast);
    cr_assert_eq(ck_pool_inflight(p), 0);
    ck_pool_release(p, slow);
    ck_pool_release(p, fast);
    ck_pool_free(p);
    free(c);
}

Test(pool, wait_for_any_returns_the_one_that_finished)
{
    counts *c = counts_new(2);
    ck_slot *slow, *fast, *got;
    ck_pool *p;

    p = start_slow_and_fast(c, &slow, &fast);
    got = ck_pool_wait(p, NULL);
    cr_assert_eq(got, fast, "the 300 ms job finished first?");
    got = ck_pool_wait(p, NULL);
    cr_assert_eq(got, slow);
    cr_assert_null(ck_pool_wait(p, NULL));
    ck_pool_release(p, slow);
    ck_pool_release(p, fast);
    ck_pool_free(p);
    free(c);
}

Test(pool, wait_for_any_returns_null_when_nothing_is_in_flight)
{
    counts *c = counts_new(2);
    ck_slot *s;
    ck_pool *p;

    cr_assert_eq(ck_pool_new(&p, 2, 2, 16, 16, count_job, c), S3CKPT_OK);
    cr_assert_null(ck_pool_wait(p, NULL));
    s = ck_pool_acquire(p);
    cr_assert_null(ck_pool_wait(p, NULL), "an acquired but unsubmitted slot is not in flight");
    s->entry = 3;
    ck_pool_submit(p, s);
    cr_assert_eq(ck_pool_wait(p, NULL), s);
    cr_assert_null(ck_pool_wait(p, NULL));
    ck_pool_release(p, s);
    cr_assert_null(ck_pool_wait(p, NULL));
    ck_pool_free(p);
    free(c);
}

Test(pool, slot_count_and_buffers_are_fixed_up_front)
{
    counts *c = counts_new(3);
    ck_slot *s[5];
    ck_pool *p;
    size_t i;

    cr_assert_eq(ck_pool_new(&p, 3, 5, 1000, 2000, count_job, c), S3CKPT_OK);
    cr_assert_eq(ck_pool_slots(p), 5);
    for (i = 0; i < 5; i++) {
        s[i] = ck_pool_acquire(p);
        cr_assert_not_null(s[i], "slot %zu", i);
        cr_assert_not_null(s[i]->raw);
        cr_assert_not_null(s[i]->stored);
        cr_assert_eq(s[i]->raw_cap, 1000);
        cr_assert_eq(s[i]->stored_cap, 2000);
        cr_assert_eq(s[i]->fd, -1);
    }
    cr_assert_null(ck_pool_acquire(p), "a sixth slot appeared");
    cr_assert_eq(ck_pool_slots(p), 5);
    for (i = 0; i < 5; i++)
        ck_pool_release(p, s[i]);
    ck_pool_free(p);
    free(c);
}

Test(pool, zero_workers_and_slots_mean_one)
{
    counts *c = counts_new(1);
    ck_pool *p;
    ck_slot *s;

    cr_assert_eq(ck_pool_new(&p, 0, 0, 16, 16, count_job, c), S3CKPT_OK);
    cr_assert_eq(ck_pool_workers(p), 1);
    cr_assert_eq(ck_pool_slots(p), 1);
    s = ck_pool_acquire(p);
    cr_assert_not_null(s);
    s->entry = 0;
    ck_pool_submit(p, s);
    collect(p, s);
    ck_pool_free(p);
    cr_assert_eq(atomic_load(&c->runs[0]), 1);
    free(c);
}

Test(pool, free_runs_submitted_work_before_stopping)
{
    counts *c = counts_new(2);
    ck_pool *p;
    size_t i;

    cr_assert_eq(ck_pool_new(&p, 2, 6, 16, 16, count_job, c), S3CKPT_OK);
    for (i = 0; i < 6; i++) {
        ck_slot *s = ck_pool_acquire(p);

        cr_assert_not_null(s);
        s->entry = i * 7; /* each sleeps a little */
        ck_pool_submit(p, s);
    }
    ck_pool_free(p);
    cr_assert_eq(atomic_load(&c->total), 6);
    free(c);
}

Test(pool, default_workers_is_at_least_one)
{
    cr_assert_geq(ck_pool_default_workers(), 1);
    cr_assert_leq(ck_pool_default_workers(), 256);
}
