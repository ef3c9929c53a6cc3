/*
 * err - the error detail kept on a client. Failures happen on worker threads, so the detail
 * lives in a mutex-guarded struct rather than in thread-local storage; the first fatal error is
 * kept because later ones are usually consequences of it (canceled jobs, aborted writers).
 */
#include "err.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

void ck_err_init(ck_err *e)
{
    pthread_mutex_init(&e->lock, NULL);
    e->status = S3CKPT_OK;
    e->msg[0] = '\0';
}

void ck_err_cleanup(ck_err *e)
{
    pthread_mutex_destroy(&e->lock);
}

void ck_err_reset(ck_err *e)
{
    pthread_mutex_lock(&e->lock);
    e->status = S3CKPT_OK;
    e->msg[0] = '\0';
    pthread_mutex_unlock(&e->lock);
}

s3ckpt_status ck_err_set(ck_err *e, s3ckpt_status st, const char *fmt, ...)
{
    va_list ap;

    pthread_mutex_lock(&e->lock);
    if (e->status == S3CKPT_OK && st != S3CKPT_OK) {
        e->status = st;
        va_start(ap, fmt);
        vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
        va_end(ap);
    }
    pthread_mutex_unlock(&e->lock);
    return st;
}

s3ckpt_status ck_err_status(ck_err *e)
{
    s3ckpt_status st;

    pthread_mutex_lock(&e->lock);
    st = e->status;
    pthread_mutex_unlock(&e->lock);
    return st;
}

s3ckpt_status ck_err_from_errno(int errnum)
{
    switch (errnum) {
    case ENOENT:
    case ENOTDIR:
        return S3CKPT_ENOTFOUND;
    case EEXIST:
    case ENOTEMPTY:
        return S3CKPT_EEXISTS;
    case ENOMEM:
        return S3CKPT_ENOMEM;
    default:
        return S3CKPT_EIO;
    }
}
