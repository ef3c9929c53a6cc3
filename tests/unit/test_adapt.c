/* adapt: the effort controller against a simulated pipeline (workers of a given speed per
 * effort, a store of a given rate, the ring's lag between a choice and the chunks it shows
 * in), so each property is checked on known truths rather than on a noisy machine. */
#include <criterion/criterion.h>

#include "adapt.h"

#define CHUNK ((size_t)4 << 20)
#define LAG 8 /* chunks made before a new ceiling reaches the store */

typedef struct sim {
    unsigned workers;
    double speed[3]; /* raw bytes per CPU second of one worker */
    double ratio[3];
    double store_bps; /* stored bytes per second */
    int file_max;     /* the files' own highest effort */
    int alternate;    /* every other chunk's file asks for one effort less (mixed files) */
} sim;

typedef struct outcome {
    double seconds;
    unsigned chunks[3];
    ck_effort last_cap;
} outcome;

/* what chunk i's file asks for */
static ck_effort wants(const sim *s, unsigned i)
{
    return (ck_effort)(s->alternate && i % 2 && s->file_max ? s->file_max - 1 : s->file_max);
}

/* Steady-state pipeline: a chunk costs raw/(workers*speed) of wall time to make and
 * stored/store_bps to store; the slower side sets the pace and the other one waits. */
static void step(ck_adapt *a, const sim *s, ck_effort e, double *now, outcome *o)
{
    double stored = (double)CHUNK / s->ratio[e];
    double make = (double)CHUNK / (s->workers * s->speed[e]);
    double put = stored / s->store_bps;
    double wait_cpu = make > put ? make - put : 0;

    *now += make > put ? make : put;
    o->chunks[e]++;
    ck_adapt_chunk(a, e, CHUNK, (size_t)stored, (double)CHUNK / s->speed[e], wait_cpu, put, *now);
}

/* n chunks; the store's rate becomes store2 (if not 0) after half of them. Trials on a sample
 * tell the controller each effort's speed first, as push does. */
static outcome run(const sim *s0, int adapt_on, unsigned n, double store2)
{
    sim s = *s0;
    ck_adapt a;
    ck_effort ring[LAG];
    double now = 0;
    outcome o = {0};
    unsigned i;
    int e;

    ck_adapt_init(&a, adapt_on, s.workers, now);
    for (e = 0; e <= s.file_max; e++)
        ck_adapt_trial(&a, (ck_effort)e, 1 << 17, (size_t)((1 << 17) / s.ratio[e]),
                       (1 << 17) / s.speed[e]);
    ck_adapt_plan(&a, n, CHUNK, 0, 0);
    ck_adapt_start(&a);
    for (i = 0; i < LAG; i++)
        ring[i] = ck_adapt_next(&a, wants(&s, i));
    for (i = 0; i < n; i++) {
        if (store2 > 0 && i == n / 2)
            s.store_bps = store2;
        step(&a, &s, ring[i % LAG], &now, &o);
        ring[i % LAG] = ck_adapt_next(&a, wants(&s, i + LAG));
    }
    o.seconds = now;
    o.last_cap = ck_adapt_cap(&a);
    return o;
}

/* the same pipeline with the ceiling fixed at effort e */
static double fixed(const sim *s, int e, unsigned n)
{
    sim t = *s;

    t.file_max = e < s->file_max ? e : s->file_max;
    return run(&t, 0, n, 0).seconds;
}

/* float32 at level 1: raw ~3 GB/s per CPU, fast (exponent entropy coding) ~1.2 GB/s, ratio
 * 1.2; unfiltered data at zstd level 1 would be "full" */
static const sim floats = {2, {3e9, 1.2e9, 0.4e9}, {1.0, 1.2, 1.25}, 0, CK_EFFORT_FAST, 0};
/* the same with --level 19: full is 10 MB/s per CPU */
static const sim level19 = {2, {3e9, 1.2e9, 10e6}, {1.0, 1.2, 1.22}, 0, CK_EFFORT_FULL, 0};

Test(adapt, slow_store_keeps_the_top_effort)
{
    sim s = floats;
    outcome o;

    s.store_bps = 100e6; /* a 1 Gbit/s link */
    o = run(&s, 1, 256, 0);
    cr_assert_geq(o.chunks[CK_EFFORT_FAST], 250, "fast %u raw %u", o.chunks[CK_EFFORT_FAST],
                  o.chunks[CK_EFFORT_RAW]);
    cr_assert_leq(o.seconds, fixed(&s, CK_EFFORT_FAST, 256) * 1.01);
}

Test(adapt, store_faster_than_compression_gets_raw_chunks)
{
    sim s = floats;
    outcome o;

    s.store_bps = 10e9;
    o = run(&s, 1, 256, 0);
    cr_assert_eq(o.last_cap, CK_EFFORT_RAW);
    cr_assert_geq(o.chunks[CK_EFFORT_RAW], 200, "raw %u", o.chunks[CK_EFFORT_RAW]);
    cr_assert_leq(o.seconds, fixed(&s, CK_EFFORT_RAW, 256) * 1.05 + 0.03, "%f vs raw %f", o.seconds,
                  fixed(&s, CK_EFFORT_RAW, 256));
}

