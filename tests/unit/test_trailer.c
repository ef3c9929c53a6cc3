/*
 * test_trailer - the chunk index at the end of every data object (docs/FORMAT.md, "Chunk
 * index"): its size formula, an encode/decode round trip, that it is a zstd skippable frame (so
 * frames + index is still a valid .zst stream), and that decode refuses malformed indexes read
 * back from a store.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "codec.h"
#include "digest.h"
#include "manifest.h"
#include "trailer.h"

#define CS ((uint64_t)64 << 10)

static void make_entry(ck_entry *e, uint64_t size)
{
    ck_digest_acc acc;
    uint64_t i;

    memset(e, 0, sizeof(*e));
    e->size = size;
    e->nchunks = ck_chunk_count(size, CS);
    e->chunks = calloc(e->nchunks + 1, sizeof(*e->chunks));
    cr_assert_not_null(e->chunks);
    cr_assert_eq(ck_digest_acc_init(&acc), 0);
    for (i = 0; i < e->nchunks; i++) {
        unsigned char *b = (unsigned char *)&e->chunks[i];
        size_t k;

        for (k = 0; k < sizeof(e->chunks[i]); k++)
            b[k] = (unsigned char)(i * 31 + k * 7 + 1);
        e->chunks[i].raw_len = ck_chunk_len(size, CS, i);
        e->chunks[i].stored_len = 100 + (uint32_t)i;
        ck_digest_bytes(&e->chunks[i].digest, &i, sizeof(i));
        ck_digest_acc_add(&acc, &e->chunks[i].digest);
    }
    ck_digest_acc_final(&acc, &e->digest);
}

static unsigned char *encode(const ck_entry *e, size_t *len)
{
    unsigned char *p;

    *len = (size_t)ck_trailer_size(e->nchunks);
    p = malloc(*len);
    cr_assert_not_null(p);
    ck_trailer_encode(e, CS, p);
    return p;
}

static uint32_t get32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Bytes per chunk record (raw_len, stored_len, digest and whatever the format adds). */
static size_t per_chunk(void)
{
    return (size_t)(ck_trailer_size(1) - ck_trailer_size(0));
}

Test(trailer, size_is_64_plus_a_fixed_record_per_chunk)
{
    cr_assert_eq(ck_trailer_size(0), 64);
    cr_assert_geq(per_chunk(), 24, "a record holds at least raw_len, stored_len and a digest");
    cr_assert_eq(ck_trailer_size(1000), 64 + 1000 * per_chunk());
}

Test(trailer, round_trip_keeps_chunks_size_and_digest)
{
    ck_entry e, d;
    uint64_t cs = 0, i;
    size_t len;
    unsigned char *p;

    make_entry(&e, 3 * CS + 5);
    p = encode(&e, &len);
    memset(&d, 0, sizeof(d));
    cr_assert_eq(ck_trailer_decode(p, len, &d, &cs), 0);
    cr_assert_eq(cs, CS);
    cr_assert_eq(d.size, e.size);
    cr_assert_eq(d.nchunks, 4);
    for (i = 0; i < d.nchunks; i++) {
        cr_assert_eq(d.chunks[i].raw_len, e.chunks[i].raw_len);
        cr_assert_eq(d.chunks[i].stored_len, e.chunks[i].stored_len);
        cr_assert(ck_digest_equal(&d.chunks[i].digest, &e.chunks[i].digest));
        /* every field of the chunk record survives, including any the format adds */
        cr_assert_eq(memcmp(&d.chunks[i], &e.chunks[i], sizeof(d.chunks[i])), 0, "chunk %llu",
                     (unsigned long long)i);
    }
    cr_assert(ck_digest_equal(&d.digest, &e.digest));
    free(d.chunks);
    free(e.chunks);
    free(p);
}

Test(trailer, empty_file_index_round_trips)
{
    ck_entry e, d;
    uint64_t cs = 0;
    size_t len;
    unsigned char *p;
    char hex[CK_DIGEST_HEX_LEN];

    make_entry(&e, 0);
    p = encode(&e, &len);
    cr_assert_eq(len, 64);
    memset(&d, 0, sizeof(d));
    cr_assert_eq(ck_trailer_decode(p, len, &d, &cs), 0);
    cr_assert_eq(d.size, 0);
    cr_assert_eq(d.nchunks, 0);
    ck_digest_to_hex(&d.digest, hex);
    cr_assert_str_eq(hex, "99aa06d3014798d86001c324468d497f");
    free(d.chunks);
    free(e.chunks);
    free(p);
}

