/* trailer - the chunk index at the end of every data object: a zstd skippable frame that
 * repeats the file's chunk table, so a re-run push can check an existing object against the
 * local file by digest without compressing anything. Pure: no I/O. */
#ifndef CK_TRAILER_H
#define CK_TRAILER_H

#include <stddef.h>
#include <stdint.h>

#include "manifest.h"

#define CK_TRAILER_FOOTER 8 /* u32 trailer length + "CKIX" */
#define CK_TRAILER_MAX ((uint64_t)256 << 20)

/* Bytes of the trailer of a file with n chunks. */
uint64_t ck_trailer_size(uint64_t nchunks);
/* Writes the trailer of e (chunks and digest filled in) into out, which holds
 * ck_trailer_size(e->nchunks) bytes. */
void ck_trailer_encode(const ck_entry *e, uint64_t chunk_size, unsigned char *out);
/* Length of the trailer that the last CK_TRAILER_FOOTER bytes of an object announce, or 0 when
 * they are not a trailer footer. */
uint64_t ck_trailer_announced(const unsigned char footer[CK_TRAILER_FOOTER]);
/* Parses a whole trailer. On success fills e->size, e->nchunks, e->chunks (malloc'ed),
 * e->digest and *chunk_size, and returns 0; returns -1 when it is malformed or inconsistent. */
int ck_trailer_decode(const unsigned char *p, size_t len, ck_entry *e, uint64_t *chunk_size);

#endif
