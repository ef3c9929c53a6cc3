/*
 * codec_study - how close the public libzstd API (stable + experimental parameters, Debian
 * libzstd.so 1.5.4) gets to Huffman-only coding of the exponent byte of byte-grouped float
 * tensors, while the output stays standard zstd frames (ZSTD_decompressDCtx, `zstd -d`).
 *
 * Every candidate compresses 4 MiB chunks of an in-memory data set; compression and
 * decompression are timed single-threaded in thread CPU time (median of RUNS), and every
 * candidate is checked by a byte-exact round trip. Results go to stdout as Markdown tables;
 * bench/CODEC_STUDY.md discusses them. This is a study, not product code: lib/src/codec is
 * where the chosen scheme belongs.
 *
 * build: gcc -std=c11 -O2 -march=x86-64-v2 -Wall -Wextra -Wpedantic -Wshadow -Wvla -Werror \
 *            -o build/study/codec_study bench/codec_study.c -lzstd -lm
 *        (or the cmake target codec_study; the AVX2 paths use target attributes, not -mavx2)
 * usage: codec_study [-n MIB] [-r RUNS] [-s SETS] [-D DUMPDIR] [FILE]
 *        SETS is a subset of "abcdh" (f32, bf16, Adam v, f32 30 % zeros, real file); the real
 *        file is FILE or /tmp/torch-ckpt/checkpoint.pt. -D writes one chunk of every candidate
 *        plus the expected bytes so the frames can be checked with the zstd CLI.
 */
#define _GNU_SOURCE
#define ZSTD_STATIC_LINKING_ONLY
#include <immintrin.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zstd.h>

#define CHUNK (4u << 20)
#define BLOCK (128u << 10)
#define MAXRUNS 15

static int runs = 5;

/* ---------- data ---------- */

static uint64_t rng[4] = {0x9E3779B97F4A7C15ull, 0xBF58476D1CE4E5B9ull, 0x94D049BB133111EBull,
                          0x2545F4914F6CDD1Dull};

static uint64_t rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

static uint64_t next(void)
{
    uint64_t r = rotl(rng[1] * 5, 7) * 9, t = rng[1] << 17;

    rng[2] ^= rng[0];
    rng[3] ^= rng[1];
    rng[1] ^= rng[2];
    rng[0] ^= rng[3];
    rng[2] ^= t;
    rng[3] = rotl(rng[3], 45);
    return r;
}

