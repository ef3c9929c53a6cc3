/* helpers - see helpers.h. */
#include "helpers.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char errbuf[2048];

/* Criterion 2.4.1's runner leaks a few small blocks of its own at exit; under LeakSanitizer that
 * would fail the whole executable. Leaks of the binary under test are still reported (it is a
 * separate program). */
const char *__lsan_default_suppressions(void);
__attribute__((used)) const char *__lsan_default_suppressions(void)
{
    return "leak:libcriterion.so\n";
}

static int fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int fail(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(errbuf, sizeof(errbuf), fmt, ap);
    va_end(ap);
    return -1;
}

const char *th_error(void)
{
    return errbuf;
}

void th_path(char *buf, size_t len, const char *fmt, ...)
{
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(buf, len, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= len)
        cr_assert_fail("path too long for its buffer: %s", buf);
}

/* ---- paths and temp directories ---- */

int th_tmpdir(char *out, const char *tag)
{
    snprintf(out, PATH_MAX, "/tmp/s3ckpt-it-%s-XXXXXX", tag);
    if (!mkdtemp(out))
        return fail("mkdtemp %s: %s", out, strerror(errno));
    if (chmod(out, 0755))
        return fail("chmod %s: %s", out, strerror(errno));
    return 0;
}

static int rm_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)ftw;
    if (flag == FTW_DP)
        return rmdir(path) && errno != ENOENT ? -1 : 0;
    return unlink(path) && errno != ENOENT ? -1 : 0;
}

int th_rm_rf(const char *path)
{
    struct stat sb;

    if (lstat(path, &sb) && errno == ENOENT)
        return 0;
    if (nftw(path, rm_one, 32, FTW_DEPTH | FTW_PHYS))
        return fail("removing %s: %s", path, strerror(errno));
    return 0;
}

int th_mkdirs(const char *path, mode_t mode)
{
    char buf[PATH_MAX];
    char *p;

    if (snprintf(buf, sizeof(buf), "%s", path) >= (int)sizeof(buf))
        return fail("path too long: %s", path);
    for (p = buf + 1; (p = strchr(p, '/')); p++) {
        *p = '\0';
        if (mkdir(buf, mode) && errno != EEXIST)
            return fail("mkdir %s: %s", buf, strerror(errno));
        *p = '/';
    }
    if (mkdir(buf, mode) && errno != EEXIST)
        return fail("mkdir %s: %s", buf, strerror(errno));
    return 0;
}

int th_exists(const char *path)
{
    struct stat sb;

    return lstat(path, &sb) == 0;
}

static const char *find_name;
static int find_hit;

static int find_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    if (ftw->level > 0 && strcmp(path + ftw->base, find_name) == 0) {
        find_hit = 1;
        return 1;
    }
    return 0;
}

int th_tree_has_name(const char *root, const char *name)
{
    find_name = name;
    find_hit = 0;
    if (!th_exists(root))
        return 0;
    nftw(root, find_one, 32, FTW_PHYS);
    return find_hit;
}

static const char *find_part;
static char *find_found;

static int find_part_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    if (ftw->level > 0 && strstr(path + ftw->base, find_part)) {
        if (find_found)
            snprintf(find_found, PATH_MAX, "%s", path);
        find_hit = 1;
        return 1;
    }
    return 0;
}

int th_tree_has_name_part(const char *root, const char *part, char *found)
{
    find_part = part;
    find_found = found;
    find_hit = 0;
    if (!th_exists(root))
        return 0;
    nftw(root, find_part_one, 32, FTW_PHYS);
    return find_hit;
}

int th_dir_count(const char *dir)
{
    struct dirent *de;
    DIR *d = opendir(dir);
    int n = 0;

    if (!d)
        return fail("opendir %s: %s", dir, strerror(errno));
    while ((de = readdir(d)))
        if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
            n++;
    closedir(d);
    return n;
}

void th_store_url(char *out, size_t len, const char *dir)
{
    th_path(out, len, "file://%s", dir);
}

/* ---- test data ---- */

typedef struct rng {
    uint64_t s[4];
} rng;

