/*
 * test_codec - zstd framing of chunks: round trips, the frame is a standard zstd frame with
 * content size and checksum, and decompress refuses every way a stored frame can disagree with
 * the manifest or be damaged. zstd.h is included here only to inspect and forge frames.
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "codec.h"

static char why[256];

/* Deterministic pseudo-random bytes (xorshift64*), incompressible for zstd. */
static void fill_random(unsigned char *p, size_t n, uint64_t seed)
{
    uint64_t x = seed ? seed : 1;
    size_t i;

    for (i = 0; i < n; i++) {
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        p[i] = (unsigned char)((x * 2685821657736338717ull) >> 56);
    }
}

/* float32 weights with few distinct mantissa patterns, like a quantized checkpoint. */
static void fill_floats(unsigned char *p, size_t n)
{
    size_t i;

    for (i = 0; i + sizeof(float) <= n; i += sizeof(float)) {
        float f = (float)((int)((i / 4) % 97) - 48) / 64.0f;

        memcpy(p + i, &f, sizeof(f));
    }
}

typedef struct frame {
    unsigned char *raw, *stored, *out;
    size_t n, stored_len;
    ck_codec *c;
} frame;

/* Compresses n bytes of the given data into a fresh frame. */
static void frame_make(frame *f, const unsigned char *src, size_t n)
{
    size_t cap = ck_codec_bound(n);

    f->n = n;
    f->c = ck_codec_new(1);
    cr_assert_not_null(f->c);
    f->raw = malloc(n ? n : 1);
    f->out = malloc(n + 64);
    f->stored = malloc(cap);
    cr_assert(f->raw && f->out && f->stored);
    if (n)
        memcpy(f->raw, src, n);
    why[0] = '\0';
    f->stored_len = ck_codec_compress(f->c, f->stored, cap, f->raw, n, why, sizeof(why));
    cr_assert_gt(f->stored_len, 0, "compress failed: %s", why);
    cr_assert_leq(f->stored_len, cap);
}

static void frame_free(frame *f)
{
    ck_codec_free(f->c);
    free(f->raw);
    free(f->out);
    free(f->stored);
}

static void assert_round_trip(const unsigned char *src, size_t n)
{
    frame f;
    s3ckpt_status st;

    frame_make(&f, src, n);
    memset(f.out, 0xAA, n + 64);
    st = ck_codec_decompress(f.c, f.out, n, f.stored, f.stored_len, why, sizeof(why));
    cr_assert_eq(st, S3CKPT_OK, "decompress %zu bytes: %s", n, why);
    cr_assert(n == 0 || memcmp(f.out, src, n) == 0, "round trip of %zu bytes differs", n);
    cr_assert_eq(f.out[n], 0xAA, "decompress wrote past raw_len");
    frame_free(&f);
}

static void assert_rejected(frame *f, size_t raw_len, const void *src, size_t stored_len,
                            const char *needle)
{
    s3ckpt_status st;

    why[0] = '\0';
    st = ck_codec_decompress(f->c, f->out, raw_len, src, stored_len, why, sizeof(why));
    cr_assert_eq(st, S3CKPT_ECORRUPT, "got %d (%s)", st, why);
    cr_assert_not_null(strstr(why, needle), "why \"%s\" lacks \"%s\"", why, needle);
}

Test(codec, round_trips_empty_input)
{
    static const unsigned char none[1];

    assert_round_trip(none, 0);
}

Test(codec, round_trips_one_byte)
{
    static const unsigned char one[1] = {0x5a};

    assert_round_trip(one, 1);
}

Test(codec, round_trips_4mib_of_float_data_and_compresses_it)
{
    size_t n = (size_t)4 << 20;
    unsigned char *p = malloc(n);
    frame f;

    cr_assert_not_null(p);
    fill_floats(p, n);
    assert_round_trip(p, n);
    frame_make(&f, p, n);
    cr_assert_lt(f.stored_len, n / 2, "float data did not compress: %zu bytes", f.stored_len);
    frame_free(&f);
    free(p);
}

Test(codec, round_trips_incompressible_random_data_within_bound)
{
    size_t n = (size_t)1 << 20;
    unsigned char *p = malloc(n);
    frame f;

    cr_assert_not_null(p);
    fill_random(p, n, 42);
    assert_round_trip(p, n);
    frame_make(&f, p, n);
    cr_assert_geq(f.stored_len, n, "random data should not shrink");
    cr_assert_leq(f.stored_len, ck_codec_bound(n));
    frame_free(&f);
    free(p);
}

