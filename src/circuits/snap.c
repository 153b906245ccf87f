/* snap.c: the SnapDeals partition circuit (storage-proofs-update circuit.rs, gadgets.rs,
 * constants.rs, challenges.rs) and the storage-proofs-core gadgets it uses
 * (por.rs por_no_challenge_input, insertion.rs insert/select/pick), in upstream's allocation
 * and constraint order. Everything is our own code; upstream was read for the facts only. */
#include <string.h>

#include "cuzk/porep.h"
#include "cuzk/snap.h"
#include "cuzk/util.h"

/* ------------------------------------------------------------------ sizes -- */

int snap_config_for_size(struct snap_config *c, uint64_t sector_size, struct cuzk_error *err)
{
    memset(c, 0, sizeof *c);
    c->sector_size = sector_size;
    unsigned sub = 0, top = 0;
    switch (sector_size) {
    case 1ull << 10:   c->nodes_log2 = 5;  sub = 4; break;          /* test sizes: 8-4-0 */
    case 2ull << 10:   c->nodes_log2 = 6;  break;                   /* 8-0-0 */
    case 4ull << 10:   c->nodes_log2 = 7;  sub = 2; break;          /* 8-2-0 */
    case 8ull << 10:   c->nodes_log2 = 8;  sub = 4; break;          /* 8-4-0 */
    case 16ull << 10:  c->nodes_log2 = 9;  sub = 8; break;          /* 8-8-0 */
    case 32ull << 10:  c->nodes_log2 = 10; sub = 8; top = 2; break; /* 8-8-2 */
    case 8ull << 20:   c->nodes_log2 = 18; break;                   /* 8-0-0 */
    case 16ull << 20:  c->nodes_log2 = 19; sub = 2; break;          /* 8-2-0 */
    case 512ull << 20: c->nodes_log2 = 24; break;                   /* 8-0-0 */
    case 32ull << 30:  c->nodes_log2 = 30; sub = 8; break;          /* 8-8-0 */
    case 64ull << 30:  c->nodes_log2 = 31; sub = 8; top = 2; break; /* 8-8-2 */
    default:
        return cuzk_fail(err, CUZK_E_UNSUPPORTED,
                         "snap: sector size %llu is not a SnapDeals size (2KiB, 8MiB, 512MiB, 32GiB, 64GiB)",
                         (unsigned long long)sector_size);
    }
    unsigned L = c->nodes_log2;
    c->partitions = L <= 8 ? 1 : L <= 10 ? 2 : L <= 19 ? 4 : 16;
    c->partition_bits = c->partitions == 1 ? 0 : c->partitions == 2 ? 1 : c->partitions == 4 ? 2 : 4;
    c->challenges = L <= 19 ? 10 : 86;
    c->apex_leaves = L <= 8 ? 8 : 128;
    c->apex_bits = L <= 8 ? 3 : 7;
    for (unsigned i = 0; i < SNAP_HS; i++) c->hs[i] = L <= 10 ? 1 : 7 + i;
    c->rand_bits = L - c->partition_bits;
    c->per_digest = 254 / c->rand_bits;
    c->digests = (c->challenges + c->per_digest - 1) / c->per_digest;
    c->tree_d_levels = L - c->partition_bits - c->apex_bits;
    c->base_arity = 8;
    c->sub_arity = sub;
    c->top_arity = top;
    unsigned rest = L - (sub == 8 ? 3 : sub == 4 ? 2 : sub == 2 ? 1 : 0) - (top ? 1 : 0);
    c->base_levels = rest / 3;
    c->r_levels = c->base_levels + (sub ? 1 : 0) + (top ? 1 : 0);
    c->r_siblings = c->base_levels * 7 + (sub ? sub - 1 : 0) + (top ? top - 1 : 0);
    return CUZK_OK;
}

unsigned snap_h_default(const struct snap_config *c) { return c->hs[3]; }

int snap_k_and_h_select(fr_t *out, const struct snap_config *c, unsigned k, unsigned h,
                        struct cuzk_error *err)
{
    if (k >= c->partitions)
        return cuzk_fail(err, CUZK_E_INVALID_ARG, "snap: partition %u of %u", k, c->partitions);
    unsigned idx = SNAP_HS;
    for (unsigned i = 0; i < SNAP_HS && idx == SNAP_HS; i++)
        if (c->hs[i] == h) idx = i;
    if (idx == SNAP_HS)
        return cuzk_fail(err, CUZK_E_INVALID_ARG, "snap: h = %u is not allowed for this sector size (hs %u..%u)",
                         h, c->hs[0], c->hs[SNAP_HS - 1]);
    fr_from_u64(out, (uint64_t)k | ((uint64_t)1 << idx << c->partition_bits));
    return CUZK_OK;
}

