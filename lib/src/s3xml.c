/*
 * s3xml - the S3 XML dialect, both ways. Response bodies come from the network, so they are
 * parsed as hostile input: a capped length, libxml2 from memory with no network, no entity
 * substitution and no DTD at all (the SAX hooks for a DOCTYPE or an entity declaration stop the
 * parser, so billion-laughs and external entities never get expanded or fetched), libxml2's
 * default depth and size limits (no XML_PARSE_HUGE), and every value copied into a fixed-size
 * field with its length checked. Each parser reads the whole tree once to validate it and only
 * then walks it again to call back, so a caller never acts on half of a broken page.
 * Request bodies are built by hand (they are tiny and fixed in shape), escaping every value and
 * refusing what XML 1.0 cannot carry.
 */
#include "s3xml.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <libxml/parser.h>
#include <libxml/tree.h>

#define S3_NS "http://s3.amazonaws.com/doc/2006-03-01/"
#define XML_DECL "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
#define S3_KEY_LIMIT 1024 /* bytes in an S3 key */

void ck_s3xml_global_init(void)
{
    xmlInitParser();
}

/* ---- parsing ---------------------------------------------------------------------------- */

/* SAX hooks: any DOCTYPE or entity declaration ends the parse (S3 never sends one). */
static void refuse_subset(void *ctx, const xmlChar *name, const xmlChar *external_id,
                          const xmlChar *system_id)
{
    (void)name;
    (void)external_id;
    (void)system_id;
    xmlStopParser((xmlParserCtxtPtr)ctx);
}

static void refuse_entity(void *ctx, const xmlChar *name, int type, const xmlChar *public_id,
                          const xmlChar *system_id, xmlChar *content)
{
    (void)name;
    (void)type;
    (void)public_id;
    (void)system_id;
    (void)content;
    xmlStopParser((xmlParserCtxtPtr)ctx);
}

static int is_elem(const xmlNode *n, const char *name)
{
    return n->type == XML_ELEMENT_NODE && strcmp((const char *)n->name, name) == 0;
}

/* Parses body into *doc; EPROTOCOL unless it is well-formed, DTD-free XML whose root element
 * has the local name root_name. */
static s3ckpt_status parse(const char *body, size_t len, const char *root_name, xmlDoc **doc,
                           const xmlNode **root)
{
    const int opts = XML_PARSE_NONET | XML_PARSE_NOCDATA | XML_PARSE_NOERROR | XML_PARSE_NOWARNING;
    xmlParserCtxtPtr ctxt;
    const xmlNode *r;

    *doc = NULL;
    if (!body || len == 0 || len > CK_S3XML_BODY_MAX || len > INT_MAX)
        return S3CKPT_EPROTOCOL;
    ctxt = xmlNewParserCtxt();
    if (!ctxt || !ctxt->sax) {
        xmlFreeParserCtxt(ctxt);
        return S3CKPT_ENOMEM;
    }
    ctxt->sax->internalSubset = refuse_subset;
    ctxt->sax->externalSubset = refuse_subset;
    ctxt->sax->entityDecl = refuse_entity;
    *doc = xmlCtxtReadMemory(ctxt, body, (int)len, NULL, "UTF-8", opts);
    xmlFreeParserCtxt(ctxt);
    if (!*doc)
        return S3CKPT_EPROTOCOL;
    r = xmlDocGetRootElement(*doc);
    if ((*doc)->intSubset || (*doc)->extSubset || !r || !is_elem(r, root_name)) {
        xmlFreeDoc(*doc);
        *doc = NULL;
        return S3CKPT_EPROTOCOL;
    }
    *root = r;
    return S3CKPT_OK;
}

/* Total bytes of n's text; EPROTOCOL when n has element children (S3 values are plain text;
 * comments and processing instructions are skipped as XML says). */
