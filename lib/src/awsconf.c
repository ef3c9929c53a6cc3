/*
 * awsconf - decide as whom and where s3ckpt talks to S3 the way aws-cli v2 (botocore) does, so a
 * machine already set up for `aws s3` needs nothing new.
 *
 * The two shared files are read whole (capped) and walked by one configparser-compatible line
 * walker that reports sections, settings, continuation lines and nested `key = value` lines.
 * A lookup is a walk that collects the settings of one section as slices of the file buffer, so
 * nothing is copied until a value is chosen, and "later wins" and "duplicate sections merge" fall
 * out of walking in order. Credential sources that need the network or a child process (assume
 * role, web identity, SSO, credential_process) are refused with a message instead of skipped:
 * skipping them would sign as a different identity than aws-cli would use.
 */
#include "awsconf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"

#define PATH_CAP 4096
#define EXPORT_HINT "export AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY"

typedef struct conf_file {
    const char *what; /* "config file", "shared credentials file" */
    const char *var;  /* the environment variable that can name it */
    char path[PATH_CAP];
    int named;   /* path came from var: it must be readable */
    int present; /* read into data */
    ck_buf data;
} conf_file;

/* What the walker reports, in file order. Slices point into the file buffer. */
typedef enum { EV_SECTION, EV_OPTION, EV_CONT, EV_SUB } ev_kind;

typedef struct ini_ev {
    ev_kind kind;
    const char *name; /* section header, setting name or nested key */
    size_t name_len;
    const char *value; /* setting or nested value, trimmed */
    size_t value_len;
    unsigned line;
} ini_ev;

typedef void ini_cb(const ini_ev *ev, void *ctx);

/* The profile settings s3ckpt looks at (top-level names are case-insensitive). */
enum {
    K_ACCESS,
    K_SECRET,
    K_SECTOKEN,
    K_TOKEN,
    K_REGION,
    K_ENDPOINT,
    K_CA,
    K_ROLE,
    K_WEBID,
    K_PROCESS,
    K_SSO_URL,
    K_SSO_SESSION,
    K_SSO_ACCOUNT,
    K_SSO_ROLE,
    K_SSO_REGION,
    K_SERVICES,
    K_IGNORE,
    K_S3,
    K_COUNT
};
static const char *const key_names[K_COUNT] = {"aws_access_key_id",
                                               "aws_secret_access_key",
                                               "aws_security_token",
                                               "aws_session_token",
                                               "region",
                                               "endpoint_url",
                                               "ca_bundle",
                                               "role_arn",
                                               "web_identity_token_file",
                                               "credential_process",
                                               "sso_start_url",
                                               "sso_session",
                                               "sso_account_id",
                                               "sso_role_name",
                                               "sso_region",
                                               "services",
                                               "ignore_configured_endpoint_urls",
                                               "s3"};

/* Keys of the nested `s3 =` block (case-sensitive, as botocore's nested parser). */
enum { S_ENDPOINT, S_ADDRESSING, S_COUNT };
static const char *const sub_names[S_COUNT] = {"endpoint_url", "addressing_style"};

typedef struct val {
    const char *p;
    size_t len;
    unsigned line;
    int set;
    int multiline; /* continued on indented lines: not a usable single value */
} val;

typedef enum { SEC_CRED, SEC_PROFILE, SEC_SERVICES, SEC_BARE } sec_kind;

/* The settings of one section of one file, as the walker leaves them. */
typedef struct view {
    const conf_file *file;
    sec_kind kind;
    const char *name; /* profile or services name */
    char label[160];  /* "[profile p]", for messages and sources */
    int found;        /* the section exists */
    val v[K_COUNT];
    val sub[S_COUNT]; /* of the last `s3` setting */
    int in_section;   /* walker state */
    int cur;          /* K_* of the setting that continuation lines belong to, -1 none */
} view;

typedef struct resolver {
    ck_aws_config *cfg;
    const ck_aws_opts *opts;
    ck_err *err;
    conf_file cred, conf;
    view vcred, vconf;        /* the profile in each file */
    int profile_flag;         /* --profile given: environment credentials are not used */
    const char *profile_from; /* what named the profile; NULL for the implicit "default" */
} resolver;