/* ------------------------------------------------------------ native side -- */

int snap_public_inputs(fr_t out[4], const struct snap_config *c, unsigned k, unsigned h,
                       const fr_t *comm_r_old, const fr_t *comm_d_new, const fr_t *comm_r_new,
                       struct cuzk_error *err)
{
    int rc = snap_k_and_h_select(&out[0], c, k, h, err);
    if (rc) return rc;
    out[1] = *comm_r_old;
    out[2] = *comm_d_new;
    out[3] = *comm_r_new;
    return CUZK_OK;
}

int snap_poseidon_gen_consts(struct poseidon_consts *out, struct cuzk_error *err)
{
    const struct poseidon_consts *p2 = poseidon_consts_get(2, err);
    if (!p2) return err ? err->code : CUZK_E_INTERNAL;
    *out = *p2;             /* the tables depend on the width only; the tag differs */
    fr_from_u64(&out->domain_tag, 1ull << 40);      /* HashType::Custom(Arbitrary(1)) */
    return CUZK_OK;
}

int snap_hash_gen(fr_t *out, const fr_t *a, const fr_t *b, struct cuzk_error *err)
{
    struct poseidon_consts pc;
    int rc = snap_poseidon_gen_consts(&pc, err);
    if (rc) return rc;
    fr_t in[2] = {*a, *b};
    poseidon_hash(out, &pc, in);
    return CUZK_OK;
}

int snap_rho(fr_t *out, const struct snap_config *c, const fr_t *phi, uint64_t node, unsigned h,
             struct cuzk_error *err)
{
    if (h == 0 || h > c->nodes_log2 || node >> c->nodes_log2)
        return cuzk_fail(err, CUZK_E_INVALID_ARG, "snap_rho: node %llu, h %u for %u challenge bits",
                         (unsigned long long)node, h, c->nodes_log2);
    fr_t high;
    fr_from_u64(&high, node >> (c->nodes_log2 - h));
    return snap_hash_gen(out, phi, &high, err);
}

int snap_challenges(uint64_t *out, const struct snap_config *c, const fr_t *comm_r_new, unsigned k,
                    struct cuzk_error *err)
{
    if (k >= c->partitions)
        return cuzk_fail(err, CUZK_E_INVALID_ARG, "snap_challenges: partition %u of %u", k, c->partitions);
    unsigned n = 0, R = c->rand_bits;
    for (unsigned j = 0; j < c->digests; j++) {
        fr_t idx, dig;
        uint64_t canon[4];
        fr_from_u64(&idx, (uint64_t)k * c->digests + j);
        int rc = snap_hash_gen(&dig, comm_r_new, &idx, err);
        if (rc) return rc;
        fr_from_mont(canon, &dig);
        unsigned take = j + 1 == c->digests ? c->challenges - n : c->per_digest;
        for (unsigned t = 0; t < take; t++) {
            uint64_t v = 0;
            for (unsigned i = 0; i < R; i++) {
                unsigned b = t * R + i;
                v |= ((canon[b / 64] >> (b % 64)) & 1u) << i;
            }
            out[n++] = v | ((uint64_t)k << R);
        }
    }
    return CUZK_OK;
}

/* ---------------------------------------------------------------- gadgets -- */

static struct glc *lc_fresh(struct gcs *cs, int i) { glc_clear(&cs->tmp[i]); return &cs->tmp[i]; }

/* (sum 2^i bits[i]) * ONE = x: storage-proofs-update's decomposition row (the ONE is in B,
 * x in C; unlike to_bits_le's 0 * 0 = sum - x). */
static void decomp_row(struct gcs *cs, const gbool *bits, unsigned n, const gnum *x)
{
    if (!gcs_shape(cs)) {
        cs->n_constraints++;
        return;
    }
    struct glc *a = lc_fresh(cs, 0), *b = lc_fresh(cs, 1), *cc = lc_fresh(cs, 2);
    for (unsigned i = 0; i < n; i++) glc_add(cs, a, bits[i].var, &cs->pow2[i]);
    glc_add_one(cs, b, G16_VAR_ONE);
    glc_add_one(cs, cc, x->var);
    gcs_enforce(cs, a, b, cc);
}

