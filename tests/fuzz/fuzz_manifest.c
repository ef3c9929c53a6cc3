/*
 * fuzz_manifest - libFuzzer target for the manifest decoder, the parser of the one file a
 * reader trusts. Besides "never crash, never leak", it checks a real property: whatever decode
 * accepts, encode must turn back into a manifest that decodes again to the same entries.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "manifest.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ck_manifest m, again;
    char why[512], *json = NULL;
    size_t len = 0, i;

    if (ck_manifest_decode(&m, (const char *)data, size, why, sizeof(why)) != S3CKPT_OK)
        return 0;
    if (ck_manifest_encode(&m, &json, &len) != S3CKPT_OK)
        abort(); /* a valid manifest must encode */
    if (ck_manifest_decode(&again, json, len, why, sizeof(why)) != S3CKPT_OK)
        abort(); /* what we write, we must read back */
    if (again.nentries != m.nentries || again.files != m.files || again.bytes != m.bytes ||
        again.stored_bytes != m.stored_bytes || again.chunk_size != m.chunk_size ||
        again.step != m.step || strcmp(again.name, m.name) != 0)
        abort();
    for (i = 0; i < m.nentries; i++) {
        const ck_entry *a = &m.entries[i], *b = &again.entries[i];

        if (strcmp(a->path, b->path) || a->is_dir != b->is_dir || a->mode != b->mode ||
            a->size != b->size || a->nchunks != b->nchunks ||
            !ck_digest_equal(&a->digest, &b->digest))
            abort();
    }
    ck_manifest_cleanup(&again);
    ck_manifest_cleanup(&m);
    free(json);
    return 0;
}
