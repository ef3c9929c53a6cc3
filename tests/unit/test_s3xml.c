/*
 * test_s3xml - S3 XML responses as AWS and Ceph RGW send them (error bodies, multipart
 * initiate/complete, ListObjectsV2, ListMultipartUploads, ListParts, DeleteObjects), their
 * pagination fields and EncodingType=url keys; refusal of missing, repeated, oversized and
 * malformed fields, garbage, DTDs (billion laughs, external entities: never expanded, never
 * fetched); and the request-body builders, whose escaping is checked by reading their output
 * back through the response parsers and through libxml2 itself.
 */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <libxml/parser.h>
#include <libxml/tree.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "s3xml.h"

#define NS "http://s3.amazonaws.com/doc/2006-03-01/"
#define DECL "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"

static void setup(void)
{
    ck_s3xml_global_init();
}

TestSuite(s3xml, .init = setup);

/* ---- recording callbacks ---------------------------------------------------------------- */

#define REC_MAX 8

typedef struct rec {
    int n;
    int stop_after; /* return EIO from call number stop_after (1-based); 0: never */
    char key[REC_MAX][CK_S3_KEY_MAX];
    char s1[REC_MAX][CK_S3_UPLOADID_MAX]; /* etag / upload id / code */
    char s2[REC_MAX][CK_S3_MSG_MAX];      /* initiated / message */
    int is_prefix[REC_MAX];
    uint64_t size[REC_MAX];
    unsigned number[REC_MAX];
} rec;

static rec *rec_new(void)
{
    rec *r = calloc(1, sizeof(*r));

    cr_assert_not_null(r);
    return r;
}

static s3ckpt_status rec_next(rec *r, int *slot)
{
    cr_assert_lt(r->n, REC_MAX);
    *slot = r->n++;
    return r->stop_after && r->n >= r->stop_after ? S3CKPT_EIO : S3CKPT_OK;
}

static s3ckpt_status on_obj(void *ud, const char *key, int is_prefix, uint64_t size,
                            const char *etag)
{
    rec *r = ud;
    int i;
    s3ckpt_status st = rec_next(r, &i);

    snprintf(r->key[i], sizeof(r->key[i]), "%s", key);
    snprintf(r->s1[i], sizeof(r->s1[i]), "%s", etag);
    r->is_prefix[i] = is_prefix;
    r->size[i] = size;
    return st;
}

static s3ckpt_status on_upload(void *ud, const char *key, const char *upload_id,
                               const char *initiated)
{
    rec *r = ud;
    int i;
    s3ckpt_status st = rec_next(r, &i);

    snprintf(r->key[i], sizeof(r->key[i]), "%s", key);
    snprintf(r->s1[i], sizeof(r->s1[i]), "%s", upload_id);
    snprintf(r->s2[i], sizeof(r->s2[i]), "%s", initiated);
    return st;
}

static s3ckpt_status on_part(void *ud, unsigned number, uint64_t size, const char *etag)
{
    rec *r = ud;
    int i;
    s3ckpt_status st = rec_next(r, &i);

    r->number[i] = number;
    r->size[i] = size;
    snprintf(r->s1[i], sizeof(r->s1[i]), "%s", etag);
    return st;
}

static s3ckpt_status on_delete_err(void *ud, const char *key, const char *code, const char *message)
{
    rec *r = ud;
    int i;
    s3ckpt_status st = rec_next(r, &i);

    snprintf(r->key[i], sizeof(r->key[i]), "%s", key);
    snprintf(r->s1[i], sizeof(r->s1[i]), "%s", code);
    snprintf(r->s2[i], sizeof(r->s2[i]), "%s", message);
    return st;
}

/* ---- helpers ---------------------------------------------------------------------------- */

/* A malloc'ed string of n copies of c. */
static char *repeat(char c, size_t n)
{
    char *s = malloc(n + 1);

    cr_assert_not_null(s);
    memset(s, c, n);
    s[n] = '\0';
    return s;
}

/* A malloc'ed printf result (test documents are small, but some hold long values). */
static char *fmt(const char *f, ...) __attribute__((format(printf, 1, 2)));
static char *fmt(const char *f, ...)
{
    va_list ap;
    int n;
    char *s;

    va_start(ap, f);
    n = vsnprintf(NULL, 0, f, ap);
    va_end(ap);
    cr_assert_geq(n, 0);
    s = malloc((size_t)n + 1);
    cr_assert_not_null(s);
    va_start(ap, f);
    vsnprintf(s, (size_t)n + 1, f, ap);
    va_end(ap);
    return s;
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
    cr_assert_not_null(out);
    for (o = out; (p = strstr(s, from)); s = p + fl) {
        memcpy(o, s, (size_t)(p - s));
        o += p - s;
        memcpy(o, to, tl);
        o += tl;
    }
    memcpy(o, s, strlen(s) + 1);
    return out;
}

static s3ckpt_status list_objects(const char *doc, rec *r, int *trunc, char *tok, size_t toklen)
{
    return ck_s3xml_list_objects(doc, strlen(doc), on_obj, r, trunc, tok, toklen);
}

/* A ListObjectsV2 page with one Contents whose Key element is key_xml (already escaped). */
static char *one_key_page(const char *encoding, const char *key_xml)
{
    return fmt(DECL
               "<ListBucketResult xmlns=\"" NS "\"><Name>b</Name><Prefix></Prefix>"
               "<KeyCount>1</KeyCount><MaxKeys>1000</MaxKeys>%s<IsTruncated>false</IsTruncated>"
               "<Contents><Key>%s</Key><Size>1</Size><ETag>\"e\"</ETag></Contents>"
               "</ListBucketResult>",
               encoding, key_xml);
}

/* The single key of a one_key_page document, EPROTOCOL etc. otherwise; key gets it. */
static s3ckpt_status parse_one_key(const char *encoding, const char *key_xml,
                                   char key[CK_S3_KEY_MAX])
{
    char *doc = one_key_page(encoding, key_xml);
    rec *r = rec_new();
    int trunc = -1;
    char tok[64];
    s3ckpt_status st = list_objects(doc, r, &trunc, tok, sizeof(tok));

    key[0] = '\0';
    if (st == S3CKPT_OK) {
        cr_assert_eq(r->n, 1);
        snprintf(key, CK_S3_KEY_MAX, "%s", r->key[0]);
    } else {
        cr_assert_eq(r->n, 0, "no callback for a page that is refused");
    }
    free(r);
    free(doc);
    return st;
}

/* ---- <Error> ---------------------------------------------------------------------------- */

static const char AWS_ERROR[] =
    DECL "<Error>\n  <Code>NoSuchKey</Code>\n  <Message>The resource you requested does not "
         "exist</Message>\n  <Resource>/mybucket/myfoto.jpg</Resource>\n"
         "  <RequestId>4442587FB7D0A2F9</RequestId>\n"
         "  <HostId>eftixk72aD6Ap51TnqcoF8eFidJG9Z/2mkiDFu8yU9AS1ed4OpIszj7UDNEHGran</HostId>\n"
         "</Error>";

static const char RGW_ERROR[] =
    DECL "<Error><Code>NoSuchKey</Code><Message></Message><BucketName>b</BucketName>"
         "<RequestId>tx00000a1b2c3d4e5f60718-0065f0c1d2-1234-default</RequestId>"
         "<HostId>1234-default-default</HostId></Error>";

Test(s3xml, error_reads_aws_code_message_and_request_id)
{
    ck_s3_error e;

    cr_assert_eq(ck_s3xml_error(AWS_ERROR, strlen(AWS_ERROR), &e), 0);
    cr_assert_str_eq(e.code, "NoSuchKey");
    cr_assert_str_eq(e.message, "The resource you requested does not exist");
    cr_assert_str_eq(e.request_id, "4442587FB7D0A2F9");
}

Test(s3xml, error_accepts_rgw_empty_message)
{
    ck_s3_error e;

    cr_assert_eq(ck_s3xml_error(RGW_ERROR, strlen(RGW_ERROR), &e), 0);
    cr_assert_str_eq(e.code, "NoSuchKey");
    cr_assert_str_eq(e.message, "");
    cr_assert_str_eq(e.request_id, "tx00000a1b2c3d4e5f60718-0065f0c1d2-1234-default");
}

Test(s3xml, error_without_message_or_with_self_closing_message_gives_empty_message)
{
    static const char none[] = "<Error><Code>SlowDown</Code></Error>";
    static const char empty[] = "<Error><Code>SlowDown</Code><Message/><RequestId/></Error>";
    ck_s3_error e;

    memset(&e, 'x', sizeof(e));
    cr_assert_eq(ck_s3xml_error(none, strlen(none), &e), 0);
    cr_assert_str_eq(e.code, "SlowDown");
    cr_assert_str_eq(e.message, "");
    cr_assert_str_eq(e.request_id, "");
    memset(&e, 'x', sizeof(e));
    cr_assert_eq(ck_s3xml_error(empty, strlen(empty), &e), 0);
    cr_assert_str_eq(e.message, "");
}