/* field_into_allocated_bits_le (255 bits, least significant first) + decomp_row:
 * allocated_num_to_allocated_bits of gadgets.rs. */
static void num_to_bits_onerow(struct gcs *cs, gbool out[255], const gnum *x)
{
    uint64_t v[4] = {0, 0, 0, 0};
    if (gcs_values(cs)) fr_from_mont(v, &x->val);
    for (unsigned i = 0; i < 255; i++) out[i] = gb_alloc(cs, (v[i / 64] >> (i % 64)) & 1u);
    decomp_row(cs, out, 255, x);
}

static unsigned log2u(unsigned a) { unsigned k = 0; while ((1u << k) < a) k++; return k; }

/* por_no_challenge_input: per level, the next log2(arity) bits of `bits` (least significant
 * first) insert cur among the level's (already allocated) siblings, then the level's hash;
 * finally computed * ONE = root. Allocates no bits. sha: binary SHA-256 tree (tree D). */
static void por_nci(struct gcs *cs, const unsigned *arity, unsigned levels, const gbool *bits,
                    const gnum *leaf, const gnum *sib, const gnum *root, bool sha)
{
    struct cuzk_error err;
    gnum cur = *leaf, ins[8];
    unsigned nb = 0, ns = 0;
    for (unsigned l = 0; l < levels && !cs->status; l++) {
        unsigned a = arity[l];
        g_insert(cs, ins, &cur, &bits[nb], &sib[ns], a);
        nb += log2u(a);
        ns += a - 1;
        if (sha) {
            cur = g_sha256_node(cs, &ins[0], &ins[1]);
        } else {
            const struct poseidon_consts *pc = poseidon_consts_get(a, &err);
            if (!pc) {
                gcs_fail(cs, err.code, "%s", err.msg);
                return;
            }
            cur = g_poseidon(cs, pc, ins);
        }
    }
    gnum_enforce_equal(cs, &cur, root);
}

/* insertion.rs select: consumes bits most significant first; for each, pick(bit, upper half,
 * lower half) element by element, halving the state. from[] is overwritten. */
static gnum select_gadget(struct gcs *cs, gnum *from, unsigned n, const gbool *bits, unsigned nbits)
{
    unsigned half = n / 2;
    for (unsigned i = nbits; i-- > 0; half /= 2)
        for (unsigned j = 0; j < half; j++) from[j] = g_pick(cs, bits[i], &from[half + j], &from[j]);
    return from[0];
}

/* ------------------------------------------------------------- partition -- */

static const fr_t *val_or_zero(const fr_t *p, size_t i) { return p ? &p[i] : &FR_ZERO; }

static bool witness_ok(struct gcs *cs, const struct snap_config *c, const struct snap_witness *w)
{
    if (!w) return true;
    if (!w->ch || (c->apex_leaves && !w->apex_leaves) || (c->partition_bits && !w->partition_path)) {
        gcs_fail(cs, CUZK_E_INVALID_ARG, "snap: witness without %s",
                 !w->ch ? "challenge proofs" : !w->apex_leaves ? "apex leaves" : "partition path");
        return false;
    }
    for (unsigned i = 0; i < c->challenges; i++)
        if (!w->ch[i].path_r_old || !w->ch[i].path_r_new || (c->tree_d_levels && !w->ch[i].path_d)) {
            gcs_fail(cs, CUZK_E_INVALID_ARG, "snap: challenge %u has no %s path", i,
                     !w->ch[i].path_r_old ? "tree-R-old" : !w->ch[i].path_r_new ? "tree-R-new" : "tree-D");
            return false;
        }
    uint64_t v[4];
    fr_from_mont(v, &w->k_and_h_select);
    unsigned p = c->partition_bits;
    uint64_t hsel = v[0] >> p & ((1u << SNAP_HS) - 1);
    if (v[1] | v[2] | v[3] | (v[0] >> (p + SNAP_HS)) || !hsel || (hsel & (hsel - 1))) {
        gcs_fail(cs, CUZK_E_INVALID_ARG,
                 "snap: k_and_h_select %#llx%s is not k | (h_select << %u) with k < %u and one h_select bit of %u",
                 (unsigned long long)v[0], v[1] | v[2] | v[3] ? " (+ high limbs)" : "", p, c->partitions, SNAP_HS);
        return false;
    }
    return true;
}

