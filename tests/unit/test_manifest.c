/*
 * test_manifest - format v1 encode/decode/validate. A valid manifest is built in memory the way
 * push builds one (sorted entries, chunk lengths from ck_chunk_len, file digests from the chunk
 * digests, totals from ck_manifest_sum); each rejection test breaks exactly one rule of it and
 * checks that decode refuses it with S3CKPT_ECORRUPT and a reason that names the rule.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec.h"
#include "digest.h"
#include "manifest.h"
#include "path.h"
#include "trailer.h"

#define CHUNK CK_CHUNK_MIN /* 64 KiB: small files still get several chunks */

static char why[512];

/* Makes e a file entry of `size` bytes whose chunk digests are derived from `seed`. */
static void set_file(ck_entry *e, const char *path, uint64_t size, uint64_t chunk_size,
                     unsigned seed)
{
    ck_digest_acc acc;
    uint64_t i;
    size_t klen = strlen(CK_DATA_PREFIX) + strlen(path) + 1;

    free(e->path);
    free(e->key);
    free(e->etag);
    free(e->chunks);
    memset(e, 0, sizeof(*e));
    e->path = strdup(path);
    e->is_dir = 0;
    e->mode = 0644;
    e->size = size;
    e->key = malloc(klen);
    cr_assert_not_null(e->key);
    snprintf(e->key, klen, "%s%s", CK_DATA_PREFIX, path);
    e->etag = strdup("\"etag-1\"");
    e->nchunks = ck_chunk_count(size, chunk_size);
    e->chunks = e->nchunks ? calloc(e->nchunks, sizeof(*e->chunks)) : NULL;
    cr_assert(ck_digest_acc_init(&acc) == 0);
    e->object_size = 0;
    for (i = 0; i < e->nchunks; i++) {
        unsigned char tag[48] = {0};

        snprintf((char *)tag, sizeof(tag), "%u/%llu", seed, (unsigned long long)i);
        e->chunks[i].raw_len = ck_chunk_len(size, chunk_size, i);
        e->chunks[i].stored_len = e->chunks[i].raw_len / 3 + 17;
        ck_digest_bytes(&e->chunks[i].digest, tag, sizeof(tag));
        ck_digest_acc_add(&acc, &e->chunks[i].digest);
        e->object_size += e->chunks[i].stored_len;
    }
    ck_digest_acc_final(&acc, &e->digest);
    e->object_size += ck_trailer_size(e->nchunks); /* the chunk index ends every object */
}

static void set_dir(ck_entry *e, const char *path)
{
    memset(e, 0, sizeof(*e));
    e->path = strdup(path);
    e->is_dir = 1;
    e->mode = 0755;
}

static int entry_cmp(const void *a, const void *b)
{
    return ck_path_cmp(((const ck_entry *)a)->path, ((const ck_entry *)b)->path);
}

/* Entries (after sorting): "a" dir, "a/b.bin" 150000 bytes (3 chunks), "a/c" empty file,
 * "a.txt" 10 bytes. */
static void build_valid(ck_manifest *m)
{
    ck_manifest_init(m);
    m->name = strdup("step-00000007");
    m->step = 7;
    m->created = strdup("2024-05-01T12:00:00Z");
    m->tool = strdup("s3ckpt 0.1.0");
    m->meta_count = 2;
    m->meta = calloc(2, sizeof(*m->meta));
    m->meta[0].key = strdup("run");
    m->meta[0].value = strdup("llama-7b");
    m->meta[1].key = strdup("loss");
    m->meta[1].value = strdup("1.25");
    m->chunk_size = CHUNK;
    m->nentries = 4;
    m->entries = calloc(8, sizeof(*m->entries)); /* room for tests that add entries */
    cr_assert_not_null(m->entries);
    /* deliberately out of order: build_valid sorts like push does */
    set_file(&m->entries[0], "a.txt", 10, CHUNK, 1);
    set_file(&m->entries[1], "a/c", 0, CHUNK, 2);
    set_file(&m->entries[2], "a/b.bin", 150000, CHUNK, 3);
    set_dir(&m->entries[3], "a");
    m->entries[0].mode = 0600;
    m->entries[2].filter = CK_FILTER_BYTES4;
    m->entries[1].filter = CK_FILTER_BYTES2;
    qsort(m->entries, m->nentries, sizeof(*m->entries), entry_cmp);
    ck_manifest_sum(m);
}

