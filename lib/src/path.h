/* path - checkpoint-relative paths and checkpoint names: validation, ordering, derivation. */
#ifndef CK_PATH_H
#define CK_PATH_H

#include <stddef.h>
#include <stdint.h>

/* Paths are shorter than this, so "<name>/data/<path>" stays under PATH_MAX (4096). */
#define CK_PATH_MAX 3840
/* Keys of the store: "<name>/data/<path>" and the like. */
#define CK_KEY_MAX 4096
#define CK_NAME_MAX 128

/* A relative path inside a checkpoint: non-empty, valid UTF-8, '/'-separated, no leading or
 * trailing '/', no empty, "." or ".." component, no component over 255 bytes, shorter than
 * CK_PATH_MAX, no control bytes. Returns 0 when valid, else -1 with the reason in why. */
int ck_path_check(const char *path, char *why, size_t why_len);
/* The same rules for a store key, which may be up to CK_KEY_MAX - 1 bytes. */
int ck_key_check(const char *key, char *why, size_t why_len);
/* 1 when s is valid UTF-8 (no overlong forms, no surrogates), else 0. */
int ck_utf8_valid(const char *s);

/* A checkpoint name: 1..128 of [A-Za-z0-9._-], not starting with '.', not "latest". */
int ck_name_check(const char *name, char *why, size_t why_len);

/* Writes the default name: "step-%08" PRId64 when step >= 0, else the sanitized base name of
 * source (characters outside the name alphabet become '-'). */
void ck_name_derive(const char *source, int64_t step, char *out, size_t out_len);

/* Orders paths so that every "a/..." sorts directly after "a" ('/' sorts before any other
 * byte); duplicates and file/directory conflicts then sit next to each other. */
int ck_path_cmp(const char *a, const char *b);

#endif
