/*
 * store_file - the embedded default store: a directory laid out exactly like a bucket, one file
 * per key. Objects are written to a hidden temporary name and renamed into place, so a key
 * either holds a whole object or nothing; create-if-absent uses link(2), which fails when the
 * target exists; compare-and-swap holds an flock on the root while it compares and renames.
 * sync() is one syncfs(2) before a commit point instead of an fsync per object.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "digest.h"
#include "fsutil.h"
#include "path.h"
#include "store.h"

/* Write-behind: writeback of an object starts every WB_STEP bytes and the writer waits for
 * what is older than WB_WINDOW; a committed object's last range is waited for when the next
 * large object commits. Dirty data stays bounded, the disk works while chunks are compressed,
 * the final sync is short, and a disk slower than the compressor slows writes down where push
 * sees it (adaptive compression). Advice only: errors surface at sync. Small objects only get
 * their writeback started. */
#define WB_STEP ((uint64_t)8 << 20)
#define WB_WINDOW ((uint64_t)32 << 20)

typedef struct wb_range {
    int fd; /* a duplicate: the object's own descriptor closes at commit; -1: none */
    uint64_t off, len;
} wb_range;

typedef struct file_store {
    ck_store base;
    char *root;
    int rootfd;
    pthread_mutex_t wb_lock;
    wb_range wb_prev; /* of the last large object committed */
} file_store;

struct ck_reader {
    file_store *fs;
    int fd;
    uint64_t size;
    char *key;
};

struct ck_writer {
    file_store *fs;
    int fd;
    char *tmp, *final, *key;
    uint64_t written, started, waited; /* bytes written, sent to writeback, known on disk */
};

/* Starts writeback of what w wrote since the last time; waits for what is older than the
 * window. */
static void wb_start(ck_writer *w)
{
    ck_writeback(w->fd, w->started, w->written - w->started, 0);
    w->started = w->written;
    if (w->started - w->waited > WB_WINDOW) {
        ck_writeback(w->fd, w->waited, w->started - WB_WINDOW - w->waited, 1);
        w->waited = w->started - WB_WINDOW;
    }
}

/* Forgets (wait 0) or waits for the previous large object's last range. */
static void wb_prev_done(file_store *fs, int wait)
{
    if (fs->wb_prev.fd < 0)
        return;
    if (wait)
        ck_writeback(fs->wb_prev.fd, fs->wb_prev.off, fs->wb_prev.len, 1);
    close(fs->wb_prev.fd);
    fs->wb_prev.fd = -1;
}

/* At commit: the object's tail goes to writeback, the previous large object's is waited for,
 * and this one's becomes the previous. */
static void wb_commit(ck_writer *w)
{
    file_store *fs = w->fs;

    wb_start(w);
    if (w->written < WB_STEP)
        return;
    pthread_mutex_lock(&fs->wb_lock);
    wb_prev_done(fs, 1);
    fs->wb_prev = (wb_range){fcntl(w->fd, F_DUPFD_CLOEXEC, 0), w->waited, w->written - w->waited};
    pthread_mutex_unlock(&fs->wb_lock);
}

static atomic_uint tmp_counter;

static s3ckpt_status fail_errno(file_store *fs, const char *op, const char *key, int errnum)
{
    return ck_err_set(fs->base.err, ck_err_from_errno(errnum), "%s %s: %s: %s", op, fs->base.url,
                      key, strerror(errnum));
}

/* root + "/" + key, after checking key is a safe relative path. */
static char *key_path(file_store *fs, const char *key)
{
    char why[128], *p;
    size_t n;

    if (ck_key_check(key, why, sizeof(why))) {
        ck_err_set(fs->base.err, S3CKPT_EINVAL, "store %s: bad key \"%.200s\": %s", fs->base.url,
                   key, why);
        return NULL;
    }
    n = strlen(fs->root) + strlen(key) + 2;
    p = malloc(n);
    if (!p) {
        ck_err_set(fs->base.err, S3CKPT_ENOMEM, "out of memory");
        return NULL;
    }
    snprintf(p, n, "%s/%s", fs->root, key);
    return p;
}

#define TMP_TAG ".s3ckpt-tmp."

/* "<dir of final>/.s3ckpt-tmp.<pid>.<n>": fixed length, so any valid name can be written */
static char *tmp_name(const char *final)
{
    const char *base = strrchr(final, '/') + 1;
    size_t n = (size_t)(base - final) + 64;
    char *t = malloc(n);

    if (t)
        snprintf(t, n, "%.*s" TMP_TAG "%ld.%u", (int)(base - final), final, (long)getpid(),
                 atomic_fetch_add(&tmp_counter, 1));
    return t;
}

