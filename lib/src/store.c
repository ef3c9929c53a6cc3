/*
 * store - store URLs and backend selection. A URL names the backend; everything past this point
 * talks to the ck_store_ops interface only.
 */
#include "store.h"

#include <stdio.h>
#include <string.h>

int ck_store_file_path(const char *url, char *path, size_t path_len)
{
    const char *p;
    size_t n = 0;

    if (strncmp(url, "file://", 7))
        return -1;
    p = url + 7;
    if (strncmp(p, "localhost/", 10) == 0)
        p += 9;
    if (*p != '/')
        return -1; /* file://host/... and relative paths are not supported */
    for (; *p; p++) {
        char c = *p;

        if (c == '%') {
            int hi = ck_hexval(p[1]), lo = hi < 0 ? -1 : ck_hexval(p[2]);

            if (lo < 0 || (hi == 0 && lo == 0))
                return -1;
            c = (char)(hi << 4 | lo);
            p += 2;
        }
        if (n + 1 >= path_len)
            return -1;
        path[n++] = c;
    }
    path[n] = '\0';
    return 0;
}

s3ckpt_status ck_store_open(ck_store **out, const char *url, int create, ck_err *err)
{
    char root[4096];

    *out = NULL;
    if (!url || !*url)
        return ck_err_set(err, S3CKPT_ECONFIG, "no store given");
    if (strncmp(url, "file:", 5) == 0) {
        if (ck_store_file_path(url, root, sizeof(root)))
            return ck_err_set(err, S3CKPT_ECONFIG,
                              "store \"%s\": a file store is file:///absolute/path", url);
        return ck_store_file_open(out, url, root, create, err);
    }
    if (strncmp(url, "s3://", 5) == 0)
        return ck_err_set(err, S3CKPT_ECONFIG,
                          "store \"%s\": the S3 backend is not built yet; use file:///path", url);
    return ck_err_set(err, S3CKPT_ECONFIG,
                      "store \"%s\": expected file:///absolute/path or s3://bucket/prefix", url);
}

void ck_store_free(ck_store *s)
{
    if (s)
        s->ops->free(s);
}
