/* checksum - the integrity values S3 asks for on the wire: MD5 (Content-MD5, single-part
 * ETags), CRC32C (x-amz-checksum-crc32c), and their text forms (base64, hex). Pure: no I/O. */
#ifndef CK_CHECKSUM_H
#define CK_CHECKSUM_H

#include <stddef.h>
#include <stdint.h>

#include "s3ckpt.h"

#define CK_MD5_LEN 16
/* Bytes ck_base64 needs for n input bytes, NUL included. */
#define CK_BASE64_LEN(n) (4 * (((n) + 2) / 3) + 1)

/* Incremental MD5 (OpenSSL EVP). init, update*, final; cleanup is safe at any point after init
 * (also after final, and on a zeroed struct) and releases what final has not. */
typedef struct ck_md5 {
    void *ctx;
} ck_md5;

/* S3CKPT_ENOMEM when the context cannot be allocated (m->ctx is then NULL). */
s3ckpt_status ck_md5_init(ck_md5 *m);
void ck_md5_update(ck_md5 *m, const void *p, size_t n);
/* Writes the digest and releases the context. */
void ck_md5_final(ck_md5 *m, unsigned char out[CK_MD5_LEN]);
void ck_md5_cleanup(ck_md5 *m);
/* One-shot MD5. On a libcrypto failure (allocation) out is all zeros, which no server accepts
 * as the MD5 of real data, so the failure surfaces as a BadDigest rather than as bad data. */
void ck_md5_bytes(const void *p, size_t n, unsigned char out[CK_MD5_LEN]);

/* CRC32C (Castagnoli, reflected, as S3's x-amz-checksum-crc32c): crc = 0 to start, pass the
 * previous result to continue, so ck_crc32c(ck_crc32c(0, a, x), b, y) == CRC of a||b.
 * Uses the SSE4.2 crc32 instruction when the CPU has it, a slicing-by-8 table otherwise. */
uint32_t ck_crc32c(uint32_t crc, const void *p, size_t n);
/* The table path, same contract; exposed so tests can check the two paths agree. */
uint32_t ck_crc32c_sw(uint32_t crc, const void *p, size_t n);
/* 1 when ck_crc32c uses the hardware instruction on this CPU. */
int ck_crc32c_hw_available(void);

/* Base64 (standard alphabet, padded) of n bytes into out, NUL-terminated; returns the length
 * without the NUL. When out_len < CK_BASE64_LEN(n) nothing is encoded, out is "" (if
 * out_len > 0) and 0 is returned. */
size_t ck_base64(const unsigned char *p, size_t n, char *out, size_t out_len);
/* Lowercase hex of n bytes into out, which holds 2n+1 bytes; NUL-terminated. */
void ck_hex(const unsigned char *p, size_t n, char *out);

#endif