Test(codec, frame_is_a_standard_zstd_frame_with_content_size_and_checksum)
{
    unsigned char src[1000], back[1000];
    frame f;
    uint32_t magic;
    size_t r;

    fill_floats(src, sizeof(src));
    frame_make(&f, src, sizeof(src));
    magic = (uint32_t)f.stored[0] | (uint32_t)f.stored[1] << 8 | (uint32_t)f.stored[2] << 16 |
            (uint32_t)f.stored[3] << 24;
    cr_assert_eq(magic, 0xFD2FB528u, "magic %08x", magic);
    cr_assert_eq(ZSTD_getFrameContentSize(f.stored, f.stored_len), sizeof(src));
    /* Frame_Header_Descriptor bit 2: Content_Checksum_flag */
    cr_assert(f.stored[4] & 0x04, "checksum flag not set (FHD %02x)", f.stored[4]);
    cr_assert_eq(ZSTD_findFrameCompressedSize(f.stored, f.stored_len), f.stored_len);
    /* any zstd decoder reads it */
    r = ZSTD_decompress(back, sizeof(back), f.stored, f.stored_len);
    cr_assert(!ZSTD_isError(r), "%s", ZSTD_getErrorName(r));
    cr_assert_eq(r, sizeof(src));
    cr_assert_eq(memcmp(back, src, sizeof(src)), 0);
    frame_free(&f);
}

Test(codec, empty_input_frame_declares_zero_content_size)
{
    static const unsigned char none[1];
    frame f;

    frame_make(&f, none, 0);
    cr_assert_eq(ZSTD_getFrameContentSize(f.stored, f.stored_len), 0);
    frame_free(&f);
}

Test(codec, decompress_rejects_truncated_frame)
{
    unsigned char src[5000];
    frame f;

    fill_floats(src, sizeof(src));
    frame_make(&f, src, sizeof(src));
    assert_rejected(&f, sizeof(src), f.stored, f.stored_len - 1, "truncated");
    assert_rejected(&f, sizeof(src), f.stored, f.stored_len / 2, "truncated");
    frame_free(&f);
}

Test(codec, decompress_rejects_frame_cut_inside_its_header)
{
    unsigned char src[100];
    frame f;

    fill_floats(src, sizeof(src));
    frame_make(&f, src, sizeof(src));
    assert_rejected(&f, sizeof(src), f.stored, 5, "damaged");
    assert_rejected(&f, sizeof(src), f.stored, 3, "not a zstd frame");
    assert_rejected(&f, sizeof(src), f.stored, 0, "not a zstd frame");
    frame_free(&f);
}

Test(codec, decompress_rejects_flipped_payload_byte_by_checksum)
{
    unsigned char src[4096];
    frame f;

    /* random data is stored as a raw block, so a flipped byte still decodes and only the
     * frame checksum can tell */
    fill_random(src, sizeof(src), 7);
    frame_make(&f, src, sizeof(src));
    cr_assert_gt(f.stored_len, sizeof(src));
    f.stored[f.stored_len / 2] ^= 0x01;
    assert_rejected(&f, sizeof(src), f.stored, f.stored_len, "checksum");
    frame_free(&f);
}

Test(codec, decompress_rejects_flipped_checksum_byte)
{
    unsigned char src[4096];
    frame f;

    fill_floats(src, sizeof(src));
    frame_make(&f, src, sizeof(src));
    f.stored[f.stored_len - 1] ^= 0x80;
    assert_rejected(&f, sizeof(src), f.stored, f.stored_len, "checksum");
    frame_free(&f);
}

Test(codec, decompress_rejects_raw_len_smaller_than_declared)
{
    unsigned char src[3000];
    frame f;

    fill_floats(src, sizeof(src));
    frame_make(&f, src, sizeof(src));
    assert_rejected(&f, sizeof(src) - 1, f.stored, f.stored_len, "frame declares 3000 bytes");
    frame_free(&f);
}

Test(codec, decompress_rejects_raw_len_larger_than_declared)
{
    unsigned char src[3000];
    frame f;

    fill_floats(src, sizeof(src));
    frame_make(&f, src, sizeof(src));
    assert_rejected(&f, sizeof(src) + 1, f.stored, f.stored_len, "frame declares 3000 bytes");
    frame_free(&f);
}

Test(codec, decompress_rejects_two_concatenated_frames)
{
    unsigned char src[2000], *two;
    frame f;

    fill_floats(src, sizeof(src));
    frame_make(&f, src, sizeof(src));
    two = malloc(2 * f.stored_len);
    cr_assert_not_null(two);
    memcpy(two, f.stored, f.stored_len);
    memcpy(two + f.stored_len, f.stored, f.stored_len);
    /* the first frame's declared size matches, but it does not span the stored bytes */
    assert_rejected(&f, sizeof(src), two, 2 * f.stored_len, "frame is");
    free(two);
    frame_free(&f);
}

