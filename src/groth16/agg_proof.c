/* agg_proof.c: the AggregateProof byte layout (bellperson src/groth16/aggregate/proof.rs,
 * AggregateProof::write / read): com_ab.0, com_ab.1, com_c.0, com_c.1, ip_ab (Gt, 288 bytes
 * each: agg_gt_compress), agg_c (G1 compressed); then the GIPA proof: nproofs (u32 LE), for
 * each of the log2(nproofs) rounds comms_ab (tab_l.0, tab_l.1, tab_r.0, tab_r.1), then all
 * comms_c the same way, then all z_ab (l, r), then all z_c (G1, G1); final_a (G1), final_b
 * (G2), final_c (G1), final_vkey (G2, G2), final_wkey (G1, G1); then vkey_opening (G2, G2)
 * and wkey_opening (G1, G1). 2260 + 2976 log2(nproofs) bytes (8212 for 4 proofs, as
 * bellperson's test_proof_io). */
#include <stdio.h>
#include <string.h>

#include "agg_internal.h"

size_t agg_proof_size(uint32_t nproofs)
{
    unsigned l = 0;
    while (l < 32 && ((uint64_t)1 << l) < nproofs) l++;
    return 2260 + 2976 * (size_t)l;
}

struct wr { uint8_t *p; bool ok; };

static void w_gt(struct wr *w, const fp12_t *f)
{
    if (!agg_gt_compress(w->p, f)) w->ok = false;
    w->p += 288;
}
static void w_g1(struct wr *w, const g1_aff_t *p)
{
    g1_aff_to_compressed(w->p, p);
    w->p += 48;
}
static void w_g2(struct wr *w, const g2_aff_t *p)
{
    g2_aff_to_compressed(w->p, p);
    w->p += 96;
}

int agg_proof_to_bytes(uint8_t *out, const struct agg_proof *p, struct cuzk_error *err)
{
    if (p->nproofs < 2 || p->nproofs > ((uint32_t)1 << AGG_MAX_LEVELS) ||
        (p->nproofs & (p->nproofs - 1)) ||
        agg_proof_size(p->nproofs) != 2260 + 2976 * (size_t)p->levels)
        return cuzk_fail(err, CUZK_E_INVALID_ARG,
                         "agg_proof_to_bytes: nproofs %u / %u rounds is not a valid aggregate",
                         p->nproofs, p->levels);
    struct wr w = {out, true};
    w_gt(&w, &p->com_ab[0]);
    w_gt(&w, &p->com_ab[1]);
    w_gt(&w, &p->com_c[0]);
    w_gt(&w, &p->com_c[1]);
    w_gt(&w, &p->ip_ab);
    w_g1(&w, &p->agg_c);
    for (int i = 0; i < 4; i++) *w.p++ = (uint8_t)(p->nproofs >> (8 * i));
    for (unsigned i = 0; i < p->levels; i++)
        for (int k = 0; k < 4; k++) w_gt(&w, &p->comms_ab[i][k]);
    for (unsigned i = 0; i < p->levels; i++)
        for (int k = 0; k < 4; k++) w_gt(&w, &p->comms_c[i][k]);
    for (unsigned i = 0; i < p->levels; i++) {
        w_gt(&w, &p->z_ab[i][0]);
        w_gt(&w, &p->z_ab[i][1]);
    }
    for (unsigned i = 0; i < p->levels; i++) {
        w_g1(&w, &p->z_c[i][0]);
        w_g1(&w, &p->z_c[i][1]);
    }
    w_g1(&w, &p->final_a);
    w_g2(&w, &p->final_b);
    w_g1(&w, &p->final_c);
    w_g2(&w, &p->final_vkey[0]);
    w_g2(&w, &p->final_vkey[1]);
    w_g1(&w, &p->final_wkey[0]);
    w_g1(&w, &p->final_wkey[1]);
    w_g2(&w, &p->vkey_opening[0]);
    w_g2(&w, &p->vkey_opening[1]);
    w_g1(&w, &p->wkey_opening[0]);
    w_g1(&w, &p->wkey_opening[1]);
    if (!w.ok)
        return cuzk_fail(err, CUZK_E_INVALID_ARG,
                         "agg_proof_to_bytes: a Gt value has c1 = 0 and cannot be compressed");
    return CUZK_OK;
}

/* ------------------------------------------------------------------ read -- */

struct rd { const uint8_t *p; size_t left; struct cuzk_error *err; int rc; };

static const uint8_t *take(struct rd *r, size_t n, const char *what)
{
    if (r->rc) return NULL;
    if (r->left < n) {
        r->rc = cuzk_fail(r->err, CUZK_E_TRUNCATED,
                          "aggregate proof: %s: truncated (%zu bytes left, %zu needed)", what,
                          r->left, n);
        return NULL;
    }
    const uint8_t *q = r->p;
    r->p += n;
    r->left -= n;
    return q;
}

