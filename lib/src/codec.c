/*
 * codec - zstd framing of chunks. Every chunk is an independent frame so chunks can be
 * compressed, fetched, verified and decompressed in parallel and in any order; the frames of
 * one file concatenated form a valid .zst stream. Stored input is untrusted: a frame must
 * declare its content size, match the manifest, and never write past the declared length.
 */
#include "codec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

struct ck_codec {
    ZSTD_CCtx *cctx;
    ZSTD_DCtx *dctx;
};

size_t ck_codec_bound(size_t n)
{
    return ZSTD_compressBound(n);
}

ck_codec *ck_codec_new(int level)
{
    ck_codec *c = calloc(1, sizeof(*c));

    if (!c)
        return NULL;
    c->cctx = ZSTD_createCCtx();
    c->dctx = ZSTD_createDCtx();
    if (!c->cctx || !c->dctx)
        goto fail;
    if (ZSTD_isError(ZSTD_CCtx_setParameter(c->cctx, ZSTD_c_compressionLevel, level)) ||
        ZSTD_isError(ZSTD_CCtx_setParameter(c->cctx, ZSTD_c_checksumFlag, 1)) ||
        ZSTD_isError(ZSTD_CCtx_setParameter(c->cctx, ZSTD_c_contentSizeFlag, 1)))
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
    ZSTD_freeCCtx(c->cctx);
    ZSTD_freeDCtx(c->dctx);
    free(c);
}

size_t ck_codec_compress(ck_codec *c, void *dst, size_t dst_cap, const void *src, size_t n,
                         char *why, size_t why_len)
{
    size_t r = ZSTD_compress2(c->cctx, dst, dst_cap, src, n);

    if (ZSTD_isError(r)) {
        snprintf(why, why_len, "zstd: %s", ZSTD_getErrorName(r));
        return 0;
    }
    return r;
}

s3ckpt_status ck_codec_decompress(ck_codec *c, void *dst, size_t raw_len, const void *src,
                                  size_t stored_len, char *why, size_t why_len)
{
    const unsigned char *s = src;
    unsigned long long declared;
    size_t frame_len, r;

    if (stored_len < 4 ||
        (s[0] | s[1] << 8 | s[2] << 16 | (unsigned long)s[3] << 24) != ZSTD_MAGICNUMBER) {
        snprintf(why, why_len, "not a zstd frame");
        return S3CKPT_ECORRUPT;
    }
    declared = ZSTD_getFrameContentSize(src, stored_len);
    if (declared == ZSTD_CONTENTSIZE_ERROR || declared == ZSTD_CONTENTSIZE_UNKNOWN) {
        snprintf(why, why_len, "frame header is damaged or lacks a content size");
        return S3CKPT_ECORRUPT;
    }
    if (declared != raw_len) {
        snprintf(why, why_len, "frame declares %llu bytes, manifest says %zu", declared, raw_len);
        return S3CKPT_ECORRUPT;
    }
    frame_len = ZSTD_findFrameCompressedSize(src, stored_len);
    if (ZSTD_isError(frame_len)) {
        snprintf(why, why_len, "truncated or damaged frame (%s)", ZSTD_getErrorName(frame_len));
        return S3CKPT_ECORRUPT;
    }
    if (frame_len != stored_len) {
        snprintf(why, why_len, "frame is %zu bytes, manifest says %zu", frame_len, stored_len);
        return S3CKPT_ECORRUPT;
    }
    r = ZSTD_decompressDCtx(c->dctx, dst, raw_len, src, stored_len);
    if (ZSTD_isError(r)) {
        snprintf(why, why_len, "zstd: %s", ZSTD_getErrorName(r));
        return S3CKPT_ECORRUPT;
    }
    if (r != raw_len) {
        snprintf(why, why_len, "frame decompressed to %zu bytes, manifest says %zu", r, raw_len);
        return S3CKPT_ECORRUPT;
    }
    return S3CKPT_OK;
}
