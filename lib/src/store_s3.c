/*
 * store_s3 - the S3 backend: s3://bucket/prefix on any S3-compatible endpoint.
 *
 * Writers pack whole frames, in order, into part buffers; a full part (>= the part target) is
 * handed to a sender thread, so many parts and objects are in flight while the coordinator
 * keeps compressing. Objects that never fill a part go out as one PutObject. commit() only
 * queues the last step (PutObject or CompleteMultipartUpload): sync() waits for all of them and
 * returns the first failure, and the ETag lands in the caller's ck_obj_info by then. Part
 * buffers come from a fixed set, so memory stays bounded whatever the checkpoint size.
 *
 * Resume without a journal: prepare() lists the multipart uploads left under the checkpoint's
 * prefix by an interrupted push; a writer for such a key lists its parts and skips every part
 * whose size and MD5 (its ETag) equal what it would send now. Leftover uploads of other keys
 * stay until `s3ckpt cleanup` aborts them.
 *
 * Readers issue one ranged GET per read, pinned with If-Match to the ETag in the manifest.
 * Conditional writes (manifest create, `latest` compare-and-swap, the name lock) use
 * If-None-Match / If-Match when the endpoint honours them (probed once); otherwise a HEAD check
 * precedes the write, which leaves a short race window (documented in docs/FORMAT.md).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "awsconf.h"
#include "checksum.h"
#include "path.h"
#include "s3.h"
#include "store.h"

#define MIN_PART ((uint64_t)5 << 20)
#define MAX_PARTS 10000u
#define LOCKS_PREFIX ".s3ckpt-locks/"
#define PROBE_KEY ".s3ckpt-probe"

typedef struct part_buf {
    unsigned char *data;
    size_t len, cap;
    struct part_buf *next;
} part_buf;

typedef struct old_upload { /* left by an interrupted push */
    char *key;
    char *upload_id;
    char initiated[CK_S3_TIME_MAX];
} old_upload;

typedef struct old_part {
    uint64_t size;
    char etag[CK_S3_ETAG_MAX];
} old_part;

typedef struct s3_store s3_store;

struct ck_writer {
    s3_store *s;
    char *key; /* full key in the bucket */
    uint64_t part_target;
    part_buf *cur;
    unsigned next_part; /* number of the next part to hand out (1-based) */
    int multipart;
    char upload_id[CK_S3_UPLOADID_MAX];
    old_part *old; /* parts of the interrupted upload being resumed, by number - 1 */
    unsigned nold;
    ck_obj_info *info;
    /* guarded by s->lock */
    unsigned pending;  /* parts queued or in flight */
    int commit_queued; /* the last step was asked for */
    s3ckpt_status failed;
    ck_s3_part *parts;
    size_t nparts, parts_cap;
    uint64_t size;
};

struct ck_reader {
    s3_store *s;
    char *key;
    char etag[CK_ETAG_MAX];
};

typedef enum job_kind { JOB_PART, JOB_PUT, JOB_COMPLETE } job_kind;

typedef struct job {
    job_kind kind;
    ck_writer *w;
    part_buf *buf;
    unsigned part;
    struct job *next;
} job;

struct s3_store {
    ck_store base;
    ck_s3 *s3;
    char *prefix;           /* inside the bucket: "" or "a/b/" */
    ck_s3_checksum sum_req; /* as asked for (AUTO: probed) */
    int probed, conditional;
    int if_match_bare; /* the endpoint wants If-Match on PUT without quotes (RGW) */
    void (*log)(void *ud, int level, const char *line);
    void *log_ud;
    ck_s3_checksum sum;
    uint64_t min_part;
    /* senders */
    pthread_t *threads;
    unsigned nthreads;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    job *head, *tail; /* guarded by lock */
    int stop;
    part_buf *free_bufs;
    unsigned nbufs, max_bufs;
    unsigned objects_pending; /* committed writers not yet finished */
    s3ckpt_status failed;     /* first failure of any background job */
    ck_store_counters counters;
    old_upload *olds;
    size_t nolds;
};

/* ---- keys ---- */

static char *full_key(s3_store *s, const char *key)
{
    size_t n = strlen(s->prefix) + strlen(key) + 1;
    char *k = malloc(n);

    if (k)
        snprintf(k, n, "%s%s", s->prefix, key);
    return k;
}

#define WITH_KEY(s, key, fk)                                                                       \
    char *fk = full_key(s, key);                                                                   \
    if (!fk)                                                                                       \
        return ck_err_set((s)->base.err, S3CKPT_ENOMEM, "out of memory");

/* ---- capability probe ---- */

static s3ckpt_status ensure_probed(s3_store *s)
{
    ck_s3_checksum sum;
    unsigned verified;
    int cond;
    s3ckpt_status st;

    pthread_mutex_lock(&s->lock);
    if (s->probed) {
        pthread_mutex_unlock(&s->lock);
        return S3CKPT_OK;
    }
    pthread_mutex_unlock(&s->lock);
    {
        /* one scratch key per run: concurrent pushes must not see each other's probe */
        char pk[96];
        struct timespec ts;

        clock_gettime(CLOCK_REALTIME, &ts);
        snprintf(pk, sizeof(pk), PROBE_KEY "-%ld-%ld", (long)getpid(), (long)ts.tv_nsec);
        WITH_KEY(s, pk, key);
        st = ck_s3_probe(s->s3, key, &sum, &verified, &cond);
        free(key);
    }
    if (st)
        return st;
    pthread_mutex_lock(&s->lock);
    s->probed = 1;
    s->conditional = cond;
    s->sum = s->sum_req == CK_S3_SUM_AUTO ? sum : s->sum_req;
    pthread_mutex_unlock(&s->lock);
    if (s->log && s->sum_req == CK_S3_SUM_CRC32C && !(verified & 1u << CK_S3_SUM_CRC32C))
        s->log(s->log_ud, 0,
               "the endpoint does not verify x-amz-checksum-crc32c: uploads are not checked "
               "by it (--wire-checksum md5 makes it check Content-MD5)");
    if (s->log && s->sum_req == CK_S3_SUM_SHA256 && !(verified & 1u << CK_S3_SUM_SHA256))
        s->log(s->log_ud, 0,
               "the endpoint does not verify the signed payload SHA-256: uploads are not "
               "checked by it (--wire-checksum md5 makes it check Content-MD5)");
    if (s->log) {
        s->log(s->log_ud, 1,
               s->sum == CK_S3_SUM_CRC32C   ? "wire checksum: crc32c"
               : s->sum == CK_S3_SUM_SHA256 ? "wire checksum: sha256 (signed payload)"
               : s->sum == CK_S3_SUM_MD5    ? "wire checksum: md5 (Content-MD5)"
                                            : "wire checksum: off");
    }
    return S3CKPT_OK;
}