Test(s3xml, error_matches_local_names_in_any_namespace)
{
    static const char doc[] = "<s3:Error xmlns:s3=\"" NS "\"><s3:Code>AccessDenied</s3:Code>"
                              "<s3:Message>Access Denied</s3:Message></s3:Error>";
    static const char dflt[] = "<Error xmlns=\"" NS "\"><Code>InternalError</Code></Error>";
    ck_s3_error e;

    cr_assert_eq(ck_s3xml_error(doc, strlen(doc), &e), 0);
    cr_assert_str_eq(e.code, "AccessDenied");
    cr_assert_str_eq(e.message, "Access Denied");
    cr_assert_eq(ck_s3xml_error(dflt, strlen(dflt), &e), 0);
    cr_assert_str_eq(e.code, "InternalError");
}

Test(s3xml, error_is_minus_one_for_other_documents_and_garbage)
{
    static const char *const bad[] = {
        "",
        "not xml at all",
        "<Error><Code>NoSuchKey</Code>", /* cut short */
        "<ListBucketResult><Name>b</Name></ListBucketResult>",
        "<Error><Code>a</Code></Error><Error/>", /* two roots */
        "\xff\xfe<\x00E\x00",
        "<Error><Code>a</Code></Error",
    };
    ck_s3_error e;
    size_t i;

    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        cr_assert_eq(ck_s3xml_error(bad[i], strlen(bad[i]), &e), -1, "input %zu", i);
    cr_assert_eq(ck_s3xml_error(NULL, 10, &e), -1);
    cr_assert_eq(ck_s3xml_error(AWS_ERROR, strlen(AWS_ERROR) - 3, &e), -1, "truncated body");
}

Test(s3xml, error_cuts_a_long_message_at_a_character_boundary)
{
    /* 300 two-byte characters: 600 bytes, cut below CK_S3_MSG_MAX without splitting one */
    char *msg = malloc(601), *doc;
    ck_s3_error e;
    size_t i, n;

    cr_assert_not_null(msg);
    for (i = 0; i < 300; i++)
        memcpy(msg + 2 * i, "\xc3\xa9", 2);
    msg[600] = '\0';
    doc = fmt("<Error><Code>BadDigest</Code><Message>%s</Message></Error>", msg);
    cr_assert_eq(ck_s3xml_error(doc, strlen(doc), &e), 0);
    n = strlen(e.message);
    cr_assert_lt(n, CK_S3_MSG_MAX);
    cr_assert_geq(n, CK_S3_MSG_MAX - 2);
    cr_assert_eq(n % 2, 0, "no half character at the end (%zu bytes)", n);
    cr_assert_eq(memcmp(e.message, msg, n), 0);
    free(doc);
    free(msg);
}

Test(s3xml, error_with_an_oversized_code_keeps_the_document_but_no_code)
{
    char *code = repeat('A', CK_S3_CODE_MAX), *doc;
    ck_s3_error e;

    doc = fmt("<Error><Code>%s</Code><Message>m</Message></Error>", code);
    cr_assert_eq(ck_s3xml_error(doc, strlen(doc), &e), 0);
    cr_assert_str_eq(e.code, "", "a cut code could look like another code");
    cr_assert_str_eq(e.message, "m");
    free(doc);
    free(code);
}

/* ---- initiate / complete ---------------------------------------------------------------- */

Test(s3xml, initiate_reads_upload_id)
{
    static const char doc[] =
        DECL "<InitiateMultipartUploadResult xmlns=\"" NS "\"><Bucket>example-bucket</Bucket>"
             "<Key>example-object</Key><UploadId>VXBsb2FkIElEIGZvciA2aWWpbmcncyBteS1tb3ZpZS5tMnRz"
             "IHVwbG9hZA</UploadId></InitiateMultipartUploadResult>";
    static const char rgw[] =
        DECL "<InitiateMultipartUploadResult xmlns=\"" NS "\"><Bucket>b</Bucket><Key>a/b</Key>"
             "<UploadId>2~iCw_lDY8VoRsRa7B6zV1jyDDv3XQ5Rz</UploadId>"
             "</InitiateMultipartUploadResult>";
    char id[CK_S3_UPLOADID_MAX];

    cr_assert_eq(ck_s3xml_initiate(doc, strlen(doc), id), S3CKPT_OK);
    cr_assert_str_eq(id, "VXBsb2FkIElEIGZvciA2aWWpbmcncyBteS1tb3ZpZS5tMnRzIHVwbG9hZA");
    cr_assert_eq(ck_s3xml_initiate(rgw, strlen(rgw), id), S3CKPT_OK);
    cr_assert_str_eq(id, "2~iCw_lDY8VoRsRa7B6zV1jyDDv3XQ5Rz");
}

Test(s3xml, initiate_refuses_missing_empty_repeated_or_oversized_upload_id)
{
    char id[CK_S3_UPLOADID_MAX], *max = repeat('u', CK_S3_UPLOADID_MAX - 1);
    char *longer = repeat('u', CK_S3_UPLOADID_MAX), *doc;
    static const char *const bad[] = {
        "<InitiateMultipartUploadResult><Bucket>b</Bucket></InitiateMultipartUploadResult>",
        "<InitiateMultipartUploadResult><UploadId></UploadId></InitiateMultipartUploadResult>",
        "<InitiateMultipartUploadResult><UploadId>a</UploadId><UploadId>b</UploadId>"
        "</InitiateMultipartUploadResult>",
        "<InitiateMultipartUploadResult><UploadId>a<b/></UploadId>"
        "</InitiateMultipartUploadResult>",
        "<Other><UploadId>a</UploadId></Other>",
    };
    size_t i;

    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        cr_assert_eq(ck_s3xml_initiate(bad[i], strlen(bad[i]), id), S3CKPT_EPROTOCOL, "doc %zu", i);
        cr_assert_str_eq(id, "");
    }
    cr_assert_eq(ck_s3xml_initiate(RGW_ERROR, strlen(RGW_ERROR), id), S3CKPT_EPROTOCOL);
    doc = fmt("<InitiateMultipartUploadResult><UploadId>%s</UploadId>"
              "</InitiateMultipartUploadResult>",
              max);
    cr_assert_eq(ck_s3xml_initiate(doc, strlen(doc), id), S3CKPT_OK, "the longest that fits");
    cr_assert_str_eq(id, max);
    free(doc);
    doc = fmt("<InitiateMultipartUploadResult><UploadId>%s</UploadId>"
              "</InitiateMultipartUploadResult>",
              longer);
    cr_assert_eq(ck_s3xml_initiate(doc, strlen(doc), id), S3CKPT_EPROTOCOL, "never truncated");
    free(doc);
    free(longer);
    free(max);
}

Test(s3xml, complete_reads_etag_with_its_quotes)
{
    static const char aws[] =
        DECL "<CompleteMultipartUploadResult xmlns=\"" NS "\">"
             "<Location>https://example-bucket.s3.amazonaws.com/example-object</Location>"
             "<Bucket>example-bucket</Bucket><Key>example-object</Key>"
             "<ETag>&quot;3858f62230ac3c915f300c664312c11f-9&quot;</ETag>"
             "</CompleteMultipartUploadResult>";
    static const char rgw[] =
        DECL "<CompleteMultipartUploadResult xmlns=\"" NS "\">"
             "<Location>127.0.0.1/b/k</Location><Bucket>b</Bucket><Key>k</Key>"
             "<ETag>\"6e381c93a19dedcc6d0325bb0d12c6fb-36\"</ETag>"
             "</CompleteMultipartUploadResult>";
    char etag[CK_S3_ETAG_MAX];

    cr_assert_eq(ck_s3xml_complete(aws, strlen(aws), etag), S3CKPT_OK);
    cr_assert_str_eq(etag, "\"3858f62230ac3c915f300c664312c11f-9\"");
    cr_assert_eq(ck_s3xml_complete(rgw, strlen(rgw), etag), S3CKPT_OK);
    cr_assert_str_eq(etag, "\"6e381c93a19dedcc6d0325bb0d12c6fb-36\"");
}

Test(s3xml, complete_refuses_missing_or_oversized_etag_and_error_bodies)
{
    static const char none[] =
        "<CompleteMultipartUploadResult><Key>k</Key></CompleteMultipartUploadResult>";
    static const char err200[] =
        DECL "\n\n<Error><Code>InternalError</Code><Message>We encountered an internal error. "
             "Please try again.</Message><RequestId>656c76696e6727732072657175657374</RequestId>"
             "<HostId>Uuag1LuByRx9e6j5Onimru9pO4ZVKnJ2Qz7/C1NPcfTWAtRPfTaOFg==</HostId></Error>";
    char etag[CK_S3_ETAG_MAX], *big = repeat('e', CK_S3_ETAG_MAX), *doc;
    ck_s3_error e;

    cr_assert_eq(ck_s3xml_complete(none, strlen(none), etag), S3CKPT_EPROTOCOL);
    cr_assert_eq(ck_s3xml_complete(err200, strlen(err200), etag), S3CKPT_EPROTOCOL);
    cr_assert_eq(ck_s3xml_error(err200, strlen(err200), &e), 0, "the caller's check finds it");
    cr_assert_str_eq(e.code, "InternalError");
    doc =
        fmt("<CompleteMultipartUploadResult><ETag>%s</ETag></CompleteMultipartUploadResult>", big);
    cr_assert_eq(ck_s3xml_complete(doc, strlen(doc), etag), S3CKPT_EPROTOCOL);
    cr_assert_str_eq(etag, "");
    free(doc);
    free(big);
}