static s3ckpt_status view_err(ck_err *err, const view *w, unsigned line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void wipe(void *p, size_t n)
{
    volatile unsigned char *q = p;

    while (n--)
        *q++ = 0;
}

static const char *env(const char *name)
{
    const char *v = getenv(name);

    return v && *v ? v : NULL;
}

static int is_ws(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
}

static void trim(const char **p, size_t *n)
{
    while (*n && is_ws(**p)) {
        (*p)++;
        (*n)--;
    }
    while (*n && is_ws((*p)[*n - 1]))
        (*n)--;
}

static int eq(const char *p, size_t n, const char *s)
{
    return strlen(s) == n && !memcmp(p, s, n);
}

static char lower(char c)
{
    return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

static int eq_ci(const char *p, size_t n, const char *s)
{
    size_t i;

    if (strlen(s) != n)
        return 0;
    for (i = 0; i < n; i++) {
        if (lower(p[i]) != lower(s[i]))
            return 0;
    }
    return 1;
}

/* Any control character (or, with strict, space or non-ASCII) in p[0..n). */
static int has_bad_char(const char *p, size_t n, int strict)
{
    size_t i;

    for (i = 0; i < n; i++) {
        unsigned char c = (unsigned char)p[i];

        if (c < 0x20 || c == 0x7f || (strict && (c == ' ' || c >= 0x80)))
            return 1;
    }
    return 0;
}

static s3ckpt_status syntax_err(const conf_file *f, unsigned line, const char *what, ck_err *err)
{
    return ck_err_set(err, S3CKPT_ECONFIG, "%s %s line %u: %s", f->what, f->path, line, what);
}

/*
 * Walks f line by line as Python's configparser (botocore's parser) reads it and reports each
 * section header, setting, continuation line and nested line to cb (which may be NULL). ECONFIG
 * on the first syntax error, so every walk of a file fails the same way.
 */
static s3ckpt_status ini_walk(const conf_file *f, ini_cb *cb, void *ctx, ck_err *err)
{
    const char *p = f->data.data;
    size_t n = f->data.len, pos = 0, opt_indent = 0;
    unsigned line = 0;
    int in_section = 0, open_opt = 0, nested = 0;

    if (!f->present)
        return S3CKPT_OK;
    if (n >= 3 && !memcmp(p, "\xef\xbb\xbf", 3))
        pos = 3; /* UTF-8 byte order mark */
    while (pos < n) {
        const char *s = p + pos, *nl = memchr(s, '\n', n - pos), *b, *d = NULL;
        size_t len = nl ? (size_t)(nl - s) : n - pos, indent = 0, blen, i;
        ini_ev ev;

        pos += len + (nl != NULL);
        line++;
        if (len > CK_AWS_LINE_MAX)
            return syntax_err(f, line, "line longer than 8192 bytes", err);
        if (memchr(s, '\0', len))
            return syntax_err(f, line, "NUL byte in line", err);
        while (indent < len && is_ws(s[indent]))
            indent++;
        b = s + indent;
        blen = len - indent;
        while (blen && is_ws(b[blen - 1]))
            blen--;
        if (!blen || b[0] == '#' || b[0] == ';')
            continue; /* blank lines and comments do not end a value */
        memset(&ev, 0, sizeof(ev));
        ev.line = line;
        if (open_opt && indent > opt_indent) {
            if (!nested) {
                ev.kind = EV_CONT;
                ev.value = b;
                ev.value_len = blen;
            } else {
                d = memchr(b, '=', blen);
                if (!d)
                    return syntax_err(f, line,
                                      "nested setting without '=' (expected 'name = value')", err);
                ev.kind = EV_SUB;
                ev.name = b;
                ev.name_len = (size_t)(d - b);
                ev.value = d + 1;
                ev.value_len = blen - ev.name_len - 1;
                trim(&ev.name, &ev.name_len);
                trim(&ev.value, &ev.value_len);
            }
            if (cb)
                cb(&ev, ctx);
            continue;
        }
        if (b[0] == '[') {
            for (i = blen; i > 1; i--) {
                if (b[i - 1] == ']') {
                    d = b + i - 1;
                    break;
                }
            }
            if (!d)
                return syntax_err(f, line, "section header without ']'", err);
            ev.kind = EV_SECTION;
            ev.name = b + 1;
            ev.name_len = (size_t)(d - b - 1);
            trim(&ev.name, &ev.name_len);
            if (!ev.name_len)
                return syntax_err(f, line, "empty section name", err);
            in_section = 1;
            open_opt = 0;
            if (cb)
                cb(&ev, ctx);
            continue;
        }
        if (!in_section)
            return syntax_err(f, line, "setting before the first [section] header", err);
        for (i = 0; i < blen && !d; i++) {
            if (b[i] == '=' || b[i] == ':')
                d = b + i;
        }
        if (!d)
            return syntax_err(f, line, "expected 'name = value'", err);
        ev.kind = EV_OPTION;
        ev.name = b;
        ev.name_len = (size_t)(d - b);
        ev.value = d + 1;
        ev.value_len = blen - ev.name_len - 1;
        trim(&ev.name, &ev.name_len);
        trim(&ev.value, &ev.value_len);
        if (!ev.name_len)
            return syntax_err(f, line, "setting without a name", err);
        open_opt = 1;
        opt_indent = indent;
        nested = ev.value_len == 0;
        if (cb)
            cb(&ev, ctx);
    }
    return S3CKPT_OK;
}

/* "PREFIX NAME" (botocore splits the header like a shell word list): the NAME, quotes removed. */
static int prefixed(const char *h, size_t hl, const char *prefix, const char **name, size_t *nl)
{
    size_t pl = strlen(prefix), i;

    if (hl <= pl || memcmp(h, prefix, pl) || !is_ws(h[pl]))
        return 0;
    h += pl;
    hl -= pl;
    trim(&h, &hl);
    if (hl >= 2 && (h[0] == '"' || h[0] == '\'') && h[hl - 1] == h[0]) {
        h++;
        hl -= 2;
    } else {
        for (i = 0; i < hl; i++) {
            if (is_ws(h[i]))
                return 0; /* more than one word: not a profile */
        }
    }
    *name = h;
    *nl = hl;
    return hl > 0;
}

static int section_matches(const view *w, const char *h, size_t hl)
{
    const char *nm;
    size_t nl;

    switch (w->kind) {
    case SEC_CRED:
    case SEC_BARE:
        return eq(h, hl, w->name);
    case SEC_PROFILE:
        if (!strcmp(w->name, "default") && eq(h, hl, "default"))
            return 1;
        return prefixed(h, hl, "profile", &nm, &nl) && eq(nm, nl, w->name);
    case SEC_SERVICES:
        return prefixed(h, hl, "services", &nm, &nl) && eq(nm, nl, w->name);
    }
    return 0;
}

static void set_val(val *v, const ini_ev *ev)
{
    v->p = ev->value;
    v->len = ev->value_len;
    v->line = ev->line;
    v->set = 1;
    v->multiline = 0;
}

static void view_cb(const ini_ev *ev, void *ctx)
{
    view *w = ctx;
    int i;

    switch (ev->kind) {
    case EV_SECTION:
        w->in_section = section_matches(w, ev->name, ev->name_len);
        w->found |= w->in_section;
        w->cur = -1;
        return;
    case EV_OPTION:
        w->cur = -1;
        if (!w->in_section)
            return;
        for (i = 0; i < K_COUNT && !eq_ci(ev->name, ev->name_len, key_names[i]); i++)
            ;
        if (i == K_COUNT)
            return;
        w->cur = i;
        set_val(&w->v[i], ev);
        if (i == K_S3)
            memset(w->sub, 0, sizeof(w->sub)); /* a later `s3` replaces the whole block */
        return;
    case EV_CONT:
        if (w->cur >= 0)
            w->v[w->cur].multiline = 1;
        return;
    case EV_SUB:
        if (w->cur < 0)
            return;
        if (w->cur != K_S3) {
            w->v[w->cur].multiline = 1;
            return;
        }
        for (i = 0; i < S_COUNT; i++) {
            if (eq(ev->name, ev->name_len, sub_names[i]))
                set_val(&w->sub[i], ev);
        }
        return;
    }
}

/* Collects the section `kind name` of f into w. */
static s3ckpt_status view_load(view *w, const conf_file *f, sec_kind kind, const char *name,
                               ck_err *err)
{
    memset(w, 0, sizeof(*w));
    w->file = f;
    w->kind = kind;
    w->name = name;
    w->cur = -1;
    if (kind == SEC_PROFILE && strcmp(name, "default"))
        snprintf(w->label, sizeof(w->label), "[profile %s]", name);
    else if (kind == SEC_SERVICES)
        snprintf(w->label, sizeof(w->label), "[services %s]", name);
    else
        snprintf(w->label, sizeof(w->label), "[%s]", name);
    return ini_walk(f, view_cb, w, err);
}

static s3ckpt_status view_err(ck_err *err, const view *w, unsigned line, const char *fmt, ...)
{
    char msg[640];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    return ck_err_set(err, S3CKPT_ECONFIG, "%s %s %s line %u: %s", w->file->what, w->file->path,
                      w->label, line, msg);
}

/* "config file /x [profile p]" */
static void view_src(const view *w, char *out, size_t cap)
{
    snprintf(out, cap, "%s %.200s %.60s", w->file->what, w->file->path, w->label);
}

/* "config file /x [profile p] line 3" */
static void val_src(const view *w, const val *v, char *out, size_t cap)
{
    snprintf(out, cap, "%s %.180s %.60s line %u", w->file->what, w->file->path, w->label, v->line);
}

/* The profile's setting k, botocore's full_config: the credentials file's section overrides the
 * config file's. NULL when neither sets it. */
static const view *pick(const resolver *r, int k)
{
    if (r->vcred.v[k].set)
        return &r->vcred;
    if (r->vconf.v[k].set)
        return &r->vconf;
    return NULL;
}

static s3ckpt_status file_setup(conf_file *f, const char *what, const char *var, const char *rel,
                                ck_err *err)
{
    const char *named = env(var), *home = env("HOME");
    int n;

    f->what = what;
    f->var = var;
    if (named) {
        f->named = 1;
        if (named[0] == '~' && named[1] == '/' && home)
            n = snprintf(f->path, sizeof(f->path), "%s%s", home, named + 1);
        else
            n = snprintf(f->path, sizeof(f->path), "%s", named);
    } else if (home) {
        n = snprintf(f->path, sizeof(f->path), "%s/%s", home, rel);
    } else {
        return S3CKPT_OK; /* no HOME: no default file */
    }
    if (n < 0 || (size_t)n >= sizeof(f->path)) {
        f->path[0] = '\0';
        return ck_err_set(err, S3CKPT_ECONFIG, "%s: the %s path is longer than %d bytes",
                          named ? var : "HOME", what, PATH_CAP - 1);
    }
    if (has_bad_char(f->path, (size_t)n, 0)) {
        f->path[0] = '\0';
        return ck_err_set(err, S3CKPT_ECONFIG, "%s: the %s path contains a control character",
                          named ? var : "HOME", what);
    }
    return S3CKPT_OK;
}

static s3ckpt_status file_read(conf_file *f, ck_err *err)
{
    char chunk[16384];
    s3ckpt_status st = S3CKPT_OK;
    ssize_t got;
    int fd;

    if (!f->path[0])
        return S3CKPT_OK;
    fd = open(f->path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        if (!f->named && (errno == ENOENT || errno == ENOTDIR))
            return S3CKPT_OK; /* no default file: fine */
        return ck_err_set(err, S3CKPT_ECONFIG, "%s %s%s%s: cannot open: %s", f->what, f->path,
                          f->named ? " named by " : "", f->named ? f->var : "", strerror(errno));
    }
    for (;;) {
        got = read(fd, chunk, sizeof(chunk));
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            st = ck_err_set(err, S3CKPT_ECONFIG, "%s %s: cannot read: %s", f->what, f->path,
                            strerror(errno));
            break;
        }
        if (got == 0)
            break;
        st = ck_buf_append(&f->data, chunk, (size_t)got);
        if (st == S3CKPT_EINVAL) {
            st = ck_err_set(err, S3CKPT_ECONFIG, "%s %s: larger than %zu bytes", f->what, f->path,
                            CK_AWS_FILE_MAX);
            break;
        }
        if (st) {
            st = ck_err_set(err, st, "%s %s: out of memory reading it", f->what, f->path);
            break;
        }
    }
    wipe(chunk, sizeof(chunk));
    close(fd);
    if (!st)
        f->present = 1;
    return st;
}

static void file_cleanup(conf_file *f)
{
    if (f->data.data)
        wipe(f->data.data, f->data.len);
    ck_buf_cleanup(&f->data);
}

static s3ckpt_status choose_profile(resolver *r)
{
    const char *p = r->opts->profile, *from = "--profile";
    size_t n;

    if (p) {
        r->profile_flag = 1;
    } else if ((p = env("AWS_PROFILE"))) {
        from = "AWS_PROFILE";
    } else if ((p = env("AWS_DEFAULT_PROFILE"))) {
        from = "AWS_DEFAULT_PROFILE";
    } else {
        p = "default";
        from = NULL;
    }
    r->profile_from = from;
    n = strlen(p);
    if (n >= sizeof(r->cfg->profile))
        return ck_err_set(r->err, S3CKPT_ECONFIG, "profile name from %s is longer than %zu bytes",
                          from, sizeof(r->cfg->profile) - 1);
    if (has_bad_char(p, n, 0))
        return ck_err_set(r->err, S3CKPT_ECONFIG,
                          "profile name from %s contains a control character", from);
    memcpy(r->cfg->profile, p, n + 1);
    return S3CKPT_OK;
}

static s3ckpt_status check_opts(const ck_aws_opts *o, ck_err *err)
{
    const char *names[4] = {"--profile", "--region", "--endpoint", "--ca-bundle"};
    const char *vals[4] = {o->profile, o->region, o->endpoint, o->ca_bundle};
    int i;

    for (i = 0; i < 4; i++) {
        if (vals[i] && !vals[i][0])
            return ck_err_set(err, S3CKPT_ECONFIG, "%s is empty", names[i]);
    }
    return S3CKPT_OK;
}

/* ECONFIG when a profile was asked for by name and neither file has it. */
static s3ckpt_status check_profile_found(resolver *r)
{
    const char *prof = r->cfg->profile;
    char hint[600] = "";
    view bare;
    s3ckpt_status st;

    if (!r->profile_from || r->vcred.found || r->vconf.found)
        return S3CKPT_OK;
    if (strcmp(prof, "default") && r->conf.present) {
        st = view_load(&bare, &r->conf, SEC_BARE, prof, r->err);
        if (st)
            return st;
        if (bare.found)
            snprintf(hint, sizeof(hint),
                     "; the config file has [%s], but profiles there are named [profile %s]", prof,
                     prof);
    }
    return ck_err_set(r->err, S3CKPT_ECONFIG,
                      "profile '%s' (from %s) not found: no %s in %s %s%s, no %s in %s %s%s%s",
                      prof, r->profile_from, r->vcred.label, r->cred.what,
                      r->cred.path[0] ? r->cred.path : "(HOME unset)",
                      r->cred.path[0] && !r->cred.present ? " (missing)" : "", r->vconf.label,
                      r->conf.what, r->conf.path[0] ? r->conf.path : "(HOME unset)",
                      r->conf.path[0] && !r->conf.present ? " (missing)" : "", hint);
}

/* Checks one credential value; the message names where it came from, never the value. */
static s3ckpt_status check_cred(const char *p, size_t n, size_t cap, const char *name,
                                const char *src, ck_err *err)
{
    if (!n)
        return ck_err_set(err, S3CKPT_ECONFIG, "%s from %s is empty", name, src);
    if (n >= cap)
        return ck_err_set(err, S3CKPT_ECONFIG, "%s from %s is longer than %zu bytes", name, src,
                          cap - 1);
    if (has_bad_char(p, n, 1))
        return ck_err_set(err, S3CKPT_ECONFIG,
                          "%s from %s contains a space, control or non-ASCII character", name, src);
    return S3CKPT_OK;
}

static s3ckpt_status env_creds(resolver *r, const char *ak, const char *sk)
{
    ck_aws_config *cfg = r->cfg;
    const char *tk = env("AWS_SECURITY_TOKEN"), *tk_name = "AWS_SECURITY_TOKEN";
    s3ckpt_status st;

    if (!sk)
        return ck_err_set(r->err, S3CKPT_ECONFIG,
                          "environment: AWS_ACCESS_KEY_ID is set but AWS_SECRET_ACCESS_KEY is not "
                          "(set both, or neither to use the shared files)");
    if (!ak)
        return ck_err_set(r->err, S3CKPT_ECONFIG,
                          "environment: AWS_SECRET_ACCESS_KEY is set but AWS_ACCESS_KEY_ID is not "
                          "(set both, or neither to use the shared files)");
    if (!tk) { /* botocore looks at the legacy name first */
        tk = env("AWS_SESSION_TOKEN");
        tk_name = "AWS_SESSION_TOKEN";
    }
    st = check_cred(ak, strlen(ak), sizeof(cfg->access_key), "access key", "AWS_ACCESS_KEY_ID",
                    r->err);
    if (!st)
        st = check_cred(sk, strlen(sk), sizeof(cfg->secret_key), "secret key",
                        "AWS_SECRET_ACCESS_KEY", r->err);
    if (!st && tk)
        st = check_cred(tk, strlen(tk), sizeof(cfg->session_token), "session token", tk_name,
                        r->err);
    if (st)
        return st;
    memcpy(cfg->access_key, ak, strlen(ak) + 1);
    memcpy(cfg->secret_key, sk, strlen(sk) + 1);
    if (tk)
        memcpy(cfg->session_token, tk, strlen(tk) + 1);
    snprintf(cfg->cred_source, sizeof(cfg->cred_source), "environment (AWS_ACCESS_KEY_ID)");
    cfg->have_creds = 1;
    return S3CKPT_OK;
}

/* The key pair (and token) of one file's section; *got = 0 when it has neither key. */
static s3ckpt_status file_creds(resolver *r, const view *w, int *got)
{
    static const int keys[4] = {K_ACCESS, K_SECRET, K_SECTOKEN, K_TOKEN};
    ck_aws_config *cfg = r->cfg;
    const val *ak = &w->v[K_ACCESS], *sk = &w->v[K_SECRET], *tk = NULL;
    char src[PATH_CAP + 256];
    s3ckpt_status st;
    int i;

    *got = 0;
    if (!ak->set && !sk->set)
        return S3CKPT_OK;
    if (!sk->set)
        return view_err(r->err, w, ak->line,
                        "aws_access_key_id is set but aws_secret_access_key is not");
    if (!ak->set)
        return view_err(r->err, w, sk->line,
                        "aws_secret_access_key is set but aws_access_key_id is not");
    for (i = 0; i < 4; i++) {
        if (w->v[keys[i]].set && w->v[keys[i]].multiline)
            return view_err(r->err, w, w->v[keys[i]].line,
                            "%s continues on an indented line (values are one line)",
                            key_names[keys[i]]);
    }
    if (w->v[K_SECTOKEN].set && w->v[K_SECTOKEN].len) /* botocore's order, as for env */
        tk = &w->v[K_SECTOKEN];
    else if (w->v[K_TOKEN].set && w->v[K_TOKEN].len)
        tk = &w->v[K_TOKEN];
    val_src(w, ak, src, sizeof(src));
    st = check_cred(ak->p, ak->len, sizeof(cfg->access_key), "aws_access_key_id", src, r->err);
    if (st)
        return st;
    val_src(w, sk, src, sizeof(src));
    st = check_cred(sk->p, sk->len, sizeof(cfg->secret_key), "aws_secret_access_key", src, r->err);
    if (st)
        return st;
    if (tk) {
        val_src(w, tk, src, sizeof(src));
        st = check_cred(tk->p, tk->len, sizeof(cfg->session_token),
                        tk == &w->v[K_TOKEN] ? "aws_session_token" : "aws_security_token", src,
                        r->err);
        if (st)
            return st;
        memcpy(cfg->session_token, tk->p, tk->len);
        cfg->session_token[tk->len] = '\0';
    }
    memcpy(cfg->access_key, ak->p, ak->len);
    cfg->access_key[ak->len] = '\0';
    memcpy(cfg->secret_key, sk->p, sk->len);
    cfg->secret_key[sk->len] = '\0';
    view_src(w, cfg->cred_source, sizeof(cfg->cred_source));
    cfg->have_creds = 1;
    *got = 1;
    return S3CKPT_OK;
}

static s3ckpt_status unsupported(resolver *r, const view *w, int k, const char *kind)
{
    return view_err(r->err, w, w->v[k].line,
                    "profile '%s' gets its credentials from %s (%s): not supported, " EXPORT_HINT
                    "%s (e.g. eval \"$(aws configure export-credentials --profile %s --format "
                    "env)\")",
                    r->cfg->profile, key_names[k], kind,
                    r->profile_flag ? " and drop --profile" : "", r->cfg->profile);
}

static s3ckpt_status resolve_creds(resolver *r)
{
    ck_aws_config *cfg = r->cfg;
    const char *ak, *sk;
    const view *w;
    s3ckpt_status st;
    int got, k;

    if (!r->profile_flag) {
        ak = env("AWS_ACCESS_KEY_ID");
        sk = env("AWS_SECRET_ACCESS_KEY");
        if (ak || sk)
            return env_creds(r, ak, sk);
    }
    /* the order of botocore's chain: assume role, web identity, SSO, credentials file,
     * credential_process, config file */
    if ((w = pick(r, K_ROLE)) && !pick(r, K_WEBID))
        return unsupported(r, w, K_ROLE, "assume role");
    if (!r->profile_flag && env("AWS_WEB_IDENTITY_TOKEN_FILE"))
        return ck_err_set(r->err, S3CKPT_ECONFIG,
                          "environment: AWS_WEB_IDENTITY_TOKEN_FILE (web identity) is set: not "
                          "supported, " EXPORT_HINT);
    if ((w = pick(r, K_WEBID)))
        return unsupported(r, w, K_WEBID, "web identity");
    for (k = K_SSO_URL; k <= K_SSO_REGION; k++) {
        if ((w = pick(r, k)))
            return unsupported(r, w, k, "IAM Identity Center / SSO");
    }
    st = file_creds(r, &r->vcred, &got);
    if (st || got)
        return st;
    if ((w = pick(r, K_PROCESS)))
        return unsupported(r, w, K_PROCESS, "an external process");
    st = file_creds(r, &r->vconf, &got);
    if (st || got)
        return st;
    if (env("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI") || env("AWS_CONTAINER_CREDENTIALS_FULL_URI"))
        snprintf(cfg->cred_source, sizeof(cfg->cred_source),
                 "none (container credentials are not supported)");
    else
        snprintf(cfg->cred_source, sizeof(cfg->cred_source), "none");
    return S3CKPT_OK;
}

/* The profile's single-line, non-empty setting k; NULL when unset or empty. */
static s3ckpt_status profile_value(resolver *r, int k, const view **out)
{
    const view *w = pick(r, k);

    *out = NULL;
    if (!w || !w->v[k].len)
        return S3CKPT_OK;
    if (w->v[k].multiline)
        return view_err(r->err, w, w->v[k].line,
                        "%s continues on an indented line (values are one line)", key_names[k]);
    *out = w;
    return S3CKPT_OK;
}

/* botocore's region check: [A-Za-z0-9-], 1..63, starting and ending with a letter or digit. */
static int valid_region(const char *p, size_t n)
{
    size_t i;

    if (!n || n > 63 || p[0] == '-' || p[n - 1] == '-')
        return 0;
    for (i = 0; i < n; i++) {
        char c = p[i];

        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '-'))
            return 0;
    }
    return 1;
}

