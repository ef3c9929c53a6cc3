/*
 * catalog - what is in a store: `latest`, manifests, listing, show, rm and prune.
 *
 * A checkpoint exists iff <name>/manifest.json exists, so listing never trusts data objects and
 * deleting removes the manifest first. `latest` holds one name and a newline; it only moves
 * forward (a push of a lower step does not take it back) and is swapped with a conditional put
 * so two pushers cannot lose each other's update.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "client.h"
#include "path.h"

#define LATEST_KEY "latest"

void ck_manifest_key(char *key, size_t len, const char *name)
{
    snprintf(key, len, "%s/manifest.json", name);
}

/* Gets and decodes a manifest. Store failures are recorded by the store; ENOTFOUND and
 * ECORRUPT are returned unrecorded (why holds the reason) so callers can add context. */
static s3ckpt_status fetch_manifest(ck_store *s, const char *name, ck_manifest *m, char *why,
                                    size_t why_len)
{
    char key[CK_NAME_MAX + 32];
    ck_buf b;
    s3ckpt_status st;

    ck_manifest_init(m);
    ck_manifest_key(key, sizeof(key), name);
    ck_buf_init(&b, CK_MANIFEST_MAX_BYTES);
    st = s->ops->get(s, key, CK_MANIFEST_MAX_BYTES, &b, NULL);
    if (!st)
        st = ck_manifest_decode(m, b.data ? b.data : "", b.len, why, why_len);
    ck_buf_cleanup(&b);
    if (!st && strcmp(m->name, name)) {
        snprintf(why, why_len, "manifest names checkpoint \"%.100s\", stored as \"%s\"", m->name,
                 name);
        ck_manifest_cleanup(m);
        st = S3CKPT_ECORRUPT;
    }
    return st;
}

s3ckpt_status ck_manifest_load(s3ckpt_client *c, ck_store *s, const char *name, ck_manifest *m)
{
    char why[512] = "";
    s3ckpt_status st = fetch_manifest(s, name, m, why, sizeof(why));

    if (st == S3CKPT_ENOTFOUND)
        return ck_err_set(&c->err, st, "no checkpoint named %s in %s", name, s->url);
    if (st == S3CKPT_ECORRUPT)
        return ck_err_set(&c->err, st, "%s/%s/manifest.json: %s", s->url, name, why);
    return st;
}

s3ckpt_status ck_latest_read(s3ckpt_client *c, ck_store *s, char *name, size_t name_len, char *etag,
                             size_t etag_len)
{
    ck_obj_info info;
    char why[128];
    ck_buf b;
    s3ckpt_status st;

    ck_buf_init(&b, 4096);
    st = s->ops->get(s, LATEST_KEY, 4096, &b, &info);
    if (!st) {
        while (b.len &&
               (b.data[b.len - 1] == '\n' || b.data[b.len - 1] == '\r' || b.data[b.len - 1] == ' '))
            b.data[--b.len] = '\0';
        if (ck_name_check(b.data ? b.data : "", why, sizeof(why)) || b.len >= name_len)
            st = ck_err_set(&c->err, S3CKPT_ECORRUPT, "%s/latest does not hold a checkpoint name",
                            s->url);
        else
            snprintf(name, name_len, "%s", b.data);
        if (etag)
            snprintf(etag, etag_len, "%s", info.etag);
    }
    ck_buf_cleanup(&b);
    return st;
}

s3ckpt_status ck_resolve_name(s3ckpt_client *c, ck_store *s, const char *name, char *out,
                              size_t out_len)
{
    char why[128];
    s3ckpt_status st;

    if (name) {
        if (ck_name_check(name, why, sizeof(why)))
            return ck_err_set(&c->err, S3CKPT_EINVAL, "bad checkpoint name \"%.200s\": %s", name,
                              why);
        snprintf(out, out_len, "%s", name);
        return S3CKPT_OK;
    }
    st = ck_latest_read(c, s, out, out_len, NULL, 0);
    if (st == S3CKPT_ENOTFOUND)
        return ck_err_set(&c->err, st, "%s has no latest checkpoint (give --name)", s->url);
    return st;
}

