/*
 * fuzz_s3xml - libFuzzer target for the S3 XML parsers, which read whatever the network sends.
 * Every input goes through every parser. Besides "never crash, never leak, never hang", it
 * checks real properties: every value handed out is non-empty where required, NUL-terminated
 * inside its bound and in range; pagination outputs agree with IsTruncated; a callback error
 * stops the walk at once; and keys and ETags that were parsed, once put through the request-body
 * builders, read back through the parsers unchanged (escaping and unescaping agree).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "s3xml.h"

#define NS "http://s3.amazonaws.com/doc/2006-03-01/"
#define KEEP 4 /* values kept per input for the round trips */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct seen {
    int calls;
    int stop; /* return EIO from the first call */
    int nkeys;
    char keys[KEEP][CK_S3_KEY_MAX];
    int nparts;
    ck_s3_part parts[KEEP];
} seen;

static void check(int ok)
{
    if (!ok)
        abort();
}

/* s is a NUL-terminated string of fewer than max bytes, non-empty when nonempty is set. */
static void check_str(const char *s, size_t max, int nonempty)
{
    check(s != NULL);
    check(memchr(s, '\0', max) != NULL);
    check(!nonempty || s[0] != '\0');
}

static s3ckpt_status count(seen *s)
{
    s->calls++;
    return s->stop ? S3CKPT_EIO : S3CKPT_OK;
}

static void keep_key(seen *s, const char *key)
{
    if (s->nkeys < KEEP)
        memcpy(s->keys[s->nkeys++], key, strlen(key) + 1);
}

static s3ckpt_status on_obj(void *ud, const char *key, int is_prefix, uint64_t size,
                            const char *etag)
{
    check_str(key, CK_S3_KEY_MAX, 1);
    check_str(etag, CK_S3_ETAG_MAX, 0);
    check(is_prefix == 0 || is_prefix == 1);
    check(!is_prefix || (size == 0 && etag[0] == '\0'));
    keep_key(ud, key);
    return count(ud);
}

static s3ckpt_status on_upload(void *ud, const char *key, const char *upload_id,
                               const char *initiated)
{
    check_str(key, CK_S3_KEY_MAX, 1);
    check_str(upload_id, CK_S3_UPLOADID_MAX, 1);
    check_str(initiated, CK_S3_TIME_MAX, 1);
    keep_key(ud, key);
    return count(ud);
}

static s3ckpt_status on_part(void *ud, unsigned number, uint64_t size, const char *etag)
{
    seen *s = ud;

    (void)size;
    check(number >= 1 && number <= CK_S3_PART_MAX);
    check_str(etag, CK_S3_ETAG_MAX, 1);
    if (s->nparts < KEEP) {
        s->parts[s->nparts].number = number;
        memcpy(s->parts[s->nparts].etag, etag, strlen(etag) + 1);
        s->nparts++;
    }
    return count(s);
}

static s3ckpt_status on_delete_err(void *ud, const char *key, const char *code, const char *message)
{
    check_str(key, CK_S3_KEY_MAX, 1);
    check_str(code, CK_S3_CODE_MAX, 1);
    check_str(message, CK_S3_MSG_MAX, 0);
    keep_key(ud, key);
    return count(ud);
}

/* A malloc'ed copy of s with every `from` replaced by `to`. */
static char *replace_all(const char *s, const char *from, const char *to)
{
    size_t fl = strlen(from), tl = strlen(to), n = 0;
    const char *p;
    char *out, *o;

    for (p = s; (p = strstr(p, from)); p += fl)
        n++;
    out = malloc(strlen(s) + n * tl + 1);
    check(out != NULL);
    for (o = out; (p = strstr(s, from)); s = p + fl) {
        memcpy(o, s, (size_t)(p - s));
        o += p - s;
        memcpy(o, to, tl);
        o += tl;
    }
    memcpy(o, s, strlen(s) + 1);
    return out;
}

static int has_control(const char *s)
{
    for (; *s; s++) {
        if ((unsigned char)*s < 0x20)
            return 1;
    }
    return 0;
}