static double uniform(void)
{
    return ((next() >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

static void seed(uint64_t v)
{
    rng[0] = 0x9E3779B97F4A7C15ull ^ v;
    rng[1] = 0xBF58476D1CE4E5B9ull;
    rng[2] = 0x94D049BB133111EBull;
    rng[3] = 0x2545F4914F6CDD1Dull;
    for (int i = 0; i < 16; i++) {
        next();
    }
}

/* Box-Muller: fills n standard normals. */
static void normals(float *out, size_t n)
{
    for (size_t i = 0; i < n; i += 2) {
        double r = sqrt(-2.0 * log(uniform())), t = 2.0 * M_PI * uniform();
        out[i] = (float)(r * cos(t));
        if (i + 1 < n) {
            out[i + 1] = (float)(r * sin(t));
        }
    }
}

/* Synthetic set `id` of `bytes` bytes; returns the element size. */
static int gen(char id, uint8_t *buf, size_t bytes)
{
    size_t n = bytes / 4;
    float *f = (float *)buf;

    seed((uint64_t)id);
    switch (id) {
    case 'a':
        normals(f, n);
        for (size_t i = 0; i < n; i++) {
            f[i] *= 0.02f;
        }
        return 4;
    case 'b': {
        size_t m = bytes / 2;
        uint16_t *h = (uint16_t *)buf;
        float tmp[1024];
        for (size_t i = 0; i < m; i += 1024) {
            size_t k = m - i < 1024 ? m - i : 1024;
            normals(tmp, k);
            for (size_t j = 0; j < k; j++) {
                float v = tmp[j] * 0.02f;
                uint32_t u;
                memcpy(&u, &v, 4);
                h[i + j] = (uint16_t)(u >> 16);
            }
        }
        return 2;
    }
    case 'c':
        normals(f, n);
        for (size_t i = 0; i < n; i++) {
            float v = f[i] * 1e-3f;
            f[i] = v * v;
        }
        return 4;
    case 'd':
        normals(f, n);
        for (size_t i = 0; i < n; i++) {
            f[i] = uniform() < 0.3 ? 0.0f : f[i] * 0.02f;
        }
        return 4;
    }
    return 0;
}

/* ---------- byte grouping ---------- */

/* Byte k of every es-byte value goes to group k; a tail of n % es bytes is copied last. */
static void group_scalar(uint8_t *dst, const uint8_t *src, size_t n, int es)
{
    size_t m = n / (size_t)es;

    if (es == 4) {
        for (size_t i = 0; i < m; i++) {
            dst[i] = src[4 * i];
            dst[m + i] = src[4 * i + 1];
            dst[2 * m + i] = src[4 * i + 2];
            dst[3 * m + i] = src[4 * i + 3];
        }
    } else {
        for (size_t i = 0; i < m; i++) {
            dst[i] = src[2 * i];
            dst[m + i] = src[2 * i + 1];
        }
    }
    memcpy(dst + m * (size_t)es, src + m * (size_t)es, n - m * (size_t)es);
}

static void ungroup_scalar(uint8_t *dst, const uint8_t *src, size_t n, int es)
{
    size_t m = n / (size_t)es;

    if (es == 4) {
        for (size_t i = 0; i < m; i++) {
            dst[4 * i] = src[i];
            dst[4 * i + 1] = src[m + i];
            dst[4 * i + 2] = src[2 * m + i];
            dst[4 * i + 3] = src[3 * m + i];
        }
    } else {
        for (size_t i = 0; i < m; i++) {
            dst[2 * i] = src[i];
            dst[2 * i + 1] = src[m + i];
        }
    }
    memcpy(dst + m * (size_t)es, src + m * (size_t)es, n - m * (size_t)es);
}

/* 4x4 transpose of 64-bit lanes across four registers (its own inverse). */
__attribute__((target("avx2"))) static void tr4x4q(__m256i *v)
{
    __m256i t0 = _mm256_unpacklo_epi64(v[0], v[1]), t1 = _mm256_unpackhi_epi64(v[0], v[1]);
    __m256i t2 = _mm256_unpacklo_epi64(v[2], v[3]), t3 = _mm256_unpackhi_epi64(v[2], v[3]);

    v[0] = _mm256_permute2x128_si256(t0, t2, 0x20);
    v[1] = _mm256_permute2x128_si256(t1, t3, 0x20);
    v[2] = _mm256_permute2x128_si256(t0, t2, 0x31);
    v[3] = _mm256_permute2x128_si256(t1, t3, 0x31);
}

__attribute__((target("avx2"))) static void group_avx2(uint8_t *dst, const uint8_t *src, size_t n,
                                                       int es)
{
    size_t m = n / (size_t)es, i = 0;

    if (es == 4) {
        const __m256i bt = _mm256_setr_epi8(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15, 0,
                                            4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
        const __m256i dp = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
        for (; i + 32 <= m; i += 32) {
            __m256i v[4];
            for (int k = 0; k < 4; k++) {
                v[k] = _mm256_loadu_si256((const __m256i *)(src + 4 * i + 32 * k));
                v[k] = _mm256_permutevar8x32_epi32(_mm256_shuffle_epi8(v[k], bt), dp);
            }
            tr4x4q(v);
            for (int k = 0; k < 4; k++) {
                _mm256_storeu_si256((__m256i *)(dst + (size_t)k * m + i), v[k]);
            }
        }
        for (; i < m; i++) {
            for (int k = 0; k < 4; k++) {
                dst[(size_t)k * m + i] = src[4 * i + k];
            }
        }
    } else {
        const __m256i bt = _mm256_setr_epi8(0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15, 0,
                                            2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15);
        for (; i + 32 <= m; i += 32) {
            __m256i a = _mm256_loadu_si256((const __m256i *)(src + 2 * i));
            __m256i b = _mm256_loadu_si256((const __m256i *)(src + 2 * i + 32));
            a = _mm256_permute4x64_epi64(_mm256_shuffle_epi8(a, bt), 0xD8);
            b = _mm256_permute4x64_epi64(_mm256_shuffle_epi8(b, bt), 0xD8);
            _mm256_storeu_si256((__m256i *)(dst + i), _mm256_permute2x128_si256(a, b, 0x20));
            _mm256_storeu_si256((__m256i *)(dst + m + i), _mm256_permute2x128_si256(a, b, 0x31));
        }
        for (; i < m; i++) {
            dst[i] = src[2 * i];
            dst[m + i] = src[2 * i + 1];
        }
    }
    memcpy(dst + m * (size_t)es, src + m * (size_t)es, n - m * (size_t)es);
}

__attribute__((target("avx2"))) static void ungroup_avx2(uint8_t *dst, const uint8_t *src, size_t n,
                                                         int es)
{
    size_t m = n / (size_t)es, i = 0;

    if (es == 4) {
        const __m256i bt = _mm256_setr_epi8(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15, 0,
                                            4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
        const __m256i ip = _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7);
        for (; i + 32 <= m; i += 32) {
            __m256i v[4];
            for (int k = 0; k < 4; k++) {
                v[k] = _mm256_loadu_si256((const __m256i *)(src + (size_t)k * m + i));
            }
            tr4x4q(v);
            for (int k = 0; k < 4; k++) {
                v[k] = _mm256_shuffle_epi8(_mm256_permutevar8x32_epi32(v[k], ip), bt);
                _mm256_storeu_si256((__m256i *)(dst + 4 * i + 32 * k), v[k]);
            }
        }
        for (; i < m; i++) {
            for (int k = 0; k < 4; k++) {
                dst[4 * i + k] = src[(size_t)k * m + i];
            }
        }
    } else {
        const __m256i bt = _mm256_setr_epi8(0, 8, 1, 9, 2, 10, 3, 11, 4, 12, 5, 13, 6, 14, 7, 15, 0,
                                            8, 1, 9, 2, 10, 3, 11, 4, 12, 5, 13, 6, 14, 7, 15);
        for (; i + 32 <= m; i += 32) {
            __m256i lo = _mm256_loadu_si256((const __m256i *)(src + i));
            __m256i hi = _mm256_loadu_si256((const __m256i *)(src + m + i));
            __m256i a = _mm256_permute2x128_si256(lo, hi, 0x20);
            __m256i b = _mm256_permute2x128_si256(lo, hi, 0x31);
            a = _mm256_shuffle_epi8(_mm256_permute4x64_epi64(a, 0xD8), bt);
            b = _mm256_shuffle_epi8(_mm256_permute4x64_epi64(b, 0xD8), bt);
            _mm256_storeu_si256((__m256i *)(dst + 2 * i), a);
            _mm256_storeu_si256((__m256i *)(dst + 2 * i + 32), b);
        }
        for (; i < m; i++) {
            dst[2 * i] = src[i];
            dst[2 * i + 1] = src[m + i];
        }
    }
    memcpy(dst + m * (size_t)es, src + m * (size_t)es, n - m * (size_t)es);
}

/* ---------- timing ---------- */

static double cpu_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_dbl(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof(*v), cmp_dbl);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static void die(const char *what, size_t code)
{
    fprintf(stderr, "codec_study: %s: %s\n", what, ZSTD_getErrorName(code));
    exit(1);
}

/* ---------- zstd parameter sets ---------- */

/* 0 means "leave the level's default" for every field but level. */
typedef struct zp {
    const char *name;
    int level, strategy, hlog, clog, slog, mml, tlen, wlog;
    int lit;      /* literalCompressionMode: 0 auto, 1 ZSTD_ps_enable, 2 ZSTD_ps_disable */
    int producer; /* 1: a block-level sequence producer that emits no match at all */
    int checksum;
    ZSTD_CCtx *cctx;
} zp;

/* The sequence producer: the whole block is one run of literals, so zstd spends nothing on
 * match finding and only entropy-codes the literals (or stores the block raw). */
static size_t nomatch_producer(void *state, ZSTD_Sequence *out, size_t cap, const void *src,
                               size_t n, const void *dict, size_t dict_n, int level, size_t window)
{
    (void)state, (void)src, (void)dict, (void)dict_n, (void)level, (void)window;
    if (cap < 1) {
        return ZSTD_SEQUENCE_PRODUCER_ERROR;
    }
    memset(out, 0, sizeof(*out));
    out[0].litLength = (unsigned)n;
    return 1;
}

#define MINL (-131072)

/* Indexes into zps[]; the sweep runs over all of them, the candidates use the named ones. */
enum {
    Z_L1,
    Z_L1_CK,
    Z_LM1,
    Z_LM1_HUF,
    Z_LM5_HUF,
    Z_LM50_HUF,
    Z_MIN_HUF,
    Z_MIN_HUF_H8,
    Z_MIN_HUF_H6_W17,
    Z_MIN,
    Z_L1_H8_M7,
    Z_L1_H10_M7,
    Z_L1_H12_M7,
    Z_FAST_H8_M7_A8_HUF,
    Z_F16,
    Z_F32,
    Z_F64_H6,
    Z_F64_M6,
    Z_F64,
    Z_F128,
    Z_F256,
    Z_F1024,
    Z_F256_CK,
    Z_PROD_L1,
    Z_PROD_L1_H6,
    Z_PROD_L1_HUF,
    Z_PROD_L1_H6_CK,
    Z_PROD_MIN_HUF,
    Z_N
};

static zp zps[Z_N] = {
    [Z_L1] = {"L1", 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL},
    [Z_L1_CK] = {"L1 +checksum", 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, NULL},
    [Z_LM1] = {"L-1", -1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL},
    [Z_LM1_HUF] = {"L-1 lit=huf", -1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, NULL},
    [Z_LM5_HUF] = {"L-5 lit=huf", -5, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, NULL},
    [Z_LM50_HUF] = {"L-50 lit=huf", -50, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, NULL},
    [Z_MIN_HUF] = {"Lmin lit=huf", MINL, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, NULL},
    [Z_MIN_HUF_H8] = {"Lmin lit=huf hlog8 mml7", MINL, 0, 8, 0, 0, 7, 0, 0, 1, 0, 0, NULL},
    [Z_MIN_HUF_H6_W17] = {"Lmin lit=huf hlog6 clog6 mml7 wlog17", MINL, 0, 6, 6, 0, 7, 0, 17, 1, 0,
                          0, NULL},
    [Z_MIN] = {"Lmin", MINL, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL},
    [Z_L1_H8_M7] = {"L1 hlog8 mml7", 1, 0, 8, 0, 0, 7, 0, 0, 0, 0, 0, NULL},
    [Z_L1_H10_M7] = {"L1 hlog10 mml7", 1, 0, 10, 0, 0, 7, 0, 0, 0, 0, 0, NULL},
    [Z_L1_H12_M7] = {"L1 hlog12 mml7", 1, 0, 12, 0, 0, 7, 0, 0, 0, 0, 0, NULL},
    [Z_FAST_H8_M7_A8_HUF] = {"fast hlog8 mml7 tlen8 lit=huf", 1, ZSTD_fast, 8, 0, 0, 7, 8, 0, 1, 0,
                             0, NULL},
    [Z_F16] = {"fast hlog8 mml7 tlen16 lit=huf", 1, ZSTD_fast, 8, 0, 0, 7, 16, 0, 1, 0, 0, NULL},
    [Z_F32] = {"fast hlog8 mml7 tlen32 lit=huf", 1, ZSTD_fast, 8, 0, 0, 7, 32, 0, 1, 0, 0, NULL},
    [Z_F64_H6] = {"fast hlog6 mml7 tlen64 lit=huf", 1, ZSTD_fast, 6, 0, 0, 7, 64, 0, 1, 0, 0, NULL},
    [Z_F64_M6] = {"fast hlog8 mml6 tlen64 lit=huf", 1, ZSTD_fast, 8, 0, 0, 6, 64, 0, 1, 0, 0, NULL},
    [Z_F64] = {"fast hlog8 mml7 tlen64 lit=huf", 1, ZSTD_fast, 8, 0, 0, 7, 64, 0, 1, 0, 0, NULL},
    [Z_F128] = {"fast hlog8 mml7 tlen128 lit=huf", 1, ZSTD_fast, 8, 0, 0, 7, 128, 0, 1, 0, 0, NULL},
    [Z_F256] = {"fast hlog8 mml7 tlen256 lit=huf", 1, ZSTD_fast, 8, 0, 0, 7, 256, 0, 1, 0, 0, NULL},
    [Z_F1024] = {"fast hlog8 mml7 tlen1024 lit=huf", 1, ZSTD_fast, 8, 0, 0, 7, 1024, 0, 1, 0, 0,
                 NULL},
    [Z_F256_CK] = {"fast hlog8 mml7 tlen256 lit=huf +checksum", 1, ZSTD_fast, 8, 0, 0, 7, 256, 0, 1,
                   0, 1, NULL},
    [Z_PROD_L1] = {"producer(no match) L1", 1, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, NULL},
    [Z_PROD_L1_H6] = {"producer(no match) L1 hlog6 clog6", 1, 0, 6, 6, 0, 0, 0, 0, 0, 1, 0, NULL},
    [Z_PROD_L1_HUF] = {"producer(no match) L1 lit=huf", 1, 0, 0, 0, 0, 0, 0, 0, 1, 1, 0, NULL},
    [Z_PROD_L1_H6_CK] = {"producer(no match) L1 hlog6 clog6 +checksum", 1, 0, 6, 6, 0, 0, 0, 0, 0,
                         1, 1, NULL},
    [Z_PROD_MIN_HUF] = {"producer(no match) Lmin lit=huf", MINL, 0, 0, 0, 0, 0, 0, 0, 1, 1, 0,
                        NULL},
};

static void set(ZSTD_CCtx *c, ZSTD_cParameter p, int v, const char *name)
{
    size_t r = ZSTD_CCtx_setParameter(c, p, v);
    if (ZSTD_isError(r)) {
        die(name, r);
    }
}

static ZSTD_CCtx *cctx_of(zp *z)
{
    if (z->cctx) {
        return z->cctx;
    }
    ZSTD_CCtx *c = ZSTD_createCCtx();
    set(c, ZSTD_c_compressionLevel, z->level, z->name);
    if (z->strategy) {
        set(c, ZSTD_c_strategy, z->strategy, z->name);
    }
    if (z->hlog) {
        set(c, ZSTD_c_hashLog, z->hlog, z->name);
    }
    if (z->clog) {
        set(c, ZSTD_c_chainLog, z->clog, z->name);
    }
    if (z->slog) {
        set(c, ZSTD_c_searchLog, z->slog, z->name);
    }
    if (z->mml) {
        set(c, ZSTD_c_minMatch, z->mml, z->name);
    }
    if (z->tlen) {
        set(c, ZSTD_c_targetLength, z->tlen, z->name);
    }
    if (z->wlog) {
        set(c, ZSTD_c_windowLog, z->wlog, z->name);
    }
    if (z->lit) {
        set(c, ZSTD_c_literalCompressionMode, z->lit == 1 ? ZSTD_ps_enable : ZSTD_ps_disable,
            z->name);
    }
    set(c, ZSTD_c_checksumFlag, z->checksum, z->name);
    if (z->producer) {
        ZSTD_registerSequenceProducer(c, NULL, nomatch_producer);
    }
    z->cctx = c;
    return c;
}

static size_t frame_zstd(zp *z, uint8_t *dst, size_t cap, const uint8_t *src, size_t n)
{
    size_t r = ZSTD_compress2(cctx_of(z), dst, cap, src, n);
    if (ZSTD_isError(r)) {
        die(z->name, r);
    }
    return r;
}

/* A hand-built frame of Raw_Blocks: single segment, 4-byte content size, no checksum. */
static size_t frame_raw(uint8_t *dst, size_t cap, const uint8_t *src, size_t n)
{
    size_t o = 0;

    if (cap < n + 9 + 3 * (n / BLOCK + 1) || n > UINT32_MAX) {
        fprintf(stderr, "codec_study: raw frame does not fit\n");
        exit(1);
    }
    dst[o++] = 0x28, dst[o++] = 0xB5, dst[o++] = 0x2F, dst[o++] = 0xFD;
    dst[o++] = 0xA0; /* FCS 4 bytes, single segment */
    for (int i = 0; i < 4; i++) {
        dst[o++] = (uint8_t)(n >> (8 * i));
    }
    size_t p = 0;
    do {
        size_t b = n - p < BLOCK ? n - p : BLOCK;
        uint32_t h = (uint32_t)(b << 3) | (p + b == n); /* type 0 = Raw_Block */
        dst[o++] = (uint8_t)h, dst[o++] = (uint8_t)(h >> 8), dst[o++] = (uint8_t)(h >> 16);
        memcpy(dst + o, src + p, b);
        o += b, p += b;
    } while (p < n);
    return o;
}

/* ZSTD_compressSequences with literal-only blocks: another public way to skip matching. */
static ZSTD_CCtx *seq_cctx;
static ZSTD_Sequence seqs[CHUNK / BLOCK + 1];

static size_t frame_seqs(uint8_t *dst, size_t cap, const uint8_t *src, size_t n)
{
    if (!seq_cctx) {
        seq_cctx = ZSTD_createCCtx();
        set(seq_cctx, ZSTD_c_compressionLevel, 1, "seq");
        set(seq_cctx, ZSTD_c_blockDelimiters, ZSTD_sf_explicitBlockDelimiters, "seq");
    }
    size_t k = 0;
    for (size_t p = 0; p < n; p += BLOCK, k++) {
        memset(&seqs[k], 0, sizeof(seqs[k]));
        seqs[k].litLength = (unsigned)(n - p < BLOCK ? n - p : BLOCK);
    }
    size_t r = ZSTD_compressSequences(seq_cctx, dst, cap, seqs, k, src, n);
    if (ZSTD_isError(r)) {
        die("compressSequences", r);
    }
    return r;
}

/* ---------- per-group storage and decision rules ---------- */

enum { ST_ZSTD, ST_RAW, ST_SEQ, ST_SAMPLE, ST_HIST };

typedef struct gstore {
    int mode;
    int z; /* zps index for ST_ZSTD, ST_SAMPLE, ST_HIST */
} gstore;

static uint64_t n_kept_raw, n_compressed;
static uint8_t sample_buf[ZSTD_COMPRESSBOUND(64 << 10)];

/* Estimated entropy-coder ratio from a byte histogram of four 4 KiB slices. */
static double hist_ratio(const uint8_t *p, size_t n)
{
    uint32_t h[4][256] = {{0}};
    size_t slice = 4096, tot = 0;

    for (int s = 0; s < 4; s++) {
        size_t off = n <= slice ? 0 : (n - slice) / 3 * (size_t)s;
        size_t len = n < slice ? n : slice;
        for (size_t i = 0; i + 4 <= len; i += 4) {
            h[0][p[off + i]]++, h[1][p[off + i + 1]]++, h[2][p[off + i + 2]]++;
            h[3][p[off + i + 3]]++;
        }
        tot += len / 4 * 4;
    }
    double bits = 0;
    for (int b = 0; b < 256; b++) {
        uint32_t c = h[0][b] + h[1][b] + h[2][b] + h[3][b];
        if (c) {
            bits -= c * log2((double)c / (double)tot);
        }
    }
    return bits > 0 ? 8.0 * (double)tot / bits : 8.0;
}

static size_t store(const gstore *g, uint8_t *dst, size_t cap, const uint8_t *src, size_t n)
{
    switch (g->mode) {
    case ST_ZSTD:
        return frame_zstd(&zps[g->z], dst, cap, src, n);
    case ST_RAW:
        return frame_raw(dst, cap, src, n);
    case ST_SEQ:
        return frame_seqs(dst, cap, src, n);
    case ST_SAMPLE: {
        /* compress 64 KiB from the middle with the same setting; keep raw below 1.02 */
        size_t sn = n < (64u << 10) ? n : (64u << 10), off = (n - sn) / 2;
        size_t c = frame_zstd(&zps[g->z], sample_buf, sizeof(sample_buf), src + off, sn);
        if ((double)sn < 1.02 * (double)c) {
            n_kept_raw++;
            return frame_raw(dst, cap, src, n);
        }
        n_compressed++;
        return frame_zstd(&zps[g->z], dst, cap, src, n);
    }
    case ST_HIST:
        if (hist_ratio(src, n) < 1.02) {
            n_kept_raw++;
            return frame_raw(dst, cap, src, n);
        }
        n_compressed++;
        return frame_zstd(&zps[g->z], dst, cap, src, n);
    }
    return 0;
}

/* ---------- candidates ---------- */

typedef struct cand {
    const char *id, *name;
    int grouped, per_group;
    gstore whole; /* !per_group: the one frame per chunk */
    gstore high;  /* per_group: the sign+exponent group */
    gstore rest;  /* per_group: every other group */
} cand;

#define ZS(i)                                                                                      \
    {                                                                                              \
        ST_ZSTD, (i)                                                                               \
    }
#define RAW                                                                                        \
    {                                                                                              \
        ST_RAW, 0                                                                                  \
    }

static const cand cands[] = {
    {"A", "plain, L1", 0, 0, ZS(Z_L1), RAW, RAW},
    {"B", "grouped, L1, one frame", 1, 0, ZS(Z_L1), RAW, RAW},
    {"B+ck", "B with XXH64 checksum", 1, 0, ZS(Z_L1_CK), RAW, RAW},
    {"C", "grouped, L1, frame per group", 1, 1, RAW, ZS(Z_L1), ZS(Z_L1)},
    {"D1-i", "hi: Lmin lit=huf; rest: raw frames", 1, 1, RAW, ZS(Z_MIN_HUF), RAW},
    {"D1-ii", "hi: Lmin lit=huf; rest: zstd Lmin", 1, 1, RAW, ZS(Z_MIN_HUF), ZS(Z_MIN)},
    {"D2-i", "hi: producer L1 hlog6; rest: raw frames", 1, 1, RAW, ZS(Z_PROD_L1_H6), RAW},
    {"D3-i", "hi: compressSequences; rest: raw frames", 1, 1, RAW, {ST_SEQ, 0}, RAW},
    {"E-sample",
     "hi: producer; rest: 64K trial (<1.02: raw)",
     1,
     1,
     RAW,
     ZS(Z_PROD_L1_H6),
     {ST_SAMPLE, Z_PROD_L1_H6}},
    {"E-hist",
     "hi: producer; rest: entropy est. (<1.02: raw)",
     1,
     1,
     RAW,
     ZS(Z_PROD_L1_H6),
     {ST_HIST, Z_PROD_L1_H6}},
    {"E-auto", "every group: producer (zstd decides per block)", 1, 1, RAW, ZS(Z_PROD_L1_H6),
     ZS(Z_PROD_L1_H6)},
    {"E-L1", "hi: producer; rest: L1 (matches find zero runs)", 1, 1, RAW, ZS(Z_PROD_L1_H6),
     ZS(Z_L1)},
    {"G", "grouped, one frame, producer (zstd decides per block)", 1, 0, ZS(Z_PROD_L1_H6), RAW,
     RAW},
    {"G-min", "grouped, one frame, Lmin lit=huf", 1, 0, ZS(Z_MIN_HUF), RAW, RAW},
    {"G+ck", "G with XXH64 checksum", 1, 0, ZS(Z_PROD_L1_H6_CK), RAW, RAW},
    {"F-i", "hi: F256; rest: raw frames", 1, 1, RAW, ZS(Z_F256), RAW},
    {"F-hist",
     "hi: F256; rest: entropy est. (<1.02: raw, else F256)",
     1,
     1,
     RAW,
     ZS(Z_F256),
     {ST_HIST, Z_F256}},
    {"F-sample",
     "hi: F256; rest: 64K trial (<1.02: raw, else F256)",
     1,
     1,
     RAW,
     ZS(Z_F256),
     {ST_SAMPLE, Z_F256}},
    {"F-auto", "every group: F256", 1, 1, RAW, ZS(Z_F256), ZS(Z_F256)},
    {"G-f256", "grouped, one frame, F256", 1, 0, ZS(Z_F256), RAW, RAW},
    {"G-f256+ck", "G-f256 with XXH64 checksum", 1, 0, ZS(Z_F256_CK), RAW, RAW},
};
#define NCANDS (sizeof(cands) / sizeof(cands[0]))

typedef struct dataset {
    char id;
    const char *name;
    int es;
    size_t n;
    uint8_t *raw, *grp;
} dataset;

static size_t slot_cap(void)
{
    return ZSTD_compressBound(CHUNK) + 4096;
}

static size_t chunk_len(const dataset *d, size_t c)
{
    size_t off = c * CHUNK;
    return d->n - off < CHUNK ? d->n - off : CHUNK;
}

static size_t compress_chunk(const cand *k, const dataset *d, size_t c, uint8_t *dst, size_t cap)
{
    size_t n = chunk_len(d, c);
    const uint8_t *src = (k->grouped ? d->grp : d->raw) + c * CHUNK;

    if (!k->per_group) {
        return store(&k->whole, dst, cap, src, n);
    }
    size_t m = n / (size_t)d->es, o = 0;
    for (int g = 0; g < d->es; g++) {
        /* the last group also carries the n % es tail bytes */
        size_t len = g == d->es - 1 ? n - m * (size_t)(d->es - 1) : m;
        const gstore *s = g == d->es - 1 ? &k->high : &k->rest;
        o += store(s, dst + o, cap - o, src + (size_t)g * m, len);
    }
    return o;
}

/* Writes chunk 0 of candidate k and the bytes it must decode to, for a check with `zstd -d`. */
static void dump(const char *dir, const dataset *d, const cand *k, const uint8_t *frames,
                 size_t len)
{
    char path[512];
    size_t n0 = chunk_len(d, 0);

    snprintf(path, sizeof(path), "%s/%c-%s.zst", dir, d->id, k->id);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(frames, 1, len, f) != len || fclose(f)) {
        perror(path);
        exit(1);
    }
    snprintf(path, sizeof(path), "%s/%c-%s.expect", dir, d->id, k->id);
    f = fopen(path, "wb");
    if (!f || fwrite(k->grouped ? d->grp : d->raw, 1, n0, f) != n0 || fclose(f)) {
        perror(path);
        exit(1);
    }
}

static double compress_all(const cand *k, const dataset *d, uint8_t *slots, size_t *csz)
{
    size_t nch = (d->n + CHUNK - 1) / CHUNK, cap = slot_cap();
    double t0 = cpu_now();

    for (size_t c = 0; c < nch; c++) {
        csz[c] = compress_chunk(k, d, c, slots + c * cap, cap);
    }
    return cpu_now() - t0;
}

/* Compression of every candidate is timed round-robin (run r of all candidates, then run r+1),
 * so a burst of load from other tenants hits all candidates alike. Then each candidate is
 * compressed once more, decompressed RUNS times, checked byte-exact, and printed as a row. */
static void run_cands(const dataset *d, uint8_t *slots, size_t *csz, uint8_t *out,
                      const char *dumpdir)
{
    size_t nch = (d->n + CHUNK - 1) / CHUNK, cap = slot_cap();
    static double tc[sizeof(cands) / sizeof(cands[0])][MAXRUNS];
    double td[MAXRUNS];
    ZSTD_DCtx *dctx = ZSTD_createDCtx();

    for (int r = 0; r < runs; r++) {
        for (size_t i = 0; i < NCANDS; i++) {
            tc[i][r] = compress_all(&cands[i], d, slots, csz);
        }
    }
    for (size_t i = 0; i < NCANDS; i++) {
        const cand *k = &cands[i];
        size_t tot = 0;
        n_kept_raw = n_compressed = 0;
        compress_all(k, d, slots, csz);
        for (size_t c = 0; c < nch; c++) {
            tot += csz[c];
        }
        for (int r = 0; r < runs; r++) {
            double t0 = cpu_now();
            for (size_t c = 0; c < nch; c++) {
                size_t n = chunk_len(d, c);
                size_t got = ZSTD_decompressDCtx(dctx, out + c * CHUNK, n, slots + c * cap, csz[c]);
                if (ZSTD_isError(got) || got != n) {
                    fprintf(stderr, "codec_study: %s chunk %zu: decompress: %s\n", k->id, c,
                            ZSTD_isError(got) ? ZSTD_getErrorName(got) : "short");
                    exit(1);
                }
            }
            td[r] = cpu_now() - t0;
        }
        if (memcmp(out, k->grouped ? d->grp : d->raw, d->n) != 0) {
            fprintf(stderr, "codec_study: %s on %s: round trip differs\n", k->id, d->name);
            exit(1);
        }
        if (dumpdir) {
            dump(dumpdir, d, k, slots, csz[0]);
        }
        char note[64] = "";
        if (n_kept_raw + n_compressed) {
            snprintf(note, sizeof(note), "low groups compressed: %.0f %%",
                     100.0 * (double)n_compressed / (double)(n_kept_raw + n_compressed));
        }
        printf("| %s | %s | %.4f | %.0f | %.0f | %s |\n", k->id, k->name,
               (double)d->n / (double)tot, (double)d->n / median(tc[i], runs) / 1e6,
               (double)d->n / median(td, runs) / 1e6, note);
        fflush(stdout);
    }
    ZSTD_freeDCtx(dctx);
}

/* One byte group (all chunks) with one zstd setting: group ratio and MB/s of group bytes. */
static void run_group(int zi, const dataset *d, int g, uint8_t *slots, uint8_t *out, int with_dec)
{
    size_t nch = (d->n + CHUNK - 1) / CHUNK, cap = slot_cap(), tot = 0, gb = 0;
    double tc[MAXRUNS], td[MAXRUNS];
    size_t csz[4096];
    ZSTD_DCtx *dctx = ZSTD_createDCtx();

    for (int r = 0; r < runs; r++) {
        double t0 = cpu_now();
        for (size_t c = 0; c < nch; c++) {
            size_t n = chunk_len(d, c), m = n / (size_t)d->es;
            const uint8_t *src = d->grp + c * CHUNK + (size_t)g * m;
            csz[c] = zi < 0 ? frame_seqs(slots + c * cap, cap, src, m)
                            : frame_zstd(&zps[zi], slots + c * cap, cap, src, m);
        }
        tc[r] = cpu_now() - t0;
    }
    for (size_t c = 0; c < nch; c++) {
        tot += csz[c];
        gb += chunk_len(d, c) / (size_t)d->es;
    }
    for (int r = 0; r < (with_dec ? runs : 1); r++) {
        double t0 = cpu_now();
        for (size_t c = 0; c < nch; c++) {
            size_t m = chunk_len(d, c) / (size_t)d->es;
            size_t got = ZSTD_decompressDCtx(dctx, out + c * CHUNK, m, slots + c * cap, csz[c]);
            if (ZSTD_isError(got) || got != m ||
                memcmp(out + c * CHUNK, d->grp + c * CHUNK + (size_t)g * m, m)) {
                fprintf(stderr, "codec_study: group %d round trip failed\n", g);
                exit(1);
            }
        }
        td[r] = cpu_now() - t0;
    }
    ZSTD_freeDCtx(dctx);
    double gr = (double)gb / (double)tot, cm = (double)gb / median(tc, runs) / 1e6;
    printf("| %d | %s | %.4f | %.0f | %.0f | ", g, zi < 0 ? "compressSequences L1" : zps[zi].name,
           gr, cm, cm * (double)d->es);
    if (with_dec) {
        double dm = (double)gb / median(td, runs) / 1e6;
        printf("%.0f | %.0f |\n", dm, dm * (double)d->es);
    } else {
        printf("- | - |\n");
    }
    fflush(stdout);
}

/* Grouping throughput, streamed over the whole set in 4 MiB chunks. */
static void run_grouping(const dataset *d, uint8_t *out)
{
    struct {
        const char *name;
        void (*fn)(uint8_t *, const uint8_t *, size_t, int);
        int un;
    } fs[] = {{"group scalar", group_scalar, 0},
              {"group AVX2", group_avx2, 0},
              {"ungroup scalar", ungroup_scalar, 1},
              {"ungroup AVX2", ungroup_avx2, 1},
              {"memcpy (reference)", NULL, 0}};
    size_t nch = (d->n + CHUNK - 1) / CHUNK;

    for (size_t f = 0; f < sizeof(fs) / sizeof(fs[0]); f++) {
        double t[MAXRUNS];
        for (int r = 0; r < runs; r++) {
            double t0 = cpu_now();
            for (size_t c = 0; c < nch; c++) {
                size_t n = chunk_len(d, c);
                const uint8_t *src = (fs[f].un ? d->grp : d->raw) + c * CHUNK;
                if (fs[f].fn) {
                    fs[f].fn(out + c * CHUNK, src, n, d->es);
                } else {
                    memcpy(out + c * CHUNK, src, n);
                }
            }
            t[r] = cpu_now() - t0;
        }
        if (fs[f].fn && memcmp(out, fs[f].un ? d->raw : d->grp, d->n)) {
            fprintf(stderr, "codec_study: %s is wrong\n", fs[f].name);
            exit(1);
        }
        printf("| %s | %.0f |\n", fs[f].name, (double)d->n / median(t, runs) / 1e6);
    }
}

/* Cost of the per-group decision rules on the group below the exponent group, all chunks. */
static void run_rule_cost(const dataset *d)
{
    size_t nch = (d->n + CHUNK - 1) / CHUNK, kept = 0;
    int g = d->es - 2;
    const char *names[] = {"16 KiB histogram entropy estimate",
                           "64 KiB trial, fast tlen256 lit=huf", "64 KiB trial, Lmin lit=huf"};
    int zi[] = {-1, Z_F256, Z_MIN_HUF};

    printf("\n### Cost of the per-group decision (group %d, every chunk)\n\n", g);
    printf("| rule | us per group | share of a 4 MiB chunk at 3 GB/s | says compress |\n"
           "|---|---|---|---|\n");
    for (int i = 0; i < 3; i++) {
        double t[MAXRUNS];
        for (int r = 0; r < runs; r++) {
            kept = 0;
            double t0 = cpu_now();
            for (size_t c = 0; c < nch; c++) {
                size_t m = chunk_len(d, c) / (size_t)d->es;
                const uint8_t *src = d->grp + c * CHUNK + (size_t)g * m;
                if (zi[i] < 0) {
                    kept += hist_ratio(src, m) >= 1.02;
                } else {
                    size_t sn = m < (64u << 10) ? m : (64u << 10), off = (m - sn) / 2;
                    size_t cs =
                        frame_zstd(&zps[zi[i]], sample_buf, sizeof(sample_buf), src + off, sn);
                    kept += (double)sn >= 1.02 * (double)cs;
                }
            }
            t[r] = cpu_now() - t0;
        }
        double us = median(t, runs) / (double)nch * 1e6;
        printf("| %s | %.1f | %.1f %% | %zu of %zu |\n", names[i], us,
               100.0 * us / ((double)CHUNK / 3e9 * 1e6), kept, nch);
    }
}

/* Fixed cost of one frame: ZSTD_compress2 of 1 KiB, per setting. */
static void run_frame_cost(void)
{
    static uint8_t src[1024], dst[4096];
    int zi[] = {Z_L1, Z_MIN_HUF, Z_MIN, Z_PROD_L1, Z_PROD_L1_H6};

    for (size_t i = 0; i < sizeof(src); i++) {
        src[i] = (uint8_t)(next() & 7);
    }
    printf("\n### Fixed cost of a frame (ZSTD_compress2 of 1 KiB, reused CCtx)\n\n");
    printf("| setting | us per frame |\n|---|---|\n");
    for (size_t i = 0; i < sizeof(zi) / sizeof(zi[0]); i++) {
        double t[MAXRUNS];
        for (int r = 0; r < runs; r++) {
            double t0 = cpu_now();
            for (int j = 0; j < 20000; j++) {
                frame_zstd(&zps[zi[i]], dst, sizeof(dst), src, sizeof(src));
            }
            t[r] = cpu_now() - t0;
        }
        printf("| %s | %.2f |\n", zps[zi[i]].name, median(t, runs) / 20000 * 1e6);
    }
    double t[MAXRUNS];
    for (int r = 0; r < runs; r++) {
        double t0 = cpu_now();
        for (int j = 0; j < 20000; j++) {
            frame_raw(dst, sizeof(dst), src, sizeof(src));
        }
        t[r] = cpu_now() - t0;
    }
    printf("| hand-built raw frame | %.2f |\n", median(t, runs) / 20000 * 1e6);
}

static uint8_t *xmalloc(size_t n)
{
    uint8_t *p = malloc(n);
    if (!p) {
        fprintf(stderr, "codec_study: out of memory\n");
        exit(1);
    }
    memset(p, 0, n); /* fault the pages in before any timing */
    return p;
}

static int load_file(dataset *d, const char *path, size_t max)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        return -1;
    }
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    d->n = max && (size_t)len > max ? max : (size_t)len;
    d->raw = xmalloc(d->n);
    if (fread(d->raw, 1, d->n, f) != d->n) {
        fclose(f);
        return -1;
    }
    fclose(f);
    return 0;
}

int main(int argc, char **argv)
{
    size_t mib = 256;
    const char *sets = "abcdh", *dumpdir = NULL, *file = "/tmp/torch-ckpt/checkpoint.pt";
    int opt, sweep_only = 0;

    while ((opt = getopt(argc, argv, "n:r:s:D:S")) != -1) {
        switch (opt) {
        case 'n':
            mib = strtoul(optarg, NULL, 10);
            break;
        case 'r':
            runs = (int)strtol(optarg, NULL, 10);
            runs = runs < 1 ? 1 : runs > MAXRUNS ? MAXRUNS : runs;
            break;
        case 's':
            sets = optarg;
            break;
        case 'D':
            dumpdir = optarg;
            break;
        case 'S':
            sweep_only = 1;
            break;
        default:
            fprintf(stderr, "usage: %s [-n MIB] [-r RUNS] [-s abcdh] [-D DIR] [-S] [FILE]\n",
                    argv[0]);
            return 2;
        }
    }
    if (optind < argc) {
        file = argv[optind];
    }
    if (!__builtin_cpu_supports("avx2")) {
        fprintf(stderr, "codec_study: needs AVX2\n");
        return 1;
    }
    printf("# codec_study: libzstd %s, %zu MiB per synthetic set, 4 MiB chunks, median of %d\n",
           ZSTD_versionString(), mib, runs);
    printf("F256 = strategy fast, hashLog 8, minMatch 7, targetLength 256, literals forced to "
           "Huffman (ZSTD_c_literalCompressionMode = ZSTD_ps_enable); Lmin = ZSTD_minCLevel().\n");
    printf("MB/s = 10^6 bytes per second of thread CPU time, of raw chunk bytes unless the "
           "column says group bytes.\n");

    static const struct {
        char id;
        const char *name;
    } names[] = {{'a', "a: f32 N(0,0.02)"},
                 {'b', "b: bf16 (top 16 bits of a)"},
                 {'c', "c: Adam exp_avg_sq f32 (N(0,1)*1e-3)^2"},
                 {'d', "d: f32 N(0,0.02), 30 % exact zeros"},
                 {'h', "h: torch.save f32 model + Adam (real file)"}};
    size_t cap = slot_cap();
    for (const char *s = sets; *s; s++) {
        dataset d = {0};
        for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
            if (names[i].id == *s) {
                d.id = *s, d.name = names[i].name;
            }
        }
        if (!d.name) {
            continue;
        }
        if (*s == 'h') {
            if (load_file(&d, file, 0)) {
                printf("\n## %s: %s not readable, skipped\n", d.name, file);
                continue;
            }
            d.es = 4;
        } else {
            d.n = mib << 20;
            d.raw = xmalloc(d.n);
            d.es = gen(*s, d.raw, d.n);
        }
        size_t nch = (d.n + CHUNK - 1) / CHUNK;
        d.grp = xmalloc(d.n);
        uint8_t *out = xmalloc(d.n), *slots = xmalloc(nch * cap);
        size_t *csz = calloc(nch, sizeof(*csz));
        for (size_t c = 0; c < nch; c++) {
            group_scalar(d.grp + c * CHUNK, d.raw + c * CHUNK, chunk_len(&d, c), d.es);
        }
        printf("\n## %s (%zu bytes, %zu chunks, %d-byte values)\n", d.name, d.n, nch, d.es);

        printf("\n### Each byte group alone (group %d = sign + exponent)\n\n", d.es - 1);
        printf("| group | setting | group ratio | comp MB/s group | comp MB/s raw-equiv | "
               "dec MB/s group | dec MB/s raw-equiv |\n|---|---|---|---|---|---|---|\n");
        for (int zi = 0; zi < Z_N; zi++) {
            if (zi == Z_L1_CK || zi == Z_PROD_L1_H6_CK || zi == Z_F256_CK) {
                continue;
            }
            run_group(zi, &d, d.es - 1, slots, out, 1);
        }
        run_group(-1, &d, d.es - 1, slots, out, 1);
        for (int g = d.es - 2; g >= 0; g--) {
            run_group(Z_L1, &d, g, slots, out, 0);
            run_group(Z_MIN_HUF, &d, g, slots, out, 0);
            run_group(Z_F256, &d, g, slots, out, 0);
            run_group(Z_PROD_L1_H6, &d, g, slots, out, 1);
        }
        if (!sweep_only) {
            printf("\n### Whole chunks\n\n| id | candidate | ratio | comp MB/s | dec MB/s | note "
                   "|\n|---|---|---|---|---|---|\n");
            run_cands(&d, slots, csz, out, dumpdir);
            printf("\n### Byte grouping (MB/s, streamed in 4 MiB chunks)\n\n| step | MB/s "
                   "|\n|---|---|\n");
            run_grouping(&d, out);
            run_rule_cost(&d);
        }
        free(d.raw), free(d.grp), free(out), free(slots), free(csz);
    }
    if (!sweep_only) {
        run_frame_cost();
    }
    for (int zi = 0; zi < Z_N; zi++) {
        ZSTD_freeCCtx(zps[zi].cctx);
    }
    ZSTD_freeCCtx(seq_cctx);
    return 0;
}
