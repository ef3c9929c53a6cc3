/*
 * sigv4 - AWS Signature Version 4, Authorization-header form, as S3 checks it:
 *   canonical request = method \n path \n sorted query \n headers \n signed names \n payload hash
 *   string to sign    = "AWS4-HMAC-SHA256" \n date \n scope \n hex(SHA-256(canonical request))
 *   signature         = hex(HMAC(HMAC(HMAC(HMAC(HMAC("AWS4"+secret, day), region), service),
 *                                     "aws4_request"), string to sign))
 * The caller (s3.c) builds the wire request and hands the same path, query and headers here, so
 * what is signed is what is sent. The path is taken verbatim (S3 does not normalize `.`/`//`)
 * but must already be in canonical encoding: a request whose wire path differs from its
 * canonical path would be refused by the server with a bare SignatureDoesNotMatch, so we refuse
 * it here with a message instead. The query is decoded and re-encoded because callers pass it
 * as sent and S3 canonicalizes it that way. Everything is strict and capped (EINVAL rather
 * than signing something the server will read differently), nothing is global (one call may
 * run on every worker at once), and key material is cleansed from the stack.
 */
#include "sigv4.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <stdlib.h>
#include <string.h>

#include "checksum.h"

#define ALGORITHM "AWS4-HMAC-SHA256"
#define SHA256_LEN 32
#define SCOPE_PART_MAX 64
#define METHOD_MAX 16

typedef struct hdr {
    const char *name; /* lowercase, in the arena */
    size_t name_len;
    const char *val; /* trimmed, inner whitespace runs collapsed to one space, in the arena */
    size_t val_len;
    size_t order; /* position in the request: keeps repeated names in the order given */
} hdr;

typedef struct param {
    const char *k; /* canonically encoded, in the arena */
    size_t klen;
    const char *v;
    size_t vlen;
} param;

static const char HEXUP[] = "0123456789ABCDEF";

static int is_unreserved(unsigned char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '.' || c == '_' || c == '~';
}

static int is_tchar(unsigned char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
           (c && strchr("!#$%&'*+-.^_`|~", c));
}

static int is_upper_hex(char c)
{
    return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'F');
}

s3ckpt_status ck_sigv4_uri_encode(ck_buf *out, const char *s, size_t len, int keep_slash)
{
    char tmp[192];
    size_t n = 0, i;
    s3ckpt_status st;

    for (i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];

        if (n + 3 > sizeof(tmp)) {
            st = ck_buf_append(out, tmp, n);
            if (st)
                return st;
            n = 0;
        }
        if (is_unreserved(c) || (c == '/' && keep_slash)) {
            tmp[n++] = (char)c;
        } else {
            tmp[n++] = '%';
            tmp[n++] = HEXUP[c >> 4];
            tmp[n++] = HEXUP[c & 15];
        }
    }
    return ck_buf_append(out, tmp, n);
}

void ck_sha256_hex(const void *data, size_t len, char hex[65])
{
    unsigned char md[SHA256_LEN];
    unsigned int mdlen = 0;

    if (!EVP_Digest(data, len, md, &mdlen, EVP_sha256(), NULL) || mdlen != SHA256_LEN) {
        hex[0] = '\0';
        return;
    }
    ck_hex(md, SHA256_LEN, hex);
}

/* Days since 1970-01-01 to the proleptic Gregorian date (era arithmetic: 400-year cycles of
 * 146097 days, years counted from March so the leap day is last). */
static void civil_from_days(int64_t z, int64_t *y, unsigned *m, unsigned *d)
{
    int64_t era, yoe, doy, mp;

    z += 719468; /* days from 0000-03-01 to 1970-01-01 */
    era = (z >= 0 ? z : z - 146096) / 146097;
    doy = z - era * 146097;                                      /* day of era [0, 146096] */
    yoe = (doy - doy / 1460 + doy / 36524 - doy / 146096) / 365; /* year of era [0, 399] */
    *y = yoe + era * 400;
    doy = doy - (365 * yoe + yoe / 4 - yoe / 100); /* day of year from March 1 [0, 365] */
    mp = (5 * doy + 2) / 153;                      /* March = 0 */
    *d = (unsigned)(doy - (153 * mp + 2) / 5 + 1);
    *m = (unsigned)(mp < 10 ? mp + 3 : mp - 9);
    if (*m <= 2)
        (*y)++;
}

