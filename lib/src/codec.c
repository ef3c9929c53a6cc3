/*
 * codec - zstd framing of chunks. Every chunk is stored independently so chunks can be
 * compressed, fetched, verified and decompressed in parallel and in any order; the frames of
 * one file concatenated form a valid .zst stream (of the filtered bytes). Stored input is
 * untrusted: every frame must declare its content size, the sizes must match the manifest, and
 * nothing is ever written past the declared length.
 *
 * Efforts (see codec.h): FULL is zstd at the configured level over the whole (grouped) chunk.
 * FAST entropy-codes what pays: on grouped floats each byte group becomes its own frame, the
 * exponent group coded by zstd's fastest match finder with Huffman literals forced on, the
 * mantissa groups (incompressible, found by an entropy estimate on slices of the group) stored
 * as raw blocks.
 * RAW stores raw blocks only. All three are standard zstd frames.
 */
#define ZSTD_STATIC_LINKING_ONLY /* ZSTD_c_literalCompressionMode; a plain CCtx parameter */
#include "codec.h"

#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define CK_HAVE_AVX2 1
#endif

#define RAW_BLOCK_MAX ((size_t)128 << 10)
#define RAW_FRAME_HEADER 9               /* magic 4, descriptor 1, content size 4 */
#define PER_GROUP_MIN ((size_t)64 << 10) /* smaller chunks are one frame */
#define SLICE ((size_t)4 << 10)          /* of a byte group, to see whether it compresses, */
#define SLICES 8                         /* spread over it */
#define MIN_GAIN 1.01                    /* estimated ratio that makes a group worth coding */
#define ZERO_SHARE 64 /* zero bytes over 1/64 of a group (random: 1/256): a match finder pays */

struct ck_codec {
    ZSTD_CCtx *full, *fast;
    ZSTD_DCtx *dctx;
    unsigned char *scratch; /* grouped bytes */
    size_t scratch_cap;
};

static const struct {
    ck_filter f;
    const char *name;
} filters[] = {{CK_FILTER_NONE, "none"},
               {CK_FILTER_BYTES2, "bytes2"},
               {CK_FILTER_BYTES4, "bytes4"},
               {CK_FILTER_FLOAT2, "float2"},
               {CK_FILTER_FLOAT4, "float4"}};
#define NFILTERS (sizeof(filters) / sizeof(filters[0]))

const char *ck_filter_name(ck_filter f)
{
    size_t i;

    for (i = 0; i < NFILTERS; i++)
        if (filters[i].f == f)
            return filters[i].name;
    return "none";
}

int ck_filter_parse(const char *s, ck_filter *f)
{
    size_t i;

    for (i = 0; i < NFILTERS; i++)
        if (!strcmp(s, filters[i].name)) {
            *f = filters[i].f;
            return 0;
        }
    return -1;
}

int ck_filter_valid(uint32_t v)
{
    size_t i;

    for (i = 0; i < NFILTERS; i++)
        if ((uint32_t)filters[i].f == v)
            return 1;
    return 0;
}

/* ---- filter choice ---- */

/* Bits an order-0 entropy coder needs for the bytes of p at positions k, k+w, k+2w, ... */
static double group_bits(const unsigned char *p, size_t n, unsigned w, unsigned k)
{
    size_t count[256] = {0}, total = 0, i;
    double bits = 0;

    for (i = k; i < n; i += w)
        count[p[i]]++;
    for (i = 0; i < 256; i++)
        total += count[i];
    for (i = 0; i < 256; i++)
        if (count[i])
            bits -= (double)count[i] * log2((double)count[i] / (double)total);
    return bits;
}

static double filter_bits(const unsigned char *p, size_t n, unsigned w)
{
    double bits = 0;
    unsigned k;

    for (k = 0; k < w; k++)
        bits += group_bits(p, n - n % w, w, k);
    return bits;
}

static void rotate_scalar(unsigned char *dst, const unsigned char *src, size_t m, unsigned w,
                          int left);

/* Bits of the grouping of width w, plain or rotated (bits of the rotated sample in *rot). */
static double width_bits(const unsigned char *p, size_t n, unsigned w, double *rot)
{
    unsigned char *r = malloc(n);

    *rot = INFINITY;
    if (r) {
        rotate_scalar(r, p, n / w, w, 1);
        *rot = filter_bits(r, n - n % w, w);
        free(r);
    }
    return filter_bits(p, n, w);
}

