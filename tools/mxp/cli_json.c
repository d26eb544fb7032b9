/* --json: one JSON object on stdout, written as the command goes (a
 * benchmark's rows appear as they are measured).  One document per
 * process, so the nesting state is kept here. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>

#include "cli.h"

enum { MAX_DEPTH = 16 };

static int depth;                    /* open objects and arrays */
static char closer[MAX_DEPTH];       /* '}' or ']' for each */
static bool need_comma[MAX_DEPTH];   /* something was written at this level */

void cli_json_put_string(const char *s)
{
    putchar('"');
    for (; *s; s++) {
        const unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            printf("\\%c", c);
        else if (c == '\n')
            printf("\\n");
        else if (c < 0x20)
            printf("\\u%04x", c);
        else
            putchar(c);
    }
    putchar('"');
}

/* The comma before a member and its key ("key":), if any. */
static void member(const char *key)
{
    if (need_comma[depth])
        putchar(',');
    need_comma[depth] = true;
    if (key) {
        cli_json_put_string(key);
        putchar(':');
    }
}

static void open_level(const char *key, char open, char close)
{
    member(key);
    putchar(open);
    if (depth + 1 < MAX_DEPTH) {
        depth++;
        closer[depth] = close;
        need_comma[depth] = false;
    }
}

void cli_json_begin(const char *command)
{
    depth = 0;
    need_comma[0] = false;
    open_level(NULL, '{', '}');
    cli_json_str("command", command);
}

void cli_json_end(void)
{
    while (depth > 0)
        cli_json_close();
    putchar('\n');
    fflush(stdout);
}

void cli_json_object(const char *key)
{
    open_level(key, '{', '}');
}

void cli_json_array(const char *key)
{
    open_level(key, '[', ']');
}

void cli_json_close(void)
{
    if (depth > 0)
        putchar(closer[depth--]);
    if (depth == 1)
        fflush(stdout); /* a finished row of a benchmark */
}

void cli_json_str(const char *key, const char *v)
{
    member(key);
    if (v)
        cli_json_put_string(v);
    else
        printf("null");
}

void cli_json_num(const char *key, double v)
{
    member(key);
    if (!isfinite(v)) {
        printf("null");
        return;
    }
    char buf[32];
    snprintf(buf, sizeof buf, "%.15g", v); /* the shortest of these that reads back */
    double back;
    if (sscanf(buf, "%lf", &back) != 1 || back != v)
        snprintf(buf, sizeof buf, "%.17g", v);
    fputs(buf, stdout);
}

void cli_json_int(const char *key, long long v)
{
    member(key);
    printf("%lld", v);
}

void cli_json_uint(const char *key, unsigned long long v)
{
    member(key);
    printf("%llu", v);
}

void cli_json_bool(const char *key, bool v)
{
    member(key);
    printf(v ? "true" : "false");
}

void cli_json_null(const char *key)
{
    member(key);
    printf("null");
}

void cli_json_shape(const char *key, const mxp_array *a)
{
    const int64_t *shape = mxp_array_shape(a);
    cli_json_array(key);
    for (int i = 0; i < mxp_array_ndim(a); i++)
        cli_json_int(NULL, (long long)shape[i]);
    cli_json_close();
}
