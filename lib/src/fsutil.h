/* fsutil - small local-filesystem helpers shared by the file store, walk, push and pull. */
#ifndef CK_FSUTIL_H
#define CK_FSUTIL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* "a/b", malloc'ed; NULL when out of memory. */
char *ck_path_join(const char *a, const char *b);
/* Creates the missing directories of path's parents, starting after the first `keep` bytes
 * (which name an existing directory), with `mode` (the umask applies). 0 ok, -1 with errno. */
int ck_mkdir_parents(char *path, size_t keep, mode_t mode);
/* Exactly n bytes at off; -1 with errno set, or with errno 0 at end of file. */
int ck_pread_full(int fd, void *dst, size_t n, uint64_t off);
int ck_pwrite_full(int fd, const void *src, size_t n, uint64_t off);
int ck_write_full(int fd, const void *src, size_t n);
/* Starts writeback of [off, off+len) without waiting (wait 0), or waits until it is on disk
 * (wait 1). Advice only: a later fsync reports errors. Overlaps the disk with the CPU work of a
 * pipeline and keeps dirty data bounded. */
void ck_writeback(int fd, uint64_t off, uint64_t len, int wait);
/* fsync of a directory by path. 0 ok, -1 with errno. */
int ck_fsync_dir(const char *path);

#endif