/* What every challenge reads from the header (steps 1-11): variables and their values. */
struct snap_head {
    gbool kh_bits[8 + SNAP_HS];     /* p partition bits, then the 6 h-select bits */
    gnum phi, root_r_old, root_r_new;
    gnum apex[SNAP_MAX_APEX];
    gbool (*dbits)[255];            /* c->digests digests' bits (cuzk_malloc) */
    struct poseidon_consts gen;
};

static bool config_ok(struct gcs *cs, const struct snap_config *c)
{
    if (c->challenges > SNAP_MAX_CHALLENGES || c->apex_leaves > SNAP_MAX_APEX || c->nodes_log2 > SNAP_MAX_LEVELS ||
        c->partition_bits > 8 || c->digests * c->per_digest < c->challenges || c->r_levels > SNAP_MAX_LEVELS) {
        gcs_fail(cs, CUZK_E_INVALID_ARG, "snap: config out of range (%u challenges, %u apex leaves, %u bits)",
                 c->challenges, c->apex_leaves, c->nodes_log2);
        return false;
    }
    return true;
}

/* Steps 1-11. hd->dbits is allocated here (free it whatever the status). */
static void synth_head(struct gcs *cs, struct snap_head *hd, const struct snap_config *c,
                       const struct snap_witness *w)
{
    struct cuzk_error err;
    memset(hd, 0, sizeof *hd);
    const struct poseidon_consts *p2 = poseidon_consts_get(2, &err);
    if (!p2 || snap_poseidon_gen_consts(&hd->gen, &err)) {
        gcs_fail(cs, err.code, "%s", err.msg);
        return;
    }
    const unsigned p = c->partition_bits, A = c->apex_leaves;

    /* 1-4: k_and_h_select (input), its p + 6 low bits, the decomposition row, partition */
    gnum khs = gnum_alloc(cs, w ? &w->k_and_h_select : &FR_ZERO);
    gnum_inputize(cs, &khs);
    gbool *kh_bits = hd->kh_bits;
    {
        uint64_t v[4] = {0, 0, 0, 0};
        if (w) fr_from_mont(v, &w->k_and_h_select);
        for (unsigned i = 0; i < p + SNAP_HS; i++) kh_bits[i] = gb_alloc(cs, (v[0] >> i) & 1u);
        decomp_row(cs, kh_bits, p + SNAP_HS, &khs);
    }
    const gbool *part_bits = kh_bits;
    gnum partition = g_pack_bits(cs, part_bits, p);

    /* 5-6: the public commitments, phi */
    gnum comm_r_old = gnum_alloc(cs, w ? &w->comm_r_old : &FR_ZERO);
    gnum_inputize(cs, &comm_r_old);
    gnum comm_d_new = gnum_alloc(cs, w ? &w->comm_d_new : &FR_ZERO);
    gnum_inputize(cs, &comm_d_new);
    gnum comm_r_new = gnum_alloc(cs, w ? &w->comm_r_new : &FR_ZERO);
    gnum_inputize(cs, &comm_r_new);
    gnum pre[2] = {comm_d_new, comm_r_old};
    hd->phi = g_poseidon(cs, &hd->gen, pre);

    /* 7: private header values */
    gnum comm_c = gnum_alloc(cs, w ? &w->comm_c : &FR_ZERO);
    hd->root_r_old = gnum_alloc(cs, w ? &w->root_r_old : &FR_ZERO);
    hd->root_r_new = gnum_alloc(cs, w ? &w->root_r_new : &FR_ZERO);
    gnum *apex = hd->apex, ppath[8];
    for (unsigned i = 0; i < A; i++) apex[i] = gnum_alloc(cs, w ? val_or_zero(w->apex_leaves, i) : &FR_ZERO);
    for (unsigned i = 0; i < p; i++) ppath[i] = gnum_alloc(cs, w ? val_or_zero(w->partition_path, i) : &FR_ZERO);

    /* 8-9: comm_r = H(comm_c, root_r) under the MerkleTree tag; computed * ONE = public */
    gnum pr[2] = {comm_c, hd->root_r_old};
    gnum calc = g_poseidon(cs, p2, pr);
    gnum_enforce_equal(cs, &calc, &comm_r_old);
    pr[1] = hd->root_r_new;
    calc = g_poseidon(cs, p2, pr);
    gnum_enforce_equal(cs, &calc, &comm_r_new);

    /* 10: apex tree, row by row, then the partition path up to comm_d_new */
    {
        gnum row[SNAP_MAX_APEX];
        memcpy(row, apex, A * sizeof *row);
        for (unsigned w2 = A; w2 > 1 && !cs->status; w2 /= 2)
            for (unsigned i = 0; i < w2 / 2; i++) row[i] = g_sha256_node(cs, &row[2 * i], &row[2 * i + 1]);
        unsigned ar2[8] = {2, 2, 2, 2, 2, 2, 2, 2};
        por_nci(cs, ar2, p, part_bits, &row[0], ppath, &comm_d_new, true);
    }

    /* 11: gen_challenge_bits: G digests H(comm_r_new, k * G + j), 255 bits each */
    gbool (*dbits)[255] = hd->dbits = cuzk_malloc((size_t)c->digests * sizeof *dbits);
    if (!dbits) {
        gcs_fail(cs, CUZK_E_NOMEM, "snap: digest bits");
        return;
    }
    fr_t G;
    fr_from_u64(&G, c->digests);
    for (unsigned j = 0; j < c->digests && !cs->status; j++) {
        fr_t jv, iv;
        fr_from_u64(&jv, j);
        fr_mul(&iv, &partition.val, &G);
        fr_add(&iv, &iv, &jv);
        gnum idx = gnum_alloc(cs, &iv);
        if (gcs_shape(cs)) {            /* (G * partition + j * ONE) * ONE = digest_index */
            struct glc *a = lc_fresh(cs, 0), *b = lc_fresh(cs, 1), *cc = lc_fresh(cs, 2);
            glc_add(cs, a, partition.var, &G);
            glc_add(cs, a, G16_VAR_ONE, &jv);   /* coefficient 0 for j = 0: the builder drops it */
            glc_add_one(cs, b, G16_VAR_ONE);
            glc_add_one(cs, cc, idx.var);
            gcs_enforce(cs, a, b, cc);
        } else {
            cs->n_constraints++;
        }
        gnum dp[2] = {comm_r_new, idx};
        gnum dig = g_poseidon(cs, &hd->gen, dp);
        num_to_bits_onerow(cs, dbits[j], &dig);
    }
}