ck_filter ck_filter_guess(const void *sample, size_t n)
{
    double none, b2, b4, r2, r4, best2, best4;

    if (n < 256)
        return CK_FILTER_NONE;
    none = filter_bits(sample, n, 1);
    b2 = width_bits(sample, n, 2, &r2);
    b4 = width_bits(sample, n, 4, &r4);
    best2 = r2 < b2 ? r2 : b2;
    best4 = r4 < b4 ? r4 : b4;
    /* a grouping must save 3 %; 4 bytes must beat 2 (bf16 looks alike to both) by 1 % */
    /* rotation unless it looks worse: its gain on floats is mostly in how Huffman coding
     * fares on whole exponents, which an order-0 estimate of a sample hardly sees */
    if (best4 < 0.99 * best2 && best4 < 0.97 * none)
        return r4 < 1.005 * b4 ? CK_FILTER_FLOAT4 : CK_FILTER_BYTES4;
    if (best2 < 0.97 * none)
        return r2 < 1.005 * b2 ? CK_FILTER_FLOAT2 : CK_FILTER_BYTES2;
    return CK_FILTER_NONE;
}

/* ---- byte grouping ---- */

/* dst = the m values of width w in src, each rotated by one bit (left, or right), as
 * little-endian integers; dst and src may be the same. */
static void rotate_scalar(unsigned char *dst, const unsigned char *src, size_t m, unsigned w,
                          int left)
{
    size_t i;
    unsigned k;

    for (i = 0; i < m; i++) {
        const unsigned char *v = src + i * w;
        unsigned char *o = dst + i * w;
        unsigned top = v[w - 1] >> 7, bottom = v[0] & 1;

        if (left) {
            for (k = w; k-- > 1;)
                o[k] = (unsigned char)(v[k] << 1 | v[k - 1] >> 7);
            o[0] = (unsigned char)(v[0] << 1 | top);
        } else {
            for (k = 0; k + 1 < w; k++)
                o[k] = (unsigned char)(v[k] >> 1 | v[k + 1] << 7);
            o[w - 1] = (unsigned char)(v[w - 1] >> 1 | bottom << 7);
        }
    }
}

static void group_scalar(unsigned char *dst, const unsigned char *src, size_t m, unsigned w,
                         int rot, size_t from)
{
    unsigned char v[4];
    size_t i;
    unsigned k;

    for (i = from; i < m; i++) {
        const unsigned char *p = src + i * w;

        if (rot) {
            rotate_scalar(v, p, 1, w, 1);
            p = v;
        }
        for (k = 0; k < w; k++)
            dst[k * m + i] = p[k];
    }
}

static void ungroup_scalar(unsigned char *dst, const unsigned char *src, size_t m, unsigned w,
                           int rot, size_t from)
{
    size_t i;
    unsigned k;

    for (i = from; i < m; i++) {
        for (k = 0; k < w; k++)
            dst[i * w + k] = src[k * m + i];
        if (rot)
            rotate_scalar(dst + i * w, dst + i * w, 1, w, 0);
    }
}

#ifdef CK_HAVE_AVX2
/* 4x4 byte transpose inside each 128-bit lane; its own inverse */
#define T4 0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15
/* even bytes then odd bytes inside each lane, and back */
#define E2 0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15
#define U2 0, 8, 1, 9, 2, 10, 3, 11, 4, 12, 5, 13, 6, 14, 7, 15