/* ---- small objects ---- */

static s3ckpt_status s3_get(ck_store *base, const char *key, size_t max_bytes, ck_buf *out,
                            ck_obj_info *info)
{
    s3_store *s = (s3_store *)base;
    ck_s3_result res;
    s3ckpt_status st;
    WITH_KEY(s, key, fk);

    st = ck_s3_get_object(s->s3, fk, max_bytes, out, &res, CK_S3_QUIET_404);
    free(fk);
    if (st == S3CKPT_EPROTOCOL && out->len == 0)
        st = S3CKPT_EINVAL; /* larger than max_bytes (already recorded) */
    if (!st && info) {
        info->size = res.size;
        snprintf(info->etag, sizeof(info->etag), "%s", res.etag);
    }
    return st;
}

static s3ckpt_status s3_head(ck_store *base, const char *key, ck_obj_info *info)
{
    s3_store *s = (s3_store *)base;
    ck_s3_result res;
    s3ckpt_status st;
    WITH_KEY(s, key, fk);

    st = ck_s3_head_object(s->s3, fk, &res, CK_S3_QUIET_404);
    free(fk);
    if (!st) {
        info->size = res.size;
        snprintf(info->etag, sizeof(info->etag), "%s", res.etag);
    }
    return st;
}

/* Strips the quotes of an ETag into out. */
static void etag_bare(const char *etag, char *out, size_t n)
{
    size_t len = strlen(etag);

    if (len >= 2 && etag[0] == '"' && etag[len - 1] == '"') {
        etag++;
        len -= 2;
    }
    if (len >= n)
        len = n - 1;
    memcpy(out, etag, len);
    out[len] = '\0';
}

/* 1 when key holds exactly data (res gets its ETag). */
static int same_content(s3_store *s, const char *fk, const void *data, size_t len,
                        ck_s3_result *res)
{
    ck_buf cur;
    int same;

    ck_buf_init(&cur, len + 1);
    same = ck_s3_get_object(s->s3, fk, len, &cur, res, CK_S3_QUIET_404) == S3CKPT_OK &&
           cur.len == len && memcmp(cur.data, data, len) == 0;
    ck_buf_cleanup(&cur);
    return same;
}

static s3ckpt_status s3_put(ck_store *base, const char *key, const void *data, size_t len,
                            ck_put_mode mode, const char *if_match, ck_obj_info *info)
{
    s3_store *s = (s3_store *)base;
    ck_s3_result res;
    s3ckpt_status st;
    char *fk;

    if ((st = ensure_probed(s)))
        return st;
    if (!(fk = full_key(s, key)))
        return ck_err_set(base->err, S3CKPT_ENOMEM, "out of memory");
    if (!s->conditional && mode != CK_PUT_OVERWRITE) {
        /* weaker guarantee: check, then write (a concurrent writer can slip in between) */
        st = ck_s3_head_object(s->s3, fk, &res, CK_S3_QUIET_404);
        if (mode == CK_PUT_IF_ABSENT && st == S3CKPT_OK)
            st = S3CKPT_EEXISTS;
        else if (mode == CK_PUT_IF_ABSENT && st == S3CKPT_ENOTFOUND)
            st = S3CKPT_OK;
        else if (mode == CK_PUT_IF_MATCH && !st && strcmp(res.etag, if_match))
            st = S3CKPT_EEXISTS;
        else if (mode == CK_PUT_IF_MATCH && st == S3CKPT_ENOTFOUND)
            st = S3CKPT_EEXISTS;
        if (!st)
            st = ck_s3_put_object(s->s3, fk, data, len, s->sum, NULL, NULL, &res, 0);
    } else {
        char bare[CK_ETAG_MAX];
        int use_bare;

        pthread_mutex_lock(&s->lock);
        use_bare = s->if_match_bare;
        pthread_mutex_unlock(&s->lock);
        if (mode == CK_PUT_IF_MATCH)
            etag_bare(if_match, bare, sizeof(bare));
        st = ck_s3_put_object(s->s3, fk, data, len, s->sum, mode == CK_PUT_IF_ABSENT ? "*" : NULL,
                              mode == CK_PUT_IF_MATCH ? (use_bare ? bare : if_match) : NULL, &res,
                              CK_S3_QUIET_412);
        if (st == S3CKPT_EEXISTS && mode == CK_PUT_IF_MATCH && !use_bare &&
            ck_s3_head_object(s->s3, fk, &res, CK_S3_QUIET_404) == S3CKPT_OK &&
            strcmp(res.etag, if_match) == 0) {
            /* unchanged, yet refused: Ceph RGW compares a PUT's If-Match without the quotes */
            st = ck_s3_put_object(s->s3, fk, data, len, s->sum, NULL, bare, &res, CK_S3_QUIET_412);
            if (!st) {
                pthread_mutex_lock(&s->lock);
                s->if_match_bare = 1;
                pthread_mutex_unlock(&s->lock);
            }
        }
        if (st == S3CKPT_ENOTFOUND && mode == CK_PUT_IF_MATCH)
            st = S3CKPT_EEXISTS;
        /* an earlier attempt of ours got through and its answer was lost: retried by us, or
         * by libcurl itself on a reused connection that died (so no attempt count tells) */
        if (st == S3CKPT_EEXISTS && mode == CK_PUT_IF_ABSENT &&
            same_content(s, fk, data, len, &res))
            st = S3CKPT_OK;
    }
    free(fk);
    if (!st && info) {
        info->size = len;
        snprintf(info->etag, sizeof(info->etag), "%s", res.etag);
    }
    return st;
}