s3ckpt_status ck_latest_update(s3ckpt_client *c, ck_store *s, const char *name, int64_t step)
{
    char cur[CK_NAME_MAX + 1], etag[CK_ETAG_MAX], line[CK_NAME_MAX + 2], why[256];
    int attempt;

    snprintf(line, sizeof(line), "%s\n", name);
    for (attempt = 0; attempt < 32; attempt++) {
        s3ckpt_status st = ck_latest_read(c, s, cur, sizeof(cur), etag, sizeof(etag));
        int found = st == S3CKPT_OK || st == S3CKPT_ECORRUPT; /* it exists, with this ETag */
        ck_manifest m;

        if (st && st != S3CKPT_ENOTFOUND && st != S3CKPT_ECORRUPT)
            return st;
        if (st == S3CKPT_ECORRUPT) {
            ck_err_reset(&c->err); /* a damaged latest is replaced, by the same swap */
            cur[0] = '\0';
        }
        if (found && !strcmp(cur, name))
            return S3CKPT_OK;
        if (found && cur[0] && step >= 0 &&
            fetch_manifest(s, cur, &m, why, sizeof(why)) == S3CKPT_OK) {
            int64_t cur_step = m.step;

            ck_manifest_cleanup(&m);
            if (cur_step > step) {
                ck_log(c, 0, "latest stays at %s (step %" PRId64 " > %" PRId64 ")", cur, cur_step,
                       step);
                return S3CKPT_OK;
            }
        }
        st = s->ops->put(s, LATEST_KEY, line, strlen(line),
                         found ? CK_PUT_IF_MATCH : CK_PUT_IF_ABSENT, found ? etag : NULL, NULL);
        if (st != S3CKPT_EEXISTS)
            return st;
        /* someone moved latest between our read and write: look again */
    }
    return ck_err_set(&c->err, S3CKPT_EEXISTS,
                      "could not update %s/latest: it kept changing under concurrent pushes",
                      s->url);
}

/* ---- list ---- */

typedef struct name_list {
    char **names;
    size_t n, cap;
    ck_err *err;
} name_list;

static s3ckpt_status collect_name(void *ud, const char *key, int is_prefix, const ck_obj_info *info)
{
    name_list *l = ud;
    char why[128], *name;
    size_t len = strlen(key);

    (void)info;
    if (!is_prefix || len < 2)
        return S3CKPT_OK;
    name = strndup(key, len - 1);
    if (!name)
        return ck_err_set(l->err, S3CKPT_ENOMEM, "out of memory");
    if (ck_name_check(name, why, sizeof(why))) {
        free(name);
        return S3CKPT_OK;
    }
    if (l->n == l->cap) {
        size_t ncap = l->cap ? l->cap * 2 : 32;
        char **p = realloc(l->names, ncap * sizeof(*p));

        if (!p) {
            free(name);
            return ck_err_set(l->err, S3CKPT_ENOMEM, "out of memory");
        }
        l->names = p;
        l->cap = ncap;
    }
    l->names[l->n++] = name;
    return S3CKPT_OK;
}

static s3ckpt_status fill_summary(s3ckpt_summary *sum, const ck_manifest *m, int is_latest)
{
    size_t i;

    memset(sum, 0, sizeof(*sum));
    sum->name = strdup(m->name);
    sum->created = strdup(m->created);
    sum->step = m->step;
    sum->files = m->files;
    sum->bytes = m->bytes;
    sum->stored_bytes = m->stored_bytes;
    sum->is_latest = is_latest;
    if (!sum->name || !sum->created)
        return S3CKPT_ENOMEM;
    if (!m->meta_count)
        return S3CKPT_OK;
    sum->meta = calloc(m->meta_count, sizeof(*sum->meta));
    if (!sum->meta)
        return S3CKPT_ENOMEM;
    for (i = 0; i < m->meta_count; i++) {
        sum->meta[i].key = strdup(m->meta[i].key);
        sum->meta[i].value = strdup(m->meta[i].value);
        sum->meta_count++;
        if (!sum->meta[i].key || !sum->meta[i].value)
            return S3CKPT_ENOMEM;
    }
    return S3CKPT_OK;
}

static void summary_cleanup(s3ckpt_summary *sum)
{
    size_t i;

    for (i = 0; i < sum->meta_count; i++) {
        free((char *)sum->meta[i].key);
        free((char *)sum->meta[i].value);
    }
    free(sum->meta);
    free(sum->name);
    free(sum->created);
}