static void etag_of(const void *data, size_t len, char out[CK_ETAG_MAX])
{
    snprintf(out, CK_ETAG_MAX, "%016" PRIx64, ck_digest64(data, len));
}

static s3ckpt_status fs_get(ck_store *s, const char *key, size_t max_bytes, ck_buf *out,
                            ck_obj_info *info)
{
    file_store *fs = (file_store *)s;
    s3ckpt_status st = S3CKPT_OK;
    char *path = key_path(fs, key), chunk[65536];
    struct stat sb;
    int fd = -1;
    ssize_t n;

    if (!path)
        return ck_err_status(s->err);
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0 || fstat(fd, &sb)) {
        st = errno == ENOENT || errno == ENOTDIR ? S3CKPT_ENOTFOUND
                                                 : fail_errno(fs, "get", key, errno);
        goto out;
    }
    if (!S_ISREG(sb.st_mode)) { /* a "prefix", as a bucket would say */
        st = S3CKPT_ENOTFOUND;
        goto out;
    }
    out->max = max_bytes;
    while ((n = read(fd, chunk, sizeof(chunk))) != 0) {
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            st = fail_errno(fs, "get", key, errno);
            goto out;
        }
        st = ck_buf_append(out, chunk, (size_t)n);
        if (st) {
            st = ck_err_set(s->err, st, "get %s: %s: object larger than %zu bytes", s->url, key,
                            max_bytes);
            goto out;
        }
    }
    if (info) {
        info->size = out->len;
        etag_of(out->data ? out->data : "", out->len, info->etag);
    }
out:
    if (fd >= 0)
        close(fd);
    free(path);
    return st;
}

/* Takes the root's lock and checks that key's ETag is still if_match (EEXISTS when it is not,
 * or the key is gone). The lock is held until *lockfd is closed. */
static s3ckpt_status lock_if_match(file_store *fs, const char *key, const char *if_match,
                                   int *lockfd)
{
    ck_buf cur;
    ck_obj_info ci;
    s3ckpt_status st;

    *lockfd = openat(fs->rootfd, ".s3ckpt.lock", O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (*lockfd < 0 || flock(*lockfd, LOCK_EX))
        return fail_errno(fs, "lock", ".s3ckpt.lock", errno);
    ck_buf_init(&cur, 0);
    st = fs_get(&fs->base, key, 1 << 20, &cur, &ci);
    ck_buf_cleanup(&cur);
    if (st == S3CKPT_ENOTFOUND || (!st && strcmp(ci.etag, if_match ? if_match : "")))
        return S3CKPT_EEXISTS; /* precondition failed: someone else changed it */
    return st;
}

static s3ckpt_status fs_put(ck_store *s, const char *key, const void *data, size_t len,
                            ck_put_mode mode, const char *if_match, ck_obj_info *info)
{
    file_store *fs = (file_store *)s;
    char *path = key_path(fs, key), *tmp = NULL, *dirend;
    s3ckpt_status st = S3CKPT_OK;
    int fd = -1, lockfd = -1, rc;

    if (!path)
        return ck_err_status(s->err);
    if (ck_mkdir_parents(path, strlen(fs->root), 0777) || !(tmp = tmp_name(path))) {
        st = fail_errno(fs, "put", key, errno ? errno : ENOMEM);
        goto out;
    }
    fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0 || ck_write_full(fd, data, len) || fsync(fd)) {
        st = fail_errno(fs, "put", key, errno);
        goto out;
    }
    if (mode == CK_PUT_IF_ABSENT) {
        if (link(tmp, path)) {
            st = errno == EEXIST ? S3CKPT_EEXISTS : fail_errno(fs, "put", key, errno);
            goto out;
        }
    } else {
        if (mode == CK_PUT_IF_MATCH && (st = lock_if_match(fs, key, if_match, &lockfd)))
            goto out;
        if (rename(tmp, path)) {
            st = fail_errno(fs, "put", key, errno);
            goto out;
        }
    }
    dirend = strrchr(path, '/');
    *dirend = '\0';
    rc = ck_fsync_dir(path); /* the new name itself must survive a crash */
    *dirend = '/';
    if (rc) {
        st = fail_errno(fs, "put", key, errno);
        goto out;
    }
    if (info) {
        info->size = len;
        etag_of(data, len, info->etag);
    }
out:
    if (fd >= 0)
        close(fd);
    if (tmp)
        unlink(tmp); /* after rename this is a no-op; after link it drops the temp name */
    if (lockfd >= 0)
        close(lockfd);
    free(tmp);
    free(path);
    return st;
}

