/*
 * test_path - checkpoint-relative path validation, checkpoint names, default name derivation
 * and the path order manifests are sorted by.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "path.h"

static char why[256];

static void accepts(const char *p)
{
    why[0] = '\0';
    cr_assert_eq(ck_path_check(p, why, sizeof(why)), 0, "\"%s\" rejected: %s", p, why);
}

static void rejects(const char *p, const char *needle)
{
    why[0] = '\0';
    cr_assert_eq(ck_path_check(p, why, sizeof(why)), -1, "\"%s\" accepted", p);
    cr_assert_not_null(strstr(why, needle), "\"%s\": why \"%s\" lacks \"%s\"", p, why, needle);
}

static char *repeat(char c, size_t n)
{
    char *s = malloc(n + 1);

    cr_assert_not_null(s);
    memset(s, c, n);
    s[n] = '\0';
    return s;
}

/* ---- ck_path_check ---- */

Test(path, accepts_single_component)
{
    accepts("a");
    accepts("model.safetensors");
}

Test(path, accepts_spaces_and_utf8)
{
    accepts("a/b c/\xc3\xbc.txt"); /* "a/b c/ü.txt" */
    accepts("optimizer state/shard 00001-of-00008.bin");
}

Test(path, accepts_names_that_merely_contain_dots)
{
    accepts("..a");
    accepts("a..");
    accepts(".hidden");
    accepts("...");
    accepts("a/.git/config");
    accepts("x/..y/z.");
}

Test(path, rejects_empty_path)
{
    rejects("", "empty");
}

Test(path, rejects_absolute_path)
{
    rejects("/a", "absolute");
    rejects("/", "absolute");
}

Test(path, rejects_trailing_slash)
{
    rejects("a/", "empty path component");
}

Test(path, rejects_empty_component)
{
    rejects("a//b", "empty path component");
}

Test(path, rejects_dot_component)
{
    rejects(".", "'.' or '..'");
    rejects("a/./b", "'.' or '..'");
    rejects("a/.", "'.' or '..'");
}

Test(path, rejects_dotdot_component)
{
    rejects("..", "'.' or '..'");
    rejects("../a", "'.' or '..'");
    rejects("a/../b", "'.' or '..'");
    rejects("a/..", "'.' or '..'");
}

Test(path, rejects_control_characters)
{
    rejects("a\tb", "control character");
    rejects("a\nb", "control character");
    rejects("a/\x01", "control character");
    rejects("a\x1f", "control character");
    rejects("del\x7f", "control character");
}

Test(path, accepts_component_of_255_bytes)
{
    char *c = repeat('x', 255);

    accepts(c);
    free(c);
}

Test(path, rejects_component_over_255_bytes)
{
    char *c = repeat('x', 256), p[300];

    rejects(c, "longer than 255");
    snprintf(p, sizeof(p), "a/%s", c);
    rejects(p, "longer than 255");
    free(c);
}

/* n bytes of "xxx…/xxx…" with components of 200 bytes. */
static char *long_path(size_t n)
{
    char *p = repeat('x', n);
    size_t i;

    for (i = 200; i < n - 1; i += 201)
        p[i] = '/';
    return p;
}

Test(path, accepts_path_of_3839_bytes)
{
    char *p = long_path(CK_PATH_MAX - 1);

    cr_assert_eq(strlen(p), 3839);
    accepts(p);
    free(p);
}

Test(path, rejects_path_of_3840_bytes_or_more)
{
    char *p = long_path(CK_PATH_MAX);

    rejects(p, "longer than 3839");
    free(p);
    p = long_path(CK_PATH_MAX + 1000);
    rejects(p, "longer than");
    free(p);
}

/* ---- ck_name_check ---- */

static void name_ok(const char *n)
{
    why[0] = '\0';
    cr_assert_eq(ck_name_check(n, why, sizeof(why)), 0, "\"%s\" rejected: %s", n, why);
}

static void name_bad(const char *n, const char *needle)
{
    why[0] = '\0';
    cr_assert_eq(ck_name_check(n, why, sizeof(why)), -1, "\"%s\" accepted", n);
    cr_assert_not_null(strstr(why, needle), "\"%s\": why \"%s\"", n, why);
}

Test(name, accepts_letters_digits_dot_underscore_dash)
{
    name_ok("step-00000100");
    name_ok("run_1.final");
    name_ok("A");
    name_ok("-x");
    name_ok("latest2");
    name_ok("Latest");
}

Test(name, accepts_128_characters)
{
    char *n = repeat('n', CK_NAME_MAX);

    name_ok(n);
    free(n);
}

Test(name, rejects_empty_and_over_128_characters)
{
    char *n = repeat('n', CK_NAME_MAX + 1);

    name_bad("", "1 to 128");
    name_bad(n, "1 to 128");
    free(n);
}

Test(name, rejects_leading_dot)
{
    name_bad(".", "start with '.'");
    name_bad("..", "start with '.'");
    name_bad(".hidden", "start with '.'");
}

Test(name, rejects_latest)
{
    name_bad("latest", "reserved");
}

Test(name, rejects_characters_outside_the_alphabet)
{
    name_bad("a/b", "letters, digits");
    name_bad("a b", "letters, digits");
    name_bad("run:1", "letters, digits");
    name_bad("\xc3\xbc", "letters, digits");
    name_bad("a\nb", "letters, digits");
}

/* ---- ck_name_derive ---- */

