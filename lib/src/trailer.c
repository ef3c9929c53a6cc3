/*
 * trailer - layout (all integers little-endian):
 *   u32 0x184D2A5E  u32 payload_len          zstd skippable frame header (zstd -d skips it)
 *   "S3CKIDX1"  u32 chunk_size  u32 0  u64 size  u64 nchunks
 *   nchunks x { u32 raw_len  u32 stored_len  16-byte chunk digest  u64 XXH3-64 of the frame }
 *   16-byte file digest
 *   u32 trailer_len  "CKIX"                  so a reader can find the start from the end
 * The manifest stays the only thing a pull trusts; the trailer only lets a push skip work.
 */
#include "trailer.h"

#include <stdlib.h>
#include <string.h>

#define SKIPPABLE_MAGIC 0x184D2A5Eu
#define HEAD 40 /* frame header 8 + magic 8 + chunk_size 4 + flags 4 + size 8 + nchunks 8 */
#define PER_CHUNK 32

static void put32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)v;
    p[1] = (unsigned char)(v >> 8);
    p[2] = (unsigned char)(v >> 16);
    p[3] = (unsigned char)(v >> 24);
}

static void put64(unsigned char *p, uint64_t v)
{
    put32(p, (uint32_t)v);
    put32(p + 4, (uint32_t)(v >> 32));
}

static uint32_t get32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t get64(const unsigned char *p)
{
    return get32(p) | (uint64_t)get32(p + 4) << 32;
}

uint64_t ck_trailer_size(uint64_t nchunks)
{
    return HEAD + nchunks * PER_CHUNK + CK_DIGEST_LEN + CK_TRAILER_FOOTER;
}

void ck_trailer_encode(const ck_entry *e, uint64_t chunk_size, unsigned char *out)
{
    uint64_t len = ck_trailer_size(e->nchunks), i;
    unsigned char *p = out;

    put32(p, SKIPPABLE_MAGIC);
    put32(p + 4, (uint32_t)(len - 8));
    memcpy(p + 8, "S3CKIDX1", 8);
    put32(p + 16, (uint32_t)chunk_size);
    put32(p + 20, (uint32_t)e->filter);
    put64(p + 24, e->size);
    put64(p + 32, e->nchunks);
    p += HEAD;
    for (i = 0; i < e->nchunks; i++, p += PER_CHUNK) {
        put32(p, e->chunks[i].raw_len);
        put32(p + 4, e->chunks[i].stored_len);
        memcpy(p + 8, e->chunks[i].digest.b, CK_DIGEST_LEN);
        put64(p + 24, e->chunks[i].frame_hash);
    }
    memcpy(p, e->digest.b, CK_DIGEST_LEN);
    put32(p + CK_DIGEST_LEN, (uint32_t)len);
    memcpy(p + CK_DIGEST_LEN + 4, "CKIX", 4);
}

uint64_t ck_trailer_announced(const unsigned char footer[CK_TRAILER_FOOTER])
{
    uint64_t len = get32(footer);

    if (memcmp(footer + 4, "CKIX", 4) || len < ck_trailer_size(0) || len > CK_TRAILER_MAX)
        return 0;
    return len;
}

int ck_trailer_decode(const unsigned char *p, size_t len, ck_entry *e, uint64_t *chunk_size)
{
    uint64_t n, i;

    if (len < ck_trailer_size(0) || len > CK_TRAILER_MAX || get32(p) != SKIPPABLE_MAGIC ||
        get32(p + 4) != len - 8 || memcmp(p + 8, "S3CKIDX1", 8) ||
        ck_trailer_announced(p + len - CK_TRAILER_FOOTER) != len)
        return -1;
    n = get64(p + 32);
    if (n > (len - ck_trailer_size(0)) / PER_CHUNK || ck_trailer_size(n) != len)
        return -1;
    if (!ck_filter_valid(get32(p + 20)))
        return -1;
    *chunk_size = get32(p + 16);
    e->filter = (ck_filter)get32(p + 20);
    e->size = get64(p + 24);
    e->nchunks = n;
    e->chunks = calloc(n + 1, sizeof(*e->chunks));
    if (!e->chunks)
        return -1;
    for (i = 0; i < n; i++) {
        const unsigned char *c = p + HEAD + i * PER_CHUNK;

        e->chunks[i].raw_len = get32(c);
        e->chunks[i].stored_len = get32(c + 4);
        memcpy(e->chunks[i].digest.b, c + 8, CK_DIGEST_LEN);
        e->chunks[i].frame_hash = get64(c + 24);
    }
    memcpy(e->digest.b, p + HEAD + n * PER_CHUNK, CK_DIGEST_LEN);
    return 0;
}
