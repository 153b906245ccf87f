/* bincode.c: the bincode 1.x reader of bincode.h and the rust-fil-proofs MerkleProof layout
 * (storage-proofs-core merkle/proof.rs, read for facts; docs/formats.md "Vanilla proofs"). */
#include "bincode.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void bc_init(struct bc *r, const void *data, size_t len, struct cuzk_error *err, const char *fmt, ...)
{
    memset(r, 0, sizeof *r);
    r->p = data;
    r->len = data ? len : 0;
    r->err = err;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->what, sizeof r->what, fmt, ap);
    va_end(ap);
}

size_t bc_push(struct bc *r, const char *fmt, ...)
{
    size_t old = r->plen;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(r->path + r->plen, sizeof r->path - r->plen, fmt, ap);
    va_end(ap);
    if (n > 0) r->plen = r->plen + (size_t)n < sizeof r->path ? r->plen + (size_t)n : sizeof r->path - 1;
    return old;
}

void bc_pop(struct bc *r, size_t old)
{
    r->plen = old;
    r->path[old] = 0;
}

int bc_fail(struct bc *r, int code, size_t at, const char *field, const char *fmt, ...)
{
    if (r->rc) return r->rc;
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    const char *dot = field && r->plen ? "." : "";
    r->rc = cuzk_fail(r->err, code, "%s: %s%s%s at byte %zu: %s", r->what,
                      r->plen || field ? r->path : "(start)", dot, field ? field : "", at, msg);
    return r->rc;
}

static bool need(struct bc *r, const char *field, size_t n, const char *what)
{
    if (r->rc) return false;
    if (r->len - r->off < n) {
        bc_fail(r, CUZK_E_TRUNCATED, r->off, field, "truncated: %s needs %zu bytes, %zu left", what, n,
                r->len - r->off);
        return false;
    }
    return true;
}