static ck_entry *find(ck_manifest *m, const char *path)
{
    size_t i;

    for (i = 0; i < m->nentries; i++)
        if (strcmp(m->entries[i].path, path) == 0)
            return &m->entries[i];
    cr_assert_fail("no entry %s", path);
    return NULL;
}

static void set_path(ck_entry *e, const char *path)
{
    free(e->path);
    e->path = strdup(path);
}

static char *encode(const ck_manifest *m, size_t *len)
{
    char *json = NULL;
    size_t n = 0;

    cr_assert_eq(ck_manifest_encode(m, &json, &n), S3CKPT_OK);
    cr_assert_not_null(json);
    cr_assert_eq(n, strlen(json));
    if (len)
        *len = n;
    return json;
}

/* Decoding `json` must fail with ECORRUPT and a reason containing `needle`; m stays empty. */
static void expect_corrupt_json(const char *json, size_t len, const char *needle)
{
    ck_manifest out;
    s3ckpt_status st;

    why[0] = '\0';
    st = ck_manifest_decode(&out, json, len, why, sizeof(why));
    cr_assert_eq(st, S3CKPT_ECORRUPT, "decode returned %d (why: %s) for %.300s", st, why, json);
    cr_assert_not_null(strstr(why, needle), "why \"%s\" does not mention \"%s\"", why, needle);
    cr_assert_eq(out.nentries, 0);
    cr_assert_null(out.entries);
    cr_assert_null(out.name);
    ck_manifest_cleanup(&out);
}

/* Encodes m (invalid on purpose) and expects decode to reject it; frees m. */
static void expect_corrupt(ck_manifest *m, const char *needle)
{
    size_t len;
    char *json = encode(m, &len);

    expect_corrupt_json(json, len, needle);
    free(json);
    ck_manifest_cleanup(m);
}

/* Replaces the first occurrence of `from` in json (which must occur) by `to`; malloc'ed. */
static char *replace_once(const char *json, const char *from, const char *to)
{
    const char *at = strstr(json, from);
    size_t n = strlen(json) - strlen(from) + strlen(to) + 1, pre;
    char *out;

    cr_assert_not_null(at, "\"%s\" not found in %s", from, json);
    pre = (size_t)(at - json);
    out = malloc(n);
    cr_assert_not_null(out);
    memcpy(out, json, pre);
    memcpy(out + pre, to, strlen(to));
    memcpy(out + pre + strlen(to), at + strlen(from), strlen(at + strlen(from)) + 1);
    return out;
}

/* Encodes a valid manifest, applies one textual edit, and expects decode to reject it. */
static void expect_corrupt_edit(const char *from, const char *to, const char *needle)
{
    ck_manifest m;
    char *json, *bad;

    build_valid(&m);
    json = encode(&m, NULL);
    bad = replace_once(json, from, to);
    expect_corrupt_json(bad, strlen(bad), needle);
    free(bad);
    free(json);
    ck_manifest_cleanup(&m);
}