S3CKPT_API void s3ckpt_summaries_free(s3ckpt_summary *list, size_t count)
{
    size_t i;

    for (i = 0; list && i < count; i++)
        summary_cleanup(&list[i]);
    free(list);
}

/* Oldest first. By step when every checkpoint has one (then creation time, name), else by
 * creation time (then name): each is a total order, which a mix of the two would not be. */
static int by_created(const void *a, const void *b)
{
    const s3ckpt_summary *x = a, *y = b;
    int c = strcmp(x->created, y->created);

    return c ? c : strcmp(x->name, y->name);
}

static int by_step(const void *a, const void *b)
{
    const s3ckpt_summary *x = a, *y = b;

    if (x->step != y->step)
        return x->step < y->step ? -1 : 1;
    return by_created(a, b);
}

static void sort_summaries(s3ckpt_summary *sums, size_t n)
{
    size_t i;
    int all_steps = 1;

    for (i = 0; i < n; i++)
        all_steps &= sums[i].step >= 0;
    qsort(sums, n, sizeof(*sums), all_steps ? by_step : by_created);
}

static s3ckpt_status list_store(s3ckpt_client *c, ck_store *s, s3ckpt_summary **out, size_t *count,
                                char *latest, size_t latest_len)
{
    name_list l = {NULL, 0, 0, &c->err};
    s3ckpt_summary *sums = NULL;
    s3ckpt_status st;
    size_t i, n = 0;

    *out = NULL;
    *count = 0;
    latest[0] = '\0';
    st = ck_latest_read(c, s, latest, latest_len, NULL, 0);
    if (st == S3CKPT_ECORRUPT) {
        ck_log(c, 0, "%s", s3ckpt_errmsg(c));
        ck_err_reset(&c->err);
        latest[0] = '\0';
    } else if (st && st != S3CKPT_ENOTFOUND) {
        return st;
    }
    st = s->ops->list(s, "", 1, collect_name, &l);
    if (!st && !(sums = calloc(l.n + 1, sizeof(*sums))))
        st = ck_err_set(&c->err, S3CKPT_ENOMEM, "out of memory");
    for (i = 0; !st && i < l.n; i++) {
        char why[512];
        ck_manifest m;
        s3ckpt_status mst = fetch_manifest(s, l.names[i], &m, why, sizeof(why));

        if (mst == S3CKPT_ENOTFOUND) {
            ck_log(c, 1, "%s: no manifest (an unfinished push?), not listed", l.names[i]);
            continue;
        }
        if (mst == S3CKPT_ECORRUPT) {
            ck_log(c, 0, "%s: invalid manifest, not listed: %s", l.names[i], why);
            continue;
        }
        if (mst) {
            st = mst;
            break;
        }
        st = fill_summary(&sums[n++], &m, !strcmp(latest, m.name));
        if (st)
            ck_err_set(&c->err, st, "out of memory");
        ck_manifest_cleanup(&m);
    }
    for (i = 0; i < l.n; i++)
        free(l.names[i]);
    free(l.names);
    if (st) {
        s3ckpt_summaries_free(sums, n);
        return st;
    }
    sort_summaries(sums, n);
    *out = sums;
    *count = n;
    return S3CKPT_OK;
}

S3CKPT_API s3ckpt_status s3ckpt_list(s3ckpt_client *c, const char *store_url, s3ckpt_summary **out,
                                     size_t *count)
{
    char latest[CK_NAME_MAX + 1];
    ck_store *s = NULL;
    s3ckpt_status st;

    if (ck_client_begin(c) || !out || !count)
        return S3CKPT_EINVAL;
    st = ck_store_open(&s, store_url, 0, &c->remote, &c->err);
    if (!st)
        st = list_store(c, s, out, count, latest, sizeof(latest));
    ck_store_free(s);
    return st;
}

/* ---- show ---- */

struct s3ckpt_checkpoint {
    ck_manifest m;
    s3ckpt_summary sum;
};