static void derives(const char *source, int64_t step, const char *want)
{
    char out[CK_NAME_MAX + 1];

    memset(out, '#', sizeof(out));
    ck_name_derive(source, step, out, sizeof(out));
    cr_assert_str_eq(out, want, "source \"%s\" step %lld", source, (long long)step);
    cr_assert_eq(ck_name_check(out, why, sizeof(why)), 0, "derived \"%s\" invalid: %s", out, why);
}

Test(name, derive_uses_step_when_given)
{
    derives("/x/y/run_1", 100, "step-00000100");
    derives("/x/y/run_1", 0, "step-00000000");
    derives("anything", 123456789, "step-123456789");
}

Test(name, derive_takes_basename_ignoring_trailing_slashes)
{
    derives("/x/y/run_1/", -1, "run_1");
    derives("/x/y/run_1//", -1, "run_1");
    derives("run_1", -1, "run_1");
    derives("ckpt/epoch3.pt", -1, "epoch3.pt");
}

Test(name, derive_replaces_bad_characters_with_dash)
{
    derives("/data/my model@v2", -1, "my-model-v2");
    derives("/data/\xc3\xbc", -1, "--");
}

Test(name, derive_strips_leading_dots)
{
    derives("/x/.hidden", -1, "hidden");
    derives("..a", -1, "a");
}

Test(name, derive_falls_back_to_checkpoint)
{
    derives(".", -1, "checkpoint");
    derives("..", -1, "checkpoint");
    derives("/", -1, "checkpoint");
    derives("", -1, "checkpoint");
    derives("/x/...", -1, "checkpoint");
}

Test(name, derive_never_yields_latest)
{
    derives("latest", -1, "checkpoint");
    derives("/runs/latest/", -1, "checkpoint");
    derives("/runs/.latest", -1, "checkpoint");
}

Test(name, derive_truncates_to_128_characters)
{
    char *src = repeat('r', 300), out[400];

    ck_name_derive(src, -1, out, sizeof(out));
    cr_assert_eq(strlen(out), CK_NAME_MAX);
    cr_assert_eq(ck_name_check(out, why, sizeof(why)), 0, "%s", why);
    free(src);
}

Test(name, derive_respects_small_output_buffer)
{
    char out[8];

    memset(out, '#', sizeof(out));
    ck_name_derive("/x/abcdefghijkl", -1, out, 6);
    cr_assert_str_eq(out, "abcde");
    cr_assert_eq(out[6], '#', "wrote past out_len");
}

/* ---- ck_path_cmp ---- */

Test(path, cmp_puts_children_right_after_their_directory)
{
    cr_assert_lt(ck_path_cmp("a", "a/b"), 0);
    cr_assert_lt(ck_path_cmp("a/b", "a.b"), 0);
    cr_assert_lt(ck_path_cmp("a", "a.b"), 0);
    cr_assert_lt(ck_path_cmp("a/z", "a-b"), 0);
    cr_assert_lt(ck_path_cmp("a/b/c", "a/b.c"), 0);
    cr_assert_gt(ck_path_cmp("a.b", "a/b"), 0);
    cr_assert_gt(ck_path_cmp("a/b", "a"), 0);
    cr_assert_eq(ck_path_cmp("a/b", "a/b"), 0);
    cr_assert_eq(ck_path_cmp("", ""), 0);
}

Test(path, cmp_orders_other_bytes_as_unsigned)
{
    cr_assert_lt(ck_path_cmp("a", "b"), 0);
    cr_assert_lt(ck_path_cmp("Z", "a"), 0);
    cr_assert_lt(ck_path_cmp("z", "\xc3\xbc"), 0); /* 0xc3 > 'z' as unsigned */
    cr_assert_lt(ck_path_cmp("ab", "abc"), 0);
}

static int cmp_ptr(const void *a, const void *b)
{
    return ck_path_cmp(*(const char *const *)a, *(const char *const *)b);
}

Test(path, cmp_sorts_with_qsort_as_documented)
{
    const char *in[] = {"b",   "a.b",   "a/c", "a-b",  "a",       "a/b/c",
                        "a/b", "a/b.c", "a!",  "a/b!", "\xc3\xbc"};
    const char *want[] = {"a",  "a/b", "a/b/c", "a/b!", "a/b.c",   "a/c",
                          "a!", "a-b", "a.b",   "b",    "\xc3\xbc"};
    size_t n = sizeof(in) / sizeof(in[0]), i;

    cr_assert_eq(n, sizeof(want) / sizeof(want[0]));
    qsort(in, n, sizeof(in[0]), cmp_ptr);
    for (i = 0; i < n; i++)
        cr_assert_str_eq(in[i], want[i], "position %zu", i);
}

Test(path, cmp_is_antisymmetric_and_transitive_on_samples)
{
    const char *s[] = {"a", "a/b", "a.b", "a!", "a/", "a/b/c", "ab", "a-", "/", "b", "a//"};
    size_t n = sizeof(s) / sizeof(s[0]), i, j, k;

    for (i = 0; i < n; i++)
        for (j = 0; j < n; j++) {
            int x = ck_path_cmp(s[i], s[j]), y = ck_path_cmp(s[j], s[i]);

            cr_assert_eq((x > 0) - (x < 0), -((y > 0) - (y < 0)), "%s vs %s", s[i], s[j]);
            for (k = 0; k < n; k++)
                if (x < 0 && ck_path_cmp(s[j], s[k]) < 0)
                    cr_assert_lt(ck_path_cmp(s[i], s[k]), 0, "%s < %s < %s", s[i], s[j], s[k]);
        }
}