static void assert_entries_equal(const ck_entry *a, const ck_entry *b)
{
    uint64_t k;

    cr_assert_str_eq(a->path, b->path);
    cr_assert_eq(a->is_dir, b->is_dir, "%s", a->path);
    cr_assert_eq(a->mode, b->mode, "%s: mode %o vs %o", a->path, a->mode, b->mode);
    if (a->is_dir)
        return;
    cr_assert_eq(a->size, b->size, "%s", a->path);
    cr_assert_str_eq(a->key, b->key);
    cr_assert_str_eq(a->etag, b->etag);
    cr_assert_eq(a->object_size, b->object_size, "%s", a->path);
    cr_assert_eq(a->filter, b->filter, "%s: filter %d vs %d", a->path, a->filter, b->filter);
    cr_assert_eq(a->nchunks, b->nchunks, "%s", a->path);
    cr_assert(ck_digest_equal(&a->digest, &b->digest), "%s: file digest", a->path);
    for (k = 0; k < a->nchunks; k++) {
        cr_assert_eq(a->chunks[k].raw_len, b->chunks[k].raw_len);
        cr_assert_eq(a->chunks[k].stored_len, b->chunks[k].stored_len);
        cr_assert(ck_digest_equal(&a->chunks[k].digest, &b->chunks[k].digest), "%s chunk %llu",
                  a->path, (unsigned long long)k);
    }
}

/* ---- valid manifests ---- */

Test(manifest, built_manifest_is_valid)
{
    ck_manifest m;

    build_valid(&m);
    cr_assert_eq(ck_manifest_validate(&m, why, sizeof(why)), S3CKPT_OK, "%s", why);
    cr_assert_str_eq(m.entries[0].path, "a");
    cr_assert_str_eq(m.entries[1].path, "a/b.bin");
    cr_assert_str_eq(m.entries[2].path, "a/c");
    cr_assert_str_eq(m.entries[3].path, "a.txt");
    cr_assert_eq(m.entries[1].nchunks, 3);
    cr_assert_eq(m.files, 3);
    cr_assert_eq(m.dirs, 1);
    cr_assert_eq(m.bytes, 150010);
    ck_manifest_cleanup(&m);
}

Test(manifest, encode_decode_round_trip_keeps_every_field)
{
    ck_manifest m, d;
    size_t len, i;
    char *json;
    s3ckpt_status st;

    build_valid(&m);
    json = encode(&m, &len);
    st = ck_manifest_decode(&d, json, len, why, sizeof(why));
    cr_assert_eq(st, S3CKPT_OK, "decode: %s", why);
    cr_assert_str_eq(d.name, m.name);
    cr_assert_eq(d.step, m.step);
    cr_assert_str_eq(d.created, m.created);
    cr_assert_str_eq(d.tool, m.tool);
    cr_assert_eq(d.meta_count, m.meta_count);
    for (i = 0; i < m.meta_count; i++) {
        cr_assert_str_eq(d.meta[i].key, m.meta[i].key);
        cr_assert_str_eq(d.meta[i].value, m.meta[i].value);
    }
    cr_assert_eq(d.chunk_size, m.chunk_size);
    cr_assert_eq(d.files, m.files);
    cr_assert_eq(d.dirs, m.dirs);
    cr_assert_eq(d.bytes, m.bytes);
    cr_assert_eq(d.stored_bytes, m.stored_bytes);
    cr_assert_eq(d.nentries, m.nentries);
    for (i = 0; i < m.nentries; i++)
        assert_entries_equal(&m.entries[i], &d.entries[i]);
    ck_manifest_cleanup(&d);
    ck_manifest_cleanup(&m);
    free(json);
}

Test(manifest, reencoding_a_decoded_manifest_gives_the_same_bytes)
{
    ck_manifest m, d;
    size_t len, len2;
    char *json, *json2;

    build_valid(&m);
    json = encode(&m, &len);
    cr_assert_eq(ck_manifest_decode(&d, json, len, why, sizeof(why)), S3CKPT_OK, "%s", why);
    json2 = encode(&d, &len2);
    cr_assert_eq(len2, len);
    cr_assert_str_eq(json2, json);
    free(json2);
    free(json);
    ck_manifest_cleanup(&d);
    ck_manifest_cleanup(&m);
}