Test(adapt, slow_level_is_never_tried_on_a_fast_store)
{
    sim s = level19;
    outcome o;

    s.store_bps = 500e6;
    o = run(&s, 1, 256, 0);
    cr_assert_eq(o.chunks[CK_EFFORT_FULL], 0, "full %u", o.chunks[CK_EFFORT_FULL]);
    cr_assert_leq(o.seconds, fixed(&s, CK_EFFORT_RAW, 256), "%f vs raw %f", o.seconds,
                  fixed(&s, CK_EFFORT_RAW, 256));
}

Test(adapt, slow_level_is_used_where_the_store_is_slower_still)
{
    sim s = level19;
    outcome o;

    s.store_bps = 5e6; /* a thin WAN link: 20 MB/s of level 19 keeps it busy */
    o = run(&s, 1, 256, 0);
    cr_assert_eq(o.last_cap, CK_EFFORT_FULL);
    cr_assert_geq(o.chunks[CK_EFFORT_FULL], 220, "full %u", o.chunks[CK_EFFORT_FULL]);
}

Test(adapt, store_that_slows_down_gets_compression_back)
{
    sim s = floats;
    outcome o;

    s.store_bps = 10e9;
    o = run(&s, 1, 512, 100e6);
    cr_assert_geq(o.last_cap, CK_EFFORT_FAST);
    cr_assert_geq(o.chunks[CK_EFFORT_FAST], 240, "fast %u", o.chunks[CK_EFFORT_FAST]);
}

/* The bound adapt.c promises: never slower than raw by more than 10 %, or than the share of
 * bytes the kept compression saves (1.2 for these floats), plus a fixed start */
Test(adapt, never_slower_than_raw_by_more_than_the_bytes_compression_saves)
{
    static const double stores[] = {20e6, 200e6, 800e6, 1.2e9, 1.6e9, 2.4e9, 2.7e9, 4e9, 20e9};
    const sim *kinds[] = {&floats, &level19};
    size_t i, k;

    for (k = 0; k < 2; k++)
        for (i = 0; i < sizeof(stores) / sizeof(stores[0]); i++) {
            sim s = *kinds[k];
            double t, raw, best, bound = s.ratio[CK_EFFORT_FAST] / s.ratio[CK_EFFORT_RAW];
            int e;

            s.store_bps = stores[i];
            t = run(&s, 1, 512, 0).seconds;
            raw = best = fixed(&s, CK_EFFORT_RAW, 512);
            for (e = 1; e <= s.file_max; e++)
                if (fixed(&s, e, 512) < best)
                    best = fixed(&s, e, 512);
            /* the fixed cost: two windows and the ring at the first ceiling */
            cr_expect_leq(t, raw * bound + 0.03, "%s, store %.0f MB/s: %.3f s, raw %.3f s",
                          k ? "level 19" : "floats", stores[i] / 1e6, t, raw);
            cr_expect_leq(t, best * bound + 0.03, "%s, store %.0f MB/s: %.3f s, best fixed %.3f s",
                          k ? "level 19" : "floats", stores[i] / 1e6, t, best);
        }
}

/* A store a little faster than the compressor (2.7 GB/s against 2.4 GB/s of fast chunks):
 * raw chunks would save 11 % of the time and cost 20 % more bytes; compression stays. */
Test(adapt, compression_stays_where_it_costs_less_time_than_the_bytes_it_saves)
{
    sim s = floats;
    outcome o;

    s.store_bps = 2.7e9;
    o = run(&s, 1, 256, 0);
    cr_assert_geq(o.chunks[CK_EFFORT_FAST], 200, "fast %u raw %u", o.chunks[CK_EFFORT_FAST],
                  o.chunks[CK_EFFORT_RAW]);
}

/* A probe of raw chunks costs their compression; a push too short to pay that back keeps
 * compressing, however fast the store. */
Test(adapt, a_short_push_is_not_probed)
{
    sim s = floats;
    outcome o;

    s.store_bps = 10e9;
    o = run(&s, 1, 40, 0);
    cr_assert_eq(o.chunks[CK_EFFORT_RAW], 0, "raw %u", o.chunks[CK_EFFORT_RAW]);
    o = run(&s, 1, 400, 0); /* the same store, a push long enough */
    cr_assert_gt(o.chunks[CK_EFFORT_RAW], 300, "raw %u", o.chunks[CK_EFFORT_RAW]);
}

