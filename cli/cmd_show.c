/* show - s3ckpt show STORE [--name NAME] */
#define _GNU_SOURCE
#include "commands.h"
#include "common.h"

static const char help[] =
    "Usage: s3ckpt show STORE [--name NAME] [--json]\n"
    "\n"
    "Describe a checkpoint (default: latest) from its manifest: step, creation time,\n"
    "metadata, totals and compression ratio, and every file with its size, stored size,\n"
    "chunk count and digest.\n"
    "\n"
    "Options:\n"
    "  --name NAME        checkpoint to show (default: latest)\n"
    "  --json             print JSON\n" CLI_COMMON_HELP;

static double ratio(uint64_t raw, uint64_t stored)
{
    return stored ? (double)raw / (double)stored : 1.0;
}

static void print_json(const s3ckpt_checkpoint *ck)
{
    const s3ckpt_summary *s = s3ckpt_checkpoint_summary(ck);
    size_t i, n = s3ckpt_checkpoint_entry_count(ck);

    printf("{\"name\":");
    cli_json_string(stdout, s->name);
    if (s->step >= 0)
        printf(",\"step\":%lld", (long long)s->step);
    else
        printf(",\"step\":null");
    printf(",\"created\":");
    cli_json_string(stdout, s->created);
    printf(",\"latest\":%s,\"files\":%llu,\"bytes\":%llu,\"stored_bytes\":%llu,\"meta\":{",
           s->is_latest ? "true" : "false", (unsigned long long)s->files,
           (unsigned long long)s->bytes, (unsigned long long)s->stored_bytes);
    for (i = 0; i < s->meta_count; i++) {
        printf("%s", i ? "," : "");
        cli_json_string(stdout, s->meta[i].key);
        printf(":");
        cli_json_string(stdout, s->meta[i].value);
    }
    printf("},\"entries\":[");
    for (i = 0; i < n; i++) {
        s3ckpt_file_info f;

        s3ckpt_checkpoint_entry(ck, i, &f);
        printf("%s{\"path\":", i ? "," : "");
        cli_json_string(stdout, f.path);
        printf(",\"type\":\"%s\",\"mode\":\"%04o\"", f.is_dir ? "dir" : "file", (unsigned)f.mode);
        if (!f.is_dir)
            printf(",\"size\":%llu,\"stored_bytes\":%llu,\"chunks\":%llu,\"codec\":\"%s\","
                   "\"filter\":\"%s\",\"digest\":\"%s\"",
                   (unsigned long long)f.size, (unsigned long long)f.stored_bytes,
                   (unsigned long long)f.chunks, f.codec, f.filter, f.digest);
        printf("}");
    }
    printf("]}\n");
}

static void print_text(const s3ckpt_checkpoint *ck)
{
    const s3ckpt_summary *s = s3ckpt_checkpoint_summary(ck);
    size_t i, n = s3ckpt_checkpoint_entry_count(ck);
    char b[32], sb[32];

    cli_human(b, sizeof(b), (double)s->bytes);
    cli_human(sb, sizeof(sb), (double)s->stored_bytes);
    printf("name:     %s%s\n", s->name, s->is_latest ? "  (latest)" : "");
    if (s->step >= 0)
        printf("step:     %lld\n", (long long)s->step);
    printf("created:  %s\n", s->created);
    printf("files:    %llu\n", (unsigned long long)s->files);
    printf("size:     %s (%llu bytes)\n", b, (unsigned long long)s->bytes);
    printf("stored:   %s (%llu bytes), ratio %.3f\n", sb, (unsigned long long)s->stored_bytes,
           ratio(s->bytes, s->stored_bytes));
    for (i = 0; i < s->meta_count; i++) {
        printf("meta:     ");
        cli_print_text(stdout, s->meta[i].key);
        putchar('=');
        cli_print_text(stdout, s->meta[i].value);
        putchar('\n');
    }
    printf("\n%-5s %12s %12s %6s %7s  %s\n", "MODE", "SIZE", "STORED", "RATIO", "CHUNKS", "PATH");
    for (i = 0; i < n; i++) {
        s3ckpt_file_info f;

        s3ckpt_checkpoint_entry(ck, i, &f);
        if (f.is_dir) {
            printf("%04o  %12s %12s %6s %7s  ", (unsigned)f.mode, "-", "-", "-", "-");
            cli_print_text(stdout, f.path);
            printf("/\n");
            continue;
        }
        cli_human(b, sizeof(b), (double)f.size);
        cli_human(sb, sizeof(sb), (double)f.stored_bytes);
        printf("%04o  %12s %12s %6.3f %7llu  ", (unsigned)f.mode, b, sb,
               ratio(f.size, f.stored_bytes), (unsigned long long)f.chunks);
        cli_print_text(stdout, f.path);
        putchar('\n');
    }
}

int cmd_show(int argc, char **argv)
{
    static const struct option longopts[] = {{"name", required_argument, NULL, 'n'},
                                             CLI_JSON_LONGOPT,
                                             CLI_COMMON_LONGOPTS,
                                             {NULL, 0, NULL, 0}};
    s3ckpt_checkpoint *ck = NULL;
    s3ckpt_client *c = NULL;
    const char *name = NULL;
    s3ckpt_status st;
    cli_opts o;
    int opt, rc;

    cli_opts_init(&o);
    while ((opt = getopt_long(argc, argv, "vh", longopts, NULL)) != -1) {
        if (opt == 'n') {
            name = optarg;
        } else if (opt == 'h') {
            fputs(help, stdout);
            return EXIT_OK;
        } else if ((rc = cli_common_option(&o, opt, optarg)) <= 0) {
            return rc < 0 ? EXIT_USAGE : cli_usage("show", "unknown option");
        }
    }
    if (argc - optind != 1)
        return cli_usage("show", "expects STORE");
    if ((rc = cli_client_new(&c, &o)))
        return rc;
    st = s3ckpt_show(c, argv[optind], name, &ck);
    if (st) {
        rc = cli_fail(c, st);
        cli_client_free(c);
        return rc;
    }
    if (o.json)
        print_json(ck);
    else
        print_text(ck);
    s3ckpt_checkpoint_free(ck);
    cli_client_free(c);
    return EXIT_OK;
}