static s3ckpt_status text_len(const xmlNode *n, size_t *len)
{
    const xmlNode *c;

    *len = 0;
    for (c = n->children; c; c = c->next) {
        if (c->type == XML_TEXT_NODE || c->type == XML_CDATA_SECTION_NODE) {
            if (c->content)
                *len += strlen((const char *)c->content);
        } else if (c->type != XML_COMMENT_NODE && c->type != XML_PI_NODE) {
            return S3CKPT_EPROTOCOL;
        }
    }
    return S3CKPT_OK;
}

/* Copies at most cap - 1 bytes of n's text into out (cap > 0). *whole says whether all of it
 * fit. */
static s3ckpt_status text_copy(const xmlNode *n, char *out, size_t cap, int *whole)
{
    const xmlNode *c;
    size_t len, used = 0, k;
    s3ckpt_status st = text_len(n, &len);

    if (st)
        return st;
    *whole = len < cap;
    for (c = n->children; c && used < cap - 1; c = c->next) {
        if ((c->type != XML_TEXT_NODE && c->type != XML_CDATA_SECTION_NODE) || !c->content)
            continue;
        k = strlen((const char *)c->content);
        if (k > cap - 1 - used)
            k = cap - 1 - used;
        memcpy(out + used, c->content, k);
        used += k;
    }
    out[used] = '\0';
    return S3CKPT_OK;
}

/* Decodes S3's encoding-type=url text (form encoding: '+' is a space) into out. EPROTOCOL for
 * a bad escape, %00, or a result that does not fit in cap bytes with its NUL. */
static s3ckpt_status url_decode(const char *in, char *out, size_t cap)
{
    size_t o = 0;
    int hi, lo;

    for (; *in; in++) {
        char ch = *in;

        if (ch == '%') {
            hi = ck_hexval(in[1]);
            lo = hi < 0 ? -1 : ck_hexval(in[2]);
            if (hi < 0 || lo < 0 || (hi == 0 && lo == 0))
                return S3CKPT_EPROTOCOL;
            ch = (char)(hi << 4 | lo);
            in += 2;
        } else if (ch == '+') {
            ch = ' ';
        }
        if (o + 1 >= cap)
            return S3CKPT_EPROTOCOL;
        out[o++] = ch;
    }
    out[o] = '\0';
    return S3CKPT_OK;
}

/* n's whole text into out[cap], URL-decoded when decode is set. EPROTOCOL when it does not
 * fit. */
static s3ckpt_status text_get(const xmlNode *n, int decode, char *out, size_t cap)
{
    size_t len;
    char *raw;
    int whole;
    s3ckpt_status st;

    if (!out || cap == 0)
        return S3CKPT_EPROTOCOL;
    if (!decode) {
        st = text_copy(n, out, cap, &whole);
        return st ? st : whole ? S3CKPT_OK : S3CKPT_EPROTOCOL;
    }
    st = text_len(n, &len);
    if (st)
        return st;
    if (len / 3 >= cap)
        return S3CKPT_EPROTOCOL; /* even all-escapes would not fit */
    raw = malloc(len + 1);
    if (!raw)
        return S3CKPT_ENOMEM;
    st = text_copy(n, raw, len + 1, &whole);
    if (!st)
        st = url_decode(raw, out, cap);
    free(raw);
    return st;
}

/* Cuts s back so that it does not end inside a UTF-8 sequence (after a truncating copy). */
static void trim_partial_utf8(char *s)
{
    size_t n = strlen(s), start = n;

    while (start > 0 && ((unsigned char)s[start - 1] & 0xC0) == 0x80)
        start--;
    if (start == 0)
        return; /* only continuation bytes: not UTF-8 to begin with, leave it */
    {
        unsigned char lead = (unsigned char)s[start - 1];
        size_t need = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1;

        if (n - (start - 1) < need)
            s[start - 1] = '\0';
    }
}

/* Display text: n's text cut to fit out[cap] at a character boundary. */
static void text_display(const xmlNode *n, char *out, size_t cap)
{
    int whole;

    if (text_copy(n, out, cap, &whole)) {
        out[0] = '\0';
        return;
    }
    if (!whole)
        trim_partial_utf8(out);
}

