/*
 * push - directory -> data objects -> manifest -> latest.
 *
 * The coordinator (the calling thread) walks the sorted entry list and hands chunk jobs to the
 * worker pool (read, digest, compress), one buffer slot per job. Frames of a file must land in
 * its data object in order, so results are collected in issue order through a ring of slots;
 * the coordinator alone appends to writers and owns the manifest under construction. When all
 * objects are committed and synced, the manifest is created (if absent) and only then `latest`
 * moves: a checkpoint is complete or invisible.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "adapt.h"
#include "client.h"
#include "codec.h"
#include "fsutil.h"
#include "path.h"
#include "pool.h"
#include "trailer.h"
#include "walk.h"

typedef struct push_ctx {
    s3ckpt_client *c;
    ck_adapt *adapt;
    ck_codec **codecs;
    const char *base; /* source directory, for messages */
    ck_store *store;
} push_ctx;

static void push_job(ck_slot *s, unsigned worker, void *arg)
{
    push_ctx *ctx = arg;
    struct timespec t0, t1;
    char why[160];

    if (ck_canceled(ctx->c)) {
        s->status = S3CKPT_ECANCELED;
        return;
    }
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
    if (ck_pread_full(s->fd, s->raw, s->raw_len, s->raw_off)) {
        s->status = ck_err_set(&ctx->c->err, S3CKPT_EIO, "push: reading %s/%s: %s", ctx->base,
                               s->path, errno ? strerror(errno) : "file is shorter than listed");
        return;
    }
    ck_digest_bytes(&s->digest, s->raw, s->raw_len);
    if (s->digest_only) {
        /* resume check: also hash the frame already in the store; a damaged or unreadable
         * one only means the object is rewritten */
        s->frame_hash = ~(uint64_t)0;
        if (s->reader &&
            ctx->store->ops->read_at(s->reader, s->stored_off, s->stored, s->stored_len) == 0)
            s->frame_hash = ck_digest64(s->stored, s->stored_len);
        return;
    }
    if (ctx->adapt->on)
        s->effort = (int)ck_adapt_next(ctx->adapt, (ck_effort)s->effort);
    s->stored_len = (uint32_t)ck_codec_compress(ctx->codecs[worker], s->stored, s->stored_cap,
                                                s->raw, s->raw_len, (ck_filter)s->filter,
                                                (ck_effort)s->effort, why, sizeof(why));
    if (s->stored_len == 0)
        s->status = ck_err_set(&ctx->c->err, S3CKPT_EIO, "push: %s/%s chunk %" PRIu64 ": %s",
                               ctx->base, s->path, s->chunk, why);
    else
        s->frame_hash = ck_digest64(s->stored, s->stored_len);
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t1);
    s->cpu_s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
}

typedef struct push_run {
    s3ckpt_client *c;
    ck_store *store;
    ck_walk walk;
    ck_manifest m;
    ck_pool *pool;
    push_ctx ctx;
    char prefix[CK_NAME_MAX + 2];
    int *fds;
    int *reused;        /* entry's object from an interrupted run is kept as it is */
    ck_obj_info *infos; /* filled by the store once an object's commit has finished (sync) */
    int check_frames;   /* resume reads stored frames back (cheap on a local store) */
    int auto_filter;    /* choose each file's filter from a sample */
    ck_filter filter;   /* otherwise this one for every file */
    unsigned char *filter_known; /* entry's filter chosen */
    ck_adapt adapt;
    void *lock; /* this push's claim on the name */
    const s3ckpt_push_opts *opts;
    s3ckpt_stats stats;
    uint64_t done_bytes;
} push_run;

/* 1 when entry i's open file is no longer what the walk saw (another file, other size or
 * mtime): a checkpoint written while we read it would be stored half old, half new. */
static int file_changed(push_run *r, size_t i)
{
    const ck_walk_entry *w = &r->walk.entries[i];
    struct stat sb;

    return fstat(r->fds[i], &sb) || !S_ISREG(sb.st_mode) || (uint64_t)sb.st_dev != w->dev ||
           (uint64_t)sb.st_ino != w->ino || (uint64_t)sb.st_size != w->size ||
           (int64_t)sb.st_mtim.tv_sec * 1000000000 + sb.st_mtim.tv_nsec != w->mtime_ns;
}

static s3ckpt_status check_unchanged(push_run *r, size_t i)
{
    if (!file_changed(r, i))
        return S3CKPT_OK;
    return ck_err_set(&r->c->err, S3CKPT_EIO,
                      "push: %s/%s changed while it was being read; push again once the writer "
                      "has finished",
                      r->walk.base, r->walk.entries[i].path);
}

/* Decides the filter of entry i from up to 8 evenly spread 8 KiB samples of its open file. */
static void choose_filter(push_run *r, size_t i)
{
    enum { WINDOWS = 8, WINDOW = 8192 };
    ck_entry *e = &r->m.entries[i];
    unsigned char *buf;
    size_t len = 0, k;

    if (r->filter_known[i])
        return;
    r->filter_known[i] = 1;
    e->filter = r->filter;
    if (!r->auto_filter || !(buf = malloc(WINDOWS * WINDOW)))
        return;
    for (k = 0; k < WINDOWS; k++) {
        /* 64-byte aligned: tensors in torch.save zips and safetensors are aligned too */
        uint64_t off = e->size > WINDOW ? (e->size - WINDOW) / WINDOWS * k & ~(uint64_t)63 : 0;
        ssize_t got = pread(r->fds[i], buf + len, WINDOW, (off_t)off);

        if (got <= 0)
            break;
        len += (size_t)got & ~(size_t)3;
        if (e->size <= WINDOW)
            break;
    }
    e->filter = ck_filter_guess(buf, len);
    free(buf);
}