Test(codec, decompress_rejects_non_zstd_bytes)
{
    static const unsigned char garbage[] = "PK\x03\x04 this is a zip, not a zstd frame at all";
    unsigned char out[64];
    ck_codec *c = ck_codec_new(1);
    s3ckpt_status st;

    cr_assert_not_null(c);
    st = ck_codec_decompress(c, out, sizeof(out), garbage, sizeof(garbage), why, sizeof(why));
    cr_assert_eq(st, S3CKPT_ECORRUPT);
    cr_assert_not_null(strstr(why, "not a zstd frame"), "%s", why);
    ck_codec_free(c);
}

Test(codec, decompress_rejects_skippable_frame)
{
    /* skippable frame magic 0x184D2A50, 4-byte length 4, 4 bytes of user data */
    static const unsigned char skip[] = {0x50, 0x2A, 0x4D, 0x18, 4, 0, 0, 0, 1, 2, 3, 4};
    unsigned char out[16];
    ck_codec *c = ck_codec_new(1);

    cr_assert_not_null(c);
    cr_assert_eq(ck_codec_decompress(c, out, 0, skip, sizeof(skip), why, sizeof(why)),
                 S3CKPT_ECORRUPT);
    cr_assert_not_null(strstr(why, "not a zstd frame"), "%s", why);
    ck_codec_free(c);
}

Test(codec, decompress_rejects_frame_without_content_size)
{
    unsigned char src[2000], out[2000], stored[4096];
    ZSTD_CCtx *cctx = ZSTD_createCCtx();
    ck_codec *c = ck_codec_new(1);
    size_t n;
    s3ckpt_status st;

    cr_assert(cctx && c);
    fill_floats(src, sizeof(src));
    cr_assert(!ZSTD_isError(ZSTD_CCtx_setParameter(cctx, ZSTD_c_contentSizeFlag, 0)));
    cr_assert(!ZSTD_isError(ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 1)));
    n = ZSTD_compress2(cctx, stored, sizeof(stored), src, sizeof(src));
    cr_assert(!ZSTD_isError(n), "%s", ZSTD_getErrorName(n));
    cr_assert_eq(ZSTD_getFrameContentSize(stored, n), ZSTD_CONTENTSIZE_UNKNOWN);
    /* a standard decoder would accept it ... */
    cr_assert_eq(ZSTD_decompress(out, sizeof(out), stored, n), sizeof(src));
    /* ... but a chunk frame must say its size up front */
    st = ck_codec_decompress(c, out, sizeof(src), stored, n, why, sizeof(why));
    cr_assert_eq(st, S3CKPT_ECORRUPT);
    cr_assert_not_null(strstr(why, "content size"), "%s", why);
    ZSTD_freeCCtx(cctx);
    ck_codec_free(c);
}

Test(codec, compress_reports_too_small_destination)
{
    unsigned char src[4096], dst[16];
    ck_codec *c = ck_codec_new(1);
    size_t n;

    cr_assert_not_null(c);
    fill_random(src, sizeof(src), 3);
    why[0] = '\0';
    n = ck_codec_compress(c, dst, sizeof(dst), src, sizeof(src), why, sizeof(why));
    cr_assert_eq(n, 0);
    cr_assert_not_null(strstr(why, "zstd"), "%s", why);
    ck_codec_free(c);
}

Test(codec, one_codec_handles_many_frames_in_sequence)
{
    unsigned char a[3000], b[5000], sa[8192], sb[8192], out[5000];
    ck_codec *c = ck_codec_new(3);
    size_t na, nb;

    cr_assert_not_null(c);
    fill_floats(a, sizeof(a));
    fill_random(b, sizeof(b), 9);
    na = ck_codec_compress(c, sa, sizeof(sa), a, sizeof(a), why, sizeof(why));
    nb = ck_codec_compress(c, sb, sizeof(sb), b, sizeof(b), why, sizeof(why));
    cr_assert(na && nb);
    /* a failed decompress must not poison the context for the next frame */
    cr_assert_eq(ck_codec_decompress(c, out, sizeof(a), sa, na - 1, why, sizeof(why)),
                 S3CKPT_ECORRUPT);
    cr_assert_eq(ck_codec_decompress(c, out, sizeof(b), sb, nb, why, sizeof(why)), S3CKPT_OK, "%s",
                 why);
    cr_assert_eq(memcmp(out, b, sizeof(b)), 0);
    cr_assert_eq(ck_codec_decompress(c, out, sizeof(a), sa, na, why, sizeof(why)), S3CKPT_OK, "%s",
                 why);
    cr_assert_eq(memcmp(out, a, sizeof(a)), 0);
    ck_codec_free(c);
}
