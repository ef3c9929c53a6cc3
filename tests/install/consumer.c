/*
 * consumer - a program built against an installed libs3ckpt through pkg-config, the way a user
 * would (scripts/test builds and runs it): push a directory to a file store, list it, pull it.
 * Usage: consumer SRC_DIR STORE_URL DEST_DIR
 */
#include <s3ckpt.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    s3ckpt_push_opts push = {.version = S3CKPT_PUSH_OPTS_VERSION, .step = 7};
    s3ckpt_summary *list = NULL;
    s3ckpt_client *c = NULL;
    s3ckpt_status st;
    size_t n = 0;

    if (argc != 4) {
        fprintf(stderr, "usage: consumer SRC_DIR STORE_URL DEST_DIR\n");
        return 2;
    }
    if ((st = s3ckpt_client_new(&c, NULL))) {
        fprintf(stderr, "client: %s\n", s3ckpt_strerror(st));
        return 1;
    }
    if ((st = s3ckpt_push(c, argv[1], argv[2], &push)) ||
        (st = s3ckpt_list(c, argv[2], &list, &n)) ||
        (st = s3ckpt_pull(c, argv[2], argv[3], NULL))) {
        fprintf(stderr, "consumer: %s\n", s3ckpt_errmsg(c));
        s3ckpt_client_free(c);
        return 1;
    }
    if (n != 1 || strcmp(list[0].name, "step-00000007") || !list[0].is_latest) {
        fprintf(stderr, "consumer: unexpected listing (%zu checkpoints)\n", n);
        return 1;
    }
    printf("consumer: libs3ckpt %s pushed, listed and pulled %s\n", s3ckpt_version(), list[0].name);
    s3ckpt_summaries_free(list, n);
    s3ckpt_client_free(c);
    return 0;
}
