/*
 * adapt - the compression effort of push, chunk by chunk.
 *
 * At effort e the pipeline delivers about min(cpu_bps[e], store_bps * ratio[e]) raw bytes per
 * second: what the workers make at e, or what a store taking store_bps stored bytes per second
 * takes of chunks that shrink by ratio[e]. The coordinator reports each chunk it hands to the
 * store, with how long it waited for it (compression behind) and how long the store took it
 * (store behind). Windows of chunks measure one side: a window where the store took longer
 * measures the store; one where compression took longer, made of chunks of one effort,
 * measures what the workers deliver at that effort on this machine under its present load.
 * Efforts not measured that way are predicted from a measured one through the CPU cost of a
 * chunk (speed[e], from every chunk and from trials on a sample before the first).
 *
 * An effort that has run alone for a window has its delivered rate measured, and that figure
 * (capped by what the store takes now) is used instead of the prediction: on a 2-core machine
 * the prediction misses costs that land outside the window (the coordinator's copies, a page
 * cache that a disk flushes at the end), which made a push to a local disk drop compression
 * for no gain.
 * The ceiling goes to the highest effort predicted within SLACK of the best, or within the
 * share of bytes it saves over the best (a push at most that much slower than sending raw bytes,
 * for that many fewer bytes stored): compression is kept wherever it is (nearly) free, and
 * dropped where the store clearly outruns it. The store's rate
 * is unknown until it falls behind; until then a lower effort looks faster and is chosen, which
 * is how a store faster than the compressor is found (by sending it chunks that cost less to
 * make). Lowering acts at once (workers read the ceiling as they start a chunk); raising shows
 * in the store only after the chunks already made, which is why the first ceiling is high.
 * The first window only fills the pipeline and is not measured.
 */
#include "adapt.h"

#define WINDOW 8           /* chunks per decision */
#define PROBE 4            /* chunks an effort never measured is measured on */
#define PAYBACK 8          /* a probe is made only with this many times its length left */
#define CLEAR 4.0          /* ... else a lower effort predicted this much faster is taken */
#define NOW 0.05           /* seconds the store may wait for compression before a decision */
#define SLACK 0.90         /* a higher effort within 10 % of the fastest is taken */
#define ALPHA 0.3          /* weight of a new chunk's speed and ratio */
#define START_BPS 400e6    /* first ceiling: an effort at least this fast on all workers */
#define RAW_GUESS 3e9      /* raw bytes per CPU second of an unmeasured RAW chunk */
#define JOB_S_PER_B 25e-11 /* reading and digesting, on top of a trial's compression */

static void window_reset(ck_adapt *a, double now)
{
    a->n = 0;
    a->effort = -1;
    a->since = now;
    a->raw = a->stored = a->wait_cpu = a->wait_store = 0;
}

void ck_adapt_init(ck_adapt *a, int on, unsigned workers, double now)
{
    int e;

    a->on = on;
    a->workers = workers ? workers : 1;
    for (e = 0; e < CK_ADAPT_EFFORTS; e++)
        a->speed[e] = a->ratio[e] = a->cpu_bps[e] = a->delivered_bps[e] = 0;
    a->store_bps = 0;
    atomic_init(&a->probe_left, 0);
    atomic_init(&a->probe_effort, CK_EFFORT_RAW);
    for (e = 0; e < CK_ADAPT_EFFORTS; e++)
        a->probed[e] = 0;
    a->probing = -1;
    a->skip = a->skipping = a->waited = 0;
    a->left = UINT64_MAX;
    a->no_probe = 0;
    a->windows = 0;
    a->top = CK_EFFORT_RAW;
    atomic_init(&a->cap, CK_EFFORT_FULL);
    window_reset(a, now);
}

static void ewma(double *v, double x, double alpha)
{
    *v = *v > 0 ? (1 - alpha) * *v + alpha * x : x;
}

void ck_adapt_want(ck_adapt *a, ck_effort e)
{
    if ((int)e > a->top)
        a->top = (int)e;
}

void ck_adapt_trial(ck_adapt *a, ck_effort e, size_t n, size_t stored, double cpu_s)
{
    ck_adapt_want(a, e);
    if (n && stored && cpu_s > 0) {
        a->speed[e] = 1 / (cpu_s / (double)n + JOB_S_PER_B);
        a->ratio[e] = (double)n / (double)stored;
    }
}