Test(manifest, round_trip_without_step_or_meta)
{
    ck_manifest m, d;
    size_t len, i;
    char *json;

    build_valid(&m);
    m.step = -1;
    free(m.name);
    m.name = strdup("run_1");
    for (i = 0; i < m.meta_count; i++) {
        free((char *)m.meta[i].key);
        free((char *)m.meta[i].value);
    }
    m.meta_count = 0;
    json = encode(&m, &len);
    cr_assert_not_null(strstr(json, "\"step\":null"), "%s", json);
    cr_assert_eq(ck_manifest_decode(&d, json, len, why, sizeof(why)), S3CKPT_OK, "%s", why);
    cr_assert_eq(d.step, -1);
    cr_assert_str_eq(d.name, "run_1");
    cr_assert_eq(d.meta_count, 0);
    cr_assert_eq(d.nentries, 4);
    ck_manifest_cleanup(&d);
    ck_manifest_cleanup(&m);
    free(json);
}

Test(manifest, round_trip_of_an_empty_checkpoint)
{
    ck_manifest m, d;
    size_t len, i;
    char *json;

    build_valid(&m);
    for (i = 0; i < m.nentries; i++) {
        free(m.entries[i].path);
        free(m.entries[i].key);
        free(m.entries[i].etag);
        free(m.entries[i].chunks);
    }
    m.nentries = 0;
    ck_manifest_sum(&m);
    json = encode(&m, &len);
    cr_assert_eq(ck_manifest_decode(&d, json, len, why, sizeof(why)), S3CKPT_OK, "%s", why);
    cr_assert_eq(d.nentries, 0);
    cr_assert_eq(d.files, 0);
    cr_assert_eq(d.bytes, 0);
    ck_manifest_cleanup(&d);
    ck_manifest_cleanup(&m);
    free(json);
}

Test(manifest, accepts_unknown_extra_fields)
{
    ck_manifest m, d;
    char *json, *a, *b, *c;

    build_valid(&m);
    json = encode(&m, NULL);
    a = replace_once(json, "{\"format\"",
                     "{\"future_field\":{\"x\":[1,2,{\"y\":null}]},\"format\"");
    b = replace_once(a, "{\"path\":\"a.txt\"", "{\"x-compression-hint\":true,\"path\":\"a.txt\"");
    c = replace_once(b, "\"totals\":{", "\"totals\":{\"symlinks\":0,");
    cr_assert_eq(ck_manifest_decode(&d, c, strlen(c), why, sizeof(why)), S3CKPT_OK, "%s", why);
    cr_assert_eq(d.nentries, 4);
    cr_assert_str_eq(d.entries[3].path, "a.txt");
    ck_manifest_cleanup(&d);
    ck_manifest_cleanup(&m);
    free(c);
    free(b);
    free(a);
    free(json);
}

Test(manifest, decode_masks_setuid_setgid_and_sticky_bits)
{
    ck_manifest m, d;
    size_t len;
    char *json;

    build_valid(&m);
    find(&m, "a.txt")->mode = 04755;
    find(&m, "a")->mode = 03777;
    json = encode(&m, &len);
    cr_assert_eq(ck_manifest_decode(&d, json, len, why, sizeof(why)), S3CKPT_OK, "%s", why);
    cr_assert_eq(find(&d, "a.txt")->mode, 0755, "mode %o", find(&d, "a.txt")->mode);
    cr_assert_eq(find(&d, "a")->mode, 0777, "mode %o", find(&d, "a")->mode);
    ck_manifest_cleanup(&d);
    ck_manifest_cleanup(&m);
    free(json);
}

/* ---- rejected: the document ---- */

Test(manifest, rejects_invalid_json)
{
    static const char truncated[] = "{\"format\":\"s3ckpt-manifest\",\"version\":1,";

    expect_corrupt_json(truncated, strlen(truncated), "not valid JSON");
    expect_corrupt_json("", 0, "not valid JSON");
    expect_corrupt_json("{}x", 3, "not valid JSON");
}