/* The element child of parent named name: *out NULL when there is none, EPROTOCOL when there
 * are several (a repeated scalar is not S3). */
static s3ckpt_status child(const xmlNode *parent, const char *name, const xmlNode **out)
{
    const xmlNode *c;

    *out = NULL;
    for (c = parent->children; c; c = c->next) {
        if (!is_elem(c, name))
            continue;
        if (*out)
            return S3CKPT_EPROTOCOL;
        *out = c;
    }
    return S3CKPT_OK;
}

enum { F_OPTIONAL = 0, F_REQUIRED = 1, F_NONEMPTY = 2 };

/* Text of parent's child name into out[cap]. need: F_OPTIONAL (absent -> ""), F_REQUIRED (may be
 * empty) or F_NONEMPTY. */
static s3ckpt_status field(const xmlNode *parent, const char *name, int need, int decode, char *out,
                           size_t cap)
{
    const xmlNode *c;
    s3ckpt_status st = child(parent, name, &c);

    if (st)
        return st;
    if (!c) {
        if (need != F_OPTIONAL || cap == 0)
            return S3CKPT_EPROTOCOL;
        out[0] = '\0';
        return S3CKPT_OK;
    }
    st = text_get(c, decode, out, cap);
    if (!st && need == F_NONEMPTY && out[0] == '\0')
        st = S3CKPT_EPROTOCOL;
    return st;
}

/* Digits only, no sign or space, no overflow. */
static s3ckpt_status parse_u64(const char *s, uint64_t *out)
{
    uint64_t v = 0;

    if (!*s)
        return S3CKPT_EPROTOCOL;
    for (; *s; s++) {
        unsigned d = (unsigned)(*s - '0');

        if (*s < '0' || *s > '9' || v > (UINT64_MAX - d) / 10)
            return S3CKPT_EPROTOCOL;
        v = v * 10 + d;
    }
    *out = v;
    return S3CKPT_OK;
}

static s3ckpt_status u64_field(const xmlNode *parent, const char *name, uint64_t *out)
{
    char text[24];
    s3ckpt_status st = field(parent, name, F_REQUIRED, 0, text, sizeof(text));

    return st ? st : parse_u64(text, out);
}

/* A part number or marker in lo..CK_S3_PART_MAX. */
static s3ckpt_status part_field(const xmlNode *parent, const char *name, unsigned lo, unsigned *out)
{
    uint64_t v;
    s3ckpt_status st = u64_field(parent, name, &v);

    if (st)
        return st;
    if (v < lo || v > CK_S3_PART_MAX)
        return S3CKPT_EPROTOCOL;
    *out = (unsigned)v;
    return S3CKPT_OK;
}

/* IsTruncated: required, exactly "true" or "false". */
static s3ckpt_status truncated_field(const xmlNode *root, int *out)
{
    char text[8];
    s3ckpt_status st = field(root, "IsTruncated", F_REQUIRED, 0, text, sizeof(text));

    if (st)
        return st;
    if (strcmp(text, "true") == 0)
        *out = 1;
    else if (strcmp(text, "false") == 0)
        *out = 0;
    else
        return S3CKPT_EPROTOCOL;
    return S3CKPT_OK;
}

/* EncodingType: absent -> 0, "url" -> 1, anything else is EPROTOCOL (keys we cannot read). */
static s3ckpt_status encoding_field(const xmlNode *root, int *url)
{
    char text[8];
    const xmlNode *c;
    s3ckpt_status st = child(root, "EncodingType", &c);

    *url = 0;
    if (st || !c)
        return st;
    st = text_get(c, 0, text, sizeof(text));
    if (st)
        return st;
    if (strcmp(text, "url") != 0)
        return S3CKPT_EPROTOCOL;
    *url = 1;
    return S3CKPT_OK;
}

/* Clears an optional caller buffer. */
static void clear(char *s, size_t cap)
{
    if (s && cap)
        s[0] = '\0';
}

/* ---- single-value responses ------------------------------------------------------------- */

