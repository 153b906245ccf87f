/* test_gadgets.c: the gadget layer (gadgets.h): upstream constraint counts, SHA-256 against
 * OpenSSL, Poseidon against neptune's published vectors, and shape/witness agreement
 * (same variables, every row satisfied, checked both by a naive evaluator here and by
 * g16_check on a g16_builder shape). */
#include <openssl/sha.h>

#include "cuzk/gadgets.h"
#include "test.h"

/* ---------------------------------------------------------------- helpers -- */

/* Error detail of the running test (a pointer, so ASSERT_OK can test it). */
static struct cuzk_error g_err;
static struct cuzk_error *E = &g_err;

/* Recording sink: keeps every row so this file can evaluate a*b=c itself. */
struct rec_row { struct g16_term *t[3]; size_t n[3]; };
struct rec {
    struct rec_row *rows;
    size_t n, cap;
    uint32_t n_in, n_aux;
};

static uint32_t rec_in(void *ctx) { struct rec *r = ctx; return G16_VAR_INPUT(r->n_in++); }
static uint32_t rec_aux(void *ctx) { struct rec *r = ctx; return G16_VAR_AUX(r->n_aux++); }
static int rec_enforce(void *ctx, struct g16_lc a, struct g16_lc b, struct g16_lc c)
{
    struct rec *r = ctx;
    if (r->n == r->cap) {
        r->cap = r->cap ? 2 * r->cap : 1024;
        r->rows = realloc(r->rows, r->cap * sizeof *r->rows);
        ASSERT(r->rows);
    }
    struct g16_lc l[3] = {a, b, c};
    struct rec_row *row = &r->rows[r->n++];
    for (int k = 0; k < 3; k++) {
        row->n[k] = l[k].n;
        row->t[k] = malloc((l[k].n + 1) * sizeof(struct g16_term));
        if (l[k].n) memcpy(row->t[k], l[k].t, l[k].n * sizeof(struct g16_term));
    }
    return CUZK_OK;
}
static struct gcs_sink rec_sink(struct rec *r)
{
    memset(r, 0, sizeof *r);
    r->n_in = 1;   /* ONE */
    struct gcs_sink s = {r, rec_in, rec_aux, rec_enforce};
    return s;
}
static void rec_free(struct rec *r)
{
    for (size_t i = 0; i < r->n; i++)
        for (int k = 0; k < 3; k++) free(r->rows[i].t[k]);
    free(r->rows);
}

/* Naive evaluation of every recorded row against the values of cs; returns the first bad
 * row or SIZE_MAX. */
static size_t rec_first_unsat(const struct rec *r, const struct gcs *cs)
{
    for (size_t i = 0; i < r->n; i++) {
        fr_t v[3];
        for (int k = 0; k < 3; k++) {
            v[k] = FR_ZERO;
            for (size_t j = 0; j < r->rows[i].n[k]; j++) {
                fr_t tmp;
                fr_mul(&tmp, &r->rows[i].t[k][j].coeff, gcs_value(cs, r->rows[i].t[k][j].var));
                fr_add(&v[k], &v[k], &tmp);
            }
        }
        fr_t ab;
        fr_mul(&ab, &v[0], &v[1]);
        if (!fr_eq(&ab, &v[2])) return i;
    }
    return SIZE_MAX;
}

/* Run the same synthesis three ways: shape+values into a g16_builder (checked with
 * g16_check), values only, counting only. All three must agree on the counts. */
typedef void (*synth_fn)(struct gcs *cs, void *arg);

struct counts { uint64_t constraints; uint32_t aux, inputs; };

