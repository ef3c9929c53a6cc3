/*
 * test_awsconf - configuration resolution as aws-cli does it: every precedence rule for
 * credentials, profile, region, endpoint and CA bundle; the shared-file syntax botocore accepts
 * (comments, CRLF, ':' and '=', nested `s3 =` blocks, duplicates); each ECONFIG case, with a check
 * that the message never carries the secret key or session token; missing files and HOME unset.
 * Every test starts with no AWS_* variable and HOME pointing at an empty temporary directory.
 */
#include <criterion/criterion.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "awsconf.h"

#define SECRET "wJalrXUtnFEMI/K7MDENG+SeCrEtDoNoTlEaK"
#define TOKEN "IQoJb3JpZ2luX2VjTOKENdOnOtLeAk=="

static char home[64];
static ck_err err;
static ck_aws_config cfg;

static void clear_aws_env(void)
{
    char name[256];
    int found;

    do {
        char **e;

        found = 0;
        for (e = environ; *e && !found; e++) {
            size_t n = strcspn(*e, "=");

            if (!strncmp(*e, "AWS_", 4) && n < sizeof(name)) {
                memcpy(name, *e, n);
                name[n] = '\0';
                found = 1;
            }
        }
        if (found)
            unsetenv(name);
    } while (found);
}

