/* adapt - how hard push compresses, decided chunk by chunk from what the pipeline measures, so
 * that compression never makes a push slower than sending raw bytes and is kept wherever it
 * is free. Pure: the caller passes the clock. */
#ifndef CK_ADAPT_H
#define CK_ADAPT_H

#include <stdatomic.h>
#include <stddef.h>

#include "codec.h"

#define CK_ADAPT_EFFORTS 3 /* CK_EFFORT_RAW .. CK_EFFORT_FULL */

typedef struct ck_adapt {
    atomic_int cap; /* ck_effort ceiling; workers read it as they start a chunk */
    int on;
    unsigned workers;
    /* per effort: raw bytes per worker CPU second (reading, digesting and compressing a
     * chunk), and raw / stored; 0 unknown */
    double speed[CK_ADAPT_EFFORTS], ratio[CK_ADAPT_EFFORTS];
    /* per effort, from windows of chunks of that effort alone: raw bytes per second delivered
     * while compression was behind (cpu_bps), and whatever was behind (delivered_bps); 0
     * unknown */
    double cpu_bps[CK_ADAPT_EFFORTS], delivered_bps[CK_ADAPT_EFFORTS];
    double store_bps; /* stored bytes per second the store took when it was behind; 0 unknown */
    int top;          /* the highest effort chunks have asked for so far */
    /* a probe: the next probe_left chunks to start get probe_effort, so an effort is measured
     * on one window of chunks instead of everything the ring holds when the ceiling moves */
    atomic_int probe_left, probe_effort;
    unsigned char probed[CK_ADAPT_EFFORTS];
    int probing;       /* the effort whose probe window is under way; -1 none */
    unsigned skip;     /* chunks a probe sends before it is measured (the store's buffers) */
    unsigned skipping; /* of those, still to come */
    unsigned waited;   /* chunks of other efforts since the probe began */
    uint64_t left;     /* chunks of the push not yet handed to the store; UINT64_MAX unknown */
    int no_probe;      /* the store's cost is partly invisible: never probe a lower effort */
    /* the current window (windows: how many ended) */
    unsigned windows, n;
    int effort; /* of its chunks; -1 mixed (files asking for different efforts) */
    double since, raw, stored, wait_cpu, wait_store;
} ck_adapt;

/* on 0: the ceiling stays at CK_EFFORT_FULL. */
void ck_adapt_init(ck_adapt *a, int on, unsigned workers, double now);

/* The push has `chunks` chunks of chunk_size bytes, and the store takes buffer_bytes before a
 * write waits for it: a probe sends that much before it measures, and is made only when the
 * rest of the push is long enough to pay for it. flush_at_end: part of the store's cost comes
 * at the final sync, so no probe can measure it; lower efforts are then taken only where the
 * prediction is far from doubt (a slow --level). */
void ck_adapt_plan(ck_adapt *a, uint64_t chunks, uint64_t chunk_size, uint64_t buffer_bytes,
                   int flush_at_end);

/* Chunks asking for effort e (their file's highest) are being made: efforts above every one
 * asked for are never chosen. Trials count as asking. */
void ck_adapt_want(ck_adapt *a, ck_effort e);

/* A trial of effort e on a sample (n raw bytes became stored bytes in cpu_s seconds) before
 * any chunk was compressed at e. After the trials, ck_adapt_start sets the first ceiling: the
 * highest effort whose trial speed is far above any plausible store, the others being decided
 * by measurement. */
void ck_adapt_trial(ck_adapt *a, ck_effort e, size_t n, size_t stored, double cpu_s);
void ck_adapt_start(ck_adapt *a);

/* The coordinator handed a chunk of raw bytes, compressed at effort e into stored bytes by
 * cpu_s seconds of worker CPU, to the store, after waiting wait_cpu seconds for the worker and
 * wait_store seconds for the store. May move the ceiling. */
void ck_adapt_chunk(ck_adapt *a, ck_effort e, size_t raw, size_t stored, double cpu_s,
                    double wait_cpu, double wait_store, double now);

/* The effort the pipeline is predicted to deliver the most raw bytes per second at, or the
 * highest one within a few percent of it. */
ck_effort ck_adapt_choose(const ck_adapt *a);

static inline ck_effort ck_adapt_cap(ck_adapt *a)
{
    return (ck_effort)atomic_load_explicit(&a->cap, memory_order_relaxed);
}

/* The effort a chunk starting now gets, its file asking for `want` (a worker calls it once per
 * chunk): want, lowered to the ceiling, or set to the effort being probed. */
ck_effort ck_adapt_next(ck_adapt *a, ck_effort want);

#endif