Test(trailer, footer_announces_the_index_length)
{
    ck_entry e;
    size_t len;
    unsigned char *p;

    make_entry(&e, 2 * CS);
    p = encode(&e, &len);
    cr_assert_eq(ck_trailer_announced(p + len - CK_TRAILER_FOOTER), len);
    cr_assert_eq(memcmp(p + len - 4, "CKIX", 4), 0);
    free(e.chunks);
    free(p);
}

Test(trailer, footer_without_marker_announces_nothing)
{
    unsigned char f[CK_TRAILER_FOOTER] = {88, 0, 0, 0, 'C', 'K', 'I', 'Y'};

    cr_assert_eq(ck_trailer_announced(f), 0);
    memcpy(f + 4, "CKIX", 4);
    cr_assert_eq(ck_trailer_announced(f), 88);
    f[0] = 63; /* shorter than any index */
    cr_assert_eq(ck_trailer_announced(f), 0);
    f[0] = 0xff;
    f[1] = 0xff;
    f[2] = 0xff;
    f[3] = 0xff; /* beyond CK_TRAILER_MAX */
    cr_assert_eq(ck_trailer_announced(f), 0);
}

Test(trailer, is_a_zstd_skippable_frame)
{
    ck_entry e;
    size_t len;
    unsigned char *p;

    make_entry(&e, CS + 1);
    p = encode(&e, &len);
    cr_assert_eq(get32(p) & 0xFFFFFFF0u, 0x184D2A50u, "magic %08x", get32(p));
    cr_assert_eq(get32(p + 4), len - 8);
    cr_assert_eq(ZSTD_findFrameCompressedSize(p, len), len);
    free(e.chunks);
    free(p);
}

Test(trailer, object_of_frames_and_index_decompresses_with_plain_zstd)
{
    size_t n = (size_t)(2 * CS + 1000), off = 0, cap = 2 * ck_codec_bound((size_t)CS) + 4096, ilen,
           r;
    unsigned char *raw = malloc(n), *obj = malloc(cap + 64 * 1024), *back = malloc(n), *idx;
    ck_codec *c = ck_codec_new(1);
    char why[128];
    ck_digest_acc acc;
    ck_entry e;
    uint64_t i;

    cr_assert(raw && obj && back && c);
    for (i = 0; i < n; i++)
        raw[i] = (unsigned char)(i * 7 / 5);
    memset(&e, 0, sizeof(e));
    e.size = n;
    e.nchunks = ck_chunk_count(n, CS);
    e.chunks = calloc(e.nchunks, sizeof(*e.chunks));
    cr_assert_eq(ck_digest_acc_init(&acc), 0);
    for (i = 0; i < e.nchunks; i++) {
        uint32_t len = ck_chunk_len(n, CS, i);
        size_t s = ck_codec_compress(c, obj + off, cap - off, raw + i * CS, len, CK_FILTER_NONE,
                                     CK_EFFORT_FULL, why, sizeof(why));

        cr_assert_gt(s, 0, "%s", why);
        e.chunks[i].raw_len = len;
        e.chunks[i].stored_len = (uint32_t)s;
        ck_digest_bytes(&e.chunks[i].digest, raw + i * CS, len);
        ck_digest_acc_add(&acc, &e.chunks[i].digest);
        off += s;
    }
    ck_digest_acc_final(&acc, &e.digest);
    idx = encode(&e, &ilen);
    memcpy(obj + off, idx, ilen);
    off += ilen;
    r = ZSTD_decompress(back, n, obj, off);
    cr_assert(!ZSTD_isError(r), "%s", ZSTD_getErrorName(r));
    cr_assert_eq(r, n);
    cr_assert_eq(memcmp(back, raw, n), 0);
    free(idx);
    free(e.chunks);
    ck_codec_free(c);
    free(back);
    free(obj);
    free(raw);
}