int ck_s3xml_error(const char *body, size_t len, ck_s3_error *out)
{
    xmlDoc *doc;
    const xmlNode *root, *c;
    int whole;

    if (!out)
        return -1;
    memset(out, 0, sizeof(*out));
    if (parse(body, len, "Error", &doc, &root))
        return -1;
    for (c = root->children; c; c = c->next) {
        if (is_elem(c, "Code") && !out->code[0]) {
            if (text_copy(c, out->code, sizeof(out->code), &whole) || !whole)
                out->code[0] = '\0';
        } else if (is_elem(c, "Message") && !out->message[0]) {
            text_display(c, out->message, sizeof(out->message));
        } else if (is_elem(c, "RequestId") && !out->request_id[0]) {
            text_display(c, out->request_id, sizeof(out->request_id));
        }
    }
    xmlFreeDoc(doc);
    return 0;
}

/* The one required, non-empty text field `name` of a `root_name` document into out. */
static s3ckpt_status single_field(const char *body, size_t len, const char *root_name,
                                  const char *name, char *out, size_t cap)
{
    xmlDoc *doc;
    const xmlNode *root;
    s3ckpt_status st;

    if (!out)
        return S3CKPT_EINVAL;
    out[0] = '\0';
    st = parse(body, len, root_name, &doc, &root);
    if (st)
        return st;
    st = field(root, name, F_NONEMPTY, 0, out, cap);
    if (st)
        out[0] = '\0';
    xmlFreeDoc(doc);
    return st;
}

s3ckpt_status ck_s3xml_initiate(const char *body, size_t len, char upload_id[CK_S3_UPLOADID_MAX])
{
    return single_field(body, len, "InitiateMultipartUploadResult", "UploadId", upload_id,
                        CK_S3_UPLOADID_MAX);
}

s3ckpt_status ck_s3xml_complete(const char *body, size_t len, char etag[CK_S3_ETAG_MAX])
{
    return single_field(body, len, "CompleteMultipartUploadResult", "ETag", etag, CK_S3_ETAG_MAX);
}

/* ---- list responses: pass 0 validates, pass 1 calls back -------------------------------- */

typedef struct obj_entry {
    char key[CK_S3_KEY_MAX];
    char etag[CK_S3_ETAG_MAX];
    uint64_t size;
} obj_entry;

static s3ckpt_status objects_walk(const xmlNode *root, int url, ck_s3xml_obj_fn *fn, void *ud)
{
    const xmlNode *c, *p;
    obj_entry e;
    s3ckpt_status st = S3CKPT_OK;

    for (c = root->children; c && !st; c = c->next) {
        if (is_elem(c, "Contents")) {
            st = field(c, "Key", F_NONEMPTY, url, e.key, sizeof(e.key));
            if (!st)
                st = u64_field(c, "Size", &e.size);
            if (!st)
                st = field(c, "ETag", F_OPTIONAL, 0, e.etag, sizeof(e.etag));
            if (!st && fn)
                st = fn(ud, e.key, 0, e.size, e.etag);
        } else if (is_elem(c, "CommonPrefixes")) {
            /* one Prefix per CommonPrefixes in S3; accept a list of them too */
            for (p = c->children; p && !st; p = p->next) {
                if (!is_elem(p, "Prefix"))
                    continue;
                st = text_get(p, url, e.key, sizeof(e.key));
                if (!st && !e.key[0])
                    st = S3CKPT_EPROTOCOL;
                if (!st && fn)
                    st = fn(ud, e.key, 1, 0, "");
            }
        }
    }
    return st;
}

s3ckpt_status ck_s3xml_list_objects(const char *body, size_t len, ck_s3xml_obj_fn *fn, void *ud,
                                    int *truncated, char *next_token, size_t next_token_len)
{
    xmlDoc *doc;
    const xmlNode *root;
    int url = 0, trunc = 0;
    s3ckpt_status st;

    if (!truncated || (!next_token && next_token_len))
        return S3CKPT_EINVAL;
    clear(next_token, next_token_len);
    st = parse(body, len, "ListBucketResult", &doc, &root);
    if (st)
        return st;
    st = encoding_field(root, &url);
    if (!st)
        st = truncated_field(root, &trunc);
    if (!st && trunc)
        st = field(root, "NextContinuationToken", F_NONEMPTY, 0, next_token, next_token_len);
    if (!st)
        st = objects_walk(root, url, NULL, NULL);
    if (!st) {
        *truncated = trunc;
        st = objects_walk(root, url, fn, ud);
    } else {
        clear(next_token, next_token_len);
    }
    xmlFreeDoc(doc);
    return st;
}