static s3ckpt_status fs_head(ck_store *s, const char *key, ck_obj_info *info)
{
    file_store *fs = (file_store *)s;
    char *path = key_path(fs, key);
    struct stat sb;
    s3ckpt_status st = S3CKPT_OK;

    if (!path)
        return ck_err_status(s->err);
    if (stat(path, &sb))
        st = errno == ENOENT ? S3CKPT_ENOTFOUND : fail_errno(fs, "head", key, errno);
    else if (!S_ISREG(sb.st_mode))
        st = S3CKPT_ENOTFOUND;
    else if (info) {
        info->size = (uint64_t)sb.st_size;
        info->etag[0] = '\0';
    }
    free(path);
    return st;
}

/* The file store pins a version by holding the open descriptor: an object replaced by rename
 * does not change what an open reader sees. The digests in the manifest catch the rest. */
static s3ckpt_status fs_open_read(ck_store *s, const char *key, const char *etag, ck_reader **out)
{
    file_store *fs = (file_store *)s;
    ck_reader *r = calloc(1, sizeof(*r));
    char *path = key_path(fs, key);
    struct stat sb;
    s3ckpt_status st = S3CKPT_OK;

    (void)etag;
    *out = NULL;
    if (r)
        r->fd = -1;
    if (!r || !path) {
        st = path ? ck_err_set(s->err, S3CKPT_ENOMEM, "out of memory") : ck_err_status(s->err);
        goto out;
    }
    r->fs = fs;
    r->fd = open(path, O_RDONLY | O_CLOEXEC);
    if (r->fd < 0 || fstat(r->fd, &sb) || !S_ISREG(sb.st_mode)) {
        st =
            r->fd < 0 && errno != ENOENT && errno != ENOTDIR
                ? fail_errno(fs, "open", key, errno)
                : ck_err_set(s->err, S3CKPT_ECORRUPT, "%s: data object %s is missing", s->url, key);
        goto out;
    }
    r->size = (uint64_t)sb.st_size;
    if (!(r->key = strdup(key))) {
        st = ck_err_set(s->err, S3CKPT_ENOMEM, "out of memory");
        goto out;
    }
    *out = r;
    r = NULL;
out:
    if (r && r->fd >= 0)
        close(r->fd);
    free(r);
    free(path);
    return st;
}

static s3ckpt_status fs_read_at(ck_reader *r, uint64_t off, void *dst, size_t n)
{
    if (off > r->size || n > r->size - off)
        return ck_err_set(r->fs->base.err, S3CKPT_ECORRUPT,
                          "%s: data object %s is truncated: %" PRIu64
                          " bytes, needed bytes %" PRIu64 "..%" PRIu64,
                          r->fs->base.url, r->key, r->size, off, off + n);
    if (ck_pread_full(r->fd, dst, n, off) == 0)
        return S3CKPT_OK;
    if (errno)
        return fail_errno(r->fs, "read", r->key, errno);
    return ck_err_set(r->fs->base.err, S3CKPT_ECORRUPT,
                      "%s: data object %s was truncated while being read", r->fs->base.url, r->key);
}

static void fs_close_read(ck_reader *r)
{
    if (!r)
        return;
    close(r->fd);
    free(r->key);
    free(r);
}

static s3ckpt_status fs_open_write(ck_store *s, const char *key, uint64_t size_hint,
                                   ck_writer **out)
{
    (void)size_hint;
    file_store *fs = (file_store *)s;
    ck_writer *w = calloc(1, sizeof(*w));
    s3ckpt_status st = S3CKPT_OK;

    *out = NULL;
    if (!w)
        return ck_err_set(s->err, S3CKPT_ENOMEM, "out of memory");
    w->fs = fs;
    w->fd = -1;
    if (!(w->final = key_path(fs, key))) {
        st = ck_err_status(s->err);
        goto fail;
    }
    if (!(w->key = strdup(key)) || !(w->tmp = tmp_name(w->final))) {
        st = ck_err_set(s->err, S3CKPT_ENOMEM, "out of memory");
        goto fail;
    }
    if (ck_mkdir_parents(w->final, strlen(fs->root), 0777) ||
        (w->fd = open(w->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644)) < 0) {
        st = fail_errno(fs, "put", key, errno);
        goto fail;
    }
    *out = w;
    return S3CKPT_OK;
fail:
    free(w->final);
    free(w->key);
    free(w->tmp);
    free(w);
    return st;
}

