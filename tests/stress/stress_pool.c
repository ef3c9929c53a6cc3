/*
 * stress_pool - hammers ck_pool from a coordinator thread the way push (in-order collection)
 * and pull (any-order collection) do, checking that every job runs exactly once on a valid
 * worker and that slots come back. Plain C, no Criterion, so it also runs under ThreadSanitizer
 * (Criterion 2.4.1 itself crashes under TSan).
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pool.h"

#define JOBS 20000
#define WORKERS 4
#define SLOTS 6

static atomic_int runs[JOBS];
static atomic_int bad_worker;

static void job(ck_slot *s, unsigned worker, void *ctx)
{
    (void)ctx;
    if (worker >= WORKERS)
        atomic_fetch_add(&bad_worker, 1);
    s->raw[0] = (unsigned char)s->chunk; /* touch the slot's buffer */
    s->stored_len = (uint32_t)(s->chunk * 7u + 1u);
    atomic_fetch_add(&runs[s->chunk], 1);
}

static int run(int in_order)
{
    ck_slot *ring[SLOTS], *s;
    uint64_t issued = 0, head = 0, i;
    ck_pool *p;
    int failures = 0;

    memset(runs, 0, sizeof(runs));
    if (ck_pool_new(&p, WORKERS, SLOTS, 64, 64, job, NULL)) {
        fprintf(stderr, "ck_pool_new failed\n");
        return 1;
    }
    while (head < JOBS) {
        while (issued < JOBS && (s = ck_pool_acquire(p))) {
            s->chunk = issued;
            ring[issued++ % SLOTS] = s;
            ck_pool_submit(p, s);
        }
        s = in_order ? ck_pool_wait(p, ring[head % SLOTS]) : ck_pool_wait(p, NULL);
        if (!s) {
            fprintf(stderr, "wait returned NULL with %llu jobs outstanding\n",
                    (unsigned long long)(JOBS - head));
            failures++;
            break;
        }
        if (in_order && s->chunk != head)
            failures++;
        if (s->stored_len != (uint32_t)(s->chunk * 7u + 1u))
            failures++;
        head++;
        ck_pool_release(p, s);
    }
    if (ck_pool_wait(p, NULL) != NULL)
        failures++;
    ck_pool_free(p);
    for (i = 0; i < JOBS; i++)
        if (atomic_load(&runs[i]) != 1)
            failures++;
    return failures;
}

int main(void)
{
    int f = run(1) + run(0);

    if (atomic_load(&bad_worker))
        f++;
    printf("stress_pool: %d jobs in order and in any order on %d workers, %d slots: %s\n", JOBS,
           WORKERS, SLOTS, f ? "FAILED" : "ok");
    return f ? 1 : 0;
}
