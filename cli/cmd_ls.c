/* ls - s3ckpt ls STORE */
#define _GNU_SOURCE
#include "commands.h"
#include "common.h"

static const char help[] =
    "Usage: s3ckpt ls STORE [--json]\n"
    "\n"
    "List committed checkpoints, oldest first (by step when every checkpoint has one, else\n"
    "by creation time): name, step, creation time, files, bytes, stored bytes, compression\n"
    "ratio; '*' marks `latest`.\n"
    "Directories without a manifest (unfinished pushes) are not listed.\n"
    "\n"
    "Options:\n"
    "  --json             print a JSON array\n" CLI_COMMON_HELP;

static void print_json(const s3ckpt_summary *s, size_t n)
{
    size_t i, k;

    printf("[");
    for (i = 0; i < n; i++) {
        printf("%s{\"name\":", i ? "," : "");
        cli_json_string(stdout, s[i].name);
        if (s[i].step >= 0)
            printf(",\"step\":%lld", (long long)s[i].step);
        else
            printf(",\"step\":null");
        printf(",\"created\":");
        cli_json_string(stdout, s[i].created);
        printf(",\"files\":%llu,\"bytes\":%llu,\"stored_bytes\":%llu,\"latest\":%s,\"meta\":{",
               (unsigned long long)s[i].files, (unsigned long long)s[i].bytes,
               (unsigned long long)s[i].stored_bytes, s[i].is_latest ? "true" : "false");
        for (k = 0; k < s[i].meta_count; k++) {
            printf("%s", k ? "," : "");
            cli_json_string(stdout, s[i].meta[k].key);
            printf(":");
            cli_json_string(stdout, s[i].meta[k].value);
        }
        printf("}}");
    }
    printf("]\n");
}

int cmd_ls(int argc, char **argv)
{
    static const struct option longopts[] = {
        CLI_JSON_LONGOPT, CLI_COMMON_LONGOPTS, {NULL, 0, NULL, 0}};
    s3ckpt_summary *sums = NULL;
    s3ckpt_client *c = NULL;
    s3ckpt_status st;
    size_t n = 0, i;
    cli_opts o;
    int opt, rc;

    cli_opts_init(&o);
    while ((opt = getopt_long(argc, argv, "vh", longopts, NULL)) != -1) {
        if (opt == 'h') {
            fputs(help, stdout);
            return EXIT_OK;
        } else if ((rc = cli_common_option(&o, opt, optarg)) <= 0) {
            return rc < 0 ? EXIT_USAGE : cli_usage("ls", "unknown option");
        }
    }
    if (argc - optind != 1)
        return cli_usage("ls", "expects STORE");
    if ((rc = cli_client_new(&c, &o)))
        return rc;
    st = s3ckpt_list(c, argv[optind], &sums, &n);
    if (st) {
        rc = cli_fail(c, st);
        cli_client_free(c);
        return rc;
    }
    if (o.json) {
        print_json(sums, n);
    } else {
        printf("  %-28s %10s  %-24s %7s %10s %10s %6s\n", "NAME", "STEP", "CREATED", "FILES",
               "SIZE", "STORED", "RATIO");
        for (i = 0; i < n; i++) {
            char b[32], sb[32], step[24] = "-";

            cli_human(b, sizeof(b), (double)sums[i].bytes);
            cli_human(sb, sizeof(sb), (double)sums[i].stored_bytes);
            if (sums[i].step >= 0)
                snprintf(step, sizeof(step), "%lld", (long long)sums[i].step);
            printf("%c %-28s %10s  %-24s %7llu %10s %10s %6.3f\n", sums[i].is_latest ? '*' : ' ',
                   sums[i].name, step, sums[i].created, (unsigned long long)sums[i].files, b, sb,
                   sums[i].stored_bytes ? (double)sums[i].bytes / (double)sums[i].stored_bytes
                                        : 1.0);
        }
    }
    s3ckpt_summaries_free(sums, n);
    cli_client_free(c);
    return EXIT_OK;
}
