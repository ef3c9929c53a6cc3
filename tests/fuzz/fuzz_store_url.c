/*
 * fuzz_store_url - libFuzzer target for the store URL parser (user input on every command).
 * Property: a parsed file:// URL is an absolute path with no NUL inside, and never longer than
 * the buffer it was given.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "store.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char url[8192], path[512];

    if (size >= sizeof(url))
        return 0;
    memcpy(url, data, size);
    url[size] = '\0';
    memset(path, 'x', sizeof(path));
    if (ck_store_file_path(url, path, sizeof(path)) != 0)
        return 0;
    if (path[0] != '/' || memchr(path, '\0', sizeof(path)) == NULL)
        abort();
    return 0;
}