static struct counts run_all_modes(synth_fn fn, void *arg, bool check)
{
    struct counts c[3];
    /* 1. shape + values through the builder */
    struct g16_builder *b = g16_builder_new(false, E);
    ASSERT(b);
    struct gcs_sink sink = gcs_sink_builder(b);
    struct gcs cs;
    ASSERT_OK(gcs_init(&cs, GCS_SHAPE | GCS_VALUES, &sink, E), E);
    fn(&cs, arg);
    ASSERT_OK(gcs_status(&cs, E), E);
    c[0] = (struct counts){cs.n_constraints, cs.n_aux, cs.n_inputs};
    struct g16_shape shape;
    ASSERT_OK(g16_builder_finish(b, &shape, E), E);
    ASSERT_EQ_U64(shape.n_aux, cs.n_aux);
    ASSERT_EQ_U64(shape.n_inputs, cs.n_inputs);
    ASSERT_EQ_U64(shape.n_constraints, cs.n_constraints + cs.n_inputs);
    if (check) {
        struct g16_assignment w = {cs.inputs, cs.aux};
        ASSERT_OK(g16_check(&shape, &w, NULL, E), E);
    }
    g16_shape_free(&shape);
    g16_builder_free(b);
    gcs_free(&cs);
    /* 2. values only, 3. counting only */
    for (int m = 1; m < 3; m++) {
        ASSERT_OK(gcs_init(&cs, m == 1 ? GCS_VALUES : 0, NULL, E), E);
        fn(&cs, arg);
        ASSERT_OK(gcs_status(&cs, E), E);
        c[m] = (struct counts){cs.n_constraints, cs.n_aux, cs.n_inputs};
        gcs_free(&cs);
    }
    for (int m = 1; m < 3; m++) {
        ASSERT_EQ_U64(c[m].constraints, c[0].constraints);
        ASSERT_EQ_U64(c[m].aux, c[0].aux);
        ASSERT_EQ_U64(c[m].inputs, c[0].inputs);
    }
    return c[0];
}

static gbool bool_of_kind(struct gcs *cs, int kind, unsigned v)
{
    if (kind == 0) return gb_const(v);
    gbool x = gb_alloc(cs, kind == 1 ? v : !v);
    return kind == 1 ? x : gb_not(x);
}

/* ---------------------------------------------------------------- Boolean -- */

TEST(boolean_ops_all_kinds)
{
    /* Every operand kind (constant, Is, Not) and value for xor/and/ch/maj: value right, rows
     * satisfied, and the constant-folding cases add no constraint. */
    for (int op = 0; op < 4; op++)
        for (int ka = 0; ka < 3; ka++)
            for (int kb = 0; kb < 3; kb++)
                for (int kc = 0; kc < 3; kc++)
                    for (unsigned v = 0; v < 8; v++) {
                        unsigned a = v & 1, b = (v >> 1) & 1, c = (v >> 2) & 1;
                        if (op < 2 && kc) continue;
                        struct rec r;
                        struct gcs_sink s = rec_sink(&r);
                        struct gcs cs;
                        ASSERT_OK(gcs_init(&cs, GCS_SHAPE | GCS_VALUES, &s, E), E);
                        gbool x = bool_of_kind(&cs, ka, a), y = bool_of_kind(&cs, kb, b);
                        gbool z = bool_of_kind(&cs, kc, c);
                        uint64_t before = cs.n_constraints;
                        gbool res;
                        unsigned want;
                        switch (op) {
                        case 0: res = gb_xor(&cs, x, y); want = a ^ b; break;
                        case 1: res = gb_and(&cs, x, y); want = a & b; break;
                        case 2: res = gb_sha256_ch(&cs, x, y, z); want = (a & b) ^ ((a ^ 1) & c); break;
                        default: res = gb_sha256_maj(&cs, x, y, z); want = (a & b) ^ (a & c) ^ (b & c);
                        }
                        ASSERT_OK(gcs_status(&cs, E), E);
                        ASSERT_EQ_INT(res.val, want);
                        if (res.kind != GB_CONST) {
                            fr_t vv = *gcs_value(&cs, res.var);
                            ASSERT(fr_eq(&vv, (want ^ (res.kind == GB_NOT)) ? &FR_ONE : &FR_ZERO));
                        }
                        uint64_t added = cs.n_constraints - before;
                        bool all_const = !ka && !kb && (op < 2 || !kc);
                        if (all_const) ASSERT_EQ_U64(added, 0);
                        if (op == 0 && ka && kb) ASSERT_EQ_U64(added, 1);
                        if (op == 3 && ka && kb && kc) ASSERT_EQ_U64(added, 2);   /* maj + bc */
                        ASSERT_EQ_U64(r.n, cs.n_constraints);
                        ASSERT_EQ_U64(rec_first_unsat(&r, &cs), SIZE_MAX);
                        rec_free(&r);
                        gcs_free(&cs);
                    }
}

TEST(boolean_unsat_detected)
{
    /* The oracle can fail: flip the xor result and the naive check must notice. */
    struct rec r;
    struct gcs_sink s = rec_sink(&r);
    struct gcs cs;
    ASSERT_OK(gcs_init(&cs, GCS_SHAPE | GCS_VALUES, &s, E), E);
    gbool x = gb_alloc(&cs, 1), y = gb_alloc(&cs, 0);
    gbool z = gb_xor(&cs, x, y);
    ASSERT_EQ_U64(rec_first_unsat(&r, &cs), SIZE_MAX);
    cs.aux[z.var & ~G16_VAR_AUX_BIT] = FR_ZERO;
    ASSERT_EQ_U64(rec_first_unsat(&r, &cs), 2);
    rec_free(&r);
    gcs_free(&cs);
}

