/* codec - a chunk is stored as one or more standard zstd frames whose contents, concatenated,
 * are the chunk's bytes after the file's filter. The only zstd user.
 *
 * Filters regroup the bytes of fixed-width values (byte k of every value together) so that the
 * exponent bytes of floats sit next to each other; the encoder is free to frame the result as it
 * likes (one frame, one frame per byte group, raw-block frames), the decoder only needs the
 * filter. */
#ifndef CK_CODEC_H
#define CK_CODEC_H

#include <stddef.h>
#include <stdint.h>

#include "s3ckpt.h"

#define CK_CODEC_NAME "zstd"
#define CK_CODEC_MAX_FRAMES 8 /* per chunk: a decoder refuses more */

/* The low 4 bits are the grouped width in bytes (0: no grouping); CK_FILTER_ROTATE first
 * rotates each value (a little-endian integer of that width) left by one bit, so the sign bit
 * goes to the bottom and the top byte holds the float's whole exponent. Values are stored in
 * chunk indexes. */
#define CK_FILTER_ROTATE 0x10
typedef enum ck_filter {
    CK_FILTER_NONE = 0,
    CK_FILTER_BYTES2 = 2,                    /* bf16 / fp16 */
    CK_FILTER_BYTES4 = 4,                    /* float32 */
    CK_FILTER_FLOAT2 = CK_FILTER_ROTATE | 2, /* bf16 / fp16, sign bit rotated to the bottom */
    CK_FILTER_FLOAT4 = CK_FILTER_ROTATE | 4, /* float32, the same */
} ck_filter;

static inline unsigned ck_filter_width(ck_filter f)
{
    return (unsigned)f & 0xF;
}

/* How hard a chunk is compressed; push lowers it when the store outruns the compressor. */
typedef enum ck_effort {
    CK_EFFORT_RAW = 0,  /* frames of raw blocks: memcpy speed */
    CK_EFFORT_FAST = 1, /* entropy coding of what pays (grouped: each byte group on its own) */
    CK_EFFORT_FULL = 2, /* zstd at the configured level over the whole chunk */
} ck_effort;

const char *ck_filter_name(ck_filter f);
/* 0 and the filter for "none", "bytes2", "bytes4", "float2", "float4"; -1 otherwise. */
int ck_filter_parse(const char *s, ck_filter *f);
/* 1 when v is one of the ck_filter values. */
int ck_filter_valid(uint32_t v);
/* The filter that makes a sample of a file cheapest to entropy-code (order-0 estimate per byte
 * group); ties go to the narrower grouping, then to none; rotation only where it is cheaper. */
ck_filter ck_filter_guess(const void *sample, size_t n);

/* Byte grouping of n bytes by filter f (not NONE); a tail of n % width bytes is kept at the
 * end as it is. */
void ck_group(void *dst, const void *src, size_t n, ck_filter f);
void ck_ungroup(void *dst, const void *src, size_t n, ck_filter f);

typedef struct ck_codec ck_codec; /* per-thread compression and decompression contexts */

/* Upper bound of what a chunk of n raw bytes is stored as, whatever the effort. */
size_t ck_codec_bound(size_t n);
ck_codec *ck_codec_new(int level);
void ck_codec_free(ck_codec *c);

/* Compresses src[0..n) filtered by f at effort e into dst. Returns the stored length, 0 on
 * failure (the reason goes to why). */
size_t ck_codec_compress(ck_codec *c, void *dst, size_t dst_cap, const void *src, size_t n,
                         ck_filter f, ck_effort e, char *why, size_t why_len);

/* Decodes a stored chunk of stored_len bytes into dst, which must come out as exactly raw_len
 * bytes: every frame must declare its content size up front, the sizes must add up, the frames
 * must end exactly at stored_len, and any frame checksum must match. Returns S3CKPT_OK, or
 * S3CKPT_ECORRUPT / S3CKPT_ENOMEM with the reason in why. */
s3ckpt_status ck_codec_decompress(ck_codec *c, void *dst, size_t raw_len, const void *src,
                                  size_t stored_len, ck_filter f, char *why, size_t why_len);

#endif