/* Unmeasured efforts: RAW is about a copy; a higher one is taken as half as fast as the one
 * below and no better, so it is only tried where the store is behind by a wide margin. */
static double speed_of(const ck_adapt *a, int e)
{
    if (a->speed[e] > 0)
        return a->speed[e];
    return e == CK_EFFORT_RAW ? RAW_GUESS : speed_of(a, e - 1) / 2;
}

static double ratio_of(const ck_adapt *a, int e)
{
    if (a->ratio[e] > 0)
        return a->ratio[e];
    return e == CK_EFFORT_RAW ? 1 : ratio_of(a, e - 1);
}

/* What the workers deliver at effort e: measured, else scaled from the nearest measured effort
 * by CPU cost, else all workers at the measured (or trial) speed. */
static double cpu_of(const ck_adapt *a, int e)
{
    int d, k;

    if (a->cpu_bps[e] > 0)
        return a->cpu_bps[e];
    for (d = 1; d < CK_ADAPT_EFFORTS; d++)
        for (k = e - d; k <= e + d; k += 2 * d)
            if (k >= 0 && k < CK_ADAPT_EFFORTS && a->cpu_bps[k] > 0)
                return a->cpu_bps[k] * speed_of(a, e) / speed_of(a, k);
    return a->workers * speed_of(a, e);
}

/* Raw bytes per second effort e delivers: what it delivered beats what the model predicts for
 * it (the model misses costs that land elsewhere: the coordinator's copies, a disk's deferred
 * flush), capped by what the store takes now. */
static double predict(const ck_adapt *a, int e)
{
    double t = a->delivered_bps[e] > 0 ? a->delivered_bps[e] : cpu_of(a, e);
    double by_store = a->store_bps * ratio_of(a, e);

    return a->store_bps > 0 && by_store < t ? by_store : t;
}

ck_effort ck_adapt_choose(const ck_adapt *a)
{
    double t[CK_ADAPT_EFFORTS], best = 0;
    int e, b = CK_EFFORT_RAW;

    for (e = 0; e <= a->top; e++) {
        t[e] = predict(a, e);
        if (t[e] > best) {
            best = t[e];
            b = e;
        }
    }
    /* a higher effort is kept while the time it adds is within SLACK, or within the share of
     * bytes it saves: window measurements on a busy machine move by more than that, while the
     * bytes saved are certain (and paid for again at every restore) */
    for (e = a->top; e > b; e--) {
        double keep = ratio_of(a, b) / ratio_of(a, e);

        if (t[e] >= (keep < SLACK ? keep : SLACK) * best)
            break;
    }
    return (ck_effort)e;
}

void ck_adapt_start(ck_adapt *a)
{
    int e, tried = 0;

    if (!a->on)
        return;
    for (e = CK_EFFORT_RAW + 1; e < CK_ADAPT_EFFORTS; e++)
        tried |= a->speed[e] > 0;
    if (!tried)
        return; /* nothing to go by (no sample): compress, and measure */
    for (e = a->top; e > CK_EFFORT_RAW; e--)
        if (a->speed[e] > 0 && a->workers * a->speed[e] >= START_BPS)
            break;
    atomic_store(&a->cap, e);
}

void ck_adapt_plan(ck_adapt *a, uint64_t chunks, uint64_t chunk_size, uint64_t buffer_bytes,
                   int flush_at_end)
{
    a->no_probe = flush_at_end;
    a->left = chunks;
    a->skip = chunk_size ? (unsigned)((buffer_bytes + chunk_size - 1) / chunk_size) : 0;
}

ck_effort ck_adapt_next(ck_adapt *a, ck_effort want)
{
    int left = atomic_load(&a->probe_left), cap = atomic_load(&a->cap);

    /* a chunk whose file asks for less than the probe does not take one of its tickets */
    while (left > 0 && (int)want >= atomic_load(&a->probe_effort) &&
           !atomic_compare_exchange_weak(&a->probe_left, &left, left - 1))
        ;
    if (left > 0 && (int)want >= atomic_load(&a->probe_effort))
        cap = atomic_load(&a->probe_effort);
    return (int)want < cap ? want : (ck_effort)cap;
}