static s3ckpt_status resolve_region(resolver *r)
{
    ck_aws_config *cfg = r->cfg;
    const char *p, *from = NULL;
    char src[PATH_CAP + 256];
    const view *w = NULL;
    s3ckpt_status st;
    size_t n;

    if ((p = r->opts->region))
        from = "--region";
    else if ((p = env("AWS_REGION")))
        from = "AWS_REGION";
    else if ((p = env("AWS_DEFAULT_REGION")))
        from = "AWS_DEFAULT_REGION";
    if (p) {
        n = strlen(p);
        snprintf(src, sizeof(src), "%s", from);
        snprintf(cfg->region_source, sizeof(cfg->region_source), "%s", from);
    } else {
        st = profile_value(r, K_REGION, &w);
        if (st)
            return st;
        if (w) {
            p = w->v[K_REGION].p;
            n = w->v[K_REGION].len;
            val_src(w, &w->v[K_REGION], src, sizeof(src));
            view_src(w, cfg->region_source, sizeof(cfg->region_source));
        } else {
            p = "us-east-1";
            n = strlen(p);
            snprintf(src, sizeof(src), "default");
            snprintf(cfg->region_source, sizeof(cfg->region_source), "default");
        }
    }
    if (!valid_region(p, n))
        return ck_err_set(r->err, S3CKPT_ECONFIG,
                          "region from %s is not a region name (1 to 63 letters, digits and "
                          "inner '-')",
                          src);
    memcpy(cfg->region, p, n);
    cfg->region[n] = '\0';
    return S3CKPT_OK;
}

