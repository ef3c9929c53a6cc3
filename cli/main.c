/* main - s3ckpt command dispatch and top-level help. */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "common.h"

static const char usage[] =
    "Usage: s3ckpt COMMAND [ARGS]\n"
    "\n"
    "Move ML training checkpoints between local disk and a store, verified end to end.\n"
    "A checkpoint is committed by its manifest, written last: it is complete or invisible.\n"
    "\n"
    "Commands:\n"
    "  push DIR STORE      upload a checkpoint directory (or one file)\n"
    "  pull STORE DEST     restore a checkpoint (default: latest) into DEST\n"
    "  ls STORE            list committed checkpoints\n"
    "  show STORE          describe one checkpoint (default: latest)\n"
    "  verify STORE        check a checkpoint's objects (--deep: every byte)\n"
    "  rm STORE --name N   delete a checkpoint\n"
    "  prune STORE         delete old checkpoints by policy\n"
    "  cleanup STORE       abort incomplete uploads of interrupted pushes\n"
    "\n"
    "STORE is s3://bucket/prefix (any S3-compatible endpoint: --endpoint, AWS_ENDPOINT_URL)\n"
    "or file:///absolute/path (a directory laid out like a bucket).\n"
    "Run 's3ckpt COMMAND --help' for a command's options.\n"
    "\n"
    "Exit codes: 0 ok, 1 other error, 2 usage, 3 not found, 4 integrity failure,\n"
    "5 local I/O (e.g. disk full), 6 auth, 7 network, 8 already exists / not empty,\n"
    "9 store error, 10 unsupported file type in source, 130 interrupted.\n";

int main(int argc, char **argv)
{
    static const struct {
        const char *name;
        int (*fn)(int, char **);
    } cmds[] = {{"push", cmd_push},   {"pull", cmd_pull},      {"ls", cmd_ls},
                {"show", cmd_show},   {"verify", cmd_verify},  {"rm", cmd_rm},
                {"prune", cmd_prune}, {"cleanup", cmd_cleanup}};
    size_t i;

    if (argc < 2) {
        fputs(usage, stderr);
        return EXIT_USAGE;
    }
    if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
        fputs(usage, stdout);
        return EXIT_OK;
    }
    if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version")) {
        printf("s3ckpt %s\n", s3ckpt_version());
        return EXIT_OK;
    }
    for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
        if (!strcmp(argv[1], cmds[i].name))
            return cmds[i].fn(argc - 1, argv + 1);
    fprintf(stderr, "s3ckpt: unknown command '%s'\n\n%s", argv[1], usage);
    return EXIT_USAGE;
}