/* ----------------------------------------------------------------- UInt32 -- */

struct addmany_arg { uint32_t v[10]; unsigned n, nconst; };

static void synth_addmany(struct gcs *cs, void *p)
{
    struct addmany_arg *a = p;
    gu32 ops[10];
    for (unsigned i = 0; i < a->n; i++)
        ops[i] = i < a->nconst ? gu32_const(a->v[i]) : gu32_alloc(cs, a->v[i]);
    struct gmultieq m;
    gmeq_init(&m);
    gu32 r = gu32_addmany(cs, &m, ops, a->n);
    gmeq_finish(cs, &m);
    uint32_t want = 0;
    for (unsigned i = 0; i < a->n; i++) want += a->v[i];
    if (gcs_values(cs)) ASSERT_EQ_U64(gu32_value(&r), want);
}

TEST(uint32_addmany)
{
    cuzk_rng *rng = test_rng();
    for (unsigned n = 2; n <= 10; n++) {
        struct addmany_arg a = {.n = n, .nconst = n % 3 < n ? n % 3 : n - 1};
        for (unsigned i = 0; i < n; i++) a.v[i] = (uint32_t)cuzk_rng_u64(rng);
        struct counts c = run_all_modes(synth_addmany, &a, true);
        unsigned nbits = 0;
        for (uint64_t max = (uint64_t)n * 0xffffffffu; max; max >>= 1) nbits++;
        /* alloc'd operands (32 each) + result bits + one MultiEq row */
        ASSERT_EQ_U64(c.aux, 32 * (n - a.nconst) + nbits);
        ASSERT_EQ_U64(c.constraints, 32 * (n - a.nconst) + nbits + 1);
    }
    struct addmany_arg k = {.n = 3, .nconst = 3, .v = {1, 2, 0xffffffffu}};
    struct counts c = run_all_modes(synth_addmany, &k, true);
    ASSERT_EQ_U64(c.constraints, 0);   /* all constant: folded */
}

/* ---------------------------------------------------------------- SHA-256 -- */

struct sha_arg { const uint8_t *msg; size_t len; bool block_only; uint8_t out[32]; };

static void synth_sha(struct gcs *cs, void *p)
{
    struct sha_arg *a = p;
    size_t nbits = a->len * 8;
    gbool *in = malloc((nbits + 1) * sizeof *in), out[256];
    for (size_t i = 0; i < nbits; i++) in[i] = gb_alloc(cs, (a->msg[i / 8] >> (7 - i % 8)) & 1);
    if (a->block_only) g_sha256_block_no_padding(cs, out, in);
    else g_sha256(cs, out, in, nbits);
    memset(a->out, 0, 32);
    for (int i = 0; i < 256; i++) a->out[i / 8] |= (uint8_t)((out[i].val & 1) << (7 - i % 8));
    free(in);
}

TEST(sha256_full_block_25840)
{
    /* bellperson test_full_block: 512 allocated bits, constant IV, no padding. */
    uint8_t msg[64];
    cuzk_rng_bytes(test_rng(), msg, sizeof msg);
    struct sha_arg a = {msg, 64, true, {0}};
    struct counts c = run_all_modes(synth_sha, &a, true);
    ASSERT_EQ_U64(c.constraints - 512, 25840);
}

TEST(sha256_full_hash_44874)
{
    /* bellperson test_full_hash: sha256 (with padding) of 512 allocated bits. */
    uint8_t msg[64], want[32];
    cuzk_rng_bytes(test_rng(), msg, sizeof msg);
    struct sha_arg a = {msg, 64, false, {0}};
    struct counts c = run_all_modes(synth_sha, &a, true);
    ASSERT_EQ_U64(c.constraints - 512, 44874);
    SHA256(msg, sizeof msg, want);
    ASSERT_MEM_EQ(a.out, want, 32);
}

TEST(sha256_blank_hash_constant)
{
    /* bellperson test_blank_hash: the padded empty message as constants folds to zero
     * constraints and gives SHA-256("") = e3b0c442... */
    struct gcs cs;
    ASSERT_OK(gcs_init(&cs, 0, NULL, E), E);
    gbool in[512], out[256];
    for (int i = 0; i < 512; i++) in[i] = gb_const(i == 0);
    g_sha256_block_no_padding(&cs, out, in);
    ASSERT_EQ_U64(cs.n_constraints, 0);
    ASSERT_EQ_U64(cs.n_aux, 0);
    uint8_t got[32] = {0}, want[32];
    for (int i = 0; i < 256; i++) {
        ASSERT_EQ_INT(out[i].kind, GB_CONST);
        got[i / 8] |= (uint8_t)(out[i].val << (7 - i % 8));
    }
    SHA256((const uint8_t *)"", 0, want);
    ASSERT_MEM_EQ(got, want, 32);
    gcs_free(&cs);
}

