/*
 * s3ckpt.h - the only public header of libs3ckpt.
 *
 * s3ckpt moves ML training checkpoints (a directory or one file) between local disk and a
 * store: a plain directory (file:///path) or, later, S3-compatible object storage. A checkpoint
 * is committed by writing its manifest last, so it is either complete or invisible.
 *
 * Conventions: every fallible call returns s3ckpt_status; details of the last failure are kept
 * on the client (s3ckpt_errmsg). Options structs carry a version field and only ever grow at
 * the end. Pointers returned through T **out belong to the caller and are freed with the
 * matching _free function; other returned pointers are borrowed. A client may be used by one
 * thread at a time; s3ckpt_client_cancel may be called from any thread or a signal handler.
 */
#ifndef S3CKPT_H
#define S3CKPT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(S3CKPT_BUILDING) && defined(__GNUC__)
#define S3CKPT_API __attribute__((visibility("default")))
#else
#define S3CKPT_API
#endif

#define S3CKPT_VERSION_STRING "0.1.0"

/* Stable status codes: never renumbered; a retired value keeps its number. */
typedef enum s3ckpt_status {
    S3CKPT_OK = 0,
    S3CKPT_EINVAL = 1,       /* bad argument or option */
    S3CKPT_ENOMEM = 2,       /* out of memory */
    S3CKPT_EIO = 3,          /* local I/O failed (read, write, disk full, permissions) */
    S3CKPT_ENETWORK = 4,     /* endpoint unreachable, connection reset, timeout */
    S3CKPT_EAUTH = 5,        /* credentials refused */
    S3CKPT_ENOTFOUND = 6,    /* store, checkpoint, object or latest missing */
    S3CKPT_EEXISTS = 7,      /* name already committed, destination not empty */
    S3CKPT_ETHROTTLED = 8,   /* store asked to slow down and retries ran out */
    S3CKPT_ESERVER = 9,      /* store-side failure */
    S3CKPT_EPROTOCOL = 10,   /* unexpected response from the store */
    S3CKPT_ECORRUPT = 11,    /* integrity: bad manifest, digest mismatch, truncated object */
    S3CKPT_ECANCELED = 12,   /* s3ckpt_client_cancel was called */
    S3CKPT_ECONFIG = 13,     /* bad store URL or configuration */
    S3CKPT_EUNSUPPORTED = 14 /* e.g. a symlink or device file in a pushed directory */
} s3ckpt_status;

typedef struct s3ckpt_client s3ckpt_client;

typedef struct s3ckpt_kv {
    const char *key;
    const char *value;
} s3ckpt_kv;

/* Progress: bytes of raw (uncompressed) checkpoint data done out of total. */
typedef void s3ckpt_progress_fn(void *userdata, uint64_t done_bytes, uint64_t total_bytes);
/* Log lines: level 0 warning, 1 info (--verbose), 2 debug. Never contain secrets. */
typedef void s3ckpt_log_fn(void *userdata, int level, const char *line);

#define S3CKPT_CLIENT_OPTS_VERSION 2
typedef struct s3ckpt_client_opts {
    unsigned version;          /* S3CKPT_CLIENT_OPTS_VERSION */
    unsigned workers;          /* CPU worker threads; 0: one per online core */
    uint64_t chunk_size_bytes; /* 0: 4 MiB; 64 KiB .. 256 MiB */
    int compression_level;     /* zstd level; 0: 1 */
    uint64_t max_memory_bytes; /* bound on chunk buffers; 0: 256 MiB */
    s3ckpt_log_fn *on_log;     /* optional */
    void *log_userdata;
    /* version 2: S3 stores. NULL/0 fields follow the AWS conventions (environment, shared
     * config and credentials files); strings are copied. */
    const char *profile;      /* AWS profile; NULL: AWS_PROFILE or "default" */
    const char *region;       /* NULL: AWS_REGION, AWS_DEFAULT_REGION, profile, us-east-1 */
    const char *endpoint;     /* NULL: AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL, profile, AWS */
    const char *ca_bundle;    /* NULL: AWS_CA_BUNDLE, profile, the system's */
    int addressing;           /* 0 auto (virtual-host on AWS, path on custom endpoints), 1 path,
                                 2 virtual-host */
    int wire_checksum;        /* 0 auto (probed), 1 crc32c, 2 md5 (Content-MD5), 3 off,
                                 4 sha256 (signed payload hash) */
    unsigned concurrency;     /* S3 requests in flight; 0: 8 */
    unsigned timeout_s;       /* abort a request that moves no byte for this long; 0: 60 */
    uint64_t part_size_bytes; /* smallest multipart part; 0: 8 MiB (5 MiB .. 4 GiB: a part
                                 may exceed it by one frame, S3's limit is 5 GiB) */
} s3ckpt_client_opts;

