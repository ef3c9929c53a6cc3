/*
 * manifest - format v1 (docs/FORMAT.md). The manifest is the commit point and the only thing a
 * reader trusts, so decode treats it as hostile: every field is type-checked, every path
 * checked, every length added up, and the whole-file digests re-derived from the chunk digests
 * before anything is created on disk. Limits keep a hostile manifest from costing unbounded
 * memory beyond its own (capped) size.
 */
#include "manifest.h"

#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec.h"
#include "path.h"
#include "trailer.h"

void ck_manifest_init(ck_manifest *m)
{
    memset(m, 0, sizeof(*m));
    m->step = -1;
}

void ck_manifest_cleanup(ck_manifest *m)
{
    size_t i;

    for (i = 0; i < m->nentries; i++) {
        free(m->entries[i].path);
        free(m->entries[i].key);
        free(m->entries[i].etag);
        free(m->entries[i].chunks);
    }
    free(m->entries);
    for (i = 0; i < m->meta_count; i++) {
        free((char *)m->meta[i].key);
        free((char *)m->meta[i].value);
    }
    free(m->meta);
    free(m->name);
    free(m->created);
    free(m->tool);
    ck_manifest_init(m);
}

uint64_t ck_chunk_count(uint64_t size, uint64_t chunk_size)
{
    return size / chunk_size + (size % chunk_size != 0);
}

uint32_t ck_chunk_len(uint64_t size, uint64_t chunk_size, uint64_t i)
{
    uint64_t off = i * chunk_size;

    return (uint32_t)(size - off < chunk_size ? size - off : chunk_size);
}

void ck_manifest_sum(ck_manifest *m)
{
    size_t i;

    m->files = m->dirs = m->bytes = m->stored_bytes = 0;
    for (i = 0; i < m->nentries; i++) {
        if (m->entries[i].is_dir) {
            m->dirs++;
            continue;
        }
        m->files++;
        m->bytes += m->entries[i].size;
        m->stored_bytes += m->entries[i].object_size;
    }
}

/* ---- encode ---- */

static json_t *u64(uint64_t v)
{
    return json_integer((json_int_t)v);
}

static json_t *encode_entry(const ck_entry *e)
{
    char hex[CK_DIGEST_HEX_LEN];
    json_t *o = json_object(), *chunks;
    uint64_t i;

    if (!o)
        return NULL;
    json_object_set_new(o, "path", json_string(e->path));
    json_object_set_new(o, "type", json_string(e->is_dir ? "dir" : "file"));
    json_object_set_new(o, "mode", json_integer(e->mode));
    if (e->is_dir)
        return o;
    ck_digest_to_hex(&e->digest, hex);
    json_object_set_new(o, "size", u64(e->size));
    json_object_set_new(o, "key", json_string(e->key));
    json_object_set_new(o, "etag", json_string(e->etag ? e->etag : ""));
    json_object_set_new(o, "object_size", u64(e->object_size));
    json_object_set_new(o, "codec", json_string("zstd"));
    json_object_set_new(o, "filter", json_string(ck_filter_name(e->filter)));
    json_object_set_new(o, "digest", json_string(hex));
    chunks = json_array();
    if (!chunks) {
        json_decref(o);
        return NULL;
    }
    for (i = 0; i < e->nchunks; i++) {
        const ck_chunk *c = &e->chunks[i];

        ck_digest_to_hex(&c->digest, hex);
        json_array_append_new(
            chunks, json_pack("[IIs]", (json_int_t)c->raw_len, (json_int_t)c->stored_len, hex));
    }
    json_object_set_new(o, "chunks", chunks);
    return o;
}

