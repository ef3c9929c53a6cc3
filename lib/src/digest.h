/* digest - chunk and file digests (XXH3-128). The only xxhash user. */
#ifndef CK_DIGEST_H
#define CK_DIGEST_H

#include <stddef.h>
#include <stdint.h>

#define CK_DIGEST_LEN 16
#define CK_DIGEST_HEX_LEN (2 * CK_DIGEST_LEN + 1)
#define CK_DIGEST_NAME "xxh3-128"

typedef struct ck_digest {
    unsigned char b[CK_DIGEST_LEN]; /* canonical (big-endian) form */
} ck_digest;

/* Digest of a chunk's raw bytes. */
void ck_digest_bytes(ck_digest *out, const void *p, size_t n);

/* Whole-file digest, derived from the chunk digests in order (so it can be computed in
 * parallel): XXH3-128 over the concatenated canonical chunk digests. */
typedef struct ck_digest_acc {
    void *state; /* XXH3_state_t, opaque here */
} ck_digest_acc;
int ck_digest_acc_init(ck_digest_acc *acc); /* 0 ok, -1 out of memory */
void ck_digest_acc_add(ck_digest_acc *acc, const ck_digest *chunk);
void ck_digest_acc_final(ck_digest_acc *acc, ck_digest *out); /* also frees the state */
void ck_digest_acc_cleanup(ck_digest_acc *acc);

void ck_digest_to_hex(const ck_digest *d, char hex[CK_DIGEST_HEX_LEN]);
/* Exactly 32 lowercase or uppercase hex digits; 0 ok, -1 otherwise. */
int ck_digest_from_hex(ck_digest *d, const char *hex);
int ck_digest_equal(const ck_digest *a, const ck_digest *b);

/* XXH3-64 of small objects (used as the file store's ETag). */
uint64_t ck_digest64(const void *p, size_t n);

#endif
