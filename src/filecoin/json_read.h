/* json_read.h: a JSON (RFC 8259) reader into one compact node array, for the C1 parser.
 * Internal to src/filecoin (not a public header).
 *
 * Why not jansson: a 32 GiB C1 is ~38 MB of JSON, mostly arrays of byte-integers; jansson
 * allocates a heap object per value and per array slot, so parsing cost is dominated by
 * malloc/free and page faults. Here the document becomes a flat array of 16-byte nodes in
 * document order (pre-order): one allocation sized from the length fits a C1, and denser
 * documents grow it up to a bound no parse can pass (one node per '[', '{', ',' or ':', plus
 * the root), so memory stays within 16 bytes per byte of input.
 *
 * Layout invariants:
 *  - node 0 is the root (always an array or object, as jansson requires without DECODE_ANY);
 *  - an array's children follow it in order; an object's members follow it as key (a
 *    JR_STRING node), value, key, value, ...;
 *  - every node knows the index just past its subtree (jr_end), so stepping to the next
 *    sibling is O(1);
 *  - strings without escapes point into the source buffer (which must outlive the doc);
 *    strings with escapes are decoded into a side buffer owned by the doc. Strings are not
 *    NUL-terminated; "\u0000" is refused, as jansson does.
 *
 * Acceptance and errors follow jansson 2.x's json_loadb(buf, len, 0) exactly (same
 * documents accepted, same message text, line and column, same premature-end
 * classification), because the C1 error messages that users see embed them. Duplicate keys
 * are accepted; a lookup finds the last one (jansson keeps the last value). */
#ifndef CUZK_FIL_JSON_READ_H
#define CUZK_FIL_JSON_READ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum jr_type { JR_NULL, JR_FALSE, JR_TRUE, JR_INT, JR_REAL, JR_STRING, JR_ARRAY, JR_OBJECT };

#define JR_NONE ((size_t)-1) /* "no such node" (missing member, index out of range) */
#define JR_MAX_DEPTH 2048    /* nesting limit, jansson's JSON_PARSER_MAX_DEPTH */

struct jr_node {
    uint8_t type;   /* enum jr_type */
    uint8_t arena;  /* string: v.u is an offset into the doc's decoded-string buffer */
    uint16_t pad;
    uint32_t a;     /* array/object: index past the subtree; string: length in bytes */
    union {
        int64_t i;      /* JR_INT */
        uint64_t u;     /* array/object: children (arrays) or members (objects) */
        const char *s;  /* string in the source buffer */
    } v;
};

struct jr_doc {
    struct jr_node *n;  /* n[0] is the root */
    size_t count, cap;
    char *strs;         /* decoded strings that had escapes */
    size_t strs_len, strs_cap;
    size_t cur_arr, cur_i, cur_node; /* jr_at's cursor: sequential access is O(1) */
};

/* A failed parse. code: CUZK_E_TRUNCATED when the input ends where more was needed (as
 * jansson's json_error_premature_end_of_input), CUZK_E_NOMEM when memory ran out (the
 * caller checks the thread's meter), else CUZK_E_FORMAT. line/column as jansson counts them
 * (1-based line, column in characters up to the error). */
struct jr_error {
    int code;
    int line, column;
    char text[160];
};

/* Parse len bytes at src into d (which the caller zero-initialises or has jr_free'd).
 * CUZK_OK or the code in e; on failure d holds nothing to free. src must outlive d. */
int jr_parse(struct jr_doc *d, const void *src, size_t len, struct jr_error *e);
void jr_free(struct jr_doc *d);

static inline enum jr_type jr_type(const struct jr_doc *d, size_t i) { return (enum jr_type)d->n[i].type; }
static inline bool jr_is_container(const struct jr_doc *d, size_t i)
{
    return d->n[i].type == JR_ARRAY || d->n[i].type == JR_OBJECT;
}
/* The index just past i's subtree: the next sibling when there is one. */
static inline size_t jr_end(const struct jr_doc *d, size_t i)
{
    return jr_is_container(d, i) ? d->n[i].a : i + 1;
}
/* Elements of an array, members of an object (duplicates included); 0 for scalars. */
static inline size_t jr_len(const struct jr_doc *d, size_t i)
{
    return jr_is_container(d, i) ? (size_t)d->n[i].v.u : 0;
}
static inline int64_t jr_int(const struct jr_doc *d, size_t i) { return d->n[i].v.i; }
/* A string node's bytes (not NUL-terminated) and length. */
static inline const char *jr_str(const struct jr_doc *d, size_t i, size_t *len)
{
    *len = d->n[i].a;
    return d->n[i].arena ? d->strs + d->n[i].v.u : d->n[i].v.s;
}
/* The type's name in the words the C1 messages use ("integer", "number", "boolean", ...). */
const char *jr_type_name(enum jr_type t);

/* Element k of array a (JR_NONE past the end). O(1) when k is the element after the one
 * asked for last on the same array, else O(k). */
size_t jr_at(struct jr_doc *d, size_t a, size_t k);
/* Member `key` of object o (the last one if the key repeats), JR_NONE if absent. */
size_t jr_get(const struct jr_doc *d, size_t o, const char *key);
/* true when o has at least one member and every member's key is `key` (jansson: object
 * size 1 holding key). */
bool jr_only_key(const struct jr_doc *d, size_t o, const char *key);
/* The first member's key (len 0 and "" for an empty object). */
const char *jr_first_key(const struct jr_doc *d, size_t o, size_t *len);

#endif