/* The `s3` `endpoint_url` of the profile's `services` section; NULL when there is none. */
static s3ckpt_status services_endpoint(resolver *r, view *svc, const val **out)
{
    char name[128];
    const view *w;
    const val *v;
    s3ckpt_status st;

    *out = NULL;
    st = profile_value(r, K_SERVICES, &w);
    if (st || !w)
        return st;
    v = &w->v[K_SERVICES];
    if (v->len >= sizeof(name) || has_bad_char(v->p, v->len, 0))
        return view_err(r->err, w, v->line, "services name is not a section name");
    memcpy(name, v->p, v->len);
    name[v->len] = '\0';
    st = view_load(svc, &r->conf, SEC_SERVICES, name, r->err);
    if (st)
        return st;
    svc->name = NULL; /* name is local; the label keeps it */
    if (!svc->found)
        return view_err(r->err, w, v->line, "services = %s, but %s %s has no [services %s]", name,
                        r->conf.what, r->conf.path[0] ? r->conf.path : "(none)", name);
    if (svc->v[K_S3].set && svc->sub[S_ENDPOINT].set && svc->sub[S_ENDPOINT].len)
        *out = &svc->sub[S_ENDPOINT];
    return S3CKPT_OK;
}

static int valid_endpoint(const char *p, size_t n)
{
    size_t skip;

    if (n > 7 && eq_ci(p, 7, "http://"))
        skip = 7;
    else if (n > 8 && eq_ci(p, 8, "https://"))
        skip = 8;
    else
        return 0;
    return !has_bad_char(p + skip, n - skip, 0) && !memchr(p, ' ', n);
}

