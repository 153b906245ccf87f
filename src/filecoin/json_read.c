/* json_read.c: the JSON reader of json_read.h. A lexer that scans one whole token ahead of
 * the parser (as jansson's does: a token's own errors, e.g. a bad escape, win over the
 * parser's complaint about where the token stands) and a recursive-descent parser writing
 * nodes in document order. Error texts, positions and the premature-end classification
 * reproduce jansson's json_loadb(buf, len, 0), whose messages the C1 errors embed. */
#include "json_read.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "cuzk/err.h"
#include "cuzk/util.h"

enum { TOK_EOF = 0, TOK_STRING = 256, TOK_INT, TOK_REAL, TOK_TRUE, TOK_FALSE, TOK_NULL, TOK_INVALID };

/* Error classes, as jansson's error codes matter to the classification: only a syntax
 * error met at the end of the input (empty token) counts as premature end. */
enum { ERR_SYNTAX, ERR_PREMATURE, ERR_UTF8, ERR_OTHER };

struct lexer {
    const unsigned char *s;
    size_t len, pos;
    struct jr_doc *d;
    struct jr_error *e;
    bool failed;
    unsigned depth;
    /* the current token: its kind, its text [tstart, tend) and its value */
    int tok;
    size_t tstart, tend;
    int64_t ival;
    const char *sval; /* string in the source, or NULL: in the arena at soff */
    size_t slen, soff;
    bool snul;        /* the decoded string holds a NUL ("\u0000") */
    size_t bound;     /* the most nodes any parse of this input can make (count_bound) */
};

/* ---- errors ------------------------------------------------------------------------------- */

/* Line and column of byte offset at, as jansson counts them: a column counts characters
 * (UTF-8 lead bytes) since the last newline. */
static void where(const unsigned char *s, size_t at, int *line, int *col)
{
    int l = 1, c = 0;
    for (size_t i = 0; i < at; i++) {
        unsigned char b = s[i];
        if (b == '\n') {
            l++;
            c = 0;
        } else if (b < 0x80 || (b >= 0xC2 && b <= 0xF4)) {
            c++;
        }
    }
    *line = l;
    *col = c;
}

/* Record the error at byte offset `at`; the token text so far, [tstart, at), is the context
 * ("near '...'") when it is short, as jansson's saved text. */