s3ckpt_status ck_manifest_encode(const ck_manifest *m, char **out, size_t *out_len)
{
    json_t *root = json_object(), *meta = json_object(), *entries = json_array(), *totals;
    s3ckpt_status st = S3CKPT_ENOMEM;
    size_t i;
    char *s;

    *out = NULL;
    if (!root || !meta || !entries)
        goto out;
    json_object_set_new(root, "format", json_string(CK_FORMAT_NAME));
    json_object_set_new(root, "version", json_integer(CK_FORMAT_VERSION));
    json_object_set_new(root, "name", json_string(m->name));
    json_object_set_new(root, "created", json_string(m->created ? m->created : ""));
    json_object_set_new(root, "tool", json_string(m->tool ? m->tool : ""));
    json_object_set_new(root, "step", m->step >= 0 ? json_integer(m->step) : json_null());
    for (i = 0; i < m->meta_count; i++)
        json_object_set_new(meta, m->meta[i].key, json_string(m->meta[i].value));
    json_object_set(root, "meta", meta);
    json_object_set_new(root, "chunk_size", u64(m->chunk_size));
    json_object_set_new(root, "digest", json_string(CK_DIGEST_NAME));
    totals = json_pack("{sIsIsIsI}", "files", (json_int_t)m->files, "dirs", (json_int_t)m->dirs,
                       "bytes", (json_int_t)m->bytes, "stored_bytes", (json_int_t)m->stored_bytes);
    if (!totals)
        goto out;
    json_object_set_new(root, "totals", totals);
    for (i = 0; i < m->nentries; i++) {
        json_t *e = encode_entry(&m->entries[i]);

        if (!e || json_array_append_new(entries, e))
            goto out;
    }
    json_object_set(root, "entries", entries);
    s = json_dumps(root, JSON_COMPACT | JSON_PRESERVE_ORDER);
    if (!s)
        goto out;
    *out = s;
    *out_len = strlen(s);
    st = S3CKPT_OK;
out:
    json_decref(entries);
    json_decref(meta);
    json_decref(root);
    return st;
}

/* ---- decode ---- */

#define FAIL(...)                                                                                  \
    do {                                                                                           \
        snprintf(why, why_len, __VA_ARGS__);                                                       \
        return S3CKPT_ECORRUPT;                                                                    \
    } while (0)

static int get_u64(const json_t *o, const char *k, uint64_t *v)
{
    const json_t *j = json_object_get(o, k);

    if (!json_is_integer(j) || json_integer_value(j) < 0)
        return -1;
    *v = (uint64_t)json_integer_value(j);
    return 0;
}

static const char *get_str(const json_t *o, const char *k)
{
    const json_t *j = json_object_get(o, k);

    return json_is_string(j) ? json_string_value(j) : NULL;
}

static char *dup_str(const json_t *j)
{
    return strdup(json_string_value(j));
}

static s3ckpt_status decode_chunks(ck_entry *e, const json_t *arr, size_t idx, char *why,
                                   size_t why_len)
{
    size_t i;

    if (!json_is_array(arr))
        FAIL("entry %zu (%s): \"chunks\" is not an array", idx, e->path);
    e->nchunks = json_array_size(arr);
    if (e->nchunks == 0)
        return S3CKPT_OK;
    e->chunks = calloc(e->nchunks, sizeof(*e->chunks));
    if (!e->chunks)
        return S3CKPT_ENOMEM;
    for (i = 0; i < e->nchunks; i++) {
        const json_t *c = json_array_get(arr, i), *raw, *stored, *dig;

        raw = json_array_get(c, 0);
        stored = json_array_get(c, 1);
        dig = json_array_get(c, 2);
        if (!json_is_array(c) || json_array_size(c) != 3 || !json_is_integer(raw) ||
            !json_is_integer(stored) || !json_is_string(dig))
            FAIL("%s: chunk %zu is not [raw_len, stored_len, \"digest\"]", e->path, i);
        if (json_integer_value(raw) <= 0 || json_integer_value(raw) > (json_int_t)CK_CHUNK_MAX ||
            json_integer_value(stored) <= 0 || json_integer_value(stored) > (json_int_t)UINT32_MAX)
            FAIL("%s: chunk %zu has an impossible length", e->path, i);
        e->chunks[i].raw_len = (uint32_t)json_integer_value(raw);
        e->chunks[i].stored_len = (uint32_t)json_integer_value(stored);
        if (ck_digest_from_hex(&e->chunks[i].digest, json_string_value(dig)))
            FAIL("%s: chunk %zu: digest is not 32 hex digits", e->path, i);
    }
    return S3CKPT_OK;
}