typedef struct upload_entry {
    char key[CK_S3_KEY_MAX];
    char upload_id[CK_S3_UPLOADID_MAX];
    char initiated[CK_S3_TIME_MAX];
} upload_entry;

static s3ckpt_status uploads_walk(const xmlNode *root, int url, ck_s3xml_upload_fn *fn, void *ud)
{
    const xmlNode *c;
    upload_entry *e = malloc(sizeof(*e)); /* 2 KiB+: keep it off small thread stacks */
    s3ckpt_status st = e ? S3CKPT_OK : S3CKPT_ENOMEM;

    for (c = root->children; c && !st; c = c->next) {
        if (!is_elem(c, "Upload"))
            continue;
        st = field(c, "Key", F_NONEMPTY, url, e->key, sizeof(e->key));
        if (!st)
            st = field(c, "UploadId", F_NONEMPTY, 0, e->upload_id, sizeof(e->upload_id));
        if (!st)
            st = field(c, "Initiated", F_NONEMPTY, 0, e->initiated, sizeof(e->initiated));
        if (!st && fn)
            st = fn(ud, e->key, e->upload_id, e->initiated);
    }
    free(e);
    return st;
}

s3ckpt_status ck_s3xml_list_uploads(const char *body, size_t len, ck_s3xml_upload_fn *fn, void *ud,
                                    int *truncated, char *next_key_marker, size_t nkm_len,
                                    char *next_upload_id_marker, size_t nuim_len)
{
    xmlDoc *doc;
    const xmlNode *root;
    int url = 0, trunc = 0;
    s3ckpt_status st;

    if (!truncated || (!next_key_marker && nkm_len) || (!next_upload_id_marker && nuim_len))
        return S3CKPT_EINVAL;
    clear(next_key_marker, nkm_len);
    clear(next_upload_id_marker, nuim_len);
    st = parse(body, len, "ListMultipartUploadsResult", &doc, &root);
    if (st)
        return st;
    st = encoding_field(root, &url);
    if (!st)
        st = truncated_field(root, &trunc);
    if (!st && trunc)
        st = field(root, "NextKeyMarker", F_NONEMPTY, url, next_key_marker, nkm_len);
    if (!st && trunc)
        st = field(root, "NextUploadIdMarker", F_OPTIONAL, 0, next_upload_id_marker, nuim_len);
    if (!st)
        st = uploads_walk(root, url, NULL, NULL);
    if (!st) {
        *truncated = trunc;
        st = uploads_walk(root, url, fn, ud);
    } else {
        clear(next_key_marker, nkm_len);
        clear(next_upload_id_marker, nuim_len);
    }
    xmlFreeDoc(doc);
    return st;
}

static s3ckpt_status parts_walk(const xmlNode *root, ck_s3xml_part_fn *fn, void *ud)
{
    const xmlNode *c;
    char etag[CK_S3_ETAG_MAX];
    unsigned number;
    uint64_t size;
    s3ckpt_status st = S3CKPT_OK;

    for (c = root->children; c && !st; c = c->next) {
        if (!is_elem(c, "Part"))
            continue;
        st = part_field(c, "PartNumber", 1, &number);
        if (!st)
            st = u64_field(c, "Size", &size);
        if (!st)
            st = field(c, "ETag", F_NONEMPTY, 0, etag, sizeof(etag));
        if (!st && fn)
            st = fn(ud, number, size, etag);
    }
    return st;
}