/* What a push or pull did; filled when a stats pointer is given. */
typedef struct s3ckpt_stats {
    uint64_t files;
    uint64_t raw_bytes;         /* checkpoint bytes (uncompressed) */
    uint64_t stored_bytes;      /* bytes of the data objects in the store */
    uint64_t transferred_bytes; /* stored bytes actually written or read this run */
    uint64_t reused_bytes;      /* raw bytes already in place (resume) and not moved again */
    uint64_t chunks;
    double seconds;
    /* S3 stores (0 for the file store) */
    uint64_t requests;       /* HTTP requests sent, retries included */
    uint64_t retries;        /* requests repeated after a failure */
    uint64_t parts_uploaded; /* parts and single-request objects sent */
    uint64_t parts_reused;   /* parts already uploaded by an interrupted push, not sent again */
    /* push: chunks written at each compression effort (adaptive compression lowers it when
     * the store takes bytes faster than the compressor makes them) */
    uint64_t chunks_full; /* zstd at the configured level */
    uint64_t chunks_fast; /* entropy coding of the byte groups that pay */
    uint64_t chunks_raw;  /* stored as raw blocks */
} s3ckpt_stats;

#define S3CKPT_PUSH_OPTS_VERSION 2
typedef struct s3ckpt_push_opts {
    unsigned version; /* S3CKPT_PUSH_OPTS_VERSION */
    const char *name; /* NULL: step-<N> if step >= 0, else derived from the directory name */
    int64_t step;     /* -1: none */
    const s3ckpt_kv *meta;
    size_t meta_count;
    int no_latest; /* 1: leave `latest` alone */
    int force;     /* 1: replace a committed checkpoint of the same name */
    s3ckpt_progress_fn *on_progress;
    void *userdata;
    char *name_out; /* optional: receives the name used (NUL-terminated) */
    size_t name_out_size;
    s3ckpt_stats *stats; /* optional */
    /* version 2 */
    const char *filter; /* NULL or "auto": chosen per file from a sample; "none", "bytes2"
                           (bf16/fp16 byte grouping), "bytes4" (float32 byte grouping),
                           "float2", "float4" (the same after moving each value's sign bit
                           to the bottom) */
    int no_adapt;       /* 1: never compress less than asked, even when the store is faster */
} s3ckpt_push_opts;

#define S3CKPT_PULL_OPTS_VERSION 1
typedef struct s3ckpt_pull_opts {
    unsigned version; /* S3CKPT_PULL_OPTS_VERSION */
    const char *name; /* NULL: what `latest` names */
    int force;        /* 1: restore into a non-empty destination, replacing same-named files */
    s3ckpt_progress_fn *on_progress;
    void *userdata;
    char *name_out; /* optional: receives the name pulled */
    size_t name_out_size;
    s3ckpt_stats *stats;
} s3ckpt_pull_opts;

/* Summary of one committed checkpoint. Strings are owned by the containing object. */
typedef struct s3ckpt_summary {
    char *name;
    int64_t step;  /* -1: none */
    char *created; /* RFC 3339 UTC */
    uint64_t files;
    uint64_t bytes;
    uint64_t stored_bytes;
    int is_latest;
    s3ckpt_kv *meta;
    size_t meta_count;
} s3ckpt_summary;

typedef struct s3ckpt_file_info {
    const char *path;
    int is_dir;
    uint32_t mode;
    uint64_t size;
    uint64_t stored_bytes;
    uint64_t chunks;
    const char *codec;
    const char *filter;
    const char *digest; /* whole-file digest, hex */
} s3ckpt_file_info;

typedef struct s3ckpt_checkpoint s3ckpt_checkpoint; /* opaque: a validated manifest */

S3CKPT_API const char *s3ckpt_version(void);
S3CKPT_API const char *s3ckpt_strerror(s3ckpt_status st);

