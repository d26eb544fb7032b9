/* Internal: a growable NUL-terminated text buffer for formatting (array
 * printing, safetensors headers).  An allocation failure sets `failed` and
 * makes every later add a no-op, so callers check once at the end; the
 * caller frees p. */
#ifndef MXP_CORE_STRBUF_H
#define MXP_CORE_STRBUF_H

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

typedef struct strbuf {
    char *p;
    size_t len, cap;
    bool failed;
} strbuf;

static inline void sb_add(strbuf *b, const char *s, size_t n)
{
    if (b->failed)
        return;
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n + 1)
            cap *= 2;
        char *p = realloc(b->p, cap);
        if (!p) {
            b->failed = true;
            return;
        }
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

static inline void sb_puts(strbuf *b, const char *s)
{
    sb_add(b, s, strlen(s));
}

#endif