static uint64_t splitmix(uint64_t *x)
{
    uint64_t z = (*x += 0x9E3779B97F4A7C15ull);

    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static void rng_seed(rng *r, uint64_t seed)
{
    int i;

    for (i = 0; i < 4; i++)
        r->s[i] = splitmix(&seed);
}

static uint64_t rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

static uint64_t rng_next(rng *r)
{
    uint64_t res = rotl(r->s[1] * 5, 7) * 9, t = r->s[1] << 17;

    r->s[2] ^= r->s[0];
    r->s[3] ^= r->s[1];
    r->s[1] ^= r->s[2];
    r->s[0] ^= r->s[3];
    r->s[2] ^= t;
    r->s[3] = rotl(r->s[3], 45);
    return res;
}

#define BUF_BYTES (1u << 20)

static int write_all(int fd, const void *p, size_t n, const char *path)
{
    const char *c = p;

    while (n) {
        ssize_t w = write(fd, c, n);

        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            return fail("write %s: %s", path, strerror(errno));
        c += w;
        n -= (size_t)w;
    }
    return 0;
}

enum fill { FILL_RANDOM, FILL_FLOATS, FILL_ZEROS };

static void fill(rng *r, enum fill kind, unsigned char *buf, size_t n)
{
    size_t i;

    if (kind == FILL_ZEROS) {
        memset(buf, 0, n);
    } else if (kind == FILL_RANDOM) {
        for (i = 0; i + 8 <= n; i += 8) {
            uint64_t v = rng_next(r);

            memcpy(buf + i, &v, 8);
        }
        for (; i < n; i++)
            buf[i] = (unsigned char)rng_next(r);
    } else {
        /* Irwin-Hall of four 16-bit uniforms: close enough to a normal for compression */
        for (i = 0; i + 4 <= n; i += 4) {
            uint64_t v = rng_next(r);
            double s = (double)(v & 0xffff) + (double)((v >> 16) & 0xffff) +
                       (double)((v >> 32) & 0xffff) + (double)(v >> 48) - 131070.0;
            float f = (float)(s / 37837.0 * 0.02);

            memcpy(buf + i, &f, 4);
        }
        for (; i < n; i++)
            buf[i] = (unsigned char)rng_next(r);
    }
}

static int write_kind(const char *path, uint64_t size, uint64_t seed, enum fill kind)
{
    unsigned char *buf = malloc(BUF_BYTES);
    int fd, rc = 0;
    rng r;

    if (!buf)
        return fail("out of memory");
    rng_seed(&r, seed);
    fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        free(buf);
        return fail("create %s: %s", path, strerror(errno));
    }
    while (size && !rc) {
        size_t n = size < BUF_BYTES ? (size_t)size : BUF_BYTES;

        fill(&r, kind, buf, n);
        rc = write_all(fd, buf, n, path);
        size -= n;
    }
    if (close(fd) && !rc)
        rc = fail("close %s: %s", path, strerror(errno));
    free(buf);
    return rc;
}

int th_write_bytes(const char *path, const void *data, size_t n)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644), rc;

    if (fd < 0)
        return fail("create %s: %s", path, strerror(errno));
    rc = write_all(fd, data, n, path);
    if (close(fd) && !rc)
        rc = fail("close %s: %s", path, strerror(errno));
    return rc;
}

int th_write_random(const char *path, uint64_t size, uint64_t seed)
{
    return write_kind(path, size, seed, FILL_RANDOM);
}

int th_write_floats(const char *path, uint64_t size, uint64_t seed)
{
    return write_kind(path, size, seed, FILL_FLOATS);
}

int th_write_zeros(const char *path, uint64_t size)
{
    return write_kind(path, size, 0, FILL_ZEROS);
}

int th_write_sparse(const char *path, uint64_t size, const uint64_t *offsets, size_t n,
                    size_t block, uint64_t seed)
{
    unsigned char *buf = malloc(block ? block : 1);
    int fd, rc = 0;
    size_t i;
    rng r;

    if (!buf)
        return fail("out of memory");
    rng_seed(&r, seed);
    fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        free(buf);
        return fail("create %s: %s", path, strerror(errno));
    }
    if (ftruncate(fd, (off_t)size))
        rc = fail("ftruncate %s: %s", path, strerror(errno));
    for (i = 0; i < n && !rc; i++) {
        fill(&r, FILL_RANDOM, buf, block);
        if (pwrite(fd, buf, block, (off_t)offsets[i]) != (ssize_t)block)
            rc = fail("pwrite %s: %s", path, strerror(errno));
    }
    if (close(fd) && !rc)
        rc = fail("close %s: %s", path, strerror(errno));
    free(buf);
    return rc;
}