static void put_digits(char *p, unsigned v, int n)
{
    while (n-- > 0) {
        p[n] = (char)('0' + v % 10);
        v /= 10;
    }
}

void ck_sigv4_amz_date(int64_t t, char out[17])
{
    const int64_t min = -62167219200; /* 0000-01-01T00:00:00Z */
    const int64_t max = 253402300799; /* 9999-12-31T23:59:59Z */
    int64_t days, secs, y;
    unsigned m, d;

    if (t < min)
        t = min;
    if (t > max)
        t = max;
    days = t / 86400;
    secs = t % 86400;
    if (secs < 0) {
        secs += 86400;
        days--;
    }
    civil_from_days(days, &y, &m, &d);
    put_digits(out, (unsigned)y, 4);
    put_digits(out + 4, m, 2);
    put_digits(out + 6, d, 2);
    out[8] = 'T';
    put_digits(out + 9, (unsigned)(secs / 3600), 2);
    put_digits(out + 11, (unsigned)(secs / 60 % 60), 2);
    put_digits(out + 13, (unsigned)(secs % 60), 2);
    out[15] = 'Z';
    out[16] = '\0';
}

/* ---- input checks ---------------------------------------------------------------------- */

static int valid_amz_date(const char *s)
{
    size_t i;

    if (!s || strnlen(s, 17) != 16 || s[8] != 'T' || s[15] != 'Z')
        return 0;
    for (i = 0; i < 15; i++) {
        if (i != 8 && (s[i] < '0' || s[i] > '9'))
            return 0;
    }
    return 1;
}

static int valid_scope_part(const char *s)
{
    size_t i, n = s ? strnlen(s, SCOPE_PART_MAX + 1) : 0;

    if (n == 0 || n > SCOPE_PART_MAX)
        return 0;
    for (i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];

        if (!is_unreserved(c) || c == '~')
            return 0;
    }
    return 1;
}

static int valid_method(const char *s)
{
    size_t i, n = s ? strnlen(s, METHOD_MAX + 1) : 0;

    if (n == 0 || n > METHOD_MAX)
        return 0;
    for (i = 0; i < n; i++) {
        if (s[i] < 'A' || s[i] > 'Z')
            return 0;
    }
    return 1;
}

static int valid_path(const char *s)
{
    size_t i, n = s ? strnlen(s, CK_SIGV4_CREQ_MAX + 1) : 0;

    if (n == 0 || n > CK_SIGV4_CREQ_MAX || s[0] != '/')
        return 0;
    for (i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];

        if (c == '%') {
            if (i + 2 >= n || !is_upper_hex(s[i + 1]) || !is_upper_hex(s[i + 2]))
                return 0;
            i += 2;
        } else if (c != '/' && !is_unreserved(c)) {
            return 0;
        }
    }
    return 1;
}

static int valid_payload_hash(const char *s)
{
    size_t i;

    if (!s)
        return 0;
    if (!strcmp(s, CK_SIGV4_UNSIGNED_PAYLOAD))
        return 1;
    if (strnlen(s, 65) != 64)
        return 0;
    for (i = 0; i < 64; i++) {
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
            return 0;
    }
    return 1;
}

static int valid_access_key(const char *s)
{
    size_t i, n = s ? strnlen(s, CK_SIGV4_KEY_MAX + 1) : 0;

    if (n == 0 || n > CK_SIGV4_KEY_MAX)
        return 0;
    for (i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];

        if (c <= 0x20 || c >= 0x7f || c == '/' || c == ',')
            return 0;
    }
    return 1;
}

/* ---- canonical headers ----------------------------------------------------------------- */

static int cmp_bytes(const char *a, size_t alen, const char *b, size_t blen)
{
    int c = memcmp(a, b, alen < blen ? alen : blen);

    if (c)
        return c;
    return alen < blen ? -1 : alen > blen;
}

static int cmp_hdr(const void *pa, const void *pb)
{
    const hdr *a = pa, *b = pb;
    int c = cmp_bytes(a->name, a->name_len, b->name, b->name_len);

    if (c)
        return c;
    return a->order < b->order ? -1 : a->order > b->order;
}

static int is_name(const hdr *h, const char *name)
{
    return h->name_len == strlen(name) && !memcmp(h->name, name, h->name_len);
}

static int same_name(const hdr *a, const hdr *b)
{
    return a->name_len == b->name_len && !memcmp(a->name, b->name, a->name_len);
}

