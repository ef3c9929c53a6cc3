/*
 * replay - runs fuzz inputs through LLVMFuzzerTestOneInput without libFuzzer, so the corpus is
 * a regression suite under ctest. Each argument is a file (run it) or a directory (run every
 * regular file in it, in name order). Exits non-zero when nothing ran: an empty or missing
 * corpus must not pass silently. Linked only into the <target>_replay executables.
 */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Reads a whole file; *len gets its size. NULL on failure (reported). */
static uint8_t *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    uint8_t *buf = NULL, *p;
    size_t cap = 0, n = 0, got;

    if (!f) {
        fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
        return NULL;
    }
    for (;;) {
        if (n == cap) {
            cap = cap ? cap * 2 : 65536;
            p = realloc(buf, cap);
            if (!p) {
                fprintf(stderr, "replay: %s: out of memory\n", path);
                free(buf);
                fclose(f);
                return NULL;
            }
            buf = p;
        }
        got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (got == 0)
            break;
    }
    if (ferror(f)) {
        fprintf(stderr, "replay: %s: read error\n", path);
        free(buf);
        fclose(f);
        return NULL;
    }
    fclose(f);
    *len = n;
    return buf;
}

/* Runs one file; returns 0 on success, -1 when it could not be read. */
static int run_file(const char *path)
{
    size_t len = 0;
    uint8_t *data = read_file(path, &len), *copy;

    if (!data)
        return -1;
    /* an exact-size copy so ASan catches reads past the input, as libFuzzer would */
    copy = malloc(len ? len : 1);
    if (!copy) {
        free(data);
        return -1;
    }
    memcpy(copy, data, len);
    free(data);
    fprintf(stderr, "replay: %s (%zu bytes)\n", path, len);
    LLVMFuzzerTestOneInput(copy, len);
    free(copy);
    return 0;
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Runs every regular file in dir, sorted by name; adds to *ran. -1 on any failure. */
static int run_dir(const char *dir, unsigned long *ran)
{
    char **names = NULL, **p, path[4096];
    size_t n = 0, cap = 0, i;
    struct dirent *de;
    struct stat sb;
    int rc = 0;
    DIR *d = opendir(dir);

    if (!d) {
        fprintf(stderr, "replay: %s: %s\n", dir, strerror(errno));
        return -1;
    }
    while ((de = readdir(d))) {
        if (de->d_name[0] == '.')
            continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 64;
            p = realloc(names, cap * sizeof(*names));
            if (!p) {
                rc = -1;
                break;
            }
            names = p;
        }
        if (!(names[n] = strdup(de->d_name))) {
            rc = -1;
            break;
        }
        n++;
    }
    closedir(d);
    if (n > 1)
        qsort(names, n, sizeof(*names), cmp_names);
    for (i = 0; i < n; i++) {
        snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
        if (stat(path, &sb) == 0 && S_ISREG(sb.st_mode)) {
            if (run_file(path))
                rc = -1;
            else
                (*ran)++;
        }
        free(names[i]);
    }
    free(names);
    return rc;
}

int main(int argc, char **argv)
{
    unsigned long ran = 0;
    struct stat sb;
    int i, rc = 0;

    for (i = 1; i < argc; i++) {
        if (stat(argv[i], &sb)) {
            fprintf(stderr, "replay: %s: %s\n", argv[i], strerror(errno));
            rc = 1;
        } else if (S_ISDIR(sb.st_mode)) {
            if (run_dir(argv[i], &ran))
                rc = 1;
        } else if (run_file(argv[i])) {
            rc = 1;
        } else {
            ran++;
        }
    }
    printf("replay: %lu inputs ran\n", ran);
    if (ran == 0) {
        fprintf(stderr, "replay: no inputs (give corpus directories or files)\n");
        return 1;
    }
    return rc;
}