static bool lx_fail(struct lexer *lx, int cls, size_t at, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static bool lx_fail(struct lexer *lx, int cls, size_t at, const char *fmt, ...)
{
    if (lx->failed) return false;
    lx->failed = true;
    char msg[128]; /* + " near '<20 bytes>'" fits jr_error.text */
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    struct jr_error *e = lx->e;
    size_t n = at > lx->tstart ? at - lx->tstart : 0;
    const unsigned char *t = lx->s + lx->tstart;
    e->code = cls == ERR_PREMATURE ? CUZK_E_TRUNCATED : CUZK_E_FORMAT;
    if (n && t[0]) {
        if (n <= 20) {
            char near[21];
            memcpy(near, t, n);
            near[n] = 0;
            snprintf(e->text, sizeof e->text, "%s near '%s'", msg, near);
        } else {
            snprintf(e->text, sizeof e->text, "%s", msg);
        }
    } else {
        if (cls == ERR_SYNTAX) e->code = CUZK_E_TRUNCATED;
        if (cls == ERR_UTF8) snprintf(e->text, sizeof e->text, "%s", msg);
        else snprintf(e->text, sizeof e->text, "%s near end of file", msg);
    }
    where(lx->s, at, &e->line, &e->column);
    return false;
}

static bool lx_nomem(struct lexer *lx)
{
    if (lx->failed) return false;
    lx->failed = true;
    lx->e->code = CUZK_E_NOMEM;
    snprintf(lx->e->text, sizeof lx->e->text, "out of memory");
    where(lx->s, lx->pos, &lx->e->line, &lx->e->column);
    return false;
}

/* ---- UTF-8 -------------------------------------------------------------------------------- */

/* Length of the valid UTF-8 sequence at s (n bytes left), 0 if invalid or cut short:
 * no overlongs, no surrogates, nothing above U+10FFFF. */
static size_t utf8_seq(const unsigned char *s, size_t n)
{
    unsigned char b = s[0];
    size_t k;
    uint32_t v;
    if (b < 0x80) return 1;
    if (b >= 0xC2 && b <= 0xDF) k = 2, v = b & 0x1F;
    else if (b >= 0xE0 && b <= 0xEF) k = 3, v = b & 0x0F;
    else if (b >= 0xF0 && b <= 0xF4) k = 4, v = b & 0x07;
    else return 0;
    if (n < k) return 0;
    for (size_t i = 1; i < k; i++) {
        if ((s[i] & 0xC0) != 0x80) return 0;
        v = (v << 6) | (s[i] & 0x3F);
    }
    if (v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) return 0;
    if ((k == 3 && v < 0x800) || (k == 4 && v < 0x10000)) return 0;
    return k;
}

/* Reading byte p as the next character: jansson decodes the whole UTF-8 sequence there
 * and fails on a bad one, even as one character of look-ahead. false after the error. */
static bool lx_readable(struct lexer *lx, size_t p)
{
    if (p >= lx->len || lx->s[p] < 0x80 || utf8_seq(lx->s + p, lx->len - p)) return true;
    return lx_fail(lx, ERR_UTF8, p, "unable to decode byte 0x%x", lx->s[p]);
}

/* ---- tokens ------------------------------------------------------------------------------- */

static bool is_digit(int c) { return c >= '0' && c <= '9'; }
static bool is_alpha(int c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
static int hexval(int c)
{
    if (is_digit(c)) return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

static bool arena_put(struct lexer *lx, const void *p, size_t n)
{
    struct jr_doc *d = lx->d;
    if (d->strs_len + n > d->strs_cap) {
        size_t cap = d->strs_cap ? d->strs_cap : 256;
        while (cap < d->strs_len + n) cap *= 2;
        char *q = cuzk_realloc(d->strs, cap);
        if (!q) return lx_nomem(lx);
        d->strs = q;
        d->strs_cap = cap;
    }
    memcpy(d->strs + d->strs_len, p, n);
    d->strs_len += n;
    return true;
}

static size_t utf8_put(uint32_t v, unsigned char *b)
{
    if (v < 0x80) return b[0] = (unsigned char)v, 1;
    if (v < 0x800) return b[0] = (unsigned char)(0xC0 | v >> 6), b[1] = (unsigned char)(0x80 | (v & 0x3F)), 2;
    if (v < 0x10000) {
        b[0] = (unsigned char)(0xE0 | v >> 12);
        b[1] = (unsigned char)(0x80 | ((v >> 6) & 0x3F));
        b[2] = (unsigned char)(0x80 | (v & 0x3F));
        return 3;
    }
    b[0] = (unsigned char)(0xF0 | v >> 18);
    b[1] = (unsigned char)(0x80 | ((v >> 12) & 0x3F));
    b[2] = (unsigned char)(0x80 | ((v >> 6) & 0x3F));
    b[3] = (unsigned char)(0x80 | (v & 0x3F));
    return 4;
}

static uint32_t hex4(const unsigned char *p)
{
    return (uint32_t)(hexval(p[0]) << 12 | hexval(p[1]) << 8 | hexval(p[2]) << 4 | hexval(p[3]));
}

/* Decode the escapes of the raw string body [b, e) (already checked: escapes well formed,
 * UTF-8 valid) into the arena. Surrogates are paired here, after the whole string was
 * scanned, so that (as in jansson) an earlier-scanned fault of the string wins. */
static bool decode_escapes(struct lexer *lx, const unsigned char *b, const unsigned char *e)
{
    lx->soff = lx->d->strs_len;
    lx->snul = false;
    const unsigned char *p = b;
    while (p < e) {
        const unsigned char *q = p;
        while (q < e && *q != '\\') q++;
        if (q > p && !arena_put(lx, p, (size_t)(q - p))) return false;
        if (q == e) break;
        unsigned char c = q[1], out[4];
        size_t n = 1;
        p = q + 2;
        switch (c) {
        case 'b': out[0] = '\b'; break;
        case 'f': out[0] = '\f'; break;
        case 'n': out[0] = '\n'; break;
        case 'r': out[0] = '\r'; break;
        case 't': out[0] = '\t'; break;
        case 'u': {
            uint32_t v = hex4(p);
            p += 4;
            if (v >= 0xD800 && v <= 0xDBFF) {
                if (p + 1 < e && p[0] == '\\' && p[1] == 'u') {
                    uint32_t w = hex4(p + 2);
                    if (w < 0xDC00 || w > 0xDFFF)
                        return lx_fail(lx, ERR_SYNTAX, lx->tend, "invalid Unicode '\\u%04X\\u%04X'", v, w);
                    p += 6;
                    v = ((v - 0xD800) << 10) + (w - 0xDC00) + 0x10000;
                } else {
                    return lx_fail(lx, ERR_SYNTAX, lx->tend, "invalid Unicode '\\u%04X'", v);
                }
            } else if (v >= 0xDC00 && v <= 0xDFFF) {
                return lx_fail(lx, ERR_SYNTAX, lx->tend, "invalid Unicode '\\u%04X'", v);
            }
            if (v == 0) lx->snul = true;
            n = utf8_put(v, out);
            break;
        }
        default: out[0] = c; break; /* " \ / */
        }
        if (!arena_put(lx, out, n)) return false;
    }
    lx->slen = lx->d->strs_len - lx->soff;
    return true;
}

/* A string token; lx->pos is at the opening quote. */
static bool scan_string(struct lexer *lx)
{
    const unsigned char *s = lx->s;
    size_t len = lx->len, p = lx->pos + 1;
    bool esc = false;
    for (;;) {
        while (p < len && s[p] >= 0x20 && s[p] < 0x80 && s[p] != '"' && s[p] != '\\') p++;
        if (p == len) return lx_fail(lx, ERR_PREMATURE, p, "premature end of input");
        unsigned char c = s[p];
        if (c == '"') break;
        if (c < 0x20) {
            if (c == '\n') return lx_fail(lx, ERR_SYNTAX, p, "unexpected newline");
            return lx_fail(lx, ERR_SYNTAX, p, "control character 0x%x", c);
        }
        if (c >= 0x80) {
            size_t k = utf8_seq(s + p, len - p);
            if (!k) return lx_fail(lx, ERR_UTF8, p, "unable to decode byte 0x%x", c);
            p += k;
            continue;
        }
        /* a backslash: the escaped character is read (and consumed) before it is judged */
        esc = true;
        p++;
        if (!lx_readable(lx, p)) return false;
        if (p == len) return lx_fail(lx, ERR_SYNTAX, p, "invalid escape");
        c = s[p++];
        if (c == 'u') {
            for (int i = 0; i < 4; i++) {
                if (!lx_readable(lx, p)) return false;
                if (p == len) return lx_fail(lx, ERR_SYNTAX, p, "invalid escape");
                if (hexval(s[p++]) < 0) return lx_fail(lx, ERR_SYNTAX, p, "invalid escape");
            }
        } else if (!strchr("\"\\/bfnrt", c) || !c) {
            return lx_fail(lx, ERR_SYNTAX, p, "invalid escape");
        }
    }
    lx->tend = lx->pos = p + 1;
    lx->tok = TOK_STRING;
    if (!esc) {
        lx->sval = (const char *)s + lx->tstart + 1;
        lx->slen = p - lx->tstart - 1;
        lx->snul = false;
        return true;
    }
    lx->sval = NULL;
    return decode_escapes(lx, s + lx->tstart + 1, s + p);
}

/* A number token; lx->pos is at '-' or a digit. Integers must fit int64 (jansson: strtoll);
 * reals are checked for overflow (jansson: strtod giving HUGE_VAL) and typed, not kept. */
static bool scan_number(struct lexer *lx)
{
    const unsigned char *s = lx->s;
    size_t len = lx->len, p = lx->pos, start = p;
    bool neg = s[p] == '-';
    if (neg) {
        p++;
        if (!lx_readable(lx, p)) return false;
    }
    int c = p < len ? s[p] : -1;
    if (c == '0') {
        p++;
        if (!lx_readable(lx, p)) return false;
        if (p < len && is_digit(s[p])) goto invalid;
    } else if (is_digit(c)) {
        while (p < len && is_digit(s[p])) p++;
        if (!lx_readable(lx, p)) return false;
    } else {
        goto invalid;
    }
    c = p < len ? s[p] : -1;
    if (c != '.' && c != 'e' && c != 'E') {
        size_t nd = p - start - neg;
        uint64_t u = 0;
        const unsigned char *q = s + start + neg;
        if (nd <= 18) {
            for (size_t i = 0; i < nd; i++) u = u * 10 + (uint64_t)(q[i] - '0');
        } else {
            uint64_t lim = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
            for (size_t i = 0; i < nd; i++) {
                uint64_t dgt = (uint64_t)(q[i] - '0');
                if (u > (lim - dgt) / 10)
                    return lx_fail(lx, ERR_OTHER, p, neg ? "too big negative integer" : "too big integer");
                u = u * 10 + dgt;
            }
        }
        lx->ival = neg ? (int64_t)(0 - u) : (int64_t)u;
        lx->tok = TOK_INT;
        lx->tend = lx->pos = p;
        return true;
    }
    if (c == '.') {
        p++;
        if (!lx_readable(lx, p)) return false;
        if (p == len || !is_digit(s[p])) goto invalid;
        while (p < len && is_digit(s[p])) p++;
        if (!lx_readable(lx, p)) return false;
        c = p < len ? s[p] : -1;
    }
    if (c == 'e' || c == 'E') {
        p++;
        if (!lx_readable(lx, p)) return false;
        if (p < len && (s[p] == '+' || s[p] == '-')) {
            p++;
            if (!lx_readable(lx, p)) return false;
        }
        if (p == len || !is_digit(s[p])) goto invalid;
        while (p < len && is_digit(s[p])) p++;
        if (!lx_readable(lx, p)) return false;
    }
    {
        char small[64], *buf = small;
        size_t n = p - start;
        if (n >= sizeof small && !(buf = malloc(n + 1))) return lx_nomem(lx);
        memcpy(buf, s + start, n);
        buf[n] = 0;
        errno = 0;
        double v = strtod(buf, NULL);
        bool over = errno == ERANGE && (v == HUGE_VAL || v == -HUGE_VAL);
        if (buf != small) free(buf);
        if (over) return lx_fail(lx, ERR_OTHER, p, "real number overflow");
    }
    lx->tok = TOK_REAL;
    lx->tend = lx->pos = p;
    return true;
invalid:
    lx->tok = TOK_INVALID;
    lx->tend = lx->pos = p;
    return true;
}

/* Scan the next token into lx; false after an error. */
static bool next(struct lexer *lx)
{
    const unsigned char *s = lx->s;
    size_t len = lx->len, p = lx->pos;
    while (p < len && (s[p] == ' ' || s[p] == '\n' || s[p] == '\r' || s[p] == '\t')) p++;
    lx->tstart = lx->pos = p;
    if (p == len) {
        lx->tok = TOK_EOF;
        lx->tend = p;
        return true;
    }
    int c = s[p];
    switch (c) {
    case '{': case '}': case '[': case ']': case ':': case ',':
        lx->tok = c;
        lx->tend = lx->pos = p + 1;
        return true;
    case '"':
        return scan_string(lx);
    case '-': case '0': case '1': case '2': case '3': case '4': case '5': case '6': case '7': case '8': case '9':
        return scan_number(lx);
    default:
        break;
    }
    if (is_alpha(c)) {
        size_t q = p;
        while (q < len && is_alpha(s[q])) q++;
        if (!lx_readable(lx, q)) return false;
        size_t n = q - p;
        lx->tok = n == 4 && !memcmp(s + p, "true", 4)    ? TOK_TRUE
                  : n == 5 && !memcmp(s + p, "false", 5) ? TOK_FALSE
                  : n == 4 && !memcmp(s + p, "null", 4)  ? TOK_NULL
                                                         : TOK_INVALID;
        lx->tend = lx->pos = q;
        return true;
    }
    size_t k = 1;
    if (c >= 0x80 && !(k = utf8_seq(s + p, len - p)))
        return lx_fail(lx, ERR_UTF8, p, "unable to decode byte 0x%x", c);
    lx->tok = TOK_INVALID;
    lx->tend = lx->pos = p + k;
    return true;
}

/* ---- parser ------------------------------------------------------------------------------- */


/* More room for nodes, up to lx->bound (which no parse can pass). The first allocation
 * (jr_parse) fits a C1 already; growing serves dense documents (tiny values), and keeps a
 * document that fails early from asking for its whole bound first. */
static bool grow(struct lexer *lx)
{
    struct jr_doc *d = lx->d;
    size_t cap = d->cap + d->cap / 2 + 1024;
    if (cap > lx->bound) cap = lx->bound;
    if (cap <= d->cap) return lx_fail(lx, ERR_OTHER, lx->tend, "internal: node bound exceeded");
    struct jr_node *q = cuzk_realloc(d->n, cap * sizeof *q);
    if (!q) return lx_nomem(lx);
    d->n = q;
    d->cap = cap;
    cuzk_advise_huge(q, cap * sizeof *q);   /* a 32 GiB C1's nodes are ~170 MB */
    return true;
}

static inline size_t push(struct lexer *lx, enum jr_type t)
{
    struct jr_doc *d = lx->d;
    if (d->count == d->cap && !grow(lx)) return JR_NONE;
    size_t i = d->count++;
    d->n[i] = (struct jr_node){.type = (uint8_t)t};
    return i;
}

static bool push_string(struct lexer *lx)
{
    size_t i = push(lx, JR_STRING);
    if (i == JR_NONE) return false;
    struct jr_node *n = &lx->d->n[i];
    n->a = (uint32_t)lx->slen;
    if (lx->sval) {
        n->v.s = lx->sval;
    } else {
        n->arena = 1;
        n->v.u = lx->soff;
    }
    return true;
}

static bool parse_value(struct lexer *lx);

/* The common case of a C1, arrays of byte-integers, without the general token loop: from
 * lx->pos (an element's start) takes elements that are plain integers of up to 18 digits
 * written right before ',' or ']', the only spellings that can neither fail nor overflow, so
 * the result and every later error are the same as the general path's. Stops at anything
 * else, with lx->pos at that element's start; *closed once it took the closing ']'. */
static bool int_run(struct lexer *lx, uint64_t *k, bool *closed)
{
    if (lx->depth >= JR_MAX_DEPTH) return true;
    const unsigned char *s = lx->s;
    size_t len = lx->len, p = lx->pos;
    for (;;) {
        size_t q = p;
        uint64_t v = 0;
        if (q >= len || !is_digit(s[q])) break;
        if (s[q] == '0') {
            q++;
        } else {
            while (q < len && is_digit(s[q]) && q - p < 18) v = v * 10 + (uint64_t)(s[q++] - '0');
        }
        if (q >= len || (s[q] != ',' && s[q] != ']')) break;
        size_t i = push(lx, JR_INT);
        if (i == JR_NONE) return false;
        lx->d->n[i].v.i = (int64_t)v;
        (*k)++;
        if (s[q] == ']') {
            lx->tok = ']';
            lx->tstart = q;
            lx->tend = lx->pos = q + 1;
            *closed = true;
            return true;
        }
        p = q + 1;
    }
    lx->pos = p;
    return true;
}

static bool parse_array(struct lexer *lx)
{
    size_t a = push(lx, JR_ARRAY);
    if (a == JR_NONE) return false;
    uint64_t k = 0;
    bool closed = false;
    if (!int_run(lx, &k, &closed)) return false;
    if (!closed) {
        if (!next(lx)) return false;
        if (k || lx->tok != ']') {
            while (lx->tok != TOK_EOF) {
                if (!parse_value(lx) || !next(lx)) return false;
                k++;
                if (lx->tok != ',') break;
                if (!int_run(lx, &k, &closed)) return false;
                if (closed) break;
                if (!next(lx)) return false;
            }
            if (lx->tok != ']') return lx_fail(lx, ERR_SYNTAX, lx->tend, "']' expected");
        }
    }
    lx->d->n[a].a = (uint32_t)lx->d->count;
    lx->d->n[a].v.u = k;
    return true;
}

static bool parse_object(struct lexer *lx)
{
    size_t o = push(lx, JR_OBJECT);
    if (o == JR_NONE || !next(lx)) return false;
    uint64_t k = 0;
    if (lx->tok != '}') {
        for (;;) {
            if (lx->tok != TOK_STRING) return lx_fail(lx, ERR_SYNTAX, lx->tend, "string or '}' expected");
            if (lx->snul) return lx_fail(lx, ERR_OTHER, lx->tend, "NUL byte in object key not supported");
            if (!push_string(lx) || !next(lx)) return false;
            if (lx->tok != ':') return lx_fail(lx, ERR_SYNTAX, lx->tend, "':' expected");
            if (!next(lx) || !parse_value(lx) || !next(lx)) return false;
            k++;
            if (lx->tok != ',') break;
            if (!next(lx)) return false;
        }
        if (lx->tok != '}') return lx_fail(lx, ERR_SYNTAX, lx->tend, "'}' expected");
    }
    lx->d->n[o].a = (uint32_t)lx->d->count;
    lx->d->n[o].v.u = k;
    return true;
}

/* The value starting with the current token (which is consumed). */
static bool parse_value(struct lexer *lx)
{
    if (++lx->depth > JR_MAX_DEPTH) return lx_fail(lx, ERR_OTHER, lx->tend, "maximum parsing depth reached");
    size_t i;
    bool ok = true;
    switch (lx->tok) {
    case TOK_STRING:
        if (lx->snul)
            return lx_fail(lx, ERR_OTHER, lx->tend, "\\u0000 is not allowed without JSON_ALLOW_NUL");
        ok = push_string(lx);
        break;
    case TOK_INT:
        if ((i = push(lx, JR_INT)) == JR_NONE) return false;
        lx->d->n[i].v.i = lx->ival;
        break;
    case TOK_REAL: ok = push(lx, JR_REAL) != JR_NONE; break;
    case TOK_TRUE: ok = push(lx, JR_TRUE) != JR_NONE; break;
    case TOK_FALSE: ok = push(lx, JR_FALSE) != JR_NONE; break;
    case TOK_NULL: ok = push(lx, JR_NULL) != JR_NONE; break;
    case '{': ok = parse_object(lx); break;
    case '[': ok = parse_array(lx); break;
    case TOK_INVALID: return lx_fail(lx, ERR_SYNTAX, lx->tend, "invalid token");
    default: return lx_fail(lx, ERR_SYNTAX, lx->tend, "unexpected token");
    }
    lx->depth--;
    return ok;
}

/* An upper bound on the nodes of any parse of s: every node but the root is created right
 * after the parser consumed one '[', '{', ',' or ':', each of which creates at most one
 * (counting such bytes inside strings only loosens the bound). */
static size_t count_bound(const unsigned char *s, size_t len)
{
    size_t n = 1, i = 0;
#if defined(__SSE2__)
    const __m128i a = _mm_set1_epi8('['), b = _mm_set1_epi8('{'), c = _mm_set1_epi8(','),
                  d = _mm_set1_epi8(':');
    for (; i + 16 <= len; i += 16) {
        __m128i x = _mm_loadu_si128((const __m128i *)(s + i));
        __m128i m = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(x, a), _mm_cmpeq_epi8(x, b)),
                                 _mm_or_si128(_mm_cmpeq_epi8(x, c), _mm_cmpeq_epi8(x, d)));
        n += (size_t)__builtin_popcount((unsigned)_mm_movemask_epi8(m));
    }
#endif
    for (; i < len; i++) n += s[i] == '[' || s[i] == '{' || s[i] == ',' || s[i] == ':';
    return n;
}

int jr_parse(struct jr_doc *d, const void *src, size_t len, struct jr_error *e)
{
    memset(d, 0, sizeof *d);
    memset(e, 0, sizeof *e);
    d->cur_arr = JR_NONE;
    struct lexer lx = {.s = src, .len = len, .d = d, .e = e};
    if (len >= UINT32_MAX) { /* node indices and string lengths are 32-bit */
        e->code = CUZK_E_FORMAT;
        e->line = 1;
        snprintf(e->text, sizeof e->text, "document of %zu bytes is over the 4 GiB this reader takes", len);
        return e->code;
    }
    /* a C1 has one node per ~3.5 bytes: a third of the length is room for it in one block */
    lx.bound = count_bound(lx.s, len);
    d->cap = len / 3 + 16 < lx.bound ? len / 3 + 16 : lx.bound;
    d->n = cuzk_malloc(d->cap * sizeof *d->n);
    if (!d->n) {
        lx_nomem(&lx);
        return e->code;
    }
    cuzk_advise_huge(d->n, d->cap * sizeof *d->n);
    bool ok = next(&lx);
    if (ok && lx.tok != '[' && lx.tok != '{') ok = lx_fail(&lx, ERR_SYNTAX, lx.tend, "'[' or '{' expected");
    ok = ok && parse_value(&lx) && next(&lx);
    if (ok && lx.tok != TOK_EOF) ok = lx_fail(&lx, ERR_OTHER, lx.tend, "end of file expected");
    if (!ok) {
        jr_free(d);
        return e->code;
    }
    return CUZK_OK;
}

void jr_free(struct jr_doc *d)
{
    cuzk_free(d->n);
    cuzk_free(d->strs);
    memset(d, 0, sizeof *d);
}

/* ---- navigation --------------------------------------------------------------------------- */

const char *jr_type_name(enum jr_type t)
{
    switch (t) {
    case JR_OBJECT: return "object";
    case JR_ARRAY: return "array";
    case JR_STRING: return "string";
    case JR_INT: return "integer";
    case JR_REAL: return "number";
    case JR_TRUE: case JR_FALSE: return "boolean";
    default: return "null";
    }
}

size_t jr_at(struct jr_doc *d, size_t a, size_t k)
{
    if (d->n[a].type != JR_ARRAY || k >= d->n[a].v.u) return JR_NONE;
    size_t i, from;
    if (d->cur_arr == a && d->cur_i <= k) {
        i = d->cur_node;
        from = d->cur_i;
    } else {
        i = a + 1;
        from = 0;
    }
    for (; from < k; from++) i = jr_end(d, i);
    d->cur_arr = a;
    d->cur_i = k;
    d->cur_node = i;
    return i;
}

static bool key_is(const struct jr_doc *d, size_t i, const char *key, size_t klen)
{
    size_t n;
    const char *s = jr_str(d, i, &n);
    return n == klen && !memcmp(s, key, klen);
}

size_t jr_get(const struct jr_doc *d, size_t o, const char *key)
{
    if (d->n[o].type != JR_OBJECT) return JR_NONE;
    size_t klen = strlen(key), found = JR_NONE, i = o + 1;
    for (uint64_t m = 0; m < d->n[o].v.u; m++) {
        if (key_is(d, i, key, klen)) found = i + 1;
        i = jr_end(d, i + 1);
    }
    return found;
}

bool jr_only_key(const struct jr_doc *d, size_t o, const char *key)
{
    if (d->n[o].type != JR_OBJECT || !d->n[o].v.u) return false;
    size_t klen = strlen(key), i = o + 1;
    for (uint64_t m = 0; m < d->n[o].v.u; m++) {
        if (!key_is(d, i, key, klen)) return false;
        i = jr_end(d, i + 1);
    }
    return true;
}

const char *jr_first_key(const struct jr_doc *d, size_t o, size_t *len)
{
    if (d->n[o].type != JR_OBJECT || !d->n[o].v.u) return *len = 0, "";
    return jr_str(d, o + 1, len);
}
