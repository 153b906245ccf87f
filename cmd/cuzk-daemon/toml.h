/* toml.h: the TOML subset the daemon's configuration is written in (cuzk-daemon only): comments,
 * [section] headers, and key = string / integer / float / boolean / array of scalars (arrays may
 * span lines). No inline tables, arrays of tables, nested arrays or multi-line strings: those
 * fail with a message saying so. The reader knows no keys; cfg.c maps what it reads onto the
 * configuration. */
#ifndef CUZK_DAEMON_TOML_H
#define CUZK_DAEMON_TOML_H

#include <stdbool.h>
#include <stddef.h>

#include "cuzk/err.h"

#define TOML_STR_MAX 512      /* bytes of a string value, NUL included (cfg.h's CFG_STR_MAX) */
#define TOML_MAX_ITEMS 64     /* items of one array */

enum toml_type { TOML_STR, TOML_INT, TOML_FLOAT, TOML_BOOL, TOML_ARRAY };

struct toml_value {
    enum toml_type type;
    char s[TOML_STR_MAX];        /* TOML_STR */
    long long i;                 /* TOML_INT */
    double f;                    /* TOML_FLOAT, and TOML_INT as a double */
    bool b;                      /* TOML_BOOL */
    struct toml_value *items;    /* TOML_ARRAY: n items (scalars only), owned by the reader */
    size_t n;
};

/* Where the reader is: messages name "name:line". During a key callback line is the line the key
 * is on (a multi-line array ends further down). */
struct toml_reader {
    const char *name;
    unsigned line;
    struct cuzk_error *err;
};

/* Fail with CUZK_E_FORMAT and "name:line: <message>"; returns that code. */
int toml_error(struct toml_reader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* What toml_parse calls, in file order. A non-zero return stops the parse and is returned.
 * section: after each [section] header. key: for each key = value, with the section it is in
 * ("" before the first header) and raw, the value as written (its first line, trimmed) for
 * messages; v and its items live until the callback returns. */
struct toml_handler {
    int (*section)(void *ctx, struct toml_reader *r, const char *section);
    int (*key)(void *ctx, struct toml_reader *r, const char *section, const char *key,
               const struct toml_value *v, const char *raw);
};

/* Read len bytes of text (no NUL byte inside), named name in messages. Syntax errors fail with
 * CUZK_E_FORMAT naming the line; CUZK_E_NOMEM when a copy cannot be made. */
int toml_parse(const char *text, size_t len, const char *name, const struct toml_handler *h,
               void *ctx, struct cuzk_error *err);

#endif