bool bc_u32(struct bc *r, const char *field, uint32_t *out)
{
    if (!need(r, field, 4, "u32")) return false;
    const uint8_t *b = r->p + r->off;
    *out = (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
    r->off += 4;
    return true;
}

bool bc_u64(struct bc *r, const char *field, uint64_t *out)
{
    if (!need(r, field, 8, "u64")) return false;
    const uint8_t *b = r->p + r->off;
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = v << 8 | b[i];
    *out = v;
    r->off += 8;
    return true;
}

bool bc_raw32(struct bc *r, const char *field, uint8_t out[32])
{
    if (!need(r, field, 32, "a 32-byte domain")) return false;
    memcpy(out, r->p + r->off, 32);
    r->off += 32;
    return true;
}

bool bc_fr(struct bc *r, const char *field, fr_t *out)
{
    size_t at = r->off;
    uint8_t b[32];
    if (!bc_raw32(r, field, b)) return false;
    if (fr_from_bytes_le(out, b) != CUZK_OK) {
        bc_fail(r, CUZK_E_BAD_ENCODING, at, field, "not a canonical field element (value >= r)");
        return false;
    }
    return true;
}

bool bc_count(struct bc *r, const char *field, uint64_t want, const char *unit)
{
    size_t at = r->off;
    uint64_t n;
    if (!bc_u64(r, field, &n)) return false;
    if (n != want) {
        bc_fail(r, CUZK_E_FORMAT, at, field, "expected %llu %s, got %llu", (unsigned long long)want, unit,
                (unsigned long long)n);
        return false;
    }
    return true;
}

bool bc_variant(struct bc *r, const char *field, uint32_t want, const char *const *names, unsigned n_names)
{
    size_t at = r->off;
    uint32_t v;
    if (!bc_u32(r, field, &v)) return false;
    if (v != want) {
        const char *wn = want < n_names ? names[want] : "?";
        if (v < n_names)
            bc_fail(r, CUZK_E_FORMAT, at, field, "expected variant %u (%s), got %u (%s)", want, wn, v, names[v]);
        else
            bc_fail(r, CUZK_E_FORMAT, at, field, "expected variant %u (%s), got unknown variant %u", want, wn, v);
        return false;
    }
    return true;
}

bool bc_end(struct bc *r)
{
    if (r->rc) return false;
    if (r->off != r->len) {
        bc_pop(r, 0);
        bc_fail(r, CUZK_E_FORMAT, r->off, NULL, "%zu trailing bytes after the last field", r->len - r->off);
        return false;
    }
    return true;
}

/* ------------------------------------------------------------ MerkleProof -- */

void bc_tree_init(struct bc_tree *t, const char *tree, unsigned base_arity, unsigned base_levels,
                  unsigned sub_arity, unsigned top_arity)
{
    t->base_arity = base_arity;
    t->base_levels = base_levels;
    t->sub_arity = sub_arity;
    t->top_arity = sub_arity ? top_arity : 0;
    snprintf(t->name, sizeof t->name, "%s %u-%u-%u", tree, base_arity, sub_arity, t->top_arity);
}

unsigned bc_tree_levels(const struct bc_tree *t)
{
    return t->base_levels + (t->sub_arity ? 1 : 0) + (t->top_arity ? 1 : 0);
}

unsigned bc_tree_arity(const struct bc_tree *t, unsigned level)
{
    if (level < t->base_levels) return t->base_arity;
    return level == t->base_levels ? t->sub_arity : t->top_arity;
}

unsigned bc_tree_siblings(const struct bc_tree *t)
{
    unsigned n = 0;
    for (unsigned l = 0; l < bc_tree_levels(t); l++) n += bc_tree_arity(t, l) - 1;
    return n;
}

/* InclusionPath {path: Vec<PathElement {hashes: Vec<Domain>, index: usize}>}: `levels`
 * elements of `arity`, written at idx / sib. */
static bool incl_path(struct bc *r, const char *field, const struct bc_tree *t, unsigned levels,
                      unsigned arity, uint32_t *idx, fr_t *sib)
{
    size_t s0 = bc_push(r, r->plen ? ".%s" : "%s", field);
    char unit[96];
    snprintf(unit, sizeof unit, "path elements (%s)", t->name);
    if (!bc_count(r, "path", levels, unit)) return false;
    for (unsigned l = 0; l < levels; l++) {
        size_t s1 = bc_push(r, ".path[%u]", l);
        snprintf(unit, sizeof unit, "sibling hashes (arity %u)", arity);
        if (!bc_count(r, "hashes", arity - 1, unit)) return false;
        for (unsigned j = 0; j + 1 < arity; j++) {
            size_t s2 = bc_push(r, ".hashes[%u]", j);
            if (!bc_fr(r, NULL, &sib[l * (arity - 1) + j])) return false;
            bc_pop(r, s2);
        }
        size_t at = r->off;
        uint64_t ix;
        if (!bc_u64(r, "index", &ix)) return false;
        if (ix >= arity) {
            bc_fail(r, CUZK_E_FORMAT, at, "index", "expected 0..%u (arity %u), got %llu", arity - 1, arity,
                    (unsigned long long)ix);
            return false;
        }
        idx[l] = (uint32_t)ix;
        bc_pop(r, s1);
    }
    bc_pop(r, s0);
    return true;
}

static const char *const PROOF_DATA[] = {"Single", "Sub", "Top"};

bool bc_merkle_proof(struct bc *r, const struct bc_tree *t, fr_t *root, fr_t *leaf, uint32_t *idx,
                     fr_t *sib, uint64_t *pos)
{
    uint32_t want = t->top_arity ? 2 : t->sub_arity ? 1 : 0;
    if (!bc_variant(r, "data", want, PROOF_DATA, 3)) return false;
    size_t s0 = bc_push(r, r->plen ? ".data.%s" : "data.%s", PROOF_DATA[want]);
    unsigned nb = t->base_levels, ba = t->base_arity;
    fr_t *sub_sib = sib + nb * (ba - 1);
    fr_t *top_sib = sub_sib + (t->sub_arity ? t->sub_arity - 1 : 0);
    if (want == 0) {
        if (!bc_fr(r, "root", root) || !bc_fr(r, "leaf", leaf)) return false;
        if (!incl_path(r, "path", t, nb, ba, idx, sib)) return false;
    } else {
        if (!incl_path(r, "base_proof", t, nb, ba, idx, sib)) return false;
        if (!incl_path(r, "sub_proof", t, 1, t->sub_arity, idx + nb, sub_sib)) return false;
        if (want == 2 && !incl_path(r, "top_proof", t, 1, t->top_arity, idx + nb + 1, top_sib)) return false;
        if (!bc_fr(r, "root", root) || !bc_fr(r, "leaf", leaf)) return false;
    }
    bc_pop(r, s0);
    if (pos) {
        uint64_t p = 0, mul = 1;
        for (unsigned l = 0; l < bc_tree_levels(t); l++) {
            p += idx[l] * mul;
            mul *= bc_tree_arity(t, l);
        }
        *pos = p;
    }
    return true;
}
