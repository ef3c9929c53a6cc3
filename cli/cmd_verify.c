/* verify - s3ckpt verify STORE [--name NAME] [--deep] */
#define _GNU_SOURCE
#include "commands.h"
#include "common.h"

static const char help[] =
    "Usage: s3ckpt verify STORE [--name NAME] [--deep]\n"
    "\n"
    "Check a checkpoint (default: latest) in the store. The manifest is always validated;\n"
    "then every data object must exist with the recorded size. With --deep every chunk is\n"
    "read, decompressed and checked against its digest; nothing is written locally.\n"
    "Exit code 4 when anything does not match.\n"
    "\n"
    "Options:\n"
    "  --name NAME        checkpoint to verify (default: latest)\n"
    "  --deep             read and check every byte\n" CLI_COMMON_HELP;

int cmd_verify(int argc, char **argv)
{
    static const struct option longopts[] = {{"name", required_argument, NULL, 'n'},
                                             {"deep", no_argument, NULL, 'd'},
                                             CLI_COMMON_LONGOPTS,
                                             {NULL, 0, NULL, 0}};
    s3ckpt_client *c = NULL;
    const char *name = NULL;
    s3ckpt_stats stats;
    s3ckpt_status st;
    char raw[32];
    cli_opts o;
    int opt, rc, deep = 0;

    cli_opts_init(&o);
    while ((opt = getopt_long(argc, argv, "vh", longopts, NULL)) != -1) {
        if (opt == 'n') {
            name = optarg;
        } else if (opt == 'd') {
            deep = 1;
        } else if (opt == 'h') {
            fputs(help, stdout);
            return EXIT_OK;
        } else if ((rc = cli_common_option(&o, opt, optarg)) <= 0) {
            return rc < 0 ? EXIT_USAGE : cli_usage("verify", "unknown option");
        }
    }
    if (argc - optind != 1)
        return cli_usage("verify", "expects STORE");
    if ((rc = cli_client_new(&c, &o)))
        return rc;
    st = s3ckpt_verify(c, argv[optind], name, deep, &stats);
    if (st) {
        rc = cli_fail(c, st);
        cli_client_free(c);
        return rc;
    }
    cli_human(raw, sizeof(raw), (double)stats.raw_bytes);
    printf("verified%s: %llu files, %s%s, %.2f s\n", deep ? " (deep)" : "",
           (unsigned long long)stats.files, raw,
           deep ? ", every chunk decompressed and digest-checked" : ", objects present",
           stats.seconds);
    cli_client_free(c);
    return EXIT_OK;
}
