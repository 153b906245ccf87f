/* c1_write.c: base64 and the JSON writer of the C1 output: SealCommitPhase1Output in
 * serde_json's compact form (fields in declaration order, domains as 32-integer arrays) and
 * Curio's wrapper {"SectorNum","Phase1Out","SectorSize"}. */
#include <stdio.h>
#include <string.h>

#include "cuzk/filecoin.h"
#include "cuzk/util.h"

/* ----------------------------------------------------------------- base64 -- */

static const char B64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

char *fil_base64_encode(const uint8_t *in, size_t n, size_t *out_len)
{
    size_t m = (n + 2) / 3 * 4;
    char *o = cuzk_malloc(m + 1), *p = o;
    if (!o) return NULL;
    size_t i = 0;
    for (; i + 3 <= n; i += 3) {
        uint32_t v = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8 | in[i + 2];
        *p++ = B64[v >> 18];
        *p++ = B64[(v >> 12) & 63];
        *p++ = B64[(v >> 6) & 63];
        *p++ = B64[v & 63];
    }
    if (i < n) {
        uint32_t v = (uint32_t)in[i] << 16 | (i + 1 < n ? (uint32_t)in[i + 1] << 8 : 0);
        *p++ = B64[v >> 18];
        *p++ = B64[(v >> 12) & 63];
        *p++ = i + 1 < n ? B64[(v >> 6) & 63] : '=';
        *p++ = '=';
    }
    *p = 0;
    if (out_len) *out_len = m;
    return o;
}

int fil_base64_decode(uint8_t **out, size_t *out_len, const char *in, size_t n, struct cuzk_error *err)
{
    int8_t dec[256];    /* built per call: no shared state between threads */
    memset(dec, -1, sizeof dec);
    for (int i = 0; i < 64; i++) dec[(uint8_t)B64[i]] = (int8_t)i;
    *out = NULL;
    *out_len = 0;
    if (n % 4)
        return cuzk_fail(err, CUZK_E_BAD_ENCODING,
                         "base64: length %zu is not a multiple of 4 (truncated?)", n);
    uint8_t *o = cuzk_malloc(n / 4 * 3 + 1);
    if (!o) return cuzk_fail(err, CUZK_E_NOMEM, "base64: %zu bytes", n);
    cuzk_advise_huge(o, n / 4 * 3);   /* a 32 GiB C1's ~38 MB */
    size_t k = 0, i = 0;
    /* every quad but the last has no padding: decode without the per-character checks, and
     * leave a bad character to the careful loop below, which names it */
    for (; i + 4 < n; i += 4) {
        int8_t a = dec[(uint8_t)in[i]], b = dec[(uint8_t)in[i + 1]], c = dec[(uint8_t)in[i + 2]],
               d = dec[(uint8_t)in[i + 3]];
        if ((a | b | c | d) < 0) break;
        uint32_t v = (uint32_t)a << 18 | (uint32_t)b << 12 | (uint32_t)c << 6 | (uint32_t)d;
        o[k++] = (uint8_t)(v >> 16);
        o[k++] = (uint8_t)(v >> 8);
        o[k++] = (uint8_t)v;
    }
    for (; i < n; i += 4) {
        int v[4];
        unsigned pad = 0;
        for (int j = 0; j < 4; j++) {
            uint8_t ch = (uint8_t)in[i + (size_t)j];
            if (ch == '=' && i + 4 == n && j >= 2) {
                pad++;
                v[j] = 0;
                continue;
            }
            v[j] = dec[ch];
            if (v[j] < 0 || pad) {
                cuzk_free(o);
                return cuzk_fail(err, CUZK_E_BAD_ENCODING,
                                 "base64: offset %zu: invalid character 0x%02x", i + (size_t)j, ch);
            }
        }
        uint32_t w = (uint32_t)v[0] << 18 | (uint32_t)v[1] << 12 | (uint32_t)v[2] << 6 | (uint32_t)v[3];
        o[k++] = (uint8_t)(w >> 16);
        if (pad < 2) o[k++] = (uint8_t)(w >> 8);
        if (pad < 1) o[k++] = (uint8_t)w;
    }
    o[k] = 0;
    *out = o;
    *out_len = k;
    return CUZK_OK;
}

/* ------------------------------------------------------------------- JSON -- */

struct sbuf {
    char *p;
    size_t n, cap;
    bool oom;
};