/* Copies the request's headers into h[] (lowercase names, trimmed values) backed by *arena,
 * sorted by name then position. */
static s3ckpt_status load_headers(const ck_sigv4_request *req, hdr *h, char **arena)
{
    size_t total = 0, i, k, nlen, vlen;
    char *p;

    for (i = 0; i < req->nheaders; i++) {
        const ck_sigv4_header *in = &req->headers[i];

        if (!in->name || !in->value)
            return S3CKPT_EINVAL;
        nlen = strnlen(in->name, CK_SIGV4_CREQ_MAX + 1);
        vlen = strnlen(in->value, CK_SIGV4_CREQ_MAX + 1);
        total += nlen + vlen;
        if (total > CK_SIGV4_CREQ_MAX)
            return S3CKPT_EINVAL;
    }
    p = malloc(total + 1);
    if (!p)
        return S3CKPT_ENOMEM;
    *arena = p;
    for (i = 0; i < req->nheaders; i++) {
        const unsigned char *name = (const unsigned char *)req->headers[i].name;
        const unsigned char *v = (const unsigned char *)req->headers[i].value;
        int pending_space = 0;

        h[i].name = p;
        for (k = 0; name[k]; k++) {
            if (!is_tchar(name[k]))
                return S3CKPT_EINVAL;
            *p++ = (char)(name[k] >= 'A' && name[k] <= 'Z' ? name[k] + 32 : name[k]);
        }
        h[i].name_len = k;
        if (k == 0)
            return S3CKPT_EINVAL;
        h[i].val = p;
        for (k = 0; v[k]; k++) {
            if (v[k] == ' ' || v[k] == '\t') {
                pending_space = p != h[i].val;
                continue;
            }
            if (v[k] < 0x20 || v[k] == 0x7f)
                return S3CKPT_EINVAL; /* CR/LF would split the header on the wire */
            if (pending_space)
                *p++ = ' ';
            pending_space = 0;
            *p++ = (char)v[k];
        }
        h[i].val_len = (size_t)(p - h[i].val);
        h[i].order = i;
    }
    qsort(h, req->nheaders, sizeof(*h), cmp_hdr);
    return S3CKPT_OK;
}

/* 1 when header `name` occurs once with value want (want NULL: any non-empty value), 0 when
 * it occurs with another value or more than once, -1 when it is absent. h is sorted. */
static int header_is(const hdr *h, size_t n, const char *name, const char *want)
{
    size_t i;

    for (i = 0; i < n; i++) {
        if (!is_name(&h[i], name))
            continue;
        if (i + 1 < n && same_name(&h[i], &h[i + 1]))
            return 0;
        if (!want)
            return h[i].val_len > 0;
        return h[i].val_len == strlen(want) && !memcmp(h[i].val, want, h[i].val_len);
    }
    return -1;
}

static s3ckpt_status append_headers(ck_buf *creq, const hdr *h, size_t n, ck_buf *signed_names)
{
    size_t i;
    s3ckpt_status st = S3CKPT_OK;

    for (i = 0; i < n && !st; i++) {
        int first = i == 0 || !same_name(&h[i - 1], &h[i]);

        if (first) {
            if (i > 0)
                st = ck_buf_append(creq, "\n", 1);
            if (!st)
                st = ck_buf_append(creq, h[i].name, h[i].name_len);
            if (!st)
                st = ck_buf_append(creq, ":", 1);
            if (!st && signed_names->len)
                st = ck_buf_append(signed_names, ";", 1);
            if (!st)
                st = ck_buf_append(signed_names, h[i].name, h[i].name_len);
        } else {
            st = ck_buf_append(creq, ",", 1);
        }
        if (!st)
            st = ck_buf_append(creq, h[i].val, h[i].val_len);
    }
    if (!st)
        st = ck_buf_append(creq, "\n\n", 2);
    return st;
}

/* ---- canonical query ------------------------------------------------------------------- */

static int cmp_param(const void *pa, const void *pb)
{
    const param *a = pa, *b = pb;
    int c = cmp_bytes(a->k, a->klen, b->k, b->klen);

    return c ? c : cmp_bytes(a->v, a->vlen, b->v, b->vlen);
}

