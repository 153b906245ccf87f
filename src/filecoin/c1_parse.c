/* c1_parse.c: the C1 parser: Curio's wrapper JSON, base64, then SealCommitPhase1Output JSON
 * (jansson tree) into struct fil_c1. Every malformed field is reported with its JSON path
 * and what was expected; shapes (partitions, challenges, levels, arities, layers) are checked
 * against the registered proof. */
#include <jansson.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cuzk/filecoin.h"
#include "cuzk/util.h"

/* Parser state: the current JSON path (pushed / popped as a string) and the first error. */
struct jp {
    char path[512];
    size_t len;
    struct cuzk_error *err;
    int rc;
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

static const char *jtype(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT: return "object";
    case JSON_ARRAY: return "array";
    case JSON_STRING: return "string";
    case JSON_INTEGER: return "integer";
    case JSON_REAL: return "number";
    case JSON_TRUE: case JSON_FALSE: return "boolean";
    default: return "null";
    }
}

/* Member `key` of object o (path extended by ".key" while the caller works on it). */
static json_t *jp_get(struct jp *p, const json_t *o, const char *key, json_type want, size_t *saved)
{
    *saved = jp_push(p, p->len ? ".%s" : "%s", key);
    if (p->rc) return NULL;
    json_t *v = json_object_get(o, key);
    if (!v) {
        jp_fail(p, CUZK_E_FORMAT, "missing field");
        return NULL;
    }
    if (json_typeof(v) != want && !(want == JSON_TRUE && json_is_boolean(v))) {
        static const char *names[] = {"object", "array", "string", "integer", "number", "boolean",
                                      "boolean", "null"};
        jp_fail(p, CUZK_E_FORMAT, "expected %s, got %s", names[want], jtype(v));
        return NULL;
    }
    return v;
}

/* An array of exactly n elements (n = 0: any length, returned in *got). */
static bool jp_array_len(struct jp *p, const json_t *a, size_t n, const char *what)
{
    size_t got = json_array_size(a);
    if (got != n) {
        jp_fail(p, CUZK_E_FORMAT, "expected %zu %s, got %zu", n, what, got);
        return false;
    }
    return true;
}

static bool jp_uint(struct jp *p, const json_t *v, uint64_t max, uint64_t *out)
{
    if (!json_is_integer(v)) {
        jp_fail(p, CUZK_E_FORMAT, "expected integer, got %s", jtype(v));
        return false;
    }
    json_int_t x = json_integer_value(v);
    if (x < 0 || (uint64_t)x > max) {
        jp_fail(p, CUZK_E_FORMAT, "expected integer in 0..%llu, got %lld", (unsigned long long)max,
                (long long)x);
        return false;
    }
    *out = (uint64_t)x;
    return true;
}

static bool get_uint(struct jp *p, const json_t *o, const char *key, uint64_t max, uint64_t *out)
{
    size_t s;
    json_t *v = jp_get(p, o, key, JSON_INTEGER, &s);
    bool ok = v && jp_uint(p, v, max, out);
    if (ok) jp_pop(p, s);
    return ok;
}

static bool fr_canonical(const uint8_t d[32])
{
    fr_t t;
    return fr_from_bytes_le(&t, d) == CUZK_OK;
}

/* A domain: a JSON array of 32 integers 0..255; fr = must be a canonical Fr encoding. */
static bool jp_domain(struct jp *p, const json_t *v, uint8_t out[32], bool fr)
{
    if (!json_is_array(v)) {
        jp_fail(p, CUZK_E_FORMAT, "expected 32-byte array, got %s", jtype(v));
        return false;
    }
    size_t n = json_array_size(v);
    if (n != 32) {
        jp_fail(p, CUZK_E_FORMAT, "expected 32-byte array, got %zu elements", n);
        return false;
    }
    for (size_t i = 0; i < 32; i++) {
        json_t *e = json_array_get(v, i);
        if (!json_is_integer(e) || json_integer_value(e) < 0 || json_integer_value(e) > 255) {
            size_t s = jp_push(p, "[%zu]", i);
            if (json_is_integer(e))
                jp_fail(p, CUZK_E_FORMAT, "expected byte 0..255, got %lld", (long long)json_integer_value(e));
            else
                jp_fail(p, CUZK_E_FORMAT, "expected byte 0..255, got %s", jtype(e));
            jp_pop(p, s);
            return false;
        }
        out[i] = (uint8_t)json_integer_value(e);
    }
    if (fr && !fr_canonical(out)) {
        jp_fail(p, CUZK_E_BAD_ENCODING, "not a canonical field element (value >= r)");
        return false;
    }
    return true;
}

