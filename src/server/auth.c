/* auth.c: what the network faces check before a request reaches the engine: the bearer token
 * (compared in constant time) and the ids a request names (printable UTF-8, no NUL, bounded),
 * read from the protobuf wire bytes because protobuf-c's C strings stop at the first NUL. */
#include <stdio.h>
#include <string.h>

#include "cuzk/server.h"

bool srv_bearer_ok(const char *token, const char *value, size_t len)
{
    /* "Bearer" is case-insensitive (RFC 6750 / RFC 7235); the token is not */
    static const char scheme[] = "bearer ";
    if (!token || !token[0] || !value || len < sizeof scheme - 1) return false;
    for (size_t i = 0; i < sizeof scheme - 1; i++)
        if ((value[i] | 0x20) != scheme[i]) return false;
    value += sizeof scheme - 1;
    len -= sizeof scheme - 1;
    /* Every byte of the expected token is compared whatever the input: the time taken tells
     * an attacker nothing about how many leading bytes were right. */
    size_t tl = strlen(token);
    volatile unsigned char diff = (unsigned char)(len != tl);
    for (size_t i = 0; i < tl; i++) {
        unsigned char got = i < len ? (unsigned char)value[i] : 0;
        diff |= (unsigned char)(got ^ (unsigned char)token[i]);
    }
    return diff == 0;
}

/* Length of one printable UTF-8 character at s (n bytes left), or 0: invalid encodings,
 * overlong forms, surrogates, > U+10FFFF, C0 and C1 controls, DEL and the line / paragraph
 * separators (they break log lines as a newline does). */
static size_t utf8_printable(const unsigned char *s, size_t n)
{
    unsigned c = s[0];
    if (c < 0x80) return c >= 0x20 && c != 0x7f ? 1 : 0;
    size_t len;
    unsigned cp, min;
    if ((c & 0xe0) == 0xc0) { len = 2; cp = c & 0x1f; min = 0x80; }
    else if ((c & 0xf0) == 0xe0) { len = 3; cp = c & 0x0f; min = 0x800; }
    else if ((c & 0xf8) == 0xf0) { len = 4; cp = c & 0x07; min = 0x10000; }
    else return 0;
    if (len > n) return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80) return 0;
        cp = cp << 6 | (s[i] & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
    if (cp <= 0x9f || cp == 0x2028 || cp == 0x2029) return 0;   /* C1 controls, separators */
    return len;
}

int srv_check_id(const uint8_t *s, size_t n, size_t max, const char *what,
                 struct cuzk_error *err)
{
    if (n > max)
        return cuzk_fail(err, CUZK_E_INVALID_ARG, "%s is %zu bytes; the limit is %zu", what, n,
                         max);
    for (size_t i = 0; i < n;) {
        if (!s[i])
            return cuzk_fail(err, CUZK_E_INVALID_ARG, "%s contains a NUL byte at offset %zu: ids "
                             "are printable UTF-8 text", what, i);
        size_t k = utf8_printable(s + i, n - i);
        if (!k)
            return cuzk_fail(err, CUZK_E_INVALID_ARG, "%s has a control character or invalid "
                             "UTF-8 at byte offset %zu: ids are printable UTF-8 text", what, i);
        i += k;
    }
    return CUZK_OK;
}

/* protobuf varint at *p (end e); false when malformed. */
static bool varint(const uint8_t **p, const uint8_t *e, uint64_t *out)
{
    uint64_t v = 0;
    for (unsigned shift = 0; shift < 64; shift += 7) {
        if (*p >= e) return false;
        uint8_t b = *(*p)++;
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) { *out = v; return true; }
    }
    return false;
}

int srv_check_wire_ids(const uint8_t *msg, size_t n, const uint32_t *path, size_t depth,
                       size_t max, const char *what, struct cuzk_error *err)
{
    const uint8_t *p = msg, *e = msg + n;
    while (p < e) {
        uint64_t key, len, skip;
        if (!varint(&p, e, &key)) return CUZK_OK;   /* the unpacker reports malformed input */
        uint32_t field = (uint32_t)(key >> 3), type = (uint32_t)(key & 7);
        switch (type) {
        case 0: if (!varint(&p, e, &skip)) return CUZK_OK; break;
        case 1: if (e - p < 8) return CUZK_OK; p += 8; break;
        case 5: if (e - p < 4) return CUZK_OK; p += 4; break;
        case 2:
            if (!varint(&p, e, &len) || len > (uint64_t)(e - p)) return CUZK_OK;
            if (field == path[0]) {
                int rc = depth > 1 ? srv_check_wire_ids(p, (size_t)len, path + 1, depth - 1, max,
                                                        what, err)
                                   : srv_check_id(p, (size_t)len, max, what, err);
                if (rc) return rc;
            }
            p += len;
            break;
        default: return CUZK_OK;
        }
    }
    return CUZK_OK;
}

void srv_escape(char *out, size_t cap, const char *s, size_t n)
{
    size_t o = 0;
    if (!cap) return;
    for (size_t i = 0; i < n && o + 5 < cap; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c < 0x20 || c == 0x7f || c == '\\' || c >= 0x80)
            o += (size_t)snprintf(out + o, cap - o, "\\x%02x", c);
        else
            out[o++] = (char)c;
    }
    out[o] = 0;
}