s3ckpt_status ck_s3xml_list_parts(const char *body, size_t len, ck_s3xml_part_fn *fn, void *ud,
                                  int *truncated, unsigned *next_part_marker)
{
    xmlDoc *doc;
    const xmlNode *root;
    int trunc = 0;
    unsigned marker = 0;
    s3ckpt_status st;

    if (!truncated || !next_part_marker)
        return S3CKPT_EINVAL;
    *next_part_marker = 0;
    st = parse(body, len, "ListPartsResult", &doc, &root);
    if (st)
        return st;
    st = truncated_field(root, &trunc);
    if (!st && trunc)
        st = part_field(root, "NextPartNumberMarker", 1, &marker);
    if (!st)
        st = parts_walk(root, NULL, NULL);
    if (!st) {
        *truncated = trunc;
        *next_part_marker = marker;
        st = parts_walk(root, fn, ud);
    }
    xmlFreeDoc(doc);
    return st;
}

typedef struct delete_entry {
    char key[CK_S3_KEY_MAX];
    char code[CK_S3_CODE_MAX];
    char message[CK_S3_MSG_MAX];
} delete_entry;

static s3ckpt_status delete_walk(const xmlNode *root, int url, ck_s3xml_delete_err_fn *fn, void *ud)
{
    const xmlNode *c, *m;
    delete_entry e;
    s3ckpt_status st = S3CKPT_OK;

    for (c = root->children; c && !st; c = c->next) {
        if (!is_elem(c, "Error"))
            continue;
        st = field(c, "Key", F_NONEMPTY, url, e.key, sizeof(e.key));
        if (!st)
            st = field(c, "Code", F_NONEMPTY, 0, e.code, sizeof(e.code));
        if (!st)
            st = child(c, "Message", &m);
        if (st)
            break;
        e.message[0] = '\0';
        if (m)
            text_display(m, e.message, sizeof(e.message));
        if (fn)
            st = fn(ud, e.key, e.code, e.message);
    }
    return st;
}

s3ckpt_status ck_s3xml_delete_result(const char *body, size_t len, ck_s3xml_delete_err_fn *fn,
                                     void *ud)
{
    xmlDoc *doc;
    const xmlNode *root;
    int url = 0;
    s3ckpt_status st = parse(body, len, "DeleteResult", &doc, &root);

    if (st)
        return st;
    st = encoding_field(root, &url);
    if (!st)
        st = delete_walk(root, url, NULL, NULL);
    if (!st)
        st = delete_walk(root, url, fn, ud);
    xmlFreeDoc(doc);
    return st;
}

/* ---- request bodies --------------------------------------------------------------------- */

/* 1 when s is UTF-8 that XML 1.0 can carry as character data: no bytes below 0x20, no
 * overlong forms or surrogates, nothing above U+10FFFF, no U+FFFE/U+FFFF. */
static int xml_text_ok(const char *str)
{
    const unsigned char *s = (const unsigned char *)str;

    while (*s) {
        uint32_t cp;
        size_t n, i;

        if (*s < 0x20)
            return 0;
        if (*s < 0x80) {
            s++;
            continue;
        }
        if (*s >= 0xC2 && *s <= 0xDF) {
            n = 1;
            cp = *s & 0x1Fu;
        } else if (*s >= 0xE0 && *s <= 0xEF) {
            n = 2;
            cp = *s & 0x0Fu;
        } else if (*s >= 0xF0 && *s <= 0xF4) {
            n = 3;
            cp = *s & 0x07u;
        } else {
            return 0;
        }
        for (i = 1; i <= n; i++) {
            if ((s[i] & 0xC0) != 0x80)
                return 0; /* also stops at the NUL */
            cp = cp << 6 | (s[i] & 0x3Fu);
        }
        if ((n == 2 && cp < 0x800) || (n == 3 && (cp < 0x10000 || cp > 0x10FFFF)) ||
            (cp >= 0xD800 && cp <= 0xDFFF) || cp == 0xFFFE || cp == 0xFFFF)
            return 0;
        s += n + 1;
    }
    return 1;
}

