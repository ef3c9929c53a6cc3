/* s3xml - S3 XML: parses response bodies (untrusted) and builds request bodies. Pure: no I/O.
 * The only libxml2 user. Element names match by local name, whatever the namespace. A document
 * with a DTD or an entity declaration is refused before anything in it is expanded or fetched.
 * Every copied value has a fixed bound; a value that does not fit is EPROTOCOL, never a silent
 * truncation (the one exception is human-readable Message/RequestId text, noted below).
 * Parsers take the whole document and check all of it before calling any callback, so a page
 * that is malformed anywhere produces no callbacks at all. Callbacks run in document order;
 * their strings are borrowed for the duration of the call. */
#ifndef CK_S3XML_H
#define CK_S3XML_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "s3ckpt.h"

#define CK_S3_CODE_MAX 64
#define CK_S3_MSG_MAX 256
#define CK_S3_REQID_MAX 128
#define CK_S3_UPLOADID_MAX 1024
#define CK_S3_ETAG_MAX 80      /* same as CK_ETAG_MAX in store.h; ETags keep their quotes as sent */
#define CK_S3_KEY_MAX 1100     /* S3 keys are <= 1024 bytes */
#define CK_S3_TIME_MAX 64      /* <Initiated> and similar ISO-8601 timestamps */
#define CK_S3_PART_MAX 10000u  /* highest S3 part number */
#define CK_S3_DELETE_MAX 1000u /* keys per DeleteObjects request */
#define CK_S3XML_BODY_MAX (16u << 20) /* largest body any parser accepts (EPROTOCOL above) */

/* xmlInitParser(); call once before threads. */
void ck_s3xml_global_init(void);

typedef struct ck_s3_error {
    char code[CK_S3_CODE_MAX];
    char message[CK_S3_MSG_MAX];
    char request_id[CK_S3_REQID_MAX];
} ck_s3_error;

/* 0 when body is an S3 <Error> document (fields filled; missing/empty Message -> ""),
 * -1 otherwise (also for garbage). Never fails on an empty <Message></Message> (Ceph RGW sends
 * it). Message and RequestId are display text: a longer one is cut at a UTF-8 character
 * boundary. A Code that does not fit is stored as "" (unknown code; map the HTTP status). */
int ck_s3xml_error(const char *body, size_t len, ck_s3_error *out);

/* InitiateMultipartUploadResult -> UploadId. EPROTOCOL when absent/empty/too long. */
s3ckpt_status ck_s3xml_initiate(const char *body, size_t len, char upload_id[CK_S3_UPLOADID_MAX]);

/* CompleteMultipartUploadResult -> ETag. A 200 response whose body is <Error> must be detected
 * by the caller with ck_s3xml_error first; this returns EPROTOCOL when no ETag is found. */
s3ckpt_status ck_s3xml_complete(const char *body, size_t len, char etag[CK_S3_ETAG_MAX]);

/* ListObjectsV2 page: fn per <Contents> (key, size, etag) and per <CommonPrefixes><Prefix>
 * (is_prefix=1, size 0, etag ""); returns fn's non-zero status at once. *truncated from
 * IsTruncated (required); next_token from NextContinuationToken (required when truncated -> else
 * EPROTOCOL; "" when not truncated). With <EncodingType>url</EncodingType>, keys and prefixes
 * are URL-decoded ('+' is a space; %00 or a bad escape is EPROTOCOL). Key and Size are required,
 * ETag may be absent (""). fn may be NULL (check the page only). */
typedef s3ckpt_status ck_s3xml_obj_fn(void *ud, const char *key, int is_prefix, uint64_t size,
                                      const char *etag);
s3ckpt_status ck_s3xml_list_objects(const char *body, size_t len, ck_s3xml_obj_fn *fn, void *ud,
                                    int *truncated, char *next_token, size_t next_token_len);

/* ListMultipartUploads page: fn per <Upload> (key, upload_id, initiated as the raw ISO-8601
 * text). next_key_marker (required when truncated, URL-decoded like keys) and
 * next_upload_id_marker (may be "") when truncated; both "" otherwise. */
typedef s3ckpt_status ck_s3xml_upload_fn(void *ud, const char *key, const char *upload_id,
                                         const char *initiated);
s3ckpt_status ck_s3xml_list_uploads(const char *body, size_t len, ck_s3xml_upload_fn *fn, void *ud,
                                    int *truncated, char *next_key_marker, size_t nkm_len,
                                    char *next_upload_id_marker, size_t nuim_len);

/* ListParts page: fn per <Part> (PartNumber 1..10000 else EPROTOCOL, Size, ETag required);
 * *next_part_marker from NextPartNumberMarker when truncated (required, 1..10000), else 0. */
typedef s3ckpt_status ck_s3xml_part_fn(void *ud, unsigned part_number, uint64_t size,
                                       const char *etag);
s3ckpt_status ck_s3xml_list_parts(const char *body, size_t len, ck_s3xml_part_fn *fn, void *ud,
                                  int *truncated, unsigned *next_part_marker);

/* DeleteObjects result: fn per <Error> entry (key, code, message); <Deleted> entries ignored.
 * Key and Code are required and bounded; Message may be absent ("") and is cut like above. */
typedef s3ckpt_status ck_s3xml_delete_err_fn(void *ud, const char *key, const char *code,
                                             const char *message);
s3ckpt_status ck_s3xml_delete_result(const char *body, size_t len, ck_s3xml_delete_err_fn *fn,
                                     void *ud);

/* Request bodies, XML-escaped (& < > " '). Control characters (bytes < 0x20) cannot be sent in
 * XML 1.0, so a key or ETag holding one is EINVAL, as is invalid UTF-8. Append to out; on any
 * error out is left as it was. */
typedef struct ck_s3_part {
    unsigned number;
    char etag[CK_S3_ETAG_MAX];
    char crc32c[16]; /* base64 CRC32C sent with the part, "" when none (then not listed) */
} ck_s3_part;
/* CompleteMultipartUpload: 1..10000 parts, numbers 1..10000 strictly ascending (S3 refuses any
 * other order), non-empty ETags; EINVAL otherwise. */
s3ckpt_status ck_s3xml_complete_body(ck_buf *out, const ck_s3_part *parts, size_t n);
/* DeleteObjects: 1..1000 non-empty keys of at most 1024 bytes; <Quiet>true</Quiet> when quiet. */
s3ckpt_status ck_s3xml_delete_body(ck_buf *out, const char *const *keys, size_t n, int quiet);

#endif