/* ---- ListObjectsV2 ---------------------------------------------------------------------- */

static const char LIST_PAGE[] =
    DECL "<ListBucketResult xmlns=\"" NS "\">\n"
         "  <Name>bucket</Name>\n  <Prefix>ckpt/</Prefix>\n  <KeyCount>3</KeyCount>\n"
         "  <MaxKeys>3</MaxKeys>\n  <Delimiter>/</Delimiter>\n  <IsTruncated>true</IsTruncated>\n"
         "  <Contents>\n    <Key>ckpt/latest</Key>\n"
         "    <LastModified>2009-10-12T17:50:30.000Z</LastModified>\n"
         "    <ETag>&quot;fba9dede5f27731c9771645a39863328&quot;</ETag>\n"
         "    <Size>434234</Size>\n    <StorageClass>STANDARD</StorageClass>\n  </Contents>\n"
         "  <Contents>\n    <Key>ckpt/step-1.manifest</Key>\n"
         "    <LastModified>2009-10-12T17:50:31.000Z</LastModified>\n"
         "    <ETag>\"1b2cf535f27731c974343645a3985328-2\"</ETag>\n"
         "    <Size>18446744073709551615</Size>\n  </Contents>\n"
         "  <CommonPrefixes>\n    <Prefix>ckpt/data/</Prefix>\n  </CommonPrefixes>\n"
         "  <NextContinuationToken>1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM="
         "</NextContinuationToken>\n"
         "  <StartAfter>ckpt/</StartAfter>\n</ListBucketResult>\n";

Test(s3xml, list_objects_calls_back_contents_and_prefixes_in_order)
{
    rec *r = rec_new();
    int trunc = -1;
    char tok[256];

    cr_assert_eq(list_objects(LIST_PAGE, r, &trunc, tok, sizeof(tok)), S3CKPT_OK);
    cr_assert_eq(r->n, 3);
    cr_assert_str_eq(r->key[0], "ckpt/latest");
    cr_assert_eq(r->size[0], 434234);
    cr_assert_str_eq(r->s1[0], "\"fba9dede5f27731c9771645a39863328\"");
    cr_assert_eq(r->is_prefix[0], 0);
    cr_assert_str_eq(r->key[1], "ckpt/step-1.manifest");
    cr_assert_eq(r->size[1], UINT64_MAX, "the largest u64 is a size");
    cr_assert_str_eq(r->s1[1], "\"1b2cf535f27731c974343645a3985328-2\"");
    cr_assert_str_eq(r->key[2], "ckpt/data/");
    cr_assert_eq(r->is_prefix[2], 1);
    cr_assert_eq(r->size[2], 0);
    cr_assert_str_eq(r->s1[2], "");
    cr_assert_eq(trunc, 1);
    cr_assert_str_eq(tok, "1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM=");
    free(r);
}

Test(s3xml, list_objects_last_page_has_no_token_and_empty_page_no_callbacks)
{
    static const char empty[] =
        DECL "<ListBucketResult xmlns=\"" NS "\"><Name>b</Name><Prefix>none/</Prefix>"
             "<KeyCount>0</KeyCount><MaxKeys>1000</MaxKeys><IsTruncated>false</IsTruncated>"
             "</ListBucketResult>";
    char *last = replace_all(LIST_PAGE, "<IsTruncated>true", "<IsTruncated>false");
    rec *r = rec_new();
    int trunc = -1;
    char tok[256];

    cr_assert_eq(list_objects(last, r, &trunc, tok, sizeof(tok)), S3CKPT_OK);
    cr_assert_eq(trunc, 0);
    cr_assert_str_eq(tok, "", "a token on the last page is not passed on");
    cr_assert_eq(r->n, 3);
    r->n = 0;
    trunc = -1;
    cr_assert_eq(list_objects(empty, r, &trunc, tok, sizeof(tok)), S3CKPT_OK);
    cr_assert_eq(trunc, 0);
    cr_assert_eq(r->n, 0);
    free(last);
    free(r);
}

Test(s3xml, list_objects_truncated_page_needs_a_token_that_fits)
{
    char *notok = replace_all(LIST_PAGE, "NextContinuationToken>", "Other>");
    char *emptytok = replace_all(LIST_PAGE, "1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM=", "");
    rec *r = rec_new();
    int trunc = -1;
    char tok[256];

    cr_assert_eq(list_objects(notok, r, &trunc, tok, sizeof(tok)), S3CKPT_EPROTOCOL);
    cr_assert_eq(list_objects(emptytok, r, &trunc, tok, sizeof(tok)), S3CKPT_EPROTOCOL);
    /* the token is 45 bytes: a 45-byte buffer has no room for the NUL */
    cr_assert_eq(list_objects(LIST_PAGE, r, &trunc, tok, 45), S3CKPT_EPROTOCOL);
    cr_assert_eq(list_objects(LIST_PAGE, r, &trunc, NULL, 0), S3CKPT_EPROTOCOL);
    cr_assert_eq(r->n, 0, "no callbacks for a refused page");
    cr_assert_eq(trunc, -1, "*truncated untouched on failure");
    cr_assert_eq(list_objects(LIST_PAGE, r, &trunc, tok, 46), S3CKPT_OK);
    cr_assert_eq(strlen(tok), 45);
    free(notok);
    free(emptytok);
    free(r);
}

Test(s3xml, list_objects_is_truncated_must_be_true_or_false)
{
    static const char *const vals[] = {"yes", "TRUE", "1", "", " true", "true "};
    rec *r = rec_new();
    int trunc;
    char tok[256], *doc;
    size_t i;

    for (i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
        char with[64];

        snprintf(with, sizeof(with), "<IsTruncated>%s", vals[i]);
        doc = replace_all(LIST_PAGE, "<IsTruncated>true", with);
        cr_assert_eq(list_objects(doc, r, &trunc, tok, sizeof(tok)), S3CKPT_EPROTOCOL, "'%s'",
                     vals[i]);
        free(doc);
    }
    doc = replace_all(LIST_PAGE, "<IsTruncated>true</IsTruncated>", "");
    cr_assert_eq(list_objects(doc, r, &trunc, tok, sizeof(tok)), S3CKPT_EPROTOCOL, "absent");
    free(doc);
    cr_assert_eq(r->n, 0);
    free(r);
}

Test(s3xml, list_objects_sizes_are_strict_digits_without_overflow)
{
    static const char *const bad[] = {"18446744073709551616",
                                      "99999999999999999999",
                                      "-1",
                                      "+1",
                                      "1e3",
                                      " 1",
                                      "1 ",
                                      "0x10",
                                      "",
                                      "12a"};
    rec *r = rec_new();
    int trunc;
    char tok[256], *doc, with[64];
    size_t i;

    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        snprintf(with, sizeof(with), "<Size>%s</Size>", bad[i]);
        doc = replace_all(LIST_PAGE, "<Size>434234</Size>", with);
        cr_assert_eq(list_objects(doc, r, &trunc, tok, sizeof(tok)), S3CKPT_EPROTOCOL, "'%s'",
                     bad[i]);
        free(doc);
    }
    doc = replace_all(LIST_PAGE, "<Size>434234</Size>", "");
    cr_assert_eq(list_objects(doc, r, &trunc, tok, sizeof(tok)), S3CKPT_EPROTOCOL, "absent");
    free(doc);
    cr_assert_eq(r->n, 0);
    doc = replace_all(LIST_PAGE, "<Size>434234</Size>", "<Size>007</Size>");
    cr_assert_eq(list_objects(doc, r, &trunc, tok, sizeof(tok)), S3CKPT_OK);
    cr_assert_eq(r->size[0], 7);
    free(doc);
    free(r);
}

Test(s3xml, list_objects_refuses_the_whole_page_when_a_later_entry_is_bad)
{
    char *doc = replace_all(LIST_PAGE, "<Prefix>ckpt/data/</Prefix>", "<Prefix></Prefix>");
    char *dup = replace_all(LIST_PAGE, "<Key>ckpt/step-1.manifest</Key>",
                            "<Key>ckpt/step-1.manifest</Key><Key>x</Key>");
    char *nokey = replace_all(LIST_PAGE, "<Key>ckpt/step-1.manifest</Key>", "");
    rec *r = rec_new();
    int trunc = -1;
    char tok[256];

    cr_assert_eq(list_objects(doc, r, &trunc, tok, sizeof(tok)), S3CKPT_EPROTOCOL, "empty prefix");
    cr_assert_eq(list_objects(dup, r, &trunc, tok, sizeof(tok)), S3CKPT_EPROTOCOL, "two keys");
    cr_assert_eq(list_objects(nokey, r, &trunc, tok, sizeof(tok)), S3CKPT_EPROTOCOL, "no key");
    cr_assert_eq(r->n, 0, "the good first entry is not reported either");
    free(doc);
    free(dup);
    free(nokey);
    free(r);
}

