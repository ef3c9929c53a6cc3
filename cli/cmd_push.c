/* push - s3ckpt push DIR STORE */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "common.h"

static const char help[] =
    "Usage: s3ckpt push DIR STORE [options]\n"
    "\n"
    "Upload DIR (a checkpoint directory, or a single file) to STORE as one checkpoint.\n"
    "Files are cut into chunks, each compressed as its own zstd frame and digested; the\n"
    "manifest is written last, then `latest` is pointed at the new checkpoint (unless it\n"
    "names one with a higher step). Re-running an interrupted push completes it.\n"
    "Symbolic links and special files are refused (exit 10).\n"
    "\n"
    "Options:\n"
    "  --name NAME        checkpoint name (default: step-<8-digit step> with --step, else\n"
    "                     the directory's name); letters, digits, '.', '_', '-'\n"
    "  --step N           training step, stored in the manifest\n"
    "  --meta KEY=VALUE   metadata to store (repeatable), e.g. --meta epoch=3\n"
    "  --no-latest        do not update `latest`\n"
    "  --force            replace a committed checkpoint of the same name\n"
    "  --filter auto|none|bytes4|bytes2|float4|float2  group byte k of every 4- or 2-byte\n"
    "                     value together before compression (float32 / bf16 tensors compress\n"
    "                     10-17 % better); float4/float2 first move each value's sign bit to\n"
    "                     the bottom, so one byte holds the whole exponent (a little better\n"
    "                     on most floats); auto (default) picks per file from a sample\n"
    "  --no-adapt         always compress fully; by default chunks are compressed less, or\n"
    "                     stored raw, while the store takes bytes faster than compression\n"
    "                     makes them, so compression never makes a push slower\n"
    "  --progress         show progress even when stderr is not a terminal\n"
    "  --no-progress      never show progress\n"
    "  --json             print the result as JSON\n" CLI_COMMON_HELP;

int cmd_push(int argc, char **argv)
{
    static const struct option longopts[] = {{"name", required_argument, NULL, 'n'},
                                             {"step", required_argument, NULL, 's'},
                                             {"meta", required_argument, NULL, 'm'},
                                             {"no-latest", no_argument, NULL, 'L'},
                                             {"force", no_argument, NULL, 'f'},
                                             {"filter", required_argument, NULL, 'F'},
                                             {"no-adapt", no_argument, NULL, 'A'},
                                             CLI_PROGRESS_LONGOPTS,
                                             CLI_JSON_LONGOPT,
                                             CLI_COMMON_LONGOPTS,
                                             {NULL, 0, NULL, 0}};
    s3ckpt_push_opts po = {.version = S3CKPT_PUSH_OPTS_VERSION, .step = -1};
    s3ckpt_kv *meta = NULL;
    s3ckpt_client *c = NULL;
    s3ckpt_stats stats;
    s3ckpt_status st;
    cli_progress prog;
    char name[256] = "", raw[32], stored[32], rate[32];
    cli_opts o;
    int opt, rc;
    uint64_t step;

    cli_opts_init(&o);
    meta = calloc((size_t)argc, sizeof(*meta));
    if (!meta)
        return EXIT_ERROR;
    while ((opt = getopt_long(argc, argv, "vh", longopts, NULL)) != -1) {
        char *eq;

        switch (opt) {
        case 'n':
            po.name = optarg;
            break;
        case 's':
            if (cli_parse_u64(optarg, &step) || step > INT64_MAX) {
                free(meta);
                return cli_usage("push", "--step takes a non-negative integer");
            }
            po.step = (int64_t)step;
            break;
        case 'm':
            eq = strchr(optarg, '=');
            if (!eq || eq == optarg) {
                free(meta);
                return cli_usage("push", "--meta takes KEY=VALUE");
            }
            *eq = '\0';
            meta[po.meta_count].key = optarg;
            meta[po.meta_count++].value = eq + 1;
            break;
        case 'L':
            po.no_latest = 1;
            break;
        case 'f':
            po.force = 1;
            break;
        case 'F':
            if (strcmp(optarg, "auto") && strcmp(optarg, "none") && strcmp(optarg, "bytes4") &&
                strcmp(optarg, "bytes2") && strcmp(optarg, "float4") && strcmp(optarg, "float2")) {
                free(meta);
                return cli_usage("push",
                                 "--filter takes auto, none, bytes4, bytes2, float4 or float2");
            }
            po.filter = optarg;
            break;
        case 'A':
            po.no_adapt = 1;
            break;
        case 'h':
            fputs(help, stdout);
            free(meta);
            return EXIT_OK;
        default:
            rc = cli_common_option(&o, opt, optarg);
            if (rc <= 0) {
                free(meta);
                return rc < 0 ? EXIT_USAGE : cli_usage("push", "unknown option");
            }
        }
    }
    if (argc - optind != 2) {
        free(meta);
        return cli_usage("push", "expects DIR and STORE");
    }
    if ((rc = cli_client_new(&c, &o))) {
        free(meta);
        return rc;
    }
    po.meta = meta;
    po.name_out = name;
    po.name_out_size = sizeof(name);
    po.stats = &stats;
    cli_progress_init(&prog, &o, "push");
    po.on_progress = cli_progress_cb;
    po.userdata = &prog;
    st = s3ckpt_push(c, argv[optind], argv[optind + 1], &po);
    cli_progress_end(&prog);
    if (st) {
        rc = cli_fail(c, st);
        goto out;
    }
    if (o.json) {
        cli_print_stats_json(name, &stats);
    } else {
        cli_human(raw, sizeof(raw), (double)stats.raw_bytes);
        cli_human(stored, sizeof(stored), (double)stats.stored_bytes);
        cli_human(rate, sizeof(rate),
                  stats.seconds > 0 ? (double)stats.raw_bytes / stats.seconds : 0);
        printf("pushed %s: %llu files, %s -> %s stored (ratio %.3f), %.2f s, %s/s\n", name,
               (unsigned long long)stats.files, raw, stored,
               stats.stored_bytes ? (double)stats.raw_bytes / (double)stats.stored_bytes : 1.0,
               stats.seconds, rate);
    }
    rc = EXIT_OK;
out:
    cli_client_free(c);
    free(meta);
    return rc;
}
