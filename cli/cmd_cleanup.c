/* cleanup - s3ckpt cleanup STORE [--older-than DURATION] [--dry-run] */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "common.h"

static const char help[] =
    "Usage: s3ckpt cleanup STORE [--older-than DURATION] [--dry-run]\n"
    "\n"
    "Abort incomplete multipart uploads left under STORE by interrupted pushes. S3 keeps\n"
    "(and bills) their parts until they are aborted. A re-run of an interrupted push resumes\n"
    "its uploads instead, so only clean up what no push will resume. On a file store, removes\n"
    "the temporary files of dead processes.\n"
    "\n"
    "Options:\n"
    "  --older-than DURATION  only uploads started at least this long ago, e.g. 3600, 90m,\n"
    "                         36h, 7d (default 24h; 0: all)\n"
    "  --dry-run              list them, abort nothing\n" CLI_COMMON_HELP;

static int parse_duration(const char *s, uint64_t *out)
{
    char *end;
    unsigned long long v;
    uint64_t mul = 1;

    if (!*s || *s == '-')
        return -1;
    v = strtoull(s, &end, 10);
    if (end == s)
        return -1;
    if (*end == 's' || *end == 'm' || *end == 'h' || *end == 'd') {
        mul = *end == 's' ? 1 : *end == 'm' ? 60 : *end == 'h' ? 3600 : 86400;
        end++;
    }
    if (*end || v > UINT64_MAX / mul)
        return -1;
    *out = v * mul;
    return 0;
}

static void on_item(void *ud, const char *key, const char *initiated, int aborted)
{
    const cli_opts *o = ud;

    if (o->json) {
        printf("{\"key\":");
        cli_json_string(stdout, key);
        printf(",\"initiated\":");
        cli_json_string(stdout, initiated);
        printf(",\"aborted\":%s}\n", aborted ? "true" : "false");
        return;
    }
    printf("%s  ", aborted ? "aborted" : "kept   ");
    cli_print_text(stdout, initiated);
    printf("  ");
    cli_print_text(stdout, key);
    printf("\n");
}

int cmd_cleanup(int argc, char **argv)
{
    static const struct option longopts[] = {{"older-than", required_argument, NULL, 'o'},
                                             {"dry-run", no_argument, NULL, 'n'},
                                             CLI_JSON_LONGOPT,
                                             CLI_COMMON_LONGOPTS,
                                             {NULL, 0, NULL, 0}};
    s3ckpt_client *c = NULL;
    uint64_t older = 86400;
    s3ckpt_status st;
    cli_opts o;
    int opt, rc, dry = 0;

    cli_opts_init(&o);
    while ((opt = getopt_long(argc, argv, "vh", longopts, NULL)) != -1) {
        if (opt == 'o') {
            if (parse_duration(optarg, &older))
                return cli_usage("cleanup",
                                 "--older-than takes a duration like 3600, 90m, 36h, 7d");
        } else if (opt == 'n') {
            dry = 1;
        } else if (opt == 'h') {
            fputs(help, stdout);
            return EXIT_OK;
        } else if ((rc = cli_common_option(&o, opt, optarg)) <= 0) {
            return rc < 0 ? EXIT_USAGE : cli_usage("cleanup", "unknown option");
        }
    }
    if (argc - optind != 1)
        return cli_usage("cleanup", "expects STORE");
    if ((rc = cli_client_new(&c, &o)))
        return rc;
    st = s3ckpt_cleanup(c, argv[optind], older, dry, on_item, &o);
    rc = st ? cli_fail(c, st) : EXIT_OK;
    cli_client_free(c);
    return rc;
}
