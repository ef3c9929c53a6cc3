/*
 * checksum - MD5, CRC32C, base64 and hex: the values S3 wants in Content-MD5 and
 * x-amz-checksum-crc32c, and the text forms they travel in.
 *
 * MD5 comes from OpenSSL's EVP (the library is linked anyway for SigV4, and its MD5 is
 * assembler-tuned). CRC32C is our own: libcrypto has none, and a checksum computed over every
 * uploaded byte must not cost more than the upload, so it uses the SSE4.2 crc32 instruction
 * (8 bytes per instruction) when the CPU has one and a slicing-by-8 table (8 bytes per 8
 * lookups) otherwise. The instruction has a latency of 3 cycles and a throughput of 1, so long
 * buffers run as three independent streams whose CRCs are joined by a multiplication mod P
 * (zlib's crc32_combine), three times the speed of one stream. The table and the join constant
 * are built once, on first use, under pthread_once; after that everything here is reentrant.
 */
#include "checksum.h"

#include <openssl/evp.h>
#include <pthread.h>
#include <string.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define CK_CRC32C_X86 1
#include <nmmintrin.h>
#endif

#define CRC32C_POLY 0x82F63B78u /* Castagnoli polynomial, bit-reflected */

/* ---- MD5 ------------------------------------------------------------------------------- */

s3ckpt_status ck_md5_init(ck_md5 *m)
{
    EVP_MD_CTX *c = EVP_MD_CTX_new();

    m->ctx = NULL;
    if (!c)
        return S3CKPT_ENOMEM;
    if (!EVP_DigestInit_ex(c, EVP_md5(), NULL)) {
        EVP_MD_CTX_free(c);
        return S3CKPT_ENOMEM;
    }
    m->ctx = c;
    return S3CKPT_OK;
}

void ck_md5_update(ck_md5 *m, const void *p, size_t n)
{
    /* A failed update drops the context, so final yields the all-zero digest instead of the
     * digest of a prefix. */
    if (m->ctx && n && !EVP_DigestUpdate(m->ctx, p, n))
        ck_md5_cleanup(m);
}

void ck_md5_final(ck_md5 *m, unsigned char out[CK_MD5_LEN])
{
    unsigned int len = 0;

    if (!m->ctx || !EVP_DigestFinal_ex(m->ctx, out, &len) || len != CK_MD5_LEN)
        memset(out, 0, CK_MD5_LEN);
    ck_md5_cleanup(m);
}

void ck_md5_cleanup(ck_md5 *m)
{
    EVP_MD_CTX_free(m->ctx);
    m->ctx = NULL;
}

void ck_md5_bytes(const void *p, size_t n, unsigned char out[CK_MD5_LEN])
{
    unsigned int len = 0;

    if (!EVP_Digest(p, n, out, &len, EVP_md5(), NULL) || len != CK_MD5_LEN)
        memset(out, 0, CK_MD5_LEN);
}

/* ---- CRC32C ---------------------------------------------------------------------------- */

static uint32_t crc_table[8][256];
static pthread_once_t crc_table_once = PTHREAD_ONCE_INIT;

/* crc_table[0] is the classic byte table; crc_table[k][b] advances the CRC of byte b by k
 * further zero bytes, so eight lookups consume eight bytes at once. */
static void crc_table_build(void)
{
    uint32_t i, k, c;

    for (i = 0; i < 256; i++) {
        c = i;
        for (k = 0; k < 8; k++)
            c = c & 1 ? (c >> 1) ^ CRC32C_POLY : c >> 1;
        crc_table[0][i] = c;
    }
    for (i = 0; i < 256; i++) {
        for (k = 1; k < 8; k++)
            crc_table[k][i] = (crc_table[k - 1][i] >> 8) ^ crc_table[0][crc_table[k - 1][i] & 0xff];
    }
}

