/* walk - what a push reads: a directory tree (or one file) as a sorted list of entries. */
#ifndef CK_WALK_H
#define CK_WALK_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"

typedef struct ck_walk_entry {
    char *path; /* relative, '/'-separated */
    int is_dir;
    uint32_t mode;
    uint64_t size;
    int64_t mtime_ns; /* with dev and ino: to notice files changed or replaced while read */
    uint64_t dev, ino;
} ck_walk_entry;

typedef struct ck_walk {
    ck_walk_entry *entries; /* sorted by ck_path_cmp */
    size_t n, cap;
    char *base; /* directory the paths are relative to */
} ck_walk;

/* Walks src (a directory, or a single regular file which becomes one entry named by its base
 * name). Symbolic links, devices, sockets and FIFOs are refused with EUNSUPPORTED: a checkpoint
 * holds regular files and directories only. */
s3ckpt_status ck_walk_run(ck_walk *w, const char *src, ck_err *err);
void ck_walk_cleanup(ck_walk *w);
/* base + "/" + entry path, malloc'ed. */
char *ck_walk_local_path(const ck_walk *w, const ck_walk_entry *e);

#endif