TEST(sha256_witness_matches_openssl)
{
    cuzk_rng *rng = test_rng();
    const size_t lens[] = {0, 1, 3, 31, 32, 55, 56, 63, 64, 65, 100, 119, 120, 128, 200};
    for (size_t k = 0; k < sizeof lens / sizeof lens[0]; k++) {
        uint8_t msg[256], want[32];
        cuzk_rng_bytes(rng, msg, lens[k]);
        struct sha_arg a = {msg, lens[k], false, {0}};
        /* every length through the builder + g16_check would be slow: values mode only,
         * with the full three-mode check on a few lengths */
        if (k % 5 == 0) {
            run_all_modes(synth_sha, &a, true);
        } else {
            struct gcs cs;
            ASSERT_OK(gcs_init(&cs, GCS_VALUES, NULL, E), E);
            synth_sha(&cs, &a);
            ASSERT_OK(gcs_status(&cs, E), E);
            gcs_free(&cs);
        }
        SHA256(msg, lens[k], want);
        ASSERT_MEM_EQ(a.out, want, 32);
    }
}

TEST(sha256_naive_oracle_and_tamper)
{
    /* One block checked by this file's own evaluator; a flipped carry bit must break it. */
    uint8_t msg[40];
    cuzk_rng_bytes(test_rng(), msg, sizeof msg);
    struct rec r;
    struct gcs_sink s = rec_sink(&r);
    struct gcs cs;
    ASSERT_OK(gcs_init(&cs, GCS_SHAPE | GCS_VALUES, &s, E), E);
    struct sha_arg a = {msg, sizeof msg, false, {0}};
    synth_sha(&cs, &a);
    ASSERT_OK(gcs_status(&cs, E), E);
    ASSERT_EQ_U64(r.n, cs.n_constraints);
    ASSERT_EQ_U64(r.n_aux, cs.n_aux);
    ASSERT_EQ_U64(rec_first_unsat(&r, &cs), SIZE_MAX);
    uint32_t k = cs.n_aux - 1;   /* the last allocated bit: a carry of the final addition */
    fr_t one_minus;
    fr_sub(&one_minus, &FR_ONE, &cs.aux[k]);
    cs.aux[k] = one_minus;
    ASSERT(rec_first_unsat(&r, &cs) != SIZE_MAX);
    rec_free(&r);
    gcs_free(&cs);
}

/* ------------------------------------------------------------ num, packing -- */

struct bits_arg { fr_t x; bool strict; size_t npack; };

static void synth_bits(struct gcs *cs, void *p)
{
    struct bits_arg *a = p;
    gnum x = gnum_alloc(cs, &a->x);
    gbool bits[255];
    if (a->strict) gnum_to_bits_le_strict(cs, bits, &x);
    else gnum_to_bits_le(cs, bits, &x);
    gnum y = g_pack_bits(cs, bits, 255);         /* the first 254 bits */
    g_pack_into_inputs(cs, bits, a->npack);
    if (gcs_values(cs)) {
        uint8_t plain[255];
        for (int i = 0; i < 255; i++) plain[i] = bits[i].val;
        fr_t want[2];
        multipack_compute(want, plain, 254);
        ASSERT(fr_eq(&y.val, &want[0]));
        multipack_compute(want, plain, a->npack);
        size_t nin = (a->npack + 253) / 254;
        for (size_t i = 0; i < nin; i++)
            ASSERT(fr_eq(&cs->inputs[cs->n_inputs - nin + i], &want[i]));
        if (!a->strict) {
            uint64_t canon[4];
            fr_from_mont(canon, &a->x);
            for (int i = 0; i < 255; i++) ASSERT_EQ_INT(bits[i].val, (canon[i / 64] >> (i % 64)) & 1);
        }
    }
}