static s3ckpt_status fs_write(ck_writer *w, const void *data, size_t len)
{
    if (ck_write_full(w->fd, data, len))
        return fail_errno(w->fs, "put", w->key, errno);
    w->written += len;
    if (w->written - w->started >= WB_STEP)
        wb_start(w);
    return S3CKPT_OK;
}

static void fs_abort(ck_writer *w)
{
    if (!w)
        return;
    if (w->fd >= 0)
        close(w->fd);
    if (w->tmp)
        unlink(w->tmp);
    free(w->tmp);
    free(w->final);
    free(w->key);
    free(w);
}

static s3ckpt_status fs_commit(ck_writer *w, ck_obj_info *info)
{
    struct stat sb;
    s3ckpt_status st = S3CKPT_OK;

    if (fstat(w->fd, &sb)) {
        st = fail_errno(w->fs, "put", w->key, errno);
        goto out; /* fs_abort closes it */
    }
    wb_commit(w);
    if (close(w->fd)) { /* a delayed write error (e.g. ENOSPC on NFS) shows up here */
        w->fd = -1;
        st = fail_errno(w->fs, "put", w->key, errno);
        goto out;
    }
    w->fd = -1;
    if (rename(w->tmp, w->final)) {
        st = fail_errno(w->fs, "put", w->key, errno);
        goto out;
    }
    free(w->tmp);
    w->tmp = NULL;
    if (info) {
        info->size = (uint64_t)sb.st_size;
        info->etag[0] = '\0';
    }
out:
    fs_abort(w);
    return st;
}

static s3ckpt_status list_dir(file_store *fs, const char *prefix, int delimited, ck_list_fn *fn,
                              void *ud)
{
    size_t plen = strlen(prefix), n = strlen(fs->root) + plen + 2;
    s3ckpt_status st = S3CKPT_OK;
    char *dirpath = malloc(n), *key = NULL;
    struct dirent *de;
    DIR *d;

    if (!dirpath)
        return ck_err_set(fs->base.err, S3CKPT_ENOMEM, "out of memory");
    if (plen && prefix[plen - 1] != '/') {
        free(dirpath);
        return ck_err_set(fs->base.err, S3CKPT_EINVAL,
                          "list %s: the file store lists prefixes ending in '/', not \"%s\"",
                          fs->base.url, prefix);
    }
    snprintf(dirpath, n, "%s/%s", fs->root, prefix);
    d = opendir(dirpath);
    if (!d) {
        st =
            errno == ENOENT || errno == ENOTDIR ? S3CKPT_OK : fail_errno(fs, "list", prefix, errno);
        free(dirpath);
        return st;
    }
    while (!st && (de = readdir(d))) {
        size_t klen = plen + strlen(de->d_name) + 2;
        struct stat sb;
        char *p;

        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
            continue;
        if (delimited && de->d_name[0] == '.')
            continue; /* temp names and the lock file are not keys */
        if (!(p = realloc(key, klen))) {
            st = ck_err_set(fs->base.err, S3CKPT_ENOMEM, "out of memory");
            break;
        }
        key = p;
        snprintf(key, klen, "%s%s", prefix, de->d_name);
        if (fstatat(dirfd(d), de->d_name, &sb, AT_SYMLINK_NOFOLLOW))
            continue; /* removed meanwhile */
        if (S_ISDIR(sb.st_mode)) {
            ck_obj_info none = {0, ""};

            snprintf(key, klen, "%s%s/", prefix, de->d_name);
            st = delimited ? fn(ud, key, 1, &none) : list_dir(fs, key, 0, fn, ud);
        } else if (S_ISREG(sb.st_mode)) {
            ck_obj_info info = {(uint64_t)sb.st_size, ""};

            st = fn(ud, key, 0, &info);
        }
    }
    closedir(d);
    free(key);
    free(dirpath);
    return st;
}

static s3ckpt_status fs_list(ck_store *s, const char *prefix, int delimited, ck_list_fn *fn,
                             void *ud)
{
    return list_dir((file_store *)s, prefix, delimited, fn, ud);
}

static s3ckpt_status fs_remove(ck_store *s, const char *key);