/* Step 12 for challenge ci (ch: its witness, NULL for the blank circuit). sib: scratch of
 * c->r_siblings + A + D gnums. */
static void synth_challenge(struct gcs *cs, const struct snap_config *c, const struct snap_head *hd,
                            unsigned ci, const struct snap_challenge *ch, gnum *sib)
{
    const unsigned L = c->nodes_log2, p = c->partition_bits, A = c->apex_leaves, D = c->tree_d_levels;
    const unsigned R = c->rand_bits;
    const gbool *part_bits = hd->kh_bits, *hsel_bits = hd->kh_bits + p;
    unsigned arr[SNAP_MAX_LEVELS], ard[SNAP_MAX_LEVELS];
    for (unsigned i = 0; i < c->base_levels; i++) arr[i] = c->base_arity;
    if (c->sub_arity) arr[c->base_levels] = c->sub_arity;
    if (c->top_arity) arr[c->base_levels + 1] = c->top_arity;
    for (unsigned i = 0; i < D; i++) ard[i] = 2;
    gnum *sel = sib + c->r_siblings, *dsib = sel + A;
    gbool cb[SNAP_MAX_LEVELS];
    unsigned j = ci / c->per_digest, t = ci % c->per_digest;
    for (unsigned i = 0; i < R; i++) cb[i] = hd->dbits[j][t * R + i];
    for (unsigned i = 0; i < p; i++) cb[R + i] = part_bits[i];

    /* a. get_challenge_high_bits: the top hs[t] bits of the L-bit challenge, each times
     * its h-select bit, summed */
    gnum orz[SNAP_HS];
    for (unsigned h = 0; h < SNAP_HS; h++) {
        gnum high = g_pack_bits(cs, &cb[L - c->hs[h]], c->hs[h]);
        orz[h] = gnum_alloc(cs, (hsel_bits[h].val & 1u) ? &high.val : &FR_ZERO);
        gbool hb = hsel_bits[h];
        if (gcs_shape(cs)) {        /* c_high * h_select_bit = c_high_or_zero */
            struct glc *a = lc_fresh(cs, 0), *b = lc_fresh(cs, 1), *cc = lc_fresh(cs, 2);
            glc_add_one(cs, a, high.var);
            glc_add_one(cs, b, hb.var);
            glc_add_one(cs, cc, orz[h].var);
            gcs_enforce(cs, a, b, cc);
        } else {
            cs->n_constraints++;
        }
    }
    fr_t sum = FR_ZERO;
    for (unsigned h = 0; h < SNAP_HS; h++) fr_add(&sum, &sum, &orz[h].val);
    gnum high_sel = gnum_alloc(cs, &sum);
    if (gcs_shape(cs)) {            /* (sum c_high_or_zero) * ONE = c_high_selected */
        struct glc *a = lc_fresh(cs, 0), *b = lc_fresh(cs, 1), *cc = lc_fresh(cs, 2);
        for (unsigned h = 0; h < SNAP_HS; h++) glc_add_one(cs, a, orz[h].var);
        glc_add_one(cs, b, G16_VAR_ONE);
        glc_add_one(cs, cc, high_sel.var);
        gcs_enforce(cs, a, b, cc);
    } else {
        cs->n_constraints++;
    }

    /* b. rho = H(phi, c_high_selected) */
    gnum rp[2] = {hd->phi, high_sel};
    gnum rho = g_poseidon(cs, &hd->gen, rp);

    /* c-d. leaves and the encoding: leaf_r_new = leaf_r_old + leaf_d_new * rho */
    gnum leaf_r_old = gnum_alloc(cs, ch ? &ch->leaf_r_old : &FR_ZERO);
    gnum leaf_d_new = gnum_alloc(cs, ch ? &ch->leaf_d_new : &FR_ZERO);
    gnum prod = gnum_mul(cs, &leaf_d_new, &rho);
    fr_t nv;
    fr_add(&nv, &leaf_r_old.val, &prod.val);
    gnum leaf_r_new = gnum_alloc(cs, &nv);
    if (gcs_shape(cs)) {            /* (leaf_r_old + product) * ONE = leaf_r_new */
        struct glc *a = lc_fresh(cs, 0), *b = lc_fresh(cs, 1), *cc = lc_fresh(cs, 2);
        glc_add_one(cs, a, leaf_r_old.var);
        glc_add_one(cs, a, prod.var);
        glc_add_one(cs, b, G16_VAR_ONE);
        glc_add_one(cs, cc, leaf_r_new.var);
        gcs_enforce(cs, a, b, cc);
    } else {
        cs->n_constraints++;
    }

    /* e-h. tree R old, then tree R new: siblings, then the path over all L bits */
    for (unsigned i = 0; i < c->r_siblings; i++) sib[i] = gnum_alloc(cs, ch ? &ch->path_r_old[i] : &FR_ZERO);
    por_nci(cs, arr, c->r_levels, cb, &leaf_r_old, sib, &hd->root_r_old, false);
    for (unsigned i = 0; i < c->r_siblings; i++) sib[i] = gnum_alloc(cs, ch ? &ch->path_r_new[i] : &FR_ZERO);
    por_nci(cs, arr, c->r_levels, cb, &leaf_r_new, sib, &hd->root_r_new, false);

    /* i. the apex leaf, selected by bits D .. D + a */
    memcpy(sel, hd->apex, A * sizeof *sel);
    gnum apex_leaf = select_gadget(cs, sel, A, &cb[D], c->apex_bits);

    /* j-k. tree D from the leaf to that apex leaf over bits 0 .. D */
    for (unsigned i = 0; i < D; i++) dsib[i] = gnum_alloc(cs, ch ? &ch->path_d[i] : &FR_ZERO);
    por_nci(cs, ard, D, cb, &leaf_d_new, dsib, &apex_leaf, true);
}

