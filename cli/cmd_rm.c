/* rm - s3ckpt rm STORE --name NAME */
#define _GNU_SOURCE
#include "commands.h"
#include "common.h"

static const char help[] =
    "Usage: s3ckpt rm STORE --name NAME [--force]\n"
    "\n"
    "Delete a checkpoint: its manifest first (it disappears at once), then its data.\n"
    "Also cleans up what an unfinished push of that name left behind.\n"
    "The checkpoint `latest` names is refused unless --force, which removes `latest` too.\n"
    "\n"
    "Options:\n"
    "  --name NAME        checkpoint to delete (required)\n"
    "  --force            delete even what `latest` names\n" CLI_COMMON_HELP;

int cmd_rm(int argc, char **argv)
{
    static const struct option longopts[] = {{"name", required_argument, NULL, 'n'},
                                             {"force", no_argument, NULL, 'f'},
                                             CLI_COMMON_LONGOPTS,
                                             {NULL, 0, NULL, 0}};
    s3ckpt_client *c = NULL;
    const char *name = NULL;
    s3ckpt_status st;
    cli_opts o;
    int opt, rc, force = 0;

    cli_opts_init(&o);
    while ((opt = getopt_long(argc, argv, "vh", longopts, NULL)) != -1) {
        if (opt == 'n') {
            name = optarg;
        } else if (opt == 'f') {
            force = 1;
        } else if (opt == 'h') {
            fputs(help, stdout);
            return EXIT_OK;
        } else if ((rc = cli_common_option(&o, opt, optarg)) <= 0) {
            return rc < 0 ? EXIT_USAGE : cli_usage("rm", "unknown option");
        }
    }
    if (argc - optind != 1 || !name)
        return cli_usage("rm", "expects STORE and --name NAME");
    if ((rc = cli_client_new(&c, &o)))
        return rc;
    st = s3ckpt_rm(c, argv[optind], name, force);
    rc = st ? cli_fail(c, st) : EXIT_OK;
    if (!st)
        printf("removed %s\n", name);
    cli_client_free(c);
    return rc;
}
