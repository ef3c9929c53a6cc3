/*
 * path - everything about names that come from outside. Paths in a manifest are hostile until
 * checked: one check here serves the pusher (what it records) and the puller (what it will
 * create), so both agree on what a valid checkpoint path is.
 */
#include "path.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

int ck_utf8_valid(const char *s)
{
    const unsigned char *p = (const unsigned char *)s;

    while (*p) {
        unsigned c = *p, n, cp, i;

        if (c < 0x80) {
            p++;
            continue;
        }
        if (c >= 0xc2 && c <= 0xdf)
            n = 1, cp = c & 0x1f;
        else if (c >= 0xe0 && c <= 0xef)
            n = 2, cp = c & 0x0f;
        else if (c >= 0xf0 && c <= 0xf4)
            n = 3, cp = c & 0x07;
        else
            return 0;
        for (i = 1; i <= n; i++) {
            if ((p[i] & 0xc0) != 0x80)
                return 0;
            cp = cp << 6 | (p[i] & 0x3f);
        }
        if ((n == 2 && cp < 0x800) || (n == 3 && (cp < 0x10000 || cp > 0x10ffff)) ||
            (cp >= 0xd800 && cp <= 0xdfff))
            return 0;
        p += n + 1;
    }
    return 1;
}

static int check(const char *path, size_t max, char *why, size_t why_len)
{
    size_t len = strlen(path), comp = 0, i;
    const char *start = path;

    if (len == 0) {
        snprintf(why, why_len, "empty path");
        return -1;
    }
    if (len >= max) {
        snprintf(why, why_len, "path longer than %zu bytes", max - 1);
        return -1;
    }
    if (!ck_utf8_valid(path)) {
        snprintf(why, why_len, "name is not valid UTF-8");
        return -1;
    }
    if (path[0] == '/') {
        snprintf(why, why_len, "absolute path");
        return -1;
    }
    for (i = 0; i <= len; i++) {
        unsigned char c = (unsigned char)path[i];

        if (c == '/' || c == '\0') {
            if (comp == 0) {
                snprintf(why, why_len, "empty path component");
                return -1;
            }
            if ((comp == 1 && start[0] == '.') ||
                (comp == 2 && start[0] == '.' && start[1] == '.')) {
                snprintf(why, why_len, "'.' or '..' component");
                return -1;
            }
            if (comp > 255) {
                snprintf(why, why_len, "path component longer than 255 bytes");
                return -1;
            }
            comp = 0;
            start = path + i + 1;
            continue;
        }
        if (c < 0x20 || c == 0x7f) {
            snprintf(why, why_len, "control character in path");
            return -1;
        }
        comp++;
    }
    return 0;
}

int ck_path_check(const char *path, char *why, size_t why_len)
{
    return check(path, CK_PATH_MAX, why, why_len);
}

int ck_key_check(const char *key, char *why, size_t why_len)
{
    return check(key, CK_KEY_MAX, why, why_len);
}

static int name_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '_' || c == '-';
}

int ck_name_check(const char *name, char *why, size_t why_len)
{
    size_t len = strlen(name), i;

    if (len == 0 || len > CK_NAME_MAX) {
        snprintf(why, why_len, "a name has 1 to %d characters", CK_NAME_MAX);
        return -1;
    }
    if (name[0] == '.') {
        snprintf(why, why_len, "a name may not start with '.'");
        return -1;
    }
    if (strcmp(name, "latest") == 0) {
        snprintf(why, why_len, "'latest' is reserved");
        return -1;
    }
    for (i = 0; i < len; i++) {
        if (!name_char(name[i])) {
            snprintf(why, why_len, "a name may only hold letters, digits, '.', '_' and '-'");
            return -1;
        }
    }
    return 0;
}

void ck_name_derive(const char *source, int64_t step, char *out, size_t out_len)
{
    const char *end, *base;
    size_t n = 0;

    if (out_len == 0)
        return;
    if (step >= 0) {
        snprintf(out, out_len, "step-%08" PRId64, step);
        return;
    }
    end = source + strlen(source);
    while (end > source && end[-1] == '/')
        end--;
    base = end;
    while (base > source && base[-1] != '/')
        base--;
    while (base < end && *base == '.')
        base++; /* names may not start with '.'; also turns "." and ".." into nothing */
    for (; base < end && n + 1 < out_len && n < CK_NAME_MAX; base++)
        out[n++] = name_char(*base) ? *base : '-';
    out[n] = '\0';
    if (n == 0 || strcmp(out, "latest") == 0)
        snprintf(out, out_len, "checkpoint");
}

int ck_path_cmp(const char *a, const char *b)
{
    const unsigned char *x = (const unsigned char *)a, *y = (const unsigned char *)b;

    for (; *x && *x == *y; x++, y++)
        ;
    if (*x == *y)
        return 0;
    if (*x == '/' && *y)
        return -1;
    if (*y == '/' && *x)
        return 1;
    return *x < *y ? -1 : 1;
}