/* %-decodes s[0..len) into tmp and appends its canonical encoding to arena. */
static s3ckpt_status reencode(ck_buf *arena, const char *s, size_t len, char *tmp)
{
    size_t i, n = 0;

    for (i = 0; i < len; i++) {
        if (s[i] == '%') {
            int hi = i + 2 < len ? ck_hexval(s[i + 1]) : -1;
            int lo = hi >= 0 ? ck_hexval(s[i + 2]) : -1;

            if (hi < 0 || lo < 0)
                return S3CKPT_EINVAL;
            tmp[n++] = (char)(hi << 4 | lo);
            i += 2;
        } else {
            tmp[n++] = s[i];
        }
    }
    return ck_sigv4_uri_encode(arena, tmp, n, 0);
}

/* Appends the canonical query string of q to creq, then "\n". */
static s3ckpt_status append_query(ck_buf *creq, const char *q)
{
    size_t qlen = strnlen(q, CK_SIGV4_CREQ_MAX + 1), count = 0, i, np = 0;
    size_t *offs = NULL;
    param *ps = NULL;
    char *tmp = NULL;
    ck_buf arena;
    s3ckpt_status st = S3CKPT_OK;
    const char *s, *end;

    ck_buf_init(&arena, CK_SIGV4_CREQ_MAX);
    if (qlen > CK_SIGV4_CREQ_MAX)
        return S3CKPT_EINVAL;
    for (s = q; s < q + qlen; s = end + 1) {
        end = memchr(s, '&', (size_t)(q + qlen - s));
        if (!end)
            end = q + qlen;
        count += end > s;
    }
    if (count == 0)
        return ck_buf_append(creq, "\n", 1);
    if (count > CK_SIGV4_PARAMS_MAX)
        return S3CKPT_EINVAL;
    ps = calloc(count, sizeof(*ps));
    offs = calloc(count * 2, sizeof(*offs));
    tmp = malloc(qlen + 1);
    if (!ps || !offs || !tmp) {
        st = S3CKPT_ENOMEM;
        goto out;
    }
    for (s = q; s < q + qlen && !st; s = end + 1) {
        const char *eq;

        end = memchr(s, '&', (size_t)(q + qlen - s));
        if (!end)
            end = q + qlen;
        if (end == s)
            continue;
        eq = memchr(s, '=', (size_t)(end - s));
        offs[2 * np] = arena.len;
        st = reencode(&arena, s, (size_t)((eq ? eq : end) - s), tmp);
        ps[np].klen = arena.len - offs[2 * np];
        offs[2 * np + 1] = arena.len;
        if (!st && eq)
            st = reencode(&arena, eq + 1, (size_t)(end - eq - 1), tmp);
        ps[np].vlen = arena.len - offs[2 * np + 1];
        np++;
    }
    if (st)
        goto out;
    if (!arena.data) { /* every key and value empty ("=&=") */
        st = ck_buf_append(&arena, "", 0);
        if (st)
            goto out;
    }
    for (i = 0; i < np; i++) {
        ps[i].k = arena.data + offs[2 * i];
        ps[i].v = arena.data + offs[2 * i + 1];
    }
    qsort(ps, np, sizeof(*ps), cmp_param);
    for (i = 0; i < np && !st; i++) {
        if (i > 0)
            st = ck_buf_append(creq, "&", 1);
        if (!st)
            st = ck_buf_append(creq, ps[i].k, ps[i].klen);
        if (!st)
            st = ck_buf_append(creq, "=", 1);
        if (!st)
            st = ck_buf_append(creq, ps[i].v, ps[i].vlen);
    }
    if (!st)
        st = ck_buf_append(creq, "\n", 1);
out:
    free(tmp);
    free(offs);
    free(ps);
    ck_buf_cleanup(&arena);
    return st;
}

/* ---- signing --------------------------------------------------------------------------- */

static int hmac(const unsigned char *key, size_t key_len, const void *msg, size_t msg_len,
                unsigned char out[SHA256_LEN])
{
    unsigned int n = 0;

    return HMAC(EVP_sha256(), key, (int)key_len, msg, msg_len, out, &n) && n == SHA256_LEN;
}