static s3ckpt_status s3_remove(ck_store *base, const char *key)
{
    s3_store *s = (s3_store *)base;
    s3ckpt_status st;
    WITH_KEY(s, key, fk);

    st = ck_s3_delete_object(s->s3, fk);
    free(fk);
    return st;
}

static s3ckpt_status s3_remove_keys(ck_store *base, const char *const *keys, size_t n)
{
    s3_store *s = (s3_store *)base;
    char **full = calloc(n + 1, sizeof(*full));
    s3ckpt_status st = S3CKPT_OK;
    size_t i;

    if (!full)
        return ck_err_set(base->err, S3CKPT_ENOMEM, "out of memory");
    for (i = 0; i < n && !st; i++)
        if (!(full[i] = full_key(s, keys[i])))
            st = ck_err_set(base->err, S3CKPT_ENOMEM, "out of memory");
    if (!st)
        st = ck_s3_delete_objects(s->s3, (const char *const *)full, n);
    for (i = 0; i < n; i++)
        free(full[i]);
    free(full);
    return st;
}

/* S3 has no conditional DELETE that every endpoint honours: HEAD, compare, DELETE. */
static s3ckpt_status s3_remove_if_match(ck_store *base, const char *key, const char *if_match)
{
    ck_obj_info info;
    s3ckpt_status st = s3_head(base, key, &info);

    if (st == S3CKPT_ENOTFOUND)
        return S3CKPT_EEXISTS;
    if (st)
        return st;
    if (strcmp(info.etag, if_match))
        return S3CKPT_EEXISTS;
    return s3_remove(base, key);
}

/* ---- listing ---- */

typedef struct list_ctx {
    s3_store *s;
    ck_list_fn *fn;
    void *ud;
} list_ctx;

static s3ckpt_status list_one(void *ud, const char *key, int is_prefix, uint64_t size,
                              const char *etag)
{
    list_ctx *l = ud;
    size_t n = strlen(l->s->prefix);
    ck_obj_info info;

    if (strncmp(key, l->s->prefix, n) || !key[n])
        return S3CKPT_OK;
    info.size = size;
    snprintf(info.etag, sizeof(info.etag), "%s", etag ? etag : "");
    return l->fn(l->ud, key + n, is_prefix, &info);
}

static s3ckpt_status s3_list(ck_store *base, const char *prefix, int delimited, ck_list_fn *fn,
                             void *ud)
{
    s3_store *s = (s3_store *)base;
    list_ctx l = {s, fn, ud};
    s3ckpt_status st;
    WITH_KEY(s, prefix, fk);

    st = ck_s3_list_objects(s->s3, fk, delimited, list_one, &l);
    free(fk);
    return st;
}

/* ---- readers ---- */

static s3ckpt_status s3_open_read(ck_store *base, const char *key, const char *etag,
                                  ck_reader **out)
{
    s3_store *s = (s3_store *)base;
    ck_reader *r = calloc(1, sizeof(*r));

    if (!r || !(r->key = full_key(s, key))) {
        free(r);
        return ck_err_set(base->err, S3CKPT_ENOMEM, "out of memory");
    }
    r->s = s;
    snprintf(r->etag, sizeof(r->etag), "%s", etag ? etag : "");
    *out = r;
    return S3CKPT_OK;
}

static s3ckpt_status s3_read_at(ck_reader *r, uint64_t off, void *dst, size_t n)
{
    ck_s3_result res;

    return ck_s3_get_range(r->s->s3, r->key, r->etag, off, dst, n, &res);
}

static void s3_close_read(ck_reader *r)
{
    if (r) {
        free(r->key);
        free(r);
    }
}

/* ---- part buffers and the sender threads ---- */

static void buf_give(s3_store *s, part_buf *b)
{
    b->len = 0;
    b->next = s->free_bufs;
    s->free_bufs = b;
    pthread_cond_broadcast(&s->cond);
}

/* A free part buffer with at least cap bytes, waiting for one when all are in use. */
static s3ckpt_status buf_take(s3_store *s, size_t cap, part_buf **out)
{
    part_buf *b = NULL;
    s3ckpt_status st;

    pthread_mutex_lock(&s->lock);
    while (!s->failed && !s->free_bufs && s->nbufs >= s->max_bufs)
        pthread_cond_wait(&s->cond, &s->lock);
    st = s->failed;
    if (!st && s->free_bufs) {
        b = s->free_bufs;
        s->free_bufs = b->next;
    } else if (!st) {
        s->nbufs++;
    }
    pthread_mutex_unlock(&s->lock);
    if (st)
        return st;
    if (!b && !(b = calloc(1, sizeof(*b))))
        goto nomem;
    if (b->cap < cap) {
        unsigned char *d = realloc(b->data, cap);

        if (!d)
            goto nomem;
        b->data = d;
        b->cap = cap;
    }
    b->len = 0;
    *out = b;
    return S3CKPT_OK;
nomem:
    pthread_mutex_lock(&s->lock);
    if (b) {
        buf_give(s, b);
    } else {
        s->nbufs--; /* the slot was counted but never made */
        pthread_cond_broadcast(&s->cond);
    }
    pthread_mutex_unlock(&s->lock);
    return ck_err_set(s->base.err, S3CKPT_ENOMEM, "out of memory for a part buffer");
}

static void enqueue(s3_store *s, job *j)
{
    j->next = NULL;
    if (s->tail)
        s->tail->next = j;
    else
        s->head = j;
    s->tail = j;
    pthread_cond_broadcast(&s->cond);
}

