/*
 * test_buf - the capped growable buffer everything read from outside goes through: contents are
 * always NUL-terminated, and no append or printf ever takes it past its hard cap.
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"

Test(buf, init_is_empty)
{
    ck_buf b;

    ck_buf_init(&b, 100);
    cr_assert_null(b.data);
    cr_assert_eq(b.len, 0);
    cr_assert_eq(b.max, 100);
    ck_buf_cleanup(&b);
}

Test(buf, append_keeps_data_nul_terminated)
{
    ck_buf b;

    ck_buf_init(&b, 100);
    cr_assert_eq(ck_buf_append(&b, "abc", 3), S3CKPT_OK);
    cr_assert_eq(b.len, 3);
    cr_assert_str_eq(b.data, "abc");
    cr_assert_eq(ck_buf_append(&b, "de", 2), S3CKPT_OK);
    cr_assert_eq(b.len, 5);
    cr_assert_str_eq(b.data, "abcde");
    ck_buf_cleanup(&b);
    cr_assert_null(b.data);
    cr_assert_eq(b.len, 0);
    cr_assert_eq(b.max, 100, "cleanup keeps the cap");
}

Test(buf, append_of_nothing_gives_an_empty_string)
{
    ck_buf b;

    ck_buf_init(&b, 10);
    cr_assert_eq(ck_buf_append(&b, "", 0), S3CKPT_OK);
    cr_assert_not_null(b.data);
    cr_assert_str_eq(b.data, "");
    ck_buf_cleanup(&b);
}

Test(buf, holds_binary_data_with_nul_bytes)
{
    static const char bin[] = {'a', '\0', 'b', '\xff'};
    ck_buf b;

    ck_buf_init(&b, 10);
    cr_assert_eq(ck_buf_append(&b, bin, sizeof(bin)), S3CKPT_OK);
    cr_assert_eq(b.len, 4);
    cr_assert_eq(memcmp(b.data, bin, 4), 0);
    cr_assert_eq(b.data[4], '\0');
    ck_buf_cleanup(&b);
}

Test(buf, append_up_to_the_cap_succeeds)
{
    ck_buf b;

    ck_buf_init(&b, 6);
    cr_assert_eq(ck_buf_append(&b, "abc", 3), S3CKPT_OK);
    cr_assert_eq(ck_buf_append(&b, "def", 3), S3CKPT_OK);
    cr_assert_eq(b.len, 6);
    cr_assert_str_eq(b.data, "abcdef");
    ck_buf_cleanup(&b);
}

Test(buf, append_past_the_cap_is_einval_and_leaves_buffer_unchanged)
{
    ck_buf b;

    ck_buf_init(&b, 6);
    cr_assert_eq(ck_buf_append(&b, "abcd", 4), S3CKPT_OK);
    cr_assert_eq(ck_buf_append(&b, "efg", 3), S3CKPT_EINVAL);
    cr_assert_eq(b.len, 4);
    cr_assert_str_eq(b.data, "abcd");
    cr_assert_eq(ck_buf_append(&b, "x", 1), S3CKPT_OK, "smaller appends still fit");
    ck_buf_cleanup(&b);
}

Test(buf, zero_cap_refuses_any_byte)
{
    ck_buf b;

    ck_buf_init(&b, 0);
    cr_assert_eq(ck_buf_append(&b, "x", 1), S3CKPT_EINVAL);
    cr_assert_eq(b.len, 0);
    ck_buf_cleanup(&b);
}

Test(buf, huge_append_fails_without_writing)
{
    ck_buf b;

    /* even with no practical cap, a length that cannot be allocated must fail cleanly */
    ck_buf_init(&b, SIZE_MAX);
    cr_assert_neq(ck_buf_append(&b, "x", SIZE_MAX), S3CKPT_OK);
    cr_assert_eq(b.len, 0);
    ck_buf_cleanup(&b);
}

Test(buf, grows_over_many_appends)
{
    ck_buf b;
    size_t i;

    ck_buf_init(&b, 1 << 20);
    for (i = 0; i < 100000; i++)
        cr_assert_eq(ck_buf_append(&b, i % 2 ? "b" : "a", 1), S3CKPT_OK);
    cr_assert_eq(b.len, 100000);
    cr_assert_geq(b.cap, b.len + 1);
    cr_assert_eq(b.data[99998], 'a');
    cr_assert_eq(b.data[99999], 'b');
    cr_assert_eq(b.data[100000], '\0');
    ck_buf_cleanup(&b);
}

Test(buf, printf_appends_formatted_text)
{
    ck_buf b;

    ck_buf_init(&b, 100);
    cr_assert_eq(ck_buf_printf(&b, "%s-%05d", "step", 42), S3CKPT_OK);
    cr_assert_eq(ck_buf_printf(&b, "/%zu", (size_t)7), S3CKPT_OK);
    cr_assert_str_eq(b.data, "step-00042/7");
    cr_assert_eq(b.len, strlen("step-00042/7"));
    ck_buf_cleanup(&b);
}

Test(buf, printf_past_the_cap_is_einval_and_leaves_buffer_unchanged)
{
    ck_buf b;

    ck_buf_init(&b, 8);
    cr_assert_eq(ck_buf_printf(&b, "%s", "abcde"), S3CKPT_OK);
    cr_assert_eq(ck_buf_printf(&b, "%d", 1234), S3CKPT_EINVAL);
    cr_assert_eq(b.len, 5);
    cr_assert_str_eq(b.data, "abcde");
    cr_assert_eq(ck_buf_printf(&b, "%d", 123), S3CKPT_OK);
    cr_assert_str_eq(b.data, "abcde123");
    ck_buf_cleanup(&b);
}

Test(buf, detach_hands_over_data_and_resets)
{
    ck_buf b;
    char *p;

    ck_buf_init(&b, 50);
    cr_assert_eq(ck_buf_append(&b, "hello", 5), S3CKPT_OK);
    p = ck_buf_detach(&b);
    cr_assert_str_eq(p, "hello");
    cr_assert_null(b.data);
    cr_assert_eq(b.len, 0);
    cr_assert_eq(b.max, 50);
    cr_assert_eq(ck_buf_append(&b, "again", 5), S3CKPT_OK);
    cr_assert_str_eq(b.data, "again");
    cr_assert_str_eq(p, "hello", "detached data must be independent");
    free(p);
    ck_buf_cleanup(&b);
}

Test(buf, detach_of_empty_buffer_is_null)
{
    ck_buf b;

    ck_buf_init(&b, 50);
    cr_assert_null(ck_buf_detach(&b));
}
