/*
 * fuzz_trailer - libFuzzer target for the chunk-index trailer parser, which a resumed push reads
 * from objects already in the store (untrusted). Property: whatever decodes must encode back to
 * the same bytes, and must say where it starts from its own footer.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "trailer.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ck_entry e;
    uint64_t chunk_size = 0;
    unsigned char *again;

    memset(&e, 0, sizeof(e));
    if (size >= CK_TRAILER_FOOTER && ck_trailer_announced(data + size - CK_TRAILER_FOOTER) > size)
        return 0; /* a reader never reads past the object's start */
    if (ck_trailer_decode(data, size, &e, &chunk_size)) {
        free(e.chunks);
        return 0;
    }
    if (ck_trailer_size(e.nchunks) != size ||
        ck_trailer_announced(data + size - CK_TRAILER_FOOTER) != size)
        abort();
    again = malloc(size);
    if (!again)
        abort();
    ck_trailer_encode(&e, chunk_size, again);
    if (memcmp(again, data, size) && memcmp(again + 24, data + 24, size - 24))
        abort(); /* bytes 20..23 are reserved flags, written as 0 */
    free(again);
    free(e.chunks);
    return 0;
}
