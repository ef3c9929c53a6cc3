/* buf - growable byte buffer with a hard cap (curl's dynbuf idea). */
#ifndef CK_BUF_H
#define CK_BUF_H

#include <stddef.h>

#include "s3ckpt.h"

typedef struct ck_buf {
    char *data; /* always NUL-terminated when non-NULL */
    size_t len;
    size_t cap;
    size_t max; /* hard cap on len */
} ck_buf;

void ck_buf_init(ck_buf *b, size_t max);
void ck_buf_cleanup(ck_buf *b);
/* Appends n bytes; ENOMEM on allocation failure, EINVAL when the cap would be exceeded. */
s3ckpt_status ck_buf_append(ck_buf *b, const void *p, size_t n);
s3ckpt_status ck_buf_printf(ck_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Value of one hex digit, -1 when c is not one. */
int ck_hexval(char c);
/* Hands the data to the caller (who frees it) and resets b. */
char *ck_buf_detach(ck_buf *b);

#endif