static s3ckpt_status resolve_endpoint(resolver *r)
{
    ck_aws_config *cfg = r->cfg;
    const char *p = NULL, *from = NULL, *ig = env("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS");
    char src[PATH_CAP + 256];
    const view *w = NULL;
    const val *v = NULL;
    view svc;
    s3ckpt_status st;
    int ignore = 0;
    size_t n = 0;

    if (ig) {
        ignore = eq_ci(ig, strlen(ig), "true");
    } else {
        st = profile_value(r, K_IGNORE, &w);
        if (st)
            return st;
        ignore = w && eq_ci(w->v[K_IGNORE].p, w->v[K_IGNORE].len, "true");
    }
    if ((p = r->opts->endpoint))
        from = "--endpoint";
    else if (!ignore && (p = env("AWS_ENDPOINT_URL_S3")))
        from = "AWS_ENDPOINT_URL_S3";
    else if (!ignore && (p = env("AWS_ENDPOINT_URL")))
        from = "AWS_ENDPOINT_URL";
    if (p) {
        n = strlen(p);
        snprintf(src, sizeof(src), "%s", from);
        snprintf(cfg->endpoint_source, sizeof(cfg->endpoint_source), "%s", from);
    } else if (!ignore) {
        st = services_endpoint(r, &svc, &v);
        if (st)
            return st;
        if (v) {
            w = &svc;
        } else if ((w = pick(r, K_S3)) && w->sub[S_ENDPOINT].set && w->sub[S_ENDPOINT].len) {
            v = &w->sub[S_ENDPOINT];
        } else {
            st = profile_value(r, K_ENDPOINT, &w);
            if (st)
                return st;
            v = w ? &w->v[K_ENDPOINT] : NULL;
        }
        if (v) {
            p = v->p;
            n = v->len;
            val_src(w, v, src, sizeof(src));
            view_src(w, cfg->endpoint_source, sizeof(cfg->endpoint_source));
        }
    }
    if (!p) {
        snprintf(cfg->endpoint_source, sizeof(cfg->endpoint_source), "default");
        return S3CKPT_OK;
    }
    if (n >= sizeof(cfg->endpoint))
        return ck_err_set(r->err, S3CKPT_ECONFIG, "endpoint from %s is longer than %zu bytes", src,
                          sizeof(cfg->endpoint) - 1);
    if (!valid_endpoint(p, n))
        return ck_err_set(r->err, S3CKPT_ECONFIG,
                          "endpoint from %s is not an http:// or https:// URL without spaces", src);
    memcpy(cfg->endpoint, p, n);
    cfg->endpoint[n] = '\0';
    return S3CKPT_OK;
}