__attribute__((target("avx2"))) static size_t
group4_avx2(unsigned char *dst, const unsigned char *src, size_t m, int rot)
{
    const __m256i t4 = _mm256_setr_epi8(T4, T4);
    const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
    size_t i;

    for (i = 0; i + 8 <= m; i += 8) { /* 8 values: 32 bytes in, 8 bytes to each group */
        __m256i v = _mm256_loadu_si256((const __m256i *)(src + 4 * i));
        __m128i lo, hi;

        if (rot)
            v = _mm256_or_si256(_mm256_slli_epi32(v, 1), _mm256_srli_epi32(v, 31));
        v = _mm256_permutevar8x32_epi32(_mm256_shuffle_epi8(v, t4), order);
        lo = _mm256_castsi256_si128(v);
        hi = _mm256_extracti128_si256(v, 1);
        _mm_storel_epi64((__m128i *)(dst + i), lo); /* unaligned 8-byte stores */
        _mm_storel_epi64((__m128i *)(dst + m + i), _mm_unpackhi_epi64(lo, lo));
        _mm_storel_epi64((__m128i *)(dst + 2 * m + i), hi);
        _mm_storel_epi64((__m128i *)(dst + 3 * m + i), _mm_unpackhi_epi64(hi, hi));
    }
    return i;
}

__attribute__((target("avx2"))) static size_t
ungroup4_avx2(unsigned char *dst, const unsigned char *src, size_t m, int rot)
{
    const __m256i t4 = _mm256_setr_epi8(T4, T4);
    const __m256i order = _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7);
    size_t i;

    for (i = 0; i + 8 <= m; i += 8) {
        __m128i lo = _mm_unpacklo_epi64(_mm_loadl_epi64((const __m128i *)(src + i)),
                                        _mm_loadl_epi64((const __m128i *)(src + m + i)));
        __m128i hi = _mm_unpacklo_epi64(_mm_loadl_epi64((const __m128i *)(src + 2 * m + i)),
                                        _mm_loadl_epi64((const __m128i *)(src + 3 * m + i)));
        __m256i v = _mm256_set_m128i(hi, lo);

        v = _mm256_shuffle_epi8(_mm256_permutevar8x32_epi32(v, order), t4);
        if (rot)
            v = _mm256_or_si256(_mm256_srli_epi32(v, 1), _mm256_slli_epi32(v, 31));
        _mm256_storeu_si256((__m256i *)(dst + 4 * i), v);
    }
    return i;
}

__attribute__((target("avx2"))) static size_t
group2_avx2(unsigned char *dst, const unsigned char *src, size_t m, int rot)
{
    const __m256i e2 = _mm256_setr_epi8(E2, E2);
    size_t i;

    for (i = 0; i + 16 <= m; i += 16) { /* 16 values: 32 bytes in, 16 to each group */
        __m256i v = _mm256_loadu_si256((const __m256i *)(src + 2 * i));

        if (rot)
            v = _mm256_or_si256(_mm256_slli_epi16(v, 1), _mm256_srli_epi16(v, 15));
        v = _mm256_permute4x64_epi64(_mm256_shuffle_epi8(v, e2), 0xD8); /* q0 q2 q1 q3 */
        _mm_storeu_si128((__m128i *)(dst + i), _mm256_castsi256_si128(v));
        _mm_storeu_si128((__m128i *)(dst + m + i), _mm256_extracti128_si256(v, 1));
    }
    return i;
}

__attribute__((target("avx2"))) static size_t
ungroup2_avx2(unsigned char *dst, const unsigned char *src, size_t m, int rot)
{
    const __m256i u2 = _mm256_setr_epi8(U2, U2);
    size_t i;

    for (i = 0; i + 16 <= m; i += 16) {
        __m256i v = _mm256_set_m128i(_mm_loadu_si128((const __m128i *)(src + m + i)),
                                     _mm_loadu_si128((const __m128i *)(src + i)));

        v = _mm256_shuffle_epi8(_mm256_permute4x64_epi64(v, 0xD8), u2);
        if (rot)
            v = _mm256_or_si256(_mm256_srli_epi16(v, 1), _mm256_slli_epi16(v, 15));
        _mm256_storeu_si256((__m256i *)(dst + 2 * i), v);
    }
    return i;
}

static int have_avx2(void)
{
    static atomic_int known = -1; /* workers race to fill it in, with the same answer */
    int k = atomic_load_explicit(&known, memory_order_relaxed);

    if (k < 0) {
        k = __builtin_cpu_supports("avx2") && !getenv("S3CKPT_NO_SIMD");
        atomic_store_explicit(&known, k, memory_order_relaxed);
    }
    return k;
}
#endif