TEST(num_to_bits_and_packing)
{
    uint8_t wide[64];
    cuzk_rng_bytes(test_rng(), wide, sizeof wide);
    struct bits_arg a;
    fr_from_wide_le(&a.x, wide);
    a.npack = 255;
    for (int strict = 0; strict < 2; strict++) {
        a.strict = strict;
        struct counts c = run_all_modes(synth_bits, &a, true);
        if (!strict) {
            /* 255 bits + unpacking + pack_bits row + 2 pack_into_inputs rows */
            ASSERT_EQ_U64(c.constraints, 255 + 1 + 1 + 2);
            ASSERT_EQ_U64(c.inputs, 1 + 2);
        }
    }
    /* r - 1, the largest canonical value, also satisfies the strict decomposition. */
    fr_t m1;
    fr_neg(&m1, &FR_ONE);
    a.x = m1;
    a.strict = true;
    a.npack = 31;
    run_all_modes(synth_bits, &a, true);
}

/* --------------------------------------------------------------- Poseidon -- */

static const struct { unsigned arity; uint64_t limbs[4]; } NEPTUNE_KAT[] = {
    /* neptune 11 src/poseidon.rs hash_values (Strength::Standard, MerkleTree hash of
     * [0, 1, ..., arity-1]); limbs are the canonical value, least significant first. */
    {2, {0x2e203c369a02e7ff, 0xa6fba9339d05a69d, 0x739e0fd902efe161, 0x396508d75e76a56b}},
    {4, {0x019814ff6662075d, 0xfb6b4605bf1327ec, 0x00db3c6579229399, 0x58a54b10a9e5848a}},
    {8, {0x2a9934f56d38a5e6, 0x4b682e9d9cc4aed9, 0x1201004211677077, 0x2394611da3a5de55}},
    {11, {0xcee3bbc32b693163, 0x09f3dcd8ccb08fc1, 0x6ca537e232ebe87a, 0x0c0fc1b2e5227f28}},
    {16, {0x1291c74060266d37, 0x5b8dbc6d30680a6f, 0xc1c2fb5a6f871e63, 0x2d3ae2663381ae8a}},
    {24, {0xd7ef3569f585b321, 0xc3e779f6468815b1, 0x066f39bf783f3d9f, 0x63beb8831f11ae15}},
    {36, {0x4473606dfa4e8140, 0x75cd368df8a8ac3c, 0x540a30e03c10bbaa, 0x699303082a6e5d5f}},
};

TEST(poseidon_neptune_vectors)
{
    for (size_t k = 0; k < sizeof NEPTUNE_KAT / sizeof NEPTUNE_KAT[0]; k++) {
        const struct poseidon_consts *pc = poseidon_consts_get(NEPTUNE_KAT[k].arity, E);
        ASSERT_MSG(pc, "arity %u: %s", NEPTUNE_KAT[k].arity, E->msg);
        fr_t in[36], got, ref, want;
        for (unsigned i = 0; i < pc->arity; i++) fr_from_u64(&in[i], i);
        fr_to_mont(&want, NEPTUNE_KAT[k].limbs);
        poseidon_hash(&got, pc, in);
        poseidon_hash_reference(&ref, pc, in);
        ASSERT_MSG(fr_eq(&ref, &want), "arity %u: reference hash differs from neptune", pc->arity);
        ASSERT_MSG(fr_eq(&got, &want), "arity %u: optimized hash differs from neptune", pc->arity);
    }
}

struct pos_arg { const struct poseidon_consts *pc; fr_t in[36]; fr_t out; };

static void synth_poseidon(struct gcs *cs, void *p)
{
    struct pos_arg *a = p;
    gnum in[36];
    for (unsigned i = 0; i < a->pc->arity; i++) in[i] = gnum_alloc(cs, &a->in[i]);
    gnum out = g_poseidon(cs, a->pc, in);
    if (gcs_values(cs)) a->out = out.val;
}

TEST(poseidon_circuit_counts_and_values)
{
    /* neptune circuit.rs test_poseidon_hash (Standard): 311 / 377 / 505 / 761 / 1009 / 1385
     * for arities 2 / 4 / 8 / 16 / 24 / 36; arity 11 (columns) 598 per porep-circuit.md. */
    static const unsigned arity[] = {2, 4, 8, 11, 16, 24, 36};
    static const unsigned want[] = {311, 377, 505, 598, 761, 1009, 1385};
    cuzk_rng *rng = test_rng();
    for (size_t k = 0; k < 7; k++) {
        struct pos_arg a;
        a.pc = poseidon_consts_get(arity[k], E);
        ASSERT(a.pc);
        for (unsigned i = 0; i < arity[k]; i++) {
            uint8_t wide[64];
            cuzk_rng_bytes(rng, wide, sizeof wide);
            fr_from_wide_le(&a.in[i], wide);
        }
        struct counts c = run_all_modes(synth_poseidon, &a, true);
        ASSERT_EQ_U64(c.constraints, want[k]);
        ASSERT_EQ_U64(c.aux, arity[k] + want[k]);       /* preimage + one per constraint */
        fr_t ref;
        poseidon_hash_reference(&ref, a.pc, a.in);
        ASSERT(fr_eq(&a.out, &ref));
    }
}

