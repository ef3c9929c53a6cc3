/*
 * pool - worker threads plus a fixed set of buffer slots (aws-c-s3's memory reservation in
 * miniature). The coordinator takes a free slot, fills in a job, submits it; a worker runs it;
 * the coordinator collects it (in order or as it completes) and releases the slot. Buffers are
 * allocated once up front, so peak memory = slots x (raw_cap + stored_cap) + per-worker
 * contexts, independent of the checkpoint size. One mutex guards the queues ("synced" state).
 */
#include "pool.h"

#include <stdlib.h>
#include <unistd.h>

struct ck_pool {
    pthread_t *threads;
    unsigned nworkers, started;
    ck_slot *slots;
    size_t nslots;
    ck_slot_fn *fn;
    void *ctx;
    struct {
        pthread_mutex_t lock;
        pthread_cond_t work;     /* todo non-empty or stopping */
        pthread_cond_t finished; /* a slot became done */
        ck_slot *todo_head, *todo_tail;
        ck_slot *free_list;
        size_t inflight;
        unsigned next_worker_id;
        int stopping;
    } synced;
};

static void *worker_main(void *arg)
{
    ck_pool *p = arg;
    unsigned id;

    pthread_mutex_lock(&p->synced.lock);
    id = p->synced.next_worker_id++;
    for (;;) {
        ck_slot *s;

        while (!p->synced.todo_head && !p->synced.stopping)
            pthread_cond_wait(&p->synced.work, &p->synced.lock);
        s = p->synced.todo_head;
        if (!s)
            break; /* stopping and drained */
        p->synced.todo_head = s->next;
        if (!s->next)
            p->synced.todo_tail = NULL;
        pthread_mutex_unlock(&p->synced.lock);
        p->fn(s, id, p->ctx);
        pthread_mutex_lock(&p->synced.lock);
        s->done = 1;
        pthread_cond_broadcast(&p->synced.finished);
    }
    pthread_mutex_unlock(&p->synced.lock);
    return NULL;
}

unsigned ck_pool_default_workers(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);

    return n < 1 ? 1 : n > 256 ? 256 : (unsigned)n;
}

s3ckpt_status ck_pool_new(ck_pool **out, unsigned nworkers, size_t nslots, size_t raw_cap,
                          size_t stored_cap, ck_slot_fn *fn, void *ctx)
{
    ck_pool *p = calloc(1, sizeof(*p));
    size_t i;

    *out = NULL;
    if (!p)
        return S3CKPT_ENOMEM;
    pthread_mutex_init(&p->synced.lock, NULL);
    pthread_cond_init(&p->synced.work, NULL);
    pthread_cond_init(&p->synced.finished, NULL);
    p->fn = fn;
    p->ctx = ctx;
    p->nworkers = nworkers ? nworkers : 1;
    p->nslots = nslots ? nslots : 1;
    p->slots = calloc(p->nslots, sizeof(*p->slots));
    p->threads = calloc(p->nworkers, sizeof(*p->threads));
    if (!p->slots || !p->threads)
        goto fail;
    for (i = 0; i < p->nslots; i++) {
        ck_slot *s = &p->slots[i];

        s->raw_cap = raw_cap;
        s->stored_cap = stored_cap;
        s->raw = raw_cap ? malloc(raw_cap) : NULL;
        s->stored = stored_cap ? malloc(stored_cap) : NULL;
        if ((raw_cap && !s->raw) || (stored_cap && !s->stored))
            goto fail;
        s->fd = -1;
        s->next = p->synced.free_list;
        p->synced.free_list = s;
    }
    for (; p->started < p->nworkers; p->started++)
        if (pthread_create(&p->threads[p->started], NULL, worker_main, p))
            goto fail;
    *out = p;
    return S3CKPT_OK;
fail:
    ck_pool_free(p);
    return S3CKPT_ENOMEM;
}

void ck_pool_free(ck_pool *p)
{
    size_t i;

    if (!p)
        return;
    pthread_mutex_lock(&p->synced.lock);
    p->synced.stopping = 1;
    pthread_cond_broadcast(&p->synced.work);
    pthread_mutex_unlock(&p->synced.lock);
    for (i = 0; i < p->started; i++)
        pthread_join(p->threads[i], NULL);
    for (i = 0; p->slots && i < p->nslots; i++) {
        free(p->slots[i].raw);
        free(p->slots[i].stored);
    }
    free(p->slots);
    free(p->threads);
    pthread_cond_destroy(&p->synced.finished);
    pthread_cond_destroy(&p->synced.work);
    pthread_mutex_destroy(&p->synced.lock);
    free(p);
}

unsigned ck_pool_workers(const ck_pool *p)
{
    return p->nworkers;
}

size_t ck_pool_slots(const ck_pool *p)
{
    return p->nslots;
}

ck_slot *ck_pool_acquire(ck_pool *p)
{
    ck_slot *s;

    pthread_mutex_lock(&p->synced.lock);
    s = p->synced.free_list;
    if (s)
        p->synced.free_list = s->next;
    pthread_mutex_unlock(&p->synced.lock);
    if (s) {
        s->next = NULL;
        s->done = 0;
        s->status = S3CKPT_OK;
        s->reused = 0;
    }
    return s;
}

void ck_pool_submit(ck_pool *p, ck_slot *s)
{
    pthread_mutex_lock(&p->synced.lock);
    s->next = NULL;
    s->done = 0;
    if (p->synced.todo_tail)
        p->synced.todo_tail->next = s;
    else
        p->synced.todo_head = s;
    p->synced.todo_tail = s;
    p->synced.inflight++;
    pthread_cond_signal(&p->synced.work);
    pthread_mutex_unlock(&p->synced.lock);
}

ck_slot *ck_pool_wait(ck_pool *p, ck_slot *which)
{
    ck_slot *found = NULL;
    size_t i;

    pthread_mutex_lock(&p->synced.lock);
    for (;;) {
        if (which) {
            if (which->done) {
                found = which;
                break;
            }
        } else {
            if (p->synced.inflight == 0)
                break;
            for (i = 0; i < p->nslots; i++) {
                if (p->slots[i].done == 1) {
                    found = &p->slots[i];
                    break;
                }
            }
            if (found)
                break;
        }
        pthread_cond_wait(&p->synced.finished, &p->synced.lock);
    }
    if (found) {
        found->done = 2; /* collected */
        p->synced.inflight--;
    }
    pthread_mutex_unlock(&p->synced.lock);
    return found;
}

void ck_pool_release(ck_pool *p, ck_slot *s)
{
    pthread_mutex_lock(&p->synced.lock);
    s->done = 0;
    s->next = p->synced.free_list;
    p->synced.free_list = s;
    pthread_mutex_unlock(&p->synced.lock);
}

size_t ck_pool_inflight(const ck_pool *p)
{
    return p->synced.inflight;
}