uint32_t ck_crc32c_sw(uint32_t crc, const void *buf, size_t n)
{
    const unsigned char *p = buf;
    uint32_t c = ~crc;

    pthread_once(&crc_table_once, crc_table_build);
    while (n >= 8) {
        /* assembled byte by byte: any alignment, any endianness */
        uint32_t lo = c ^ ((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
                           (uint32_t)p[3] << 24);

        c = crc_table[7][lo & 0xff] ^ crc_table[6][(lo >> 8) & 0xff] ^
            crc_table[5][(lo >> 16) & 0xff] ^ crc_table[4][lo >> 24] ^ crc_table[3][p[4]] ^
            crc_table[2][p[5]] ^ crc_table[1][p[6]] ^ crc_table[0][p[7]];
        p += 8;
        n -= 8;
    }
    while (n--)
        c = (c >> 8) ^ crc_table[0][(c ^ *p++) & 0xff];
    return ~c;
}

#ifdef CK_CRC32C_X86
#define CRC_STREAM 8192 /* bytes per stream per round: the join costs ~1 % of a round */

static uint32_t crc_join; /* x^(8 * CRC_STREAM) mod P: advances a CRC register by a stream */
static pthread_once_t crc_join_once = PTHREAD_ONCE_INIT;

/* a * b mod P, both bit-reflected (zlib's multmodp) */
static uint32_t crc_multmodp(uint32_t a, uint32_t b)
{
    uint32_t m = 1u << 31, p = 0;

    for (;;) {
        if (a & m) {
            p ^= b;
            if ((a & (m - 1)) == 0)
                break;
        }
        m >>= 1;
        b = b & 1 ? (b >> 1) ^ CRC32C_POLY : b >> 1;
    }
    return p;
}

static void crc_join_build(void)
{
    uint32_t p = 1u << 30; /* x^1 */
    int i;

    for (i = 0; i < 16; i++) /* x^(2^16) = x^(8 * 8192) */
        p = crc_multmodp(p, p);
    crc_join = p;
}

__attribute__((target("sse4.2"))) static uint32_t crc32c_hw(uint32_t crc, const void *buf, size_t n)
{
    const unsigned char *p = buf;
    uint64_t c = ~crc;

    while (n && ((uintptr_t)p & 7)) {
        c = _mm_crc32_u8((uint32_t)c, *p++);
        n--;
    }
    if (n >= 3 * CRC_STREAM)
        pthread_once(&crc_join_once, crc_join_build);
    while (n >= 3 * CRC_STREAM) {
        uint64_t c1 = 0, c2 = 0, w0, w1, w2;
        size_t i;

        for (i = 0; i < CRC_STREAM; i += 8) {
            memcpy(&w0, p + i, 8);
            memcpy(&w1, p + CRC_STREAM + i, 8);
            memcpy(&w2, p + 2 * CRC_STREAM + i, 8);
            c = _mm_crc32_u64(c, w0);
            c1 = _mm_crc32_u64(c1, w1);
            c2 = _mm_crc32_u64(c2, w2);
        }
        /* the register after stream 0 then 1 = (after 0) * x^(8 * CRC_STREAM) ^ (1 from 0) */
        c = crc_multmodp(crc_join, (uint32_t)c) ^ (uint32_t)c1;
        c = crc_multmodp(crc_join, (uint32_t)c) ^ (uint32_t)c2;
        p += 3 * CRC_STREAM;
        n -= 3 * CRC_STREAM;
    }
    while (n >= 8) {
        uint64_t w;

        memcpy(&w, p, 8);
        c = _mm_crc32_u64(c, w);
        p += 8;
        n -= 8;
    }
    while (n--)
        c = _mm_crc32_u8((uint32_t)c, *p++);
    return ~(uint32_t)c;
}
#endif

int ck_crc32c_hw_available(void)
{
#ifdef CK_CRC32C_X86
    return __builtin_cpu_supports("sse4.2") != 0;
#else
    return 0;
#endif
}

uint32_t ck_crc32c(uint32_t crc, const void *p, size_t n)
{
#ifdef CK_CRC32C_X86
    if (__builtin_cpu_supports("sse4.2"))
        return crc32c_hw(crc, p, n);
#endif
    return ck_crc32c_sw(crc, p, n);
}

/* ---- text forms ------------------------------------------------------------------------ */

size_t ck_base64(const unsigned char *p, size_t n, char *out, size_t out_len)
{
    static const char A[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t i, o = 0;

    if (n > (SIZE_MAX - 1) / 4 * 3 - 2 || out_len < CK_BASE64_LEN(n)) {
        if (out_len)
            out[0] = '\0';
        return 0;
    }
    for (i = 0; i + 3 <= n; i += 3) {
        uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8 | p[i + 2];

        out[o++] = A[v >> 18];
        out[o++] = A[(v >> 12) & 63];
        out[o++] = A[(v >> 6) & 63];
        out[o++] = A[v & 63];
    }
    if (n - i == 1) {
        out[o++] = A[p[i] >> 2];
        out[o++] = A[(p[i] & 3) << 4];
        out[o++] = '=';
        out[o++] = '=';
    } else if (n - i == 2) {
        uint32_t v = (uint32_t)p[i] << 8 | p[i + 1];

        out[o++] = A[v >> 10];
        out[o++] = A[(v >> 4) & 63];
        out[o++] = A[(v & 15) << 2];
        out[o++] = '=';
    }
    out[o] = '\0';
    return o;
}

void ck_hex(const unsigned char *p, size_t n, char *out)
{
    static const char H[] = "0123456789abcdef";
    size_t i;

    for (i = 0; i < n; i++) {
        out[2 * i] = H[p[i] >> 4];
        out[2 * i + 1] = H[p[i] & 15];
    }
    out[2 * n] = '\0';
}
