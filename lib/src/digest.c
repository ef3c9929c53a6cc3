/*
 * digest - XXH3-128 for chunk digests. Chosen over SHA-256/MD5 because it runs at memory speed
 * (see shared/notes/machine-limits.md: SHA-256 costs ~0.9 s/GB, XXH3 ~0.03 s/GB); it guards
 * against corruption, not against an attacker who can write the store (that attacker could
 * rewrite the manifest too). xxhash.h is inlined because Debian's shared libxxhash is built
 * without AVX2.
 */
#define XXH_INLINE_ALL
#include <xxhash.h>

#include "buf.h"
#include "digest.h"

#include <string.h>

void ck_digest_bytes(ck_digest *out, const void *p, size_t n)
{
    XXH128_canonical_t c;

    XXH128_canonicalFromHash(&c, XXH3_128bits(p, n));
    memcpy(out->b, c.digest, CK_DIGEST_LEN);
}

int ck_digest_acc_init(ck_digest_acc *acc)
{
    XXH3_state_t *s = XXH3_createState();

    acc->state = s;
    if (!s)
        return -1;
    XXH3_128bits_reset(s);
    return 0;
}

void ck_digest_acc_add(ck_digest_acc *acc, const ck_digest *chunk)
{
    XXH3_128bits_update(acc->state, chunk->b, CK_DIGEST_LEN);
}

void ck_digest_acc_final(ck_digest_acc *acc, ck_digest *out)
{
    XXH128_canonical_t c;

    XXH128_canonicalFromHash(&c, XXH3_128bits_digest(acc->state));
    memcpy(out->b, c.digest, CK_DIGEST_LEN);
    ck_digest_acc_cleanup(acc);
}

void ck_digest_acc_cleanup(ck_digest_acc *acc)
{
    XXH3_freeState(acc->state);
    acc->state = NULL;
}

void ck_digest_to_hex(const ck_digest *d, char hex[CK_DIGEST_HEX_LEN])
{
    static const char digits[] = "0123456789abcdef";
    size_t i;

    for (i = 0; i < CK_DIGEST_LEN; i++) {
        hex[2 * i] = digits[d->b[i] >> 4];
        hex[2 * i + 1] = digits[d->b[i] & 15];
    }
    hex[2 * CK_DIGEST_LEN] = '\0';
}

int ck_digest_from_hex(ck_digest *d, const char *hex)
{
    size_t i;

    for (i = 0; i < CK_DIGEST_LEN; i++) {
        int hi = ck_hexval(hex[2 * i]), lo;

        if (hi < 0)
            return -1;
        lo = ck_hexval(hex[2 * i + 1]);
        if (lo < 0)
            return -1;
        d->b[i] = (unsigned char)(hi << 4 | lo);
    }
    return hex[2 * CK_DIGEST_LEN] == '\0' ? 0 : -1;
}

int ck_digest_equal(const ck_digest *a, const ck_digest *b)
{
    return memcmp(a->b, b->b, CK_DIGEST_LEN) == 0;
}

uint64_t ck_digest64(const void *p, size_t n)
{
    return XXH3_64bits(p, n);
}