Test(manifest, rejects_json_that_is_not_an_object)
{
    expect_corrupt_json("[]", 2, "not a JSON object");
    expect_corrupt_json("[{\"format\":\"s3ckpt-manifest\"}]", 30, "not a JSON object");
    /* scalars are refused by the JSON parser itself */
    expect_corrupt_json("42", 2, "JSON");
    expect_corrupt_json("null", 4, "JSON");
    expect_corrupt_json("\"s3ckpt-manifest\"", 17, "JSON");
}

Test(manifest, rejects_wrong_format_name)
{
    expect_corrupt_edit("\"format\":\"s3ckpt-manifest\"", "\"format\":\"other-manifest\"",
                        "not an s3ckpt manifest");
}

Test(manifest, rejects_unknown_version_naming_it)
{
    expect_corrupt_edit("\"version\":1", "\"version\":2", "version 2");
}

Test(manifest, rejects_duplicate_json_keys)
{
    expect_corrupt_edit("{\"format\"", "{\"name\":\"other\",\"format\"", "duplicate");
}

Test(manifest, rejects_duplicate_json_keys_inside_an_entry)
{
    expect_corrupt_edit("{\"path\":\"a.txt\"", "{\"path\":\"b.txt\",\"path\":\"a.txt\"",
                        "duplicate");
}

/* ---- rejected: paths ---- */

Test(manifest, rejects_dotdot_path)
{
    ck_manifest m;

    build_valid(&m);
    set_path(&m.entries[0], "../x");
    expect_corrupt(&m, "unsafe path \"../x\"");
}

Test(manifest, rejects_absolute_path)
{
    ck_manifest m;

    build_valid(&m);
    set_path(&m.entries[0], "/etc/x");
    expect_corrupt(&m, "absolute");
}

Test(manifest, rejects_dot_component)
{
    ck_manifest m;

    build_valid(&m);
    set_path(&m.entries[0], "a/./b");
    expect_corrupt(&m, "unsafe path \"a/./b\"");
}

Test(manifest, rejects_empty_component)
{
    ck_manifest m;

    build_valid(&m);
    set_path(&m.entries[0], "a//b");
    expect_corrupt(&m, "empty path component");
}

Test(manifest, rejects_unsafe_path_in_a_file_entry_even_with_matching_key)
{
    ck_manifest m;

    build_valid(&m);
    set_file(find(&m, "a.txt"), "../../etc/passwd", 10, CHUNK, 9);
    expect_corrupt(&m, "unsafe path");
}

Test(manifest, rejects_duplicate_paths)
{
    ck_manifest m;

    build_valid(&m);
    /* a second "a/c" right after the first */
    memmove(&m.entries[3], &m.entries[2], 2 * sizeof(*m.entries));
    memset(&m.entries[2], 0, sizeof(*m.entries));
    set_file(&m.entries[2], "a/c", 0, CHUNK, 2);
    m.nentries = 5;
    ck_manifest_sum(&m);
    expect_corrupt(&m, "duplicate path \"a/c\"");
}

Test(manifest, rejects_a_file_and_a_path_inside_it)
{
    ck_manifest m;

    build_valid(&m);
    set_file(find(&m, "a"), "a", 0, CHUNK, 5); /* "a" is now a file, "a/b.bin" follows it */
    ck_manifest_sum(&m);
    expect_corrupt(&m, "\"a\" is a file but \"a/b.bin\" is inside it");
}

Test(manifest, rejects_unsorted_entries)
{
    ck_manifest m;
    ck_entry t;

    build_valid(&m);
    /* strcmp order ("a.txt" < "a/c") is not ck_path_cmp order */
    t = m.entries[2];
    m.entries[2] = m.entries[3];
    m.entries[3] = t;
    expect_corrupt(&m, "not sorted");
}

/* ---- rejected: lengths, totals, digests ---- */