S3CKPT_API s3ckpt_status s3ckpt_client_new(s3ckpt_client **out, const s3ckpt_client_opts *opts);
S3CKPT_API void s3ckpt_client_free(s3ckpt_client *client);
/* Message of the last failure on this client: what failed and where. Borrowed. */
S3CKPT_API const char *s3ckpt_errmsg(const s3ckpt_client *client);
/* Async-signal-safe: the running operation stops at the next chunk and returns ECANCELED. */
S3CKPT_API void s3ckpt_client_cancel(s3ckpt_client *client);

S3CKPT_API s3ckpt_status s3ckpt_push(s3ckpt_client *client, const char *path, const char *store_url,
                                     const s3ckpt_push_opts *opts);
S3CKPT_API s3ckpt_status s3ckpt_pull(s3ckpt_client *client, const char *store_url, const char *dest,
                                     const s3ckpt_pull_opts *opts);
/* deep = 0: every data object exists with the recorded size; deep = 1: also read, decompress
 * and check every chunk digest. Nothing is written locally. */
S3CKPT_API s3ckpt_status s3ckpt_verify(s3ckpt_client *client, const char *store_url,
                                       const char *name, int deep, s3ckpt_stats *stats);

/* Committed checkpoints, oldest first: by step when all have one, else by creation time. */
S3CKPT_API s3ckpt_status s3ckpt_list(s3ckpt_client *client, const char *store_url,
                                     s3ckpt_summary **out, size_t *count);
S3CKPT_API void s3ckpt_summaries_free(s3ckpt_summary *list, size_t count);

/* name NULL: what `latest` names. */
S3CKPT_API s3ckpt_status s3ckpt_show(s3ckpt_client *client, const char *store_url, const char *name,
                                     s3ckpt_checkpoint **out);
S3CKPT_API const s3ckpt_summary *s3ckpt_checkpoint_summary(const s3ckpt_checkpoint *ck);
S3CKPT_API size_t s3ckpt_checkpoint_entry_count(const s3ckpt_checkpoint *ck);
S3CKPT_API s3ckpt_status s3ckpt_checkpoint_entry(const s3ckpt_checkpoint *ck, size_t i,
                                                 s3ckpt_file_info *out);
S3CKPT_API void s3ckpt_checkpoint_free(s3ckpt_checkpoint *ck);

/* Deletes the manifest first (the checkpoint disappears), then its data. Refuses the
 * checkpoint `latest` names unless force, which also removes `latest`. */
S3CKPT_API s3ckpt_status s3ckpt_rm(s3ckpt_client *client, const char *store_url, const char *name,
                                   int force);

typedef void s3ckpt_prune_fn(void *userdata, const char *name, int deleted);
#define S3CKPT_PRUNE_OPTS_VERSION 1
typedef struct s3ckpt_prune_opts {
    unsigned version;          /* S3CKPT_PRUNE_OPTS_VERSION */
    uint64_t keep_last;        /* keep the newest N */
    uint64_t keep_every_steps; /* 0: off; also keep checkpoints whose step is a multiple of K */
    int dry_run;
    s3ckpt_prune_fn *on_item; /* called for each checkpoint: deleted (1) or kept (0) */
    void *userdata;
} s3ckpt_prune_opts;
/* Never deletes what `latest` names. */
S3CKPT_API s3ckpt_status s3ckpt_prune(s3ckpt_client *client, const char *store_url,
                                      const s3ckpt_prune_opts *opts);

/* Incomplete uploads left under the store by interrupted pushes (S3 multipart uploads, which
 * the store keeps and bills until aborted; file store: temporary files of dead processes, removed
 * without being reported). Those started at least older_than_s seconds ago are aborted (not with
 * dry_run); on_item hears of each one, with aborted = 1 when it was aborted. A push that is
 * still running, or that a re-run would resume, loses its uploaded parts when they are aborted. */
typedef void s3ckpt_cleanup_fn(void *userdata, const char *key, const char *initiated, int aborted);
S3CKPT_API s3ckpt_status s3ckpt_cleanup(s3ckpt_client *client, const char *store_url,
                                        uint64_t older_than_s, int dry_run,
                                        s3ckpt_cleanup_fn *on_item, void *userdata);

#ifdef __cplusplus
}
#endif
#endif