static size_t scratch_len(const struct snap_config *c) { return c->r_siblings + c->apex_leaves + c->tree_d_levels; }

void snap_synthesize(struct gcs *cs, const struct snap_config *c, const struct snap_witness *w)
{
    if (!config_ok(cs, c)) return;
    if (gcs_values(cs) && !witness_ok(cs, c, w)) return;
    if (!gcs_values(cs)) w = NULL;              /* values are never read outside values mode */
    struct snap_head *hd = cuzk_malloc(sizeof *hd);
    gnum *sib = cuzk_malloc(scratch_len(c) * sizeof *sib);
    if (!hd || !sib) {
        cuzk_free(hd);
        cuzk_free(sib);
        gcs_fail(cs, CUZK_E_NOMEM, "snap: header / challenge scratch");
        return;
    }
    synth_head(cs, hd, c, w);
    for (unsigned ci = 0; ci < c->challenges && !cs->status; ci++)
        synth_challenge(cs, c, hd, ci, w ? &w->ch[ci] : NULL, sib);
    cuzk_free(hd->dbits);
    cuzk_free(hd);
    cuzk_free(sib);
}

/* ------------------------------------------------------ parallel witness -- */

int snap_layout_get(struct snap_layout *out, const struct snap_config *c, struct cuzk_error *err)
{
    memset(out, 0, sizeof *out);
    struct gcs cs;
    int rc = gcs_init(&cs, 0, NULL, err);
    if (rc) return rc;
    struct snap_head *hd = cuzk_malloc(sizeof *hd);
    gnum *sib = cuzk_malloc(scratch_len(c) * sizeof *sib);
    if (!hd || !sib) gcs_fail(&cs, CUZK_E_NOMEM, "snap: layout scratch");
    else if (config_ok(&cs, c)) {
        synth_head(&cs, hd, c, NULL);
        out->head_aux = cs.n_aux;
        out->n_inputs = cs.n_inputs;
        /* every challenge allocates the same (no value-dependent branches; checked after each
         * challenge of every witness run) */
        if (!cs.status) synth_challenge(&cs, c, hd, 0, NULL, sib);
        out->ch_aux = cs.n_aux - out->head_aux;
        out->n_aux = out->head_aux + c->challenges * out->ch_aux;
        if (cs.n_inputs != out->n_inputs)
            gcs_fail(&cs, CUZK_E_INTERNAL, "snap: a challenge allocates inputs");
        cuzk_free(hd->dbits);
    }
    cuzk_free(hd);
    cuzk_free(sib);
    rc = gcs_status(&cs, err);
    gcs_free(&cs);
    return rc;
}

