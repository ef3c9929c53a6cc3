/* awsconf - credentials, region, endpoint and S3 settings resolved the way aws-cli v2 does, from
 * command-line settings, the environment and the shared files (~/.aws/credentials, ~/.aws/config).
 * No network: IMDS, SSO, STS and credential_process are refused with a message, never run. */
#ifndef CK_AWSCONF_H
#define CK_AWSCONF_H

#include "err.h"

#define CK_AWS_KEY_MAX 256
#define CK_AWS_TOKEN_MAX 4096
#define CK_AWS_LINE_MAX 8192              /* bytes of one line of a shared file, without its end */
#define CK_AWS_FILE_MAX ((size_t)1 << 20) /* bytes of one shared file */

/* ck_aws_config.addressing, from the config file's nested `s3 =` `addressing_style`. */
enum { CK_AWS_ADDR_UNSET = 0, CK_AWS_ADDR_PATH = 1, CK_AWS_ADDR_VIRTUAL = 2, CK_AWS_ADDR_AUTO = 3 };

typedef struct ck_aws_opts { /* explicit settings (command-line flags); NULL = not given */
    const char *profile;     /* --profile */
    const char *region;      /* --region */
    const char *endpoint;    /* --endpoint */
    const char *ca_bundle;   /* --ca-bundle */
} ck_aws_opts;

typedef struct ck_aws_config {
    char access_key[CK_AWS_KEY_MAX];
    char secret_key[CK_AWS_KEY_MAX];
    char session_token[CK_AWS_TOKEN_MAX]; /* "" when none */
    char region[64];
    char endpoint[1024];       /* "" when none: AWS itself */
    char ca_bundle[1024];      /* "" when none */
    char profile[128];         /* profile used for file lookups */
    char cred_source[300];     /* e.g. "environment (AWS_ACCESS_KEY_ID)",
                                  "shared credentials file /h/.aws/credentials [prof]", "none" */
    char endpoint_source[300]; /* e.g. "--endpoint", "AWS_ENDPOINT_URL_S3",
                                  "config file /x [profile p]", "default" */
    char region_source[300];   /* "--region", "AWS_REGION", ..., "default" */
    int addressing;            /* CK_AWS_ADDR_* */
    int have_creds;            /* 0: no credentials found anywhere (anonymous) */
} ck_aws_config;

/*
 * Fills cfg (opts may be NULL). Empty environment variables count as unset.
 *
 * Profile: opts->profile > AWS_PROFILE > AWS_DEFAULT_PROFILE > "default".
 * Credentials (first that applies):
 *   1. unless --profile was given: AWS_ACCESS_KEY_ID + AWS_SECRET_ACCESS_KEY, token from
 *      AWS_SECURITY_TOKEN or else AWS_SESSION_TOKEN (botocore's order);
 *   2. the profile's role_arn, web identity (AWS_WEB_IDENTITY_TOKEN_FILE unless --profile, or
 *      web_identity_token_file) or sso_* settings: ECONFIG, not supported;
 *   3. aws_access_key_id/aws_secret_access_key in the credentials file `[name]`;
 *   4. the profile's credential_process: ECONFIG, not supported;
 *   5. the same keys in the config file `[profile name]` (`[default]` for default);
 *   6. none: have_creds = 0, not an error (the caller decides).
 * Profile settings are the config file's section overlaid by the credentials file's section.
 * Region: --region > AWS_REGION > AWS_DEFAULT_REGION > profile `region` > "us-east-1".
 * Endpoint: --endpoint > AWS_ENDPOINT_URL_S3 > AWS_ENDPOINT_URL > `s3` `endpoint_url` of the
 *   profile's `services` section > the profile's nested `s3 =` `endpoint_url` > profile
 *   `endpoint_url` > "" (AWS). AWS_IGNORE_CONFIGURED_ENDPOINT_URLS=true (or the profile's
 *   ignore_configured_endpoint_urls = true when the variable is unset) skips all but --endpoint.
 * CA bundle: --ca-bundle > AWS_CA_BUNDLE > profile `ca_bundle`.
 * Files: AWS_SHARED_CREDENTIALS_FILE / AWS_CONFIG_FILE ("~/" expanded), else $HOME/.aws/...;
 *   without HOME only the named files are read. Parsed as botocore does (configparser):
 * `[section]`, `name = value` or `name: value` (names case-insensitive), whole-line '#'/';'
 * comments, an indented block after `name =` is a nested `key = value` section, other indented
 * lines continue the value; duplicate sections merge and later settings win.
 *
 * ECONFIG (message names the file, line, profile or variable; never the secret key or token):
 * an explicitly requested profile (--profile, AWS_PROFILE, AWS_DEFAULT_PROFILE) in neither file;
 * one of the key pair without the other (environment or a file section); a credential source
 * that is not supported (see above); a named file that cannot be read, or a default file that
 * exists but cannot be read; a syntax error, a line over CK_AWS_LINE_MAX or a file over
 * CK_AWS_FILE_MAX; a value too long for its field or malformed (region name, endpoint without
 * http(s)://, keys with spaces or control characters, unknown addressing_style); a `services`
 * section that does not exist. A missing default file is fine. ENOMEM when out of memory.
 * On any error cfg is cleared.
 */
s3ckpt_status ck_awsconf_load(ck_aws_config *cfg, const ck_aws_opts *opts, ck_err *err);

#endif