S3CKPT_API s3ckpt_status s3ckpt_show(s3ckpt_client *c, const char *store_url, const char *name,
                                     s3ckpt_checkpoint **out)
{
    char resolved[CK_NAME_MAX + 1], latest[CK_NAME_MAX + 1] = "";
    s3ckpt_checkpoint *ck = NULL;
    ck_store *s = NULL;
    s3ckpt_status st;
    size_t i;

    if (ck_client_begin(c) || !out)
        return S3CKPT_EINVAL;
    *out = NULL;
    if ((st = ck_store_open(&s, store_url, 0, &c->remote, &c->err)) ||
        (st = ck_resolve_name(c, s, name, resolved, sizeof(resolved))))
        goto out;
    if (!(ck = calloc(1, sizeof(*ck)))) {
        st = ck_err_set(&c->err, S3CKPT_ENOMEM, "out of memory");
        goto out;
    }
    if ((st = ck_manifest_load(c, s, resolved, &ck->m)))
        goto out;
    for (i = 0; i < ck->m.nentries; i++)
        ck_digest_to_hex(&ck->m.entries[i].digest, ck->m.entries[i].digest_hex);
    if (ck_latest_read(c, s, latest, sizeof(latest), NULL, 0) == S3CKPT_ECORRUPT)
        ck_err_reset(&c->err);
    if ((st = fill_summary(&ck->sum, &ck->m, !strcmp(latest, resolved)))) {
        ck_err_set(&c->err, st, "out of memory");
        goto out;
    }
    *out = ck;
    ck = NULL;
out:
    s3ckpt_checkpoint_free(ck);
    ck_store_free(s);
    return st;
}

S3CKPT_API const s3ckpt_summary *s3ckpt_checkpoint_summary(const s3ckpt_checkpoint *ck)
{
    return &ck->sum;
}

S3CKPT_API size_t s3ckpt_checkpoint_entry_count(const s3ckpt_checkpoint *ck)
{
    return ck->m.nentries;
}

S3CKPT_API s3ckpt_status s3ckpt_checkpoint_entry(const s3ckpt_checkpoint *ck, size_t i,
                                                 s3ckpt_file_info *out)
{
    const ck_entry *e;

    if (!ck || !out || i >= ck->m.nentries)
        return S3CKPT_EINVAL;
    e = &ck->m.entries[i];
    memset(out, 0, sizeof(*out));
    out->path = e->path;
    out->is_dir = e->is_dir;
    out->mode = e->mode;
    if (e->is_dir)
        return S3CKPT_OK;
    out->size = e->size;
    out->stored_bytes = e->object_size;
    out->chunks = e->nchunks;
    out->codec = "zstd";
    out->filter = ck_filter_name(e->filter);
    out->digest = e->digest_hex;
    return S3CKPT_OK;
}

S3CKPT_API void s3ckpt_checkpoint_free(s3ckpt_checkpoint *ck)
{
    if (!ck)
        return;
    summary_cleanup(&ck->sum);
    ck_manifest_cleanup(&ck->m);
    free(ck);
}

/* ---- rm and prune ---- */

typedef struct rm_ctx {
    ck_store *s;
    uint64_t removed;
    char *batch[CK_REMOVE_BATCH];
    size_t n;
} rm_ctx;

static s3ckpt_status rm_flush(rm_ctx *r)
{
    s3ckpt_status st =
        r->n ? r->s->ops->remove_keys(r->s, (const char *const *)r->batch, r->n) : S3CKPT_OK;

    while (r->n)
        free(r->batch[--r->n]);
    return st;
}

/* Collects keys and deletes them a batch at a time (one request per 1000 keys on S3). */
static s3ckpt_status remove_key(void *ud, const char *key, int is_prefix, const ck_obj_info *info)
{
    rm_ctx *r = ud;

    (void)is_prefix;
    (void)info;
    if (!(r->batch[r->n] = strdup(key)))
        return ck_err_set(r->s->err, S3CKPT_ENOMEM, "out of memory");
    r->n++;
    r->removed++;
    return r->n == CK_REMOVE_BATCH ? rm_flush(r) : S3CKPT_OK;
}

static int abort_every(void *ud, const char *key, const char *initiated)
{
    uint64_t *n = ud;

    (void)key;
    (void)initiated;
    ++*n;
    return 1;
}