TEST(poseidon_naive_oracle)
{
    /* Arity 8 checked by this file's evaluator too; corrupting one S-box output fails. */
    struct pos_arg a;
    a.pc = poseidon_consts_get(8, E);
    ASSERT(a.pc);
    for (unsigned i = 0; i < 8; i++) fr_from_u64(&a.in[i], 1000 + i);
    struct rec r;
    struct gcs_sink s = rec_sink(&r);
    struct gcs cs;
    ASSERT_OK(gcs_init(&cs, GCS_SHAPE | GCS_VALUES, &s, E), E);
    synth_poseidon(&cs, &a);
    ASSERT_OK(gcs_status(&cs, E), E);
    ASSERT_EQ_U64(rec_first_unsat(&r, &cs), SIZE_MAX);
    fr_add(&cs.aux[100], &cs.aux[100], &FR_ONE);
    ASSERT(rec_first_unsat(&r, &cs) != SIZE_MAX);
    rec_free(&r);
    gcs_free(&cs);
}

TEST(poseidon_bad_arity)
{
    ASSERT(poseidon_consts_get(0, E) == NULL);
    ASSERT_EQ_INT(E->code, CUZK_E_UNSUPPORTED);
    ASSERT(poseidon_consts_get(17, E) == NULL);
}

/* ------------------------------------------------------------------ PoRep -- */

#include "cuzk/porep.h"

TEST(create_label_532025)
{
    /* storage-proofs-porep create_label.rs test_create_label: 256 allocated id bits and 37
     * separately allocated 256-bit parents, constant layer and node: 532,025 constraints. */
    struct gcs cs;
    ASSERT_OK(gcs_init(&cs, 0, NULL, E), E);
    gbool id[256], node[64];
    static gbool par[37][256];
    const gbool *pp[37];
    for (int i = 0; i < 256; i++) id[i] = gb_alloc(&cs, i & 1);
    for (int p = 0; p < 37; p++) {
        for (int i = 0; i < 256; i++) par[p][i] = gb_alloc(&cs, (i * p) & 1);
        pp[p] = par[p];
    }
    for (int i = 0; i < 64; i++) node[i] = gb_const((22ull >> i) & 1);
    porep_create_label(&cs, id, pp, 3, node);
    ASSERT_OK(gcs_status(&cs, E), E);
    ASSERT_EQ_U64(cs.n_constraints, 532025);
    gcs_free(&cs);
}

static void porep_counts(uint64_t size, struct counts *c)
{
    struct porep_config cfg;
    ASSERT_OK(porep_config_for_size(&cfg, size, E), E);
    struct gcs cs;
    ASSERT_OK(gcs_init(&cs, 0, NULL, E), E);
    porep_synthesize(&cs, &cfg, NULL);
    ASSERT_OK(gcs_status(&cs, E), E);
    c->constraints = cs.n_constraints + cs.n_inputs;     /* with the prover's input rows */
    c->aux = cs.n_aux;
    c->inputs = cs.n_inputs;
    gcs_free(&cs);
}

TEST(porep_counts_small_sizes)
{
    struct counts c;
    porep_counts(2048, &c);
    ASSERT_EQ_U64(c.constraints, 2687961);
    ASSERT_EQ_U64(c.inputs, 40);
    ASSERT_EQ_U64(c.aux, 2685673);
    porep_counts(8ull << 20, &c);
    ASSERT_EQ_U64(c.constraints, 3844969);
    ASSERT_EQ_U64(c.aux, 3842449);
    porep_counts(512ull << 20, &c);
    ASSERT_EQ_U64(c.constraints, 4423473);
    ASSERT_EQ_U64(c.aux, 4420837);
}

TEST(porep_counts_32g_64g)
{
    struct counts c;
    porep_counts(32ull << 30, &c);
    ASSERT_EQ_U64(c.constraints, 130278869);
    ASSERT_EQ_U64(c.inputs, 328);
    ASSERT_EQ_U64(c.aux, 130169893);
    porep_counts(64ull << 30, &c);
    ASSERT_EQ_U64(c.constraints, 131186177);
    ASSERT_EQ_U64(c.inputs, 328);
    ASSERT_EQ_U64(c.aux, 131076643);
}

