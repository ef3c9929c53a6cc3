/*
 * common - option parsing, exit codes, progress and JSON helpers shared by the subcommands.
 * The CLI sees only <s3ckpt.h>.
 */
#define _GNU_SOURCE
#include "common.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static s3ckpt_client *volatile signal_client;

static void on_signal(int sig)
{
    (void)sig;
    if (signal_client)
        s3ckpt_client_cancel(signal_client);
}

static void log_line(void *ud, int level, const char *line)
{
    const cli_opts *o = ud;

    if (level == 0)
        fprintf(stderr, "s3ckpt: warning: %s\n", line);
    else if (o->verbose >= level)
        fprintf(stderr, "s3ckpt: %s\n", line);
}

void cli_opts_init(cli_opts *o)
{
    memset(o, 0, sizeof(*o));
    o->client.version = S3CKPT_CLIENT_OPTS_VERSION;
    o->progress = -1;
}

/* Index of arg in names into *out: 1; else a message and -1. */
static int pick(const char *arg, const char *const *names, int n, const char *opt, int *out)
{
    int i;

    for (i = 0; i < n; i++) {
        if (strcmp(arg, names[i]) == 0) {
            *out = i;
            return 1;
        }
    }
    fprintf(stderr, "s3ckpt: %s takes", opt);
    for (i = 0; i < n; i++)
        fprintf(stderr, "%s%s", i ? "|" : " ", names[i]);
    fprintf(stderr, "\n");
    return -1;
}

int cli_common_option(cli_opts *o, int opt, const char *arg)
{
    uint64_t v;

    switch (opt) {
    case 1001:
        if (cli_parse_u64(arg, &v) || v == 0 || v > 256)
            return fprintf(stderr, "s3ckpt: --workers takes 1..256\n"), -1;
        o->client.workers = (unsigned)v;
        return 1;
    case 1002:
        if (cli_parse_size(arg, &v) || v < (64u << 10) || v > (256u << 20))
            return fprintf(stderr, "s3ckpt: --chunk-size takes 64K..256M\n"), -1;
        o->client.chunk_size_bytes = v;
        return 1;
    case 1003: {
        char *end;
        long l = strtol(arg, &end, 10);

        if (*end || end == arg || l < -7 || l > 19 || l == 0)
            return fprintf(stderr, "s3ckpt: --level takes -7..-1 or 1..19\n"), -1;
        o->client.compression_level = (int)l;
        return 1;
    }
    case 1004:
        if (cli_parse_size(arg, &v) || v < (1u << 20))
            return fprintf(stderr, "s3ckpt: --max-memory takes a size of at least 1M\n"), -1;
        o->client.max_memory_bytes = v;
        return 1;
    case 'v':
        o->verbose++;
        return 1;
    case 1010:
        o->client.endpoint = arg;
        return 1;
    case 1011:
        o->client.region = arg;
        return 1;
    case 1012:
        o->client.profile = arg;
        return 1;
    case 1013: {
        static const char *const names[] = {"auto", "path", "virtual"};

        return pick(arg, names, 3, "--addressing", &o->client.addressing);
    }
    case 1014:
        o->client.ca_bundle = arg;
        return 1;
    case 1015:
        if (cli_parse_u64(arg, &v) || v == 0 || v > 256)
            return fprintf(stderr, "s3ckpt: --concurrency takes 1..256\n"), -1;
        o->client.concurrency = (unsigned)v;
        return 1;
    case 1016: {
        static const char *const names[] = {"auto", "crc32c", "md5", "off", "sha256"};

        return pick(arg, names, 5, "--wire-checksum", &o->client.wire_checksum);
    }
    case 1017:
        if (cli_parse_u64(arg, &v) || v == 0 || v > 86400)
            return fprintf(stderr, "s3ckpt: --timeout takes 1..86400 seconds\n"), -1;
        o->client.timeout_s = (unsigned)v;
        return 1;
    case 1018:
        if (cli_parse_size(arg, &v) || v < (5u << 20) || v > ((uint64_t)4 << 30))
            return fprintf(stderr, "s3ckpt: --part-size takes 5M..4G\n"), -1;
        o->client.part_size_bytes = v;
        return 1;
    case 1005:
        o->json = 1;
        return 1;
    case 1006:
    case 1007:
        o->progress = opt == 1006;
        return 1;
    }
    return 0;
}

int cli_client_new(s3ckpt_client **out, cli_opts *o)
{
    struct sigaction sa;
    s3ckpt_status st;

    o->client.on_log = log_line;
    o->client.log_userdata = o;
    st = s3ckpt_client_new(out, &o->client);
    if (st) {
        fprintf(stderr, "s3ckpt: cannot create client: %s\n", s3ckpt_strerror(st));
        return cli_exit_code(st);
    }
    signal_client = *out;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    return EXIT_OK;
}

void cli_client_free(s3ckpt_client *c)
{
    signal_client = NULL;
    s3ckpt_client_free(c);
}

int cli_exit_code(s3ckpt_status st)
{
    switch (st) {
    case S3CKPT_OK:
        return EXIT_OK;
    case S3CKPT_EINVAL:
    case S3CKPT_ECONFIG:
        return EXIT_USAGE;
    case S3CKPT_ENOTFOUND:
        return EXIT_NOTFOUND;
    case S3CKPT_ECORRUPT:
        return EXIT_INTEGRITY;
    case S3CKPT_EIO:
        return EXIT_IO;
    case S3CKPT_EAUTH:
        return EXIT_AUTH;
    case S3CKPT_ENETWORK:
        return EXIT_NETWORK;
    case S3CKPT_EEXISTS:
        return EXIT_EXISTS;
    case S3CKPT_ETHROTTLED:
    case S3CKPT_ESERVER:
    case S3CKPT_EPROTOCOL:
        return EXIT_STORE;
    case S3CKPT_EUNSUPPORTED:
        return EXIT_UNSUPPORTED;
    case S3CKPT_ECANCELED:
        return EXIT_CANCELED;
    case S3CKPT_ENOMEM:
        break;
    }
    return EXIT_ERROR;
}

