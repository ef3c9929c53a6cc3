/*
 * store - the backend interface. Keys are '/'-separated and relative to the store's prefix
 * (file:///root or s3://bucket/prefix). Every call reports failures on the store's ck_err with a
 * message naming the store, the operation and the key.
 */
#ifndef CK_STORE_H
#define CK_STORE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "err.h"

#define CK_ETAG_MAX 80
#define CK_REMOVE_BATCH 1000 /* keys per remove_keys call (S3 DeleteObjects' limit) */

typedef struct ck_obj_info {
    uint64_t size;
    char etag[CK_ETAG_MAX]; /* "" when the store cannot tell cheaply */
} ck_obj_info;

typedef enum ck_put_mode {
    CK_PUT_OVERWRITE = 0,
    CK_PUT_IF_ABSENT = 1, /* fails with EEXISTS when the key exists */
    CK_PUT_IF_MATCH = 2   /* fails with EEXISTS unless the current ETag equals if_match */
} ck_put_mode;

typedef struct ck_store ck_store;
typedef struct ck_reader ck_reader; /* one object, pinned to what it was when opened */
typedef struct ck_writer ck_writer; /* one object under construction; invisible until commit */

/* Called per key (or per common prefix, ending in '/', when listing with a delimiter); info
 * holds the object's size and ETag ("" when the store cannot tell cheaply; zero for prefixes). */
typedef s3ckpt_status ck_list_fn(void *ud, const char *key, int is_prefix, const ck_obj_info *info);
/* Called per incomplete upload found by stale_uploads; returns 1 to abort it. */
typedef int ck_stale_fn(void *ud, const char *key, const char *initiated);

/* What a remote store did (zeros for the file store). */
typedef struct ck_store_counters {
    uint64_t requests, retries, throttled;
    uint64_t parts_uploaded, parts_reused;
    uint64_t bytes_uploaded, bytes_reused;
} ck_store_counters;

/* Settings for remote stores, from the client (NULL/0: the defaults and AWS conventions). */
typedef struct ck_remote_cfg {
    const char *profile, *region, *endpoint, *ca_bundle;
    int addressing;    /* 0 auto, 1 path, 2 virtual */
    int wire_checksum; /* 0 auto, 1 crc32c, 2 md5, 3 off */
    unsigned concurrency;
    long timeout_s;
    uint64_t part_size;
    uint64_t part_memory; /* bound on upload part buffers (0: one per request in flight) */
    uint64_t max_write;   /* largest single write() (a compressed chunk) */
    int64_t clock_offset_s;
    const atomic_int *cancel;
    void (*log)(void *ud, int level, const char *line);
    void *log_ud;
} ck_remote_cfg;

