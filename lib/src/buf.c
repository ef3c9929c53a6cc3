/*
 * buf - a growable buffer with a hard cap. Everything read from outside (a manifest, `latest`,
 * later an XML body) goes through one of these, so a hostile or broken peer cannot make us
 * allocate without bound.
 */
#include "buf.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void ck_buf_init(ck_buf *b, size_t max)
{
    b->data = NULL;
    b->len = 0;
    b->cap = 0;
    b->max = max;
}

void ck_buf_cleanup(ck_buf *b)
{
    free(b->data);
    ck_buf_init(b, b->max);
}

static s3ckpt_status reserve(ck_buf *b, size_t extra)
{
    size_t need, ncap;
    char *p;

    if (extra > b->max - b->len || extra >= SIZE_MAX - b->len)
        return S3CKPT_EINVAL;
    need = b->len + extra + 1;
    if (need <= b->cap)
        return S3CKPT_OK;
    ncap = b->cap ? b->cap : 256;
    while (ncap < need)
        ncap = ncap > SIZE_MAX / 2 ? need : ncap * 2;
    p = realloc(b->data, ncap);
    if (!p)
        return S3CKPT_ENOMEM;
    b->data = p;
    b->cap = ncap;
    return S3CKPT_OK;
}

s3ckpt_status ck_buf_append(ck_buf *b, const void *p, size_t n)
{
    s3ckpt_status st = reserve(b, n);

    if (st)
        return st;
    if (n)
        memcpy(b->data + b->len, p, n);
    b->len += n;
    b->data[b->len] = '\0';
    return S3CKPT_OK;
}

s3ckpt_status ck_buf_printf(ck_buf *b, const char *fmt, ...)
{
    va_list ap;
    int n;
    s3ckpt_status st;

    va_start(ap, fmt);
    n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0)
        return S3CKPT_EINVAL;
    st = reserve(b, (size_t)n);
    if (st)
        return st;
    va_start(ap, fmt);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
    return S3CKPT_OK;
}

char *ck_buf_detach(ck_buf *b)
{
    char *p = b->data;

    ck_buf_init(b, b->max);
    return p;
}

int ck_hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}
