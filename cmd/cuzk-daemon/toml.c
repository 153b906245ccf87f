/* toml.c: the TOML-subset reader of the daemon's configuration (toml.h): a line scanner that
 * hands each [section] header and key = value to the caller's handler. */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "toml.h"

/* -------------------------------------------------------------- values -- */

int toml_error(struct toml_reader *p, const char *fmt, ...)
{
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return cuzk_fail(p->err, CUZK_E_FORMAT, "%s:%u: %s", p->name, p->line, msg);
}

static const char *skip_ws(const char *s)
{
    while (*s == ' ' || *s == '\t') s++;
    return s;
}

/* After a value: only whitespace and an optional comment may follow. */
static int expect_end(struct toml_reader *p, const char *s)
{
    s = skip_ws(s);
    if (*s && *s != '#' && *s != '\r' && *s != '\n')
        return toml_error(p, "unexpected text after the value: '%.40s'", s);
    return CUZK_OK;
}

static int parse_string(struct toml_reader *p, const char **sp, char *out, size_t cap)
{
    const char *s = *sp;
    char q = *s++;
    size_t n = 0;
    if ((q == '"' && s[0] == '"' && s[1] == '"') || (q == '\'' && s[0] == '\'' && s[1] == '\''))
        return toml_error(p, "multi-line strings are not supported");
    while (*s && *s != q && *s != '\n') {
        char ch = *s++;
        if (q == '"' && ch == '\\') {
            switch (*s++) {
            case '"': ch = '"'; break;
            case '\\': ch = '\\'; break;
            case 'n': ch = '\n'; break;
            case 't': ch = '\t'; break;
            case 'r': ch = '\r'; break;
            default: return toml_error(p, "unsupported escape '\\%c' in string", s[-1]);
            }
        }
        if (n + 1 >= cap) return toml_error(p, "string longer than %zu bytes", cap - 1);
        out[n++] = ch;
    }
    if (*s != q) return toml_error(p, "unterminated string");
    out[n] = 0;
    *sp = s + 1;
    return CUZK_OK;
}

static int parse_scalar(struct toml_reader *p, const char **sp, struct toml_value *v)
{
    const char *s = *sp;
    memset(v, 0, sizeof *v);
    if (*s == '"' || *s == '\'') {
        v->type = TOML_STR;
        return parse_string(p, sp, v->s, sizeof v->s);
    }
    if (!strncmp(s, "true", 4) && !isalnum((unsigned char)s[4]) && s[4] != '_') {
        v->type = TOML_BOOL; v->b = true; *sp = s + 4; return CUZK_OK;
    }
    if (!strncmp(s, "false", 5) && !isalnum((unsigned char)s[5]) && s[5] != '_') {
        v->type = TOML_BOOL; v->b = false; *sp = s + 5; return CUZK_OK;
    }
    /* Number: copy the token without '_' separators, then decide int vs float. */
    char tok[64];
    size_t n = 0;
    while (*s && (isalnum((unsigned char)*s) || strchr("+-._", *s))) {
        if (*s != '_') {
            if (n + 1 >= sizeof tok) return toml_error(p, "number too long");
            tok[n++] = *s;
        }
        s++;
    }
    tok[n] = 0;
    bool hex = n > 2 && tok[0] == '0' && (tok[1] == 'x' || tok[1] == 'X');
    bool is_float = strchr(tok, '.') || (!hex && (strchr(tok, 'e') || strchr(tok, 'E')));
    if (n == 0) return toml_error(p, "expected a value (string, number, boolean or array), got '%.20s'", s);
    char *end;
    errno = 0;
    if (is_float) {
        v->type = TOML_FLOAT;
        v->f = strtod(tok, &end);
    } else {
        v->type = TOML_INT;
        v->i = strtoll(tok, &end, 0);
        v->f = (double)v->i;
    }
    if (*end || errno) return toml_error(p, "invalid value '%s' (strings need quotes)", tok);
    *sp = s;
    return CUZK_OK;
}