void ck_group(void *dst, const void *src, size_t n, ck_filter f)
{
    unsigned w = ck_filter_width(f);
    int rot = (f & CK_FILTER_ROTATE) != 0;
    size_t m = n / w, done = 0;

#ifdef CK_HAVE_AVX2
    if (have_avx2())
        done = w == 4 ? group4_avx2(dst, src, m, rot) : group2_avx2(dst, src, m, rot);
#endif
    group_scalar(dst, src, m, w, rot, done);
    memcpy((unsigned char *)dst + m * w, (const unsigned char *)src + m * w, n % w);
}

void ck_ungroup(void *dst, const void *src, size_t n, ck_filter f)
{
    unsigned w = ck_filter_width(f);
    int rot = (f & CK_FILTER_ROTATE) != 0;
    size_t m = n / w, done = 0;

#ifdef CK_HAVE_AVX2
    if (have_avx2())
        done = w == 4 ? ungroup4_avx2(dst, src, m, rot) : ungroup2_avx2(dst, src, m, rot);
#endif
    ungroup_scalar(dst, src, m, w, rot, done);
    memcpy((unsigned char *)dst + m * w, (const unsigned char *)src + m * w, n % w);
}

/* ---- contexts ---- */

static size_t raw_frame_size(size_t n)
{
    size_t blocks = n ? (n + RAW_BLOCK_MAX - 1) / RAW_BLOCK_MAX : 1;

    return RAW_FRAME_HEADER + 3 * blocks + n;
}

size_t ck_codec_bound(size_t n)
{
    size_t z = ZSTD_compressBound(n), r = raw_frame_size(n);

    /* per-group frames: each at most its own bound; a few headers more than one frame */
    return (z > r ? z : r) + CK_CODEC_MAX_FRAMES * 32;
}

ck_codec *ck_codec_new(int level)
{
    ck_codec *c = calloc(1, sizeof(*c));

    if (!c)
        return NULL;
    c->full = ZSTD_createCCtx();
    c->fast = ZSTD_createCCtx();
    c->dctx = ZSTD_createDCtx();
    if (!c->full || !c->fast || !c->dctx)
        goto fail;
    /* the chunk digest in the manifest covers the raw bytes: no frame checksum */
    if (ZSTD_isError(ZSTD_CCtx_setParameter(c->full, ZSTD_c_compressionLevel, level)) ||
        ZSTD_isError(ZSTD_CCtx_setParameter(c->full, ZSTD_c_checksumFlag, 0)) ||
        ZSTD_isError(ZSTD_CCtx_setParameter(c->full, ZSTD_c_contentSizeFlag, 1)))
        goto fail;
    /* "F256" (bench/CODEC_STUDY.md): the fast strategy with a tiny hash table and a search
     * step of ~257 bytes finds long runs (zero rows of optimizer state) and almost nothing
     * else; with literals forced to Huffman the rest is order-0 entropy coding of 128 KiB
     * blocks: level 1's ratio on exponent bytes or better, at 2.5-3.4 times its speed */
    if (ZSTD_isError(ZSTD_CCtx_setParameter(c->fast, ZSTD_c_compressionLevel, 1)) ||
        ZSTD_isError(ZSTD_CCtx_setParameter(c->fast, ZSTD_c_strategy, ZSTD_fast)) ||
        ZSTD_isError(ZSTD_CCtx_setParameter(c->fast, ZSTD_c_hashLog, 8)) ||
        ZSTD_isError(ZSTD_CCtx_setParameter(c->fast, ZSTD_c_minMatch, 7)) ||
        ZSTD_isError(ZSTD_CCtx_setParameter(c->fast, ZSTD_c_targetLength, 256)) ||
        ZSTD_isError(
            ZSTD_CCtx_setParameter(c->fast, ZSTD_c_literalCompressionMode, ZSTD_ps_enable)) ||
        ZSTD_isError(ZSTD_CCtx_setParameter(c->fast, ZSTD_c_checksumFlag, 0)) ||
        ZSTD_isError(ZSTD_CCtx_setParameter(c->fast, ZSTD_c_contentSizeFlag, 1)))
        goto fail;
    return c;
fail:
    ck_codec_free(c);
    return NULL;
}