/* Deletes key only while its ETag is still if_match (EEXISTS otherwise), durably. */
static s3ckpt_status fs_remove_if_match(ck_store *s, const char *key, const char *if_match)
{
    file_store *fs = (file_store *)s;
    int lockfd = -1;
    s3ckpt_status st = lock_if_match(fs, key, if_match, &lockfd);

    if (!st)
        st = fs_remove(s, key);
    if (!st && fsync(fs->rootfd))
        st = fail_errno(fs, "delete", key, errno);
    if (lockfd >= 0)
        close(lockfd);
    return st;
}

static s3ckpt_status fs_remove(ck_store *s, const char *key)
{
    file_store *fs = (file_store *)s;
    size_t rootlen = strlen(fs->root);
    char *path, *slash;

    /* keys from listing may hold our temp names, which ck_key_check accepts */
    if (!(path = key_path(fs, key)))
        return ck_err_status(s->err);
    if (unlink(path) && errno != ENOENT) {
        s3ckpt_status st = fail_errno(fs, "delete", key, errno);

        free(path);
        return st;
    }
    /* no empty "prefixes": drop directories left empty, as a bucket has none */
    while ((slash = strrchr(path, '/')) && (size_t)(slash - path) > rootlen) {
        *slash = '\0';
        if (rmdir(path))
            break;
    }
    free(path);
    return S3CKPT_OK;
}

/* ".s3ckpt-tmp.<pid>.<n>" of a process that is gone */
static s3ckpt_status remove_stale(void *ud, const char *key, int is_prefix, const ck_obj_info *info)
{
    ck_store *s = ud;
    const char *base = strrchr(key, '/');
    char *end;
    long pid;

    (void)info;
    base = base ? base + 1 : key;
    if (is_prefix || strncmp(base, TMP_TAG, strlen(TMP_TAG)))
        return S3CKPT_OK;
    pid = strtol(base + strlen(TMP_TAG), &end, 10);
    if (*end != '.' || pid <= 0 || kill((pid_t)pid, 0) == 0 || errno != ESRCH)
        return S3CKPT_OK;
    strtoul(end + 1, &end, 10);
    if (*end)
        return S3CKPT_OK;
    return fs_remove(s, key);
}

static s3ckpt_status fs_prepare(ck_store *s, const char *prefix)
{
    return list_dir((file_store *)s, prefix, 0, remove_stale, s);
}

/* flock on <root>/.s3ckpt-locks/<name>: released by the kernel when the holder dies, so a
 * killed push never blocks its re-run. The holder unlinks the file when it is done; a locker
 * checks after flock that the name still leads to the inode it locked, so two writers can never
 * hold locks on different inodes of one name. */
typedef struct fs_lock_handle {
    int fd;
    char key[CK_NAME_MAX + 32];
} fs_lock_handle;