typedef struct ck_store_ops {
    /* Whole small object, at most max_bytes (EINVAL beyond). ENOTFOUND when missing. */
    s3ckpt_status (*get)(ck_store *s, const char *key, size_t max_bytes, ck_buf *out,
                         ck_obj_info *info);
    s3ckpt_status (*put)(ck_store *s, const char *key, const void *data, size_t len,
                         ck_put_mode mode, const char *if_match, ck_obj_info *info);
    s3ckpt_status (*head)(ck_store *s, const char *key, ck_obj_info *info);
    /* etag: when non-empty, the object must still be that version (If-Match). */
    s3ckpt_status (*open_read)(ck_store *s, const char *key, const char *etag, ck_reader **out);
    /* Exactly n bytes at off; safe to call from several threads on one reader. */
    s3ckpt_status (*read_at)(ck_reader *r, uint64_t off, void *dst, size_t n);
    void (*close_read)(ck_reader *r);
    /* size_hint: an upper bound of the object's size (sizes the parts of a remote store). */
    s3ckpt_status (*open_write)(ck_store *s, const char *key, uint64_t size_hint, ck_writer **out);
    s3ckpt_status (*write)(ck_writer *w, const void *data, size_t len);
    /* Ends the object (and frees w). A remote store may finish it in the background: info must
     * stay valid until sync() returns, which reports any failure and fills info by then. */
    s3ckpt_status (*commit)(ck_writer *w, ck_obj_info *info);
    void (*abort)(ck_writer *w); /* also frees; NULL is a no-op */
    /* delimited: only the level below prefix (keys and "sub/" prefixes); else all keys. */
    s3ckpt_status (*list)(ck_store *s, const char *prefix, int delimited, ck_list_fn *fn, void *ud);
    s3ckpt_status (*remove)(ck_store *s, const char *key); /* a missing key is not an error */
    /* The same for n keys (at most CK_REMOVE_BATCH), in one request where the store can. */
    s3ckpt_status (*remove_keys)(ck_store *s, const char *const *keys, size_t n);
    /* Deletes key only if its ETag is still if_match; EEXISTS when it changed or is gone. */
    s3ckpt_status (*remove_if_match)(ck_store *s, const char *key, const char *if_match);
    /* Before writing under prefix: the file store removes temporary files of processes that
     * no longer run; the S3 store finds the multipart uploads an interrupted push left there,
     * so writers resume them. */
    s3ckpt_status (*prepare)(ck_store *s, const char *prefix);
    /* Incomplete uploads under prefix, each offered to fn, which may have it aborted (file
     * store: removes dead processes' temporary files and offers nothing). */
    s3ckpt_status (*stale_uploads)(ck_store *s, const char *prefix, ck_stale_fn *fn, void *ud);
    /* Claims checkpoint `name` for one writer until unlock (or the writer's death): EEXISTS
     * while another writer holds it. */
    s3ckpt_status (*lock)(ck_store *s, const char *name, void **handle);
    void (*unlock)(ck_store *s, void *handle);
    /* Makes every committed object durable before a commit point is written. */
    s3ckpt_status (*sync)(ck_store *s);
    /* After a failure: drops queued background work and waits for what is running, so nothing
     * handed to commit() is used afterwards. NULL: nothing runs in the background. */
    void (*discard)(ck_store *s);
    void (*counters)(ck_store *s, ck_store_counters *out); /* NULL: nothing to count */
    void (*free)(ck_store *s);
} ck_store_ops;

struct ck_store {
    const ck_store_ops *ops;
    ck_err *err;
    char *url;        /* as given, for messages */
    char *local_root; /* directory holding the objects (file store), NULL for remote stores */
    /* bytes the store takes in before a write waits for its disk or network (write-behind,
     * part buffers): adaptive compression measures the store past them */
    uint64_t buffer_bytes;
    /* part of what a write costs comes at the final sync (a local disk's cache flush), which
     * no window of chunks sees */
    int flush_at_end;
};

/* Parses url (file:///abs/path or s3://bucket[/prefix]) and opens the store.
 * create: make a missing file-store root (push); otherwise a missing root is ENOTFOUND. */
s3ckpt_status ck_store_open(ck_store **out, const char *url, int create, const ck_remote_cfg *rc,
                            ck_err *err);
/* Splits s3://bucket/prefix: bucket (3..63 chars of a-z 0-9 . -) and prefix ("" or ending in
 * '/', without empty segments). 0 ok, -1 invalid (why says what is wrong). */
int ck_store_s3_parse(const char *url, char *bucket, size_t bucket_len, char *prefix,
                      size_t prefix_len, char *why, size_t why_len);
s3ckpt_status ck_store_s3_open(ck_store **out, const char *url, const char *bucket,
                               const char *prefix, const ck_remote_cfg *rc, ck_err *err);
void ck_store_counters_get(ck_store *s, ck_store_counters *out);
void ck_store_free(ck_store *s);

/* Parses a file:// URL into an absolute local path (percent-decoded). 0 ok, -1 invalid. */
int ck_store_file_path(const char *url, char *path, size_t path_len);

s3ckpt_status ck_store_file_open(ck_store **out, const char *url, const char *root, int create,
                                 ck_err *err);

#endif