static void setup(void)
{
    clear_aws_env();
    snprintf(home, sizeof(home), "/tmp/test_awsconf.XXXXXX");
    cr_assert_not_null(mkdtemp(home));
    setenv("HOME", home, 1);
    ck_err_init(&err);
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static void teardown(void)
{
    ck_err_cleanup(&err);
    nftw(home, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

TestSuite(awsconf, .init = setup, .fini = teardown);

/* Writes text to $HOME/rel (making $HOME/.aws when needed); path receives the full name. */
static void put_file(const char *rel, const char *text, char *path, size_t cap)
{
    char buf[512];
    FILE *f;

    if (!path) {
        path = buf;
        cap = sizeof(buf);
    }
    snprintf(buf, sizeof(buf), "%s/.aws", home);
    mkdir(buf, 0700);
    snprintf(path, cap, "%s/%s", home, rel);
    f = fopen(path, "wb");
    cr_assert_not_null(f, "fopen %s", path);
    cr_assert_eq(fwrite(text, 1, strlen(text), f), strlen(text));
    cr_assert_eq(fclose(f), 0);
}

static void put_config(const char *text)
{
    put_file(".aws/config", text, NULL, 0);
}

static void put_credentials(const char *text)
{
    put_file(".aws/credentials", text, NULL, 0);
}

static s3ckpt_status load(const ck_aws_opts *opts)
{
    ck_err_reset(&err);
    return ck_awsconf_load(&cfg, opts, &err);
}

static void load_ok(const ck_aws_opts *opts)
{
    s3ckpt_status st = load(opts);

    cr_assert_eq(st, S3CKPT_OK, "status %d: %s", st, err.msg);
}

/* Loads, expects ECONFIG whose message contains each of the NULL-terminated fragments and never
 * the secret or the token, and checks cfg was cleared. */
static void load_fails(const ck_aws_opts *opts, const char *frag, ...)
{
    static const ck_aws_config zero;
    s3ckpt_status st = load(opts);
    va_list ap;

    cr_assert_eq(st, S3CKPT_ECONFIG, "status %d (%s)", st, err.msg);
    cr_assert_eq(ck_err_status(&err), S3CKPT_ECONFIG);
    cr_assert_null(strstr(err.msg, SECRET), "secret in message: %s", err.msg);
    cr_assert_null(strstr(err.msg, TOKEN), "token in message: %s", err.msg);
    cr_assert_null(strstr(err.msg, "SeCrEt"), "part of the secret in message: %s", err.msg);
    va_start(ap, frag);
    for (; frag; frag = va_arg(ap, const char *))
        cr_assert_not_null(strstr(err.msg, frag), "'%s' not in: %s", frag, err.msg);
    va_end(ap);
    cr_assert_eq(memcmp(&cfg, &zero, sizeof(cfg)), 0, "cfg not cleared on error");
}

static void set_env_keys(const char *key)
{
    setenv("AWS_ACCESS_KEY_ID", key, 1);
    setenv("AWS_SECRET_ACCESS_KEY", SECRET, 1);
}

#define CREDS_DEFAULT_AND_P                                                                        \
    "[default]\naws_access_key_id = AKIADEFAULT\naws_secret_access_key = sdefault\n"               \
    "[p]\naws_access_key_id = AKIAP\naws_secret_access_key = sp\n"

/* ---- credentials ---- */

Test(awsconf, env_keys_win_over_files_without_profile_flag)
{
    put_credentials(CREDS_DEFAULT_AND_P);
    set_env_keys("AKIAENV");
    setenv("AWS_SESSION_TOKEN", TOKEN, 1);
    load_ok(NULL);
    cr_assert_str_eq(cfg.access_key, "AKIAENV");
    cr_assert_str_eq(cfg.secret_key, SECRET);
    cr_assert_str_eq(cfg.session_token, TOKEN);
    cr_assert_str_eq(cfg.cred_source, "environment (AWS_ACCESS_KEY_ID)");
    cr_assert_eq(cfg.have_creds, 1);
    cr_assert_str_eq(cfg.profile, "default");
}

Test(awsconf, profile_flag_ignores_env_keys)
{
    char path[512];
    char want[600];
    ck_aws_opts o = {.profile = "p"};

    put_file(".aws/credentials", CREDS_DEFAULT_AND_P, path, sizeof(path));
    set_env_keys("AKIAENV");
    load_ok(&o);
    cr_assert_str_eq(cfg.access_key, "AKIAP");
    cr_assert_str_eq(cfg.secret_key, "sp");
    cr_assert_str_eq(cfg.profile, "p");
    snprintf(want, sizeof(want), "shared credentials file %s [p]", path);
    cr_assert_str_eq(cfg.cred_source, want);
}

Test(awsconf, aws_profile_variable_does_not_override_env_keys)
{
    put_credentials(CREDS_DEFAULT_AND_P);
    set_env_keys("AKIAENV");
    setenv("AWS_PROFILE", "p", 1);
    load_ok(NULL);
    cr_assert_str_eq(cfg.access_key, "AKIAENV");
    cr_assert_str_eq(cfg.profile, "p");
}

Test(awsconf, aws_profile_variable_selects_the_file_profile)
{
    put_credentials(CREDS_DEFAULT_AND_P);
    setenv("AWS_PROFILE", "p", 1);
    load_ok(NULL);
    cr_assert_str_eq(cfg.access_key, "AKIAP");
}

Test(awsconf, aws_default_profile_is_used_when_aws_profile_is_unset)
{
    put_credentials(CREDS_DEFAULT_AND_P);
    setenv("AWS_DEFAULT_PROFILE", "p", 1);
    load_ok(NULL);
    cr_assert_str_eq(cfg.access_key, "AKIAP");
}

Test(awsconf, aws_profile_wins_over_aws_default_profile)
{
    put_credentials(CREDS_DEFAULT_AND_P);
    setenv("AWS_PROFILE", "default", 1);
    setenv("AWS_DEFAULT_PROFILE", "p", 1);
    load_ok(NULL);
    cr_assert_str_eq(cfg.access_key, "AKIADEFAULT");
}

Test(awsconf, profile_flag_wins_over_aws_profile)
{
    ck_aws_opts o = {.profile = "p"};

    put_credentials(CREDS_DEFAULT_AND_P);
    setenv("AWS_PROFILE", "default", 1);
    load_ok(&o);
    cr_assert_str_eq(cfg.access_key, "AKIAP");
}

Test(awsconf, default_profile_is_used_when_nothing_names_one)
{
    put_credentials(CREDS_DEFAULT_AND_P);
    load_ok(NULL);
    cr_assert_str_eq(cfg.access_key, "AKIADEFAULT");
    cr_assert_str_eq(cfg.secret_key, "sdefault");
    cr_assert_str_eq(cfg.profile, "default");
}

Test(awsconf, credentials_file_keys_win_over_config_file_keys)
{
    put_credentials(CREDS_DEFAULT_AND_P);
    put_config("[profile p]\naws_access_key_id = AKIACONF\naws_secret_access_key = sconf\n");
    setenv("AWS_PROFILE", "p", 1);
    load_ok(NULL);
    cr_assert_str_eq(cfg.access_key, "AKIAP");
}

Test(awsconf, config_file_profile_section_supplies_keys)
{
    char path[512], want[600];

    put_file(".aws/config",
             "[profile p]\naws_access_key_id = AKIACONF\naws_secret_access_key = sconf\n"
             "aws_session_token = " TOKEN "\n",
             path, sizeof(path));
    setenv("AWS_PROFILE", "p", 1);
    load_ok(NULL);
    cr_assert_str_eq(cfg.access_key, "AKIACONF");
    cr_assert_str_eq(cfg.secret_key, "sconf");
    cr_assert_str_eq(cfg.session_token, TOKEN);
    snprintf(want, sizeof(want), "config file %s [profile p]", path);
    cr_assert_str_eq(cfg.cred_source, want);
}

Test(awsconf, config_default_section_is_default_or_profile_default)
{
    put_config("[default]\naws_access_key_id = AKIA1\naws_secret_access_key = s1\n");
    load_ok(NULL);
    cr_assert_str_eq(cfg.access_key, "AKIA1");
    put_config("[profile default]\naws_access_key_id = AKIA2\naws_secret_access_key = s2\n");
    load_ok(NULL);
    cr_assert_str_eq(cfg.access_key, "AKIA2");
}

Test(awsconf, config_bare_section_of_a_named_profile_is_not_that_profile)
{
    ck_aws_opts o = {.profile = "p"};

    put_config("[p]\naws_access_key_id = AKIA1\naws_secret_access_key = " SECRET "\n");
    load_fails(&o, "profile 'p'", "--profile", "[profile p]", NULL);
}

Test(awsconf, credentials_file_section_names_are_literal)
{
    put_credentials("[profile p]\naws_access_key_id = AKIA1\naws_secret_access_key = s1\n");
    setenv("AWS_PROFILE", "p", 1);
    load_fails(NULL, "profile 'p'", "AWS_PROFILE", NULL);
}

Test(awsconf, session_token_variable_is_used)
{
    set_env_keys("AKIAENV");
    setenv("AWS_SESSION_TOKEN", TOKEN, 1);
    load_ok(NULL);
    cr_assert_str_eq(cfg.session_token, TOKEN);
}

Test(awsconf, security_token_is_a_legacy_alias_read_first_like_botocore)
{
    set_env_keys("AKIAENV");
    setenv("AWS_SECURITY_TOKEN", "legacytoken", 1);
    load_ok(NULL);
    cr_assert_str_eq(cfg.session_token, "legacytoken");
    setenv("AWS_SESSION_TOKEN", TOKEN, 1);
    load_ok(NULL);
    cr_assert_str_eq(cfg.session_token, "legacytoken");
    unsetenv("AWS_SECURITY_TOKEN");
    load_ok(NULL);
    cr_assert_str_eq(cfg.session_token, TOKEN);
}

Test(awsconf, no_token_leaves_session_token_empty)
{
    set_env_keys("AKIAENV");
    load_ok(NULL);
    cr_assert_str_eq(cfg.session_token, "");
}

Test(awsconf, file_session_token_and_legacy_name)
{
    put_credentials("[default]\naws_access_key_id = AKIA1\naws_secret_access_key = s1\n"
                    "aws_session_token = " TOKEN "\n");
    load_ok(NULL);
    cr_assert_str_eq(cfg.session_token, TOKEN);
    put_credentials("[default]\naws_access_key_id = AKIA1\naws_secret_access_key = s1\n"
                    "aws_security_token = old\n");
    load_ok(NULL);
    cr_assert_str_eq(cfg.session_token, "old");
}

Test(awsconf, env_key_without_secret_names_the_missing_variable)
{
    setenv("AWS_ACCESS_KEY_ID", "AKIAENV", 1);
    setenv("AWS_SESSION_TOKEN", TOKEN, 1);
    load_fails(NULL, "AWS_SECRET_ACCESS_KEY", "is not", NULL);
}

Test(awsconf, env_secret_without_key_names_the_missing_variable)
{
    setenv("AWS_SECRET_ACCESS_KEY", SECRET, 1);
    load_fails(NULL, "AWS_ACCESS_KEY_ID is not", NULL);
}

Test(awsconf, empty_env_key_counts_as_unset)
{
    setenv("AWS_ACCESS_KEY_ID", "", 1);
    setenv("AWS_SECRET_ACCESS_KEY", SECRET, 1);
    load_fails(NULL, "AWS_ACCESS_KEY_ID is not", NULL);
}

Test(awsconf, file_key_without_secret_names_file_line_and_profile)
{
    char path[512];

    put_file(".aws/credentials", "[other]\nx = y\n[p]\n\naws_access_key_id = AKIAP\n", path,
             sizeof(path));
    setenv("AWS_PROFILE", "p", 1);
    load_fails(NULL, path, "[p]", "line 5", "aws_secret_access_key is not", NULL);
}

Test(awsconf, file_secret_without_key_is_reported_without_the_secret)
{
    char path[512];

    put_file(".aws/config", "[default]\naws_secret_access_key = " SECRET "\n", path, sizeof(path));
    load_fails(NULL, path, "[default]", "line 2", "aws_access_key_id is not", NULL);
}

Test(awsconf, empty_file_secret_is_econfig)
{
    put_credentials("[default]\naws_access_key_id = AKIA1\naws_secret_access_key =\n");
    load_fails(NULL, "aws_secret_access_key", "empty", NULL);
}

Test(awsconf, secret_with_a_space_is_econfig_without_the_secret)
{
    put_credentials("[default]\naws_access_key_id = AKIA1\naws_secret_access_key = " SECRET " x\n");
    load_fails(NULL, "aws_secret_access_key", "line 3", "space", NULL);
}

Test(awsconf, overlong_session_token_is_econfig)
{
    static char tok[CK_AWS_TOKEN_MAX + 2];

    memset(tok, 'T', sizeof(tok) - 1);
    set_env_keys("AKIAENV");
    setenv("AWS_SESSION_TOKEN", tok, 1);
    load_fails(NULL, "AWS_SESSION_TOKEN", "longer than 4095", NULL);
}

Test(awsconf, explicit_profile_missing_everywhere_is_econfig)
{
    ck_aws_opts o = {.profile = "nope"};

    put_credentials(CREDS_DEFAULT_AND_P);
    load_fails(&o, "profile 'nope'", "--profile", "not found", "[nope]", "[profile nope]", NULL);
}

Test(awsconf, aws_profile_missing_is_econfig_even_with_env_keys)
{
    set_env_keys("AKIAENV");
    setenv("AWS_PROFILE", "nope", 1);
    load_fails(NULL, "profile 'nope'", "AWS_PROFILE", "missing", NULL);
}

Test(awsconf, aws_default_profile_missing_is_econfig)
{
    setenv("AWS_DEFAULT_PROFILE", "nope", 1);
    load_fails(NULL, "profile 'nope'", "AWS_DEFAULT_PROFILE", NULL);
}

Test(awsconf, implicit_default_profile_missing_is_anonymous)
{
    put_config("[profile p]\nregion = eu-west-1\n");
    load_ok(NULL);
    cr_assert_eq(cfg.have_creds, 0);
    cr_assert_str_eq(cfg.access_key, "");
    cr_assert_str_eq(cfg.cred_source, "none");
}

Test(awsconf, no_credentials_anywhere_is_not_an_error)
{
    load_ok(NULL);
    cr_assert_eq(cfg.have_creds, 0);
    cr_assert_str_eq(cfg.region, "us-east-1");
    cr_assert_str_eq(cfg.endpoint, "");
}

Test(awsconf, role_arn_is_not_supported_even_beside_static_keys)
{
    put_credentials("[default]\naws_access_key_id = AKIA1\naws_secret_access_key = " SECRET "\n");
    put_config("[default]\nrole_arn = arn:aws:iam::1:role/r\nsource_profile = default\n");
    load_fails(NULL, "role_arn", "not supported", "export AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY",
               "line 2", NULL);
}

Test(awsconf, credential_process_is_not_supported)
{
    put_config("[profile p]\ncredential_process = /bin/echo " SECRET "\n");
    setenv("AWS_PROFILE", "p", 1);
    load_fails(NULL, "credential_process", "not supported", "export AWS_ACCESS_KEY_ID", NULL);
}

Test(awsconf, credentials_file_keys_come_before_credential_process)
{
    put_credentials("[default]\naws_access_key_id = AKIA1\naws_secret_access_key = s1\n");
    put_config("[default]\ncredential_process = /bin/false\n");
    load_ok(NULL);
    cr_assert_str_eq(cfg.access_key, "AKIA1");
}

Test(awsconf, credential_process_comes_before_config_file_keys)
{
    put_config("[default]\ncredential_process = /bin/false\naws_access_key_id = AKIA1\n"
               "aws_secret_access_key = s1\n");
    load_fails(NULL, "credential_process", "not supported", NULL);
}

Test(awsconf, sso_is_not_supported)
{
    ck_aws_opts o = {.profile = "dev"};

    put_config("[profile dev]\nsso_session = corp\nsso_account_id = 1\n");
    load_fails(&o, "sso_session", "not supported", "export AWS_ACCESS_KEY_ID", "drop --profile",
               NULL);
    put_config("[profile dev]\nsso_start_url = https://x.awsapps.com/start\n");
    load_fails(&o, "sso_start_url", "not supported", NULL);
}

Test(awsconf, web_identity_in_profile_is_not_supported)
{
    put_config("[default]\nweb_identity_token_file = /var/run/token\nrole_arn = arn:x\n");
    load_fails(NULL, "web_identity_token_file", "not supported", NULL);
}

Test(awsconf, web_identity_from_env_is_not_supported)
{
    setenv("AWS_WEB_IDENTITY_TOKEN_FILE", "/var/run/token", 1);
    setenv("AWS_ROLE_ARN", "arn:x", 1);
    load_fails(NULL, "AWS_WEB_IDENTITY_TOKEN_FILE", "not supported",
               "export AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY", NULL);
}

Test(awsconf, web_identity_from_env_is_ignored_with_profile_flag)
{
    ck_aws_opts o = {.profile = "p"};

    put_credentials(CREDS_DEFAULT_AND_P);
    setenv("AWS_WEB_IDENTITY_TOKEN_FILE", "/var/run/token", 1);
    load_ok(&o);
    cr_assert_str_eq(cfg.access_key, "AKIAP");
}

Test(awsconf, env_keys_come_before_unsupported_profile_sources)
{
    put_config("[default]\nrole_arn = arn:x\nsource_profile = default\n");
    set_env_keys("AKIAENV");
    load_ok(NULL);
    cr_assert_str_eq(cfg.access_key, "AKIAENV");
}

/* ---- region ---- */

Test(awsconf, region_flag_wins_over_env)
{
    ck_aws_opts o = {.region = "ap-south-1"};

    setenv("AWS_REGION", "eu-west-1", 1);
    load_ok(&o);
    cr_assert_str_eq(cfg.region, "ap-south-1");
    cr_assert_str_eq(cfg.region_source, "--region");
}

Test(awsconf, aws_region_wins_over_aws_default_region)
{
    setenv("AWS_REGION", "eu-west-1", 1);
    setenv("AWS_DEFAULT_REGION", "eu-west-2", 1);
    load_ok(NULL);
    cr_assert_str_eq(cfg.region, "eu-west-1");
    cr_assert_str_eq(cfg.region_source, "AWS_REGION");
}

Test(awsconf, aws_default_region_wins_over_profile_region)
{
    put_config("[default]\nregion = eu-west-3\n");
    setenv("AWS_DEFAULT_REGION", "eu-west-2", 1);
    load_ok(NULL);
    cr_assert_str_eq(cfg.region, "eu-west-2");
    cr_assert_str_eq(cfg.region_source, "AWS_DEFAULT_REGION");
}

Test(awsconf, profile_region_is_used)
{
    char path[512], want[600];

    put_file(".aws/config", "[default]\nregion = us-east-2\n[profile p]\nregion = eu-west-3\n",
             path, sizeof(path));
    setenv("AWS_PROFILE", "p", 1);
    load_ok(NULL);
    cr_assert_str_eq(cfg.region, "eu-west-3");
    snprintf(want, sizeof(want), "config file %s [profile p]", path);
    cr_assert_str_eq(cfg.region_source, want);
}

Test(awsconf, credentials_file_settings_override_config_file_settings)
{
    put_config("[default]\nregion = us-east-2\n");
    put_credentials("[default]\nregion = eu-central-1\n");
    load_ok(NULL);
    cr_assert_str_eq(cfg.region, "eu-central-1");
}

Test(awsconf, region_defaults_to_us_east_1)
{
    put_config("[default]\nregion =\n");
    load_ok(NULL);
    cr_assert_str_eq(cfg.region, "us-east-1");
    cr_assert_str_eq(cfg.region_source, "default");
}

Test(awsconf, malformed_region_is_econfig)
{
    ck_aws_opts o = {.region = "us east 1"};

    load_fails(&o, "--region", "region", NULL);
    put_config("[default]\nregion = eu-west-1 # comment\n");
    load_fails(NULL, "config file", "line 2", NULL);
}

/* ---- endpoint ---- */

Test(awsconf, endpoint_flag_wins_over_everything)
{
    ck_aws_opts o = {.endpoint = "http://127.0.0.1:9000"};

    setenv("AWS_ENDPOINT_URL_S3", "http://s3env:1", 1);
    setenv("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS", "true", 1);
    load_ok(&o);
    cr_assert_str_eq(cfg.endpoint, "http://127.0.0.1:9000");
    cr_assert_str_eq(cfg.endpoint_source, "--endpoint");
}

Test(awsconf, s3_endpoint_variable_wins_over_global_one)
{
    setenv("AWS_ENDPOINT_URL_S3", "http://s3env:1", 1);
    setenv("AWS_ENDPOINT_URL", "http://globalenv:1", 1);
    load_ok(NULL);
    cr_assert_str_eq(cfg.endpoint, "http://s3env:1");
    cr_assert_str_eq(cfg.endpoint_source, "AWS_ENDPOINT_URL_S3");
}

Test(awsconf, global_endpoint_variable_wins_over_config)
{
    put_config("[default]\ns3 =\n  endpoint_url = http://nested:1\nendpoint_url = http://flat:1\n");
    setenv("AWS_ENDPOINT_URL", "https://globalenv", 1);
    load_ok(NULL);
    cr_assert_str_eq(cfg.endpoint, "https://globalenv");
    cr_assert_str_eq(cfg.endpoint_source, "AWS_ENDPOINT_URL");
}

Test(awsconf, nested_s3_endpoint_wins_over_profile_endpoint)
{
    char path[512], want[600];

    put_file(".aws/config",
             "[default]\nendpoint_url = http://flat:1\ns3 =\n  endpoint_url = http://nested:1\n"
             "  addressing_style = path\n",
             path, sizeof(path));
    load_ok(NULL);
    cr_assert_str_eq(cfg.endpoint, "http://nested:1");
    snprintf(want, sizeof(want), "config file %s [default]", path);
    cr_assert_str_eq(cfg.endpoint_source, want);
}

Test(awsconf, profile_endpoint_is_used)
{
    put_config("[default]\nendpoint_url = http://flat:1\n");
    load_ok(NULL);
    cr_assert_str_eq(cfg.endpoint, "http://flat:1");
}

Test(awsconf, no_endpoint_means_aws)
{
    put_config("[default]\nregion = eu-west-1\n");
    load_ok(NULL);
    cr_assert_str_eq(cfg.endpoint, "");
    cr_assert_str_eq(cfg.endpoint_source, "default");
}

Test(awsconf, ignore_configured_endpoints_variable_skips_env_and_config)
{
    put_config("[default]\nendpoint_url = http://flat:1\n");
    setenv("AWS_ENDPOINT_URL", "http://globalenv:1", 1);
    setenv("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS", "TRUE", 1);
    load_ok(NULL);
    cr_assert_str_eq(cfg.endpoint, "");
    setenv("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS", "false", 1);
    load_ok(NULL);
    cr_assert_str_eq(cfg.endpoint, "http://globalenv:1");
}

Test(awsconf, ignore_configured_endpoints_profile_setting_and_its_override)
{
    put_config("[default]\nendpoint_url = http://flat:1\nignore_configured_endpoint_urls = true\n");
    load_ok(NULL);
    cr_assert_str_eq(cfg.endpoint, "");
    setenv("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS", "false", 1);
    load_ok(NULL);
    cr_assert_str_eq(cfg.endpoint, "http://flat:1");
}

Test(awsconf, services_section_endpoint_is_used)
{
    put_config("[default]\nservices = local\nendpoint_url = http://flat:1\n"
               "[services local]\ns3 =\n  endpoint_url = http://svc:9000\n");
    load_ok(NULL);
    cr_assert_str_eq(cfg.endpoint, "http://svc:9000");
    cr_assert_not_null(strstr(cfg.endpoint_source, "[services local]"));
}

Test(awsconf, missing_services_section_is_econfig)
{
    put_config("[default]\nservices = local\n");
    load_fails(NULL, "services", "[services local]", "line 2", NULL);
}

Test(awsconf, endpoint_without_scheme_is_econfig)
{
    setenv("AWS_ENDPOINT_URL", "minio:9000", 1);
    load_fails(NULL, "AWS_ENDPOINT_URL", "http://", NULL);
}

/* ---- CA bundle and addressing ---- */

Test(awsconf, ca_bundle_precedence)
{
    ck_aws_opts o = {.ca_bundle = "/flag.pem"};

    put_config("[default]\nca_bundle = /profile.pem\n");
    load_ok(NULL);
    cr_assert_str_eq(cfg.ca_bundle, "/profile.pem");
    setenv("AWS_CA_BUNDLE", "/env.pem", 1);
    load_ok(NULL);
    cr_assert_str_eq(cfg.ca_bundle, "/env.pem");
    load_ok(&o);
    cr_assert_str_eq(cfg.ca_bundle, "/flag.pem");
}

Test(awsconf, no_ca_bundle_is_empty)
{
    load_ok(NULL);
    cr_assert_str_eq(cfg.ca_bundle, "");
}

Test(awsconf, addressing_style_from_nested_s3_section)
{
    load_ok(NULL);
    cr_assert_eq(cfg.addressing, CK_AWS_ADDR_UNSET);
    put_config("[default]\ns3 =\n  addressing_style = path\n");
    load_ok(NULL);
    cr_assert_eq(cfg.addressing, CK_AWS_ADDR_PATH);
    put_config("[default]\ns3 =\n  addressing_style = virtual\n");
    load_ok(NULL);
    cr_assert_eq(cfg.addressing, CK_AWS_ADDR_VIRTUAL);
    put_config("[default]\ns3 =\n  addressing_style = auto\n");
    load_ok(NULL);
    cr_assert_eq(cfg.addressing, CK_AWS_ADDR_AUTO);
}

Test(awsconf, unknown_addressing_style_is_econfig)
{
    put_config("[default]\ns3 =\n  addressing_style = sideways\n");
    load_fails(NULL, "addressing_style", "line 3", NULL);
}

/* ---- file syntax ---- */

Test(awsconf, comments_are_whole_lines_only)
{
    put_config("# top comment\n; another\n[default]\n# region = eu-west-1\n  ; indented comment\n"
               "ca_bundle = /a;b#c\n");
    load_ok(NULL);
    cr_assert_str_eq(cfg.region, "us-east-1");
    cr_assert_str_eq(cfg.ca_bundle, "/a;b#c");
}

Test(awsconf, crlf_line_ends_are_tolerated)
{
    put_credentials("[default]\r\naws_access_key_id = AKIA1\r\naws_secret_access_key = s1\r\n");
    put_config("[default]\r\nregion = eu-west-1\r\ns3 =\r\n  addressing_style = path\r\n");
    load_ok(NULL);
    cr_assert_str_eq(cfg.access_key, "AKIA1");
    cr_assert_str_eq(cfg.secret_key, "s1");
    cr_assert_str_eq(cfg.region, "eu-west-1");
    cr_assert_eq(cfg.addressing, CK_AWS_ADDR_PATH);
}

Test(awsconf, spaces_around_delimiter_colon_and_name_case)
{
    put_credentials("[default]\nAWS_ACCESS_KEY_ID=AKIA1\naws_secret_access_key:s1\n");
    put_config("[default]\n\tregion   =   eu-north-1   \n");
    load_ok(NULL);
    cr_assert_str_eq(cfg.access_key, "AKIA1");
    cr_assert_str_eq(cfg.secret_key, "s1");
    cr_assert_str_eq(cfg.region, "eu-north-1");
}

Test(awsconf, later_duplicates_win_and_sections_merge)
{
    put_config("[default]\nregion = us-east-2\n[profile x]\nregion = ap-east-1\n[default]\n"
               "region = eu-west-1\nca_bundle = /a.pem\n[default]\nca_bundle = /b.pem\n");
    load_ok(NULL);
    cr_assert_str_eq(cfg.region, "eu-west-1");
    cr_assert_str_eq(cfg.ca_bundle, "/b.pem");
}

Test(awsconf, nested_block_ends_at_an_unindented_line)
{
    put_config("[default]\ns3 =\n  addressing_style = virtual\n\n  # comment in block\n"
               "  endpoint_url = http://nested:1\nregion = eu-west-1\n");
    load_ok(NULL);
    cr_assert_eq(cfg.addressing, CK_AWS_ADDR_VIRTUAL);
    cr_assert_str_eq(cfg.endpoint, "http://nested:1");
    cr_assert_str_eq(cfg.region, "eu-west-1");
}

Test(awsconf, nested_block_of_another_profile_does_not_leak)
{
    put_config("[profile other]\ns3 =\n  addressing_style = path\n  endpoint_url = http://o:1\n"
               "[default]\nregion = eu-west-1\n");
    load_ok(NULL);
    cr_assert_eq(cfg.addressing, CK_AWS_ADDR_UNSET);
    cr_assert_str_eq(cfg.endpoint, "");
}

Test(awsconf, later_s3_block_replaces_the_earlier_one)
{
    put_config("[default]\ns3 =\n  addressing_style = path\n  endpoint_url = http://a:1\n"
               "s3 =\n  endpoint_url = http://b:1\n");
    load_ok(NULL);
    cr_assert_eq(cfg.addressing, CK_AWS_ADDR_UNSET);
    cr_assert_str_eq(cfg.endpoint, "http://b:1");
}

Test(awsconf, indented_settings_at_the_same_depth_are_separate)
{
    put_config("[default]\n  region = eu-west-1\n  ca_bundle = /x.pem\n");
    load_ok(NULL);
    cr_assert_str_eq(cfg.region, "eu-west-1");
    cr_assert_str_eq(cfg.ca_bundle, "/x.pem");
}

Test(awsconf, nested_line_without_equals_is_econfig)
{
    char path[512];

    put_file(".aws/config", "[default]\ns3 =\n  addressing_style path\n", path, sizeof(path));
    load_fails(NULL, path, "line 3", NULL);
}

Test(awsconf, value_continued_on_indented_line_is_econfig_when_used)
{
    put_config("[default]\nregion = eu-west-1\n  more\n");
    load_fails(NULL, "region", "line 2", "indented", NULL);
}

Test(awsconf, line_without_delimiter_is_econfig_with_file_and_line)
{
    char path[512];

    put_file(".aws/credentials",
             "[default]\naws_access_key_id = AKIA1\naws_secret_access_key = " SECRET "\njunk\n",
             path, sizeof(path));
    load_fails(NULL, path, "line 4", NULL);
}

Test(awsconf, setting_before_any_section_is_econfig)
{
    put_config("region = eu-west-1\n[default]\n");
    load_fails(NULL, "config file", "line 1", "section", NULL);
}

Test(awsconf, overlong_line_is_econfig_with_file_and_line)
{
    static char text[CK_AWS_LINE_MAX + 64];
    size_t n;

    n = (size_t)snprintf(text, sizeof(text), "[default]\n#"); /* '#' + 8192 bytes */
    memset(text + n, 'x', CK_AWS_LINE_MAX);
    text[n + CK_AWS_LINE_MAX] = '\n';
    put_config(text);
    load_fails(NULL, "config file", "line 2", "longer than 8192", NULL);
}

Test(awsconf, line_at_the_cap_is_accepted)
{
    static char text[CK_AWS_LINE_MAX + 64];
    size_t n;

    n = (size_t)snprintf(text, sizeof(text), "[default]\n#");
    memset(text + n, 'x', CK_AWS_LINE_MAX - 1);
    text[n + CK_AWS_LINE_MAX - 1] = '\n';
    put_config(text);
    load_ok(NULL);
}

Test(awsconf, oversized_file_is_econfig)
{
    char *text = malloc(CK_AWS_FILE_MAX + 2);
    size_t i;

    cr_assert_not_null(text);
    for (i = 0; i < CK_AWS_FILE_MAX + 1; i++)
        text[i] = i % 64 == 63 ? '\n' : '#';
    text[CK_AWS_FILE_MAX + 1] = '\0';
    put_config(text);
    free(text);
    load_fails(NULL, "config file", "larger than", NULL);
}

Test(awsconf, byte_order_mark_is_skipped)
{
    put_config("\xef\xbb\xbf[default]\nregion = eu-west-1\n");
    load_ok(NULL);
    cr_assert_str_eq(cfg.region, "eu-west-1");
}

Test(awsconf, quoted_profile_name_in_config_header)
{
    put_config("[profile \"p\"]\nregion = eu-west-1\n");
    setenv("AWS_PROFILE", "p", 1);
    load_ok(NULL);
    cr_assert_str_eq(cfg.region, "eu-west-1");
}

/* ---- files ---- */

Test(awsconf, missing_default_files_are_fine)
{
    setenv("AWS_REGION", "eu-west-1", 1);
    load_ok(NULL);
    cr_assert_eq(cfg.have_creds, 0);
    cr_assert_str_eq(cfg.region, "eu-west-1");
}

Test(awsconf, named_files_replace_the_default_ones)
{
    char cred[512], conf[512];

    put_credentials(CREDS_DEFAULT_AND_P);
    put_config("[default]\nregion = us-east-2\n");
    put_file("mycreds", "[default]\naws_access_key_id = AKIANAMED\naws_secret_access_key = s\n",
             cred, sizeof(cred));
    put_file("myconf", "[default]\nregion = sa-east-1\n", conf, sizeof(conf));
    setenv("AWS_SHARED_CREDENTIALS_FILE", cred, 1);
    setenv("AWS_CONFIG_FILE", conf, 1);
    load_ok(NULL);
    cr_assert_str_eq(cfg.access_key, "AKIANAMED");
    cr_assert_str_eq(cfg.region, "sa-east-1");
}

Test(awsconf, named_file_path_expands_tilde)
{
    put_file("myconf", "[default]\nregion = sa-east-1\n", NULL, 0);
    setenv("AWS_CONFIG_FILE", "~/myconf", 1);
    load_ok(NULL);
    cr_assert_str_eq(cfg.region, "sa-east-1");
}

Test(awsconf, unreadable_named_config_file_is_econfig)
{
    char path[600];

    snprintf(path, sizeof(path), "%s/absent", home);
    setenv("AWS_CONFIG_FILE", path, 1);
    load_fails(NULL, path, "AWS_CONFIG_FILE", NULL);
}

Test(awsconf, unreadable_named_credentials_file_is_econfig)
{
    char path[600];

    snprintf(path, sizeof(path), "%s/absent", home);
    setenv("AWS_SHARED_CREDENTIALS_FILE", path, 1);
    set_env_keys("AKIAENV");
    load_fails(NULL, path, "AWS_SHARED_CREDENTIALS_FILE", NULL);
}

Test(awsconf, default_file_that_exists_but_cannot_be_read_is_econfig)
{
    char path[600];

    snprintf(path, sizeof(path), "%s/.aws", home);
    cr_assert_eq(mkdir(path, 0700), 0);
    snprintf(path, sizeof(path), "%s/.aws/config", home);
    cr_assert_eq(mkdir(path, 0700), 0); /* a directory: open works, read fails */
    load_fails(NULL, path, NULL);
}

Test(awsconf, home_unset_uses_only_the_environment)
{
    put_credentials(CREDS_DEFAULT_AND_P);
    put_config("[default]\nregion = eu-west-1\nendpoint_url = http://flat:1\n");
    unsetenv("HOME");
    load_ok(NULL);
    cr_assert_eq(cfg.have_creds, 0);
    cr_assert_str_eq(cfg.region, "us-east-1");
    cr_assert_str_eq(cfg.endpoint, "");
    set_env_keys("AKIAENV");
    setenv("AWS_REGION", "eu-west-2", 1);
    load_ok(NULL);
    cr_assert_str_eq(cfg.access_key, "AKIAENV");
    cr_assert_str_eq(cfg.region, "eu-west-2");
}

Test(awsconf, home_unset_and_named_profile_is_econfig)
{
    unsetenv("HOME");
    setenv("AWS_PROFILE", "p", 1);
    load_fails(NULL, "profile 'p'", "HOME unset", NULL);
}

Test(awsconf, empty_option_is_econfig)
{
    ck_aws_opts o = {.profile = ""};

    load_fails(&o, "--profile is empty", NULL);
}

Test(awsconf, error_clears_credentials_already_found)
{
    set_env_keys("AKIAENV");
    setenv("AWS_SESSION_TOKEN", TOKEN, 1);
    setenv("AWS_REGION", "not a region", 1);
    load_fails(NULL, "AWS_REGION", NULL);
}