static s3ckpt_status decode_entry(ck_entry *e, const json_t *o, size_t idx, char *why,
                                  size_t why_len)
{
    const char *type, *s;
    uint64_t mode;

    if (!json_is_object(o))
        FAIL("entry %zu is not an object", idx);
    if (!json_is_string(json_object_get(o, "path")))
        FAIL("entry %zu has no \"path\"", idx);
    if (!(e->path = dup_str(json_object_get(o, "path"))))
        return S3CKPT_ENOMEM;
    type = get_str(o, "type");
    if (!type || (strcmp(type, "file") && strcmp(type, "dir")))
        FAIL("entry %zu (%s): \"type\" must be \"file\" or \"dir\"", idx, e->path);
    e->is_dir = strcmp(type, "dir") == 0;
    if (get_u64(o, "mode", &mode) || mode > 07777)
        FAIL("entry %zu (%s): bad \"mode\"", idx, e->path);
    e->mode = (uint32_t)mode & 0777; /* setuid/setgid/sticky bits are never restored */
    if (e->is_dir)
        return S3CKPT_OK;
    if (get_u64(o, "size", &e->size) || get_u64(o, "object_size", &e->object_size))
        FAIL("%s: \"size\" and \"object_size\" must be non-negative integers", e->path);
    if (!(s = get_str(o, "codec")) || strcmp(s, "zstd"))
        FAIL("%s: unsupported codec \"%s\"", e->path, s ? s : "(missing)");
    if (!(s = get_str(o, "filter")) || ck_filter_parse(s, &e->filter))
        FAIL("%s: unsupported filter \"%s\"", e->path, s ? s : "(missing)");
    if (!json_is_string(json_object_get(o, "key")) || !json_is_string(json_object_get(o, "etag")))
        FAIL("%s: \"key\" and \"etag\" must be strings", e->path);
    if (!(e->key = dup_str(json_object_get(o, "key"))) ||
        !(e->etag = dup_str(json_object_get(o, "etag"))))
        return S3CKPT_ENOMEM;
    if (!(s = get_str(o, "digest")) || ck_digest_from_hex(&e->digest, s))
        FAIL("%s: \"digest\" is not 32 hex digits", e->path);
    return decode_chunks(e, json_object_get(o, "chunks"), idx, why, why_len);
}

static s3ckpt_status decode_meta(ck_manifest *m, const json_t *meta, char *why, size_t why_len)
{
    const char *k;
    json_t *v;

    if (!meta || json_is_null(meta))
        return S3CKPT_OK;
    if (!json_is_object(meta))
        FAIL("\"meta\" is not an object");
    if (json_object_size(meta) > CK_MAX_META)
        FAIL("more than %u metadata keys", CK_MAX_META);
    m->meta = calloc(json_object_size(meta) + 1, sizeof(*m->meta));
    if (!m->meta)
        return S3CKPT_ENOMEM;
    json_object_foreach((json_t *)meta, k, v)
    {
        if (!json_is_string(v))
            FAIL("metadata \"%.64s\" is not a string", k);
        if (strlen(k) > CK_META_KEY_MAX || strlen(json_string_value(v)) > CK_META_VALUE_MAX)
            FAIL("metadata \"%.64s\" is too long", k);
        m->meta[m->meta_count].key = strdup(k);
        m->meta[m->meta_count].value = dup_str(v);
        m->meta_count++;
        if (!m->meta[m->meta_count - 1].key || !m->meta[m->meta_count - 1].value)
            return S3CKPT_ENOMEM;
    }
    return S3CKPT_OK;
}