/* A key the DeleteObjects builder accepts must come back from a DeleteResult unchanged. */
static void round_trip_key(const char *key, int from_xml)
{
    ck_buf b;
    char *a, *c, *doc, *full;
    seen back;
    s3ckpt_status st;

    memset(&back, 0, sizeof(back));
    ck_buf_init(&b, 1 << 16);
    st = ck_s3xml_delete_body(&b, &key, 1, 1);
    /* text libxml2 gave us is valid UTF-8 made of XML characters: only length or a control
     * character (tab, newline) can make the builder refuse it */
    if (from_xml)
        check(st == S3CKPT_OK || strlen(key) > 1024 || has_control(key));
    if (st) {
        check(b.len == 0);
        ck_buf_cleanup(&b);
        return;
    }
    a = replace_all(b.data, "<Delete xmlns=\"" NS "\"><Quiet>true</Quiet>", "<DeleteResult>");
    c = replace_all(a, "<Object>", "<Error>");
    doc = replace_all(c, "</Key></Object>", "</Key><Code>C</Code></Error>");
    full = replace_all(doc, "</Delete>", "</DeleteResult>");
    check(ck_s3xml_delete_result(full, strlen(full), on_delete_err, &back) == S3CKPT_OK);
    check(back.calls == 1 && strcmp(back.keys[0], key) == 0);
    free(a);
    free(c);
    free(doc);
    free(full);
    ck_buf_cleanup(&b);
}

/* Parts a ListParts page gave (ascending) must survive CompleteMultipartUpload and read back. */
static void round_trip_parts(const seen *s)
{
    ck_buf b;
    char *a, *c, *doc;
    seen back;
    int i, trunc = -1, ascending = 1, control = 0;
    unsigned marker = 1;
    s3ckpt_status st;

    for (i = 0; i < s->nparts; i++) {
        ascending &= i == 0 || s->parts[i].number > s->parts[i - 1].number;
        control |= has_control(s->parts[i].etag);
    }
    if (!s->nparts || !ascending)
        return;
    ck_buf_init(&b, 1 << 16);
    st = ck_s3xml_complete_body(&b, s->parts, (size_t)s->nparts);
    check(st == S3CKPT_OK || control);
    if (st) {
        ck_buf_cleanup(&b);
        return;
    }
    memset(&back, 0, sizeof(back));
    a = replace_all(b.data, "<CompleteMultipartUpload xmlns=\"" NS "\">",
                    "<ListPartsResult><IsTruncated>false</IsTruncated>");
    c = replace_all(a, "</PartNumber>", "</PartNumber><Size>1</Size>");
    doc = replace_all(c, "</CompleteMultipartUpload>", "</ListPartsResult>");
    check(ck_s3xml_list_parts(doc, strlen(doc), on_part, &back, &trunc, &marker) == S3CKPT_OK);
    check(trunc == 0 && marker == 0 && back.nparts == s->nparts);
    for (i = 0; i < s->nparts; i++) {
        check(back.parts[i].number == s->parts[i].number);
        check(strcmp(back.parts[i].etag, s->parts[i].etag) == 0);
    }
    free(a);
    free(c);
    free(doc);
    ck_buf_cleanup(&b);
}

/* Whether the document asks for url-decoding (decoded keys may hold any byte but NUL). */
static int url_encoded(const char *body, size_t len)
{
    static const char tag[] = "EncodingType";
    size_t i;

    for (i = 0; i + sizeof(tag) - 1 <= len; i++) {
        if (memcmp(body + i, tag, sizeof(tag) - 1) == 0)
            return 1;
    }
    return 0;
}

