/* err - status codes and the per-client error detail (first fatal error wins). */
#ifndef CK_ERR_H
#define CK_ERR_H

#include <pthread.h>

#include "s3ckpt.h"

#define CK_ERRMSG_MAX 1024

typedef struct ck_err {
    pthread_mutex_t lock;
    s3ckpt_status status; /* first fatal error, guarded by lock */
    char msg[CK_ERRMSG_MAX];
} ck_err;

void ck_err_init(ck_err *e);
void ck_err_cleanup(ck_err *e);
/* Clears the recorded error before a new operation. */
void ck_err_reset(ck_err *e);
/* Records st with a printf-style message unless an error is already recorded. Thread-safe.
 * Returns st so callers can write `return ck_err_set(...)`. */
s3ckpt_status ck_err_set(ck_err *e, s3ckpt_status st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* The recorded status, S3CKPT_OK when none. Thread-safe. */
s3ckpt_status ck_err_status(ck_err *e);
/* Maps an errno value from a local file operation to a status. */
s3ckpt_status ck_err_from_errno(int errnum);

#endif