Test(s3xml, list_objects_returns_the_callback_status_at_once)
{
    rec *r = rec_new();
    int trunc = -1;
    char tok[256];

    r->stop_after = 2;
    cr_assert_eq(list_objects(LIST_PAGE, r, &trunc, tok, sizeof(tok)), S3CKPT_EIO);
    cr_assert_eq(r->n, 2, "no call after the one that failed");
    free(r);
}

Test(s3xml, list_objects_without_callback_only_checks_the_page)
{
    int trunc = -1;
    char tok[256];

    cr_assert_eq(
        ck_s3xml_list_objects(LIST_PAGE, strlen(LIST_PAGE), NULL, NULL, &trunc, tok, sizeof(tok)),
        S3CKPT_OK);
    cr_assert_eq(trunc, 1);
}

Test(s3xml, list_objects_etag_is_optional_but_bounded)
{
    char *noetag =
        replace_all(LIST_PAGE, "<ETag>&quot;fba9dede5f27731c9771645a39863328&quot;</ETag>", "");
    char *big = repeat('f', CK_S3_ETAG_MAX), *with = fmt("<ETag>%s</ETag>", big);
    char *bigetag =
        replace_all(LIST_PAGE, "<ETag>&quot;fba9dede5f27731c9771645a39863328&quot;</ETag>", with);
    rec *r = rec_new();
    int trunc;
    char tok[256];

    cr_assert_eq(list_objects(noetag, r, &trunc, tok, sizeof(tok)), S3CKPT_OK);
    cr_assert_str_eq(r->s1[0], "");
    r->n = 0;
    cr_assert_eq(list_objects(bigetag, r, &trunc, tok, sizeof(tok)), S3CKPT_EPROTOCOL);
    cr_assert_eq(r->n, 0);
    free(noetag);
    free(big);
    free(with);
    free(bigetag);
    free(r);
}

Test(s3xml, list_objects_key_length_is_bounded_not_truncated)
{
    char key[CK_S3_KEY_MAX];
    char *fits = repeat('k', CK_S3_KEY_MAX - 1), *over = repeat('k', CK_S3_KEY_MAX);

    cr_assert_eq(parse_one_key("", fits, key), S3CKPT_OK);
    cr_assert_str_eq(key, fits);
    cr_assert_eq(parse_one_key("", over, key), S3CKPT_EPROTOCOL);
    free(fits);
    free(over);
}

Test(s3xml, list_objects_reads_xml_escapes_cdata_and_char_refs_in_keys)
{
    char key[CK_S3_KEY_MAX];

    cr_assert_eq(parse_one_key("", "a&amp;b&lt;c&gt;d&quot;e&apos;f", key), S3CKPT_OK);
    cr_assert_str_eq(key, "a&b<c>d\"e'f");
    cr_assert_eq(parse_one_key("", "x<![CDATA[<y>&]]>z", key), S3CKPT_OK);
    cr_assert_str_eq(key, "x<y>&z");
    cr_assert_eq(parse_one_key("", "&#x41;&#66;\xc3\xa9", key), S3CKPT_OK);
    cr_assert_str_eq(key, "AB\xc3\xa9");
    cr_assert_eq(parse_one_key("", " a\xc2\xa0 ", key), S3CKPT_OK);
    cr_assert_str_eq(key, " a\xc2\xa0 ", "spaces in keys are kept");
    cr_assert_eq(parse_one_key("", "   ", key), S3CKPT_OK);
    cr_assert_str_eq(key, "   ", "a key of blanks is a key");
    cr_assert_eq(parse_one_key("", "a<!-- c -->b", key), S3CKPT_OK);
    cr_assert_str_eq(key, "ab");
    cr_assert_eq(parse_one_key("", "a<b>c</b>", key), S3CKPT_EPROTOCOL, "element inside a key");
    cr_assert_eq(parse_one_key("", "a&nbsp;", key), S3CKPT_EPROTOCOL, "undeclared entity");
    cr_assert_eq(parse_one_key("", "a&#0;", key), S3CKPT_EPROTOCOL, "NUL char ref");
    cr_assert_eq(parse_one_key("", "a\x01", key), S3CKPT_EPROTOCOL, "control char");
}

/* ---- EncodingType=url ------------------------------------------------------------------- */

#define URL "<EncodingType>url</EncodingType>"

Test(s3xml, url_encoding_decodes_keys_prefixes_and_plus)
{
    static const char doc[] =
        DECL "<ListBucketResult xmlns=\"" NS "\"><Name>b</Name><Prefix>a%2F</Prefix>"
             "<KeyCount>2</KeyCount><MaxKeys>2</MaxKeys><Delimiter>%2F</Delimiter>" URL
             "<IsTruncated>true</IsTruncated><Contents><Key>a%2Fx+y%2B%25%0A%c3%A9</Key>"
             "<Size>5</Size></Contents><CommonPrefixes><Prefix>a%2Fsub%09dir%2F</Prefix>"
             "</CommonPrefixes><NextContinuationToken>tok+%2F</NextContinuationToken>"
             "</ListBucketResult>";
    rec *r = rec_new();
    int trunc = -1;
    char tok[64];

    cr_assert_eq(list_objects(doc, r, &trunc, tok, sizeof(tok)), S3CKPT_OK);
    cr_assert_eq(r->n, 2);
    cr_assert_str_eq(r->key[0], "a/x y+%\n\xc3\xa9");
    cr_assert_str_eq(r->key[1], "a/sub\tdir/");
    cr_assert_eq(r->is_prefix[1], 1);
    cr_assert_str_eq(tok, "tok+%2F", "the continuation token is opaque, never decoded");
    free(r);
}

Test(s3xml, without_url_encoding_percent_and_plus_are_literal)
{
    char key[CK_S3_KEY_MAX];

    cr_assert_eq(parse_one_key("", "a%2Fb+c%00", key), S3CKPT_OK);
    cr_assert_str_eq(key, "a%2Fb+c%00");
}

Test(s3xml, url_encoding_refuses_nul_and_bad_escapes)
{
    static const char *const bad[] = {"a%00b", "a%", "a%4", "a%zz", "%G0", "a%%41", "%0"};
    char key[CK_S3_KEY_MAX];
    size_t i;

    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        cr_assert_eq(parse_one_key(URL, bad[i], key), S3CKPT_EPROTOCOL, "'%s'", bad[i]);
    cr_assert_eq(parse_one_key("<EncodingType>base64</EncodingType>", "a", key), S3CKPT_EPROTOCOL,
                 "an encoding we cannot read");
}

Test(s3xml, url_encoding_bounds_the_decoded_key)
{
    char key[CK_S3_KEY_MAX], *enc = malloc(3 * CK_S3_KEY_MAX + 1);
    size_t i;

    cr_assert_not_null(enc);
    /* CK_S3_KEY_MAX - 1 escaped bytes: 3x longer on the wire, still fits once decoded */
    for (i = 0; i < CK_S3_KEY_MAX - 1; i++)
        memcpy(enc + 3 * i, "%41", 3);
    enc[3 * i] = '\0';
    cr_assert_eq(parse_one_key(URL, enc, key), S3CKPT_OK);
    cr_assert_eq(strlen(key), CK_S3_KEY_MAX - 1);
    cr_assert_eq(key[0], 'A');
    memcpy(enc + 3 * i, "%41", 4);
    cr_assert_eq(parse_one_key(URL, enc, key), S3CKPT_EPROTOCOL);
    free(enc);
}

/* ---- ListMultipartUploads --------------------------------------------------------------- */

static const char UPLOADS_PAGE[] = DECL
    "<ListMultipartUploadsResult xmlns=\"" NS "\">\n"
    "  <Bucket>bucket</Bucket>\n  <KeyMarker></KeyMarker>\n  <UploadIdMarker></UploadIdMarker>\n"
    "  <NextKeyMarker>my-movie.m2ts</NextKeyMarker>\n"
    "  <NextUploadIdMarker>YW55IGlkZWEgd2h5IGVsdmluZydzIHVwbG9hZCBmYWlsZWQ</NextUploadIdMarker>\n"
    "  <MaxUploads>3</MaxUploads>\n  <IsTruncated>true</IsTruncated>\n"
    "  <Upload>\n    <Key>my-divisor</Key>\n"
    "    <UploadId>XMgbGlrZSBlbHZpbmcncyBub3QgaGF2aW5nIG11Y2ggbHVjaw</UploadId>\n"
    "    <Initiator><ID>arn:aws:iam::111122223333:user/user1-11111a31-17b5-4fb7-9df5-b111111f13de"
    "</ID><DisplayName>user1</DisplayName></Initiator>\n"
    "    <Owner><ID>75aa57f09aa0c8caeab4f8c24e99d10f8e7faeebf76c078efc7c6caea54ba06a</ID>"
    "<DisplayName>OwnerDisplayName</DisplayName></Owner>\n"
    "    <StorageClass>STANDARD</StorageClass>\n"
    "    <Initiated>2010-11-10T20:48:33.000Z</Initiated>\n  </Upload>\n"
    "  <Upload>\n    <Key>my-movie.m2ts</Key>\n"
    "    <UploadId>VXBsb2FkIElEIGZvciBlbHZpbmcncyBteS1tb3ZpZS5tMnRzIHVwbG9hZA</UploadId>\n"
    "    <StorageClass>STANDARD</StorageClass>\n"
    "    <Initiated>2010-11-10T20:48:33.000Z</Initiated>\n  </Upload>\n"
    "</ListMultipartUploadsResult>";

