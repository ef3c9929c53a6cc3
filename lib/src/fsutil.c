/*
 * fsutil - the loops every file-handling module needs (full reads and writes that survive
 * EINTR and short transfers, mkdir -p, directory fsync), written once.
 */
#define _GNU_SOURCE /* sync_file_range */
#include "fsutil.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

char *ck_path_join(const char *a, const char *b)
{
    size_t n = strlen(a) + strlen(b) + 2;
    char *p = malloc(n);

    if (p)
        snprintf(p, n, "%s/%s", a, b);
    return p;
}

int ck_mkdir_parents(char *path, size_t keep, mode_t mode)
{
    char *p;

    for (p = path + keep + 1; (p = strchr(p, '/')); p++) {
        *p = '\0';
        if (mkdir(path, mode) && errno != EEXIST) {
            *p = '/';
            return -1;
        }
        *p = '/';
    }
    return 0;
}

int ck_pread_full(int fd, void *dst, size_t n, uint64_t off)
{
    char *p = dst;

    while (n) {
        ssize_t got = pread(fd, p, n, (off_t)off);

        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0) {
            if (got == 0)
                errno = 0;
            return -1;
        }
        p += got;
        n -= (size_t)got;
        off += (uint64_t)got;
    }
    return 0;
}

int ck_pwrite_full(int fd, const void *src, size_t n, uint64_t off)
{
    const char *p = src;

    while (n) {
        ssize_t put = pwrite(fd, p, n, (off_t)off);

        if (put < 0 && errno == EINTR)
            continue;
        if (put < 0)
            return -1;
        p += put;
        n -= (size_t)put;
        off += (uint64_t)put;
    }
    return 0;
}

int ck_write_full(int fd, const void *src, size_t n)
{
    const char *p = src;

    while (n) {
        ssize_t put = write(fd, p, n);

        if (put < 0 && errno == EINTR)
            continue;
        if (put < 0)
            return -1;
        p += put;
        n -= (size_t)put;
    }
    return 0;
}

int ck_fsync_dir(const char *path)
{
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC), rc;

    if (fd < 0)
        return -1;
    rc = fsync(fd);
    close(fd);
    return rc;
}

void ck_writeback(int fd, uint64_t off, uint64_t len, int wait)
{
    unsigned flags = SYNC_FILE_RANGE_WRITE;

    if (wait)
        flags |= SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WAIT_AFTER;
    if (len)
        (void)sync_file_range(fd, (off_t)off, (off_t)len, flags);
}