static s3ckpt_status decode_root(ck_manifest *m, const json_t *root, char *why, size_t why_len)
{
    const json_t *j, *entries, *totals;
    const char *s;
    size_t i;
    s3ckpt_status st;

    if (!json_is_object(root))
        FAIL("manifest is not a JSON object");
    s = get_str(root, "format");
    if (!s || strcmp(s, CK_FORMAT_NAME))
        FAIL("not an s3ckpt manifest (\"format\" is not \"%s\")", CK_FORMAT_NAME);
    j = json_object_get(root, "version");
    if (!json_is_integer(j))
        FAIL("manifest has no integer \"version\"");
    if (json_integer_value(j) != CK_FORMAT_VERSION)
        FAIL("manifest format version %" JSON_INTEGER_FORMAT
             " is not supported (this s3ckpt reads version %d)",
             json_integer_value(j), CK_FORMAT_VERSION);
    if (!json_is_string(json_object_get(root, "name")) ||
        !json_is_string(json_object_get(root, "created")))
        FAIL("manifest lacks \"name\" or \"created\"");
    if (!(m->name = dup_str(json_object_get(root, "name"))) ||
        !(m->created = dup_str(json_object_get(root, "created"))))
        return S3CKPT_ENOMEM;
    s = get_str(root, "tool");
    if (s && !(m->tool = strdup(s)))
        return S3CKPT_ENOMEM;
    j = json_object_get(root, "step");
    if (json_is_integer(j) && json_integer_value(j) >= 0)
        m->step = json_integer_value(j);
    else if (j && !json_is_null(j))
        FAIL("\"step\" must be a non-negative integer or null");
    st = decode_meta(m, json_object_get(root, "meta"), why, why_len);
    if (st)
        return st;
    if (get_u64(root, "chunk_size", &m->chunk_size))
        FAIL("manifest lacks \"chunk_size\"");
    s = get_str(root, "digest");
    if (!s || strcmp(s, CK_DIGEST_NAME))
        FAIL("unsupported digest \"%s\"", s ? s : "(missing)");
    totals = json_object_get(root, "totals");
    if (!json_is_object(totals) || get_u64(totals, "files", &m->files) ||
        get_u64(totals, "dirs", &m->dirs) || get_u64(totals, "bytes", &m->bytes) ||
        get_u64(totals, "stored_bytes", &m->stored_bytes))
        FAIL("manifest lacks \"totals\" {files, dirs, bytes, stored_bytes}");
    entries = json_object_get(root, "entries");
    if (!json_is_array(entries))
        FAIL("manifest lacks an \"entries\" array");
    if (json_array_size(entries) > CK_MAX_ENTRIES)
        FAIL("more than %u entries", CK_MAX_ENTRIES);
    m->nentries = 0;
    m->entries = calloc(json_array_size(entries) + 1, sizeof(*m->entries));
    if (!m->entries)
        return S3CKPT_ENOMEM;
    for (i = 0; i < json_array_size(entries); i++) {
        m->nentries++;
        st = decode_entry(&m->entries[i], json_array_get(entries, i), i, why, why_len);
        if (st)
            return st;
    }
    return S3CKPT_OK;
}

s3ckpt_status ck_manifest_decode(ck_manifest *m, const char *json, size_t len, char *why,
                                 size_t why_len)
{
    json_error_t jerr;
    json_t *root;
    s3ckpt_status st;

    ck_manifest_init(m);
    if (len > CK_MANIFEST_MAX_BYTES)
        FAIL("manifest larger than %zu bytes", CK_MANIFEST_MAX_BYTES);
    root = json_loadb(json, len, JSON_REJECT_DUPLICATES, &jerr);
    if (!root)
        FAIL("manifest is not valid JSON (line %d column %d: %s)", jerr.line, jerr.column,
             jerr.text);
    st = decode_root(m, root, why, why_len);
    json_decref(root);
    if (!st)
        st = ck_manifest_validate(m, why, why_len);
    if (st == S3CKPT_ENOMEM)
        snprintf(why, why_len, "out of memory reading manifest");
    if (st)
        ck_manifest_cleanup(m);
    return st;
}

/* ---- validate ---- */