static s3ckpt_status resolve_ca_bundle(resolver *r)
{
    ck_aws_config *cfg = r->cfg;
    const char *p, *from = NULL;
    char src[PATH_CAP + 256];
    const view *w = NULL;
    s3ckpt_status st;
    size_t n;

    if ((p = r->opts->ca_bundle))
        from = "--ca-bundle";
    else if ((p = env("AWS_CA_BUNDLE")))
        from = "AWS_CA_BUNDLE";
    if (p) {
        n = strlen(p);
        snprintf(src, sizeof(src), "%s", from);
    } else {
        st = profile_value(r, K_CA, &w);
        if (st || !w)
            return st;
        p = w->v[K_CA].p;
        n = w->v[K_CA].len;
        val_src(w, &w->v[K_CA], src, sizeof(src));
    }
    if (n >= sizeof(cfg->ca_bundle))
        return ck_err_set(r->err, S3CKPT_ECONFIG, "ca_bundle from %s is longer than %zu bytes", src,
                          sizeof(cfg->ca_bundle) - 1);
    if (has_bad_char(p, n, 0))
        return ck_err_set(r->err, S3CKPT_ECONFIG, "ca_bundle from %s contains a control character",
                          src);
    memcpy(cfg->ca_bundle, p, n);
    cfg->ca_bundle[n] = '\0';
    return S3CKPT_OK;
}