/* Runs with the name's lock held. `latest` is read only now: only a push of `name` can move
 * it to `name`, and that push would hold the lock. */
static s3ckpt_status remove_locked(s3ckpt_client *c, ck_store *s, const char *name, int force)
{
    char key[CK_NAME_MAX + 32], prefix[CK_NAME_MAX + 2], latest[CK_NAME_MAX + 1] = "";
    char etag[CK_ETAG_MAX] = "";
    rm_ctx r = {s, 0, {NULL}, 0};
    ck_obj_info info;
    s3ckpt_status st;
    int has_manifest;

    st = ck_latest_read(c, s, latest, sizeof(latest), etag, sizeof(etag));
    if (st == S3CKPT_ECORRUPT || st == S3CKPT_ENOTFOUND) {
        ck_err_reset(&c->err);
        latest[0] = '\0';
    } else if (st) {
        return st;
    }
    ck_manifest_key(key, sizeof(key), name);
    st = s->ops->head(s, key, &info);
    if (st && st != S3CKPT_ENOTFOUND)
        return st;
    has_manifest = st == S3CKPT_OK;
    if (!strcmp(latest, name)) {
        if (!force)
            return ck_err_set(&c->err, S3CKPT_EEXISTS,
                              "rm: %s is what %s/latest names; push a newer checkpoint first, "
                              "or use --force (which also removes latest)",
                              name, s->url);
        /* only if latest still names it: a push of another name may have moved it meanwhile */
        st = s->ops->remove_if_match(s, LATEST_KEY, etag);
        if (st == S3CKPT_EEXISTS)
            ck_err_reset(&c->err);
        else if (st)
            return st;
    }
    /* the manifest goes first, durably: after a crash the checkpoint must not come back over
     * data that is already gone */
    if (has_manifest && ((st = s->ops->remove(s, key)) || (st = s->ops->sync(s))))
        return st;
    snprintf(prefix, sizeof(prefix), "%s/", name);
    st = s->ops->list(s, prefix, 0, remove_key, &r);
    if (!st)
        st = rm_flush(&r);
    else
        rm_flush(&r); /* frees the keys; the first error stands */
    /* and the incomplete uploads an interrupted push of it left (we hold its lock) */
    if (!st)
        st = s->ops->stale_uploads(s, prefix, abort_every, &r.removed);
    if (!st && !has_manifest && r.removed == 0)
        return ck_err_set(&c->err, S3CKPT_ENOTFOUND, "rm: no checkpoint named %s in %s", name,
                          s->url);
    if (!st)
        ck_log(c, 1, "removed %s (%" PRIu64 " objects%s)", name, r.removed + has_manifest,
               has_manifest ? "" : ", it had no manifest");
    return st;
}

/* Takes the name's lock first, so a push in progress is not pulled out from under it. */
static s3ckpt_status remove_checkpoint(s3ckpt_client *c, ck_store *s, const char *name, int force)
{
    void *lock = NULL;
    s3ckpt_status st = s->ops->lock(s, name, &lock);

    if (st == S3CKPT_EEXISTS) {
        ck_err_reset(&c->err);
        return ck_err_set(&c->err, st,
                          "rm: %s is being written by a push to %s; try again after it", name,
                          s->url);
    }
    if (!st)
        st = remove_locked(c, s, name, force);
    s->ops->unlock(s, lock);
    return st;
}

S3CKPT_API s3ckpt_status s3ckpt_rm(s3ckpt_client *c, const char *store_url, const char *name,
                                   int force)
{
    char why[128];
    ck_store *s = NULL;
    s3ckpt_status st;

    if (ck_client_begin(c))
        return S3CKPT_EINVAL;
    if (!name || ck_name_check(name, why, sizeof(why)))
        return ck_err_set(&c->err, S3CKPT_EINVAL, "rm: bad checkpoint name \"%.200s\": %s",
                          name ? name : "", name ? why : "missing");
    st = ck_store_open(&s, store_url, 0, &c->remote, &c->err);
    if (!st)
        st = remove_checkpoint(c, s, name, force);
    ck_store_free(s);
    return st;
}

