/* common - what every s3ckpt subcommand shares: client options, exit codes, output helpers. */
#ifndef CLI_COMMON_H
#define CLI_COMMON_H

#include <getopt.h>
#include <stdint.h>
#include <stdio.h>

#include "s3ckpt.h"

/* Exit codes (documented in README.md and `s3ckpt --help`). */
enum {
    EXIT_OK = 0,
    EXIT_ERROR = 1,        /* anything not listed below */
    EXIT_USAGE = 2,        /* bad command line or store URL */
    EXIT_NOTFOUND = 3,     /* store, checkpoint or latest missing */
    EXIT_INTEGRITY = 4,    /* corrupt or hostile manifest, digest mismatch, missing data */
    EXIT_IO = 5,           /* local I/O: disk full, permissions */
    EXIT_AUTH = 6,         /* credentials refused (S3) */
    EXIT_NETWORK = 7,      /* endpoint unreachable (S3) */
    EXIT_EXISTS = 8,       /* name exists, destination not empty, latest protected */
    EXIT_STORE = 9,        /* store-side failure (S3) */
    EXIT_UNSUPPORTED = 10, /* symlink or special file in the source */
    EXIT_CANCELED = 130
};

typedef struct cli_opts {
    s3ckpt_client_opts client;
    int verbose;
    int json;
    int progress; /* -1 auto (TTY), 0 off, 1 on */
} cli_opts;

/* Long options every command takes; handled by cli_common_option. */
#define CLI_COMMON_LONGOPTS                                                                        \
    {"workers", required_argument, NULL, 1001}, {"chunk-size", required_argument, NULL, 1002},     \
        {"level", required_argument, NULL, 1003}, {"max-memory", required_argument, NULL, 1004},   \
        {"verbose", no_argument, NULL, 'v'}, {"endpoint", required_argument, NULL, 1010},          \
        {"region", required_argument, NULL, 1011}, {"profile", required_argument, NULL, 1012},     \
        {"addressing", required_argument, NULL, 1013},                                             \
        {"ca-bundle", required_argument, NULL, 1014},                                              \
        {"concurrency", required_argument, NULL, 1015},                                            \
        {"wire-checksum", required_argument, NULL, 1016},                                          \
        {"timeout", required_argument, NULL, 1017}, {"part-size", required_argument, NULL, 1018},  \
    {                                                                                              \
        "help", no_argument, NULL, 'h'                                                             \
    }

/* --json, and for push/pull --progress / --no-progress; handled by cli_common_option. */
#define CLI_JSON_LONGOPT                                                                           \
    {                                                                                              \
        "json", no_argument, NULL, 1005                                                            \
    }
#define CLI_PROGRESS_LONGOPTS                                                                      \
    {"progress", no_argument, NULL, 1006},                                                         \
    {                                                                                              \
        "no-progress", no_argument, NULL, 1007                                                     \
    }

#define CLI_COMMON_HELP                                                                            \
    "Common options:\n"                                                                            \
    "  --workers N        CPU worker threads (default: one per core)\n"                            \
    "  --chunk-size SIZE  chunk size for push, e.g. 4M (default 4 MiB; 64K..256M)\n"               \
    "  --level N          zstd level for push (default 1: best speed and ratio on floats)\n"       \
    "  --max-memory SIZE  bound on chunk (and S3 part) buffers, e.g. 256M (default 256 MiB)\n"     \
    "  -v, --verbose      say what is being done (-vv: also every retry)\n"                        \
    "  -h, --help         this help\n"                                                             \
    "S3 options (STORE s3://bucket/prefix; defaults follow aws-cli: AWS_* variables, ~/.aws "      \
    "files):\n"                                                                                    \
    "  --endpoint URL     S3 endpoint, e.g. http://127.0.0.1:9000 (AWS_ENDPOINT_URL_S3,\n"         \
    "                     AWS_ENDPOINT_URL; default: AWS)\n"                                       \
    "  --region NAME      signing region (AWS_REGION, AWS_DEFAULT_REGION; default us-east-1)\n"    \
    "  --profile NAME     profile of the shared config/credentials files (AWS_PROFILE)\n"          \
    "  --addressing auto|path|virtual  bucket in the path or the host name (auto: virtual on\n"    \
    "                     AWS, path on custom endpoints)\n"                                        \
    "  --ca-bundle FILE   CA certificates for TLS (AWS_CA_BUNDLE); verification is always on\n"    \
    "  --concurrency N    S3 requests in flight (default 8)\n"                                     \
    "  --wire-checksum auto|crc32c|sha256|md5|off  checksum the store verifies on every\n"         \
    "                     upload (auto: crc32c where the endpoint checks it, else the signed\n"    \
    "                     payload SHA-256 where checked and cheaper here than MD5, else\n"         \
    "                     Content-MD5)\n"                                                          \
    "  --part-size SIZE   smallest multipart part (default 8M; 5M..4G)\n"                          \
    "  --timeout SECS     cut (and retry) a request that moves no byte for SECS (default 60)\n"

void cli_opts_init(cli_opts *o);
/* 1: handled; 0: not a common option; -1: bad value (message printed). */
int cli_common_option(cli_opts *o, int opt, const char *arg);
/* Creates the client; installs the SIGINT/SIGTERM handler that cancels it. */
int cli_client_new(s3ckpt_client **out, cli_opts *o);
void cli_client_free(s3ckpt_client *c);

int cli_exit_code(s3ckpt_status st);
/* Prints "s3ckpt <cmd>: <message>" and returns the exit code for st. */
int cli_fail(s3ckpt_client *c, s3ckpt_status st);
int cli_usage(const char *cmd, const char *msg);

int cli_parse_size(const char *s, uint64_t *out);
int cli_parse_u64(const char *s, uint64_t *out);
void cli_human(char *out, size_t len, double bytes);
void cli_json_string(FILE *f, const char *s);
/* Prints s with control characters shown as '?': names and metadata come from a store and
 * must not drive the terminal. */
void cli_print_text(FILE *f, const char *s);

/* Progress line on stderr (bytes, rate, ETA), for s3ckpt_progress_fn. */
typedef struct cli_progress {
    int enabled;
    double start, last;
    const char *verb;
} cli_progress;
void cli_progress_init(cli_progress *p, const cli_opts *o, const char *verb);
void cli_progress_cb(void *ud, uint64_t done, uint64_t total);
void cli_progress_end(cli_progress *p);
double cli_now(void);
/* The --json result line of push and pull. */
void cli_print_stats_json(const char *name, const s3ckpt_stats *st);

#endif