static s3ckpt_status list_uploads(const char *doc, rec *r, int *trunc, char *nkm, size_t nkm_len,
                                  char *nuim, size_t nuim_len)
{
    return ck_s3xml_list_uploads(doc, strlen(doc), on_upload, r, trunc, nkm, nkm_len, nuim,
                                 nuim_len);
}

Test(s3xml, list_uploads_reads_uploads_and_both_markers)
{
    rec *r = rec_new();
    int trunc = -1;
    char nkm[CK_S3_KEY_MAX], nuim[CK_S3_UPLOADID_MAX];

    cr_assert_eq(list_uploads(UPLOADS_PAGE, r, &trunc, nkm, sizeof(nkm), nuim, sizeof(nuim)),
                 S3CKPT_OK);
    cr_assert_eq(r->n, 2);
    cr_assert_str_eq(r->key[0], "my-divisor");
    cr_assert_str_eq(r->s1[0], "XMgbGlrZSBlbHZpbmcncyBub3QgaGF2aW5nIG11Y2ggbHVjaw");
    cr_assert_str_eq(r->s2[0], "2010-11-10T20:48:33.000Z");
    cr_assert_str_eq(r->key[1], "my-movie.m2ts");
    cr_assert_eq(trunc, 1);
    cr_assert_str_eq(nkm, "my-movie.m2ts");
    cr_assert_str_eq(nuim, "YW55IGlkZWEgd2h5IGVsdmluZydzIHVwbG9hZCBmYWlsZWQ");
    free(r);
}

Test(s3xml, list_uploads_markers_are_empty_on_the_last_page)
{
    char *doc = replace_all(UPLOADS_PAGE, "<IsTruncated>true", "<IsTruncated>false");
    rec *r = rec_new();
    int trunc = -1;
    char nkm[CK_S3_KEY_MAX], nuim[CK_S3_UPLOADID_MAX];

    cr_assert_eq(list_uploads(doc, r, &trunc, nkm, sizeof(nkm), nuim, sizeof(nuim)), S3CKPT_OK);
    cr_assert_eq(trunc, 0);
    cr_assert_str_eq(nkm, "");
    cr_assert_str_eq(nuim, "");
    free(doc);
    free(r);
}

Test(s3xml, list_uploads_truncated_needs_next_key_marker)
{
    char *nokm = replace_all(UPLOADS_PAGE, "NextKeyMarker>", "X>");
    char *nouim = replace_all(UPLOADS_PAGE, "NextUploadIdMarker>", "X>");
    rec *r = rec_new();
    int trunc = -1;
    char nkm[CK_S3_KEY_MAX], nuim[CK_S3_UPLOADID_MAX];

    cr_assert_eq(list_uploads(nokm, r, &trunc, nkm, sizeof(nkm), nuim, sizeof(nuim)),
                 S3CKPT_EPROTOCOL);
    cr_assert_eq(r->n, 0);
    cr_assert_eq(list_uploads(nouim, r, &trunc, nkm, sizeof(nkm), nuim, sizeof(nuim)), S3CKPT_OK,
                 "the upload-id marker may be left out");
    cr_assert_str_eq(nkm, "my-movie.m2ts");
    cr_assert_str_eq(nuim, "");
    cr_assert_eq(list_uploads(UPLOADS_PAGE, r, &trunc, nkm, 13, nuim, sizeof(nuim)),
                 S3CKPT_EPROTOCOL, "marker does not fit");
    free(nokm);
    free(nouim);
    free(r);
}

Test(s3xml, list_uploads_url_encoding_decodes_keys_and_key_marker_only)
{
    char *a = replace_all(UPLOADS_PAGE, "<IsTruncated>", URL "<IsTruncated>");
    char *b = replace_all(a, "my-movie.m2ts", "my%20movie+%26.m2ts");
    char *doc = replace_all(b, "YW55IGlkZWEgd2h5IGVsdmluZydzIHVwbG9hZCBmYWlsZWQ", "id%2B1");
    rec *r = rec_new();
    int trunc = -1;
    char nkm[CK_S3_KEY_MAX], nuim[CK_S3_UPLOADID_MAX];

    cr_assert_eq(list_uploads(doc, r, &trunc, nkm, sizeof(nkm), nuim, sizeof(nuim)), S3CKPT_OK);
    cr_assert_str_eq(r->key[1], "my movie &.m2ts");
    cr_assert_str_eq(nkm, "my movie &.m2ts");
    cr_assert_str_eq(nuim, "id%2B1", "upload ids are not url-encoded");
    free(a);
    free(b);
    free(doc);
    free(r);
}

Test(s3xml, list_uploads_refuses_uploads_missing_fields)
{
    static const char *const cut[] = {"<Key>my-divisor</Key>",
                                      "<UploadId>XMgbGlrZSBlbHZpbmcncyBub3QgaGF2aW5nIG11Y2ggbHVjaw"
                                      "</UploadId>",
                                      "<Initiated>2010-11-10T20:48:33.000Z</Initiated>\n  </Upload>"
                                      "\n  <Upload>"};
    rec *r = rec_new();
    int trunc = -1;
    char nkm[CK_S3_KEY_MAX], nuim[CK_S3_UPLOADID_MAX], *doc;
    size_t i;

    for (i = 0; i < sizeof(cut) / sizeof(cut[0]); i++) {
        doc = replace_all(UPLOADS_PAGE, cut[i], i == 2 ? "</Upload><Upload>" : "");
        cr_assert_eq(list_uploads(doc, r, &trunc, nkm, sizeof(nkm), nuim, sizeof(nuim)),
                     S3CKPT_EPROTOCOL, "cut %zu", i);
        free(doc);
    }
    cr_assert_eq(r->n, 0);
    free(r);
}

/* ---- ListParts -------------------------------------------------------------------------- */

static const char PARTS_PAGE[] =
    DECL "<ListPartsResult xmlns=\"" NS "\">\n  <Bucket>example-bucket</Bucket>\n"
         "  <Key>example-object</Key>\n"
         "  <UploadId>XXBsb2FkIElEIGZvciBlbHZpbmcncyVcdS1tb3ZpZS5tMnRzEEEwbG9hZA</UploadId>\n"
         "  <StorageClass>STANDARD</StorageClass>\n  <PartNumberMarker>1</PartNumberMarker>\n"
         "  <NextPartNumberMarker>3</NextPartNumberMarker>\n  <MaxParts>2</MaxParts>\n"
         "  <IsTruncated>true</IsTruncated>\n"
         "  <Part>\n    <PartNumber>2</PartNumber>\n"
         "    <LastModified>2010-11-10T20:48:34.000Z</LastModified>\n"
         "    <ETag>\"7778aef83f66abc1fa1e8477f296d394\"</ETag>\n    <Size>10485760</Size>\n"
         "  </Part>\n  <Part>\n    <PartNumber>3</PartNumber>\n"
         "    <LastModified>2010-11-10T20:48:33.000Z</LastModified>\n"
         "    <ETag>\"aaaa18db4cc2f85cedef654fccc4a4x8\"</ETag>\n    <Size>10485760</Size>\n"
         "  </Part>\n</ListPartsResult>";

static s3ckpt_status list_parts(const char *doc, rec *r, int *trunc, unsigned *marker)
{
    return ck_s3xml_list_parts(doc, strlen(doc), on_part, r, trunc, marker);
}

Test(s3xml, list_parts_reads_parts_and_next_marker)
{
    rec *r = rec_new();
    int trunc = -1;
    unsigned marker = 99;

    cr_assert_eq(list_parts(PARTS_PAGE, r, &trunc, &marker), S3CKPT_OK);
    cr_assert_eq(r->n, 2);
    cr_assert_eq(r->number[0], 2);
    cr_assert_eq(r->size[0], 10485760);
    cr_assert_str_eq(r->s1[0], "\"7778aef83f66abc1fa1e8477f296d394\"");
    cr_assert_eq(r->number[1], 3);
    cr_assert_eq(trunc, 1);
    cr_assert_eq(marker, 3);
    free(r);
}

Test(s3xml, list_parts_marker_is_zero_on_the_last_page)
{
    char *doc = replace_all(PARTS_PAGE, "<IsTruncated>true", "<IsTruncated>false");
    rec *r = rec_new();
    int trunc = -1;
    unsigned marker = 99;

    cr_assert_eq(list_parts(doc, r, &trunc, &marker), S3CKPT_OK);
    cr_assert_eq(trunc, 0);
    cr_assert_eq(marker, 0);
    free(doc);
    free(r);
}