static void fail_store(s3_store *s, s3ckpt_status st)
{
    if (!s->failed)
        s->failed = st;
    pthread_cond_broadcast(&s->cond);
}

static void writer_free(ck_writer *w)
{
    free(w->key);
    free(w->old);
    free(w->parts);
    free(w);
}

/* The writer's last step finished (st says how): record the outcome. Called with the lock. */
static void object_done(s3_store *s, ck_writer *w, s3ckpt_status st, const char *etag)
{
    if (st)
        fail_store(s, st);
    else if (w->info) {
        w->info->size = w->size;
        snprintf(w->info->etag, sizeof(w->info->etag), "%s", etag);
    }
    s->objects_pending--;
    pthread_cond_broadcast(&s->cond);
    writer_free(w);
}

static int part_cmp(const void *a, const void *b)
{
    const ck_s3_part *x = a, *y = b;

    return x->number < y->number ? -1 : x->number > y->number;
}

static s3ckpt_status run_complete(s3_store *s, ck_writer *w, char etag[CK_S3_ETAG_MAX])
{
    ck_s3_result res;
    s3ckpt_status st;

    qsort(w->parts, w->nparts, sizeof(*w->parts), part_cmp);
    st = ck_s3_complete_upload(s->s3, w->key, w->upload_id, w->parts, w->nparts, &res);
    if (!st)
        snprintf(etag, CK_S3_ETAG_MAX, "%s", res.etag);
    return st;
}

/* Sends one part (or finds it already there from an interrupted run). */
static s3ckpt_status run_part(s3_store *s, ck_writer *w, job *j, char etag[CK_S3_ETAG_MAX],
                              char crc[16], int *reused)
{
    ck_s3_result res;
    s3ckpt_status st;

    *reused = 0;
    if (j->part <= w->nold && w->old[j->part - 1].size == j->buf->len) {
        unsigned char md5[16];
        char hex[33], bare[CK_S3_ETAG_MAX];

        ck_md5_bytes(j->buf->data, j->buf->len, md5);
        ck_hex(md5, 16, hex);
        etag_bare(w->old[j->part - 1].etag, bare, sizeof(bare));
        if (strcmp(hex, bare) == 0) {
            snprintf(etag, CK_S3_ETAG_MAX, "%s", w->old[j->part - 1].etag);
            if (s->sum == CK_S3_SUM_CRC32C) {
                uint32_t c = ck_crc32c(0, j->buf->data, j->buf->len);
                unsigned char be[4] = {(unsigned char)(c >> 24), (unsigned char)(c >> 16),
                                       (unsigned char)(c >> 8), (unsigned char)c};

                ck_base64(be, 4, crc, 16);
            }
            *reused = 1;
            return S3CKPT_OK;
        }
    }
    st = ck_s3_upload_part(s->s3, w->key, w->upload_id, j->part, j->buf->data, j->buf->len, s->sum,
                           &res);
    if (!st) {
        snprintf(etag, CK_S3_ETAG_MAX, "%s", res.etag);
        snprintf(crc, 16, "%s", res.crc32c);
    }
    return st;
}

static void run_job(s3_store *s, job *j)
{
    ck_writer *w = j->w;
    char etag[CK_S3_ETAG_MAX] = "", crc[16] = "";
    s3ckpt_status st = S3CKPT_OK;
    int reused = 0, skip;

    pthread_mutex_lock(&s->lock);
    skip = s->failed != 0; /* after a failure, drain the queue without sending */
    pthread_mutex_unlock(&s->lock);
    if (skip)
        st = S3CKPT_ECANCELED;
    else if (j->kind == JOB_PUT) {
        ck_s3_result res;

        st =
            ck_s3_put_object(s->s3, w->key, j->buf->data, j->buf->len, s->sum, NULL, NULL, &res, 0);
        snprintf(etag, sizeof(etag), "%s", res.etag);
    } else if (j->kind == JOB_PART) {
        st = run_part(s, w, j, etag, crc, &reused);
    } else {
        st = run_complete(s, w, etag);
    }
    pthread_mutex_lock(&s->lock);
    if (j->buf) {
        if (!st && !reused && j->kind != JOB_COMPLETE) {
            s->counters.bytes_uploaded += j->buf->len;
            s->counters.parts_uploaded++;
        } else if (reused) {
            s->counters.parts_reused++;
            s->counters.bytes_reused += j->buf->len;
        }
        buf_give(s, j->buf);
    }
    if (j->kind == JOB_PART) {
        w->pending--;
        if (st) {
            w->failed = w->failed ? w->failed : st;
            fail_store(s, st);
        } else if (w->nparts < w->parts_cap) {
            w->parts[w->nparts].number = j->part;
            snprintf(w->parts[w->nparts].etag, sizeof(w->parts[w->nparts].etag), "%s", etag);
            snprintf(w->parts[w->nparts].crc32c, sizeof(w->parts[w->nparts].crc32c), "%s", crc);
            w->nparts++;
        }
        if (w->pending == 0 && w->commit_queued) {
            if (w->failed) {
                object_done(s, w, w->failed, "");
            } else {
                /* all parts are in: complete on this thread */
                pthread_mutex_unlock(&s->lock);
                st = run_complete(s, w, etag);
                pthread_mutex_lock(&s->lock);
                object_done(s, w, st, etag);
            }
        } else if (w->pending == 0) {
            pthread_cond_broadcast(&s->cond); /* an abort() may be waiting */
        }
    } else {
        object_done(s, w, st, etag);
    }
    pthread_mutex_unlock(&s->lock);
    free(j);
}

static void *sender(void *arg)
{
    s3_store *s = arg;

    pthread_mutex_lock(&s->lock);
    for (;;) {
        job *j;

        while (!s->head && !s->stop)
            pthread_cond_wait(&s->cond, &s->lock);
        if (!s->head)
            break;
        j = s->head;
        s->head = j->next;
        if (!s->head)
            s->tail = NULL;
        pthread_mutex_unlock(&s->lock);
        run_job(s, j);
        pthread_mutex_lock(&s->lock);
    }
    pthread_mutex_unlock(&s->lock);
    return NULL;
}

