/*
 * test_digest - XXH3-128 chunk digests and the whole-file digest derived from them.
 *
 * Known answers were computed independently with xxhsum 0.8.1 (Debian package `xxhash`), which
 * prints XXH3-128 in canonical (big-endian) form, the form ck_digest stores:
 *   printf '' | xxhsum -H2                              -> 99aa06d3014798d86001c324468d497f
 *   printf 'a' | xxhsum -H2                             -> a96faf705af16834e6c632b61e964e1f
 *   printf 'abc' | xxhsum -H2                           -> 06b05ab6733a618578af5f94892f3950
 *   printf 'The quick brown fox jumps over the lazy dog' | xxhsum -H2
 *                                                       -> ddd650205ca3e7fa24a1cc2e3a8a7651
 *   head -c 1000 /dev/zero | xxhsum -H2                 -> 3fb94aea6d09b97224c1ea6074dd588c
 *   python3 -c "import sys; sys.stdout.buffer.write(bytes(i%251 for i in range(100000)))" \
 *     | xxhsum -H2                                      -> 54182c58bbb1337c42c23aeead96750d
 * File digests (XXH3-128 over the concatenated canonical chunk digests):
 *   python3 -c "import sys; sys.stdout.buffer.write(bytes.fromhex(
 *     'a96faf705af16834e6c632b61e964e1f06b05ab6733a618578af5f94892f3950'))" | xxhsum -H2
 *                                                       -> c14cabe9e34241398c533e1487e18620
 *   same with the two digests swapped                   -> a4912baa5fff0ef7e484453993788bd2
 * XXH3-64 (ck_digest64):
 *   printf '' | xxhsum -H3                              -> 2d06800538d394c2
 *   printf 'abc' | xxhsum -H3                           -> 78af5f94892f3950
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "digest.h"

static void assert_hex_of(const void *p, size_t n, const char *want)
{
    ck_digest d;
    char hex[CK_DIGEST_HEX_LEN];

    ck_digest_bytes(&d, p, n);
    ck_digest_to_hex(&d, hex);
    cr_assert_str_eq(hex, want, "XXH3-128 of %zu bytes", n);
}

static void file_digest(ck_digest *out, const ck_digest *chunks, size_t n)
{
    ck_digest_acc acc;
    size_t i;

    cr_assert_eq(ck_digest_acc_init(&acc), 0);
    for (i = 0; i < n; i++)
        ck_digest_acc_add(&acc, &chunks[i]);
    ck_digest_acc_final(&acc, out);
    cr_assert_null(acc.state, "final must free the state");
}

Test(digest, name_is_xxh3_128)
{
    cr_assert_str_eq(CK_DIGEST_NAME, "xxh3-128");
    cr_assert_eq(CK_DIGEST_LEN, 16);
    cr_assert_eq(CK_DIGEST_HEX_LEN, 33);
}

Test(digest, xxh3_128_of_empty_input)
{
    assert_hex_of("", 0, "99aa06d3014798d86001c324468d497f");
}

Test(digest, xxh3_128_of_short_inputs)
{
    assert_hex_of("a", 1, "a96faf705af16834e6c632b61e964e1f");
    assert_hex_of("abc", 3, "06b05ab6733a618578af5f94892f3950");
    assert_hex_of("The quick brown fox jumps over the lazy dog", 43,
                  "ddd650205ca3e7fa24a1cc2e3a8a7651");
}

Test(digest, xxh3_128_of_1000_zero_bytes)
{
    static const unsigned char zeros[1000];

    assert_hex_of(zeros, sizeof(zeros), "3fb94aea6d09b97224c1ea6074dd588c");
}

Test(digest, xxh3_128_of_100000_byte_pattern)
{
    size_t n = 100000, i;
    unsigned char *p = malloc(n);

    cr_assert_not_null(p);
    for (i = 0; i < n; i++)
        p[i] = (unsigned char)(i % 251);
    assert_hex_of(p, n, "54182c58bbb1337c42c23aeead96750d");
    /* past 240 bytes XXH3-64 ends in the same merge as the low half of XXH3-128, so the same
     * xxhsum answer checks the 64-bit long-input path (the AVX2 one where the CPU has it) */
    cr_assert_eq(ck_digest64(p, n), 0x42c23aeead96750dull);
    free(p);
}

Test(digest, xxh3_64_known_answers)
{
    cr_assert_eq(ck_digest64("", 0), 0x2d06800538d394c2ull);
    cr_assert_eq(ck_digest64("abc", 3), 0x78af5f94892f3950ull);
}