/* Encodes a 3-chunk index, lets `damage` change it, and expects decode to refuse it. */
static void expect_refused(void (*damage)(unsigned char *p, size_t *len))
{
    ck_entry e, d;
    uint64_t cs = 0;
    size_t len;
    unsigned char *p;

    make_entry(&e, 2 * CS + 1);
    p = encode(&e, &len);
    p = realloc(p, len + 64);
    cr_assert_not_null(p);
    damage(p, &len);
    memset(&d, 0, sizeof(d));
    cr_assert_eq(ck_trailer_decode(p, len, &d, &cs), -1);
    free(d.chunks);
    free(e.chunks);
    free(p);
}

static void cut_to_63(unsigned char *p, size_t *len)
{
    (void)p;
    *len = 63;
}

static void bad_magic(unsigned char *p, size_t *len)
{
    (void)len;
    p[0] ^= 1;
}

static void bad_payload_len(unsigned char *p, size_t *len)
{
    (void)len;
    p[4] ^= 1;
}

static void bad_tag(unsigned char *p, size_t *len)
{
    (void)len;
    memcpy(p + 8, "S3CKIDX2", 8);
}

static void bad_footer_len(unsigned char *p, size_t *len)
{
    p[*len - 8] ^= 1;
}

static void bad_footer_marker(unsigned char *p, size_t *len)
{
    p[*len - 1] = 'Y';
}

static void more_chunks_than_fit(unsigned char *p, size_t *len)
{
    (void)len;
    p[32] = 4; /* nchunks 4 in an index sized for 3 */
}

static void huge_chunk_count(unsigned char *p, size_t *len)
{
    (void)len;
    memset(p + 32, 0xff, 8); /* nchunks 2^64-1: the size must not wrap around */
}

static void truncated_by_one_chunk(unsigned char *p, size_t *len)
{
    /* drop the last chunk record but keep header and footer self-consistent */
    size_t nlen = *len - per_chunk();

    memmove(p + nlen - 24, p + *len - 24, 24); /* file digest + footer */
    p[4] = (unsigned char)(nlen - 8);
    p[5] = (unsigned char)((nlen - 8) >> 8);
    p[nlen - 8] = (unsigned char)nlen;
    p[nlen - 7] = (unsigned char)(nlen >> 8);
    *len = nlen;
}

static void unknown_filter(unsigned char *p, size_t *len)
{
    (void)len;
    p[20] = 3; /* the filter word: 0, 2, 4, 0x12 or 0x14 */
}

Test(trailer, filter_round_trips_in_the_index)
{
    static const ck_filter filters[] = {CK_FILTER_NONE, CK_FILTER_BYTES2, CK_FILTER_BYTES4,
                                        CK_FILTER_FLOAT2, CK_FILTER_FLOAT4};
    ck_entry e, d;
    uint64_t cs = 0;
    size_t len, i;
    unsigned char *p;

    for (i = 0; i < sizeof(filters) / sizeof(filters[0]); i++) {
        make_entry(&e, 2 * CS);
        e.filter = filters[i];
        p = encode(&e, &len);
        cr_assert_eq(get32(p + 20), (uint32_t)filters[i]);
        memset(&d, 0, sizeof(d));
        cr_assert_eq(ck_trailer_decode(p, len, &d, &cs), 0);
        cr_assert_eq(d.filter, filters[i]);
        free(d.chunks);
        free(e.chunks);
        free(p);
    }
}

Test(trailer, decode_refuses_unknown_filter)
{
    expect_refused(unknown_filter);
}

Test(trailer, decode_refuses_index_shorter_than_64_bytes)
{
    expect_refused(cut_to_63);
}

Test(trailer, decode_refuses_wrong_frame_magic)
{
    expect_refused(bad_magic);
}

Test(trailer, decode_refuses_wrong_payload_length)
{
    expect_refused(bad_payload_len);
}

Test(trailer, decode_refuses_unknown_index_tag)
{
    expect_refused(bad_tag);
}

Test(trailer, decode_refuses_footer_length_mismatch)
{
    expect_refused(bad_footer_len);
}

Test(trailer, decode_refuses_missing_footer_marker)
{
    expect_refused(bad_footer_marker);
}

Test(trailer, decode_refuses_chunk_count_not_matching_length)
{
    expect_refused(more_chunks_than_fit);
    expect_refused(truncated_by_one_chunk);
}

Test(trailer, decode_refuses_chunk_count_that_would_overflow)
{
    expect_refused(huge_chunk_count);
}