/* signature = HMAC(signing key derived from secret/day/region/service, sts), as hex. */
static s3ckpt_status signature_hex(const char *secret, const char *day, const char *region,
                                   const char *service, const ck_buf *sts, char hex[65])
{
    unsigned char k[4 + CK_SIGV4_KEY_MAX], a[SHA256_LEN], b[SHA256_LEN];
    size_t slen = strlen(secret);
    int ok;

    memcpy(k, "AWS4", 4);
    memcpy(k + 4, secret, slen);
    ok = hmac(k, 4 + slen, day, 8, a) && hmac(a, SHA256_LEN, region, strlen(region), b) &&
         hmac(b, SHA256_LEN, service, strlen(service), a) &&
         hmac(a, SHA256_LEN, "aws4_request", 12, b) && hmac(b, SHA256_LEN, sts->data, sts->len, a);
    if (ok)
        ck_hex(a, SHA256_LEN, hex);
    OPENSSL_cleanse(k, sizeof(k));
    OPENSSL_cleanse(a, sizeof(a));
    OPENSSL_cleanse(b, sizeof(b));
    return ok ? S3CKPT_OK : S3CKPT_ENOMEM;
}

static s3ckpt_status check_request(const ck_sigv4_request *req, const char *access_key,
                                   const char *secret_key)
{
    size_t slen = secret_key ? strnlen(secret_key, CK_SIGV4_KEY_MAX + 1) : 0;

    if (!req || !valid_method(req->method) || !valid_path(req->path) || !req->query ||
        !valid_payload_hash(req->payload_hash) || !valid_amz_date(req->amz_date) ||
        !valid_scope_part(req->region) || !valid_scope_part(req->service) ||
        !valid_access_key(access_key) || slen == 0 || slen > CK_SIGV4_KEY_MAX ||
        req->nheaders == 0 || req->nheaders > CK_SIGV4_HEADERS_MAX || !req->headers)
        return S3CKPT_EINVAL;
    return S3CKPT_OK;
}

s3ckpt_status ck_sigv4_sign(const ck_sigv4_request *req, const char *access_key,
                            const char *secret_key, char *auth, size_t auth_len, ck_buf *creq,
                            ck_buf *sts)
{
    hdr h[CK_SIGV4_HEADERS_MAX];
    char *arena = NULL, hash[65], sig[65];
    ck_buf cr, ts, names, out;
    s3ckpt_status st;

    ck_buf_init(&cr, CK_SIGV4_CREQ_MAX);
    ck_buf_init(&ts, 1024);
    ck_buf_init(&names, CK_SIGV4_CREQ_MAX);
    ck_buf_init(&out, auth_len ? auth_len - 1 : 0);
    if (auth && auth_len)
        auth[0] = '\0';
    st = check_request(req, access_key, secret_key);
    if (st || !auth || !auth_len)
        goto out_inval;
    st = load_headers(req, h, &arena);
    if (st)
        goto out;
    if (header_is(h, req->nheaders, "host", NULL) != 1 ||
        header_is(h, req->nheaders, "x-amz-date", req->amz_date) != 1 ||
        header_is(h, req->nheaders, "x-amz-content-sha256", req->payload_hash) == 0)
        goto out_inval;

    st = ck_buf_printf(&cr, "%s\n%s\n", req->method, req->path);
    if (!st)
        st = append_query(&cr, req->query);
    if (!st)
        st = append_headers(&cr, h, req->nheaders, &names);
    if (!st)
        st = ck_buf_printf(&cr, "%s\n%s", names.data, req->payload_hash);
    if (st)
        goto out;

    ck_sha256_hex(cr.data, cr.len, hash);
    if (!hash[0]) {
        st = S3CKPT_ENOMEM;
        goto out;
    }
    st = ck_buf_printf(&ts, ALGORITHM "\n%s\n%.8s/%s/%s/aws4_request\n%s", req->amz_date,
                       req->amz_date, req->region, req->service, hash);
    if (st)
        goto out;
    st = signature_hex(secret_key, req->amz_date, req->region, req->service, &ts, sig);
    if (st)
        goto out;
    st = ck_buf_printf(&out,
                       ALGORITHM " Credential=%s/%.8s/%s/%s/aws4_request, SignedHeaders=%s, "
                                 "Signature=%s",
                       access_key, req->amz_date, req->region, req->service, names.data, sig);
    if (st)
        goto out;
    memcpy(auth, out.data, out.len + 1);
    if (creq)
        st = ck_buf_append(creq, cr.data, cr.len);
    if (!st && sts)
        st = ck_buf_append(sts, ts.data, ts.len);
    goto out;
out_inval:
    st = S3CKPT_EINVAL;
out:
    if (st && auth && auth_len)
        auth[0] = '\0';
    free(arena);
    ck_buf_cleanup(&out);
    ck_buf_cleanup(&names);
    ck_buf_cleanup(&ts);
    ck_buf_cleanup(&cr);
    return st;
}