/* ---- writers ---- */

static s3ckpt_status s3_open_write(ck_store *base, const char *key, uint64_t size_hint,
                                   ck_writer **out)
{
    s3_store *s = (s3_store *)base;
    ck_writer *w;
    s3ckpt_status st;
    uint64_t target;

    if ((st = ensure_probed(s)))
        return st;
    if (!(w = calloc(1, sizeof(*w))) || !(w->key = full_key(s, key))) {
        free(w);
        return ck_err_set(base->err, S3CKPT_ENOMEM, "out of memory");
    }
    /* parts of at least min_part, growing so that the object fits 10,000 parts with room */
    target = s->min_part;
    if (size_hint / (MAX_PARTS - 500) + 1 > target)
        target = ((size_hint / (MAX_PARTS - 500) >> 20) + 1) << 20;
    w->s = s;
    w->part_target = target;
    w->next_part = 1;
    *out = w;
    return S3CKPT_OK;
}

static s3ckpt_status collect_old_part(void *ud, unsigned number, uint64_t size, const char *etag)
{
    ck_writer *w = ud;

    if (number == 0 || number > MAX_PARTS)
        return S3CKPT_OK;
    if (number > w->nold) {
        old_part *n = realloc(w->old, (size_t)number * sizeof(*n));

        if (!n)
            return S3CKPT_ENOMEM;
        memset(n + w->nold, 0, (size_t)(number - w->nold) * sizeof(*n));
        w->old = n;
        w->nold = number;
    }
    w->old[number - 1].size = size;
    snprintf(w->old[number - 1].etag, sizeof(w->old[number - 1].etag), "%s", etag);
    return S3CKPT_OK;
}

/* Starts the multipart upload, or adopts the one an interrupted run left for this key. */
static s3ckpt_status start_upload(s3_store *s, ck_writer *w)
{
    size_t i;
    s3ckpt_status st;

    if (!(w->parts = calloc(MAX_PARTS, sizeof(*w->parts))))
        return ck_err_set(s->base.err, S3CKPT_ENOMEM, "out of memory");
    w->parts_cap = MAX_PARTS;
    for (i = 0; i < s->nolds; i++) {
        if (!s->olds[i].key || strcmp(s->olds[i].key, w->key))
            continue;
        st = ck_s3_list_parts(s->s3, w->key, s->olds[i].upload_id, collect_old_part, w);
        free(s->olds[i].key); /* adopted once */
        s->olds[i].key = NULL;
        if (st == S3CKPT_ENOTFOUND) { /* gone meanwhile */
            w->nold = 0;
            continue;
        }
        if (st)
            return st;
        snprintf(w->upload_id, sizeof(w->upload_id), "%s", s->olds[i].upload_id);
        w->multipart = 1;
        return S3CKPT_OK;
    }
    if ((st = ck_s3_create_upload(s->s3, w->key, s->sum, w->upload_id)))
        return st;
    w->multipart = 1;
    return S3CKPT_OK;
}

static s3ckpt_status queue_job(s3_store *s, ck_writer *w, job_kind kind, part_buf *b)
{
    job *j = calloc(1, sizeof(*j));

    if (!j)
        return ck_err_set(s->base.err, S3CKPT_ENOMEM, "out of memory");
    j->kind = kind;
    j->w = w;
    j->buf = b;
    pthread_mutex_lock(&s->lock);
    if (kind == JOB_PART) {
        j->part = w->next_part++;
        w->pending++;
    }
    enqueue(s, j);
    pthread_mutex_unlock(&s->lock);
    return S3CKPT_OK;
}

static s3ckpt_status flush_part(s3_store *s, ck_writer *w)
{
    s3ckpt_status st;
    part_buf *b = w->cur;

    if (!w->multipart && (st = start_upload(s, w)))
        return st;
    if (w->next_part > MAX_PARTS)
        return ck_err_set(s->base.err, S3CKPT_EINVAL, "%s: more than %u parts", w->key, MAX_PARTS);
    w->cur = NULL;
    if ((st = queue_job(s, w, JOB_PART, b))) {
        pthread_mutex_lock(&s->lock);
        buf_give(s, b);
        pthread_mutex_unlock(&s->lock);
    }
    return st;
}

static s3ckpt_status s3_write(ck_writer *w, const void *data, size_t len)
{
    s3_store *s = w->s;
    s3ckpt_status st;

    pthread_mutex_lock(&s->lock);
    st = s->failed;
    pthread_mutex_unlock(&s->lock);
    if (st)
        return st;
    if (!w->cur && (st = buf_take(s, (size_t)w->part_target + len, &w->cur)))
        return st;
    if (w->cur->cap - w->cur->len < len) {
        size_t cap = w->cur->len + len;
        unsigned char *d = realloc(w->cur->data, cap);

        if (!d)
            return ck_err_set(s->base.err, S3CKPT_ENOMEM, "out of memory for a part buffer");
        w->cur->data = d;
        w->cur->cap = cap;
    }
    memcpy(w->cur->data + w->cur->len, data, len);
    w->cur->len += len;
    w->size += len;
    if (w->cur->len >= w->part_target)
        return flush_part(s, w);
    return S3CKPT_OK;
}

