/*
 * pull - manifest -> partial directory -> verified chunks -> moved into place. Also deep verify,
 * which is a pull that writes nothing.
 *
 * The manifest is validated before anything touches the disk. Files are created at their final
 * size in a hidden partial directory next to the destination; workers fetch a chunk's frame,
 * decompress it into a buffer of exactly the declared size, check its digest and pwrite it at
 * its raw offset, in any order. Only when every file is complete and fsynced is the partial
 * directory renamed into place, so no reader sees a half-written file under its final name.
 * A marker file beside the partial directory names the checkpoint: a re-run after a crash keeps
 * every chunk already on disk whose digest matches and fetches only the rest.
 *
 * Block-aligned chunks are decompressed into a per-worker aligned buffer and written with
 * O_DIRECT: a buffered write followed by writeback and fsync costs the writer several times the
 * CPU of the DMA (page cache copy, page-by-page writeback, block allocation), and the whole
 * checkpoint would sit dirty in the page cache first. A file's unaligned tail, and any
 * filesystem that refuses O_DIRECT, take the buffered path.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "client.h"
#include "codec.h"
#include "fsutil.h"
#include "path.h"
#include "pool.h"

#define MARKER_SUFFIX ".marker" /* beside the partial directory, never inside the tree */
#define DIRECT_ALIGN 4096       /* O_DIRECT offsets, lengths and buffers (any logical block size) */

typedef struct pull_ctx {
    s3ckpt_client *c;
    ck_store *store;
    ck_codec **codecs;
    const char *op;        /* "pull" or "verify" */
    int write;             /* 0: deep verify */
    const int *dfds;       /* per entry: an O_DIRECT descriptor of its file, or -1 (optional) */
    unsigned char **dbufs; /* per worker: a DIRECT_ALIGN-aligned chunk buffer (with dfds) */
} pull_ctx;

static int all_zero(const unsigned char *p, size_t n)
{
    static const unsigned char zero[4096];

    while (n >= sizeof(zero)) {
        if (memcmp(p, zero, sizeof(zero)))
            return 0;
        p += sizeof(zero);
        n -= sizeof(zero);
    }
    return memcmp(p, zero, n) == 0;
}

static void pull_job(ck_slot *s, unsigned worker, void *arg)
{
    pull_ctx *ctx = arg;
    char why[200], want[CK_DIGEST_HEX_LEN], got[CK_DIGEST_HEX_LEN];
    unsigned char *raw = s->raw;
    int dfd = ctx->dfds ? ctx->dfds[s->entry] : -1;

    if (ck_canceled(ctx->c)) {
        s->status = S3CKPT_ECANCELED;
        return;
    }
    if (s->check_local && ck_pread_full(s->fd, s->raw, s->raw_len, s->raw_off) == 0) {
        ck_digest_bytes(&s->digest, s->raw, s->raw_len);
        if (ck_digest_equal(&s->digest, &s->expect)) {
            s->reused = 1;
            return;
        }
    }
    s->status = ctx->store->ops->read_at(s->reader, s->stored_off, s->stored, s->stored_len);
    if (s->status)
        return;
    if (dfd >= 0 && s->raw_off % DIRECT_ALIGN == 0 && s->raw_len % DIRECT_ALIGN == 0)
        raw = ctx->dbufs[worker];
    else
        dfd = -1;
    s->status = ck_codec_decompress(ctx->codecs[worker], raw, s->raw_len, s->stored, s->stored_len,
                                    (ck_filter)s->filter, why, sizeof(why));
    if (s->status) {
        ck_err_set(&ctx->c->err, s->status,
                   "%s: %s chunk %" PRIu64 " (stored bytes %" PRIu64 "..%" PRIu64 "): %s", ctx->op,
                   s->path, s->chunk, s->stored_off, s->stored_off + s->stored_len, why);
        return;
    }
    ck_digest_bytes(&s->digest, raw, s->raw_len);
    if (!ck_digest_equal(&s->digest, &s->expect)) {
        ck_digest_to_hex(&s->expect, want);
        ck_digest_to_hex(&s->digest, got);
        s->status = ck_err_set(&ctx->c->err, S3CKPT_ECORRUPT,
                               "%s: %s chunk %" PRIu64 ": digest mismatch (expected %s, got %s)",
                               ctx->op, s->path, s->chunk, want, got);
        return;
    }
    if (!ctx->write || (s->fresh && all_zero(raw, s->raw_len)))
        return; /* a new file is all holes: zero chunks stay sparse */
    if (dfd >= 0 && ck_pwrite_full(dfd, raw, s->raw_len, s->raw_off) == 0)
        return; /* on its way to the disk already; any failure retries buffered below */
    if (ck_pwrite_full(s->fd, raw, s->raw_len, s->raw_off))
        s->status = ck_err_set(&ctx->c->err, errno == ENOMEM ? S3CKPT_ENOMEM : S3CKPT_EIO,
                               "%s: writing %s: %s", ctx->op, s->path, strerror(errno));
    else /* the disk starts now, not at the final fsync */
        ck_writeback(s->fd, s->raw_off, s->raw_len, 0);
}