void ck_codec_free(ck_codec *c)
{
    if (!c)
        return;
    ZSTD_freeCCtx(c->full);
    ZSTD_freeCCtx(c->fast);
    ZSTD_freeDCtx(c->dctx);
    free(c->scratch);
    free(c);
}

static int scratch_reserve(ck_codec *c, size_t n)
{
    unsigned char *p;

    if (n <= c->scratch_cap)
        return 0;
    if (!(p = malloc(n)))
        return -1;
    free(c->scratch);
    c->scratch = p;
    c->scratch_cap = n;
    return 0;
}

/* ---- compression ---- */

static void put_le(unsigned char *p, uint64_t v, int n)
{
    while (n--) {
        *p++ = (unsigned char)v;
        v >>= 8;
    }
}

/* A frame of raw blocks (RFC 8878 3.1.1): single segment, 4-byte content size, no checksum. */
static size_t raw_frame(unsigned char *dst, size_t cap, const unsigned char *src, size_t n)
{
    size_t len = raw_frame_size(n), pos = RAW_FRAME_HEADER, off = 0;

    if (len > cap || n > UINT32_MAX)
        return 0;
    put_le(dst, ZSTD_MAGICNUMBER, 4);
    dst[4] = 2 << 6 | 1 << 5; /* Frame_Content_Size_flag 2 (4 bytes), Single_Segment_flag */
    put_le(dst + 5, n, 4);
    do {
        size_t b = n - off < RAW_BLOCK_MAX ? n - off : RAW_BLOCK_MAX;
        int last = off + b == n;

        put_le(dst + pos, (uint64_t)b << 3 | (unsigned)last, 3); /* Block_Type 0: raw */
        memcpy(dst + pos + 3, src + off, b);
        pos += 3 + b;
        off += b;
    } while (off < n);
    return pos;
}

static size_t zframe(ZSTD_CCtx *cc, unsigned char *dst, size_t cap, const unsigned char *src,
                     size_t n, char *why, size_t why_len)
{
    size_t r = ZSTD_compress2(cc, dst, cap, src, n);

    if (ZSTD_isError(r)) {
        snprintf(why, why_len, "zstd: %s", ZSTD_getErrorName(r));
        return 0;
    }
    return r;
}

static size_t count_zero_bytes(const unsigned char *p, size_t n)
{
    size_t z = 0, i;

    for (i = 0; i < n; i++)
        z += p[i] == 0;
    return z;
}

/* Order-0 entropy estimate of the compression ratio of a group, from SLICES slices of
 * SLICE bytes spread over it (bench/CODEC_STUDY.md: cheaper than a trial compression, and
 * spread slices see what one sample from the middle misses). */
static double group_estimate(const unsigned char *p, size_t n)
{
    size_t count[256] = {0}, total = 0, i, k, len = n < SLICE ? n : SLICE;
    double bits = 0;

    for (k = 0; k < SLICES; k++) {
        const unsigned char *q = p + (n - len) / (SLICES - 1) * k;

        for (i = 0; i < len; i++)
            count[q[i]]++;
        total += len;
    }
    for (i = 0; i < 256; i++)
        if (count[i])
            bits -= (double)count[i] * log2((double)count[i] / (double)total);
    return bits > 0 ? 8.0 * (double)total / bits : 8.0;
}

/* One byte group at FAST effort. A group with runs of zero bytes (mantissas of optimizer state
 * rows that were never updated) or whose estimate says it compresses goes to the F256 setting
 * (which finds the runs, and lets zstd store any 128 KiB block raw that Huffman does not
 * shrink); the others are stored raw at memcpy cost. */
static size_t group_frame(ck_codec *c, unsigned char *dst, size_t cap, const unsigned char *src,
                          size_t n, char *why, size_t why_len)
{
    size_t z;

    if (count_zero_bytes(src, n) > n / ZERO_SHARE || group_estimate(src, n) >= MIN_GAIN)
        z = zframe(c->fast, dst, cap, src, n, why, why_len);
    else
        return raw_frame(dst, cap, src, n);
    if (z && z >= raw_frame_size(n))
        return raw_frame(dst, cap, src, n);
    return z;
}

