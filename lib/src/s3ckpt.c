/*
 * s3ckpt - public entry points: the client handle, option checking, error strings. Each call
 * resets the client's error, runs one pipeline module and returns its status.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "client.h"
#include "manifest.h"
#include "pool.h"

#define DEFAULT_CHUNK ((uint64_t)4 << 20)
#define DEFAULT_MEMORY ((uint64_t)256 << 20)

S3CKPT_API const char *s3ckpt_version(void)
{
    return S3CKPT_VERSION_STRING;
}

S3CKPT_API const char *s3ckpt_strerror(s3ckpt_status st)
{
    switch (st) {
    case S3CKPT_OK:
        return "success";
    case S3CKPT_EINVAL:
        return "invalid argument";
    case S3CKPT_ENOMEM:
        return "out of memory";
    case S3CKPT_EIO:
        return "local I/O error";
    case S3CKPT_ENETWORK:
        return "network error";
    case S3CKPT_EAUTH:
        return "access denied";
    case S3CKPT_ENOTFOUND:
        return "not found";
    case S3CKPT_EEXISTS:
        return "already exists";
    case S3CKPT_ETHROTTLED:
        return "throttled by the store";
    case S3CKPT_ESERVER:
        return "store error";
    case S3CKPT_EPROTOCOL:
        return "unexpected response from the store";
    case S3CKPT_ECORRUPT:
        return "integrity check failed";
    case S3CKPT_ECANCELED:
        return "canceled";
    case S3CKPT_ECONFIG:
        return "configuration error";
    case S3CKPT_EUNSUPPORTED:
        return "unsupported";
    }
    return "unknown status";
}

static void remote_log(void *ud, int level, const char *line)
{
    ck_log(ud, level, "%s", line);
}

static int dup_opt(char **dst, const char *src)
{
    if (!src)
        return 0;
    *dst = strdup(src);
    return *dst ? 0 : -1;
}

/* Version-2 options: S3 settings, checked and copied. */
static s3ckpt_status remote_opts(s3ckpt_client *c, const s3ckpt_client_opts *o)
{
    if (o->addressing < 0 || o->addressing > 2 || o->wire_checksum < 0 || o->wire_checksum > 4 ||
        o->concurrency > 256 ||
        (o->part_size_bytes &&
         (o->part_size_bytes < ((uint64_t)5 << 20) || o->part_size_bytes > ((uint64_t)4 << 30))))
        return S3CKPT_EINVAL;
    if (dup_opt(&c->profile, o->profile) || dup_opt(&c->region, o->region) ||
        dup_opt(&c->endpoint, o->endpoint) || dup_opt(&c->ca_bundle, o->ca_bundle))
        return S3CKPT_ENOMEM;
    c->remote.profile = c->profile;
    c->remote.region = c->region;
    c->remote.endpoint = c->endpoint;
    c->remote.ca_bundle = c->ca_bundle;
    c->remote.addressing = o->addressing;
    c->remote.wire_checksum = o->wire_checksum;
    c->remote.concurrency = o->concurrency;
    c->remote.timeout_s = (long)o->timeout_s;
    c->remote.part_size = o->part_size_bytes;
    return S3CKPT_OK;
}

unsigned ck_client_io_workers(const s3ckpt_client *c, const ck_store *s)
{
    unsigned io = c->remote.concurrency ? c->remote.concurrency : 8;

    return s->local_root || io <= c->workers ? c->workers : io;
}

void ck_client_add_counters(ck_store *s, s3ckpt_stats *stats)
{
    ck_store_counters k;

    ck_store_counters_get(s, &k);
    stats->requests += k.requests;
    stats->retries += k.retries;
    stats->parts_uploaded += k.parts_uploaded;
    stats->parts_reused += k.parts_reused;
}

S3CKPT_API s3ckpt_status s3ckpt_client_new(s3ckpt_client **out, const s3ckpt_client_opts *opts)
{
    s3ckpt_client *c;

    if (!out)
        return S3CKPT_EINVAL;
    *out = NULL;
    if (opts && (opts->version < 1 || opts->version > S3CKPT_CLIENT_OPTS_VERSION))
        return S3CKPT_EINVAL;
    if (opts && opts->chunk_size_bytes &&
        (opts->chunk_size_bytes < CK_CHUNK_MIN || opts->chunk_size_bytes > CK_CHUNK_MAX))
        return S3CKPT_EINVAL;
    if (opts && (opts->compression_level < -7 || opts->compression_level > 19))
        return S3CKPT_EINVAL;
    if (!(c = calloc(1, sizeof(*c))))
        return S3CKPT_ENOMEM;
    c->workers = opts && opts->workers ? opts->workers : ck_pool_default_workers();
    if (c->workers > 256)
        c->workers = 256;
    c->chunk_size = opts && opts->chunk_size_bytes ? opts->chunk_size_bytes : DEFAULT_CHUNK;
    c->level = opts && opts->compression_level ? opts->compression_level : 1;
    c->max_memory = opts && opts->max_memory_bytes ? opts->max_memory_bytes : DEFAULT_MEMORY;
    c->on_log = opts ? opts->on_log : NULL;
    c->log_userdata = opts ? opts->log_userdata : NULL;
    ck_err_init(&c->err);
    atomic_init(&c->cancel, 0);
    if (opts && opts->version >= 2 && (remote_opts(c, opts) != S3CKPT_OK)) {
        s3ckpt_client_free(c);
        return S3CKPT_EINVAL;
    }
    c->remote.cancel = &c->cancel;
    c->remote.log = remote_log;
    c->remote.log_ud = c;
    *out = c;
    return S3CKPT_OK;
}

