/* pool - worker threads and a fixed set of buffer slots. Work waits for a free slot, so memory
 * is bounded by the slot count whatever the checkpoint size. */
#ifndef CK_POOL_H
#define CK_POOL_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "digest.h"
#include "s3ckpt.h"

typedef struct ck_slot ck_slot;
/* Runs on worker `worker` (0..nworkers-1) with exclusive use of the slot. */
typedef void ck_slot_fn(ck_slot *slot, unsigned worker, void *ctx);

struct ck_slot {
    unsigned char *raw;    /* raw_cap bytes */
    unsigned char *stored; /* stored_cap bytes */
    size_t raw_cap, stored_cap;
    /* job description, set by the coordinator */
    size_t entry;
    uint64_t chunk;
    uint64_t raw_off, stored_off;
    uint32_t raw_len, stored_len;
    int fd;           /* local file */
    const char *path; /* entry path, for messages */
    void *reader;     /* store object reader (pull) */
    ck_digest expect; /* pull: digest the chunk must have */
    int check_local;  /* pull: the file existed; keep the chunk if it is already right */
    int fresh;        /* pull: the file is new, so all-zero chunks can stay holes */
    int digest_only;  /* push: read and digest, do not compress (resume check) */
    int filter;       /* ck_filter of the entry */
    int effort;       /* push: ck_effort to compress at (the worker may lower it) */
    double cpu_s;     /* push: thread CPU seconds the compression took */
    /* results, set by the worker */
    ck_digest digest;
    uint64_t frame_hash; /* push: XXH3-64 of the stored frame (made, or read back on resume) */
    int reused;          /* pull: chunk already on disk */
    s3ckpt_status status;
    /* owned by the pool */
    int done;
    ck_slot *next;
};

typedef struct ck_pool ck_pool;

/* Starts nworkers threads and allocates nslots slots of the given capacities; fn runs each
 * submitted slot with ctx. */
s3ckpt_status ck_pool_new(ck_pool **out, unsigned nworkers, size_t nslots, size_t raw_cap,
                          size_t stored_cap, ck_slot_fn *fn, void *ctx);
/* Waits for submitted work to finish, then stops the threads and frees the slots. */
void ck_pool_free(ck_pool *p);
unsigned ck_pool_workers(const ck_pool *p);
size_t ck_pool_slots(const ck_pool *p);

/* A free slot, or NULL when all are busy or done-but-unreleased. Coordinator only. */
ck_slot *ck_pool_acquire(ck_pool *p);
void ck_pool_submit(ck_pool *p, ck_slot *s);
/* Blocks until `which` is done (which != NULL) or any submitted slot is done (which == NULL,
 * whichever finished); returns it, still owned by the caller until released. Returns NULL
 * when which == NULL and nothing is in flight. */
ck_slot *ck_pool_wait(ck_pool *p, ck_slot *which);
void ck_pool_release(ck_pool *p, ck_slot *s);
/* Slots submitted and not yet returned by ck_pool_wait. */
size_t ck_pool_inflight(const ck_pool *p);

/* Workers online, at least 1. */
unsigned ck_pool_default_workers(void);

#endif
