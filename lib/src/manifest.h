/* manifest - format v1: the in-memory model, JSON encode, decode and validate. The only JSON
 * library user. Pure: no I/O. */
#ifndef CK_MANIFEST_H
#define CK_MANIFEST_H

#include <stddef.h>
#include <stdint.h>

#include "codec.h"
#include "digest.h"
#include "s3ckpt.h"

#define CK_FORMAT_NAME "s3ckpt-manifest"
#define CK_FORMAT_VERSION 1
#define CK_MANIFEST_MAX_BYTES ((size_t)256 << 20)
#define CK_MAX_ENTRIES 10000000u
#define CK_MAX_META 1000u
#define CK_META_KEY_MAX 256u
#define CK_META_VALUE_MAX 4096u
#define CK_CHUNK_MIN ((uint64_t)64 << 10)
#define CK_CHUNK_MAX ((uint64_t)256 << 20)
#define CK_DATA_PREFIX "data/"

typedef struct ck_chunk {
    uint32_t raw_len;
    uint32_t stored_len;
    ck_digest digest;    /* of the raw bytes */
    uint64_t frame_hash; /* XXH3-64 of the stored frame; in the chunk index, not the manifest */
} ck_chunk;

typedef struct ck_entry {
    char *path;
    int is_dir;
    uint32_t mode; /* permission bits only (0777) */
    /* files only: */
    uint64_t size;
    char *key;            /* data object key, relative to the checkpoint: "data/<path>" */
    char *etag;           /* of the data object as the store reported it; may be "" */
    uint64_t object_size; /* bytes of the data object = sum of stored_len */
    ck_filter filter;     /* applied to every chunk before compression */
    ck_chunk *chunks;
    uint64_t nchunks;
    ck_digest digest;                   /* derived from the chunk digests */
    char digest_hex[CK_DIGEST_HEX_LEN]; /* filled on demand (show) */
} ck_entry;

typedef struct ck_manifest {
    char *name;
    int64_t step; /* -1: none */
    char *created;
    char *tool;
    s3ckpt_kv *meta; /* keys and values owned */
    size_t meta_count;
    uint64_t chunk_size;
    ck_entry *entries; /* sorted by ck_path_cmp */
    size_t nentries;
    /* totals, checked against the entries on decode */
    uint64_t files, dirs, bytes, stored_bytes;
} ck_manifest;

void ck_manifest_init(ck_manifest *m);
void ck_manifest_cleanup(ck_manifest *m);

/* Sets files/dirs/bytes/stored_bytes from the entries. */
void ck_manifest_sum(ck_manifest *m);

/* Encodes m (which must be valid) as JSON; *out is malloc'ed and NUL-terminated. */
s3ckpt_status ck_manifest_encode(const ck_manifest *m, char **out, size_t *out_len);

/* Parses and validates an untrusted manifest. On failure returns S3CKPT_ECORRUPT (or ENOMEM)
 * with the reason in why; m is left empty. */
s3ckpt_status ck_manifest_decode(ck_manifest *m, const char *json, size_t len, char *why,
                                 size_t why_len);

/* Checks everything a reader relies on (paths, duplicates, lengths, totals, digests). Used by
 * decode, and by push before it commits. */
s3ckpt_status ck_manifest_validate(const ck_manifest *m, char *why, size_t why_len);

/* Number of chunks of a file of `size` bytes cut into chunk_size pieces, and the raw length of
 * chunk i. */
uint64_t ck_chunk_count(uint64_t size, uint64_t chunk_size);
uint32_t ck_chunk_len(uint64_t size, uint64_t chunk_size, uint64_t i);

#endif