Test(s3xml, list_parts_numbers_must_be_1_to_10000)
{
    static const char *const bad[] = {"0", "10001", "4294967298", "-1", "", "2x"};
    rec *r = rec_new();
    int trunc;
    unsigned marker;
    char *doc, with[64];
    size_t i;

    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        snprintf(with, sizeof(with), "<PartNumber>%s</PartNumber>", bad[i]);
        doc = replace_all(PARTS_PAGE, "<PartNumber>3</PartNumber>", with);
        cr_assert_eq(list_parts(doc, r, &trunc, &marker), S3CKPT_EPROTOCOL, "'%s'", bad[i]);
        free(doc);
        snprintf(with, sizeof(with), "<NextPartNumberMarker>%s</NextPartNumberMarker>", bad[i]);
        doc = replace_all(PARTS_PAGE, "<NextPartNumberMarker>3</NextPartNumberMarker>", with);
        cr_assert_eq(list_parts(doc, r, &trunc, &marker), S3CKPT_EPROTOCOL, "marker '%s'", bad[i]);
        free(doc);
    }
    cr_assert_eq(r->n, 0);
    doc = replace_all(PARTS_PAGE, "<PartNumber>3</PartNumber>", "<PartNumber>10000</PartNumber>");
    cr_assert_eq(list_parts(doc, r, &trunc, &marker), S3CKPT_OK);
    cr_assert_eq(r->number[1], 10000);
    free(doc);
    free(r);
}

Test(s3xml, list_parts_truncated_needs_a_marker_and_parts_need_size_and_etag)
{
    static const char *const cut[] = {"<NextPartNumberMarker>3</NextPartNumberMarker>",
                                      "<Size>10485760</Size>\n  </Part>\n  <Part>",
                                      "<ETag>\"7778aef83f66abc1fa1e8477f296d394\"</ETag>"};
    rec *r = rec_new();
    int trunc;
    unsigned marker;
    char *doc;
    size_t i;

    for (i = 0; i < sizeof(cut) / sizeof(cut[0]); i++) {
        doc = replace_all(PARTS_PAGE, cut[i], i == 1 ? "</Part><Part>" : "");
        cr_assert_eq(list_parts(doc, r, &trunc, &marker), S3CKPT_EPROTOCOL, "cut %zu", i);
        free(doc);
    }
    cr_assert_eq(r->n, 0);
    free(r);
}

/* ---- DeleteObjects result --------------------------------------------------------------- */

static const char DELETE_RESULT[] =
    DECL "<DeleteResult xmlns=\"" NS "\">\n"
         "  <Deleted>\n    <Key>sample1.txt</Key>\n  </Deleted>\n"
         "  <Error>\n    <Key>sample2.txt</Key>\n    <Code>AccessDenied</Code>\n"
         "    <Message>Access Denied</Message>\n  </Error>\n"
         "  <Error><Key>a&amp;b</Key><VersionId>null</VersionId><Code>InternalError</Code>"
         "<Message></Message></Error>\n</DeleteResult>";

static s3ckpt_status delete_result(const char *doc, rec *r)
{
    return ck_s3xml_delete_result(doc, strlen(doc), on_delete_err, r);
}

Test(s3xml, delete_result_reports_errors_and_skips_deleted)
{
    rec *r = rec_new();

    cr_assert_eq(delete_result(DELETE_RESULT, r), S3CKPT_OK);
    cr_assert_eq(r->n, 2);
    cr_assert_str_eq(r->key[0], "sample2.txt");
    cr_assert_str_eq(r->s1[0], "AccessDenied");
    cr_assert_str_eq(r->s2[0], "Access Denied");
    cr_assert_str_eq(r->key[1], "a&b");
    cr_assert_str_eq(r->s1[1], "InternalError");
    cr_assert_str_eq(r->s2[1], "", "RGW's empty message");
    free(r);
}

Test(s3xml, delete_result_quiet_success_is_empty)
{
    static const char doc[] = DECL "<DeleteResult xmlns=\"" NS "\"></DeleteResult>";
    static const char selfclosed[] = "<DeleteResult/>";
    rec *r = rec_new();

    cr_assert_eq(delete_result(doc, r), S3CKPT_OK);
    cr_assert_eq(delete_result(selfclosed, r), S3CKPT_OK);
    cr_assert_eq(r->n, 0);
    free(r);
}

Test(s3xml, delete_result_errors_need_key_and_code)
{
    char *nocode = replace_all(DELETE_RESULT, "<Code>InternalError</Code>", "");
    char *nokey = replace_all(DELETE_RESULT, "<Key>sample2.txt</Key>", "");
    char *big = repeat('C', CK_S3_CODE_MAX), *with = fmt("<Code>%s</Code>", big);
    char *bigcode = replace_all(DELETE_RESULT, "<Code>InternalError</Code>", with);
    rec *r = rec_new();

    cr_assert_eq(delete_result(nocode, r), S3CKPT_EPROTOCOL);
    cr_assert_eq(delete_result(nokey, r), S3CKPT_EPROTOCOL);
    cr_assert_eq(delete_result(bigcode, r), S3CKPT_EPROTOCOL);
    cr_assert_eq(r->n, 0);
    cr_assert_eq(delete_result(AWS_ERROR, r), S3CKPT_EPROTOCOL, "an <Error> document");
    free(nocode);
    free(nokey);
    free(big);
    free(with);
    free(bigcode);
    free(r);
}

Test(s3xml, delete_result_decodes_url_encoded_keys)
{
    char *a = replace_all(DELETE_RESULT, "<Deleted>", URL "<Deleted>");
    char *doc = replace_all(a, "sample2.txt", "dir%2Fsample+2%0D.txt");
    rec *r = rec_new();

    cr_assert_eq(delete_result(doc, r), S3CKPT_OK);
    cr_assert_str_eq(r->key[0], "dir/sample 2\r.txt");
    free(a);
    free(doc);
    free(r);
}

/* ---- hostile documents ------------------------------------------------------------------ */

static const char BILLION_LAUGHS[] =
    "<?xml version=\"1.0\"?>\n<!DOCTYPE lolz [\n <!ENTITY lol \"lol\">\n"
    " <!ENTITY lol1 \"&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;\">\n"
    " <!ENTITY lol2 \"&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;\">\n"
    " <!ENTITY lol3 \"&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;\">\n"
    " <!ENTITY lol4 \"&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;\">\n"
    " <!ENTITY lol5 \"&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;\">\n"
    " <!ENTITY lol6 \"&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;\">\n"
    " <!ENTITY lol7 \"&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;\">\n"
    " <!ENTITY lol8 \"&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;\">\n"
    " <!ENTITY lol9 \"&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;\">\n"
    "]>\n<ListBucketResult><IsTruncated>false</IsTruncated><Contents><Key>&lol9;</Key>"
    "<Size>1</Size></Contents></ListBucketResult>";