typedef struct pull_run {
    s3ckpt_client *c;
    ck_store *store;
    ck_manifest m;
    ck_pool *pool;
    pull_ctx ctx;
    char name[CK_NAME_MAX + 1];
    char prefix[CK_NAME_MAX + 2];
    char *partial;    /* hidden staging directory (pull only) */
    char *marker;     /* beside it: names what the partial directory holds */
    int stage_inside; /* DEST is a mount point: the partial directory is inside it */
    int *fds;
    int *dfds; /* O_DIRECT descriptors of the same files, or -1 */
    ck_reader **readers;
    uint64_t *left; /* chunks not yet finished, per entry */
    int *fresh;
    unsigned workers; /* pool threads: CPU workers, or one per request in flight (remote) */
    const s3ckpt_pull_opts *opts;
    s3ckpt_stats stats;
    uint64_t done_bytes;
} pull_run;

static s3ckpt_status sys_fail(pull_run *r, const char *what, const char *path)
{
    return ck_err_set(&r->c->err,
                      ck_err_from_errno(errno) == S3CKPT_ENOMEM ? S3CKPT_ENOMEM : S3CKPT_EIO,
                      "pull: %s %s: %s", what, path, strerror(errno));
}

static int rm_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)ftw;
    return flag == FTW_DP ? rmdir(path) : unlink(path);
}