Test(manifest, rejects_chunk_count_not_matching_size)
{
    ck_manifest m;

    build_valid(&m);
    find(&m, "a.txt")->size = CHUNK + 10; /* needs 2 chunks, lists 1 */
    ck_manifest_sum(&m);
    expect_corrupt(&m, "1 chunks listed, a 65546-byte file has 2");
}

Test(manifest, rejects_chunks_for_an_empty_file)
{
    ck_manifest m;
    ck_entry *e;

    build_valid(&m);
    e = find(&m, "a.txt");
    e->size = 0;
    ck_manifest_sum(&m);
    expect_corrupt(&m, "chunks listed");
}

Test(manifest, rejects_chunk_raw_lengths_not_adding_up_to_size)
{
    ck_manifest m;
    ck_entry *e;

    build_valid(&m);
    e = find(&m, "a/b.bin");
    e->chunks[2].raw_len -= 1; /* count still right, lengths sum to size - 1 */
    expect_corrupt(&m, "chunk 2 has 18927 raw bytes, expected 18928");
}

Test(manifest, rejects_short_middle_chunk_even_if_lengths_add_up)
{
    ck_manifest m;
    ck_entry *e;

    build_valid(&m);
    e = find(&m, "a/b.bin");
    e->chunks[0].raw_len -= 5;
    e->chunks[2].raw_len += 5; /* sum unchanged, but chunk 0 is not a full chunk */
    expect_corrupt(&m, "raw bytes, expected");
}

Test(manifest, rejects_stored_lengths_not_adding_up_to_object_size)
{
    ck_manifest m;

    build_valid(&m);
    find(&m, "a/b.bin")->object_size += 1;
    ck_manifest_sum(&m);
    expect_corrupt(&m, "stored lengths add up to");
}

/* A stored length beyond what a frame of raw_len bytes can take would make a reader read more
 * than its buffer holds: refused even when every sum agrees. */
Test(manifest, rejects_stored_length_above_the_frame_bound)
{
    ck_manifest m;
    ck_entry *e;
    uint32_t extra;

    build_valid(&m);
    e = find(&m, "a/b.bin");
    extra = (uint32_t)ck_codec_bound(e->chunks[0].raw_len) + 1 - e->chunks[0].stored_len;
    e->chunks[0].stored_len += extra;
    e->object_size += extra;
    ck_manifest_sum(&m);
    expect_corrupt(&m, "more than a frame");
}

Test(manifest, rejects_totals_not_matching_entries)
{
    ck_manifest m;

    build_valid(&m);
    m.bytes += 1;
    expect_corrupt(&m, "totals");
}

Test(manifest, rejects_file_count_not_matching_entries)
{
    ck_manifest m;

    build_valid(&m);
    m.files -= 1;
    expect_corrupt(&m, "do not match the entries");
}

Test(manifest, rejects_bad_chunk_digest_hex)
{
    ck_manifest m;
    char hex[CK_DIGEST_HEX_LEN], bad[CK_DIGEST_HEX_LEN];
    char *json, *edited;

    build_valid(&m);
    ck_digest_to_hex(&find(&m, "a.txt")->chunks[0].digest, hex);
    memcpy(bad, hex, sizeof(bad));
    bad[7] = 'g';
    json = encode(&m, NULL);
    edited = replace_once(json, hex, bad);
    expect_corrupt_json(edited, strlen(edited), "digest is not 32 hex digits");
    free(edited);
    free(json);
    ck_manifest_cleanup(&m);
}

Test(manifest, rejects_short_file_digest_hex)
{
    ck_manifest m;
    char hex[CK_DIGEST_HEX_LEN], bad[CK_DIGEST_HEX_LEN];
    char *json, *edited;

    build_valid(&m);
    ck_digest_to_hex(&find(&m, "a.txt")->digest, hex);
    memcpy(bad, hex, sizeof(bad));
    bad[31] = '\0';
    json = encode(&m, NULL);
    edited = replace_once(json, hex, bad);
    expect_corrupt_json(edited, strlen(edited), "\"digest\" is not 32 hex digits");
    free(edited);
    free(json);
    ck_manifest_cleanup(&m);
}

