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

int ck_store_s3_parse(const char *url, char *bucket, size_t bucket_len, char *prefix,
                      size_t prefix_len, char *why, size_t why_len)
{
    const char *p = url + 5, *slash;
    size_t n, i;

    if (strncmp(url, "s3://", 5)) {
        snprintf(why, why_len, "expected s3://bucket/prefix");
        return -1;
    }
    slash = strchr(p, '/');
    n = slash ? (size_t)(slash - p) : strlen(p);
    if (n < 3 || n > 63 || n >= bucket_len) {
        snprintf(why, why_len, "a bucket name has 3 to 63 characters");
        return -1;
    }
    for (i = 0; i < n; i++) {
        char c = p[i];

        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '-' ||
              c == '_' || (c >= 'A' && c <= 'Z'))) {
            snprintf(why, why_len, "a bucket name holds only letters, digits, '.', '-', '_'");
            return -1;
        }
    }
    if (p[0] == '-' || p[0] == '.' || p[n - 1] == '-' || p[n - 1] == '.') {
        snprintf(why, why_len, "a bucket name starts and ends with a letter or digit");
        return -1;
    }
    memcpy(bucket, p, n);
    bucket[n] = '\0';
    p = slash ? slash + 1 : "";
    n = strlen(p);
    while (n && p[n - 1] == '/')
        n--;
    if (n + 2 > prefix_len) {
        snprintf(why, why_len, "the prefix is too long");
        return -1;
    }
    for (i = 0; i < n; i++) {
        unsigned char c = (unsigned char)p[i];

        if (c < 0x20 || c == 0x7f || (c == '/' && (i == 0 || p[i - 1] == '/'))) {
            snprintf(why, why_len, "the prefix may not hold control characters or empty parts");
            return -1;
        }
    }
    memcpy(prefix, p, n);
    if (n)
        prefix[n++] = '/';
    prefix[n] = '\0';
    return 0;
}

void ck_store_counters_get(ck_store *s, ck_store_counters *out)
{
    memset(out, 0, sizeof(*out));
    if (s && s->ops->counters)
        s->ops->counters(s, out);
}

s3ckpt_status ck_store_open(ck_store **out, const char *url, int create, const ck_remote_cfg *rc,
                            ck_err *err)
{
    static const ck_remote_cfg none;
    char root[4096], bucket[64], why[120];

    *out = NULL;
    if (!url || !*url)
        return ck_err_set(err, S3CKPT_ECONFIG, "no store given");
    if (strncmp(url, "file:", 5) == 0) {
        if (ck_store_file_path(url, root, sizeof(root)))
            return ck_err_set(err, S3CKPT_ECONFIG,
                              "store \"%s\": a file store is file:///absolute/path", url);
        return ck_store_file_open(out, url, root, create, err);
    }
    if (strncmp(url, "s3://", 5) == 0) {
        if (ck_store_s3_parse(url, bucket, sizeof(bucket), root, sizeof(root), why, sizeof(why)))
            return ck_err_set(err, S3CKPT_ECONFIG, "store \"%s\": %s", url, why);
        return ck_store_s3_open(out, url, bucket, root, rc ? rc : &none, err);
    }
    return ck_err_set(err, S3CKPT_ECONFIG,
                      "store \"%s\": expected file:///absolute/path or s3://bucket/prefix", url);
}

void ck_store_free(ck_store *s)
{
    if (s)
        s->ops->free(s);
}
