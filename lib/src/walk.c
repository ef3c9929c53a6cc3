/*
 * walk - turns the source of a push into a sorted entry list. Sorting (by ck_path_cmp) makes
 * the manifest and the order of work deterministic, which is what lets an interrupted push be
 * re-run and land on the same objects. Links and special files are refused rather than
 * followed: following a link could pull in data from outside the checkpoint, and restoring
 * one could point outside the destination.
 */
#define _GNU_SOURCE
#include "walk.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fsutil.h"
#include "path.h"

static s3ckpt_status add(ck_walk *w, ck_err *err, const char *path, const struct stat *sb)
{
    ck_walk_entry *e;

    if (w->n == w->cap) {
        size_t ncap = w->cap ? w->cap * 2 : 64;
        ck_walk_entry *p = realloc(w->entries, ncap * sizeof(*p));

        if (!p)
            return ck_err_set(err, S3CKPT_ENOMEM, "out of memory");
        w->entries = p;
        w->cap = ncap;
    }
    e = &w->entries[w->n];
    if (!(e->path = strdup(path)))
        return ck_err_set(err, S3CKPT_ENOMEM, "out of memory");
    w->n++;
    e->is_dir = S_ISDIR(sb->st_mode);
    e->mode = sb->st_mode & 0777;
    e->size = e->is_dir ? 0 : (uint64_t)sb->st_size;
    e->mtime_ns = (int64_t)sb->st_mtim.tv_sec * 1000000000 + sb->st_mtim.tv_nsec;
    e->dev = (uint64_t)sb->st_dev;
    e->ino = (uint64_t)sb->st_ino;
    return S3CKPT_OK;
}

static s3ckpt_status refuse(ck_err *err, const char *base, const char *rel, mode_t mode)
{
    const char *what = S_ISLNK(mode)    ? "a symbolic link"
                       : S_ISFIFO(mode) ? "a FIFO"
                       : S_ISSOCK(mode) ? "a socket"
                                        : "a device or special file";

    return ck_err_set(err, S3CKPT_EUNSUPPORTED,
                      "push: %s/%s is %s; a checkpoint holds regular files and directories only "
                      "(replace it with a copy of its target, or move it out)",
                      base, rel, what);
}

static s3ckpt_status walk_dir(ck_walk *w, ck_err *err, int dfd, const char *rel)
{
    s3ckpt_status st = S3CKPT_OK;
    struct dirent *de;
    char *child;
    DIR *d = fdopendir(dfd);

    if (!d) {
        close(dfd);
        return ck_err_set(err, ck_err_from_errno(errno), "push: %s/%s: %s", w->base, rel,
                          strerror(errno));
    }
    child =
        malloc(CK_PATH_MAX + 256); /* on the heap, not 4 KB of stack a level: trees may be deep */
    if (!child) {
        closedir(d);
        return ck_err_set(err, S3CKPT_ENOMEM, "out of memory");
    }
    while (!st && (errno = 0, de = readdir(d))) {
        char why[128];
        struct stat sb;

        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
            continue;
        snprintf(child, CK_PATH_MAX + 256, "%s%s%s", rel, *rel ? "/" : "", de->d_name);
        if (ck_path_check(child, why, sizeof(why))) {
            st = ck_err_set(err, S3CKPT_EUNSUPPORTED, "push: %s/%s: %s", w->base, child, why);
            break;
        }
        if (fstatat(dirfd(d), de->d_name, &sb, AT_SYMLINK_NOFOLLOW)) {
            st = ck_err_set(err, ck_err_from_errno(errno), "push: %s/%s: %s", w->base, child,
                            strerror(errno));
            break;
        }
        if (!S_ISREG(sb.st_mode) && !S_ISDIR(sb.st_mode)) {
            st = refuse(err, w->base, child, sb.st_mode);
            break;
        }
        st = add(w, err, child, &sb);
        if (!st && S_ISDIR(sb.st_mode)) {
            int cfd = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

            if (cfd < 0)
                st = ck_err_set(err, ck_err_from_errno(errno), "push: %s/%s: %s", w->base, child,
                                strerror(errno));
            else
                st = walk_dir(w, err, cfd, child);
        }
    }
    if (!st && errno)
        st = ck_err_set(err, S3CKPT_EIO, "push: reading %s/%s: %s", w->base, rel, strerror(errno));
    free(child);
    closedir(d);
    return st;
}

static int entry_cmp(const void *a, const void *b)
{
    return ck_path_cmp(((const ck_walk_entry *)a)->path, ((const ck_walk_entry *)b)->path);
}

s3ckpt_status ck_walk_run(ck_walk *w, const char *src, ck_err *err)
{
    s3ckpt_status st;
    struct stat sb;
    int fd;

    memset(w, 0, sizeof(*w));
    if (lstat(src, &sb))
        return ck_err_set(err, ck_err_from_errno(errno), "push: %s: %s", src, strerror(errno));
    if (S_ISREG(sb.st_mode)) {
        const char *slash = strrchr(src, '/');
        char why[128];

        if (ck_path_check(slash ? slash + 1 : src, why, sizeof(why)))
            return ck_err_set(err, S3CKPT_EUNSUPPORTED, "push: %s: %s", src, why);
        w->base = slash ? strndup(src, slash == src ? 1 : (size_t)(slash - src)) : strdup(".");
        if (!w->base)
            return ck_err_set(err, S3CKPT_ENOMEM, "out of memory");
        return add(w, err, slash ? slash + 1 : src, &sb);
    }
    if (!S_ISDIR(sb.st_mode))
        return refuse(err, ".", src, sb.st_mode);
    if (!(w->base = strdup(src)))
        return ck_err_set(err, S3CKPT_ENOMEM, "out of memory");
    while (strlen(w->base) > 1 && w->base[strlen(w->base) - 1] == '/')
        w->base[strlen(w->base) - 1] = '\0';
    fd = open(src, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return ck_err_set(err, ck_err_from_errno(errno), "push: %s: %s", src, strerror(errno));
    st = walk_dir(w, err, fd, "");
    if (!st && w->n > 1)
        qsort(w->entries, w->n, sizeof(*w->entries), entry_cmp);
    return st;
}

void ck_walk_cleanup(ck_walk *w)
{
    size_t i;

    for (i = 0; i < w->n; i++)
        free(w->entries[i].path);
    free(w->entries);
    free(w->base);
    memset(w, 0, sizeof(*w));
}

char *ck_walk_local_path(const ck_walk *w, const ck_walk_entry *e)
{
    return ck_path_join(w->base, e->path);
}