static s3ckpt_status resolve_addressing(resolver *r)
{
    static const char *const styles[3] = {"path", "virtual", "auto"};
    const view *w = pick(r, K_S3);
    const val *v;
    int i;

    if (!w || !w->sub[S_ADDRESSING].set || !w->sub[S_ADDRESSING].len)
        return S3CKPT_OK;
    v = &w->sub[S_ADDRESSING];
    for (i = 0; i < 3; i++) {
        if (eq_ci(v->p, v->len, styles[i])) {
            r->cfg->addressing = CK_AWS_ADDR_PATH + i;
            return S3CKPT_OK;
        }
    }
    return view_err(r->err, w, v->line, "s3 addressing_style is not path, virtual or auto");
}

s3ckpt_status ck_awsconf_load(ck_aws_config *cfg, const ck_aws_opts *opts, ck_err *err)
{
    static const ck_aws_opts none;
    resolver r;
    s3ckpt_status st;

    memset(cfg, 0, sizeof(*cfg));
    memset(&r, 0, sizeof(r));
    r.cfg = cfg;
    r.opts = opts ? opts : &none;
    r.err = err;
    ck_buf_init(&r.cred.data, CK_AWS_FILE_MAX);
    ck_buf_init(&r.conf.data, CK_AWS_FILE_MAX);
    st = check_opts(r.opts, err);
    if (st)
        goto out;
    st = choose_profile(&r);
    if (st)
        goto out;
    st = file_setup(&r.cred, "shared credentials file", "AWS_SHARED_CREDENTIALS_FILE",
                    ".aws/credentials", err);
    if (st)
        goto out;
    st = file_setup(&r.conf, "config file", "AWS_CONFIG_FILE", ".aws/config", err);
    if (st)
        goto out;
    st = file_read(&r.cred, err);
    if (st)
        goto out;
    st = file_read(&r.conf, err);
    if (st)
        goto out;
    /* each walk reads its whole file, so a syntax error anywhere fails here, as in aws-cli */
    st = view_load(&r.vcred, &r.cred, SEC_CRED, cfg->profile, err);
    if (st)
        goto out;
    st = view_load(&r.vconf, &r.conf, SEC_PROFILE, cfg->profile, err);
    if (st)
        goto out;
    st = check_profile_found(&r);
    if (st)
        goto out;
    st = resolve_creds(&r);
    if (st)
        goto out;
    st = resolve_region(&r);
    if (st)
        goto out;
    st = resolve_endpoint(&r);
    if (st)
        goto out;
    st = resolve_ca_bundle(&r);
    if (st)
        goto out;
    st = resolve_addressing(&r);
out:
    file_cleanup(&r.cred);
    file_cleanup(&r.conf);
    if (st)
        wipe(cfg, sizeof(*cfg));
    return st;
}