size_t ck_codec_compress(ck_codec *c, void *dst, size_t dst_cap, const void *src, size_t n,
                         ck_filter f, ck_effort e, char *why, size_t why_len)
{
    unsigned char *out = dst;
    const unsigned char *in = src;
    size_t len = 0, m, k, r, w = ck_filter_width(f);

    if (f != CK_FILTER_NONE && n >= w) {
        if (scratch_reserve(c, n)) {
            snprintf(why, why_len, "out of memory");
            return 0;
        }
        ck_group(c->scratch, src, n, f);
        in = c->scratch;
    }
    if (e == CK_EFFORT_RAW)
        len = raw_frame(out, dst_cap, in, n);
    else if (e == CK_EFFORT_FULL)
        return zframe(c->full, out, dst_cap, in, n, why, why_len);
    else if (f == CK_FILTER_NONE || n < PER_GROUP_MIN)
        return zframe(c->fast, out, dst_cap, in, n, why, why_len);
    else
        for (m = n / w, k = 0; k < w; k++) { /* the last group carries the tail */
            size_t g = k + 1 < w ? m : n - k * m;

            r = group_frame(c, out + len, dst_cap - len, in + k * m, g, why, why_len);
            if (!r)
                return 0;
            len += r;
        }
    if (!len)
        snprintf(why, why_len, "output buffer of %zu bytes is too small", dst_cap);
    return len;
}

/* ---- decompression ---- */

s3ckpt_status ck_codec_decompress(ck_codec *c, void *dst, size_t raw_len, const void *src,
                                  size_t stored_len, ck_filter f, char *why, size_t why_len)
{
    const unsigned char *s = src;
    unsigned char *out = dst;
    size_t pos = 0, frames = 0, r;
    unsigned long long total = 0;

    do {
        unsigned long long declared;
        size_t flen, rest = stored_len - pos;

        if (rest < 4 || (s[pos] | s[pos + 1] << 8 | s[pos + 2] << 16 |
                         (unsigned long)s[pos + 3] << 24) != ZSTD_MAGICNUMBER) {
            snprintf(why, why_len, "not a zstd frame at byte %zu", pos);
            return S3CKPT_ECORRUPT;
        }
        if (++frames > CK_CODEC_MAX_FRAMES) {
            snprintf(why, why_len, "more than %d frames in one chunk", CK_CODEC_MAX_FRAMES);
            return S3CKPT_ECORRUPT;
        }
        declared = ZSTD_getFrameContentSize(s + pos, rest);
        if (declared == ZSTD_CONTENTSIZE_ERROR || declared == ZSTD_CONTENTSIZE_UNKNOWN) {
            snprintf(why, why_len, "frame header is damaged or lacks a content size");
            return S3CKPT_ECORRUPT;
        }
        if (declared > raw_len - total) {
            snprintf(why, why_len, "frames declare more than the %zu bytes the manifest says",
                     raw_len);
            return S3CKPT_ECORRUPT;
        }
        total += declared;
        flen = ZSTD_findFrameCompressedSize(s + pos, rest);
        if (ZSTD_isError(flen)) {
            snprintf(why, why_len, "truncated or damaged frame (%s)", ZSTD_getErrorName(flen));
            return S3CKPT_ECORRUPT;
        }
        pos += flen;
    } while (pos < stored_len);
    if (total != raw_len) {
        snprintf(why, why_len, "frames declare %llu bytes, manifest says %zu", total, raw_len);
        return S3CKPT_ECORRUPT;
    }
    if (f != CK_FILTER_NONE && raw_len >= ck_filter_width(f)) {
        if (scratch_reserve(c, raw_len)) {
            snprintf(why, why_len, "out of memory");
            return S3CKPT_ENOMEM;
        }
        out = c->scratch;
    }
    r = ZSTD_decompressDCtx(c->dctx, out, raw_len, src, stored_len);
    if (ZSTD_isError(r)) {
        snprintf(why, why_len, "zstd: %s", ZSTD_getErrorName(r));
        return S3CKPT_ECORRUPT;
    }
    if (r != raw_len) {
        snprintf(why, why_len, "chunk decompressed to %zu bytes, manifest says %zu", r, raw_len);
        return S3CKPT_ECORRUPT;
    }
    if (out != dst)
        ck_ungroup(dst, out, raw_len, f);
    return S3CKPT_OK;
}