static void r_gt(struct rd *r, fp12_t *f, const char *what)
{
    const uint8_t *q = take(r, 288, what);
    if (!q) return;
    int rc = agg_gt_decompress(f, q, r->err);
    if (rc) r->rc = cuzk_fail_prefix(r->err, rc, "aggregate proof: %s", what);
}
static void r_g1(struct rd *r, g1_aff_t *p, const char *what)
{
    const uint8_t *q = take(r, 48, what);
    if (!q) return;
    int rc = g1_aff_from_compressed(p, q, true, r->err);
    if (rc) r->rc = cuzk_fail_prefix(r->err, rc, "aggregate proof: %s", what);
}
static void r_g2(struct rd *r, g2_aff_t *p, const char *what)
{
    const uint8_t *q = take(r, 96, what);
    if (!q) return;
    int rc = g2_aff_from_compressed(p, q, true, r->err);
    if (rc) r->rc = cuzk_fail_prefix(r->err, rc, "aggregate proof: %s", what);
}

static const char *const TAB[4] = {"tab_l.0", "tab_l.1", "tab_r.0", "tab_r.1"};
static const char *const TUC[4] = {"tuc_l.0", "tuc_l.1", "tuc_r.0", "tuc_r.1"};

int agg_proof_from_bytes(struct agg_proof *p, const uint8_t *in, size_t len,
                         struct cuzk_error *err)
{
    memset(p, 0, sizeof *p);
    struct rd r = {in, len, err, CUZK_OK};
    char what[48];
    r_gt(&r, &p->com_ab[0], "com_ab.0");
    r_gt(&r, &p->com_ab[1], "com_ab.1");
    r_gt(&r, &p->com_c[0], "com_c.0");
    r_gt(&r, &p->com_c[1], "com_c.1");
    r_gt(&r, &p->ip_ab, "ip_ab");
    r_g1(&r, &p->agg_c, "agg_c");
    const uint8_t *q = take(&r, 4, "nproofs");
    if (r.rc) goto fail;
    uint32_t n = (uint32_t)q[0] | (uint32_t)q[1] << 8 | (uint32_t)q[2] << 16 | (uint32_t)q[3] << 24;
    if (n < 2 || n > ((uint32_t)1 << AGG_MAX_LEVELS) || (n & (n - 1))) {
        r.rc = cuzk_fail(err, CUZK_E_FORMAT,
                         "aggregate proof: nproofs = %u is not a power of two in [2, 2^%d]", n,
                         AGG_MAX_LEVELS);
        goto fail;
    }
    unsigned l = 0;
    while (((uint32_t)1 << l) < n) l++;
    p->nproofs = n;
    p->levels = l;
    if (len != agg_proof_size(n)) {
        r.rc = cuzk_fail(err, len < agg_proof_size(n) ? CUZK_E_TRUNCATED : CUZK_E_FORMAT,
                         "aggregate proof: %zu bytes, %u proofs need exactly %zu", len, n,
                         agg_proof_size(n));
        goto fail;
    }
    for (unsigned i = 0; i < l; i++)
        for (int k = 0; k < 4; k++) {
            snprintf(what, sizeof what, "comms_ab[%u].%s", i, TAB[k]);
            r_gt(&r, &p->comms_ab[i][k], what);
        }
    for (unsigned i = 0; i < l; i++)
        for (int k = 0; k < 4; k++) {
            snprintf(what, sizeof what, "comms_c[%u].%s", i, TUC[k]);
            r_gt(&r, &p->comms_c[i][k], what);
        }
    for (unsigned i = 0; i < l; i++)
        for (int k = 0; k < 2; k++) {
            snprintf(what, sizeof what, "z_ab[%u].%s", i, k ? "r" : "l");
            r_gt(&r, &p->z_ab[i][k], what);
        }
    for (unsigned i = 0; i < l; i++)
        for (int k = 0; k < 2; k++) {
            snprintf(what, sizeof what, "z_c[%u].%s", i, k ? "r" : "l");
            r_g1(&r, &p->z_c[i][k], what);
        }
    r_g1(&r, &p->final_a, "final_a");
    r_g2(&r, &p->final_b, "final_b");
    r_g1(&r, &p->final_c, "final_c");
    r_g2(&r, &p->final_vkey[0], "final_vkey.0");
    r_g2(&r, &p->final_vkey[1], "final_vkey.1");
    r_g1(&r, &p->final_wkey[0], "final_wkey.0");
    r_g1(&r, &p->final_wkey[1], "final_wkey.1");
    r_g2(&r, &p->vkey_opening[0], "vkey_opening.0");
    r_g2(&r, &p->vkey_opening[1], "vkey_opening.1");
    r_g1(&r, &p->wkey_opening[0], "wkey_opening.0");
    r_g1(&r, &p->wkey_opening[1], "wkey_opening.1");
    if (!r.rc) return CUZK_OK;
fail:
    memset(p, 0, sizeof *p);
    return r.rc;
}
