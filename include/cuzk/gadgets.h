/* gadgets.h: the circuit-synthesis context and the gadgets the Filecoin circuits are built
 * from (bellpepper Boolean / UInt32 / MultiEq / SHA-256 / multipack / num, neptune Poseidon),
 * each with upstream's exact variable-allocation and constraint order. See docs/circuits.md.
 *
 * One description, several modes (struct gcs.mode, any combination):
 *   GCS_SHAPE  - linear combinations are built and handed to a sink (normally the
 *                g16_builder of groth16.h, see gcs_sink_builder) as A*B=C rows.
 *   GCS_VALUES - the values of every allocated variable are computed and appended to the
 *                aux / input vectors (Montgomery Fr); no linear combination is built.
 *   neither    - only the numbers of constraints, aux and inputs are counted (fast).
 * The counters (n_constraints, n_aux, n_inputs) are kept in every mode, so one run in each
 * mode over the same gadget calls must agree (tests check it).
 *
 * Errors: gadgets return nothing; the first failure (out of memory, bad argument) is kept
 * in the context (sticky, like a stream's error flag) and every later call is a no-op.
 * Read it with gcs_status() once synthesis is over. */
#ifndef CUZK_GADGETS_H
#define CUZK_GADGETS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cuzk/err.h"
#include "cuzk/ff.h"
#include "cuzk/groth16.h"

/* ---------------------------------------------------------------- context -- */

#define GCS_SHAPE 1u
#define GCS_VALUES 2u

/* Receiver of the shape. Variable handles are G16_VAR_INPUT(k) / G16_VAR_AUX(k), numbered
 * by the context in allocation order (input 0 is ONE); alloc_* lets the sink number its own
 * variables in step (the builder does) and must return the same handle. */
struct gcs_sink {
    void *ctx;
    uint32_t (*alloc_input)(void *ctx);
    uint32_t (*alloc_aux)(void *ctx);
    int (*enforce)(void *ctx, struct g16_lc a, struct g16_lc b, struct g16_lc c);
};
/* A sink that feeds a g16_builder: a fresh one (only ONE allocated) under gcs_init, or any
 * builder under gcs_init_at with the builder's g16_builder_counts. */
struct gcs_sink gcs_sink_builder(struct g16_builder *b);

/* Growable linear combination (terms in insertion order; duplicates are merged by the
 * receiver, as bellpepper's LinearCombination does). */
struct glc {
    struct g16_term *t;
    uint32_t n, cap;
};

struct gcs {
    unsigned mode;              /* GCS_SHAPE | GCS_VALUES, or 0 for counting only */
    struct gcs_sink sink;       /* used when mode & GCS_SHAPE */
    uint64_t n_constraints;     /* enforce() calls so far (input rows not included) */
    uint32_t n_aux, n_inputs;   /* variables so far; n_inputs counts ONE */
    fr_t *aux, *inputs;         /* values (GCS_VALUES); inputs[0] = 1 */
    size_t aux_cap, inp_cap;
    int status;                 /* sticky: first error code, CUZK_OK while healthy */
    struct cuzk_error err;      /* its message */
    struct glc tmp[3];          /* scratch for small gadgets (A, B, C) */
    fr_t pow2[256];             /* 2^i, Montgomery */
    fr_t neg_one;
};

/* sink may be NULL unless mode & GCS_SHAPE. ONE is allocated here (input 0). */
int gcs_init(struct gcs *cs, unsigned mode, const struct gcs_sink *sink, struct cuzk_error *err);
/* A shape or counting context (not GCS_VALUES) whose numbering starts at n_inputs / n_aux
 * instead of after ONE: one segment of a circuit whose earlier variables were numbered
 * elsewhere (a segment builder of g16_builder_segments, whose g16_builder_counts give the
 * start), so that its handles and the sink's agree. Gadgets may still use ONE. */
int gcs_init_at(struct gcs *cs, unsigned mode, const struct gcs_sink *sink, uint32_t n_inputs,
                uint32_t n_aux, struct cuzk_error *err);