S3CKPT_API void s3ckpt_client_free(s3ckpt_client *c)
{
    if (!c)
        return;
    ck_err_cleanup(&c->err);
    free(c->profile);
    free(c->region);
    free(c->endpoint);
    free(c->ca_bundle);
    free(c);
}

S3CKPT_API const char *s3ckpt_errmsg(const s3ckpt_client *c)
{
    if (!c)
        return "no client";
    return c->err.msg[0] ? c->err.msg : s3ckpt_strerror(c->err.status);
}

S3CKPT_API void s3ckpt_client_cancel(s3ckpt_client *c)
{
    if (c)
        atomic_store(&c->cancel, 1);
}

int ck_canceled(s3ckpt_client *c)
{
    return atomic_load(&c->cancel);
}

void ck_log(s3ckpt_client *c, int level, const char *fmt, ...)
{
    char line[1024];
    va_list ap;

    if (!c->on_log)
        return;
    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    c->on_log(c->log_userdata, level, line);
}

size_t ck_client_slots(const s3ckpt_client *c, size_t slot_bytes)
{
    return ck_client_slots_for(c, slot_bytes, c->workers);
}

size_t ck_client_slots_for(const s3ckpt_client *c, size_t slot_bytes, unsigned workers)
{
    /* CPU workers keep 4 jobs each in flight; I/O-bound pools (more workers than CPU workers)
     * need little more than one slot per request in flight */
    uint64_t n = c->max_memory / slot_bytes,
             most = workers > c->workers ? (uint64_t)workers + c->workers : 4 * (uint64_t)workers;

    if (n > most)
        n = most;
    return n < 2 ? 2 : (size_t)n;
}

s3ckpt_status ck_client_check_memory(s3ckpt_client *c, const char *op, uint64_t chunk_size,
                                     size_t slot_bytes)
{
    if ((uint64_t)slot_bytes * 2 <= c->max_memory)
        return S3CKPT_OK;
    return ck_err_set(&c->err, S3CKPT_EINVAL,
                      "%s: %" PRIu64 "-byte chunks need at least %" PRIu64
                      " bytes of buffers, more than the memory bound of %" PRIu64
                      " (raise --max-memory)",
                      op, chunk_size, (uint64_t)slot_bytes * 2, c->max_memory);
}

double ck_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

s3ckpt_status ck_client_begin(s3ckpt_client *c)
{
    if (!c)
        return S3CKPT_EINVAL;
    ck_err_reset(&c->err);
    atomic_store(&c->cancel, 0);
    return S3CKPT_OK;
}

static int version_ok(unsigned v, unsigned max)
{
    return v >= 1 && v <= max;
}

S3CKPT_API s3ckpt_status s3ckpt_push(s3ckpt_client *c, const char *path, const char *store_url,
                                     const s3ckpt_push_opts *opts)
{
    if (ck_client_begin(c))
        return S3CKPT_EINVAL;
    if (!path || !store_url || (opts && !version_ok(opts->version, S3CKPT_PUSH_OPTS_VERSION)))
        return ck_err_set(&c->err, S3CKPT_EINVAL, "push: missing path or store, or bad options");
    return ck_push_run(c, path, store_url, opts);
}

S3CKPT_API s3ckpt_status s3ckpt_pull(s3ckpt_client *c, const char *store_url, const char *dest,
                                     const s3ckpt_pull_opts *opts)
{
    if (ck_client_begin(c))
        return S3CKPT_EINVAL;
    if (!dest || !store_url || (opts && !version_ok(opts->version, S3CKPT_PULL_OPTS_VERSION)))
        return ck_err_set(&c->err, S3CKPT_EINVAL, "pull: missing store or destination");
    return ck_pull_run(c, store_url, dest, opts);
}

S3CKPT_API s3ckpt_status s3ckpt_verify(s3ckpt_client *c, const char *store_url, const char *name,
                                       int deep, s3ckpt_stats *stats)
{
    if (ck_client_begin(c))
        return S3CKPT_EINVAL;
    if (!store_url)
        return ck_err_set(&c->err, S3CKPT_EINVAL, "verify: missing store");
    return ck_verify_run(c, store_url, name, deep, stats);
}