int th_write_text(const char *path, const char *text)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644), rc;

    if (fd < 0)
        return fail("create %s: %s", path, strerror(errno));
    rc = write_all(fd, text, strlen(text), path);
    if (close(fd) && !rc)
        rc = fail("close %s: %s", path, strerror(errno));
    return rc;
}

char *th_read_file(const char *path, size_t *len)
{
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    int fd = open(path, O_RDONLY | O_CLOEXEC);

    if (fd < 0 || !buf) {
        fail("open %s: %s", path, strerror(errno));
        free(buf);
        if (fd >= 0)
            close(fd);
        return NULL;
    }
    for (;;) {
        ssize_t r;

        if (n + 1 >= cap) {
            char *p = realloc(buf, cap * 2);

            if (!p) {
                free(buf);
                close(fd);
                fail("out of memory");
                return NULL;
            }
            buf = p;
            cap *= 2;
        }
        r = read(fd, buf + n, cap - n - 1);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            fail("read %s: %s", path, strerror(errno));
            free(buf);
            close(fd);
            return NULL;
        }
        if (r == 0)
            break;
        n += (size_t)r;
    }
    close(fd);
    buf[n] = '\0';
    if (len)
        *len = n;
    return buf;
}

int th_file_replace(const char *path, const char *from, const char *to)
{
    size_t len, flen = strlen(from), tlen = strlen(to), cap, o = 0;
    char *src = th_read_file(path, &len), *dst, *p, *q;
    int count = 0, rc, fd;

    if (!src)
        return -1;
    if (!flen) {
        free(src);
        return fail("th_file_replace: empty pattern");
    }
    for (p = src; (p = strstr(p, from)); p += flen)
        count++;
    cap = len + (size_t)count * tlen + 1;
    dst = malloc(cap);
    if (!dst) {
        free(src);
        return fail("out of memory");
    }
    for (p = src; (q = strstr(p, from)); p = q + flen) {
        memcpy(dst + o, p, (size_t)(q - p));
        o += (size_t)(q - p);
        memcpy(dst + o, to, tlen);
        o += tlen;
    }
    memcpy(dst + o, p, strlen(p));
    o += strlen(p);
    fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
    rc = fd < 0 ? fail("open %s: %s", path, strerror(errno)) : write_all(fd, dst, o, path);
    if (fd >= 0)
        close(fd);
    free(src);
    free(dst);
    return rc ? -1 : count;
}

int th_flip_byte(const char *path, int64_t off)
{
    int fd = open(path, O_RDWR | O_CLOEXEC);
    unsigned char c;
    struct stat sb;
    int rc = 0;

    if (fd < 0)
        return fail("open %s: %s", path, strerror(errno));
    if (fstat(fd, &sb)) {
        close(fd);
        return fail("stat %s: %s", path, strerror(errno));
    }
    if (off < 0)
        off += sb.st_size;
    if (off < 0 || off >= sb.st_size)
        rc = fail("flip %s: offset %lld outside %lld bytes", path, (long long)off,
                  (long long)sb.st_size);
    else if (pread(fd, &c, 1, off) != 1)
        rc = fail("pread %s: %s", path, strerror(errno));
    else {
        c ^= 0xff;
        if (pwrite(fd, &c, 1, off) != 1)
            rc = fail("pwrite %s: %s", path, strerror(errno));
    }
    close(fd);
    return rc;
}

/* ---- running commands ---- */

static double now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* In the child: default signal dispositions and an empty mask, so the program under test sees
 * what it would see from a shell. */
static void child_signals(void)
{
    sigset_t none;
    int sig;

    for (sig = 1; sig < NSIG; sig++)
        if (sig != SIGKILL && sig != SIGSTOP)
            signal(sig, SIG_DFL);
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
}

