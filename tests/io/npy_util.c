/* Helpers for the .npy tests. */
#define _XOPEN_SOURCE 700
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include "npy_util.h"

size_t npy_build(unsigned char *buf, size_t cap, int major, const char *header, const void *data, size_t n)
{
    const size_t hlen = strlen(header), pre = major == 1 ? 10 : 12;
    assert_true(pre + hlen + n <= cap);
    memcpy(buf, "\x93NUMPY", 6);
    buf[6] = (unsigned char)major;
    buf[7] = 0;
    for (size_t i = 0; i < pre - 8; i++)
        buf[8 + i] = (unsigned char)(hlen >> (8 * i));
    memcpy(buf + pre, header, hlen);
    if (n)
        memcpy(buf + pre + hlen, data, n);
    return pre + hlen + n;
}

static unsigned char image[1 << 16];

const char *npy_expect_error(mxp_status st, int major, const char *header, const void *data, size_t n)
{
    size_t size = npy_build(image, sizeof image, major, header, data, n);
    mxp_array *a = (mxp_array *)image; /* must be reset to NULL */
    mxp_status got = mxp_npy_load_buffer(&a, image, size);
    if (got != st)
        fail_msg("header %s: expected %s, got %s (%s)", header, mxp_status_str(st), mxp_status_str(got),
                 mxp_last_error());
    assert_null(a);
    return mxp_last_error();
}

mxp_array *npy_expect_ok(int major, const char *header, const void *data, size_t n)
{
    size_t size = npy_build(image, sizeof image, major, header, data, n);
    mxp_array *a = NULL;
    mxp_status got = mxp_npy_load_buffer(&a, image, size);
    if (got != MXP_OK)
        fail_msg("header %s: %s (%s)", header, mxp_status_str(got), mxp_last_error());
    return a;
}

void npy_assert_contains(const char *text, const char *part)
{
    if (!strstr(text, part))
        fail_msg("'%s' does not contain '%s'", text, part);
}

void npy_fresh_dir(const char *dir)
{
    DIR *d = opendir(dir);
    for (struct dirent *e; d && (e = readdir(d)) != NULL;) {
        char path[512];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            unlink(path);
    }
    if (d)
        closedir(d);
    mkdir(dir, 0777);
}

int npy_count_entries(const char *dir, const char *temp_prefix, bool *temp_seen)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    int n = 0;
    *temp_seen = false;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        n++;
        *temp_seen |= !strncmp(e->d_name, temp_prefix, strlen(temp_prefix));
    }
    closedir(d);
    return n;
}