/* Appends s with & < > " ' escaped. */
static s3ckpt_status append_escaped(ck_buf *out, const char *s)
{
    const char *run = s;
    s3ckpt_status st = S3CKPT_OK;

    for (; *s && !st; s++) {
        const char *ent = NULL;

        switch (*s) {
        case '&':
            ent = "&amp;";
            break;
        case '<':
            ent = "&lt;";
            break;
        case '>':
            ent = "&gt;";
            break;
        case '"':
            ent = "&quot;";
            break;
        case '\'':
            ent = "&apos;";
            break;
        default:
            continue;
        }
        st = ck_buf_append(out, run, (size_t)(s - run));
        if (!st)
            st = ck_buf_append(out, ent, strlen(ent));
        run = s + 1;
    }
    return st ? st : ck_buf_append(out, run, (size_t)(s - run));
}

static s3ckpt_status append_str(ck_buf *out, const char *s)
{
    return ck_buf_append(out, s, strlen(s));
}

/* Puts out back to its first old_len bytes after a failed build. */
static void rewind_buf(ck_buf *out, size_t old_len)
{
    out->len = old_len;
    if (out->data)
        out->data[old_len] = '\0';
}

s3ckpt_status ck_s3xml_complete_body(ck_buf *out, const ck_s3_part *parts, size_t n)
{
    size_t i, old_len;
    unsigned prev = 0;
    s3ckpt_status st;

    if (!out || !parts || n == 0 || n > CK_S3_PART_MAX)
        return S3CKPT_EINVAL;
    for (i = 0; i < n; i++) {
        const ck_s3_part *p = &parts[i];

        if (p->number <= prev || p->number > CK_S3_PART_MAX ||
            !memchr(p->etag, '\0', sizeof(p->etag)) || !p->etag[0] || !xml_text_ok(p->etag) ||
            !memchr(p->crc32c, '\0', sizeof(p->crc32c)) || !xml_text_ok(p->crc32c))
            return S3CKPT_EINVAL;
        prev = p->number;
    }
    old_len = out->len;
    st = append_str(out, XML_DECL "<CompleteMultipartUpload xmlns=\"" S3_NS "\">");
    for (i = 0; i < n && !st; i++) {
        st = ck_buf_printf(out, "<Part><PartNumber>%u</PartNumber><ETag>", parts[i].number);
        if (!st)
            st = append_escaped(out, parts[i].etag);
        if (!st)
            st = append_str(out, "</ETag>");
        if (!st && parts[i].crc32c[0]) {
            st = append_str(out, "<ChecksumCRC32C>");
            if (!st)
                st = append_escaped(out, parts[i].crc32c);
            if (!st)
                st = append_str(out, "</ChecksumCRC32C>");
        }
        if (!st)
            st = append_str(out, "</Part>");
    }
    if (!st)
        st = append_str(out, "</CompleteMultipartUpload>");
    if (st)
        rewind_buf(out, old_len);
    return st;
}

s3ckpt_status ck_s3xml_delete_body(ck_buf *out, const char *const *keys, size_t n, int quiet)
{
    size_t i, old_len;
    s3ckpt_status st;

    if (!out || !keys || n == 0 || n > CK_S3_DELETE_MAX)
        return S3CKPT_EINVAL;
    for (i = 0; i < n; i++) {
        if (!keys[i] || !keys[i][0] || strlen(keys[i]) > S3_KEY_LIMIT || !xml_text_ok(keys[i]))
            return S3CKPT_EINVAL;
    }
    old_len = out->len;
    st = append_str(out, XML_DECL "<Delete xmlns=\"" S3_NS "\">");
    if (!st && quiet)
        st = append_str(out, "<Quiet>true</Quiet>");
    for (i = 0; i < n && !st; i++) {
        st = append_str(out, "<Object><Key>");
        if (!st)
            st = append_escaped(out, keys[i]);
        if (!st)
            st = append_str(out, "</Key></Object>");
    }
    if (!st)
        st = append_str(out, "</Delete>");
    if (st)
        rewind_buf(out, old_len);
    return st;
}