/* A values-mode context writing into aux[at, end) (numbering as the sequential run). */
static int slice_init(struct gcs *cs, fr_t *aux, uint32_t at, uint32_t end, struct cuzk_error *err)
{
    int rc = gcs_init(cs, GCS_VALUES, NULL, err);
    if (rc) return rc;
    cs->aux = aux;
    cs->aux_cap = end;
    cs->n_aux = at;
    return CUZK_OK;
}

static int slice_finish(struct gcs *cs, uint32_t end, unsigned ci, struct cuzk_error *err)
{
    cs->aux = NULL;
    cs->aux_cap = 0;
    if (!cs->status && cs->n_aux != end)
        gcs_fail(cs, CUZK_E_INTERNAL, "snap: challenge %u ended at aux %u (layout: %u)", ci, cs->n_aux, end);
    int rc = gcs_status(cs, err);
    gcs_free(cs);
    return rc;
}

struct snap_par {
    fr_t *aux;
    const struct snap_config *c;
    const struct snap_witness *w;
    const struct snap_layout *l;
    const struct snap_head *hd;
    int rc[SNAP_MAX_CHALLENGES];
    struct cuzk_error err[SNAP_MAX_CHALLENGES];
};

static void par_challenges(void *ctx, size_t begin, size_t end, unsigned worker)
{
    (void)worker;
    struct snap_par *x = ctx;
    gnum *sib = cuzk_malloc(scratch_len(x->c) * sizeof *sib);
    for (size_t i = begin; i < end; i++) {
        if (!sib) {
            x->rc[i] = cuzk_fail(&x->err[i], CUZK_E_NOMEM, "snap: challenge scratch");
            continue;
        }
        uint32_t a0 = x->l->head_aux + (uint32_t)i * x->l->ch_aux;
        struct gcs cs;
        if ((x->rc[i] = slice_init(&cs, x->aux, a0, a0 + x->l->ch_aux, &x->err[i]))) continue;
        synth_challenge(&cs, x->c, x->hd, (unsigned)i, &x->w->ch[i], sib);
        x->rc[i] = slice_finish(&cs, a0 + x->l->ch_aux, (unsigned)i, &x->err[i]);
    }
    cuzk_free(sib);
}

