/* client - the s3ckpt_client internals shared by the pipelines. */
#ifndef CK_CLIENT_H
#define CK_CLIENT_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "manifest.h"
#include "store.h"

struct s3ckpt_client {
    unsigned workers;
    uint64_t chunk_size;
    int level;
    uint64_t max_memory;
    s3ckpt_log_fn *on_log;
    void *log_userdata;
    ck_err err;
    atomic_int cancel;
    ck_remote_cfg remote; /* strings below are owned */
    char *profile, *region, *endpoint, *ca_bundle;
};

/* Worker threads for a pipeline on store s: the CPU workers, or for a remote store at least
 * one per concurrent request (they wait on the network most of the time). */
unsigned ck_client_io_workers(const s3ckpt_client *c, const ck_store *s);
/* Adds what the store counted to stats. */
void ck_client_add_counters(ck_store *s, s3ckpt_stats *stats);

void ck_log(s3ckpt_client *c, int level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* How many buffer slots of slot_bytes fit the memory bound (at least 2). */
size_t ck_client_slots(const s3ckpt_client *c, size_t slot_bytes);
/* The same for a pool of `workers` threads. */
size_t ck_client_slots_for(const s3ckpt_client *c, size_t slot_bytes, unsigned workers);
/* EINVAL (recorded) when not even two slots of slot_bytes fit the memory bound. */
s3ckpt_status ck_client_check_memory(s3ckpt_client *c, const char *op, uint64_t chunk_size,
                                     size_t slot_bytes);
int ck_canceled(s3ckpt_client *c);
/* Resets error and cancel state at the start of a public call; EINVAL for a NULL client. */
s3ckpt_status ck_client_begin(s3ckpt_client *c);
double ck_now(void);

/* "<name>/manifest.json" into key (CK_NAME_MAX + 32 bytes is enough). */
void ck_manifest_key(char *key, size_t len, const char *name);
/* Reads and validates <name>/manifest.json. ENOTFOUND (recorded) when the checkpoint does not
 * exist, ECORRUPT (recorded) when the manifest is bad. */
s3ckpt_status ck_manifest_load(s3ckpt_client *c, ck_store *s, const char *name, ck_manifest *m);
/* Name that `latest` holds, or ENOTFOUND (not recorded) when there is none. */
s3ckpt_status ck_latest_read(s3ckpt_client *c, ck_store *s, char *name, size_t name_len, char *etag,
                             size_t etag_len);
/* Points `latest` at name unless it names a checkpoint with a higher step (compare-and-swap). */
s3ckpt_status ck_latest_update(s3ckpt_client *c, ck_store *s, const char *name, int64_t step);
/* name NULL: resolve through latest. Writes the resolved name. */
s3ckpt_status ck_resolve_name(s3ckpt_client *c, ck_store *s, const char *name, char *out,
                              size_t out_len);

s3ckpt_status ck_push_run(s3ckpt_client *c, const char *path, const char *store_url,
                          const s3ckpt_push_opts *opts);
s3ckpt_status ck_pull_run(s3ckpt_client *c, const char *store_url, const char *dest,
                          const s3ckpt_pull_opts *opts);
s3ckpt_status ck_verify_run(s3ckpt_client *c, const char *store_url, const char *name, int deep,
                            s3ckpt_stats *stats);

#endif