Test(digest, hex_round_trip)
{
    ck_digest d, back;
    char hex[CK_DIGEST_HEX_LEN];
    size_t i;

    for (i = 0; i < CK_DIGEST_LEN; i++)
        d.b[i] = (unsigned char)(i * 17 + 3);
    ck_digest_to_hex(&d, hex);
    cr_assert_eq(strlen(hex), 32);
    cr_assert_str_eq(hex, "031425364758697a8b9cadbecfe0f102");
    memset(&back, 0, sizeof(back));
    cr_assert_eq(ck_digest_from_hex(&back, hex), 0);
    cr_assert(ck_digest_equal(&d, &back));
}

Test(digest, from_hex_accepts_uppercase)
{
    ck_digest lower, upper;

    cr_assert_eq(ck_digest_from_hex(&lower, "99aa06d3014798d86001c324468d497f"), 0);
    cr_assert_eq(ck_digest_from_hex(&upper, "99AA06D3014798D86001C324468D497F"), 0);
    cr_assert(ck_digest_equal(&lower, &upper));
    cr_assert_eq(lower.b[0], 0x99);
    cr_assert_eq(lower.b[15], 0x7f);
}

Test(digest, from_hex_rejects_31_digits)
{
    ck_digest d;

    cr_assert_eq(ck_digest_from_hex(&d, "99aa06d3014798d86001c324468d497"), -1);
}

Test(digest, from_hex_rejects_33_digits)
{
    ck_digest d;

    cr_assert_eq(ck_digest_from_hex(&d, "99aa06d3014798d86001c324468d497f0"), -1);
}

Test(digest, from_hex_rejects_non_hex)
{
    ck_digest d;

    cr_assert_eq(ck_digest_from_hex(&d, "99aa06d3014798d86001c324468d497g"), -1);
    cr_assert_eq(ck_digest_from_hex(&d, "g9aa06d3014798d86001c324468d497f"), -1);
    cr_assert_eq(ck_digest_from_hex(&d, "99aa06d3014798d8 001c324468d497f"), -1);
    cr_assert_eq(ck_digest_from_hex(&d, "0x99aa06d3014798d86001c324468d49"), -1);
    cr_assert_eq(ck_digest_from_hex(&d, ""), -1);
}

Test(digest, equal_compares_all_bytes)
{
    ck_digest a, b;

    ck_digest_bytes(&a, "x", 1);
    b = a;
    cr_assert(ck_digest_equal(&a, &b));
    b.b[15] ^= 1;
    cr_assert_not(ck_digest_equal(&a, &b));
}

Test(digest, file_digest_of_zero_chunks_is_deterministic)
{
    ck_digest a, b;
    char hex[CK_DIGEST_HEX_LEN];

    file_digest(&a, NULL, 0);
    file_digest(&b, NULL, 0);
    cr_assert(ck_digest_equal(&a, &b));
    ck_digest_to_hex(&a, hex);
    /* no chunk digests: XXH3-128 of the empty input */
    cr_assert_str_eq(hex, "99aa06d3014798d86001c324468d497f");
}

Test(digest, file_digest_is_xxh3_128_of_concatenated_chunk_digests)
{
    ck_digest chunks[2], f;
    char hex[CK_DIGEST_HEX_LEN];

    ck_digest_bytes(&chunks[0], "a", 1);
    ck_digest_bytes(&chunks[1], "abc", 3);
    file_digest(&f, chunks, 2);
    ck_digest_to_hex(&f, hex);
    cr_assert_str_eq(hex, "c14cabe9e34241398c533e1487e18620");
}

Test(digest, order_of_chunk_digests_matters)
{
    ck_digest ab[2], ba[2], f1, f2;
    char hex[CK_DIGEST_HEX_LEN];

    ck_digest_bytes(&ab[0], "a", 1);
    ck_digest_bytes(&ab[1], "abc", 3);
    ba[0] = ab[1];
    ba[1] = ab[0];
    file_digest(&f1, ab, 2);
    file_digest(&f2, ba, 2);
    cr_assert_not(ck_digest_equal(&f1, &f2));
    ck_digest_to_hex(&f2, hex);
    cr_assert_str_eq(hex, "a4912baa5fff0ef7e484453993788bd2");
}

Test(digest, file_digest_of_one_chunk_differs_from_the_chunk_digest)
{
    ck_digest c, f;

    ck_digest_bytes(&c, "abc", 3);
    file_digest(&f, &c, 1);
    cr_assert_not(ck_digest_equal(&c, &f));
}

Test(digest, acc_cleanup_after_init_frees_state)
{
    ck_digest_acc acc;

    cr_assert_eq(ck_digest_acc_init(&acc), 0);
    cr_assert_not_null(acc.state);
    ck_digest_acc_cleanup(&acc);
    cr_assert_null(acc.state);
    ck_digest_acc_cleanup(&acc); /* twice is harmless */
}