/* Moves the ceiling to e; an effort never measured is probed on one window of chunks first
 * (once: a probe that never completes a window falls back to moving the ceiling). */
static void move_to(ck_adapt *a, ck_effort e)
{
    atomic_store(&a->probe_left, 0);
    if ((int)e == atomic_load(&a->cap))
        return;
    if (a->delivered_bps[e] <= 0 && !a->probed[e]) {
        unsigned len = a->skip + PROBE;

        if (a->no_probe || a->left < (uint64_t)PAYBACK * len) {
            /* no probe can measure the store, or pay back: stay, unless the prediction is
             * far from any doubt (a slow --level against a store that outruns it) */
            int cap = atomic_load(&a->cap);

            if ((int)e < cap && predict(a, e) >= CLEAR * predict(a, cap))
                atomic_store(&a->cap, (int)e);
            return;
        }
        a->probed[e] = 1;
        a->probing = (int)e;
        a->skipping = a->skip;
        a->waited = 0;
        atomic_store(&a->probe_effort, (int)e);
        atomic_store(&a->probe_left, (int)len);
        return;
    }
    atomic_store(&a->cap, (int)e);
}

void ck_adapt_chunk(ck_adapt *a, ck_effort e, size_t raw, size_t stored, double cpu_s,
                    double wait_cpu, double wait_store, double now)
{
    double t;
    int probe;

    if (!a->on)
        return;
    if (raw && cpu_s > 0)
        ewma(&a->speed[e], (double)raw / cpu_s, ALPHA);
    if (raw && stored)
        ewma(&a->ratio[e], (double)raw / (double)stored, ALPHA);
    if (a->left != UINT64_MAX && a->left)
        a->left--;
    /* a probe whose chunks never come (their files ask for less) is given up */
    if (a->probing >= 0 && (int)e != a->probing && ++a->waited > 2 * WINDOW + a->skip + PROBE)
        a->probing = -1;
    if ((int)e == a->probing && a->skipping) { /* these fill the store's buffers: not measured */
        a->skipping--;
        window_reset(a, now);
        return;
    }
    if (a->probing >= 0 && (int)e != a->probing) {
        if (a->n == 0) /* the probe's window starts with its first measured chunk */
            a->since = now;
        return; /* and counts the probe's chunks */
    }
    /* a window of one effort measures it; a mixed one (files asking for different efforts)
     * still measures the store */
    a->effort = a->n == 0 || a->effort == (int)e ? (int)e : -1;
    a->n++;
    a->raw += (double)raw;
    a->stored += (double)stored;
    a->wait_cpu += wait_cpu;
    a->wait_store += wait_store;
    /* a store left waiting long (a slow --level) is answered before the window is full */
    probe = a->probing >= 0 && a->effort == a->probing;
    if (a->n < (probe ? PROBE : WINDOW) && !(a->wait_cpu > 1.5 * a->wait_store + NOW))
        return;
    if (probe)
        a->probing = -1;
    t = now - a->since;
    /* the first window fills the pipeline: threads start, buffers are touched the first time */
    if (a->windows++ && t > 0 && a->wait_store + a->wait_cpu > 0) {
        double bps = a->stored / t, share = a->wait_store / (a->wait_store + a->wait_cpu);

        /* the store is behind when the coordinator waited longer for it than for chunks;
         * its rate is what it took while busy. Otherwise compression is behind, and what
         * the store took is only a floor. */
        if (a->effort >= 0)
            ewma(&a->delivered_bps[a->effort], a->raw / t, 0.5);
        if (share > 0.5) {
            ewma(&a->store_bps, a->stored / a->wait_store, 0.5);
        } else {
            if (a->store_bps > 0 && bps > a->store_bps)
                a->store_bps = bps;
            if (a->effort >= 0)
                ewma(&a->cpu_bps[a->effort], a->raw / t, 0.5);
        }
    }
    if (a->windows > 1 && a->probing < 0) /* no decision while a probe is under way */
        move_to(a, ck_adapt_choose(a));
    window_reset(a, now);
}
