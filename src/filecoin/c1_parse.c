/* c1_parse.c: the C1 parser: Curio's wrapper JSON, base64, then SealCommitPhase1Output JSON
 * (json_read.h node array) into struct fil_c1. Every malformed field is reported with its JSON path
 * and what was expected; shapes (partitions, challenges, levels, arities, layers) are checked
 * against the registered proof. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cuzk/filecoin.h"
#include "cuzk/util.h"
#include "json_read.h"

/* Parser state: the current JSON path (pushed / popped as a string) and the first error. */
struct jp {
    char path[512];
    size_t len;
    struct cuzk_error *err;
    int rc;
    struct jr_doc *d; /* the document being read */
};

static size_t jp_push(struct jp *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static size_t jp_push(struct jp *p, const char *fmt, ...)
{
    size_t old = p->len;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(p->path + p->len, sizeof p->path - p->len, fmt, ap);
    va_end(ap);
    if (n > 0) p->len = p->len + (size_t)n < sizeof p->path ? p->len + (size_t)n : sizeof p->path - 1;
    return old;
}
static void jp_pop(struct jp *p, size_t old)
{
    p->len = old;
    p->path[old] = 0;
}

static int jp_fail(struct jp *p, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int jp_fail(struct jp *p, int code, const char *fmt, ...)
{
    if (p->rc) return p->rc;
    char msg[384];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    p->rc = cuzk_fail(p->err, code, "%s: %s", p->len ? p->path : "(root)", msg);
    return p->rc;
}

static const char *jtype(const struct jp *p, size_t v) { return jr_type_name(jr_type(p->d, v)); }

/* Member `key` of object o (path extended by ".key" while the caller works on it). */
static size_t jp_get(struct jp *p, size_t o, const char *key, enum jr_type want, size_t *saved)
{
    *saved = jp_push(p, p->len ? ".%s" : "%s", key);
    if (p->rc) return JR_NONE;
    size_t v = jr_get(p->d, o, key);
    if (v == JR_NONE) {
        jp_fail(p, CUZK_E_FORMAT, "missing field");
        return JR_NONE;
    }
    if (jr_type(p->d, v) != want) {
        jp_fail(p, CUZK_E_FORMAT, "expected %s, got %s", jr_type_name(want), jtype(p, v));
        return JR_NONE;
    }
    return v;
}

/* An array of exactly n elements. */
static bool jp_array_len(struct jp *p, size_t a, size_t n, const char *what)
{
    size_t got = jr_len(p->d, a);
    if (got != n) {
        jp_fail(p, CUZK_E_FORMAT, "expected %zu %s, got %zu", n, what, got);
        return false;
    }
    return true;
}

static bool jp_uint(struct jp *p, size_t v, uint64_t max, uint64_t *out)
{
    if (jr_type(p->d, v) != JR_INT) {
        jp_fail(p, CUZK_E_FORMAT, "expected integer, got %s", jtype(p, v));
        return false;
    }
    int64_t x = jr_int(p->d, v);
    if (x < 0 || (uint64_t)x > max) {
        jp_fail(p, CUZK_E_FORMAT, "expected integer in 0..%llu, got %lld", (unsigned long long)max,
                (long long)x);
        return false;
    }
    *out = (uint64_t)x;
    return true;
}

static bool get_uint(struct jp *p, size_t o, const char *key, uint64_t max, uint64_t *out)
{
    size_t s;
    size_t v = jp_get(p, o, key, JR_INT, &s);
    bool ok = v != JR_NONE && jp_uint(p, v, max, out);
    if (ok) jp_pop(p, s);
    return ok;
}

static bool fr_canonical(const uint8_t d[32])
{
    fr_t t;
    return fr_from_bytes_le(&t, d) == CUZK_OK;
}

/* A domain: a JSON array of 32 integers 0..255; fr = must be a canonical Fr encoding. The
 * elements are the 32 nodes after the array's (scalars have no subtree). */
static bool jp_domain(struct jp *p, size_t v, uint8_t out[32], bool fr)
{
    const struct jr_doc *d = p->d;
    if (jr_type(d, v) != JR_ARRAY) {
        jp_fail(p, CUZK_E_FORMAT, "expected 32-byte array, got %s", jtype(p, v));
        return false;
    }
    size_t n = jr_len(d, v);
    if (n != 32) {
        jp_fail(p, CUZK_E_FORMAT, "expected 32-byte array, got %zu elements", n);
        return false;
    }
    size_t e = v + 1;
    for (size_t i = 0; i < 32; i++, e = jr_end(d, e)) {
        bool isint = jr_type(d, e) == JR_INT;
        if (!isint || jr_int(d, e) < 0 || jr_int(d, e) > 255) {
            size_t s = jp_push(p, "[%zu]", i);
            if (isint)
                jp_fail(p, CUZK_E_FORMAT, "expected byte 0..255, got %lld", (long long)jr_int(d, e));
            else
                jp_fail(p, CUZK_E_FORMAT, "expected byte 0..255, got %s", jtype(p, e));
            jp_pop(p, s);
            return false;
        }
        out[i] = (uint8_t)jr_int(d, e);
    }
    if (fr && !fr_canonical(out)) {
        jp_fail(p, CUZK_E_BAD_ENCODING, "not a canonical field element (value >= r)");
        return false;
    }
    return true;
}

static bool get_domain(struct jp *p, size_t o, const char *key, uint8_t out[32], bool fr)
{
    size_t s = jp_push(p, p->len ? ".%s" : "%s", key);
    size_t v = jr_get(p->d, o, key);
    bool ok;
    if (v == JR_NONE) ok = (jp_fail(p, CUZK_E_FORMAT, "missing field"), false);
    else ok = jp_domain(p, v, out, fr);
    if (ok) jp_pop(p, s);
    return ok;
}

/* InclusionPath {"path":[{"hashes":[..],"index":n}]} with `levels` elements of `arity`. */
static bool parse_incl_path(struct jp *p, size_t ip, unsigned levels, unsigned arity,
                            struct fil_merkle_proof *m, unsigned *lvl, unsigned *sib)
{
    size_t s;
    size_t arr = jp_get(p, ip, "path", JR_ARRAY, &s);
    if (arr == JR_NONE || !jp_array_len(p, arr, levels, "path elements")) return false;
    for (unsigned l = 0; l < levels; l++) {
        size_t s1 = jp_push(p, "[%u]", l);
        size_t el = jr_at(p->d, arr, l);
        if (jr_type(p->d, el) != JR_OBJECT)
            return jp_fail(p, CUZK_E_FORMAT, "expected object, got %s", jtype(p, el)), false;
        size_t s2;
        size_t h = jp_get(p, el, "hashes", JR_ARRAY, &s2);
        if (h == JR_NONE || !jp_array_len(p, h, arity - 1, "sibling hashes")) return false;
        size_t e = h + 1;
        for (unsigned j = 0; j + 1 < arity; j++, e = jr_end(p->d, e)) {
            size_t s3 = jp_push(p, "[%u]", j);
            if (!jp_domain(p, e, m->sib[*sib], true)) return false;
            (*sib)++;
            jp_pop(p, s3);
        }
        jp_pop(p, s2);
        uint64_t idx;
        if (!get_uint(p, el, "index", arity - 1, &idx)) return false;
        m->arity[*lvl] = (uint8_t)arity;
        m->index[*lvl] = (uint32_t)idx;
        (*lvl)++;
        jp_pop(p, s1);
    }
    jp_pop(p, s);
    return true;
}

/* The "got X" of a wrong single-variant object: its first key, or "{}" when empty. */
static const char *first_key(struct jp *p, size_t o, char *buf, size_t cap)
{
    if (!jr_len(p->d, o)) return "{}";
    size_t n;
    const char *k = jr_first_key(p->d, o, &n);
    snprintf(buf, cap, "%.*s", (int)(n < cap ? n : cap - 1), k);
    return buf;
}

/* MerkleProof {"data":{"Single"|"Sub"|"Top":{...}}} of the expected shape. */
static bool parse_merkle(struct jp *p, size_t o, const char *key, unsigned base_arity,
                         unsigned nb, unsigned sub_arity, unsigned top_arity,
                         struct fil_merkle_proof *m)
{
    size_t s0, s1;
    size_t mp = jp_get(p, o, key, JR_OBJECT, &s0);
    if (mp == JR_NONE) return false;
    size_t data = jp_get(p, mp, "data", JR_OBJECT, &s1);
    if (data == JR_NONE) return false;
    const char *want = top_arity ? "Top" : sub_arity ? "Sub" : "Single";
    if (!jr_only_key(p->d, data, want)) {
        char got[128];
        return jp_fail(p, CUZK_E_FORMAT, "expected proof variant %s for this sector size, got %s",
                       want, first_key(p, data, got, sizeof got)), false;
    }
    size_t s2;
    size_t v = jp_get(p, data, want, JR_OBJECT, &s2);
    if (v == JR_NONE) return false;
    memset(m, 0, sizeof *m);
    unsigned lvl = 0, sib = 0;
    if (!get_domain(p, v, "root", m->root, true) || !get_domain(p, v, "leaf", m->leaf, true))
        return false;
    size_t s3;
    size_t ip = jp_get(p, v, top_arity || sub_arity ? "base_proof" : "path", JR_OBJECT, &s3);
    if (ip == JR_NONE || !parse_incl_path(p, ip, nb, base_arity, m, &lvl, &sib)) return false;
    jp_pop(p, s3);
    m->n_base = (uint8_t)nb;
    if (sub_arity) {
        ip = jp_get(p, v, "sub_proof", JR_OBJECT, &s3);
        if (ip == JR_NONE || !parse_incl_path(p, ip, 1, sub_arity, m, &lvl, &sib)) return false;
        jp_pop(p, s3);
        m->n_sub = 1;
    }
    if (top_arity) {
        ip = jp_get(p, v, "top_proof", JR_OBJECT, &s3);
        if (ip == JR_NONE || !parse_incl_path(p, ip, 1, top_arity, m, &lvl, &sib)) return false;
        jp_pop(p, s3);
        m->n_top = 1;
    }
    jp_pop(p, s0);
    return true;
}

static bool parse_tree_rc(struct jp *p, size_t o, const char *key, const struct porep_config *c,
                          struct fil_merkle_proof *m)
{
    return parse_merkle(p, o, key, c->base_arity, c->base_levels, c->sub_arity, c->top_arity, m);
}

static bool parse_column(struct jp *p, size_t o, const struct porep_config *c,
                         struct fil_column_proof *cp)
{
    if (jr_type(p->d, o) != JR_OBJECT)
        return jp_fail(p, CUZK_E_FORMAT, "expected object, got %s", jtype(p, o)), false;
    size_t s1, s2;
    size_t col = jp_get(p, o, "column", JR_OBJECT, &s1);
    if (col == JR_NONE) return false;
    uint64_t idx;
    if (!get_uint(p, col, "index", UINT32_MAX, &idx)) return false;
    cp->index = (uint32_t)idx;
    size_t rows = jp_get(p, col, "rows", JR_ARRAY, &s2);
    if (rows == JR_NONE || !jp_array_len(p, rows, c->layers, "rows (one per layer)")) return false;
    size_t e = rows + 1;
    for (unsigned r = 0; r < c->layers; r++, e = jr_end(p->d, e)) {
        size_t s3 = jp_push(p, "[%u]", r);
        if (!jp_domain(p, e, cp->rows[r], true)) return false;
        jp_pop(p, s3);
    }
    jp_pop(p, s2);
    jp_pop(p, s1);
    return parse_tree_rc(p, o, "inclusion_proof", c, &cp->proof);
}

static bool parse_labeling(struct jp *p, size_t o, struct fil_labeling_proof *l)
{
    size_t s;
    size_t par = jp_get(p, o, "parents", JR_ARRAY, &s);
    if (par == JR_NONE || !jp_array_len(p, par, 37, "parents")) return false;
    size_t e = par + 1;
    for (unsigned i = 0; i < 37; i++, e = jr_end(p->d, e)) {
        size_t s1 = jp_push(p, "[%u]", i);
        if (!jp_domain(p, e, l->parents[i], true)) return false;
        jp_pop(p, s1);
    }
    jp_pop(p, s);
    uint64_t li, node;
    if (!get_uint(p, o, "layer_index", UINT32_MAX, &li) || !get_uint(p, o, "node", UINT64_MAX >> 1, &node))
        return false;
    l->layer_index = (uint32_t)li;
    l->node = node;
    return true;
}

static bool parse_vproof(struct jp *p, size_t o, const struct porep_config *c, struct fil_vproof *v)
{
    if (jr_type(p->d, o) != JR_OBJECT)
        return jp_fail(p, CUZK_E_FORMAT, "expected object, got %s", jtype(p, o)), false;
    if (!parse_merkle(p, o, "comm_d_proofs", 2, c->tree_d_depth, 0, 0, &v->comm_d)) return false;
    if (!parse_tree_rc(p, o, "comm_r_last_proof", c, &v->comm_r_last)) return false;
    size_t s, s1;
    size_t rcp = jp_get(p, o, "replica_column_proofs", JR_OBJECT, &s);
    if (rcp == JR_NONE) return false;
    size_t cx = jp_get(p, rcp, "c_x", JR_OBJECT, &s1);
    if (cx == JR_NONE || !parse_column(p, cx, c, &v->c_x)) return false;
    jp_pop(p, s1);
    static const char *keys[2] = {"drg_parents", "exp_parents"};
    for (int g = 0; g < 2; g++) {
        unsigned n = g ? FIL_EXP_PARENTS : FIL_DRG_PARENTS;
        size_t arr = jp_get(p, rcp, keys[g], JR_ARRAY, &s1);
        if (arr == JR_NONE || !jp_array_len(p, arr, n, "column proofs")) return false;
        size_t e = arr + 1;
        for (unsigned i = 0; i < n; i++, e = jr_end(p->d, e)) {
            size_t s2 = jp_push(p, "[%u]", i);
            if (!parse_column(p, e, c, g ? &v->exp[i] : &v->drg[i])) return false;
            jp_pop(p, s2);
        }
        jp_pop(p, s1);
    }
    jp_pop(p, s);
    size_t lp = jp_get(p, o, "labeling_proofs", JR_ARRAY, &s);
    if (lp == JR_NONE || !jp_array_len(p, lp, c->layers, "labeling proofs (one per layer)")) return false;
    size_t e = lp + 1;
    for (unsigned l = 0; l < c->layers; l++, e = jr_end(p->d, e)) {
        s1 = jp_push(p, "[%u]", l);
        if (jr_type(p->d, e) != JR_OBJECT)
            return jp_fail(p, CUZK_E_FORMAT, "expected object, got %s", jtype(p, e)), false;
        if (!parse_labeling(p, e, &v->labeling[l])) return false;
        jp_pop(p, s1);
    }
    jp_pop(p, s);
    size_t ep = jp_get(p, o, "encoding_proof", JR_OBJECT, &s);
    if (ep == JR_NONE || !parse_labeling(p, ep, &v->encoding)) return false;
    jp_pop(p, s);
    return true;
}

/* The SealCommitPhase1Output object (the root of p->d); p->path holds the prefix
 * ("Phase1Out" or ""). */
static int parse_phase1_obj(struct jp *p, struct fil_c1 *out)
{
    const size_t root = 0;
    if (jr_type(p->d, root) != JR_OBJECT)
        return jp_fail(p, CUZK_E_FORMAT, "expected object, got %s", jtype(p, root));
    size_t s;
    size_t rp = jp_get(p, root, "registered_proof", JR_STRING, &s);
    if (rp == JR_NONE) return p->rc;
    size_t rlen;
    const char *rs = jr_str(p->d, rp, &rlen);
    char name[128];
    snprintf(name, sizeof name, "%.*s", (int)(rlen < sizeof name ? rlen : sizeof name - 1), rs);
    const struct fil_seal_proof *pr = rlen < sizeof name ? fil_seal_proof_by_name(name) : NULL;
    if (!pr) return jp_fail(p, CUZK_E_UNSUPPORTED, "unknown registered proof \"%s\"", name);
    jp_pop(p, s);
    struct porep_config cfg;
    if (porep_config_for_size(&cfg, pr->sector_size, p->err)) return p->rc = p->err ? p->err->code : CUZK_E_INTERNAL;
    out->proof = pr;
    out->partitions = pr->partitions;
    out->challenges = pr->challenges;
    if (!get_domain(p, root, "comm_r", out->comm_r, true) || !get_domain(p, root, "comm_d", out->comm_d, true) ||
        !get_domain(p, root, "replica_id", out->replica_id, true) ||
        !get_domain(p, root, "seed", out->seed, false) || !get_domain(p, root, "ticket", out->ticket, false))
        return p->rc;

    size_t vps = jp_get(p, root, "vanilla_proofs", JR_OBJECT, &s);
    if (vps == JR_NONE) return p->rc;
    if (!jr_only_key(p->d, vps, pr->vanilla_tag)) {
        char got[128];
        return jp_fail(p, CUZK_E_FORMAT, "expected the single variant %s for %s, got %s",
                       pr->vanilla_tag, pr->name, first_key(p, vps, got, sizeof got));
    }
    size_t s1;
    size_t parts = jp_get(p, vps, pr->vanilla_tag, JR_ARRAY, &s1);
    if (parts == JR_NONE || !jp_array_len(p, parts, pr->partitions, "partitions")) return p->rc;
    size_t total = (size_t)pr->partitions * pr->challenges;
    out->vp = cuzk_calloc(total, sizeof *out->vp);
    if (!out->vp) return jp_fail(p, CUZK_E_NOMEM, "%zu vanilla proofs", total);
    size_t part = parts + 1;
    for (unsigned k = 0; k < pr->partitions; k++, part = jr_end(p->d, part)) {
        size_t s2 = jp_push(p, "[%u]", k);
        if (jr_type(p->d, part) != JR_ARRAY)
            return jp_fail(p, CUZK_E_FORMAT, "expected array, got %s", jtype(p, part));
        if (!jp_array_len(p, part, pr->challenges, "challenge proofs")) return p->rc;
        size_t e = part + 1;
        for (unsigned i = 0; i < pr->challenges; i++, e = jr_end(p->d, e)) {
            size_t s3 = jp_push(p, "[%u]", i);
            if (!parse_vproof(p, e, &cfg, &out->vp[(size_t)k * pr->challenges + i])) return p->rc;
            jp_pop(p, s3);
        }
        jp_pop(p, s2);
    }
    jp_pop(p, s1);
    jp_pop(p, s);
    return CUZK_OK;
}

/* The reader allocates through cuzk_malloc, so that a thread's allocation meter (util.h)
 * sees the node array: about four times the JSON text of a C1. */
static int load_json(struct jr_doc *d, struct jp *p, const void *json, size_t len, const char *what)
{
    struct jr_error je;
    int rc = jr_parse(d, json, len, &je);
    if (rc && (cuzk_meter_over() || rc == CUZK_E_NOMEM))
        return p->rc = cuzk_fail(p->err, CUZK_E_NOMEM, "%s: parsing %zu bytes of JSON ran out of "
                                 "the memory allowed to it", what, len);
    if (rc)
        return p->rc = cuzk_fail(p->err, rc, "%s: invalid JSON at line %d column %d: %s", what, je.line,
                                 je.column, je.text);
    p->d = d;
    return CUZK_OK;
}

int fil_c1_parse_phase1(struct fil_c1 *out, const void *json, size_t len, struct cuzk_error *err)
{
    struct jp p = {.err = err};
    memset(out, 0, sizeof *out);
    struct jr_doc doc;
    if (load_json(&doc, &p, json, len, "Phase1Out")) return p.rc;
    int rc = parse_phase1_obj(&p, out);
    jr_free(&doc);
    if (rc) fil_c1_free(out);
    else out->sector_size = out->proof->sector_size;
    return rc;
}

int fil_c1_parse_wrapper(struct fil_c1 *out, const void *json, size_t len, struct cuzk_error *err)
{
    struct jp p = {.err = err};
    memset(out, 0, sizeof *out);
    struct jr_doc wrap, in;
    if (load_json(&wrap, &p, json, len, "wrapper")) return p.rc;
    bool have_wrap = true, have_in = false;
    uint64_t sn = 0, ss = 0;
    size_t s, b64;
    int rc = CUZK_OK;
    uint8_t *inner = NULL;
    size_t inner_len = 0, b64_len;
    const char *b64_text;
    if (jr_type(&wrap, 0) != JR_OBJECT) {
        rc = jp_fail(&p, CUZK_E_FORMAT, "expected object, got %s", jtype(&p, 0));
        goto done;
    }
    if (!get_uint(&p, 0, "SectorNum", UINT64_MAX >> 1, &sn) || !get_uint(&p, 0, "SectorSize", UINT64_MAX >> 1, &ss)) {
        rc = p.rc;
        goto done;
    }
    b64 = jp_get(&p, 0, "Phase1Out", JR_STRING, &s);
    if (b64 == JR_NONE) {
        rc = p.rc;
        goto done;
    }
    b64_text = jr_str(&wrap, b64, &b64_len);
    rc = fil_base64_decode(&inner, &inner_len, b64_text, b64_len, err);
    if (rc) {
        cuzk_fail_prefix(err, rc, "Phase1Out");
        goto done;
    }
    /* the wrapper's nodes are few (its base64 string points into the request), but free
     * them before the inner document's, the largest allocation, is built */
    jr_free(&wrap);
    have_wrap = false;
    if ((rc = load_json(&in, &p, inner, inner_len, "Phase1Out"))) goto done;
    have_in = true;
    /* the path stays "Phase1Out" so that inner errors read Phase1Out.vanilla_proofs... */
    rc = parse_phase1_obj(&p, out);
    if (rc) goto done;
    jp_pop(&p, s);
    if (ss != out->proof->sector_size) {
        rc = cuzk_fail(err, CUZK_E_FORMAT, "SectorSize: %llu does not match %s (%llu)",
                       (unsigned long long)ss, out->proof->name,
                       (unsigned long long)out->proof->sector_size);
        goto done;
    }
    out->sector_num = sn;
    out->sector_size = ss;
done:
    if (have_in) jr_free(&in);
    cuzk_free(inner);
    if (have_wrap) jr_free(&wrap);
    if (rc) fil_c1_free(out);
    return rc;
}