/* A checkpoint that became busy or became latest since the listing is kept, with a warning. */
S3CKPT_API s3ckpt_status s3ckpt_prune(s3ckpt_client *c, const char *store_url,
                                      const s3ckpt_prune_opts *o)
{
    char latest[CK_NAME_MAX + 1];
    s3ckpt_summary *sums = NULL;
    ck_store *s = NULL;
    size_t n = 0, i;
    s3ckpt_status st;

    if (ck_client_begin(c))
        return S3CKPT_EINVAL;
    if (!o || o->version < 1 || o->version > S3CKPT_PRUNE_OPTS_VERSION)
        return ck_err_set(&c->err, S3CKPT_EINVAL, "prune: bad options");
    if ((st = ck_store_open(&s, store_url, 0, &c->remote, &c->err)) ||
        (st = list_store(c, s, &sums, &n, latest, sizeof(latest))))
        goto out;
    for (i = 0; i < n && !st; i++) {
        const s3ckpt_summary *m = &sums[i];
        int keep =
            m->is_latest || n - i <= o->keep_last ||
            (o->keep_every_steps && m->step >= 0 && (uint64_t)m->step % o->keep_every_steps == 0);

        if (!keep && !o->dry_run) {
            st = remove_checkpoint(c, s, m->name, 0);
            if (st == S3CKPT_EEXISTS) {
                ck_log(c, 0, "prune: kept %s: %s", m->name, s3ckpt_errmsg(c));
                ck_err_reset(&c->err);
                keep = 1;
                st = S3CKPT_OK;
            }
        }
        if (!st && o->on_item)
            o->on_item(o->userdata, m->name, !keep);
    }
out:
    s3ckpt_summaries_free(sums, n);
    ck_store_free(s);
    return st;
}

/* ---- cleanup of incomplete uploads ---- */

typedef struct stale_ctx {
    int64_t now, older_than_s;
    int dry_run;
    s3ckpt_cleanup_fn *fn;
    void *ud;
} stale_ctx;

static int64_t days_from_civil(int64_t y, unsigned m, unsigned d)
{
    int64_t era;
    unsigned yoe, doy, doe;

    y -= m <= 2;
    era = (y >= 0 ? y : y - 399) / 400;
    yoe = (unsigned)(y - era * 400);
    doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
    doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + (int64_t)doe - 719468;
}

/* Seconds since the epoch of "YYYY-MM-DDTHH:MM:SS[.fff]Z"; -1 when malformed. */
static int64_t parse_iso8601(const char *t)
{
    int y, mo, d, h, mi, sec;

    if (sscanf(t, "%4d-%2d-%2dT%2d:%2d:%2d", &y, &mo, &d, &h, &mi, &sec) != 6 || mo < 1 ||
        mo > 12 || d < 1 || d > 31 || h < 0 || h > 23 || mi < 0 || mi > 59 || sec < 0 || sec > 60)
        return -1;
    return days_from_civil(y, (unsigned)mo, (unsigned)d) * 86400 + h * 3600 + mi * 60 + sec;
}

static int stale_one(void *ud, const char *key, const char *initiated)
{
    stale_ctx *x = ud;
    int64_t t = parse_iso8601(initiated);
    int abort_it =
        !x->dry_run && (x->older_than_s == 0 || (t >= 0 && x->now - t >= x->older_than_s));

    if (x->fn)
        x->fn(x->ud, key, initiated, abort_it);
    return abort_it;
}

S3CKPT_API s3ckpt_status s3ckpt_cleanup(s3ckpt_client *c, const char *store_url,
                                        uint64_t older_than_s, int dry_run,
                                        s3ckpt_cleanup_fn *on_item, void *userdata)
{
    stale_ctx x = {(int64_t)time(NULL), (int64_t)older_than_s, dry_run, on_item, userdata};
    ck_store *s = NULL;
    s3ckpt_status st;

    if (ck_client_begin(c))
        return S3CKPT_EINVAL;
    if (!store_url)
        return ck_err_set(&c->err, S3CKPT_EINVAL, "cleanup: missing store");
    if (older_than_s > (uint64_t)INT64_MAX / 2)
        x.older_than_s = INT64_MAX / 2;
    if (!(st = ck_store_open(&s, store_url, 0, &c->remote, &c->err)))
        st = s->ops->stale_uploads(s, "", stale_one, &x);
    ck_store_free(s);
    return st;
}