static s3ckpt_status s3_commit(ck_writer *w, ck_obj_info *info)
{
    s3_store *s = w->s;
    s3ckpt_status st = S3CKPT_OK;

    w->info = info;
    if (!w->multipart) { /* small object: one PutObject */
        if (!w->cur && (st = buf_take(s, 1, &w->cur)))
            goto fail;
        pthread_mutex_lock(&s->lock);
        s->objects_pending++;
        pthread_mutex_unlock(&s->lock);
        st = queue_job(s, w, JOB_PUT, w->cur);
        if (st) {
            pthread_mutex_lock(&s->lock);
            s->objects_pending--;
            buf_give(s, w->cur);
            pthread_mutex_unlock(&s->lock);
            goto fail;
        }
        return S3CKPT_OK;
    }
    if (w->cur && w->cur->len && (st = flush_part(s, w)))
        goto fail;
    pthread_mutex_lock(&s->lock);
    s->objects_pending++;
    w->commit_queued = 1;
    if (w->pending == 0) { /* every part is already in: complete from a sender */
        job *j = calloc(1, sizeof(*j));

        if (!j) {
            s->objects_pending--;
            w->commit_queued = 0;
            pthread_mutex_unlock(&s->lock);
            st = ck_err_set(s->base.err, S3CKPT_ENOMEM, "out of memory");
            goto fail;
        }
        j->kind = JOB_COMPLETE;
        j->w = w;
        enqueue(s, j);
    }
    pthread_mutex_unlock(&s->lock);
    return S3CKPT_OK;
fail:
    pthread_mutex_lock(&s->lock);
    while (w->pending)
        pthread_cond_wait(&s->cond, &s->lock);
    pthread_mutex_unlock(&s->lock);
    if (w->cur) {
        pthread_mutex_lock(&s->lock);
        buf_give(s, w->cur);
        pthread_mutex_unlock(&s->lock);
    }
    writer_free(w);
    return st;
}

/* Drops a writer before commit: parts in flight finish first; the upload stays for resume. */
static void s3_abort(ck_writer *w)
{
    s3_store *s;

    if (!w)
        return;
    s = w->s;
    pthread_mutex_lock(&s->lock);
    while (w->pending)
        pthread_cond_wait(&s->cond, &s->lock);
    if (w->cur)
        buf_give(s, w->cur);
    pthread_mutex_unlock(&s->lock);
    writer_free(w);
}

/* After a failure: queued uploads are dropped, running ones finish; returns when none is left,
 * so nothing the caller owns (ck_obj_info of committed writers) is touched afterwards. */
static void s3_discard(ck_store *base)
{
    s3_store *s = (s3_store *)base;

    pthread_mutex_lock(&s->lock);
    if (!s->failed)
        s->failed = S3CKPT_ECANCELED;
    pthread_cond_broadcast(&s->cond);
    while (s->objects_pending)
        pthread_cond_wait(&s->cond, &s->lock);
    pthread_mutex_unlock(&s->lock);
}

static s3ckpt_status s3_sync(ck_store *base)
{
    s3_store *s = (s3_store *)base;
    s3ckpt_status st;

    pthread_mutex_lock(&s->lock);
    while (s->objects_pending)
        pthread_cond_wait(&s->cond, &s->lock);
    st = s->failed;
    pthread_mutex_unlock(&s->lock);
    return st;
}

/* ---- resume index, cleanup, locks ---- */

static void olds_free(s3_store *s)
{
    size_t i;

    for (i = 0; i < s->nolds; i++) {
        free(s->olds[i].key);
        free(s->olds[i].upload_id);
    }
    free(s->olds);
    s->olds = NULL;
    s->nolds = 0;
}

typedef struct olds_ctx {
    s3_store *s;
    size_t cap;
} olds_ctx;

static s3ckpt_status collect_upload(void *ud, const char *key, const char *upload_id,
                                    const char *initiated)
{
    olds_ctx *o = ud;
    s3_store *s = o->s;
    old_upload *u;

    if (s->nolds == o->cap) {
        size_t cap = o->cap ? o->cap * 2 : 16;
        old_upload *n = realloc(s->olds, cap * sizeof(*n));

        if (!n)
            return S3CKPT_ENOMEM;
        s->olds = n;
        o->cap = cap;
    }
    u = &s->olds[s->nolds];
    u->key = strdup(key);
    u->upload_id = strdup(upload_id);
    snprintf(u->initiated, sizeof(u->initiated), "%s", initiated);
    if (!u->key || !u->upload_id) {
        free(u->key);
        free(u->upload_id);
        return S3CKPT_ENOMEM;
    }
    s->nolds++;
    return S3CKPT_OK;
}

static int newest_first(const void *a, const void *b)
{
    const old_upload *x = a, *y = b;

    return -strcmp(x->initiated, y->initiated); /* ISO 8601 UTC sorts as text */
}

/* Before a push writes under prefix: finds the multipart uploads an interrupted run left
 * there, so writers can resume them (newest first when a key has several). */
static s3ckpt_status s3_prepare(ck_store *base, const char *prefix)
{
    s3_store *s = (s3_store *)base;
    olds_ctx o = {s, 0};
    s3ckpt_status st;
    WITH_KEY(s, prefix, fk);

    olds_free(s);
    st = ck_s3_list_uploads(s->s3, fk, collect_upload, &o);
    free(fk);
    if (!st && s->nolds > 1) /* a key's newest upload is adopted first */
        qsort(s->olds, s->nolds, sizeof(*s->olds), newest_first);
    if (st == S3CKPT_ENOMEM)
        st = ck_err_set(base->err, st, "out of memory");
    return st;
}

static s3ckpt_status s3_stale_uploads(ck_store *base, const char *prefix, ck_stale_fn *fn, void *ud)
{
    s3_store *s = (s3_store *)base;
    s3ckpt_status st;
    size_t i, n = strlen(s->prefix);

    if ((st = s3_prepare(base, prefix)))
        return st;
    for (i = 0; i < s->nolds && !st; i++) {
        int abort_it = fn(ud, s->olds[i].key + n, s->olds[i].initiated);

        if (abort_it)
            st = ck_s3_abort_upload(s->s3, s->olds[i].key, s->olds[i].upload_id);
    }
    olds_free(s);
    return st;
}

typedef struct s3_lock {
    char *key;
    char etag[CK_ETAG_MAX];
} s3_lock;

/* Where a process id means something: the boot and the pid namespace (containers sharing a
 * host name have their own). */