/* The witness layout (header + one challenge counted, extrapolated) equals the full
 * sequential count, for every size (the 32/64 GiB totals are the pinned upstream ones). */
TEST(porep_layout_equals_full_count)
{
    static const uint64_t sizes[] = {2048, 8ull << 20, 512ull << 20};
    for (size_t t = 0; t < 3; t++) {
        struct counts c;
        porep_counts(sizes[t], &c);
        struct porep_config cfg;
        ASSERT_OK(porep_config_for_size(&cfg, sizes[t], E), E);
        struct porep_layout l;
        ASSERT_OK(porep_layout_get(&l, &cfg, E), E);
        ASSERT_EQ_U64(l.n_aux, c.aux);
        ASSERT_EQ_U64(l.n_inputs, c.inputs);
        ASSERT_EQ_U64(l.n_constraints + l.n_inputs, c.constraints);
        ASSERT_EQ_U64(l.head_aux + (uint64_t)l.challenges * l.ch_aux, l.n_aux);
        ASSERT_EQ_U64(l.head_inputs, 4);             /* ONE, replica_id, comm_d, comm_r */
        ASSERT_EQ_U64(l.ch_inputs, 18);
    }
    static const struct { uint64_t size, cons, aux; } big[] = {
        {32ull << 30, 130278869, 130169893}, {64ull << 30, 131186177, 131076643}};
    for (size_t t = 0; t < 2; t++) {
        struct porep_config cfg;
        ASSERT_OK(porep_config_for_size(&cfg, big[t].size, E), E);
        struct porep_layout l, l2;
        ASSERT_OK(porep_layout_get(&l, &cfg, E), E);
        ASSERT_EQ_U64(l.n_constraints + l.n_inputs, big[t].cons);
        ASSERT_EQ_U64(l.n_aux, big[t].aux);
        ASSERT_EQ_U64(l.n_inputs, 328);
        ASSERT_OK(porep_layout_get(&l2, &cfg, E), E);   /* cached */
        ASSERT(!memcmp(&l, &l2, sizeof l));
    }
}

/* A random (unsatisfying) witness: values mode never checks rows, so byte identity with the
 * sequential run is what is tested here; satisfiability is tested on generated C1s in
 * tests/filecoin. */
struct rand_path { uint32_t idx[POREP_MAX_LEVELS]; fr_t sib[POREP_MAX_LEVELS * 7]; };
struct rand_ch {
    struct rand_path p[3 + 14];
    fr_t rows[14][POREP_MAX_LAYERS];
};

static void rand_fr(fr_t *x)
{
    uint8_t b[64];
    cuzk_rng_bytes(test_rng(), b, sizeof b);
    fr_from_wide_le(x, b);
}

static void rand_path(struct porep_path *out, struct rand_path *st, unsigned levels, unsigned arity)
{
    for (unsigned l = 0; l < levels; l++) st->idx[l] = (uint32_t)(cuzk_rng_u64(test_rng()) % arity);
    for (unsigned i = 0; i < levels * (arity - 1); i++) rand_fr(&st->sib[i]);
    out->index = st->idx;
    out->siblings = st->sib;
}