static void sb_reserve(struct sbuf *b, size_t more)
{
    if (b->oom || b->n + more + 1 <= b->cap) return;
    size_t cap = b->cap ? b->cap : 1 << 16;
    while (cap < b->n + more + 1) cap *= 2;
    char *q = cuzk_realloc(b->p, cap);
    if (!q) {
        b->oom = true;
        return;
    }
    b->p = q;
    b->cap = cap;
}

static void sb_put(struct sbuf *b, const char *s)
{
    size_t l = strlen(s);
    sb_reserve(b, l);
    if (b->oom) return;
    memcpy(b->p + b->n, s, l + 1);
    b->n += l;
}

static void sb_u64(struct sbuf *b, uint64_t v)
{
    char t[24];
    snprintf(t, sizeof t, "%llu", (unsigned long long)v);
    sb_put(b, t);
}

static void sb_domain(struct sbuf *b, const uint8_t d[32])
{
    sb_reserve(b, 32 * 4 + 2);
    if (b->oom) return;
    char *p = b->p + b->n;
    *p++ = '[';
    for (int i = 0; i < 32; i++) {
        unsigned v = d[i];
        if (v >= 100) *p++ = (char)('0' + v / 100);
        if (v >= 10) *p++ = (char)('0' + v / 10 % 10);
        *p++ = (char)('0' + v % 10);
        if (i < 31) *p++ = ',';
    }
    *p++ = ']';
    *p = 0;
    b->n = (size_t)(p - b->p);
}

static void sb_field_domain(struct sbuf *b, const char *key, const uint8_t d[32])
{
    sb_put(b, key);
    sb_domain(b, d);
}

/* InclusionPath {"path":[{"hashes":[...],"index":n},...]} over levels [l0, l1). */
static void sb_incl_path(struct sbuf *b, const struct fil_merkle_proof *m, unsigned l0, unsigned l1)
{
    size_t s = 0;
    for (unsigned l = 0; l < l0; l++) s += m->arity[l] - 1u;
    sb_put(b, "{\"path\":[");
    for (unsigned l = l0; l < l1; l++) {
        sb_put(b, l > l0 ? ",{\"hashes\":[" : "{\"hashes\":[");
        for (unsigned j = 0; j + 1 < m->arity[l]; j++) {
            if (j) sb_put(b, ",");
            sb_domain(b, m->sib[s++]);
        }
        sb_put(b, "],\"index\":");
        sb_u64(b, m->index[l]);
        sb_put(b, "}");
    }
    sb_put(b, "]}");
}

static void sb_merkle(struct sbuf *b, const struct fil_merkle_proof *m)
{
    unsigned nb = m->n_base, ns = m->n_sub, nt = m->n_top;
    if (!ns && !nt) {
        sb_field_domain(b, "{\"data\":{\"Single\":{\"root\":", m->root);
        sb_field_domain(b, ",\"leaf\":", m->leaf);
        sb_put(b, ",\"path\":");
        sb_incl_path(b, m, 0, nb);
    } else {
        sb_put(b, nt ? "{\"data\":{\"Top\":{\"base_proof\":" : "{\"data\":{\"Sub\":{\"base_proof\":");
        sb_incl_path(b, m, 0, nb);
        sb_put(b, ",\"sub_proof\":");
        sb_incl_path(b, m, nb, nb + ns);
        if (nt) {
            sb_put(b, ",\"top_proof\":");
            sb_incl_path(b, m, nb + ns, nb + ns + nt);
        }
        sb_field_domain(b, ",\"root\":", m->root);
        sb_field_domain(b, ",\"leaf\":", m->leaf);
    }
    sb_put(b, "}}}");
}

static void sb_column(struct sbuf *b, const struct fil_column_proof *c, unsigned layers)
{
    sb_put(b, "{\"column\":{\"index\":");
    sb_u64(b, c->index);
    sb_put(b, ",\"rows\":[");
    for (unsigned r = 0; r < layers; r++) {
        if (r) sb_put(b, ",");
        sb_domain(b, c->rows[r]);
    }
    sb_put(b, "],\"_h\":null},\"inclusion_proof\":");
    sb_merkle(b, &c->proof);
    sb_put(b, "}");
}

static void sb_labeling(struct sbuf *b, const struct fil_labeling_proof *l)
{
    sb_put(b, "{\"parents\":[");
    for (int i = 0; i < 37; i++) {
        if (i) sb_put(b, ",");
        sb_domain(b, l->parents[i]);
    }
    sb_put(b, "],\"layer_index\":");
    sb_u64(b, l->layer_index);
    sb_put(b, ",\"node\":");
    sb_u64(b, l->node);
    sb_put(b, "}");
}