/* Parse a value; arrays may span lines: *sp is advanced through text (line count kept). */
static int parse_value(struct toml_reader *p, const char **sp, struct toml_value *v)
{
    const char *s = skip_ws(*sp);
    if (*s == '{') return toml_error(p, "inline tables are not supported");
    if (*s != '[') {
        int rc = parse_scalar(p, &s, v);
        *sp = s;
        return rc;
    }
    memset(v, 0, sizeof *v);
    v->type = TOML_ARRAY;
    v->items = calloc(TOML_MAX_ITEMS, sizeof *v->items);
    if (!v->items) return cuzk_fail(p->err, CUZK_E_NOMEM, "out of memory");
    s++;
    for (;;) {
        /* whitespace, newlines and comments between items */
        for (;;) {
            s = skip_ws(s);
            if (*s == '#') while (*s && *s != '\n') s++;
            if (*s == '\r') { s++; continue; }
            if (*s == '\n') { s++; p->line++; continue; }
            break;
        }
        if (*s == ']') { s++; break; }
        if (!*s) return toml_error(p, "unterminated array");
        if (v->n == TOML_MAX_ITEMS) return toml_error(p, "array longer than %d items", TOML_MAX_ITEMS);
        if (*s == '[') return toml_error(p, "nested arrays are not supported");
        int rc = parse_scalar(p, &s, &v->items[v->n]);
        if (rc) return rc;
        v->n++;
        s = skip_ws(s);
        if (*s == ',') { s++; continue; }
        if (*s == '#' || *s == '\n' || *s == '\r' || *s == ']') continue;
        return toml_error(p, "expected ',' or ']' in array, got '%.20s'", s);
    }
    *sp = s;
    return CUZK_OK;
}

/* -------------------------------------------------------------- driver -- */

int toml_parse(const char *text, size_t len, const char *name, const struct toml_handler *h,
               void *ctx, struct cuzk_error *err)
{
    struct toml_reader p = {name, 0, err};
    char section[64] = "";
    /* Work on a NUL-terminated copy so the scanner can run past line ends inside arrays. */
    char *buf = malloc(len + 1);
    if (!buf) return cuzk_fail(err, CUZK_E_NOMEM, "%s: out of memory", name);
    memcpy(buf, text, len);
    buf[len] = 0;
    if (strlen(buf) != len) {
        free(buf);
        return cuzk_fail(err, CUZK_E_FORMAT, "%s: contains a NUL byte", name);
    }
    int rc = CUZK_OK;
    const char *s = buf;
    while (*s && !rc) {
        p.line++;
        const char *ls = skip_ws(s);
        const char *eol = strchr(s, '\n');
        const char *next = eol ? eol + 1 : s + strlen(s);
        if (*ls == '#' || *ls == '\n' || *ls == '\r' || !*ls) { s = next; continue; }
        if (*ls == '[') {
            if (ls[1] == '[') { rc = toml_error(&p, "arrays of tables ([[...]]) are not supported"); break; }
            const char *q = ls + 1;
            size_t n = 0;
            char sec[64];
            q = skip_ws(q);
            while (*q && (isalnum((unsigned char)*q) || *q == '_' || *q == '-' || *q == '.')) {
                if (n + 1 >= sizeof sec) break;
                sec[n++] = *q++;
            }
            sec[n] = 0;
            q = skip_ws(q);
            if (!n || *q != ']') { rc = toml_error(&p, "malformed section header"); break; }
            if ((rc = expect_end(&p, q + 1))) break;
            memcpy(section, sec, n + 1);
            if ((rc = h->section(ctx, &p, section))) break;
            s = next;
            continue;
        }
        /* key = value */
        char key[64];
        size_t n = 0;
        const char *q = ls;
        while (*q && (isalnum((unsigned char)*q) || *q == '_' || *q == '-')) {
            if (n + 1 >= sizeof key) break;
            key[n++] = *q++;
        }
        key[n] = 0;
        q = skip_ws(q);
        if (!n || *q != '=') {
            rc = toml_error(&p, "expected 'key = value' or '[section]', got '%.40s'", ls);
            break;
        }
        q = skip_ws(q + 1);
        const char *vstart = q;
        unsigned vline = p.line;
        struct toml_value v;
        memset(&v, 0, sizeof v);
        if ((rc = parse_value(&p, &q, &v))) { free(v.items); break; }
        /* raw text of the value for messages (first line only, trimmed) */
        char raw[128];
        size_t rn = 0;
        for (const char *r = vstart; r < q && *r != '\n' && rn + 1 < sizeof raw; r++) raw[rn++] = *r;
        while (rn && (raw[rn - 1] == ' ' || raw[rn - 1] == '\r')) rn--;
        raw[rn] = 0;
        if ((rc = expect_end(&p, q))) { free(v.items); break; }
        eol = strchr(q, '\n');
        next = eol ? eol + 1 : q + strlen(q);
        unsigned endline = p.line;
        p.line = vline;   /* messages name the line the key is on */
        rc = h->key(ctx, &p, section, key, &v, raw);
        free(v.items);
        p.line = endline;
        s = next;
    }
    free(buf);
    return rc;
}