Test(manifest, rejects_file_digest_not_matching_chunk_digests)
{
    ck_manifest m;

    build_valid(&m);
    find(&m, "a/b.bin")->digest.b[0] ^= 1;
    expect_corrupt(&m, "a/b.bin: file digest does not match its chunk digests");
}

Test(manifest, rejects_chunk_digest_changed_without_file_digest)
{
    ck_manifest m;

    build_valid(&m);
    find(&m, "a/b.bin")->chunks[1].digest.b[15] ^= 0x80;
    expect_corrupt(&m, "does not match its chunk digests");
}

Test(manifest, rejects_key_not_equal_to_data_prefix_plus_path)
{
    ck_manifest m;
    ck_entry *e;

    build_valid(&m);
    e = find(&m, "a.txt");
    free(e->key);
    e->key = strdup("data/other.txt");
    expect_corrupt(&m, "data key \"data/other.txt\" is not \"data/a.txt\"");
}

Test(manifest, rejects_key_escaping_the_data_prefix)
{
    ck_manifest m;
    ck_entry *e;

    build_valid(&m);
    e = find(&m, "a.txt");
    free(e->key);
    e->key = strdup("../step-00000001/data/a.txt");
    expect_corrupt(&m, "is not \"data/a.txt\"");
}

Test(manifest, rejects_key_with_trailing_bytes)
{
    ck_manifest m;
    ck_entry *e;

    build_valid(&m);
    e = find(&m, "a.txt");
    free(e->key);
    e->key = strdup("data/a.txt.bak");
    expect_corrupt(&m, "data key");
}

Test(manifest, rejects_unknown_codec)
{
    expect_corrupt_edit("\"codec\":\"zstd\"", "\"codec\":\"lz4\"", "unsupported codec \"lz4\"");
}

Test(manifest, rejects_unknown_filter)
{
    expect_corrupt_edit("\"filter\":\"none\"", "\"filter\":\"bitshuffle\"",
                        "unsupported filter \"bitshuffle\"");
}

Test(manifest, filters_are_written_by_name)
{
    ck_manifest m;
    size_t len;
    char *json;

    build_valid(&m);
    json = encode(&m, &len);
    cr_assert_not_null(strstr(json, "\"filter\":\"bytes4\""), "%s", json);
    cr_assert_not_null(strstr(json, "\"filter\":\"bytes2\""), "%s", json);
    cr_assert_not_null(strstr(json, "\"filter\":\"none\""), "%s", json);
    free(json);
    ck_manifest_cleanup(&m);
}

Test(manifest, rejects_filter_auto_which_is_only_a_push_option)
{
    expect_corrupt_edit("\"filter\":\"none\"", "\"filter\":\"auto\"",
                        "unsupported filter \"auto\"");
}

Test(manifest, rejects_unknown_digest_algorithm)
{
    expect_corrupt_edit("\"digest\":\"xxh3-128\"", "\"digest\":\"sha256\"",
                        "unsupported digest \"sha256\"");
}

Test(manifest, rejects_negative_size)
{
    expect_corrupt_edit("\"size\":10,", "\"size\":-10,", "non-negative");
}

Test(manifest, rejects_negative_object_size)
{
    ck_manifest m;
    char from[64], to[64];

    build_valid(&m);
    snprintf(from, sizeof(from), "\"object_size\":%llu,",
             (unsigned long long)find(&m, "a.txt")->object_size);
    snprintf(to, sizeof(to), "\"object_size\":-%llu,",
             (unsigned long long)find(&m, "a.txt")->object_size);
    ck_manifest_cleanup(&m);
    expect_corrupt_edit(from, to, "non-negative");
}

Test(manifest, rejects_negative_chunk_length)
{
    expect_corrupt_edit("[10,20,", "[-10,20,", "impossible length");
}