/* Record into b what fn(cs, arg) synthesizes, numbered from b's next handles: a shape context
 * on b (gcs_init_at at b's g16_builder_counts), fn, then its status. b is a builder holding a
 * prefix, or a segment builder of g16_builder_segments (cs_builder.c). */
typedef void (*gcs_synth_fn)(struct gcs *cs, void *arg);
int gcs_record(struct g16_builder *b, gcs_synth_fn fn, void *arg, struct cuzk_error *err);
void gcs_free(struct gcs *cs);
/* Pre-size the value vectors (optional; avoids reallocation for big circuits). */
int gcs_reserve(struct gcs *cs, size_t n_aux, size_t n_inputs);
/* Hand the value vectors to the caller (cuzk_free them); the context keeps counting. */
void gcs_take_values(struct gcs *cs, fr_t **aux, fr_t **inputs);
/* CUZK_OK, or the first error (copied into err when err != NULL). */
int gcs_status(const struct gcs *cs, struct cuzk_error *err);
/* Record a failure from outside the gadgets (keeps the first one). */
void gcs_fail(struct gcs *cs, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static inline bool gcs_shape(const struct gcs *cs) { return (cs->mode & GCS_SHAPE) && !cs->status; }
static inline bool gcs_values(const struct gcs *cs) { return (cs->mode & GCS_VALUES) != 0; }

/* Raw variables. val is read only in GCS_VALUES mode (may be NULL otherwise). */
uint32_t gcs_alloc_aux(struct gcs *cs, const fr_t *val);
uint32_t gcs_alloc_input(struct gcs *cs, const fr_t *val);
/* Value of a variable (GCS_VALUES mode). */
const fr_t *gcs_value(const struct gcs *cs, uint32_t var);
/* Append the row a * b = c (counts it; forwards it in shape mode). */
void gcs_enforce(struct gcs *cs, const struct glc *a, const struct glc *b, const struct glc *c);

/* Linear combinations (shape mode only; harmless no-ops on a failed context). */
void glc_clear(struct glc *lc);
void glc_free(struct glc *lc);
void glc_add(struct gcs *cs, struct glc *lc, uint32_t var, const fr_t *coeff);
void glc_add_one(struct gcs *cs, struct glc *lc, uint32_t var);          /* coefficient 1 */
void glc_add_lc(struct gcs *cs, struct glc *lc, const struct glc *x, const fr_t *coeff);

/* ---------------------------------------------------------------- Boolean -- */

enum { GB_CONST = 0, GB_IS = 1, GB_NOT = 2 };
/* bellpepper Boolean: Constant(val), Is(var) or Not(var). val is the Boolean's own value
 * (already negated for GB_NOT); meaningful for variables only in GCS_VALUES mode. */
typedef struct {
    uint32_t var;
    uint8_t kind;
    uint8_t val;
} gbool;

static inline gbool gb_const(bool v) { gbool b = {0, GB_CONST, (uint8_t)v}; return b; }
static inline gbool gb_not(gbool a)
{
    if (a.kind == GB_IS) a.kind = GB_NOT;
    else if (a.kind == GB_NOT) a.kind = GB_IS;
    a.val ^= 1;
    return a;
}
/* lc += coeff * b (Constant true: coeff * ONE; Not: coeff * ONE - coeff * var). */
void glc_add_bool(struct gcs *cs, struct glc *lc, gbool b, const fr_t *coeff);

/* AllocatedBit::alloc: (1 - v) * v = 0. */
gbool gb_alloc(struct gcs *cs, bool v);
/* AllocatedBit operations on Is-bits (a, b are the variables' Booleans, kind GB_IS). */
gbool gb_alloc_xor(struct gcs *cs, gbool a, gbool b);      /* (2a) * b = a + b - r */
gbool gb_alloc_and(struct gcs *cs, gbool a, gbool b);      /* a * b = r */
gbool gb_alloc_and_not(struct gcs *cs, gbool a, gbool b);  /* a * (1 - b) = r */
gbool gb_alloc_nor(struct gcs *cs, gbool a, gbool b);      /* (1 - a) * (1 - b) = r */
/* Boolean::xor / and with upstream's constant folding and Is/Not dispatch. */
gbool gb_xor(struct gcs *cs, gbool a, gbool b);
gbool gb_and(struct gcs *cs, gbool a, gbool b);
/* Boolean::sha256_ch / sha256_maj (folding cases in upstream's order). */
gbool gb_sha256_ch(struct gcs *cs, gbool a, gbool b, gbool c);
gbool gb_sha256_maj(struct gcs *cs, gbool a, gbool b, gbool c);
/* Boolean::enforce_equal. */
void gb_enforce_equal(struct gcs *cs, gbool a, gbool b);
/* u64_into_boolean_vec_le / UInt64::alloc: 64 allocated bits, least significant first. */
void gb_alloc_u64_le(struct gcs *cs, gbool out[64], uint64_t v);

/* ----------------------------------------------------------------- UInt32 -- */

typedef struct { gbool b[32]; } gu32;   /* least significant bit first */

gu32 gu32_const(uint32_t v);
gu32 gu32_alloc(struct gcs *cs, uint32_t v);
gu32 gu32_from_bits_be(const gbool bits[32]);
void gu32_to_bits_be(gbool out[32], const gu32 *x);
gu32 gu32_rotr(const gu32 *x, unsigned by);
gu32 gu32_shr(const gu32 *x, unsigned by);
gu32 gu32_xor(struct gcs *cs, const gu32 *a, const gu32 *b);
gu32 gu32_sha256_ch(struct gcs *cs, const gu32 *a, const gu32 *b, const gu32 *c);
gu32 gu32_sha256_maj(struct gcs *cs, const gu32 *a, const gu32 *b, const gu32 *c);
/* Value of x (GCS_VALUES mode, or all-constant words). */
uint32_t gu32_value(const gu32 *x);

/* MultiEq: packs several equalities into one constraint lhs * ONE = rhs, flushing when the
 * next equality would reach CAPACITY (254) bits. */
struct gmultieq {
    struct glc lhs, rhs;        /* pending sums */
    struct glc op, res;         /* addmany scratch */
    unsigned bits_used;
};
void gmeq_init(struct gmultieq *m);
void gmeq_enforce_equal(struct gcs *cs, struct gmultieq *m, unsigned num_bits,
                        const struct glc *lhs, const struct glc *rhs);
/* Emit what is pending (the Drop of upstream) and free. */
void gmeq_finish(struct gcs *cs, struct gmultieq *m);
/* UInt32::addmany (2..10 operands): constant result when every bit is constant, else
 * allocate the bits of the full sum (carries included), one MultiEq equality. */
gu32 gu32_addmany(struct gcs *cs, struct gmultieq *m, const gu32 *ops, size_t n);

/* ---------------------------------------------------------------- SHA-256 -- */

/* sha256_compression_function: in = 512 bits (message order), cur = 8 words. */
void g_sha256_compress(struct gcs *cs, gu32 out[8], const gbool in[512], const gu32 cur[8]);
/* sha256_block_no_padding: one block from the constant IV; out = 256 bits (big-endian). */
void g_sha256_block_no_padding(struct gcs *cs, gbool out[256], const gbool in[512]);
/* sha256 with padding (nbits % 8 == 0); out = 256 bits, each word most significant first. */
void g_sha256(struct gcs *cs, gbool out[256], const gbool *in, size_t nbits);

/* -------------------------------------------------------- numbers, packing -- */

typedef struct {
    uint32_t var;
    fr_t val;       /* GCS_VALUES mode */
} gnum;

gnum gnum_alloc(struct gcs *cs, const fr_t *val);             /* no constraint */
gnum gnum_alloc_input(struct gcs *cs, const fr_t *val);       /* no constraint */
void gnum_inputize(struct gcs *cs, const gnum *x);            /* input * ONE = x */
gnum gnum_mul(struct gcs *cs, const gnum *a, const gnum *b);  /* a * b = r */
gnum gnum_square(struct gcs *cs, const gnum *a);              /* a * a = r */
gnum gnum_add(struct gcs *cs, const gnum *a, const gnum *b);  /* (a + b) * ONE = r */
void gnum_enforce_equal(struct gcs *cs, const gnum *a, const gnum *b); /* a * ONE = b */
/* to_bits_le (not strict): 255 allocated bits, then 0 * 0 = sum 2^i b_i - x. */
void gnum_to_bits_le(struct gcs *cs, gbool out[255], const gnum *x);
/* to_bits_le_strict: 255 bits constrained to the canonical range (runs of ones of r - 1). */
void gnum_to_bits_le_strict(struct gcs *cs, gbool out[255], const gnum *x);
/* pack_bits: the first min(n, 254) bits into one aux y with (sum 2^i b_i) * ONE = y. */
gnum g_pack_bits(struct gcs *cs, const gbool *bits, size_t n);
/* Filecoin's SHA-256 tree hashing (filecoin-hashers Sha256Function). The input form of a
 * field element: its 255-bit to_bits_le padded to 256 with false, the bit order reversed
 * inside each byte (reverse_bit_numbering). */
void gnum_to_bits_byte_reversed(struct gcs *cs, gbool out[256], const gnum *x);
/* hash_multi_leaf_circuit of a binary node: both children in that form, SHA-256, the digest
 * byte-reversed the same way, its first 254 bits packed. */
gnum g_sha256_node(struct gcs *cs, const gnum *l, const gnum *r);
/* multipack::pack_into_inputs: one input per 254-bit chunk. */
void g_pack_into_inputs(struct gcs *cs, const gbool *bits, size_t n);
/* compute_multipacking of plain bits: out[ceil(n/254)]. */
void multipack_compute(fr_t *out, const uint8_t *bits, size_t n);

/* --------------------------------------------------------------- Poseidon -- */

/* neptune 11 constants for BLS12-381 Fr, Strength::Standard. Tables in Montgomery form. */
struct poseidon_consts {
    unsigned arity, t, rf, rp;  /* t = arity + 1; rf = 8 full rounds; rp partial */
    fr_t domain_tag;            /* MerkleTree: 2^arity - 1 */
    fr_t *rc;                   /* (rf + rp) * t plain round constants (Grain LFSR) */
    fr_t *m, *m_inv;            /* t * t, row-major: Cauchy MDS 1/(i + t + j) and inverse */
    fr_t *crc;                  /* 8t + rp compressed round constants */
    fr_t *pre_sparse;           /* t * t */
    fr_t *w_hat;                /* rp * t   (sparse matrix k: first column) */
    fr_t *v_rest;               /* rp * (t - 1) (sparse matrix k: rest of first row) */
};
/* Shared constants for arity 2..36 (generated on first use, thread-safe); NULL on failure
 * (bad arity or out of memory, with err filled). */
const struct poseidon_consts *poseidon_consts_get(unsigned arity, struct cuzk_error *err);
/* Build / free a private copy (arity 1..36, rp from neptune's table). */
int poseidon_consts_build(struct poseidon_consts *pc, unsigned arity, struct cuzk_error *err);
void poseidon_consts_free(struct poseidon_consts *pc);

/* Native hash of arity elements (MerkleTree type), neptune's OptimizedStatic mode. */
void poseidon_hash(fr_t *out, const struct poseidon_consts *pc, const fr_t *in);
/* The same through plain rounds (neptune's Correct mode) - a reference for tests. */
void poseidon_hash_reference(fr_t *out, const struct poseidon_consts *pc, const fr_t *in);
/* neptune circuit::poseidon_hash (legacy circuit; its constraints are in the v28 params). */
gnum g_poseidon(struct gcs *cs, const struct poseidon_consts *pc, const gnum *in);

#endif