typedef struct sbuf {
    char *p;
    size_t n, cap;
} sbuf;

static int sbuf_read(sbuf *b, int fd)
{
    ssize_t r;

    if (b->cap - b->n < 65537) {
        size_t ncap = b->cap ? b->cap * 2 : 131072;
        char *p = realloc(b->p, ncap);

        if (!p)
            return -1;
        b->p = p;
        b->cap = ncap;
    }
    r = read(fd, b->p + b->n, b->cap - b->n - 1);
    if (r < 0)
        return errno == EINTR || errno == EAGAIN ? 1 : -1;
    b->n += (size_t)r;
    b->p[b->n] = '\0';
    return r > 0;
}

int th_run_argv(th_run *r, char *const argv[], const th_run_opts *o)
{
    int po[2] = {-1, -1}, pe[2] = {-1, -1}, st, nullfd;
    sbuf out = {0}, err = {0};
    double t0 = now();
    pid_t pid;

    memset(r, 0, sizeof(*r));
    r->status = -1000;
    {
        size_t i, used = 0;

        for (i = 0; argv[i] && used < sizeof(r->cmd); i++) {
            int n = snprintf(r->cmd + used, sizeof(r->cmd) - used, "%s%s", i ? " " : "", argv[i]);

            used += n > 0 ? (size_t)n : 0;
        }
    }
    if (pipe2(po, O_CLOEXEC) || pipe2(pe, O_CLOEXEC))
        return fail("pipe: %s", strerror(errno));
    pid = fork();
    if (pid < 0) {
        close(po[0]);
        close(po[1]);
        close(pe[0]);
        close(pe[1]);
        return fail("fork: %s", strerror(errno));
    }
    if (pid == 0) {
        child_signals();
        nullfd = open("/dev/null", O_RDONLY);
        if (nullfd < 0 || dup2(nullfd, 0) < 0 || dup2(po[1], 1) < 0 || dup2(pe[1], 2) < 0)
            _exit(126);
        if (o && o->cwd && chdir(o->cwd))
            _exit(126);
        if (o && o->fsize_limit) {
            struct rlimit rl = {(rlim_t)o->fsize_limit, (rlim_t)o->fsize_limit};

            signal(SIGXFSZ, SIG_IGN);
            if (setrlimit(RLIMIT_FSIZE, &rl))
                _exit(126);
        }
        execv(argv[0], argv);
        _exit(127);
    }
    close(po[1]);
    close(pe[1]);
    {
        struct pollfd fds[2] = {{po[0], POLLIN, 0}, {pe[0], POLLIN, 0}};
        int open_fds = 2;

        while (open_fds) {
            int i;

            if (poll(fds, 2, -1) < 0) {
                if (errno == EINTR)
                    continue;
                break;
            }
            for (i = 0; i < 2; i++) {
                int rr;

                if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR)))
                    continue;
                rr = sbuf_read(i ? &err : &out, fds[i].fd);
                if (rr <= 0) {
                    close(fds[i].fd);
                    fds[i].fd = -1;
                    open_fds--;
                }
            }
        }
    }
    while (waitpid(pid, &st, 0) < 0) {
        if (errno != EINTR) {
            free(out.p);
            free(err.p);
            return fail("waitpid: %s", strerror(errno));
        }
    }
    r->secs = now() - t0;
    r->out = out.p ? out.p : strdup("");
    r->err = err.p ? err.p : strdup("");
    if (WIFEXITED(st))
        r->status = WEXITSTATUS(st);
    else if (WIFSIGNALED(st))
        r->status = -WTERMSIG(st);
    return 0;
}

#define MAX_ARGS 64

static int run_va(th_run *r, const th_run_opts *o, va_list ap)
{
    char *argv[MAX_ARGS + 2];
    const char *a;
    int n = 0;

    argv[n++] = (char *)S3CKPT_BIN;
    while ((a = va_arg(ap, const char *))) {
        if (n == MAX_ARGS)
            return fail("too many arguments");
        argv[n++] = (char *)a;
    }
    argv[n] = NULL;
    return th_run_argv(r, argv, o);
}