static void pid_scope(char *out, size_t n)
{
    char boot[64] = "?", ns[64] = "?";
    FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
    ssize_t k;

    if (f) {
        if (!fgets(boot, sizeof(boot), f))
            snprintf(boot, sizeof(boot), "?");
        boot[strcspn(boot, "\n ")] = '\0';
        fclose(f);
    }
    k = readlink("/proc/self/ns/pid", ns, sizeof(ns) - 1);
    ns[k > 0 ? k : 0] = '\0';
    for (char *p = ns; *p; p++)
        if (*p == ' ' || *p == '\n')
            *p = '_';
    snprintf(out, n, "%s/%s", boot[0] ? boot : "?", ns[0] ? ns : "?");
}

/* Lock object body: "host H\npid P\nsince T\nscope BOOT/PIDNS\n". Stale only when its process
 * ran on this host, in this boot and pid namespace, and is gone. */
static int lock_is_stale(const char *body, const char *host, const char *scope)
{
    char h[256], sc[200];
    long pid = 0;
    long long since = 0;

    if (sscanf(body, "host %255s\npid %ld\nsince %lld\nscope %199s", h, &pid, &since, sc) != 4)
        return 0;
    return strcmp(h, host) == 0 && strcmp(sc, scope) == 0 && pid > 0 && kill((pid_t)pid, 0) != 0 &&
           errno == ESRCH;
}

static s3ckpt_status s3_lock_name(ck_store *base, const char *name, void **handle)
{
    char host[256] = "unknown", body[600], key[CK_NAME_MAX + 32], scope[200];
    ck_obj_info info;
    ck_buf cur;
    s3_lock *l;
    s3ckpt_status st;
    int n;

    *handle = NULL;
    gethostname(host, sizeof(host) - 1);
    host[sizeof(host) - 1] = '\0';
    for (n = 0; host[n]; n++)
        if (host[n] == ' ' || host[n] == '\n')
            host[n] = '_';
    pid_scope(scope, sizeof(scope));
    snprintf(body, sizeof(body), "host %s\npid %ld\nsince %lld\nscope %s\n", host, (long)getpid(),
             (long long)time(NULL), scope);
    snprintf(key, sizeof(key), LOCKS_PREFIX "%s", name);
    if (!(l = calloc(1, sizeof(*l))) || !(l->key = strdup(key))) {
        free(l);
        return ck_err_set(base->err, S3CKPT_ENOMEM, "out of memory");
    }
    st = s3_put(base, key, body, strlen(body), CK_PUT_IF_ABSENT, NULL, &info);
    if (st == S3CKPT_EEXISTS) {
        ck_buf_init(&cur, 4096);
        st = s3_get(base, key, 4000, &cur, &info);
        if (!st && lock_is_stale(cur.data, host, scope)) {
            /* its writer died on this host: take it over, if nobody else did meanwhile */
            st = s3_put(base, key, body, strlen(body), CK_PUT_IF_MATCH, info.etag, &info);
        } else if (!st) {
            char *nl;

            for (nl = cur.data; (nl = strchr(nl, '\n'));)
                *nl = ' ';
            while (cur.len && cur.data[cur.len - 1] == ' ')
                cur.data[--cur.len] = '\0';
            st = ck_err_set(base->err, S3CKPT_EEXISTS,
                            "checkpoint %s is being written by another push (lock %s/%s: %s); "
                            "if that push is dead, delete the lock object",
                            name, base->url, key, cur.data);
        } else if (st == S3CKPT_ENOTFOUND) { /* released meanwhile: try once more */
            st = s3_put(base, key, body, strlen(body), CK_PUT_IF_ABSENT, NULL, &info);
        }
        ck_buf_cleanup(&cur);
        if (st == S3CKPT_EEXISTS)
            st = ck_err_set(base->err, S3CKPT_EEXISTS,
                            "checkpoint %s is being written by another push", name);
    }
    if (st) {
        free(l->key);
        free(l);
        return st;
    }
    snprintf(l->etag, sizeof(l->etag), "%s", info.etag);
    *handle = l;
    return S3CKPT_OK;
}

static void s3_unlock(ck_store *base, void *handle)
{
    s3_store *s = (s3_store *)base;
    s3_lock *l = handle;
    s3ckpt_status st;

    if (!l)
        return;
    /* also after a cancel (Ctrl-C): a lock left behind would block other hosts */
    ck_s3_ignore_cancel(((s3_store *)base)->s3);
    /* only our own lock: if it was taken over (judged stale), it is the new holder's now */
    st = s3_remove_if_match(base, l->key, l->etag);
    if (st == S3CKPT_EEXISTS && s->log)
        s->log(s->log_ud, 0, "the lock object was taken over by another push; left to it");
    else if (st != S3CKPT_OK && s->log)
        s->log(s->log_ud, 0,
               "could not delete the lock object; delete it by hand if pushes of this name "
               "are refused");
    free(l->key);
    free(l);
}

static void s3_counters(ck_store *base, ck_store_counters *out)
{
    s3_store *s = (s3_store *)base;
    ck_s3_counters c;

    pthread_mutex_lock(&s->lock);
    *out = s->counters;
    pthread_mutex_unlock(&s->lock);
    ck_s3_counters_get(s->s3, &c);
    out->requests = c.requests;
    out->retries = c.retries;
    out->throttled = c.throttled;
}

static void s3_free(ck_store *base)
{
    s3_store *s = (s3_store *)base;
    unsigned i;

    pthread_mutex_lock(&s->lock);
    s->stop = 1;
    pthread_cond_broadcast(&s->cond);
    pthread_mutex_unlock(&s->lock);
    for (i = 0; i < s->nthreads; i++)
        pthread_join(s->threads[i], NULL);
    while (s->free_bufs) {
        part_buf *b = s->free_bufs;

        s->free_bufs = b->next;
        free(b->data);
        free(b);
    }
    olds_free(s);
    ck_s3_free(s->s3);
    pthread_mutex_destroy(&s->lock);
    pthread_cond_destroy(&s->cond);
    free(s->threads);
    free(s->prefix);
    free(s->base.url);
    free(s);
}