int cli_fail(s3ckpt_client *c, s3ckpt_status st)
{
    fprintf(stderr, "s3ckpt: %s\n", s3ckpt_errmsg(c));
    return cli_exit_code(st);
}

int cli_usage(const char *cmd, const char *msg)
{
    fprintf(stderr, "s3ckpt %s: %s\nTry 's3ckpt %s --help'.\n", cmd, msg, cmd);
    return EXIT_USAGE;
}

int cli_parse_u64(const char *s, uint64_t *out)
{
    char *end;
    unsigned long long v;

    if (!s || !*s || *s == '-')
        return -1;
    errno = 0;
    v = strtoull(s, &end, 10);
    if (errno || *end || end == s)
        return -1;
    *out = v;
    return 0;
}

int cli_parse_size(const char *s, uint64_t *out)
{
    char *end;
    unsigned long long v;
    uint64_t mult = 1;

    if (!s || !*s || *s == '-')
        return -1;
    errno = 0;
    v = strtoull(s, &end, 10);
    if (errno || end == s)
        return -1;
    switch (*end) {
    case '\0':
        break;
    case 'k':
    case 'K':
        mult = 1ull << 10;
        break;
    case 'm':
    case 'M':
        mult = 1ull << 20;
        break;
    case 'g':
    case 'G':
        mult = 1ull << 30;
        break;
    default:
        return -1;
    }
    if (*end && end[1] && strcmp(end + 1, "iB") && strcmp(end + 1, "B") && strcmp(end + 1, "b"))
        return -1;
    if (v > UINT64_MAX / mult)
        return -1;
    *out = v * mult;
    return 0;
}

void cli_human(char *out, size_t len, double b)
{
    const char *units[] = {"B", "KB", "MB", "GB", "TB", "PB"};
    int u = 0;

    while (b >= 1000 && u < 5) {
        b /= 1000;
        u++;
    }
    snprintf(out, len, u ? "%.1f %s" : "%.0f %s", b, units[u]);
}

void cli_json_string(FILE *f, const char *s)
{
    const unsigned char *p = (const unsigned char *)s;

    fputc('"', f);
    for (; *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(f, "\\%c", *p);
        else if (*p == '\n')
            fputs("\\n", f);
        else if (*p == '\t')
            fputs("\\t", f);
        else if (*p < 0x20 || *p == 0x7f)
            fprintf(f, "\\u%04x", *p);
        else
            fputc(*p, f);
    }
    fputc('"', f);
}

void cli_print_text(FILE *f, const char *s)
{
    const unsigned char *p = (const unsigned char *)s;

    for (; *p; p++)
        fputc(*p < 0x20 || *p == 0x7f ? '?' : *p, f);
}

double cli_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void cli_progress_init(cli_progress *p, const cli_opts *o, const char *verb)
{
    p->enabled = o->progress < 0 ? isatty(STDERR_FILENO) : o->progress;
    p->start = cli_now();
    p->last = 0;
    p->verb = verb;
}

void cli_progress_cb(void *ud, uint64_t done, uint64_t total)
{
    cli_progress *p = ud;
    double now = cli_now(), el = now - p->start, rate;
    char d[32], t[32], r[32], eta[32] = "--";

    if (!p->enabled || (now - p->last < 0.2 && done < total))
        return;
    p->last = now;
    rate = el > 0 ? (double)done / el : 0;
    cli_human(d, sizeof(d), (double)done);
    cli_human(t, sizeof(t), (double)total);
    cli_human(r, sizeof(r), rate);
    if (rate > 0 && done < total)
        snprintf(eta, sizeof(eta), "%.0fs", (double)(total - done) / rate);
    fprintf(stderr, "\r%s %s / %s  %3.0f%%  %s/s  ETA %s   ", p->verb, d, t,
            total ? 100.0 * (double)done / (double)total : 100.0, r, eta);
    fflush(stderr);
}

void cli_progress_end(cli_progress *p)
{
    if (p->enabled && p->last > 0)
        fputc('\n', stderr);
}

void cli_print_stats_json(const char *name, const s3ckpt_stats *st)
{
    printf("{\"name\":");
    cli_json_string(stdout, name);
    printf(",\"files\":%llu,\"raw_bytes\":%llu,\"stored_bytes\":%llu,"
           "\"transferred_bytes\":%llu,\"reused_bytes\":%llu,\"chunks\":%llu,"
           "\"seconds\":%.3f,\"requests\":%llu,\"retries\":%llu,\"parts_uploaded\":%llu,"
           "\"parts_reused\":%llu,\"chunks_full\":%llu,\"chunks_fast\":%llu,"
           "\"chunks_raw\":%llu}\n",
           (unsigned long long)st->files, (unsigned long long)st->raw_bytes,
           (unsigned long long)st->stored_bytes, (unsigned long long)st->transferred_bytes,
           (unsigned long long)st->reused_bytes, (unsigned long long)st->chunks, st->seconds,
           (unsigned long long)st->requests, (unsigned long long)st->retries,
           (unsigned long long)st->parts_uploaded, (unsigned long long)st->parts_reused,
           (unsigned long long)st->chunks_full, (unsigned long long)st->chunks_fast,
           (unsigned long long)st->chunks_raw);
}