int th_s3ckpt(th_run *r, ...)
{
    va_list ap;
    int rc;

    va_start(ap, r);
    rc = run_va(r, NULL, ap);
    va_end(ap);
    return rc;
}

int th_s3ckpt_opts(th_run *r, const th_run_opts *o, ...)
{
    va_list ap;
    int rc;

    va_start(ap, o);
    rc = run_va(r, o, ap);
    va_end(ap);
    return rc;
}

void th_run_free(th_run *r)
{
    free(r->out);
    free(r->err);
    r->out = r->err = NULL;
}

pid_t th_spawn_bg(char *const argv[], const char *log_path)
{
    pid_t pid = fork();

    if (pid < 0) {
        fail("fork: %s", strerror(errno));
        return -1;
    }
    if (pid == 0) {
        int in = open("/dev/null", O_RDONLY),
            out = open(log_path ? log_path : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0644);

        child_signals();
        if (in < 0 || out < 0 || dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(out, 2) < 0)
            _exit(126);
        execv(argv[0], argv);
        _exit(127);
    }
    return pid;
}

int th_kill_reap(pid_t pid)
{
    int st;

    if (pid <= 0)
        return fail("no such child");
    kill(pid, SIGKILL);
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR)
            return fail("waitpid %ld: %s", (long)pid, strerror(errno));
    return st;
}

/* ---- comparing trees ---- */

static int read_full(int fd, unsigned char *p, size_t n, off_t off)
{
    while (n) {
        ssize_t r = pread(fd, p, n, off);

        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        p += r;
        n -= (size_t)r;
        off += r;
    }
    return 0;
}

static off_t next_data(int fd, off_t off, off_t size)
{
    off_t d = lseek(fd, off, SEEK_DATA);

    if (d >= 0)
        return d;
    return errno == ENXIO ? size : off; /* no SEEK_DATA: treat everything as data */
}

static int files_equal(const char *a, const char *b, off_t size, const char *rel)
{
    unsigned char *ba = malloc(BUF_BYTES), *bb = malloc(BUF_BYTES);
    int fa = open(a, O_RDONLY | O_CLOEXEC), fb = open(b, O_RDONLY | O_CLOEXEC), rc = 0;
    off_t off = 0;

    if (!ba || !bb || fa < 0 || fb < 0) {
        rc = fail("%s: cannot open or allocate: %s", rel, strerror(errno));
        goto out;
    }
    while (off < size) {
        off_t da = next_data(fa, off, size), db = next_data(fb, off, size),
              skip = da < db ? da : db;
        size_t n;

        if (skip > off) { /* a hole in both: zeros on both sides */
            off = skip;
            continue;
        }
        n = size - off < (off_t)BUF_BYTES ? (size_t)(size - off) : BUF_BYTES;
        if (read_full(fa, ba, n, off) || read_full(fb, bb, n, off)) {
            rc = fail("%s: read failed at byte %lld", rel, (long long)off);
            goto out;
        }
        if (memcmp(ba, bb, n)) {
            size_t i = 0;

            while (ba[i] == bb[i])
                i++;
            rc = fail("%s: contents differ at byte %lld (0x%02x vs 0x%02x)", rel,
                      (long long)(off + (off_t)i), ba[i], bb[i]);
            goto out;
        }
        off += (off_t)n;
    }
out:
    if (fa >= 0)
        close(fa);
    if (fb >= 0)
        close(fb);
    free(ba);
    free(bb);
    return rc;
}

static int no_dots(const struct dirent *de)
{
    return strcmp(de->d_name, ".") && strcmp(de->d_name, "..");
}