static int rm_rf(const char *path)
{
    return nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* 1 when path is a regular file (or directory, want_dir) owned by us, not a link. */
static int ours(const char *path, int want_dir)
{
    struct stat sb;

    return lstat(path, &sb) == 0 && sb.st_uid == geteuid() &&
           (want_dir ? S_ISDIR(sb.st_mode) : S_ISREG(sb.st_mode));
}

/* A second, O_DIRECT descriptor of the file just opened as r->fds[i] (sb: its fstat), for the
 * aligned chunks. Optional: r->dfds[i] stays -1 when the filesystem refuses O_DIRECT or the name
 * no longer leads to the same file. */
static void open_direct(pull_run *r, size_t i, const char *path, const struct stat *sb)
{
    struct stat dsb;
    int fd = open(path, O_WRONLY | O_DIRECT | O_NOFOLLOW | O_CLOEXEC);

    if (fd >= 0 && (fstat(fd, &dsb) || dsb.st_dev != sb->st_dev || dsb.st_ino != sb->st_ino)) {
        close(fd);
        fd = -1;
    }
    r->dfds[i] = fd;
}

/* Opens (creating at its final size) the file of entry i in the partial directory, and its
 * data object. */
static s3ckpt_status open_entry(pull_run *r, size_t i)
{
    ck_entry *e = &r->m.entries[i];
    char *path = NULL, *key;
    s3ckpt_status st = S3CKPT_OK;
    struct stat sb;

    if (!r->ctx.write)
        goto reader;
    if (!(path = ck_path_join(r->partial, e->path)))
        return ck_err_set(&r->c->err, S3CKPT_ENOMEM, "out of memory");
    if (ck_mkdir_parents(path, strlen(r->partial), 0777)) {
        st = sys_fail(r, "creating directories for", e->path);
        goto out;
    }
    r->fds[i] = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    r->fresh[i] = r->fds[i] >= 0;
    if (r->fds[i] < 0 && errno == EEXIST) { /* resuming: it may already have its final mode */
        if (ours(path, 0))
            chmod(path, 0600);
        r->fds[i] = open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
    }
    if (r->fds[i] < 0 || fstat(r->fds[i], &sb)) {
        st = sys_fail(r, "creating", e->path);
        goto out;
    }
    if (!S_ISREG(sb.st_mode)) {
        st = ck_err_set(&r->c->err, S3CKPT_EIO, "pull: %s/%s is not a regular file", r->partial,
                        e->path);
        goto out;
    }
    if ((uint64_t)sb.st_size != e->size && ftruncate(r->fds[i], (off_t)e->size)) {
        st = sys_fail(r, "sizing", e->path);
        goto out;
    }
    if (r->ctx.dbufs && e->size >= DIRECT_ALIGN)
        open_direct(r, i, path, &sb);
reader:
    if (e->nchunks == 0)
        goto out;
    key = ck_path_join(r->name, e->key);
    if (!key) {
        st = ck_err_set(&r->c->err, S3CKPT_ENOMEM, "out of memory");
        goto out;
    }
    st = r->store->ops->open_read(r->store, key, e->etag, &r->readers[i]);
    free(key);
out:
    free(path);
    return st;
}

static s3ckpt_status finish_entry(pull_run *r, size_t i)
{
    ck_entry *e = &r->m.entries[i];

    r->store->ops->close_read(r->readers[i]);
    r->readers[i] = NULL;
    r->stats.files++;
    if (!r->ctx.write)
        return S3CKPT_OK;
    if (r->dfds[i] >= 0) { /* its writes are done; the fsync below covers them */
        close(r->dfds[i]);
        r->dfds[i] = -1;
    }
    if (fsync(r->fds[i]) || fchmod(r->fds[i], e->mode)) {
        s3ckpt_status st = sys_fail(r, "finishing", e->path);

        close(r->fds[i]);
        r->fds[i] = -1;
        return st;
    }
    if (close(r->fds[i])) {
        r->fds[i] = -1;
        return sys_fail(r, "closing", e->path);
    }
    r->fds[i] = -1;
    return S3CKPT_OK;
}

static void report(pull_run *r)
{
    if (r->opts && r->opts->on_progress)
        r->opts->on_progress(r->opts->userdata, r->done_bytes, r->m.bytes);
}

static s3ckpt_status collect(pull_run *r, ck_slot *s)
{
    s3ckpt_status st = s->status;
    size_t i = s->entry;

    if (st) {
        if (st == S3CKPT_ECANCELED)
            ck_err_set(&r->c->err, st, "%s: canceled", r->ctx.op);
        ck_pool_release(r->pool, s);
        return st;
    }
    r->stats.chunks++;
    if (s->reused)
        r->stats.reused_bytes += s->raw_len;
    else
        r->stats.transferred_bytes += s->stored_len;
    r->done_bytes += s->raw_len;
    ck_pool_release(r->pool, s);
    if (--r->left[i] == 0)
        st = finish_entry(r, i);
    report(r);
    return st;
}

/* Issues every chunk of every file, at most one job per slot, collecting as they finish. */
static s3ckpt_status run_pipeline(pull_run *r)
{
    s3ckpt_status st = S3CKPT_OK;
    size_t ie = 0;
    uint64_t ic = 0, stored_off = 0;
    ck_slot *s;

    while (!st) {
        if (ck_canceled(r->c)) {
            st = ck_err_set(&r->c->err, S3CKPT_ECANCELED, "%s: canceled", r->ctx.op);
            break;
        }
        while (ie < r->m.nentries && (s = ck_pool_acquire(r->pool))) {
            ck_entry *e = NULL;

            for (; ie < r->m.nentries; ie++) {
                e = &r->m.entries[ie];
                if (e->is_dir)
                    continue;
                if (ic == 0) {
                    if ((st = open_entry(r, ie)))
                        break;
                    r->left[ie] = e->nchunks;
                    stored_off = 0;
                    if (e->nchunks == 0 && (st = finish_entry(r, ie)))
                        break;
                }
                if (ic < e->nchunks)
                    break;
            }
            if (st || ie == r->m.nentries) {
                ck_pool_release(r->pool, s);
                break;
            }
            s->entry = ie;
            s->chunk = ic;
            s->fd = r->fds[ie];
            s->reader = r->readers[ie];
            s->path = e->path;
            s->raw_off = ic * r->m.chunk_size;
            s->raw_len = e->chunks[ic].raw_len;
            s->stored_off = stored_off;
            s->stored_len = e->chunks[ic].stored_len;
            s->expect = e->chunks[ic].digest;
            s->filter = e->filter;
            s->fresh = r->fresh[ie];
            s->check_local = r->ctx.write && !r->fresh[ie];
            stored_off += e->chunks[ic].stored_len;
            ck_pool_submit(r->pool, s);
            if (++ic == e->nchunks) {
                ie++;
                ic = 0;
            }
        }
        if (st)
            break;
        s = ck_pool_wait(r->pool, NULL);
        if (!s)
            break; /* nothing in flight and nothing left to issue */
        st = collect(r, s);
    }
    while ((s = ck_pool_wait(r->pool, NULL)))
        ck_pool_release(r->pool, s);
    return st;
}

/* ---- destination handling (pull only) ---- */

#define INSIDE_PARTIAL ".s3ckpt-partial" /* staging inside DEST when DEST is a mount point */

/* Empty but for "." and "..", and our own staging names when staging inside it. */
static int dir_is_empty(const char *path)
{
    struct dirent *de;
    int empty = 1;
    DIR *d = opendir(path);

    if (!d)
        return 0;
    while (empty && (de = readdir(d)))
        empty = !strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") ||
                !strcmp(de->d_name, INSIDE_PARTIAL) ||
                !strcmp(de->d_name, INSIDE_PARTIAL MARKER_SUFFIX);
    closedir(d);
    return empty;
}

/* Canonical destination, its parent, and the partial directory beside it. */
static s3ckpt_status plan_dest(pull_run *r, const char *dest, char **final, int *dest_exists)
{
    char *copy = strdup(dest), *base, *slash, parent[PATH_MAX];
    struct stat sb, psb;
    size_t n;
    s3ckpt_status st = S3CKPT_OK;

    *final = NULL;
    if (!copy)
        return ck_err_set(&r->c->err, S3CKPT_ENOMEM, "out of memory");
    while (strlen(copy) > 1 && copy[strlen(copy) - 1] == '/')
        copy[strlen(copy) - 1] = '\0';
    slash = strrchr(copy, '/');
    base = slash ? slash + 1 : copy;
    if (!*base || !strcmp(base, ".") || !strcmp(base, "..")) {
        st = ck_err_set(&r->c->err, S3CKPT_EINVAL,
                        "pull: destination \"%s\" must name a directory by its name", dest);
        goto out;
    }
    if (slash) {
        *slash = '\0';
        if (!*copy)
            snprintf(parent, sizeof(parent), "/");
        else if (!realpath(copy, parent)) {
            /* create missing parents, as mkdir -p would */
            char *p;

            for (p = copy + 1; (p = strchr(p, '/')); p++) {
                *p = '\0';
                mkdir(copy, 0755);
                *p = '/';
            }
            if ((mkdir(copy, 0755) && errno != EEXIST) || !realpath(copy, parent)) {
                st = sys_fail(r, "creating", copy);
                goto out;
            }
        }
    } else if (!realpath(".", parent)) {
        st = sys_fail(r, "resolving", ".");
        goto out;
    }
    n = strlen(parent) + strlen(base) + 2;
    *final = malloc(n);
    r->partial = malloc(n + 32);
    r->marker = malloc(n + 32 + strlen(MARKER_SUFFIX));
    if (!*final || !r->partial || !r->marker) {
        st = ck_err_set(&r->c->err, S3CKPT_ENOMEM, "out of memory");
        goto out;
    }
    snprintf(*final, n, "%s/%s", strcmp(parent, "/") ? parent : "", base);
    *dest_exists = lstat(*final, &sb) == 0;
    if (*dest_exists && S_ISDIR(sb.st_mode) && stat(parent, &psb) == 0 && psb.st_dev != sb.st_dev)
        r->stage_inside = 1; /* a mount point: rename cannot cross into it, so stage inside */
    if (r->stage_inside)
        snprintf(r->partial, n + 32, "%s/" INSIDE_PARTIAL, *final);
    else if (strlen(base) <= 200)
        snprintf(r->partial, n + 32, "%s/.%s.s3ckpt-partial", strcmp(parent, "/") ? parent : "",
                 base);
    else /* keep the staging name within NAME_MAX */
        snprintf(r->partial, n + 32, "%s/.s3ckpt-partial-%016" PRIx64,
                 strcmp(parent, "/") ? parent : "", ck_digest64(base, strlen(base)));
    snprintf(r->marker, n + 32 + strlen(MARKER_SUFFIX), "%s%s", r->partial, MARKER_SUFFIX);
    if (*dest_exists && !S_ISDIR(sb.st_mode))
        st = ck_err_set(&r->c->err, S3CKPT_EEXISTS, "pull: %s exists and is not a directory",
                        *final);
    else if (*dest_exists && !dir_is_empty(*final) && !(r->opts && r->opts->force))
        st = ck_err_set(&r->c->err, S3CKPT_EEXISTS,
                        "pull: %s is not empty (use --force to restore into it)", *final);
out:
    free(copy);
    return st;
}

/* Removes a stale partial directory and marker before a fresh start. Only our own directory
 * tree is deleted; a link or file at either name is unlinked (never followed); a directory
 * owned by someone else is left alone and the pull refused (it may sit in a shared /tmp). */
static s3ckpt_status clear_stale(pull_run *r)
{
    const char *names[2] = {r->marker, r->partial};
    struct stat sb;
    size_t i;

    for (i = 0; i < 2; i++) {
        if (lstat(names[i], &sb)) {
            if (errno == ENOENT)
                continue;
            return sys_fail(r, "checking", names[i]);
        }
        if (S_ISDIR(sb.st_mode) && sb.st_uid != geteuid())
            return ck_err_set(&r->c->err, S3CKPT_EEXISTS,
                              "pull: %s belongs to another user; remove it or choose another "
                              "destination",
                              names[i]);
        if (S_ISDIR(sb.st_mode) ? rm_rf(names[i]) : unlink(names[i])) {
            if (errno == EPERM || errno == EACCES)
                return ck_err_set(&r->c->err, S3CKPT_EEXISTS,
                                  "pull: %s is in the way and cannot be removed (%s); remove it "
                                  "or choose another destination",
                                  names[i], strerror(errno));
            return sys_fail(r, "removing stale", names[i]);
        }
    }
    return S3CKPT_OK;
}

/* Creates the partial directory, or resumes one left by an interrupted pull of the same
 * checkpoint. Only a real directory and marker owned by this user are resumed (the parent may
 * be shared, like /tmp); anything else at those names is discarded. */
static s3ckpt_status prepare_partial(pull_run *r)
{
    char *want = NULL, *have = NULL;
    size_t len;
    ssize_t n = -1;
    s3ckpt_status st = S3CKPT_OK;
    int fd;

    len = strlen(r->store->url) + strlen(r->m.name) + strlen(r->m.created) + 32;
    want = malloc(len);
    have = malloc(len + 1);
    if (!want || !have) {
        st = ck_err_set(&r->c->err, S3CKPT_ENOMEM, "out of memory");
        goto out;
    }
    snprintf(want, len, "s3ckpt-pull 1\n%s\n%s\n%s\n", r->store->url, r->m.name, r->m.created);
    if (ours(r->partial, 1) && ours(r->marker, 0)) {
        fd = open(r->marker, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        if (fd >= 0) {
            n = read(fd, have,
                     len + 1); /* one byte more than want holds: a longer marker differs */
            close(fd);
        }
        if (n == (ssize_t)strlen(want) && !memcmp(have, want, (size_t)n)) {
            ck_log(r->c, 1, "resuming the interrupted pull in %s", r->partial);
            goto out;
        }
    }
    if ((st = clear_stale(r)))
        goto out;
    if (mkdir(r->partial, 0700)) { /* private while being filled; DEST's mode is set at the end */
        st = sys_fail(r, "creating", r->partial);
        goto out;
    }
    fd = open(r->marker, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0 || write(fd, want, strlen(want)) != (ssize_t)strlen(want)) {
        st = sys_fail(r, "writing", r->marker);
        if (fd >= 0)
            close(fd);
        goto out;
    }
    close(fd);
out:
    free(want);
    free(have);
    return st;
}

static s3ckpt_status make_dirs(pull_run *r)
{
    size_t i;

    for (i = 0; i < r->m.nentries; i++) {
        char *p;

        if (!r->m.entries[i].is_dir)
            continue;
        if (!(p = ck_path_join(r->partial, r->m.entries[i].path)))
            return ck_err_set(&r->c->err, S3CKPT_ENOMEM, "out of memory");
        if (ck_mkdir_parents(p, strlen(r->partial), 0777) || (mkdir(p, 0777) && errno != EEXIST)) {
            s3ckpt_status st = sys_fail(r, "creating", r->m.entries[i].path);

            free(p);
            return st;
        }
        free(p);
    }
    return S3CKPT_OK;
}

/* Opens directory `rel` below dirfd one component at a time, never following a symbolic link
 * (each component is opened with O_NOFOLLOW); create: make missing components. rel "" is dirfd
 * itself (dup'ed). Returns the fd, or -1 with errno set (ELOOP/ENOTDIR for a link or a file). */
static int open_dir_under(int dirfd, const char *rel, int create)
{
    char comp[256];
    int fd = dup(dirfd);

    while (fd >= 0 && *rel) {
        const char *slash = strchr(rel, '/');
        size_t n = slash ? (size_t)(slash - rel) : strlen(rel);
        int next;

        if (n >= sizeof(comp)) {
            close(fd);
            errno = ENAMETOOLONG;
            return -1;
        }
        memcpy(comp, rel, n);
        comp[n] = '\0';
        if (create && mkdirat(fd, comp, 0777) && errno != EEXIST) {
            close(fd);
            return -1;
        }
        next = openat(fd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        close(fd);
        fd = next;
        rel += n + (slash != NULL);
    }
    return fd;
}

/* Splits an entry path into its parent ("" at the top) and base name. */
static void split_path(const char *path, char *parent, size_t parent_len, const char **base)
{
    const char *slash = strrchr(path, '/');
    size_t n = slash ? (size_t)(slash - path) : 0;

    snprintf(parent, parent_len, "%.*s", (int)n, path);
    *base = slash ? slash + 1 : path;
}

/* --force into a non-empty DEST: every target must be absent or of the same kind (a directory
 * for a directory, a regular file or link for a file), and no directory on the way may be a
 * symbolic link. Checked for all entries before anything moves. */
static s3ckpt_status check_merge(pull_run *r, int destfd, const char *final)
{
    char parent[CK_PATH_MAX];
    const char *base;
    struct stat sb;
    size_t i;

    for (i = 0; i < r->m.nentries; i++) {
        const ck_entry *e = &r->m.entries[i];
        int pfd;

        split_path(e->path, parent, sizeof(parent), &base);
        pfd = open_dir_under(destfd, parent, 0);
        if (pfd < 0 && errno == ENOENT)
            continue; /* created fresh below */
        if (pfd < 0)
            return ck_err_set(&r->c->err, S3CKPT_EEXISTS,
                              "pull: %s/%s: a directory on the way is a symbolic link or a file "
                              "(%s); refusing to restore through it",
                              final, parent, strerror(errno));
        if (fstatat(pfd, base, &sb, AT_SYMLINK_NOFOLLOW) == 0 &&
            (e->is_dir ? !S_ISDIR(sb.st_mode) : S_ISDIR(sb.st_mode))) {
            close(pfd);
            return ck_err_set(&r->c->err, S3CKPT_EEXISTS,
                              "pull: %s/%s exists as a %s; the checkpoint has a %s there", final,
                              e->path, S_ISDIR(sb.st_mode) ? "directory" : "non-directory",
                              e->is_dir ? "directory" : "file");
        }
        close(pfd);
    }
    return S3CKPT_OK;
}

/* Moves every entry of the partial tree into the existing DEST, by rename within one
 * filesystem, through directory descriptors that never follow links. */
static s3ckpt_status merge_into(pull_run *r, int destfd, const char *final)
{
    char parent[CK_PATH_MAX];
    const char *base;
    s3ckpt_status st = check_merge(r, destfd, final);
    int partfd = open(r->partial, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    size_t i;

    if (!st && partfd < 0)
        st = sys_fail(r, "opening", r->partial);
    for (i = 0; !st && i < r->m.nentries; i++) {
        const ck_entry *e = &r->m.entries[i];
        int from, to;

        split_path(e->path, parent, sizeof(parent), &base);
        if (e->is_dir) {
            to = open_dir_under(destfd, e->path, 1);
            if (to < 0)
                st = sys_fail(r, "creating", e->path);
            else
                close(to);
            continue;
        }
        from = open_dir_under(partfd, parent, 0);
        to = open_dir_under(destfd, parent, 1);
        if (from < 0 || to < 0 || renameat(from, base, to, base) || fsync(to))
            st = sys_fail(r, "moving into place", e->path);
        if (from >= 0)
            close(from);
        if (to >= 0)
            close(to);
    }
    if (partfd >= 0)
        close(partfd);
    if (!st && rm_rf(r->partial))
        st = sys_fail(r, "removing", r->partial);
    return st;
}

/* Sets directory modes, deepest first, through no-follow descriptors. */
static s3ckpt_status set_dir_modes(pull_run *r, int rootfd, int keep_owner_access)
{
    size_t i;

    for (i = r->m.nentries; i-- > 0;) {
        const ck_entry *e = &r->m.entries[i];
        int fd;

        if (!e->is_dir)
            continue;
        fd = open_dir_under(rootfd, e->path, 0);
        if (fd < 0 || fchmod(fd, e->mode | (keep_owner_access ? 0700 : 0))) {
            s3ckpt_status st = sys_fail(r, "setting the mode of", e->path);

            if (fd >= 0)
                close(fd);
            return st;
        }
        close(fd);
    }
    return S3CKPT_OK;
}

/* The umask, read without changing it (umask(2) would, process-wide): /proc/self/status. */
static mode_t process_umask(void)
{
    char line[128];
    unsigned m = 022;
    FILE *f = fopen("/proc/self/status", "r");

    while (f && fgets(line, sizeof(line), f))
        if (sscanf(line, "Umask: %o", &m) == 1)
            break;
    if (f)
        fclose(f);
    return (mode_t)(m & 0777);
}

/* Every file is complete and fsynced: make the directories durable too (one syncfs covers the
 * whole partial tree), then move the tree into place and set directory modes. */
static s3ckpt_status move_into_place(pull_run *r, const char *final, int dest_exists)
{
    int partfd = open(r->partial, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC), destfd;
    char *parent;
    s3ckpt_status st = S3CKPT_OK;

    if (partfd < 0)
        return sys_fail(r, "opening", r->partial);
    if (!r->stage_inside && fchmod(partfd, 0777 & ~process_umask())) {
        close(partfd);
        return sys_fail(r, "setting the mode of", r->partial);
    }
    if ((st = set_dir_modes(r, partfd, 1)) || syncfs(partfd)) {
        close(partfd);
        return st ? st : sys_fail(r, "syncing", r->partial);
    }
    close(partfd);
    if (!r->stage_inside && (!dest_exists || dir_is_empty(final))) {
        if (rename(r->partial, final))
            return sys_fail(r, "moving into place", final);
    } else {
        destfd = open(final, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (destfd < 0)
            return sys_fail(r, "opening", final);
        st = merge_into(r, destfd, final);
        close(destfd);
        if (st)
            return st;
    }
    unlink(r->marker);
    destfd = open(final, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (destfd < 0)
        return sys_fail(r, "opening", final);
    st = set_dir_modes(r, destfd, 0);
    close(destfd);
    if (st)
        return st;
    parent = strdup(final);
    if (!parent)
        return ck_err_set(&r->c->err, S3CKPT_ENOMEM, "out of memory");
    *(strrchr(parent, '/') == parent ? parent + 1 : strrchr(parent, '/')) = '\0';
    if (ck_fsync_dir(parent))
        st = sys_fail(r, "syncing", parent);
    free(parent);
    return st;
}

/* ---- entry points ---- */

/* The per-worker aligned buffers of the O_DIRECT path, when writing block-aligned chunks and
 * they fit the memory bound beside the slots; without them every write is buffered. */
static s3ckpt_status setup_direct(pull_run *r, size_t slot_bytes)
{
    uint64_t chunk = r->m.chunk_size;
    uint64_t need = (uint64_t)ck_pool_slots(r->pool) * slot_bytes + (uint64_t)r->workers * chunk;
    unsigned i;

    if (!r->ctx.write || chunk % DIRECT_ALIGN || need > r->c->max_memory)
        return S3CKPT_OK;
    if (!(r->ctx.dbufs = calloc(r->workers, sizeof(*r->ctx.dbufs))))
        return ck_err_set(&r->c->err, S3CKPT_ENOMEM, "out of memory");
    for (i = 0; i < r->workers; i++)
        if (posix_memalign((void **)&r->ctx.dbufs[i], DIRECT_ALIGN, (size_t)chunk))
            return ck_err_set(&r->c->err, S3CKPT_ENOMEM,
                              "out of memory allocating %" PRIu64 "-byte chunk buffers", chunk);
    r->ctx.dfds = r->dfds;
    return S3CKPT_OK;
}

static s3ckpt_status setup(pull_run *r, const char *store_url, const char *name)
{
    size_t i, slot_bytes;
    s3ckpt_status st;

    if ((st = ck_store_open(&r->store, store_url, 0, &r->c->remote, &r->c->err)) ||
        (st = ck_resolve_name(r->c, r->store, name, r->name, sizeof(r->name))) ||
        (st = ck_manifest_load(r->c, r->store, r->name, &r->m)))
        return st;
    r->ctx.c = r->c;
    r->ctx.store = r->store;
    r->fds = malloc((r->m.nentries + 1) * sizeof(*r->fds));
    r->dfds = malloc((r->m.nentries + 1) * sizeof(*r->dfds));
    r->readers = calloc(r->m.nentries + 1, sizeof(*r->readers));
    r->left = calloc(r->m.nentries + 1, sizeof(*r->left));
    r->fresh = calloc(r->m.nentries + 1, sizeof(*r->fresh));
    r->workers = ck_client_io_workers(r->c, r->store);
    r->ctx.codecs = calloc(r->workers, sizeof(*r->ctx.codecs));
    if (!r->fds || !r->dfds || !r->readers || !r->left || !r->fresh || !r->ctx.codecs)
        return ck_err_set(&r->c->err, S3CKPT_ENOMEM, "out of memory");
    for (i = 0; i < r->m.nentries; i++)
        r->fds[i] = r->dfds[i] = -1;
    for (i = 0; i < r->workers; i++)
        if (!(r->ctx.codecs[i] = ck_codec_new(1)))
            return ck_err_set(&r->c->err, S3CKPT_ENOMEM, "out of memory creating zstd contexts");
    /* the checkpoint's chunk size, not this client's, sizes the buffers */
    slot_bytes = (size_t)r->m.chunk_size + ck_codec_bound((size_t)r->m.chunk_size);
    if ((st = ck_client_check_memory(r->c, r->ctx.op, r->m.chunk_size, slot_bytes)))
        return st;
    st = ck_pool_new(&r->pool, r->workers, ck_client_slots_for(r->c, slot_bytes, r->workers),
                     (size_t)r->m.chunk_size, ck_codec_bound((size_t)r->m.chunk_size), pull_job,
                     &r->ctx);
    if (st)
        return ck_err_set(&r->c->err, st, "out of memory allocating %zu-byte chunk buffers",
                          slot_bytes);
    return setup_direct(r, slot_bytes);
}

static void teardown(pull_run *r)
{
    size_t i;

    ck_pool_free(r->pool);
    for (i = 0; r->fds && i < r->m.nentries; i++) {
        if (r->fds[i] >= 0)
            close(r->fds[i]);
        if (r->dfds && r->dfds[i] >= 0)
            close(r->dfds[i]);
        if (r->readers && r->readers[i])
            r->store->ops->close_read(r->readers[i]);
    }
    for (i = 0; r->ctx.codecs && i < r->workers; i++)
        ck_codec_free(r->ctx.codecs[i]);
    free(r->ctx.codecs);
    for (i = 0; r->ctx.dbufs && i < r->workers; i++)
        free(r->ctx.dbufs[i]);
    free(r->ctx.dbufs);
    free(r->fds);
    free(r->dfds);
    free(r->readers);
    free(r->left);
    free(r->fresh);
    free(r->partial);
    free(r->marker);
    ck_manifest_cleanup(&r->m);
    ck_store_free(r->store);
}

static void fill_stats(pull_run *r, s3ckpt_stats *out, double t0)
{
    if (!out)
        return;
    r->stats.raw_bytes = r->m.bytes;
    r->stats.stored_bytes = r->m.stored_bytes;
    r->stats.seconds = ck_now() - t0;
    ck_client_add_counters(r->store, &r->stats);
    *out = r->stats;
}

s3ckpt_status ck_pull_run(s3ckpt_client *c, const char *store_url, const char *dest,
                          const s3ckpt_pull_opts *opts)
{
    pull_run r;
    char *final = NULL;
    int dest_exists = 0;
    double t0 = ck_now();
    s3ckpt_status st;

    memset(&r, 0, sizeof(r));
    ck_manifest_init(&r.m);
    r.c = c;
    r.opts = opts;
    r.ctx.op = "pull";
    r.ctx.write = 1;
    if ((st = setup(&r, store_url, opts ? opts->name : NULL)) ||
        (st = plan_dest(&r, dest, &final, &dest_exists)) || (st = prepare_partial(&r)) ||
        (st = make_dirs(&r)))
        goto out;
    ck_log(c, 1, "pull %s/%s -> %s: %" PRIu64 " files, %" PRIu64 " bytes, %u workers, %zu slots",
           store_url, r.name, final, r.m.files, r.m.bytes, r.workers, ck_pool_slots(r.pool));
    report(&r);
    if ((st = run_pipeline(&r)))
        goto out; /* the partial directory stays for a re-run to resume */
    st = move_into_place(&r, final, dest_exists);
out:
    if (opts && opts->name_out && opts->name_out_size)
        snprintf(opts->name_out, opts->name_out_size, "%s", r.name);
    fill_stats(&r, opts ? opts->stats : NULL, t0);
    free(final);
    teardown(&r);
    return st;
}

typedef struct listed {
    char *key;
    ck_obj_info info;
} listed;

typedef struct listed_set {
    listed *v;
    size_t n, cap;
} listed_set;

static s3ckpt_status collect_listed(void *ud, const char *key, int is_prefix,
                                    const ck_obj_info *info)
{
    listed_set *l = ud;

    if (is_prefix)
        return S3CKPT_OK;
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 64;
        listed *n = realloc(l->v, cap * sizeof(*n));

        if (!n)
            return S3CKPT_ENOMEM;
        l->v = n;
        l->cap = cap;
    }
    if (!(l->v[l->n].key = strdup(key)))
        return S3CKPT_ENOMEM;
    l->v[l->n].info = *info;
    l->n++;
    return S3CKPT_OK;
}

static int listed_cmp(const void *a, const void *b)
{
    return strcmp(((const listed *)a)->key, ((const listed *)b)->key);
}

/* Every data object exists with the recorded size (and ETag, where both are known): one
 * listing of the checkpoint's data, not a request per file. */
static s3ckpt_status verify_objects(pull_run *r)
{
    char prefix[CK_NAME_MAX + 16];
    listed_set l = {NULL, 0, 0};
    s3ckpt_status st;
    size_t i;

    snprintf(prefix, sizeof(prefix), "%s/%s", r->name, CK_DATA_PREFIX);
    st = r->store->ops->list(r->store, prefix, 0, collect_listed, &l);
    if (st == S3CKPT_ENOMEM)
        st = ck_err_set(&r->c->err, st, "out of memory");
    if (!st && l.n)
        qsort(l.v, l.n, sizeof(*l.v), listed_cmp);
    for (i = 0; !st && i < r->m.nentries; i++) {
        const ck_entry *e = &r->m.entries[i];
        listed want, *got = NULL;

        if (e->is_dir)
            continue;
        if (!(want.key = ck_path_join(r->name, e->key))) {
            st = ck_err_set(&r->c->err, S3CKPT_ENOMEM, "out of memory");
            break;
        }
        if (l.n)
            got = bsearch(&want, l.v, l.n, sizeof(*l.v), listed_cmp);
        if (!got)
            st = ck_err_set(&r->c->err, S3CKPT_ECORRUPT, "verify: %s: data object %s is missing",
                            e->path, want.key);
        else if (got->info.size != e->object_size)
            st = ck_err_set(&r->c->err, S3CKPT_ECORRUPT,
                            "verify: %s: data object %s is %" PRIu64
                            " bytes, manifest says %" PRIu64,
                            e->path, want.key, got->info.size, e->object_size);
        else if (got->info.etag[0] && e->etag[0] && strcmp(got->info.etag, e->etag))
            st = ck_err_set(&r->c->err, S3CKPT_ECORRUPT,
                            "verify: %s: data object %s changed (ETag %s, manifest says %s)",
                            e->path, want.key, got->info.etag, e->etag);
        else
            r->stats.files++;
        free(want.key);
    }
    for (i = 0; i < l.n; i++)
        free(l.v[i].key);
    free(l.v);
    return st;
}

s3ckpt_status ck_verify_run(s3ckpt_client *c, const char *store_url, const char *name, int deep,
                            s3ckpt_stats *stats)
{
    pull_run r;
    double t0 = ck_now();
    s3ckpt_status st;

    memset(&r, 0, sizeof(r));
    ck_manifest_init(&r.m);
    r.c = c;
    r.ctx.op = "verify";
    r.ctx.write = 0;
    if (!(st = setup(&r, store_url, name)))
        st = deep ? run_pipeline(&r) : verify_objects(&r);
    fill_stats(&r, stats, t0);
    teardown(&r);
    return st;
}
