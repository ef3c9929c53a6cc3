/* pull - s3ckpt pull STORE DEST */
#define _GNU_SOURCE
#include "commands.h"
#include "common.h"

static const char help[] =
    "Usage: s3ckpt pull STORE DEST [options]\n"
    "\n"
    "Restore a checkpoint (default: the one `latest` names) into the directory DEST.\n"
    "Every chunk is verified against the manifest before it is written. Files are built in\n"
    "a hidden partial directory next to DEST and moved into place only when all are complete,\n"
    "so DEST never holds a half-written file. Re-running an interrupted pull resumes it and\n"
    "fetches only chunks not yet verified on disk.\n"
    "\n"
    "Options:\n"
    "  --name NAME        checkpoint to restore (default: latest)\n"
    "  --force            restore into a non-empty DEST, replacing files of the same name\n"
    "                     (files are moved in one by one once all are complete)\n"
    "  --progress         show progress even when stderr is not a terminal\n"
    "  --no-progress      never show progress\n"
    "  --json             print the result as JSON\n" CLI_COMMON_HELP;

int cmd_pull(int argc, char **argv)
{
    static const struct option longopts[] = {{"name", required_argument, NULL, 'n'},
                                             {"force", no_argument, NULL, 'f'},
                                             CLI_PROGRESS_LONGOPTS,
                                             CLI_JSON_LONGOPT,
                                             CLI_COMMON_LONGOPTS,
                                             {NULL, 0, NULL, 0}};
    s3ckpt_pull_opts po = {.version = S3CKPT_PULL_OPTS_VERSION};
    s3ckpt_client *c = NULL;
    s3ckpt_stats stats;
    s3ckpt_status st;
    cli_progress prog;
    char name[256] = "", raw[32], moved[32], reused[32], rate[32];
    cli_opts o;
    int opt, rc;

    cli_opts_init(&o);
    while ((opt = getopt_long(argc, argv, "vh", longopts, NULL)) != -1) {
        switch (opt) {
        case 'n':
            po.name = optarg;
            break;
        case 'f':
            po.force = 1;
            break;
        case 'h':
            fputs(help, stdout);
            return EXIT_OK;
        default:
            rc = cli_common_option(&o, opt, optarg);
            if (rc <= 0)
                return rc < 0 ? EXIT_USAGE : cli_usage("pull", "unknown option");
        }
    }
    if (argc - optind != 2)
        return cli_usage("pull", "expects STORE and DEST");
    if ((rc = cli_client_new(&c, &o)))
        return rc;
    po.name_out = name;
    po.name_out_size = sizeof(name);
    po.stats = &stats;
    cli_progress_init(&prog, &o, "pull");
    po.on_progress = cli_progress_cb;
    po.userdata = &prog;
    st = s3ckpt_pull(c, argv[optind], argv[optind + 1], &po);
    cli_progress_end(&prog);
    if (st) {
        rc = cli_fail(c, st);
        cli_client_free(c);
        return rc;
    }
    if (o.json) {
        cli_print_stats_json(name, &stats);
    } else {
        cli_human(raw, sizeof(raw), (double)stats.raw_bytes);
        cli_human(moved, sizeof(moved), (double)stats.transferred_bytes);
        cli_human(reused, sizeof(reused), (double)stats.reused_bytes);
        cli_human(rate, sizeof(rate),
                  stats.seconds > 0 ? (double)stats.raw_bytes / stats.seconds : 0);
        printf("pulled %s into %s: %llu files, %s (%s read, %s already in place), %.2f s, "
               "%s/s\n",
               name, argv[optind + 1], (unsigned long long)stats.files, raw, moved, reused,
               stats.seconds, rate);
    }
    cli_client_free(c);
    return EXIT_OK;
}