static int compare(const char *a, const char *b, const char *rel, int root)
{
    struct stat sa, sb;
    const char *shown = *rel ? rel : ".";

    if (lstat(a, &sa))
        return fail("%s: missing on the left (%s): %s", shown, a, strerror(errno));
    if (lstat(b, &sb))
        return fail("%s: missing on the right (%s): %s", shown, b, strerror(errno));
    if ((sa.st_mode & S_IFMT) != (sb.st_mode & S_IFMT))
        return fail("%s: file types differ (0%o vs 0%o)", shown, sa.st_mode & S_IFMT,
                    sb.st_mode & S_IFMT);
    if (!root && (sa.st_mode & 07777) != (sb.st_mode & 07777))
        return fail("%s: modes differ (%04o vs %04o)", shown, sa.st_mode & 07777,
                    sb.st_mode & 07777);
    if (S_ISREG(sa.st_mode)) {
        if (sa.st_size != sb.st_size)
            return fail("%s: sizes differ (%lld vs %lld)", shown, (long long)sa.st_size,
                        (long long)sb.st_size);
        return files_equal(a, b, sa.st_size, shown);
    }
    if (S_ISDIR(sa.st_mode)) {
        struct dirent **la = NULL, **lb = NULL;
        int na = scandir(a, &la, no_dots, alphasort), nb = scandir(b, &lb, no_dots, alphasort);
        int i = 0, j = 0, rc = 0;

        if (na < 0 || nb < 0)
            rc = fail("%s: cannot list: %s", shown, strerror(errno));
        while (!rc && (i < na || j < nb)) {
            int c = i == na ? 1 : j == nb ? -1 : strcmp(la[i]->d_name, lb[j]->d_name);

            if (c < 0) {
                rc = fail("%s%s%s: only on the left (%s)", rel, *rel ? "/" : "", la[i]->d_name, a);
            } else if (c > 0) {
                rc = fail("%s%s%s: only on the right (%s)", rel, *rel ? "/" : "", lb[j]->d_name, b);
            } else {
                char pa[PATH_MAX], pb[PATH_MAX], pr[PATH_MAX];

                th_path(pa, sizeof(pa), "%s/%s", a, la[i]->d_name);
                th_path(pb, sizeof(pb), "%s/%s", b, lb[j]->d_name);
                th_path(pr, sizeof(pr), "%s%s%s", rel, *rel ? "/" : "", la[i]->d_name);
                rc = compare(pa, pb, pr, 0);
                i++;
                j++;
            }
        }
        for (i = 0; i < na; i++)
            free(la[i]);
        for (j = 0; j < nb; j++)
            free(lb[j]);
        free(la);
        free(lb);
        return rc;
    }
    if (S_ISLNK(sa.st_mode)) {
        char ta[PATH_MAX] = "", tb[PATH_MAX] = "";
        ssize_t x = readlink(a, ta, sizeof(ta) - 1), y = readlink(b, tb, sizeof(tb) - 1);

        if (x < 0 || y < 0 || x != y || memcmp(ta, tb, (size_t)x))
            return fail("%s: symbolic links differ", shown);
        return 0;
    }
    return fail("%s: special file, not compared", shown);
}

int th_tree_equal(const char *a, const char *b)
{
    return compare(a, b, "", 1);
}

/* ---- JSON picking ---- */

/* Index just past the string that starts (with its quote) at s[i]. */
static size_t skip_string(const char *s, size_t i)
{
    for (i++; s[i] && s[i] != '"'; i++)
        if (s[i] == '\\' && s[i + 1])
            i++;
    return s[i] ? i + 1 : i;
}

static size_t skip_space(const char *s, size_t i)
{
    while (s[i] == ' ' || s[i] == '\n' || s[i] == '\t' || s[i] == '\r')
        i++;
    return i;
}

/* Does the string starting at s[i] (quote) hold exactly `want` (escaped form)? */
static int string_is(const char *s, size_t i, const char *want)
{
    size_t end = skip_string(s, i), n = strlen(want);

    return end >= i + 2 && end - i - 2 == n && memcmp(s + i + 1, want, n) == 0;
}

#define MAX_DEPTH 64