/* Where no probe pays back, a level far slower than the store is still left at once. */
Test(adapt, a_short_push_leaves_a_slow_level_without_a_probe)
{
    ck_adapt a;
    int i;

    ck_adapt_init(&a, 1, 2, 0); /* no trial: small files; the ceiling starts at the top */
    ck_adapt_plan(&a, 30, CHUNK, 8 * CHUNK, 0);
    ck_adapt_start(&a);
    for (i = 1; i <= 16; i++) /* level 19 chunks, 10 MB/s per CPU; the store always waits */
        ck_adapt_chunk(&a, CK_EFFORT_FULL, CHUNK, CHUNK / 1.2, 0.42, 0.21, 0.001, i * 0.21);
    cr_assert_lt(ck_adapt_cap(&a), CK_EFFORT_FULL);
}

/* A local disk's flush comes at the end, where no probe sees it: compression stays, while a
 * level far slower than the rest is still left. */
Test(adapt, a_store_that_flushes_at_the_end_is_not_probed)
{
    ck_adapt a;
    int i;

    ck_adapt_init(&a, 1, 2, 0);
    ck_adapt_trial(&a, CK_EFFORT_RAW, 1 << 17, 1 << 17, 40e-6);
    ck_adapt_trial(&a, CK_EFFORT_FAST, 1 << 17, 109000, 110e-6);
    ck_adapt_plan(&a, 1000, CHUNK, 8 * CHUNK, 1);
    ck_adapt_start(&a);
    for (i = 1; i <= 32; i++) /* compression behind, the store idle half the time */
        ck_adapt_chunk(&a, CK_EFFORT_FAST, CHUNK, CHUNK / 1.2, 0.004, 0.002, 0.0005, i * 0.0025);
    cr_assert_eq(ck_adapt_next(&a, CK_EFFORT_FAST), CK_EFFORT_FAST);
    cr_assert_eq(ck_adapt_cap(&a), CK_EFFORT_FAST);
}

/* The probe's first chunks fill the store's buffers and are not measured. */
Test(adapt, a_probe_sends_the_store_buffer_before_it_measures)
{
    ck_adapt a;
    int i, raw = 0;

    ck_adapt_init(&a, 1, 2, 0);
    ck_adapt_trial(&a, CK_EFFORT_RAW, 1 << 17, 1 << 17, 40e-6);
    ck_adapt_trial(&a, CK_EFFORT_FAST, 1 << 17, 109000, 110e-6);
    ck_adapt_plan(&a, 1000, CHUNK, 8 * CHUNK, 0);
    ck_adapt_start(&a);
    /* compression behind: two windows of fast chunks, then a probe of raw ones */
    for (i = 1; i <= 16; i++)
        ck_adapt_chunk(&a, CK_EFFORT_FAST, CHUNK, CHUNK / 1.2, 0.004, 0.002, 0.0005, i * 0.0025);
    while (ck_adapt_next(&a, CK_EFFORT_FAST) == CK_EFFORT_RAW)
        raw++;
    cr_assert_eq(raw, 8 + 4, "the probe hands out %d raw chunks, not buffer 8 + 4", raw);
    cr_assert_eq(ck_adapt_cap(&a), CK_EFFORT_FAST); /* the ceiling waits for the probe */
}

/* Files asking for different efforts in turn (unfiltered next to float files) must not freeze
 * the controller: a 2 GB/s store, zstd level 1 at 350 MB/s per CPU on the unfiltered ones. */
Test(adapt, mixed_files_do_not_freeze_the_ceiling)
{
    sim s = {2, {3e9, 1.2e9, 350e6}, {1.0, 1.2, 1.3}, 2e9, CK_EFFORT_FULL, 1};
    outcome o = run(&s, 1, 2000, 0);

    cr_assert_lt(o.chunks[CK_EFFORT_FULL], 200, "full %u fast %u raw %u", o.chunks[2], o.chunks[1],
                 o.chunks[0]);
}

Test(adapt, off_keeps_the_top_effort)
{
    sim s = floats;
    outcome o;

    s.store_bps = 10e9;
    o = run(&s, 0, 64, 0);
    cr_assert_eq(o.chunks[CK_EFFORT_FAST], 64);
    cr_assert_eq(o.last_cap, CK_EFFORT_FULL);
}

Test(adapt, no_trial_starts_at_the_top)
{
    ck_adapt a;

    ck_adapt_init(&a, 1, 2, 0);
    ck_adapt_start(&a);
    cr_assert_eq(ck_adapt_cap(&a), CK_EFFORT_FULL);
}

Test(adapt, first_ceiling_is_the_highest_effort_fast_enough_to_matter)
{
    ck_adapt a;

    ck_adapt_init(&a, 1, 2, 0);
    ck_adapt_trial(&a, CK_EFFORT_RAW, 1 << 17, 1 << 17, 30e-6);
    ck_adapt_trial(&a, CK_EFFORT_FAST, 1 << 17, 100000, 110e-6);
    ck_adapt_trial(&a, CK_EFFORT_FULL, 1 << 17, 95000, 13e-3); /* 10 MB/s */
    ck_adapt_start(&a);
    cr_assert_eq(ck_adapt_cap(&a), CK_EFFORT_FAST);
}