static s3ckpt_status validate_file(const ck_manifest *m, const ck_entry *e, char *why,
                                   size_t why_len)
{
    uint64_t want_chunks = ck_chunk_count(e->size, m->chunk_size), i, raw = 0, stored = 0;
    size_t keylen = strlen(CK_DATA_PREFIX) + strlen(e->path);
    ck_digest_acc acc;
    ck_digest d;

    if (strncmp(e->key, CK_DATA_PREFIX, strlen(CK_DATA_PREFIX)) ||
        strcmp(e->key + strlen(CK_DATA_PREFIX), e->path) || strlen(e->key) != keylen)
        FAIL("%s: data key \"%.200s\" is not \"%s%s\"", e->path, e->key, CK_DATA_PREFIX, e->path);
    if (e->nchunks != want_chunks)
        FAIL("%s: %" PRIu64 " chunks listed, a %" PRIu64 "-byte file has %" PRIu64, e->path,
             e->nchunks, e->size, want_chunks);
    for (i = 0; i < e->nchunks; i++) {
        if (e->chunks[i].stored_len > ck_codec_bound(e->chunks[i].raw_len))
            FAIL("%s: chunk %" PRIu64 " claims %u stored bytes, more than a frame of %u raw "
                 "bytes can take (%zu)",
                 e->path, i, e->chunks[i].stored_len, e->chunks[i].raw_len,
                 ck_codec_bound(e->chunks[i].raw_len));
        if (e->chunks[i].raw_len != ck_chunk_len(e->size, m->chunk_size, i))
            FAIL("%s: chunk %" PRIu64 " has %u raw bytes, expected %u", e->path, i,
                 e->chunks[i].raw_len, ck_chunk_len(e->size, m->chunk_size, i));
        raw += e->chunks[i].raw_len;
        stored += e->chunks[i].stored_len;
    }
    if (raw != e->size)
        FAIL("%s: chunk lengths add up to %" PRIu64 ", size is %" PRIu64, e->path, raw, e->size);
    if (stored + ck_trailer_size(e->nchunks) != e->object_size)
        FAIL("%s: stored lengths add up to %" PRIu64 " (+ %" PRIu64
             "-byte chunk index), object_size is %" PRIu64,
             e->path, stored, ck_trailer_size(e->nchunks), e->object_size);
    if (ck_digest_acc_init(&acc))
        return S3CKPT_ENOMEM;
    for (i = 0; i < e->nchunks; i++)
        ck_digest_acc_add(&acc, &e->chunks[i].digest);
    ck_digest_acc_final(&acc, &d);
    if (!ck_digest_equal(&d, &e->digest))
        FAIL("%s: file digest does not match its chunk digests", e->path);
    return S3CKPT_OK;
}

s3ckpt_status ck_manifest_validate(const ck_manifest *m, char *why, size_t why_len)
{
    uint64_t files = 0, dirs = 0, bytes = 0, stored = 0;
    char pwhy[128];
    size_t i;
    s3ckpt_status st;

    if (ck_name_check(m->name, pwhy, sizeof(pwhy)))
        FAIL("bad checkpoint name \"%.150s\": %s", m->name, pwhy);
    if (m->chunk_size < CK_CHUNK_MIN || m->chunk_size > CK_CHUNK_MAX)
        FAIL("chunk_size %" PRIu64 " is outside %" PRIu64 "..%" PRIu64, m->chunk_size, CK_CHUNK_MIN,
             CK_CHUNK_MAX);
    for (i = 0; i < m->nentries; i++) {
        const ck_entry *e = &m->entries[i];

        if (ck_path_check(e->path, pwhy, sizeof(pwhy)))
            FAIL("entry %zu: unsafe path \"%.200s\": %s", i, e->path, pwhy);
        if (i > 0) {
            const ck_entry *p = &m->entries[i - 1];
            size_t plen = strlen(p->path);
            int c = ck_path_cmp(p->path, e->path);

            if (c == 0)
                FAIL("duplicate path \"%.200s\"", e->path);
            if (c > 0)
                FAIL("entries are not sorted (\"%.200s\" after \"%.200s\")", e->path, p->path);
            if (!p->is_dir && strncmp(p->path, e->path, plen) == 0 && e->path[plen] == '/')
                FAIL("\"%.200s\" is a file but \"%.200s\" is inside it", p->path, e->path);
        }
        if (e->is_dir) {
            dirs++;
            continue;
        }
        st = validate_file(m, e, why, why_len);
        if (st)
            return st;
        if (e->size > UINT64_MAX - bytes || e->object_size > UINT64_MAX - stored)
            FAIL("sizes overflow");
        files++;
        bytes += e->size;
        stored += e->object_size;
    }
    if (files != m->files || dirs != m->dirs || bytes != m->bytes || stored != m->stored_bytes)
        FAIL("totals (%" PRIu64 " files, %" PRIu64 " dirs, %" PRIu64 " bytes, %" PRIu64
             " stored) do not match the entries (%" PRIu64 ", %" PRIu64 ", %" PRIu64 ", %" PRIu64
             ")",
             m->files, m->dirs, m->bytes, m->stored_bytes, files, dirs, bytes, stored);
    return S3CKPT_OK;
}