static s3ckpt_status fs_lock(ck_store *s, const char *name, void **handle)
{
    file_store *fs = (file_store *)s;
    fs_lock_handle *h = calloc(1, sizeof(*h));
    struct stat a, b;
    int tries;

    *handle = NULL;
    if (!h)
        return ck_err_set(s->err, S3CKPT_ENOMEM, "out of memory");
    if (mkdirat(fs->rootfd, ".s3ckpt-locks", 0755) && errno != EEXIST) {
        free(h);
        return fail_errno(fs, "lock", name, errno);
    }
    snprintf(h->key, sizeof(h->key), ".s3ckpt-locks/%s", name);
    for (tries = 0; tries < 100; tries++) {
        h->fd = openat(fs->rootfd, h->key, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (h->fd < 0)
            break;
        if (flock(h->fd, LOCK_EX | LOCK_NB)) {
            int e = errno;

            close(h->fd);
            free(h);
            if (e == EWOULDBLOCK)
                return ck_err_set(s->err, S3CKPT_EEXISTS,
                                  "%s in %s is being written or deleted by another s3ckpt "
                                  "process; try again after it",
                                  name, s->url);
            return fail_errno(fs, "lock", name, e);
        }
        if (!fstat(h->fd, &a) && !fstatat(fs->rootfd, h->key, &b, AT_SYMLINK_NOFOLLOW) &&
            a.st_ino == b.st_ino && a.st_dev == b.st_dev) {
            *handle = h;
            return S3CKPT_OK;
        }
        close(h->fd); /* the holder before us unlinked it meanwhile: lock the new one */
    }
    free(h);
    return fail_errno(fs, "lock", name, errno ? errno : EAGAIN);
}

static void fs_unlock(ck_store *s, void *handle)
{
    fs_lock_handle *h = handle;

    if (!h)
        return;
    unlinkat(((file_store *)s)->rootfd, h->key, 0);
    close(h->fd);
    free(h);
}

static s3ckpt_status fs_sync(ck_store *s)
{
    file_store *fs = (file_store *)s;

    if (syncfs(fs->rootfd))
        return fail_errno(fs, "sync", ".", errno);
    pthread_mutex_lock(&fs->wb_lock);
    wb_prev_done(fs, 0); /* synced */
    pthread_mutex_unlock(&fs->wb_lock);
    return S3CKPT_OK;
}

static void fs_free(ck_store *s)
{
    file_store *fs = (file_store *)s;

    if (fs->rootfd >= 0)
        close(fs->rootfd);
    wb_prev_done(fs, 0);
    pthread_mutex_destroy(&fs->wb_lock);
    free(fs->root);
    free(s->url);
    free(s->local_root);
    free(fs);
}

static s3ckpt_status fs_remove_keys(ck_store *s, const char *const *keys, size_t n)
{
    s3ckpt_status st = S3CKPT_OK;
    size_t i;

    for (i = 0; i < n && !st; i++)
        st = fs_remove(s, keys[i]);
    return st;
}

/* Nothing of the file store is an upload to abort: temporary files of dead processes are
 * removed, and fn is never called. */
static s3ckpt_status fs_stale_uploads(ck_store *s, const char *prefix, ck_stale_fn *fn, void *ud)
{
    (void)fn;
    (void)ud;
    return fs_prepare(s, prefix);
}

static const ck_store_ops file_ops = {
    .get = fs_get,
    .put = fs_put,
    .head = fs_head,
    .open_read = fs_open_read,
    .read_at = fs_read_at,
    .close_read = fs_close_read,
    .open_write = fs_open_write,
    .write = fs_write,
    .commit = fs_commit,
    .abort = fs_abort,
    .list = fs_list,
    .remove = fs_remove,
    .remove_if_match = fs_remove_if_match,
    .remove_keys = fs_remove_keys,
    .prepare = fs_prepare,
    .stale_uploads = fs_stale_uploads,
    .lock = fs_lock,
    .unlock = fs_unlock,
    .sync = fs_sync,
    .free = fs_free,
};

static int mkdir_root(char *root)
{
    return ck_mkdir_parents(root, 0, 0777) || (mkdir(root, 0777) && errno != EEXIST) ? -1 : 0;
}

s3ckpt_status ck_store_file_open(ck_store **out, const char *url, const char *root, int create,
                                 ck_err *err)
{
    file_store *fs = calloc(1, sizeof(*fs));
    struct stat sb;

    *out = NULL;
    if (!fs)
        return ck_err_set(err, S3CKPT_ENOMEM, "out of memory");
    fs->base.ops = &file_ops;
    fs->base.err = err;
    fs->rootfd = -1;
    fs->wb_prev.fd = -1;
    pthread_mutex_init(&fs->wb_lock, NULL);
    fs->root = strdup(root);
    fs->base.url = strdup(url);
    if (!fs->root || !fs->base.url) {
        fs_free(&fs->base);
        return ck_err_set(err, S3CKPT_ENOMEM, "out of memory");
    }
    while (strlen(fs->root) > 1 && fs->root[strlen(fs->root) - 1] == '/')
        fs->root[strlen(fs->root) - 1] = '\0';
    if (create && mkdir_root(fs->root)) {
        s3ckpt_status st =
            ck_err_set(err, ck_err_from_errno(errno), "store %s: cannot create %s: %s", url,
                       fs->root, strerror(errno));
        fs_free(&fs->base);
        return st;
    }
    fs->rootfd = open(fs->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fs->rootfd < 0 || fstat(fs->rootfd, &sb)) {
        int e = errno;
        s3ckpt_status st =
            ck_err_set(err, e == ENOENT ? S3CKPT_ENOTFOUND : ck_err_from_errno(e), "store %s: %s",
                       url, e == ENOENT ? "no such directory" : strerror(e));
        fs_free(&fs->base);
        return st;
    }
    fs->base.local_root = realpath(fs->root, NULL);
    fs->base.buffer_bytes = WB_WINDOW + WB_STEP;
    fs->base.flush_at_end = 1;
    *out = &fs->base;
    return S3CKPT_OK;
}