static const ck_store_ops s3_ops = {
    .get = s3_get,
    .put = s3_put,
    .head = s3_head,
    .open_read = s3_open_read,
    .read_at = s3_read_at,
    .close_read = s3_close_read,
    .open_write = s3_open_write,
    .write = s3_write,
    .commit = s3_commit,
    .abort = s3_abort,
    .list = s3_list,
    .remove = s3_remove,
    .remove_keys = s3_remove_keys,
    .remove_if_match = s3_remove_if_match,
    .prepare = s3_prepare,
    .stale_uploads = s3_stale_uploads,
    .lock = s3_lock_name,
    .unlock = s3_unlock,
    .sync = s3_sync,
    .discard = s3_discard,
    .counters = s3_counters,
    .free = s3_free,
};

s3ckpt_status ck_store_s3_open(ck_store **out, const char *url, const char *bucket,
                               const char *prefix, const ck_remote_cfg *rc, ck_err *err)
{
    ck_aws_opts ao = {0};
    ck_aws_config *ac = NULL;
    ck_s3_config sc = {0};
    s3_store *s = NULL;
    s3ckpt_status st;
    unsigned i;

    *out = NULL;
    if (!(ac = calloc(1, sizeof(*ac))) || !(s = calloc(1, sizeof(*s)))) {
        st = ck_err_set(err, S3CKPT_ENOMEM, "out of memory");
        goto fail_early;
    }
    pthread_mutex_init(&s->lock, NULL);
    pthread_cond_init(&s->cond, NULL);
    s->base.ops = &s3_ops;
    s->base.err = err;
    if (!(s->base.url = strdup(url)) || !(s->prefix = strdup(prefix))) {
        st = ck_err_set(err, S3CKPT_ENOMEM, "out of memory");
        goto fail;
    }
    ao.profile = rc->profile;
    ao.region = rc->region;
    ao.endpoint = rc->endpoint;
    ao.ca_bundle = rc->ca_bundle;
    if ((st = ck_awsconf_load(ac, &ao, err)))
        goto fail;
    sc.bucket = bucket;
    sc.endpoint = ac->endpoint;
    sc.region = ac->region;
    sc.access_key = ac->have_creds ? ac->access_key : NULL;
    sc.secret_key = ac->have_creds ? ac->secret_key : NULL;
    sc.session_token = ac->session_token;
    sc.ca_bundle = ac->ca_bundle;
    sc.addressing = rc->addressing        ? (ck_s3_addressing)rc->addressing
                    : ac->addressing == 1 ? CK_S3_ADDR_PATH
                    : ac->addressing == 2 ? CK_S3_ADDR_VIRTUAL
                                          : CK_S3_ADDR_AUTO;
    sc.concurrency = rc->concurrency;
    sc.low_speed_time_s = rc->timeout_s;
    sc.clock_offset_s = rc->clock_offset_s;
    {
        /* test hook: pretend this machine's clock is off (clock-skew tests) */
        const char *skew = getenv("S3CKPT_CLOCK_OFFSET_S");

        if (skew && *skew)
            sc.clock_offset_s = strtoll(skew, NULL, 10);
    }
    sc.cancel = rc->cancel;
    sc.log = rc->log;
    sc.log_ud = rc->log_ud;
    if ((st = ck_s3_new(&s->s3, &sc, err)))
        goto fail;
    if (rc->log) {
        char line[2400];

        snprintf(line, sizeof(line), "s3: bucket %s, endpoint %s (%s), region %s (%s), %s", bucket,
                 ac->endpoint[0] ? ac->endpoint : "AWS", ac->endpoint_source, ac->region,
                 ac->region_source,
                 ac->have_creds ? ac->cred_source : "no credentials: unsigned requests");
        rc->log(rc->log_ud, 1, line);
    }
    s->sum_req = (ck_s3_checksum)rc->wire_checksum;
    s->log = rc->log;
    s->log_ud = rc->log_ud;
    if (ac->ca_bundle[0] && access(ac->ca_bundle, R_OK)) {
        st =
            ck_err_set(err, S3CKPT_ECONFIG, "CA bundle %s (%s): %s", ac->ca_bundle,
                       rc->ca_bundle ? "--ca-bundle" : "AWS_CA_BUNDLE or profile", strerror(errno));
        goto fail;
    }
    s->min_part = rc->part_size ? rc->part_size : (uint64_t)8 << 20;
    if (s->min_part < MIN_PART)
        s->min_part = MIN_PART;
    {
        unsigned n = ck_s3_concurrency(s->s3);
        /* part buffers: at most one per request in flight + one filling, within the memory
         * given to them (each holds a part plus one frame) */
        uint64_t each = s->min_part + rc->max_write, fit = rc->part_memory / (each ? each : 1);

        s->max_bufs = n + 1;
        if (rc->part_memory && fit < s->max_bufs)
            s->max_bufs = fit < 2 ? 2 : (unsigned)fit;
        s->base.buffer_bytes = s->max_bufs * each;
        if (!(s->threads = calloc(n, sizeof(*s->threads)))) {
            st = ck_err_set(err, S3CKPT_ENOMEM, "out of memory");
            goto fail;
        }
        s->nthreads = n;
    }
    for (i = 0; i < s->nthreads; i++) {
        if (pthread_create(&s->threads[i], NULL, sender, s)) {
            s->nthreads = i;
            st = ck_err_set(err, S3CKPT_ENOMEM, "cannot start sender threads");
            goto fail;
        }
    }
    memset(ac, 0, sizeof(*ac)); /* held the secret */
    free(ac);
    *out = &s->base;
    return S3CKPT_OK;
fail:
    s3_free(&s->base);
    s = NULL;
fail_early:
    if (ac)
        memset(ac, 0, sizeof(*ac));
    free(ac);
    free(s);
    return st;
}
