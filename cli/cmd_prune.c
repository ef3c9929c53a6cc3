/* prune - s3ckpt prune STORE --keep-last N [--keep-every-steps K] */
#define _GNU_SOURCE
#include "commands.h"
#include "common.h"

static const char help[] =
    "Usage: s3ckpt prune STORE --keep-last N [--keep-every-steps K] [--dry-run]\n"
    "\n"
    "Delete old checkpoints. Kept: the newest N (by step when every checkpoint has one,\n"
    "else by creation time, as `ls` orders them), every\n"
    "checkpoint whose step is a multiple of K, and always the one `latest` names.\n"
    "\n"
    "Options:\n"
    "  --keep-last N          keep the newest N checkpoints (required)\n"
    "  --keep-every-steps K   also keep checkpoints whose step is a multiple of K\n"
    "  --dry-run              only say what would be deleted\n" CLI_COMMON_HELP;

static void on_item(void *ud, const char *name, int deleted)
{
    const int *dry = ud;

    printf("%s %s\n", deleted ? (*dry ? "would delete" : "deleted") : "kept", name);
}

int cmd_prune(int argc, char **argv)
{
    static const struct option longopts[] = {{"keep-last", required_argument, NULL, 'k'},
                                             {"keep-every-steps", required_argument, NULL, 'K'},
                                             {"dry-run", no_argument, NULL, 'd'},
                                             CLI_COMMON_LONGOPTS,
                                             {NULL, 0, NULL, 0}};
    s3ckpt_prune_opts po = {.version = S3CKPT_PRUNE_OPTS_VERSION};
    s3ckpt_client *c = NULL;
    s3ckpt_status st;
    cli_opts o;
    int opt, rc, have_keep = 0;

    cli_opts_init(&o);
    while ((opt = getopt_long(argc, argv, "vh", longopts, NULL)) != -1) {
        if (opt == 'k') {
            if (cli_parse_u64(optarg, &po.keep_last))
                return cli_usage("prune", "--keep-last takes a non-negative integer");
            have_keep = 1;
        } else if (opt == 'K') {
            if (cli_parse_u64(optarg, &po.keep_every_steps) || po.keep_every_steps == 0)
                return cli_usage("prune", "--keep-every-steps takes a positive integer");
        } else if (opt == 'd') {
            po.dry_run = 1;
        } else if (opt == 'h') {
            fputs(help, stdout);
            return EXIT_OK;
        } else if ((rc = cli_common_option(&o, opt, optarg)) <= 0) {
            return rc < 0 ? EXIT_USAGE : cli_usage("prune", "unknown option");
        }
    }
    if (argc - optind != 1 || !have_keep)
        return cli_usage("prune", "expects STORE and --keep-last N");
    if ((rc = cli_client_new(&c, &o)))
        return rc;
    po.on_item = on_item;
    po.userdata = &po.dry_run;
    st = s3ckpt_prune(c, argv[optind], &po);
    rc = st ? cli_fail(c, st) : EXIT_OK;
    cli_client_free(c);
    return rc;
}