static void sb_vproof(struct sbuf *b, const struct fil_vproof *v, unsigned layers)
{
    sb_put(b, "{\"comm_d_proofs\":");
    sb_merkle(b, &v->comm_d);
    sb_put(b, ",\"comm_r_last_proof\":");
    sb_merkle(b, &v->comm_r_last);
    sb_put(b, ",\"replica_column_proofs\":{\"c_x\":");
    sb_column(b, &v->c_x, layers);
    sb_put(b, ",\"drg_parents\":[");
    for (int i = 0; i < FIL_DRG_PARENTS; i++) {
        if (i) sb_put(b, ",");
        sb_column(b, &v->drg[i], layers);
    }
    sb_put(b, "],\"exp_parents\":[");
    for (int i = 0; i < FIL_EXP_PARENTS; i++) {
        if (i) sb_put(b, ",");
        sb_column(b, &v->exp[i], layers);
    }
    sb_put(b, "]},\"labeling_proofs\":[");
    for (unsigned l = 0; l < layers; l++) {
        if (l) sb_put(b, ",");
        sb_labeling(b, &v->labeling[l]);
    }
    sb_put(b, "],\"encoding_proof\":");
    sb_labeling(b, &v->encoding);
    sb_put(b, "}");
}

int fil_c1_write_phase1(char **out, size_t *out_len, const struct fil_c1 *c, struct cuzk_error *err)
{
    struct sbuf b = {0};
    unsigned L = c->proof->layers;
    sb_put(&b, "{\"registered_proof\":\"");
    sb_put(&b, c->proof->name);
    sb_put(&b, "\",\"vanilla_proofs\":{\"");
    sb_put(&b, c->proof->vanilla_tag);
    sb_put(&b, "\":[");
    for (unsigned k = 0; k < c->partitions; k++) {
        sb_put(&b, k ? ",[" : "[");
        for (unsigned i = 0; i < c->challenges; i++) {
            if (i) sb_put(&b, ",");
            sb_vproof(&b, &c->vp[(size_t)k * c->challenges + i], L);
        }
        sb_put(&b, "]");
    }
    sb_put(&b, "]}");
    sb_field_domain(&b, ",\"comm_r\":", c->comm_r);
    sb_field_domain(&b, ",\"comm_d\":", c->comm_d);
    sb_field_domain(&b, ",\"replica_id\":", c->replica_id);
    sb_field_domain(&b, ",\"seed\":", c->seed);
    sb_field_domain(&b, ",\"ticket\":", c->ticket);
    sb_put(&b, "}");
    if (b.oom) {
        cuzk_free(b.p);
        return cuzk_fail(err, CUZK_E_NOMEM, "c1 write: out of memory at %zu bytes", b.n);
    }
    *out = b.p;
    *out_len = b.n;
    return CUZK_OK;
}

int fil_c1_write_wrapper(char **out, size_t *out_len, const struct fil_c1 *c, struct cuzk_error *err)
{
    char *inner;
    size_t inner_len, b64_len;
    int rc = fil_c1_write_phase1(&inner, &inner_len, c, err);
    if (rc) return rc;
    char *b64 = fil_base64_encode((const uint8_t *)inner, inner_len, &b64_len);
    cuzk_free(inner);
    if (!b64) return cuzk_fail(err, CUZK_E_NOMEM, "c1 write: base64 of %zu bytes", inner_len);
    char *o = cuzk_malloc(b64_len + 96);
    if (!o) {
        cuzk_free(b64);
        return cuzk_fail(err, CUZK_E_NOMEM, "c1 write: wrapper");
    }
    int n = snprintf(o, 64, "{\"SectorNum\":%llu,\"Phase1Out\":\"", (unsigned long long)c->sector_num);
    memcpy(o + n, b64, b64_len);
    n += (int)b64_len;
    n += snprintf(o + n, 40, "\",\"SectorSize\":%llu}", (unsigned long long)c->sector_size);
    cuzk_free(b64);
    *out = o;
    *out_len = (size_t)n;
    return CUZK_OK;
}

void fil_c1_free(struct fil_c1 *c)
{
    if (!c) return;
    cuzk_free(c->vp);
    c->vp = NULL;
}
