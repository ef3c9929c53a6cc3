/* codec - one zstd frame per chunk (content size and checksum flags on). The only zstd user. */
#ifndef CK_CODEC_H
#define CK_CODEC_H

#include <stddef.h>

#include "s3ckpt.h"

#define CK_CODEC_NAME "zstd"
#define CK_FILTER_NONE "none"

typedef struct ck_codec ck_codec; /* per-thread compression and decompression contexts */

/* Upper bound of a compressed frame for n raw bytes. */
size_t ck_codec_bound(size_t n);
ck_codec *ck_codec_new(int level);
void ck_codec_free(ck_codec *c);

/* Compresses src[0..n) into one frame in dst. Returns the frame length, 0 on failure (the
 * reason goes to why). */
size_t ck_codec_compress(ck_codec *c, void *dst, size_t dst_cap, const void *src, size_t n,
                         char *why, size_t why_len);

/* Decompresses exactly one frame of stored_len bytes into dst, which must come out as exactly
 * raw_len bytes; the frame's content size must say so up front, and its checksum must match.
 * Returns S3CKPT_OK or S3CKPT_ECORRUPT with the reason in why. */
s3ckpt_status ck_codec_decompress(ck_codec *c, void *dst, size_t raw_len, const void *src,
                                  size_t stored_len, char *why, size_t why_len);

#endif