static bool get_domain(struct jp *p, const json_t *o, const char *key, uint8_t out[32], bool fr)
{
    size_t s = jp_push(p, p->len ? ".%s" : "%s", key);
    json_t *v = json_object_get(o, key);
    bool ok;
    if (!v) ok = (jp_fail(p, CUZK_E_FORMAT, "missing field"), false);
    else ok = jp_domain(p, v, out, fr);
    if (ok) jp_pop(p, s);
    return ok;
}

/* InclusionPath {"path":[{"hashes":[..],"index":n}]} with `levels` elements of `arity`. */
static bool parse_incl_path(struct jp *p, const json_t *ip, unsigned levels, unsigned arity,
                            struct fil_merkle_proof *m, unsigned *lvl, unsigned *sib)
{
    size_t s;
    json_t *arr = jp_get(p, ip, "path", JSON_ARRAY, &s);
    if (!arr || !jp_array_len(p, arr, levels, "path elements")) return false;
    for (unsigned l = 0; l < levels; l++) {
        size_t s1 = jp_push(p, "[%u]", l);
        json_t *el = json_array_get(arr, l);
        if (!json_is_object(el)) return jp_fail(p, CUZK_E_FORMAT, "expected object, got %s", jtype(el)), false;
        size_t s2;
        json_t *h = jp_get(p, el, "hashes", JSON_ARRAY, &s2);
        if (!h || !jp_array_len(p, h, arity - 1, "sibling hashes")) return false;
        for (unsigned j = 0; j + 1 < arity; j++) {
            size_t s3 = jp_push(p, "[%u]", j);
            if (!jp_domain(p, json_array_get(h, j), m->sib[*sib], true)) return false;
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

/* MerkleProof {"data":{"Single"|"Sub"|"Top":{...}}} of the expected shape. */
static bool parse_merkle(struct jp *p, const json_t *o, const char *key, unsigned base_arity,
                         unsigned nb, unsigned sub_arity, unsigned top_arity,
                         struct fil_merkle_proof *m)
{
    size_t s0, s1;
    json_t *mp = jp_get(p, o, key, JSON_OBJECT, &s0);
    if (!mp) return false;
    json_t *data = jp_get(p, mp, "data", JSON_OBJECT, &s1);
    if (!data) return false;
    const char *want = top_arity ? "Top" : sub_arity ? "Sub" : "Single";
    if (json_object_size(data) != 1 || !json_object_get(data, want)) {
        const char *got = json_object_size(data) ? json_object_iter_key(json_object_iter(data)) : "{}";
        return jp_fail(p, CUZK_E_FORMAT, "expected proof variant %s for this sector size, got %s",
                       want, got), false;
    }
    size_t s2;
    json_t *v = jp_get(p, data, want, JSON_OBJECT, &s2);
    if (!v) return false;
    memset(m, 0, sizeof *m);
    unsigned lvl = 0, sib = 0;
    if (!get_domain(p, v, "root", m->root, true) || !get_domain(p, v, "leaf", m->leaf, true))
        return false;
    size_t s3;
    json_t *ip = jp_get(p, v, top_arity || sub_arity ? "base_proof" : "path", JSON_OBJECT, &s3);
    if (!ip || !parse_incl_path(p, ip, nb, base_arity, m, &lvl, &sib)) return false;
    jp_pop(p, s3);
    m->n_base = (uint8_t)nb;
    if (sub_arity) {
        ip = jp_get(p, v, "sub_proof", JSON_OBJECT, &s3);
        if (!ip || !parse_incl_path(p, ip, 1, sub_arity, m, &lvl, &sib)) return false;
        jp_pop(p, s3);
        m->n_sub = 1;
    }
    if (top_arity) {
        ip = jp_get(p, v, "top_proof", JSON_OBJECT, &s3);
        if (!ip || !parse_incl_path(p, ip, 1, top_arity, m, &lvl, &sib)) return false;
        jp_pop(p, s3);
        m->n_top = 1;
    }
    jp_pop(p, s0);
    return true;
}

static bool parse_tree_rc(struct jp *p, const json_t *o, const char *key, const struct porep_config *c,
                          struct fil_merkle_proof *m)
{
    return parse_merkle(p, o, key, c->base_arity, c->base_levels, c->sub_arity, c->top_arity, m);
}

static bool parse_column(struct jp *p, const json_t *o, const struct porep_config *c,
                         struct fil_column_proof *cp)
{
    if (!json_is_object(o)) return jp_fail(p, CUZK_E_FORMAT, "expected object, got %s", jtype(o)), false;
    size_t s1, s2;
    json_t *col = jp_get(p, o, "column", JSON_OBJECT, &s1);
    if (!col) return false;
    uint64_t idx;
    if (!get_uint(p, col, "index", UINT32_MAX, &idx)) return false;
    cp->index = (uint32_t)idx;
    json_t *rows = jp_get(p, col, "rows", JSON_ARRAY, &s2);
    if (!rows || !jp_array_len(p, rows, c->layers, "rows (one per layer)")) return false;
    for (unsigned r = 0; r < c->layers; r++) {
        size_t s3 = jp_push(p, "[%u]", r);
        if (!jp_domain(p, json_array_get(rows, r), cp->rows[r], true)) return false;
        jp_pop(p, s3);
    }
    jp_pop(p, s2);
    jp_pop(p, s1);
    return parse_tree_rc(p, o, "inclusion_proof", c, &cp->proof);
}

static bool parse_labeling(struct jp *p, const json_t *o, struct fil_labeling_proof *l)
{
    size_t s;
    json_t *par = jp_get(p, o, "parents", JSON_ARRAY, &s);
    if (!par || !jp_array_len(p, par, 37, "parents")) return false;
    for (unsigned i = 0; i < 37; i++) {
        size_t s1 = jp_push(p, "[%u]", i);
        if (!jp_domain(p, json_array_get(par, i), l->parents[i], true)) return false;
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

static bool parse_vproof(struct jp *p, const json_t *o, const struct porep_config *c, struct fil_vproof *v)
{
    if (!json_is_object(o)) return jp_fail(p, CUZK_E_FORMAT, "expected object, got %s", jtype(o)), false;
    if (!parse_merkle(p, o, "comm_d_proofs", 2, c->tree_d_depth, 0, 0, &v->comm_d)) return false;
    if (!parse_tree_rc(p, o, "comm_r_last_proof", c, &v->comm_r_last)) return false;
    size_t s, s1;
    json_t *rcp = jp_get(p, o, "replica_column_proofs", JSON_OBJECT, &s);
    if (!rcp) return false;
    json_t *cx = jp_get(p, rcp, "c_x", JSON_OBJECT, &s1);
    if (!cx || !parse_column(p, cx, c, &v->c_x)) return false;
    jp_pop(p, s1);
    static const char *keys[2] = {"drg_parents", "exp_parents"};
    for (int g = 0; g < 2; g++) {
        unsigned n = g ? FIL_EXP_PARENTS : FIL_DRG_PARENTS;
        json_t *arr = jp_get(p, rcp, keys[g], JSON_ARRAY, &s1);
        if (!arr || !jp_array_len(p, arr, n, "column proofs")) return false;
        for (unsigned i = 0; i < n; i++) {
            size_t s2 = jp_push(p, "[%u]", i);
            if (!parse_column(p, json_array_get(arr, i), c, g ? &v->exp[i] : &v->drg[i])) return false;
            jp_pop(p, s2);
        }
        jp_pop(p, s1);
    }
    jp_pop(p, s);
    json_t *lp = jp_get(p, o, "labeling_proofs", JSON_ARRAY, &s);
    if (!lp || !jp_array_len(p, lp, c->layers, "labeling proofs (one per layer)")) return false;
    for (unsigned l = 0; l < c->layers; l++) {
        s1 = jp_push(p, "[%u]", l);
        json_t *e = json_array_get(lp, l);
        if (!json_is_object(e)) return jp_fail(p, CUZK_E_FORMAT, "expected object, got %s", jtype(e)), false;
        if (!parse_labeling(p, e, &v->labeling[l])) return false;
        jp_pop(p, s1);
    }
    jp_pop(p, s);
    json_t *ep = jp_get(p, o, "encoding_proof", JSON_OBJECT, &s);
    if (!ep || !parse_labeling(p, ep, &v->encoding)) return false;
    jp_pop(p, s);
    return true;
}

/* The SealCommitPhase1Output object; p->path holds the prefix ("Phase1Out" or ""). */
static int parse_phase1_obj(struct jp *p, struct fil_c1 *out, const json_t *root)
{
    if (!json_is_object(root)) return jp_fail(p, CUZK_E_FORMAT, "expected object, got %s", jtype(root));
    size_t s;
    json_t *rp = jp_get(p, root, "registered_proof", JSON_STRING, &s);
    if (!rp) return p->rc;
    const struct fil_seal_proof *pr = fil_seal_proof_by_name(json_string_value(rp));
    if (!pr) return jp_fail(p, CUZK_E_UNSUPPORTED, "unknown registered proof \"%s\"", json_string_value(rp));
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

    json_t *vps = jp_get(p, root, "vanilla_proofs", JSON_OBJECT, &s);
    if (!vps) return p->rc;
    if (json_object_size(vps) != 1 || !json_object_get(vps, pr->vanilla_tag)) {
        const char *got = json_object_size(vps) ? json_object_iter_key(json_object_iter(vps)) : "{}";
        return jp_fail(p, CUZK_E_FORMAT, "expected the single variant %s for %s, got %s",
                       pr->vanilla_tag, pr->name, got);
    }
    size_t s1;
    json_t *parts = jp_get(p, vps, pr->vanilla_tag, JSON_ARRAY, &s1);
    if (!parts || !jp_array_len(p, parts, pr->partitions, "partitions")) return p->rc;
    size_t total = (size_t)pr->partitions * pr->challenges;
    out->vp = cuzk_calloc(total, sizeof *out->vp);
    if (!out->vp) return jp_fail(p, CUZK_E_NOMEM, "%zu vanilla proofs", total);
    for (unsigned k = 0; k < pr->partitions; k++) {
        size_t s2 = jp_push(p, "[%u]", k);
        json_t *part = json_array_get(parts, k);
        if (!json_is_array(part)) return jp_fail(p, CUZK_E_FORMAT, "expected array, got %s", jtype(part));
        if (!jp_array_len(p, part, pr->challenges, "challenge proofs")) return p->rc;
        for (unsigned i = 0; i < pr->challenges; i++) {
            size_t s3 = jp_push(p, "[%u]", i);
            if (!parse_vproof(p, json_array_get(part, i), &cfg, &out->vp[(size_t)k * pr->challenges + i]))
                return p->rc;
            jp_pop(p, s3);
        }
        jp_pop(p, s2);
    }
    jp_pop(p, s1);
    jp_pop(p, s);
    return CUZK_OK;
}

/* jansson allocates through the library's seam, so that a thread's allocation meter
 * (util.h) sees the JSON tree: a C1's tree is about ten times its text. */
static pthread_once_t json_alloc_once = PTHREAD_ONCE_INIT;
static void json_alloc_seam(void) { json_set_alloc_funcs(cuzk_malloc, cuzk_free); }

static int load_json(json_t **root, struct jp *p, const void *json, size_t len, const char *what)
{
    pthread_once(&json_alloc_once, json_alloc_seam);
    json_error_t je;
    *root = json_loadb(json, len, 0, &je);
    if (!*root && cuzk_meter_over())
        return p->rc = cuzk_fail(p->err, CUZK_E_NOMEM, "%s: parsing %zu bytes of JSON ran out of "
                                 "the memory allowed to it", what, len);
    if (!*root) {
        bool trunc = json_error_code(&je) == json_error_premature_end_of_input;
        return p->rc = cuzk_fail(p->err, trunc ? CUZK_E_TRUNCATED : CUZK_E_FORMAT,
                                 "%s: invalid JSON at line %d column %d: %s", what, je.line, je.column, je.text);
    }
    return CUZK_OK;
}

int fil_c1_parse_phase1(struct fil_c1 *out, const void *json, size_t len, struct cuzk_error *err)
{
    struct jp p = {.err = err};
    memset(out, 0, sizeof *out);
    json_t *root;
    if (load_json(&root, &p, json, len, "Phase1Out")) return p.rc;
    int rc = parse_phase1_obj(&p, out, root);
    json_decref(root);
    if (rc) fil_c1_free(out);
    else out->sector_size = out->proof->sector_size;
    return rc;
}

int fil_c1_parse_wrapper(struct fil_c1 *out, const void *json, size_t len, struct cuzk_error *err)
{
    struct jp p = {.err = err};
    memset(out, 0, sizeof *out);
    json_t *root;
    if (load_json(&root, &p, json, len, "wrapper")) return p.rc;
    uint64_t sn = 0, ss = 0;
    size_t s;
    json_t *b64;
    int rc = CUZK_OK;
    uint8_t *inner = NULL;
    size_t inner_len = 0;
    json_t *in_root = NULL;
    if (!json_is_object(root)) {
        rc = jp_fail(&p, CUZK_E_FORMAT, "expected object, got %s", jtype(root));
        goto done;
    }
    if (!get_uint(&p, root, "SectorNum", UINT64_MAX >> 1, &sn) || !get_uint(&p, root, "SectorSize", UINT64_MAX >> 1, &ss)) {
        rc = p.rc;
        goto done;
    }
    b64 = jp_get(&p, root, "Phase1Out", JSON_STRING, &s);
    if (!b64) {
        rc = p.rc;
        goto done;
    }
    rc = fil_base64_decode(&inner, &inner_len, json_string_value(b64), json_string_length(b64), err);
    if (rc) {
        cuzk_fail_prefix(err, rc, "Phase1Out");
        goto done;
    }
    /* the wrapper's tree holds the base64 text (as large as the request): gone before the
     * inner tree, the largest allocation, is built */
    json_decref(root);
    root = NULL;
    if ((rc = load_json(&in_root, &p, inner, inner_len, "Phase1Out"))) goto done;
    /* the path stays "Phase1Out" so that inner errors read Phase1Out.vanilla_proofs... */
    rc = parse_phase1_obj(&p, out, in_root);
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
    if (in_root) json_decref(in_root);
    cuzk_free(inner);
    if (root) json_decref(root);
    if (rc) fil_c1_free(out);
    return rc;
}