TEST(porep_parallel_witness_equals_sequential_random)
{
    struct porep_config cfg;
    ASSERT_OK(porep_config_for_size(&cfg, 2048, E), E);
    ASSERT(cfg.sub_arity == 0 && cfg.top_arity == 0);   /* rand_path: one arity per tree */
    struct porep_challenge ch[2];
    struct rand_ch *st = calloc(2, sizeof *st);
    ASSERT(st);
    struct porep_witness w;
    rand_fr(&w.replica_id);
    rand_fr(&w.comm_d);
    rand_fr(&w.comm_r);
    rand_fr(&w.comm_r_last);
    rand_fr(&w.comm_c);
    for (unsigned i = 0; i < 2; i++) {
        ch[i].node = cuzk_rng_u64(test_rng()) & 63;
        rand_fr(&ch[i].data_leaf);
        rand_path(&ch[i].comm_d_path, &st[i].p[0], cfg.tree_d_depth, 2);
        rand_path(&ch[i].comm_r_last_path, &st[i].p[1], cfg.base_levels, 8);
        rand_path(&ch[i].comm_c_path, &st[i].p[2], cfg.base_levels, 8);
        for (unsigned p = 0; p < 14; p++) {
            struct porep_column *col = p < 6 ? &ch[i].drg[p] : &ch[i].exp[p - 6];
            for (unsigned r = 0; r < cfg.layers; r++) rand_fr(&st[i].rows[p][r]);
            col->rows = st[i].rows[p];
            rand_path(&col->path, &st[i].p[3 + p], cfg.base_levels, 8);
        }
    }
    w.ch = ch;

    struct gcs cs;
    ASSERT_OK(gcs_init(&cs, GCS_VALUES, NULL, E), E);
    porep_synthesize(&cs, &cfg, &w);
    ASSERT_OK(gcs_status(&cs, E), E);
    struct porep_layout l;
    ASSERT_OK(porep_layout_get(&l, &cfg, E), E);
    ASSERT_EQ_U64(cs.n_aux, l.n_aux);
    ASSERT_EQ_U64(cs.n_inputs, l.n_inputs);

    struct pool *pool = pool_new(3, E);
    ASSERT(pool);
    fr_t *in = malloc(l.n_inputs * sizeof *in), *aux = malloc((size_t)l.n_aux * sizeof *aux);
    ASSERT(in && aux);
    for (int run = 0; run < 2; run++) {
        memset(in, 0xa5, l.n_inputs * sizeof *in);
        memset(aux, 0xa5, (size_t)l.n_aux * sizeof *aux);
        ASSERT_OK(porep_witness_values(in, aux, &cfg, &w, run ? pool : NULL, E), E);
        ASSERT_MEM_EQ(in, cs.inputs, l.n_inputs * sizeof *in);
        ASSERT_MEM_EQ(aux, cs.aux, (size_t)l.n_aux * sizeof *aux);
    }
    /* a changed value of challenge 1 moves only challenge 1's slice */
    fr_add(&st[1].rows[3][1], &st[1].rows[3][1], &FR_ONE);
    ASSERT_OK(porep_witness_values(in, aux, &cfg, &w, pool, E), E);
    uint32_t c1 = l.head_aux + l.ch_aux;
    ASSERT_MEM_EQ(aux, cs.aux, (size_t)c1 * sizeof *aux);
    ASSERT(memcmp(aux + c1, cs.aux + c1, (size_t)l.ch_aux * sizeof *aux) != 0);
    /* no witness: an error, not a crash */
    w.ch = NULL;
    ASSERT_CODE(porep_witness_values(in, aux, &cfg, &w, pool, E), CUZK_E_INVALID_ARG, E);
    free(in);
    free(aux);
    free(st);
    pool_free(pool);
    gcs_free(&cs);
}

static void synth_porep_blank(struct gcs *cs, void *arg)
{
    porep_synthesize(cs, arg, NULL);
}

TEST(porep_2k_modes_agree)
{
    /* Shape (builder), witness and counting runs of the same partition agree on every count;
     * the builder's shape has the pinned row count too. */
    struct porep_config cfg;
    ASSERT_OK(porep_config_for_size(&cfg, 2048, E), E);
    struct counts c = run_all_modes(synth_porep_blank, &cfg, false);
    ASSERT_EQ_U64(c.constraints + c.inputs, 2687961);
}

TEST_T(porep_32g_nnz_densities, 600)
{
    /* Curio extern/cuzk/cuzk-project.md (Phase 5 Wave 1), a real 32 GiB partition: nonzeros
     * and densities. ~30 s of CPU, so only with CUZK_TEST_SLOW=1. */
    if (!getenv("CUZK_TEST_SLOW")) test_skip("set CUZK_TEST_SLOW=1 (about 30 s)");
    struct porep_config cfg;
    ASSERT_OK(porep_config_for_size(&cfg, 32ull << 30, E), E);
    struct g16_builder *b = g16_builder_new(true, E);
    ASSERT(b);
    struct gcs_sink sink = gcs_sink_builder(b);
    struct gcs cs;
    ASSERT_OK(gcs_init(&cs, GCS_SHAPE, &sink, E), E);
    porep_synthesize(&cs, &cfg, NULL);
    ASSERT_OK(gcs_status(&cs, E), E);
    gcs_free(&cs);
    struct g16_shape s;
    ASSERT_OK(g16_builder_finish(b, &s, E), E);
    g16_builder_free(b);
    ASSERT_EQ_U64(s.n_constraints, 130278869);
    ASSERT_EQ_U64(s.a.nnz, 309405051);
    ASSERT_EQ_U64(s.b.nnz, 130327340);
    ASSERT_EQ_U64(s.c.nnz, 282656500);
    ASSERT_EQ_U64(s.a_aux_count, 129753292);
    ASSERT_EQ_U64(s.b_inp_count, 1);
    ASSERT_EQ_U64(s.b_aux_count, 33112281);
    g16_shape_free(&s);
}