Test(manifest, rejects_negative_totals)
{
    expect_corrupt_edit("\"dirs\":1", "\"dirs\":-1", "totals");
}

Test(manifest, rejects_chunk_size_below_minimum)
{
    ck_manifest m;

    build_valid(&m);
    m.chunk_size = CK_CHUNK_MIN - 1;
    expect_corrupt(&m, "chunk_size 65535 is outside");
}

Test(manifest, rejects_chunk_size_above_maximum)
{
    ck_manifest m;

    build_valid(&m);
    m.chunk_size = CK_CHUNK_MAX + 1;
    expect_corrupt(&m, "chunk_size 268435457 is outside");
}

Test(manifest, rejects_zero_chunk_size)
{
    expect_corrupt_edit("\"chunk_size\":65536", "\"chunk_size\":0", "chunk_size 0 is outside");
}

Test(manifest, rejects_mode_above_07777)
{
    ck_manifest m;

    build_valid(&m);
    find(&m, "a.txt")->mode = 010000;
    expect_corrupt(&m, "bad \"mode\"");
}

Test(manifest, rejects_bad_checkpoint_name)
{
    ck_manifest m;

    build_valid(&m);
    free(m.name);
    m.name = strdup("../evil");
    expect_corrupt(&m, "bad checkpoint name");
}

Test(manifest, rejects_unknown_entry_type)
{
    expect_corrupt_edit("\"type\":\"dir\"", "\"type\":\"symlink\"", "\"type\" must be");
}

Test(manifest, rejects_negative_step)
{
    expect_corrupt_edit("\"step\":7", "\"step\":-7", "\"step\"");
}

Test(manifest, rejects_chunk_that_is_not_a_triple)
{
    expect_corrupt_edit("[10,20,", "[10,20,1,", "is not [raw_len, stored_len");
}

/* ---- the fuzz corpus as a regression suite ---- */

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    char *p;
    long n;

    cr_assert_not_null(f, "%s", path);
    cr_assert_eq(fseek(f, 0, SEEK_END), 0);
    n = ftell(f);
    cr_assert_geq(n, 0);
    rewind(f);
    p = malloc((size_t)n + 1);
    cr_assert_not_null(p);
    cr_assert_eq(fread(p, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    *len = (size_t)n;
    return p;
}

/* tests/fuzz/make_manifest_corpus writes valid_* seeds with the real CLI and derives the others
 * by breaking one rule each; when the format changes, stale seeds show up here. */
Test(manifest, corpus_valid_seeds_decode_and_hostile_seeds_are_rejected)
{
    char dir[4096], path[4600];
    const char *slash = strrchr(__FILE__, '/');
    struct dirent *de;
    int nvalid = 0, nbad = 0;
    DIR *d;

    cr_assert_not_null(slash);
    snprintf(dir, sizeof(dir), "%.*s/../fuzz/corpus/manifest", (int)(slash - __FILE__), __FILE__);
    d = opendir(dir);
    cr_assert_not_null(d, "no corpus at %s", dir);
    while ((de = readdir(d))) {
        ck_manifest m;
        size_t len;
        char *json;
        s3ckpt_status st;

        if (de->d_name[0] == '.')
            continue;
        snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
        json = slurp(path, &len);
        why[0] = '\0';
        st = ck_manifest_decode(&m, json, len, why, sizeof(why));
        if (strncmp(de->d_name, "valid_", 6) == 0) {
            cr_assert_eq(st, S3CKPT_OK, "%s: %s", de->d_name, why);
            nvalid++;
        } else {
            cr_assert_eq(st, S3CKPT_ECORRUPT, "%s decoded (status %d)", de->d_name, st);
            cr_assert_neq(why[0], '\0', "%s: no reason given", de->d_name);
            nbad++;
        }
        ck_manifest_cleanup(&m);
        free(json);
    }
    closedir(d);
    cr_assert_geq(nvalid, 3, "too few valid seeds");
    cr_assert_geq(nbad, 10, "too few hostile seeds");
}