Test(s3xml, billion_laughs_is_refused_without_expansion, .timeout = 10)
{
    rec *r = rec_new();
    int trunc = -1;
    char tok[16];
    char *err = replace_all(BILLION_LAUGHS,
                            "<ListBucketResult><IsTruncated>false</IsTruncated>"
                            "<Contents><Key>&lol9;</Key><Size>1</Size></Contents>"
                            "</ListBucketResult>",
                            "<Error><Code>&lol9;</Code><Message>&lol9;</Message></Error>");
    ck_s3_error e;
    struct timespec t0, t1;

    clock_gettime(CLOCK_MONOTONIC, &t0);
    cr_assert_eq(list_objects(BILLION_LAUGHS, r, &trunc, tok, sizeof(tok)), S3CKPT_EPROTOCOL);
    cr_assert_eq(r->n, 0);
    cr_assert_eq(ck_s3xml_error(err, strlen(err), &e), -1);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    cr_assert_lt((t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000, 1000,
                 "refused at once, not after expanding");
    free(err);
    free(r);
}

Test(s3xml, internal_entity_declarations_are_refused)
{
    static const char doc[] = "<!DOCTYPE Error [<!ENTITY c \"NoSuchKey\">]>"
                              "<Error><Code>&c;</Code></Error>";
    static const char plain_doctype[] = "<!DOCTYPE Error><Error><Code>NoSuchKey</Code></Error>";
    ck_s3_error e;

    cr_assert_eq(ck_s3xml_error(doc, strlen(doc), &e), -1);
    cr_assert_eq(ck_s3xml_error(plain_doctype, strlen(plain_doctype), &e), -1,
                 "S3 never sends a DOCTYPE");
}

/* A listening socket on 127.0.0.1; *port gets its port. */
static int listener(int *port)
{
    struct sockaddr_in a;
    socklen_t alen = sizeof(a);
    int fd = socket(AF_INET, SOCK_STREAM, 0);

    cr_assert_geq(fd, 0);
    memset(&a, 0, sizeof(a));
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    cr_assert_eq(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
    cr_assert_eq(listen(fd, 8), 0);
    cr_assert_eq(getsockname(fd, (struct sockaddr *)&a, &alen), 0);
    *port = ntohs(a.sin_port);
    cr_assert_eq(fcntl(fd, F_SETFL, O_NONBLOCK), 0);
    return fd;
}

Test(s3xml, external_entities_and_dtds_are_never_fetched)
{
    char path[] = "/tmp/s3xml-secret-XXXXXX", *docs[4];
    int port, lfd = listener(&port), fd = mkstemp(path), c;
    ck_s3_error e;
    char id[CK_S3_UPLOADID_MAX];
    size_t i;

    cr_assert_geq(fd, 0);
    cr_assert_eq(write(fd, "SECRET", 6), 6);
    close(fd);
    docs[0] = fmt("<!DOCTYPE Error [<!ENTITY x SYSTEM \"file://%s\">]>"
                  "<Error><Code>&x;</Code><Message>&x;</Message></Error>",
                  path);
    docs[1] = fmt("<!DOCTYPE Error [<!ENTITY x SYSTEM \"http://127.0.0.1:%d/e\">]>"
                  "<Error><Code>&x;</Code></Error>",
                  port);
    docs[2] = fmt("<!DOCTYPE Error SYSTEM \"http://127.0.0.1:%d/x.dtd\">"
                  "<Error><Code>A</Code></Error>",
                  port);
    docs[3] = fmt("<!DOCTYPE InitiateMultipartUploadResult [<!ENTITY %% p SYSTEM "
                  "\"http://127.0.0.1:%d/p\"> %%p;]><InitiateMultipartUploadResult><UploadId>"
                  "u</UploadId></InitiateMultipartUploadResult>",
                  port);
    for (i = 0; i < 3; i++) {
        memset(&e, 0, sizeof(e));
        cr_assert_eq(ck_s3xml_error(docs[i], strlen(docs[i]), &e), -1, "doc %zu", i);
        cr_assert_null(strstr(e.code, "SECRET"));
        cr_assert_null(strstr(e.message, "SECRET"));
    }
    cr_assert_eq(ck_s3xml_initiate(docs[3], strlen(docs[3]), id), S3CKPT_EPROTOCOL);
    c = accept(lfd, NULL, NULL);
    cr_assert_eq(c, -1, "nothing connected to the listener");
    cr_assert(errno == EAGAIN || errno == EWOULDBLOCK);
    for (i = 0; i < 4; i++)
        free(docs[i]);
    close(lfd);
    unlink(path);
}

Test(s3xml, bodies_over_the_cap_are_refused)
{
    static const char head[] = "<InitiateMultipartUploadResult><UploadId>u</UploadId>";
    static const char tail[] = "</InitiateMultipartUploadResult>";
    static const char filler[] = "<Bucket>a-bucket-name</Bucket>"; /* an ignored element */
    size_t n = CK_S3XML_BODY_MAX, o = sizeof(head) - 1;
    char *body = malloc(n + 1), id[CK_S3_UPLOADID_MAX];

    /* many small elements, as in a long listing page, filling exactly the cap */
    cr_assert_not_null(body);
    memcpy(body, head, o);
    while (o + sizeof(filler) - 1 + sizeof(tail) - 1 <= n) {
        memcpy(body + o, filler, sizeof(filler) - 1);
        o += sizeof(filler) - 1;
    }
    memset(body + o, ' ', n - o - (sizeof(tail) - 1));
    memcpy(body + n - (sizeof(tail) - 1), tail, sizeof(tail) - 1);
    body[n] = ' ';
    cr_assert_eq(ck_s3xml_initiate(body, n, id), S3CKPT_OK, "exactly the cap is fine");
    cr_assert_str_eq(id, "u");
    cr_assert_eq(ck_s3xml_initiate(body, n + 1, id), S3CKPT_EPROTOCOL, "one byte more");
    cr_assert_str_eq(id, "");
    free(body);
}

Test(s3xml, garbage_never_parses)
{
    unsigned char buf[512];
    uint32_t x = 12345;
    rec *r = rec_new();
    int trunc, round;
    unsigned marker;
    char tok[64], nkm[64], nuim[64], id[CK_S3_UPLOADID_MAX];
    ck_s3_error e;
    size_t i;

    for (round = 0; round < 200; round++) {
        for (i = 0; i < sizeof(buf); i++) {
            x = x * 1103515245u + 12345u;
            buf[i] = (unsigned char)(x >> 16);
        }
        if (round % 2)
            buf[0] = '<'; /* get past the first byte sometimes */
        cr_assert_eq(ck_s3xml_error((char *)buf, sizeof(buf), &e), -1);
        cr_assert_eq(ck_s3xml_initiate((char *)buf, sizeof(buf), id), S3CKPT_EPROTOCOL);
        cr_assert_eq(
            ck_s3xml_list_objects((char *)buf, sizeof(buf), on_obj, r, &trunc, tok, sizeof(tok)),
            S3CKPT_EPROTOCOL);
        cr_assert_eq(ck_s3xml_list_uploads((char *)buf, sizeof(buf), on_upload, r, &trunc, nkm,
                                           sizeof(nkm), nuim, sizeof(nuim)),
                     S3CKPT_EPROTOCOL);
        cr_assert_eq(ck_s3xml_list_parts((char *)buf, sizeof(buf), on_part, r, &trunc, &marker),
                     S3CKPT_EPROTOCOL);
        cr_assert_eq(ck_s3xml_delete_result((char *)buf, sizeof(buf), on_delete_err, r),
                     S3CKPT_EPROTOCOL);
    }
    cr_assert_eq(r->n, 0);
    free(r);
}

Test(s3xml, parsers_refuse_the_wrong_document_type)
{
    rec *r = rec_new();
    int trunc;
    unsigned marker;
    char tok[64], nkm[64], nuim[64];

    cr_assert_eq(list_objects(PARTS_PAGE, r, &trunc, tok, sizeof(tok)), S3CKPT_EPROTOCOL);
    cr_assert_eq(list_uploads(LIST_PAGE, r, &trunc, nkm, sizeof(nkm), nuim, sizeof(nuim)),
                 S3CKPT_EPROTOCOL);
    cr_assert_eq(list_parts(UPLOADS_PAGE, r, &trunc, &marker), S3CKPT_EPROTOCOL);
    cr_assert_eq(delete_result(LIST_PAGE, r), S3CKPT_EPROTOCOL);
    cr_assert_eq(list_objects(RGW_ERROR, r, &trunc, tok, sizeof(tok)), S3CKPT_EPROTOCOL);
    cr_assert_eq(r->n, 0);
    free(r);
}

/* ---- request bodies --------------------------------------------------------------------- */

/* libxml2's reading of a body we built: the text of every element named name, in order. */
static int xml_texts(const ck_buf *b, const char *name, char out[][CK_S3_KEY_MAX], int max)
{
    xmlDoc *doc = xmlReadMemory(b->data, (int)b->len, NULL, NULL, XML_PARSE_NONET);
    xmlNode *root, *c, *k;
    int n = 0;

    cr_assert_not_null(doc, "the body is well-formed XML");
    root = xmlDocGetRootElement(doc);
    cr_assert_not_null(root->ns, "the S3 namespace is declared");
    cr_assert_str_eq((const char *)root->ns->href, NS);
    for (c = root->children; c; c = c->next) {
        for (k = c->children; k; k = k->next) {
            if (k->type == XML_ELEMENT_NODE && strcmp((const char *)k->name, name) == 0) {
                xmlChar *t = xmlNodeGetContent(k);

                cr_assert_lt(n, max);
                snprintf(out[n++], CK_S3_KEY_MAX, "%s", (const char *)t);
                xmlFree(t);
            }
        }
    }
    xmlFreeDoc(doc);
    return n;
}

Test(s3xml, complete_body_lists_parts_in_order_with_escaped_etags)
{
    ck_s3_part parts[3] = {{1, "\"a54357aff0632cce46d942af68356b38\"", ""},
                           {2, "\"0c78aef83f66abc1fa1e8477f296d394\"", ""},
                           {10000, "\"acbd18db4cc2f85cedef654fccc4a4d8-3\"", ""}};
    static char texts[3][CK_S3_KEY_MAX];
    ck_buf b;

    ck_buf_init(&b, 1 << 20);
    cr_assert_eq(ck_s3xml_complete_body(&b, parts, 3), S3CKPT_OK);
    cr_assert_not_null(strstr(b.data, "<CompleteMultipartUpload xmlns=\"" NS "\">"));
    cr_assert_not_null(strstr(b.data, "<Part><PartNumber>1</PartNumber><ETag>&quot;"
                                      "a54357aff0632cce46d942af68356b38&quot;</ETag></Part>"));
    cr_assert_eq(xml_texts(&b, "PartNumber", texts, 3), 3);
    cr_assert_str_eq(texts[2], "10000");
    cr_assert_eq(xml_texts(&b, "ETag", texts, 3), 3);
    cr_assert_str_eq(texts[0], parts[0].etag);
    cr_assert_str_eq(texts[2], parts[2].etag);
    ck_buf_cleanup(&b);
}

/* Turns a CompleteMultipartUpload body into a ListPartsResult and reads it back. */
Test(s3xml, complete_body_round_trips_through_list_parts)
{
    ck_s3_part parts[2] = {{3, "\"<&>'\\\"\"", ""}, {7, "W/\"x&y\"", ""}};
    ck_buf b;
    char *a, *c, *doc;
    rec *r = rec_new();
    int trunc;
    unsigned marker;

    ck_buf_init(&b, 1 << 20);
    cr_assert_eq(ck_s3xml_complete_body(&b, parts, 2), S3CKPT_OK);
    a = replace_all(b.data, "<CompleteMultipartUpload xmlns=\"" NS "\">",
                    "<ListPartsResult><IsTruncated>false</IsTruncated>");
    c = replace_all(a, "</PartNumber>", "</PartNumber><Size>5</Size>");
    doc = replace_all(c, "</CompleteMultipartUpload>", "</ListPartsResult>");
    cr_assert_eq(list_parts(doc, r, &trunc, &marker), S3CKPT_OK, "%s", doc);
    cr_assert_eq(r->n, 2);
    cr_assert_eq(r->number[0], 3);
    cr_assert_str_eq(r->s1[0], parts[0].etag);
    cr_assert_eq(r->number[1], 7);
    cr_assert_str_eq(r->s1[1], parts[1].etag);
    free(a);
    free(c);
    free(doc);
    free(r);
    ck_buf_cleanup(&b);
}

Test(s3xml, complete_body_refuses_bad_part_lists_and_leaves_the_buffer)
{
    ck_s3_part p[3] = {{1, "\"a\"", ""}, {2, "\"b\"", ""}, {3, "\"c\"", ""}};
    ck_buf b;

    ck_buf_init(&b, 1 << 20);
    cr_assert_eq(ck_buf_append(&b, "prefix", 6), S3CKPT_OK);
    cr_assert_eq(ck_s3xml_complete_body(&b, p, 0), S3CKPT_EINVAL, "no parts");
    cr_assert_eq(ck_s3xml_complete_body(&b, NULL, 1), S3CKPT_EINVAL);
    p[1].number = 1;
    cr_assert_eq(ck_s3xml_complete_body(&b, p, 3), S3CKPT_EINVAL, "repeated number");
    p[1].number = 4;
    cr_assert_eq(ck_s3xml_complete_body(&b, p, 3), S3CKPT_EINVAL, "out of order");
    p[1].number = 2;
    p[0].number = 0;
    cr_assert_eq(ck_s3xml_complete_body(&b, p, 3), S3CKPT_EINVAL, "part 0");
    p[0].number = 1;
    p[2].number = 10001;
    cr_assert_eq(ck_s3xml_complete_body(&b, p, 3), S3CKPT_EINVAL, "part 10001");
    p[2].number = 3;
    p[2].etag[0] = '\0';
    cr_assert_eq(ck_s3xml_complete_body(&b, p, 3), S3CKPT_EINVAL, "empty etag");
    snprintf(p[2].etag, sizeof(p[2].etag), "\"a\nb\"");
    cr_assert_eq(ck_s3xml_complete_body(&b, p, 3), S3CKPT_EINVAL, "control char");
    memset(p[2].etag, 'e', sizeof(p[2].etag));
    cr_assert_eq(ck_s3xml_complete_body(&b, p, 3), S3CKPT_EINVAL, "etag without its NUL");
    cr_assert_eq(b.len, 6);
    cr_assert_str_eq(b.data, "prefix");
    snprintf(p[2].etag, sizeof(p[2].etag), "\"c\"");
    cr_assert_eq(ck_s3xml_complete_body(&b, p, 3), S3CKPT_OK);
    cr_assert_eq(strncmp(b.data, "prefix<?xml", 11), 0, "appended after what was there");
    ck_buf_cleanup(&b);
}

Test(s3xml, complete_body_over_the_buffer_cap_leaves_the_buffer)
{
    ck_s3_part p[2] = {{1, "\"a\"", ""}, {2, "\"b\"", ""}};
    ck_buf b;

    ck_buf_init(&b, 150);
    cr_assert_eq(ck_buf_append(&b, "x", 1), S3CKPT_OK);
    cr_assert_eq(ck_s3xml_complete_body(&b, p, 2), S3CKPT_EINVAL);
    cr_assert_eq(b.len, 1);
    cr_assert_str_eq(b.data, "x");
    ck_buf_cleanup(&b);
}

Test(s3xml, delete_body_escapes_keys_and_sets_quiet)
{
    const char *keys[] = {"a&b<c>d", "q\"u'o", "plain/key.bin"};
    ck_buf b;

    ck_buf_init(&b, 1 << 20);
    cr_assert_eq(ck_s3xml_delete_body(&b, keys, 3, 1), S3CKPT_OK);
    cr_assert_not_null(strstr(b.data, "<Delete xmlns=\"" NS "\"><Quiet>true</Quiet>"));
    cr_assert_not_null(strstr(b.data, "<Object><Key>a&amp;b&lt;c&gt;d</Key></Object>"));
    cr_assert_not_null(strstr(b.data, "<Key>q&quot;u&apos;o</Key>"));
    cr_assert_not_null(strstr(b.data, "<Key>plain/key.bin</Key>"));
    cr_assert_null(strstr(b.data, "a&b"), "no raw ampersand");
    ck_buf_cleanup(&b);
    ck_buf_init(&b, 1 << 20);
    cr_assert_eq(ck_s3xml_delete_body(&b, keys, 1, 0), S3CKPT_OK);
    cr_assert_null(strstr(b.data, "Quiet"), "not quiet: all results reported");
    ck_buf_cleanup(&b);
}

Test(s3xml, delete_body_keys_round_trip_through_libxml2_and_delete_result)
{
    const char *keys[] = {"a&b<c>d", "]]>&amp;", "\xe2\x82\xac/\xf0\x9f\x98\x80 sp+%", "'\"",
                          "\x7f"};
    static char texts[5][CK_S3_KEY_MAX];
    ck_buf b;
    char *a, *c, *doc;
    rec *r = rec_new();
    int i;

    ck_buf_init(&b, 1 << 20);
    cr_assert_eq(ck_s3xml_delete_body(&b, keys, 5, 1), S3CKPT_OK);
    cr_assert_eq(xml_texts(&b, "Key", texts, 5), 5);
    for (i = 0; i < 5; i++)
        cr_assert_str_eq(texts[i], keys[i]);
    /* the same escaped keys, as a DeleteResult listing them all as errors */
    a = replace_all(b.data, "<Delete xmlns=\"" NS "\"><Quiet>true</Quiet>", "<DeleteResult>");
    c = replace_all(a, "</Key></Object>", "</Key><Code>X</Code></Error>");
    doc = replace_all(c, "<Object>", "<Error>");
    free(a);
    a = replace_all(doc, "</Delete>", "</DeleteResult>");
    cr_assert_eq(delete_result(a, r), S3CKPT_OK, "%s", a);
    cr_assert_eq(r->n, 5);
    for (i = 0; i < 5; i++)
        cr_assert_str_eq(r->key[i], keys[i]);
    free(a);
    free(c);
    free(doc);
    free(r);
    ck_buf_cleanup(&b);
}

Test(s3xml, delete_body_refuses_keys_xml_cannot_carry)
{
    char *longest = repeat('k', 1024), *over = repeat('k', 1025);
    const char *bad[] = {"",
                         "a\nb",
                         "a\tb",
                         "a\rb",
                         "\x01",
                         "\xff",
                         "\xc3",
                         "\xc0\xaf",
                         "\xed\xa0\x80",
                         "\xef\xbf\xbe",
                         "\xf4\x90\x80\x80",
                         over};
    const char *ok[] = {longest, "\xef\xbf\xbd", "\xf4\x8f\xbf\xbf"};
    const char *none[] = {NULL};
    const char **many = calloc(1001, sizeof(*many));
    ck_buf b;
    size_t i;

    cr_assert_not_null(many);
    ck_buf_init(&b, 1 << 22);
    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        cr_assert_eq(ck_s3xml_delete_body(&b, &bad[i], 1, 1), S3CKPT_EINVAL, "bad key %zu", i);
    cr_assert_eq(ck_s3xml_delete_body(&b, none, 1, 1), S3CKPT_EINVAL);
    cr_assert_eq(ck_s3xml_delete_body(&b, ok, 0, 1), S3CKPT_EINVAL, "no keys");
    cr_assert_eq(b.len, 0);
    for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
        cr_assert_eq(ck_s3xml_delete_body(&b, &ok[i], 1, 1), S3CKPT_OK, "good key %zu", i);
    for (i = 0; i < 1001; i++)
        many[i] = "k";
    cr_assert_eq(ck_s3xml_delete_body(&b, many, 1001, 1), S3CKPT_EINVAL, "over 1000 keys");
    cr_assert_eq(ck_s3xml_delete_body(&b, many, 1000, 1), S3CKPT_OK);
    free(many);
    free(longest);
    free(over);
    ck_buf_cleanup(&b);
}

Test(s3xml, complete_body_lists_a_parts_crc32c_only_when_it_has_one)
{
    ck_s3_part p[2] = {{1, "\"a\"", "yZRlqg=="}, {2, "\"b\"", ""}};
    ck_buf b;

    ck_buf_init(&b, 1 << 16);
    cr_assert_eq(ck_s3xml_complete_body(&b, p, 2), S3CKPT_OK);
    cr_assert_not_null(strstr(b.data, "<ETag>&quot;a&quot;</ETag><ChecksumCRC32C>yZRlqg=="
                                      "</ChecksumCRC32C></Part>"),
                       "%s", b.data);
    cr_assert_not_null(strstr(b.data, "<ETag>&quot;b&quot;</ETag></Part>"), "%s", b.data);
    ck_buf_cleanup(&b);
}