static void fuzz_lists(const char *body, size_t len)
{
    seen *s = calloc(2, sizeof(*s)); /* [0] full walk, [1] stops at the first call */
    int trunc = -1, i, xml = !url_encoded(body, len);
    unsigned marker = 99;
    char tok[256], nkm[CK_S3_KEY_MAX], nuim[CK_S3_UPLOADID_MAX];
    s3ckpt_status st, st1;

    check(s != NULL);
    s[1].stop = 1;

    st = ck_s3xml_list_objects(body, len, on_obj, &s[0], &trunc, tok, sizeof(tok));
    st1 = ck_s3xml_list_objects(body, len, on_obj, &s[1], &trunc, tok, sizeof(tok));
    check(st == S3CKPT_OK || (st == S3CKPT_EPROTOCOL && s[0].calls == 0));
    if (st == S3CKPT_OK) {
        check(trunc == 0 || trunc == 1);
        check_str(tok, sizeof(tok), trunc);
        check(trunc || tok[0] == '\0');
        check(s[0].calls ? st1 == S3CKPT_EIO && s[1].calls == 1 : st1 == S3CKPT_OK);
        for (i = 0; i < s[0].nkeys; i++)
            round_trip_key(s[0].keys[i], xml);
    }
    memset(s, 0, 2 * sizeof(*s));
    s[1].stop = 1;

    st = ck_s3xml_list_uploads(body, len, on_upload, &s[0], &trunc, nkm, sizeof(nkm), nuim,
                               sizeof(nuim));
    st1 = ck_s3xml_list_uploads(body, len, on_upload, &s[1], &trunc, nkm, sizeof(nkm), nuim,
                                sizeof(nuim));
    check(st == S3CKPT_OK || (st == S3CKPT_EPROTOCOL && s[0].calls == 0));
    if (st == S3CKPT_OK) {
        check_str(nkm, sizeof(nkm), trunc);
        check_str(nuim, sizeof(nuim), 0);
        check(trunc || (nkm[0] == '\0' && nuim[0] == '\0'));
        check(s[0].calls ? st1 == S3CKPT_EIO && s[1].calls == 1 : st1 == S3CKPT_OK);
        for (i = 0; i < s[0].nkeys; i++)
            round_trip_key(s[0].keys[i], xml);
    }
    memset(s, 0, 2 * sizeof(*s));
    s[1].stop = 1;

    st = ck_s3xml_list_parts(body, len, on_part, &s[0], &trunc, &marker);
    st1 = ck_s3xml_list_parts(body, len, on_part, &s[1], &trunc, &marker);
    check(st == S3CKPT_OK || (st == S3CKPT_EPROTOCOL && s[0].calls == 0));
    if (st == S3CKPT_OK) {
        check(trunc ? marker >= 1 && marker <= CK_S3_PART_MAX : marker == 0);
        check(s[0].calls ? st1 == S3CKPT_EIO && s[1].calls == 1 : st1 == S3CKPT_OK);
        round_trip_parts(&s[0]);
    }
    memset(s, 0, 2 * sizeof(*s));
    s[1].stop = 1;

    st = ck_s3xml_delete_result(body, len, on_delete_err, &s[0]);
    st1 = ck_s3xml_delete_result(body, len, on_delete_err, &s[1]);
    check(st == S3CKPT_OK || (st == S3CKPT_EPROTOCOL && s[0].calls == 0));
    if (st == S3CKPT_OK) {
        check(s[0].calls ? st1 == S3CKPT_EIO && s[1].calls == 1 : st1 == S3CKPT_OK);
        for (i = 0; i < s[0].nkeys; i++)
            round_trip_key(s[0].keys[i], xml);
    }
    free(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int initialized;
    const char *body = (const char *)data;
    ck_s3_error e;
    char id[CK_S3_UPLOADID_MAX], etag[CK_S3_ETAG_MAX];
    s3ckpt_status st;

    if (!initialized) {
        ck_s3xml_global_init();
        initialized = 1;
    }
    if (ck_s3xml_error(body, size, &e) == 0) {
        check_str(e.code, sizeof(e.code), 0);
        check_str(e.message, sizeof(e.message), 0);
        check_str(e.request_id, sizeof(e.request_id), 0);
    }
    st = ck_s3xml_initiate(body, size, id);
    check(st == S3CKPT_OK || st == S3CKPT_EPROTOCOL);
    check_str(id, sizeof(id), st == S3CKPT_OK);
    st = ck_s3xml_complete(body, size, etag);
    check(st == S3CKPT_OK || st == S3CKPT_EPROTOCOL);
    check_str(etag, sizeof(etag), st == S3CKPT_OK);
    fuzz_lists(body, size);
    return 0;
}