/* The most effort entry e's chunks get (the worker applies the adaptive ceiling as it starts
 * a chunk). Grouped floats get no more from zstd's match finder than from entropy coding of
 * the exponent bytes (bench/CODEC_STUDY.md), so FAST is their best unless a higher level is
 * asked for; other data gets the configured level. */
static ck_effort chunk_effort(const push_run *r, ck_filter f)
{
    return f != CK_FILTER_NONE && r->c->level <= 1 ? CK_EFFORT_FAST : CK_EFFORT_FULL;
}

static const char *effort_name(ck_effort e)
{
    return e == CK_EFFORT_FULL ? "full" : e == CK_EFFORT_FAST ? "fast" : "raw";
}

/* Times each effort on a sample from the middle of the largest file, so that the first
 * ceiling is a sensible one and a slow --level is not tried on whole chunks before its speed
 * is known (adapt.c). A file that cannot be read here fails later, where it is read for real. */
static void adapt_trials(push_run *r)
{
    enum { SAMPLE = 128 << 10 };
    size_t i, big = SIZE_MAX, cap = ck_codec_bound(SAMPLE), n;
    uint64_t chunks = 0;
    unsigned char *buf = NULL, *out = NULL;
    char *p = NULL, why[160];
    int fd = -1, e;
    ck_filter f;

    for (i = 0; i < r->m.nentries && r->adapt.on; i++) {
        const ck_entry *en = &r->m.entries[i];

        if (en->is_dir || r->reused[i])
            continue;
        chunks += en->nchunks;
        if (en->size >= SAMPLE && (big == SIZE_MAX || en->size > r->m.entries[big].size))
            big = i;
    }
    if (big == SIZE_MAX || !(p = ck_walk_local_path(&r->walk, &r->walk.entries[big])) ||
        !(buf = malloc(SAMPLE)) || !(out = malloc(cap)) ||
        (fd = open(p, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)) < 0 ||
        ck_pread_full(fd, buf, SAMPLE, (r->m.entries[big].size - SAMPLE) / 2 & ~(uint64_t)63))
        goto out;
    f = r->auto_filter ? ck_filter_guess(buf, SAMPLE) : r->filter;
    for (e = CK_EFFORT_RAW; e <= (int)chunk_effort(r, f); e++) {
        struct timespec t0, t1;

        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
        n = ck_codec_compress(r->ctx.codecs[0], out, cap, buf, SAMPLE, f, (ck_effort)e, why,
                              sizeof(why));
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t1);
        ck_adapt_trial(&r->adapt, (ck_effort)e, SAMPLE, n,
                       (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
    }
out:
    if (fd >= 0)
        close(fd);
    free(out);
    free(buf);
    free(p);
    ck_adapt_plan(&r->adapt, chunks, r->m.chunk_size, r->store->buffer_bytes,
                  r->store->flush_at_end);
    ck_adapt_start(&r->adapt);
    ck_log(r->c, 2, "compression effort starts at %s", effort_name(ck_adapt_cap(&r->adapt)));
}

static s3ckpt_status open_source(push_run *r, size_t i)
{
    char *p = ck_walk_local_path(&r->walk, &r->walk.entries[i]);
    s3ckpt_status st;

    if (!p)
        return ck_err_set(&r->c->err, S3CKPT_ENOMEM, "out of memory");
    /* O_NONBLOCK: a FIFO swapped in since the walk must not block the open */
    r->fds[i] = open(p, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (r->fds[i] < 0)
        st = ck_err_set(&r->c->err, S3CKPT_EIO,
                        "push: %s: %s (it was there when the directory "
                        "was read)",
                        p, strerror(errno));
    else if (!(st = check_unchanged(r, i)))
        choose_filter(r, i);
    free(p);
    return st;
}

static char *data_key(push_run *r, const char *path)
{
    size_t n = strlen(r->prefix) + strlen(CK_DATA_PREFIX) + strlen(path) + 1;
    char *k = malloc(n);

    if (k)
        snprintf(k, n, "%s%s%s", r->prefix, CK_DATA_PREFIX, path);
    return k;
}

/* Opens the data object of entry i and starts its whole-file digest. */
static s3ckpt_status begin_object(push_run *r, size_t i, ck_writer **w, ck_digest_acc *acc)
{
    char *key = data_key(r, r->m.entries[i].path);
    s3ckpt_status st;

    if (!key || ck_digest_acc_init(acc)) {
        free(key);
        return ck_err_set(&r->c->err, S3CKPT_ENOMEM, "out of memory");
    }
    st = r->store->ops->open_write(r->store, key,
                                   ck_codec_bound((size_t)r->m.chunk_size) *
                                           r->m.entries[i].nchunks +
                                       ck_trailer_size(r->m.entries[i].nchunks),
                                   w);
    free(key);
    return st;
}

static s3ckpt_status finish_object(push_run *r, size_t i, ck_writer **w, ck_digest_acc *acc)
{
    ck_entry *e = &r->m.entries[i];
    uint64_t tlen = ck_trailer_size(e->nchunks);
    unsigned char *trailer = malloc(tlen);
    s3ckpt_status st;

    if (!trailer)
        return ck_err_set(&r->c->err, S3CKPT_ENOMEM, "out of memory");
    ck_digest_acc_final(acc, &e->digest);
    ck_trailer_encode(e, r->m.chunk_size, trailer);
    st = r->store->ops->write(*w, trailer, tlen);
    free(trailer);
    if (!st)
        st = r->store->ops->commit(*w, &r->infos[i]); /* the ETag arrives by sync() */
    else
        r->store->ops->abort(*w);
    *w = NULL;
    if (st)
        return st;
    e->object_size += tlen;
    r->stats.transferred_bytes += tlen;
    r->stats.files++;
    return S3CKPT_OK;
}

static void report(push_run *r)
{
    if (r->opts && r->opts->on_progress)
        r->opts->on_progress(r->opts->userdata, r->done_bytes, r->m.bytes);
}

static void adapt_chunk(push_run *r, const ck_slot *s, double wait_cpu, double wait_store)
{
    ck_effort before = ck_adapt_cap(&r->adapt), after;

    ck_adapt_chunk(&r->adapt, (ck_effort)s->effort, s->raw_len, s->stored_len, s->cpu_s, wait_cpu,
                   wait_store, ck_now());
    if ((after = ck_adapt_cap(&r->adapt)) != before)
        ck_log(r->c, 2,
               "compression effort %s -> %s (store takes %.0f MB/s stored; workers make "
               "%.0f/%.0f/%.0f MB/s raw at raw/fast/full, 0 unmeasured)",
               effort_name(before), effort_name(after), r->adapt.store_bps / 1e6,
               r->adapt.cpu_bps[0] / 1e6, r->adapt.cpu_bps[1] / 1e6, r->adapt.cpu_bps[2] / 1e6);
}

static void count_effort(s3ckpt_stats *st, ck_effort e)
{
    if (e == CK_EFFORT_FULL)
        st->chunks_full++;
    else if (e == CK_EFFORT_FAST)
        st->chunks_fast++;
    else
        st->chunks_raw++;
}

/* Issues chunk jobs in entry order and appends their frames in the same order. */
static s3ckpt_status run_pipeline(push_run *r)
{
    size_t nslots = ck_pool_slots(r->pool), n = r->m.nentries, ie = 0, ce = 0;
    uint64_t ic = 0, cc = 0, seq = 0, head = 0;
    ck_slot **ring = calloc(nslots, sizeof(*ring));
    ck_writer *w = NULL;
    double t0, t1;
    ck_digest_acc acc = {NULL};
    s3ckpt_status st = S3CKPT_OK;
    ck_slot *s;

    if (!ring)
        return ck_err_set(&r->c->err, S3CKPT_ENOMEM, "out of memory");
    while (ce < n && !st) {
        ck_entry *e = &r->m.entries[ce];

        if (ck_canceled(r->c)) {
            st = ck_err_set(&r->c->err, S3CKPT_ECANCELED, "push: canceled");
            break;
        }
        if (e->is_dir || r->reused[ce]) {
            ce++;
            continue;
        }
        if (e->nchunks == 0) { /* empty file: an object holding only the chunk index */
            if (!(st = open_source(r, ce)) && !(st = begin_object(r, ce, &w, &acc)))
                st = finish_object(r, ce, &w, &acc);
            if (r->fds[ce] >= 0) {
                close(r->fds[ce]);
                r->fds[ce] = -1;
            }
            ce++;
            continue;
        }
        /* issue while slots are free */
        while (ie < n && (s = ck_pool_acquire(r->pool))) {
            while (ie < n &&
                   (r->m.entries[ie].is_dir || r->reused[ie] || r->m.entries[ie].nchunks == 0))
                ie++;
            if (ie == n) {
                ck_pool_release(r->pool, s);
                break;
            }
            if (ic == 0 && (st = open_source(r, ie))) {
                ck_pool_release(r->pool, s);
                break;
            }
            s->entry = ie;
            s->chunk = ic;
            s->fd = r->fds[ie];
            s->path = r->m.entries[ie].path;
            s->digest_only = 0;
            s->filter = r->m.entries[ie].filter;
            s->effort = chunk_effort(r, (ck_filter)r->m.entries[ie].filter);
            ck_adapt_want(&r->adapt, (ck_effort)s->effort);
            s->raw_off = ic * r->m.chunk_size;
            s->raw_len = r->m.entries[ie].chunks[ic].raw_len;
            ring[seq++ % nslots] = s;
            ck_pool_submit(r->pool, s);
            if (++ic == r->m.entries[ie].nchunks) {
                ie++;
                ic = 0;
            }
        }
        if (st)
            break;
        if (head == seq) { /* cannot happen: entry ce has chunks, so some are in flight */
            st = ck_err_set(&r->c->err, S3CKPT_EINVAL, "push: internal error: no chunk in flight");
            break;
        }
        /* collect the oldest job: it belongs to entry ce, chunk cc */
        t0 = ck_now();
        s = ck_pool_wait(r->pool, ring[head++ % nslots]);
        t1 = ck_now();
        if (s->status) {
            st = ck_err_set(&r->c->err, s->status, "push: canceled");
            ck_pool_release(r->pool, s);
            break;
        }
        if (cc == 0 && (st = begin_object(r, ce, &w, &acc))) {
            ck_pool_release(r->pool, s);
            break;
        }
        st = r->store->ops->write(w, s->stored, s->stored_len);
        adapt_chunk(r, s, t1 - t0, ck_now() - t1);
        count_effort(&r->stats, (ck_effort)s->effort);
        e->chunks[cc].stored_len = s->stored_len;
        e->chunks[cc].digest = s->digest;
        e->chunks[cc].frame_hash = s->frame_hash;
        e->object_size += s->stored_len;
        ck_digest_acc_add(&acc, &s->digest);
        r->stats.chunks++;
        r->stats.transferred_bytes += s->stored_len;
        r->done_bytes += s->raw_len;
        ck_pool_release(r->pool, s);
        if (st)
            break;
        if (++cc == e->nchunks) {
            if ((st = check_unchanged(r, ce)) || (st = finish_object(r, ce, &w, &acc)))
                break;
            close(r->fds[ce]);
            r->fds[ce] = -1;
            ce++;
            cc = 0;
        }
        report(r);
    }
    /* on failure, let jobs in flight finish before their buffers and files go away */
    while ((s = ck_pool_wait(r->pool, NULL)))
        ck_pool_release(r->pool, s);
    r->store->ops->abort(w);
    ck_digest_acc_cleanup(&acc);
    free(ring);
    return st;
}

/* ---- resume: objects left by an interrupted run of the same push ---- */

/* Reads the chunk index of the existing object `key` into cand; 0 when it describes a file
 * like entry i (same size, chunking, object size), else -1. */
static int read_candidate(push_run *r, size_t i, const char *key, ck_entry *cand, ck_obj_info *info)
{
    const ck_entry *e = &r->m.entries[i];
    unsigned char footer[CK_TRAILER_FOOTER], *buf = NULL;
    uint64_t tlen, chunk_size = 0, stored = 0, k;
    ck_reader *rd = NULL;
    int ok = -1;

    if (r->store->ops->head(r->store, key, info) || info->size < ck_trailer_size(0))
        return -1;
    if (r->store->ops->open_read(r->store, key, info->etag, &rd) ||
        r->store->ops->read_at(rd, info->size - CK_TRAILER_FOOTER, footer, sizeof(footer)))
        goto out;
    tlen = ck_trailer_announced(footer);
    if (!tlen || tlen > info->size || !(buf = malloc(tlen)) ||
        r->store->ops->read_at(rd, info->size - tlen, buf, tlen) ||
        ck_trailer_decode(buf, tlen, cand, &chunk_size))
        goto out;
    if (chunk_size != r->m.chunk_size || cand->size != e->size || cand->nchunks != e->nchunks)
        goto out;
    for (k = 0; k < cand->nchunks; k++) {
        if (cand->chunks[k].raw_len != e->chunks[k].raw_len || !cand->chunks[k].stored_len ||
            cand->chunks[k].stored_len > ck_codec_bound((size_t)r->m.chunk_size))
            goto out;
        stored += cand->chunks[k].stored_len;
    }
    ok = stored + tlen == info->size ? 0 : -1;
out:
    free(buf);
    r->store->ops->close_read(rd); /* reopened when its chunks are checked: fds stay bounded */
    return ok;
}

static s3ckpt_status open_leftover(push_run *r, size_t i, ck_reader **reader)
{
    char *key = data_key(r, r->m.entries[i].path);
    s3ckpt_status st;

    if (!key)
        return ck_err_set(&r->c->err, S3CKPT_ENOMEM, "out of memory");
    st = r->store->ops->open_read(r->store, key, "", reader);
    free(key);
    return st;
}

typedef struct key_set {
    char **keys;
    size_t n, cap;
} key_set;

static s3ckpt_status collect_key(void *ud, const char *key, int is_prefix, const ck_obj_info *info)
{
    key_set *k = ud;

    (void)info;
    if (is_prefix)
        return S3CKPT_OK;
    if (k->n == k->cap) {
        size_t cap = k->cap ? k->cap * 2 : 64;
        char **n = realloc(k->keys, cap * sizeof(*n));

        if (!n)
            return S3CKPT_ENOMEM;
        k->keys = n;
        k->cap = cap;
    }
    if (!(k->keys[k->n] = strdup(key)))
        return S3CKPT_ENOMEM;
    k->n++;
    return S3CKPT_OK;
}

static int str_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void key_set_free(key_set *k)
{
    while (k->n)
        free(k->keys[--k->n]);
    free(k->keys);
}

/* Finds data objects that an interrupted run of this push already wrote, digests the local
 * files they claim to hold (no compression), and keeps those that match chunk for chunk.
 * One listing of the checkpoint's data says which exist, so a fresh push sends no request
 * per file. */
static s3ckpt_status find_reusable(push_run *r)
{
    size_t n = r->m.nentries, i, ncand = 0;
    ck_entry *cand = calloc(n + 1, sizeof(*cand));
    ck_obj_info *info = calloc(n + 1, sizeof(*info));
    ck_reader **readers = calloc(n + 1, sizeof(*readers));
    ck_digest_acc acc;
    uint64_t *left = calloc(n + 1, sizeof(*left)), k = 0, off = 0;
    key_set existing = {NULL, 0, 0};
    s3ckpt_status st = S3CKPT_OK;
    ck_slot *s;

    if (!cand || !info || !left || !readers) {
        st = ck_err_set(&r->c->err, S3CKPT_ENOMEM, "out of memory");
        goto out;
    }
    {
        char dprefix[CK_NAME_MAX + 16];

        snprintf(dprefix, sizeof(dprefix), "%s%s", r->prefix, CK_DATA_PREFIX);
        st = r->store->ops->list(r->store, dprefix, 0, collect_key, &existing);
        if (st == S3CKPT_ENOTFOUND) {
            st = S3CKPT_OK;
            ck_err_reset(&r->c->err);
        }
        if (st) {
            if (st == S3CKPT_ENOMEM)
                ck_err_set(&r->c->err, st, "out of memory");
            goto out;
        }
        if (existing.n)
            qsort(existing.keys, existing.n, sizeof(*existing.keys), str_cmp);
    }
    for (i = 0; i < n; i++) {
        char *key;

        if (r->m.entries[i].is_dir)
            continue;
        if (!(key = data_key(r, r->m.entries[i].path))) {
            st = ck_err_set(&r->c->err, S3CKPT_ENOMEM, "out of memory");
            goto out;
        }
        if (!existing.n ||
            !bsearch(&key, existing.keys, existing.n, sizeof(*existing.keys), str_cmp)) {
            free(key); /* not in the store: nothing to check */
            continue;
        }
        if (read_candidate(r, i, key, &cand[i], &info[i]) == 0) {
            r->reused[i] = 1;
            left[i] = cand[i].nchunks;
            ncand++;
        }
        free(key);
    }
    ck_err_reset(&r->c->err); /* a damaged leftover only means it gets rewritten */
    if (!ncand)
        goto out;
    i = 0;
    for (;;) {
        while (i < n && (s = ck_pool_acquire(r->pool))) {
            while (i < n && (!r->reused[i] || k == cand[i].nchunks)) {
                i++;
                k = off = 0;
            }
            if (i == n) {
                ck_pool_release(r->pool, s);
                break;
            }
            if (k == 0 && ((st = open_source(r, i)) ||
                           (r->check_frames && (st = open_leftover(r, i, &readers[i]))))) {
                ck_pool_release(r->pool, s);
                break;
            }
            if (k == 0 && cand[i].filter != r->m.entries[i].filter) {
                r->reused[i] = -1; /* stored with another filter: rewrite it */
                k = cand[i].nchunks;
                ck_pool_release(r->pool, s);
                continue;
            }
            s->entry = i;
            s->chunk = k;
            s->fd = r->fds[i];
            s->path = r->m.entries[i].path;
            s->raw_off = k * r->m.chunk_size;
            s->raw_len = cand[i].chunks[k].raw_len;
            s->reader = readers[i];
            s->stored_off = off;
            s->stored_len = cand[i].chunks[k].stored_len;
            s->digest_only = 1;
            ck_pool_submit(r->pool, s);
            off += cand[i].chunks[k].stored_len;
            k++;
        }
        if (st || !(s = ck_pool_wait(r->pool, NULL)))
            break;
        if (s->status) {
            st = ck_err_set(&r->c->err, s->status, "push: canceled");
            ck_pool_release(r->pool, s);
            break;
        }
        /* a remote object's frames are not read back: its bytes were checked by the store
         * on upload (wire checksum) and its chunk index was written with them */
        if (!ck_digest_equal(&s->digest, &cand[s->entry].chunks[s->chunk].digest) ||
            (r->check_frames && s->frame_hash != cand[s->entry].chunks[s->chunk].frame_hash))
            r->reused[s->entry] = -1; /* local file or stored frame differs: rewrite it */
        if (--left[s->entry] == 0) {
            if (r->reused[s->entry] == 1 && file_changed(r, s->entry))
                r->reused[s->entry] = -1; /* the real pass reports it if it persists */
            close(r->fds[s->entry]);
            r->fds[s->entry] = -1;
            r->store->ops->close_read(readers[s->entry]);
            readers[s->entry] = NULL;
        }
        ck_pool_release(r->pool, s);
    }
    while ((s = ck_pool_wait(r->pool, NULL)))
        ck_pool_release(r->pool, s);
    if (st)
        goto out;
    ck_err_reset(&r->c->err); /* unreadable leftovers were only reasons to rewrite */
    for (i = 0; i < n; i++) {
        ck_entry *e = &r->m.entries[i];

        if (r->fds[i] >= 0) {
            close(r->fds[i]);
            r->fds[i] = -1;
        }
        if (r->reused[i] != 1) {
            r->reused[i] = 0;
            continue;
        }
        memcpy(e->chunks, cand[i].chunks, e->nchunks * sizeof(*e->chunks));
        if (ck_digest_acc_init(&acc)) {
            st = ck_err_set(&r->c->err, S3CKPT_ENOMEM, "out of memory");
            goto out;
        }
        for (k = 0; k < e->nchunks; k++) /* derived, not taken from the leftover's index */
            ck_digest_acc_add(&acc, &e->chunks[k].digest);
        ck_digest_acc_final(&acc, &e->digest);
        e->object_size = info[i].size;
        if (!(e->etag = strdup(info[i].etag))) {
            st = ck_err_set(&r->c->err, S3CKPT_ENOMEM, "out of memory");
            goto out;
        }
        r->stats.files++;
        r->stats.chunks += e->nchunks;
        r->stats.reused_bytes += e->size;
        r->done_bytes += e->size;
        ck_log(r->c, 1, "%s: already in the store from an interrupted push, kept", e->path);
    }
out:
    for (i = 0; cand && i < n; i++) {
        free(cand[i].chunks);
        if (readers)
            r->store->ops->close_read(readers[i]);
    }
    free(readers);
    free(cand);
    free(info);
    free(left);
    key_set_free(&existing);
    return st;
}

/* What readers refuse must be refused before anything is written: too many entries, a chunk
 * index too large to read back, a manifest over the reader's cap (estimated generously). */
static s3ckpt_status check_limits(push_run *r)
{
    uint64_t estimate = 1024, i;

    if (r->m.nentries > CK_MAX_ENTRIES)
        return ck_err_set(&r->c->err, S3CKPT_EUNSUPPORTED,
                          "push: %zu files and directories; a checkpoint holds at most %u",
                          r->m.nentries, CK_MAX_ENTRIES);
    for (i = 0; i < r->m.nentries; i++) {
        const ck_entry *e = &r->m.entries[i];

        if (ck_trailer_size(e->nchunks) > CK_TRAILER_MAX)
            return ck_err_set(&r->c->err, S3CKPT_EUNSUPPORTED,
                              "push: %s has %" PRIu64 " chunks of %" PRIu64
                              " bytes, too many for one file; use a larger --chunk-size",
                              e->path, e->nchunks, r->m.chunk_size);
        estimate += 256 + 2 * strlen(e->path) + 64 * e->nchunks;
    }
    if (estimate > CK_MANIFEST_MAX_BYTES)
        return ck_err_set(&r->c->err, S3CKPT_EUNSUPPORTED,
                          "push: the manifest would be about %" PRIu64
                          " bytes, over the %zu readers accept; use a larger --chunk-size",
                          estimate, CK_MANIFEST_MAX_BYTES);
    return S3CKPT_OK;
}

static s3ckpt_status build_entries(push_run *r)
{
    size_t i;

    r->m.entries = calloc(r->walk.n + 1, sizeof(*r->m.entries));
    r->fds = malloc((r->walk.n + 1) * sizeof(*r->fds));
    r->reused = calloc(r->walk.n + 1, sizeof(*r->reused));
    r->infos = calloc(r->walk.n + 1, sizeof(*r->infos));
    r->filter_known = calloc(r->walk.n + 1, 1);
    if (!r->m.entries || !r->fds || !r->reused || !r->infos || !r->filter_known)
        return ck_err_set(&r->c->err, S3CKPT_ENOMEM, "out of memory");
    for (i = 0; i < r->walk.n; i++) {
        const ck_walk_entry *w = &r->walk.entries[i];
        ck_entry *e = &r->m.entries[i];
        uint64_t k;
        size_t klen = strlen(CK_DATA_PREFIX) + strlen(w->path) + 1;

        r->fds[i] = -1;
        r->m.nentries++;
        e->is_dir = w->is_dir;
        e->mode = w->mode;
        e->size = w->size;
        if (!(e->path = strdup(w->path)))
            return ck_err_set(&r->c->err, S3CKPT_ENOMEM, "out of memory");
        if (e->is_dir)
            continue;
        e->nchunks = ck_chunk_count(w->size, r->m.chunk_size);
        e->key = malloc(klen);
        e->chunks = calloc(e->nchunks + 1, sizeof(*e->chunks));
        if (!e->key || !e->chunks)
            return ck_err_set(&r->c->err, S3CKPT_ENOMEM, "out of memory");
        snprintf(e->key, klen, "%s%s", CK_DATA_PREFIX, w->path);
        for (k = 0; k < e->nchunks; k++)
            e->chunks[k].raw_len = ck_chunk_len(w->size, r->m.chunk_size, k);
    }
    ck_manifest_sum(&r->m);
    return check_limits(r);
}

static s3ckpt_status set_header(push_run *r, const char *path, const s3ckpt_push_opts *o)
{
    char name[CK_NAME_MAX + 1], why[128], stamp[40];
    struct timespec ts;
    struct tm tm;
    size_t i;

    if (o && o->name)
        snprintf(name, sizeof(name), "%s", o->name);
    else
        ck_name_derive(path, o ? o->step : -1, name, sizeof(name));
    if (ck_name_check(o && o->name ? o->name : name, why, sizeof(why)))
        return ck_err_set(&r->c->err, S3CKPT_EINVAL, "push: bad checkpoint name \"%.200s\": %s",
                          o && o->name ? o->name : name, why);
    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(stamp + strlen(stamp), sizeof(stamp) - strlen(stamp), ".%03ldZ", ts.tv_nsec / 1000000);
    r->m.name = strdup(name);
    r->m.created = strdup(stamp);
    r->m.tool = strdup("s3ckpt " S3CKPT_VERSION_STRING);
    r->m.step = o && o->step >= 0 ? o->step : -1;
    r->m.chunk_size = r->c->chunk_size;
    if (!r->m.name || !r->m.created || !r->m.tool)
        return ck_err_set(&r->c->err, S3CKPT_ENOMEM, "out of memory");
    snprintf(r->prefix, sizeof(r->prefix), "%s/", name);
    if (!o || !o->meta_count)
        return S3CKPT_OK;
    if (o->meta_count > CK_MAX_META)
        return ck_err_set(&r->c->err, S3CKPT_EINVAL, "push: more than %u metadata keys",
                          CK_MAX_META);
    r->m.meta = calloc(o->meta_count, sizeof(*r->m.meta));
    if (!r->m.meta)
        return ck_err_set(&r->c->err, S3CKPT_ENOMEM, "out of memory");
    for (i = 0; i < o->meta_count; i++) {
        const s3ckpt_kv *kv = &o->meta[i];
        size_t j;

        if (!kv->key || !*kv->key || !kv->value || strlen(kv->key) > CK_META_KEY_MAX ||
            strlen(kv->value) > CK_META_VALUE_MAX)
            return ck_err_set(&r->c->err, S3CKPT_EINVAL,
                              "push: metadata keys are 1..%u bytes, values up to %u",
                              CK_META_KEY_MAX, CK_META_VALUE_MAX);
        if (!ck_utf8_valid(kv->key) || !ck_utf8_valid(kv->value))
            return ck_err_set(&r->c->err, S3CKPT_EINVAL,
                              "push: metadata \"%.64s\" is not valid UTF-8", kv->key);
        for (j = 0; j < i; j++)
            if (!strcmp(r->m.meta[j].key, kv->key))
                return ck_err_set(&r->c->err, S3CKPT_EINVAL,
                                  "push: metadata key \"%s\" given twice", kv->key);
        r->m.meta[i].key = strdup(kv->key);
        r->m.meta[i].value = strdup(kv->value);
        r->m.meta_count++;
        if (!r->m.meta[i].key || !r->m.meta[i].value)
            return ck_err_set(&r->c->err, S3CKPT_ENOMEM, "out of memory");
    }
    return S3CKPT_OK;
}

/* Writes the manifest if no other push committed the name first. */
static s3ckpt_status commit(push_run *r)
{
    char key[CK_NAME_MAX + 32], why[256] = "", *json = NULL;
    ck_manifest check;
    size_t len;
    s3ckpt_status st;

    size_t i;

    /* every object is complete and durable first; their ETags are known from then on */
    if ((st = r->store->ops->sync(r->store)))
        return st;
    for (i = 0; i < r->m.nentries; i++) {
        ck_entry *e = &r->m.entries[i];

        if (e->is_dir || r->reused[i])
            continue;
        if (r->infos[i].size != e->object_size)
            return ck_err_set(&r->c->err, S3CKPT_EPROTOCOL,
                              "push: the store holds %" PRIu64 " bytes for %s, %" PRIu64
                              " were written; nothing was committed",
                              r->infos[i].size, e->path, e->object_size);
        if (!(e->etag = strdup(r->infos[i].etag)))
            return ck_err_set(&r->c->err, S3CKPT_ENOMEM, "out of memory");
    }
    ck_manifest_sum(&r->m);
    st = ck_manifest_validate(&r->m, why, sizeof(why));
    if (st)
        return ck_err_set(&r->c->err, S3CKPT_EINVAL, "push: refusing to commit: %s", why);
    st = ck_manifest_encode(&r->m, &json, &len);
    if (st)
        return ck_err_set(&r->c->err, st, "push: out of memory encoding the manifest");
    /* what is committed must be what every reader accepts */
    st = ck_manifest_decode(&check, json, len, why, sizeof(why));
    if (!st && (check.nentries != r->m.nentries || check.bytes != r->m.bytes))
        st = S3CKPT_ECORRUPT;
    ck_manifest_cleanup(&check);
    if (st) {
        free(json);
        return ck_err_set(&r->c->err, st == S3CKPT_ENOMEM ? st : S3CKPT_EUNSUPPORTED,
                          "push: the manifest would not read back (%s); nothing was committed",
                          st == S3CKPT_ECORRUPT && why[0] ? why : "entries lost in encoding");
    }
    ck_manifest_key(key, sizeof(key), r->m.name);
    st = r->store->ops->put(r->store, key, json, len, CK_PUT_IF_ABSENT, NULL, NULL);
    if (st == S3CKPT_EEXISTS)
        ck_err_set(&r->c->err, st,
                   "push: checkpoint %s was committed by another push meanwhile; this one "
                   "was not committed",
                   r->m.name);
    free(json);
    return st;
}

/* Pushing a directory into a store inside it would copy the store into itself. */
static s3ckpt_status check_not_nested(push_run *r, const char *path)
{
    char *src = realpath(path, NULL);
    const char *root = r->store->local_root;
    size_t n = src ? strlen(src) : 0;
    s3ckpt_status st = S3CKPT_OK;

    if (src && root && !strncmp(root, src, n) && (root[n] == '/' || root[n] == '\0'))
        st = ck_err_set(&r->c->err, S3CKPT_EINVAL,
                        "push: the store %s lies inside %s, the directory being pushed",
                        r->store->url, path);
    free(src);
    return st;
}

static s3ckpt_status prepare_name(push_run *r, int force)
{
    char key[CK_NAME_MAX + 32];
    ck_obj_info info;
    s3ckpt_status st;

    ck_manifest_key(key, sizeof(key), r->m.name);
    st = r->store->ops->head(r->store, key, &info);
    if (st == S3CKPT_ENOTFOUND)
        return S3CKPT_OK;
    if (st)
        return st;
    if (!force) {
        /* a push killed after its commit but before moving `latest` is re-run: the committed
         * checkpoint stays as it is, and `latest` gets the move it missed (forward only) */
        const char *moved = "";
        ck_manifest old;

        ck_manifest_init(&old);
        if (!(r->opts && r->opts->no_latest) &&
            ck_manifest_load(r->c, r->store, r->m.name, &old) == S3CKPT_OK &&
            ck_latest_update(r->c, r->store, r->m.name, old.step) == S3CKPT_OK)
            moved = "; latest is up to date with it";
        ck_manifest_cleanup(&old);
        ck_err_reset(&r->c->err);
        return ck_err_set(&r->c->err, S3CKPT_EEXISTS,
                          "push: checkpoint %s already exists in %s (use --force to replace "
                          "it)%s",
                          r->m.name, r->store->url, moved);
    }
    /* replacing: make the old one invisible before its objects are overwritten */
    ck_log(r->c, 1, "replacing checkpoint %s", r->m.name);
    st = r->store->ops->remove(r->store, key);
    return st ? st : r->store->ops->sync(r->store); /* gone for good before data changes */
}

static s3ckpt_status push_options(push_run *r, const s3ckpt_push_opts *o)
{
    const char *f = o && o->version >= 2 && o->filter ? o->filter : "auto";

    r->auto_filter = !strcmp(f, "auto");
    if (!r->auto_filter && ck_filter_parse(f, &r->filter))
        return ck_err_set(
            &r->c->err, S3CKPT_EINVAL,
            "push: unknown filter \"%.40s\" (auto, none, bytes2, bytes4, float2 or float4)", f);
    ck_adapt_init(&r->adapt, !(o && o->version >= 2 && o->no_adapt), r->c->workers, ck_now());
    r->ctx.adapt = &r->adapt;
    return S3CKPT_OK;
}

s3ckpt_status ck_push_run(s3ckpt_client *c, const char *path, const char *store_url,
                          const s3ckpt_push_opts *opts)
{
    push_run r;
    size_t slot_bytes, nslots, i;
    s3ckpt_status st;
    double t0 = ck_now();

    memset(&r, 0, sizeof(r));
    ck_manifest_init(&r.m);
    r.c = c;
    r.opts = opts;
    r.ctx.c = c;
    if ((st = push_options(&r, opts)))
        goto out;
    /* a remote store's part buffers get half the memory bound, the chunk slots the rest */
    c->remote.part_memory = c->max_memory / 2;
    c->remote.max_write = ck_codec_bound((size_t)c->chunk_size);
    if ((st = ck_walk_run(&r.walk, path, &c->err)) || (st = set_header(&r, path, opts)) ||
        (st = build_entries(&r)) ||
        (st = ck_store_open(&r.store, store_url, 1, &c->remote, &c->err)) ||
        (st = check_not_nested(&r, path)) ||
        (st = r.store->ops->lock(r.store, r.m.name, &r.lock)) ||
        (st = prepare_name(&r, opts && opts->force)))
        goto out;
    r.ctx.base = r.walk.base;
    r.ctx.store = r.store;
    r.ctx.codecs = calloc(c->workers, sizeof(*r.ctx.codecs));
    if (!r.ctx.codecs) {
        st = ck_err_set(&c->err, S3CKPT_ENOMEM, "out of memory");
        goto out;
    }
    for (i = 0; i < c->workers; i++) {
        if (!(r.ctx.codecs[i] = ck_codec_new(c->level))) {
            st = ck_err_set(&c->err, S3CKPT_ENOMEM, "out of memory creating zstd contexts");
            goto out;
        }
    }
    slot_bytes = (size_t)c->chunk_size + ck_codec_bound((size_t)c->chunk_size);
    if ((st = ck_client_check_memory(c, "push", c->chunk_size, slot_bytes)))
        goto out;
    if (!r.store->local_root) { /* two chunk slots and two part buffers at the least */
        uint64_t part = c->remote.part_size ? c->remote.part_size : (uint64_t)8 << 20;
        uint64_t need =
            2 * (uint64_t)slot_bytes + 2 * (part + ck_codec_bound((size_t)c->chunk_size));

        if (need > c->max_memory) {
            st = ck_err_set(&c->err, S3CKPT_EINVAL,
                            "push: %" PRIu64 "-byte chunks and %" PRIu64
                            "-byte parts need at least %" PRIu64
                            " bytes of buffers, more than the memory bound of %" PRIu64
                            " (raise --max-memory, or lower --chunk-size or --part-size)",
                            c->chunk_size, part, need, c->max_memory);
            goto out;
        }
    }
    nslots = ck_client_slots(c, slot_bytes);
    if (!r.store->local_root && nslots > 2 && nslots * slot_bytes > c->max_memory / 2)
        nslots = c->max_memory / 2 / slot_bytes > 2 ? c->max_memory / 2 / slot_bytes : 2;
    st = ck_pool_new(&r.pool, c->workers, nslots, (size_t)c->chunk_size,
                     ck_codec_bound((size_t)c->chunk_size), push_job, &r.ctx);
    if (st) {
        ck_err_set(&c->err, st, "out of memory allocating %zu-byte chunk buffers", slot_bytes);
        goto out;
    }
    ck_log(c, 1, "push %s -> %s/%s: %" PRIu64 " files, %" PRIu64 " bytes, %u workers, %zu slots",
           path, store_url, r.m.name, r.m.files, r.m.bytes, c->workers, ck_pool_slots(r.pool));
    r.check_frames = r.store->local_root != NULL;
    if ((st = r.store->ops->prepare(r.store, r.prefix)) || (st = find_reusable(&r)))
        goto out;
    report(&r);
    adapt_trials(&r);
    if ((st = run_pipeline(&r)) || (st = commit(&r)))
        goto out;
    if (!(opts && opts->no_latest) && (st = ck_latest_update(c, r.store, r.m.name, r.m.step))) {
        char why[CK_ERRMSG_MAX];

        snprintf(why, sizeof(why), "%s", s3ckpt_errmsg(c));
        ck_err_reset(&c->err);
        ck_err_set(&c->err, st, "push: checkpoint %s was committed, but latest was not updated: %s",
                   r.m.name, why);
    }
out:
    if (opts && opts->name_out && opts->name_out_size && r.m.name)
        snprintf(opts->name_out, opts->name_out_size, "%s", r.m.name);
    if (opts && opts->stats) {
        r.stats.raw_bytes = r.m.bytes;
        r.stats.stored_bytes = r.m.stored_bytes;
        r.stats.seconds = ck_now() - t0;
        ck_client_add_counters(r.store, &r.stats);
        if (!r.check_frames) { /* what really went over the wire */
            ck_store_counters k;

            ck_store_counters_get(r.store, &k);
            r.stats.transferred_bytes = k.bytes_uploaded;
        }
        *opts->stats = r.stats;
    }
    ck_pool_free(r.pool);
    /* a failed push: background uploads stop before the name is unlocked and before the
     * results they would write (r.infos) go away */
    if (st && r.store && r.store->ops->discard)
        r.store->ops->discard(r.store);
    for (i = 0; r.ctx.codecs && i < c->workers; i++)
        ck_codec_free(r.ctx.codecs[i]);
    free(r.ctx.codecs);
    for (i = 0; r.fds && i < r.m.nentries; i++)
        if (r.fds[i] >= 0)
            close(r.fds[i]);
    free(r.fds);
    free(r.reused);
    free(r.filter_known);
    if (r.store)
        r.store->ops->unlock(r.store, r.lock);
    ck_store_free(r.store);
    free(r.infos);
    ck_manifest_cleanup(&r.m);
    ck_walk_cleanup(&r.walk);
    return st;
}