char *th_json_object_with(const char *json, const char *key, const char *value)
{
    size_t starts[MAX_DEPTH], i = 0, best_start = 0, best_end = 0;
    int marked[MAX_DEPTH], sp = 0, best_depth = MAX_DEPTH + 1;

    while (json[i]) {
        char c = json[i];

        if (c == '"') {
            size_t end = skip_string(json, i), v = skip_space(json, end);

            if (json[v] == ':' && sp > 0 && string_is(json, i, key)) {
                v = skip_space(json, v + 1);
                if (json[v] == '"' && string_is(json, v, value))
                    marked[sp - 1] = 1;
            }
            i = end;
            continue;
        }
        if (c == '{') {
            if (sp == MAX_DEPTH)
                return NULL;
            starts[sp] = i;
            marked[sp++] = 0;
        } else if (c == '}' && sp > 0) {
            sp--;
            if (marked[sp] && sp < best_depth) {
                best_depth = sp;
                best_start = starts[sp];
                best_end = i;
            }
        }
        i++;
    }
    return best_depth <= MAX_DEPTH ? strndup(json + best_start, best_end - best_start + 1) : NULL;
}

/* End of the value that starts at s[i]. */
static size_t skip_value(const char *s, size_t i)
{
    int depth = 0;

    if (s[i] == '"')
        return skip_string(s, i);
    while (s[i]) {
        if (s[i] == '"') {
            i = skip_string(s, i);
            continue;
        }
        if (s[i] == '{' || s[i] == '[')
            depth++;
        else if (s[i] == '}' || s[i] == ']') {
            if (depth == 0)
                return i;
            if (--depth == 0)
                return i + 1;
        } else if (depth == 0 && (s[i] == ',' || s[i] == ' ' || s[i] == '\n'))
            return i;
        i++;
    }
    return i;
}

int th_json_member(const char *obj, const char *key, char *out, size_t out_len)
{
    size_t i = skip_space(obj, 0);

    if (obj[i] != '{')
        return fail("not a JSON object: %.80s", obj);
    i = skip_space(obj, i + 1);
    while (obj[i] == '"') {
        size_t kstart = i, vstart, vend;

        i = skip_space(obj, skip_string(obj, i));
        if (obj[i] != ':')
            return fail("malformed JSON object near %.40s", obj + kstart);
        vstart = skip_space(obj, i + 1);
        vend = skip_value(obj, vstart);
        if (string_is(obj, kstart, key)) {
            size_t from = vstart, to = vend;

            if (obj[vstart] == '"') {
                from++;
                to--;
            }
            if (to - from >= out_len)
                return fail("member %s too long", key);
            memcpy(out, obj + from, to - from);
            out[to - from] = '\0';
            return 0;
        }
        i = skip_space(obj, vend);
        if (obj[i] == ',')
            i = skip_space(obj, i + 1);
    }
    return fail("no member \"%s\" in %.200s", key, obj);
}

int th_json_u64(const char *obj, const char *key, uint64_t *out)
{
    char buf[64], *end;

    if (th_json_member(obj, key, buf, sizeof(buf)))
        return -1;
    if (buf[0] < '0' || buf[0] > '9')
        return fail("member %s is not an unsigned integer: %s", key, buf);
    *out = strtoull(buf, &end, 10);
    if (*end)
        return fail("member %s is not an unsigned integer: %s", key, buf);
    return 0;
}

int th_json_array_len(const char *json)
{
    size_t i = skip_space(json, 0);
    int n = 0;

    if (json[i] != '[')
        return fail("not a JSON array: %.80s", json);
    i = skip_space(json, i + 1);
    if (json[i] == ']')
        return 0;
    for (;;) {
        i = skip_space(json, skip_value(json, i));
        n++;
        if (json[i] == ',') {
            i = skip_space(json, i + 1);
            continue;
        }
        return json[i] == ']' ? n : fail("malformed JSON array");
    }
}

/* ---- fixture ---- */

char th_root[PATH_MAX];
pid_t th_bg_pid;
char th_mounted[PATH_MAX];

void th_setup(void)
{
    th_bg_pid = 0;
    th_mounted[0] = '\0';
    if (th_tmpdir(th_root, "t"))
        cr_assert_fail("%s", th_error());
}

void th_teardown(void)
{
    if (th_bg_pid > 0) {
        th_kill_reap(th_bg_pid);
        th_bg_pid = 0;
    }
    if (th_mounted[0]) {
        umount2(th_mounted, MNT_DETACH);
        th_mounted[0] = '\0';
    }
    if (th_root[0] && th_rm_rf(th_root))
        fprintf(stderr, "teardown: %s\n", th_error());
    th_root[0] = '\0';
}