int snap_witness_values(fr_t *inputs, fr_t *aux, const struct snap_config *c, const struct snap_witness *w,
                        struct pool *pool, struct cuzk_error *err)
{
    if (!c || !w || !inputs || !aux)
        return cuzk_fail(err, CUZK_E_INVALID_ARG, "snap_witness_values: NULL argument");
    struct snap_layout l;
    int rc = snap_layout_get(&l, c, err);
    if (rc) return rc;
    struct snap_par *x = cuzk_calloc(1, sizeof *x);
    struct snap_head *hd = cuzk_malloc(sizeof *hd);
    if (!x || !hd) {
        cuzk_free(x);
        cuzk_free(hd);
        return cuzk_fail(err, CUZK_E_NOMEM, "snap_witness_values: context");
    }
    memset(hd, 0, sizeof *hd);
    /* the header in the caller's thread: every challenge reads its values */
    struct gcs cs;
    rc = gcs_init(&cs, GCS_VALUES, NULL, err);
    if (!rc) {
        cuzk_free(cs.inputs);
        cs.inputs = inputs;
        cs.inp_cap = l.n_inputs;
        cs.aux = aux;
        cs.aux_cap = l.head_aux;
        if (witness_ok(&cs, c, w)) synth_head(&cs, hd, c, w);
        else hd->dbits = NULL;
        cs.aux = cs.inputs = NULL;
        cs.aux_cap = cs.inp_cap = 0;
        if (!cs.status && (cs.n_aux != l.head_aux || cs.n_inputs != l.n_inputs))
            gcs_fail(&cs, CUZK_E_INTERNAL, "snap: header ended at aux %u, input %u (layout %u, %u)", cs.n_aux,
                     cs.n_inputs, l.head_aux, l.n_inputs);
        rc = gcs_status(&cs, err);
        gcs_free(&cs);
    }
    if (!rc) {
        *x = (struct snap_par){.aux = aux, .c = c, .w = w, .l = &l, .hd = hd};
        if (pool) pool_parallel_for(pool, c->challenges, 1, par_challenges, x);
        else par_challenges(x, 0, c->challenges, 0);
        for (unsigned i = 0; i < c->challenges && !rc; i++)
            if ((rc = x->rc[i]) && err) *err = x->err[i];
    }
    if (!rc) inputs[0] = FR_ONE;
    cuzk_free(hd->dbits);
    cuzk_free(hd);
    cuzk_free(x);
    return rc;
}

/* ------------------------------------------------------------ parallel shape -- */

struct snap_shape_ctx {
    const struct snap_config *c;
    const struct snap_head *hd;     /* the header's variables and constants: only read */
};

/* Challenge ci into its segment builder, numbered from the segment's first aux (a challenge
 * allocates no input), with scratch of its own for the sibling lists. */
struct snap_head_one {
    struct snap_head *hd;       /* written by the header's synthesis */
    const struct snap_config *c;
};
static void snap_head_synth(struct gcs *cs, void *arg)
{
    const struct snap_head_one *o = arg;
    synth_head(cs, o->hd, o->c, NULL);
}

/* One challenge: the shared, read-only header and this worker's scratch. */
struct snap_challenge_one {
    const struct snap_shape_ctx *x;
    unsigned ci;
    gnum *sib;
};
static void snap_challenge_synth(struct gcs *cs, void *arg)
{
    const struct snap_challenge_one *o = arg;
    synth_challenge(cs, o->x->c, o->x->hd, o->ci, NULL, o->sib);
}

static int snap_shape_challenge(void *ctx, size_t ci, struct g16_builder *sb, struct cuzk_error *err)
{
    const struct snap_shape_ctx *x = ctx;
    gnum *sib = cuzk_malloc(scratch_len(x->c) * sizeof *sib);
    if (!sib) return cuzk_fail(err, CUZK_E_NOMEM, "snap: challenge %zu scratch", ci);
    struct snap_challenge_one o = {x, (unsigned)ci, sib};
    int rc = gcs_record(sb, snap_challenge_synth, &o, err);
    cuzk_free(sib);
    return rc;
}

int snap_shape(struct g16_builder *b, const struct snap_config *c, struct pool *pool, struct cuzk_error *err)
{
    if (!b || !c) return cuzk_fail(err, CUZK_E_INVALID_ARG, "snap_shape: NULL argument");
    struct snap_layout l;
    int rc = snap_layout_get(&l, c, err);     /* checks the config too */
    if (rc) return rc;
    struct snap_head *hd = cuzk_calloc(1, sizeof *hd);
    if (!hd) return cuzk_fail(err, CUZK_E_NOMEM, "snap_shape: header");
    /* the header (steps 1-11) into b itself: the prefix every challenge references */
    struct snap_head_one o = {hd, c};
    rc = gcs_record(b, snap_head_synth, &o, err);
    if (!rc) {
        struct snap_shape_ctx x = {.c = c, .hd = hd};
        rc = g16_builder_segments(b, c->challenges, 0, l.ch_aux, snap_shape_challenge, &x, pool, err);
    }
    cuzk_free(hd->dbits);
    cuzk_free(hd);
    return rc;
}
