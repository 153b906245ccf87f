/* groth16.h: constraint-system shapes (CSR), assignments, the backend-agnostic Groth16
 * prover front with its CPU backend, the verifier, local trusted setup, and the Filecoin /
 * bellperson file formats (.params, .vk, 192-byte proofs). See docs/groth16.md.
 *
 * Variables: index 0 of the inputs is the constant ONE. Matrix columns are "inputs first,
 * then aux": column j < n_inputs is input j, column n_inputs + k is aux k. Row order is the
 * order of enforce() calls, followed by one row "input_i * 0 = 0" (A = input_i) per input, as
 * bellperson appends them; n_constraints counts those rows too. */
#ifndef CUZK_GROTH16_H
#define CUZK_GROTH16_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cuzk/ec.h"
#include "cuzk/err.h"
#include "cuzk/ff.h"

struct pool;

/* ------------------------------------------------------------------ shapes -- */

/* One sparse matrix in CSR form. Coefficients are deduplicated: coeff_idx[k] indexes the
 * shape's table of distinct Fr values (Montgomery form), so a nonzero costs 4 + 2 bytes. */
struct g16_matrix {
    uint64_t *row_ptr;      /* n_constraints + 1 entries; owned by the shape */
    uint32_t *col;          /* nnz entries, column index (inputs first, then aux) */
    uint16_t *coeff_idx;    /* nnz entries, index into g16_shape.coeffs */
    uint64_t nnz;
};

/* A circuit's recorded constraint system. Invariant: every matrix has n_constraints rows;
 * density bitmaps are 64-bit words, bit j of word k = variable 64k + j ("appears with a
 * nonzero coefficient"); there is no A-input bitmap since every input has its own row. */
struct g16_shape {
    uint32_t n_inputs;              /* including ONE */
    uint32_t n_aux;
    uint64_t n_constraints;         /* including the n_inputs input rows */
    struct g16_matrix a, b, c;
    fr_t *coeffs;                   /* distinct coefficients, Montgomery form */
    uint32_t n_coeffs;              /* <= 65536 */
    uint64_t *a_aux_density;        /* ceil(n_aux / 64) words */
    uint64_t *b_inp_density;        /* ceil(n_inputs / 64) words */
    uint64_t *b_aux_density;        /* ceil(n_aux / 64) words */
    uint64_t a_aux_count, b_inp_count, b_aux_count;   /* popcounts */
};

void g16_shape_free(struct g16_shape *s);   /* frees the arrays, not s itself */

/* Linear combination: n terms of (variable, coefficient). Variables are tagged handles from
 * g16_alloc_input / g16_alloc_aux (see G16_VAR_*), so allocation may interleave inputs and
 * aux (PoRep does): columns are assigned only at finalize, when the input count is final. */
#define G16_VAR_AUX_BIT 0x80000000u
#define G16_VAR_INPUT(i) ((uint32_t)(i))
#define G16_VAR_AUX(i) ((uint32_t)(i) | G16_VAR_AUX_BIT)
#define G16_VAR_ONE G16_VAR_INPUT(0)
struct g16_term { uint32_t var; fr_t coeff; };
struct g16_lc { const struct g16_term *t; size_t n; };

/* Builder: records constraints into a shape. count_only = true keeps only counts, nnz and
 * densities (for huge circuits in CI) and stores no matrix. One thread per builder. */
struct g16_builder;
struct g16_builder *g16_builder_new(bool count_only, struct cuzk_error *err);
void g16_builder_free(struct g16_builder *b);
uint32_t g16_alloc_input(struct g16_builder *b);   /* returns G16_VAR_INPUT(k); ONE is 0 */
uint32_t g16_alloc_aux(struct g16_builder *b);     /* returns G16_VAR_AUX(k) */
/* Record a * b = c. Terms with zero coefficients are dropped, duplicate variables merged. */
int g16_enforce(struct g16_builder *b, struct g16_lc a, struct g16_lc bb, struct g16_lc c);
/* Append the input rows and produce the shape (moved out; builder is then empty). */
int g16_builder_finish(struct g16_builder *b, struct g16_shape *out, struct cuzk_error *err);
/* The next input and aux indices (= counts; ONE included) and the rows recorded so far; any
 * pointer may be NULL. In a segment builder (below): its next GLOBAL handles' indices, so a
 * segment's synthesis can number its variables from there, and its own rows. */
void g16_builder_counts(const struct g16_builder *b, uint32_t *n_inputs, uint32_t *n_aux, uint64_t *n_rows);

/* Repeated sub-circuits, recorded in parallel. After whatever b holds (the prefix: ONE and
 * any shared head), n_seg segments are appended as if recorded one after another into b:
 * the result (rows, columns, coefficient table order, densities) is byte-identical to the
 * sequential recording. fn(ctx, i, sb, err) records segment i into sb, a segment builder:
 * g16_alloc_input / g16_alloc_aux on it return b's GLOBAL handles, from b's counts at this
 * call + i * seg_inputs (resp. i * seg_aux); its rows may reference the prefix's variables
 * and its own, nothing else ("segment 17, constraint 5: variable aux 123 belongs to neither
 * the prefix nor this segment", CUZK_E_INVALID_ARG). Each segment must allocate exactly
 * seg_inputs inputs and seg_aux aux (CUZK_E_INTERNAL naming the segment otherwise). fn runs
 * on pool's threads (NULL: in this thread, in order), several segments at a time, so it
 * must only read shared state; it must not touch b, nor finish sb. The first failing
 * segment (lowest index) gives the error, which b keeps (sticky, as for g16_enforce).
 * Count-only builders work the same way (segments store no matrices then). */
typedef int (*g16_segment_fn)(void *ctx, size_t seg, struct g16_builder *sb, struct cuzk_error *err);
int g16_builder_segments(struct g16_builder *b, size_t n_seg, uint32_t seg_inputs, uint32_t seg_aux,
                         g16_segment_fn fn, void *ctx, struct pool *pool, struct cuzk_error *err);

/* Shape files: little-endian, magic "CUZKSHP1", version, counts, arrays, CRC-32C trailer. */
int g16_shape_save(const struct g16_shape *s, const char *path, struct cuzk_error *err);
int g16_shape_load(struct g16_shape *s, const char *path, struct cuzk_error *err);

/* ------------------------------------------------------------- assignment -- */

/* Values of one circuit instance, Montgomery form. Borrowed by every API below. */
struct g16_assignment {
    const fr_t *inputs;     /* n_inputs values, inputs[0] == 1 */
    const fr_t *aux;        /* n_aux values */
};

/* a/b/c[row] = (A|B|C)[row] . w over all n_constraints rows (multi-threaded SpMV). */
int g16_eval_abc(fr_t *a, fr_t *b, fr_t *c, const struct g16_shape *s,
                 const struct g16_assignment *w, struct pool *pool, struct cuzk_error *err);
/* CUZK_E_UNSATISFIED naming the first row where a*b != c; CUZK_OK if all rows hold. */
int g16_check(const struct g16_shape *s, const struct g16_assignment *w, struct pool *pool,
              struct cuzk_error *err);

/* -------------------------------------------------------------------- NTT -- */

/* Radix-2 NTT over Fr on 2^lg points (lg <= 28), natural order in and out, Montgomery form.
 * omega_lg = FR_ROOT_OF_UNITY_2_32^(2^(32-lg)); forward: v[j] <- sum_i v[i] omega^(ij);
 * inverse includes the 1/N scaling. Multi-threaded over pool (NULL = one thread). */
void g16_domain_omega(fr_t *omega, unsigned lg);
void g16_ntt(fr_t *v, unsigned lg, bool inverse, struct pool *pool);
/* Coset NTT with generator g = 7 (FR_GENERATOR): forward evaluates at g*omega^j
 * (v[i] *= g^i, then NTT); inverse undoes it (iNTT, then v[i] *= g^-i). */
void g16_coset_ntt(fr_t *v, unsigned lg, bool inverse, struct pool *pool);
/* The h pipeline: h = inverse coset NTT of (a_c b_c - c_c) / (g^N - 1), where x_c are the
 * coset evaluations of x in a, b, c (each N = 2^lg entries, the first abc_len meaningful, the
 * rest must be zero), computed as bellperson/supraseal do but in 6 transforms (c's coset
 * NTT and its inverse cancel: h = (CI(a_c b_c) - iNTT(c)) / (g^N - 1)). On return a holds the
 * N coefficients of h (h[N-1] = 0 when a b = c on the domain); b and c are clobbered. */
void g16_compute_h(fr_t *a, fr_t *b, fr_t *c, unsigned lg, struct pool *pool);
/* lg = ceil_log2(n_h) for a key with n_h H points (the domain comes from the key). */
unsigned g16_domain_lg(uint64_t n_h);

/* ------------------------------------------------------------------- keys -- */

struct g16_vk {
    g1_aff_t alpha_g1, beta_g1;
    g2_aff_t beta_g2, gamma_g2;
    g1_aff_t delta_g1;
    g2_aff_t delta_g2;
    g1_aff_t *ic;           /* n_ic = n_inputs points; owned */
    uint32_t n_ic;
};

/* Proving key in memory: affine points, Montgomery form (bytes shared with the GPU). */
struct g16_pk {
    struct g16_vk vk;
    g1_aff_t *h;  uint64_t n_h;     /* N - 1 points; the NTT domain is N = 2^ceil_log2(n_h) */
    g1_aff_t *l;  uint64_t n_l;     /* one per aux variable */
    g1_aff_t *a;  uint64_t n_a;     /* all inputs, then A-dense aux */
    g1_aff_t *b_g1; uint64_t n_b;   /* B-dense inputs, then B-dense aux */
    g2_aff_t *b_g2;                 /* n_b points, same indices */
};
void g16_vk_free(struct g16_vk *vk);
void g16_pk_free(struct g16_pk *pk);
/* The five point vectors of pk in proof order (h, l, a, b_g1, b_g2) and their sizes in
 * bytes; returns the total. For code that moves a key around as a whole (uploads, pinning). */
#define G16_PK_VECTORS 5
uint64_t g16_pk_vectors(const struct g16_pk *pk, void *v[G16_PK_VECTORS], size_t bytes[G16_PK_VECTORS]);

/* A uniformly random nonzero Fr from rng (a cuzk_rng*) or, with NULL, the OS CSPRNG: toxic
 * waste of a setup, a verifier's batching coefficients. */
int g16_random_nonzero(fr_t *out, void *rng, struct cuzk_error *err);

/* Local trusted setup for tests, benchmarks and demos. NOT FOR PRODUCTION: the toxic waste
 * is known to this process. rng NULL = OS randomness. */
int g16_setup(struct g16_pk *pk, const struct g16_shape *s, void *rng /* cuzk_rng* or NULL */,
              struct pool *pool, struct cuzk_error *err);
/* The same setup with the fixed-base multiplications (every key point is s_i G for the G1 or
 * G2 generator) done by fb (the GPU's: gpu_g1_fixed_base / gpu_g2_fixed_base); the same toxic
 * waste gives the same key, byte for byte. out[i] = sc[i] gen, affine, (0, 0) for zero. */
struct g16_fixed_base {
    int (*g1)(void *self, g1_aff_t *out, const g1_aff_t *gen, const fr_t *sc, size_t n,
              struct cuzk_error *err);   /* NULL (both): the CPU's tables */
    int (*g2)(void *self, g2_aff_t *out, const g2_aff_t *gen, const fr_t *sc, size_t n,
              struct cuzk_error *err);
    void *self;
    /* NULL: silent. Else called once the QAP is evaluated (done 0) and after each slice of a
     * query's multiplications (h, ic, l, a, b_g1, b_g2; slices of 1/16 of the query, at least
     * 2^12 points) with the multiplications done and in all, in G1 points (a G2 point counts
     * 3): enough for a progress line with an ETA. */
    void (*progress)(void *pctx, const char *query, uint64_t done, uint64_t total);
    void *pctx;
};
int g16_setup_with(struct g16_pk *pk, const struct g16_shape *s, void *rng, struct pool *pool,
                   const struct g16_fixed_base *fb, struct cuzk_error *err);

/* ----------------------------------------------------------------- proving -- */

struct g16_proof { g1_aff_t a; g2_aff_t b; g1_aff_t c; };

/* Wall time per phase, nanoseconds (summed over the circuits of one call). */
struct g16_timings {
    uint64_t wit_ns;   /* GPU: waiting for the witness on the device (its upload, or the rest of
                        * a staged upload still in flight); 0 on the CPU */
    uint64_t abc_ns, ntt_ns, msm_h_ns, msm_l_ns, msm_a_ns, msm_b_g1_ns, msm_b_g2_ns,
             assembly_ns, total_ns;
};

/* The five MSM results of one circuit; a backend computes these, the front assembles. */
struct g16_msm_results { g1_jac_t h, l, a, b_g1; g2_jac_t b_g2; };

/* A prover backend: given the shape, key and one assignment, compute the MSM results
 * (a/b/c, the h pipeline and the five MSMs). The CPU backend is g16_backend_cpu; the GPU
 * backend lives in gpu.h. ctx is the backend's own state (NULL for the CPU: default pool). */
typedef int (*g16_backend_fn)(struct g16_msm_results *out, const struct g16_shape *s,
                              const struct g16_pk *pk, const struct g16_assignment *w,
                              void *ctx, struct g16_timings *t, struct cuzk_error *err);
int g16_backend_cpu(struct g16_msm_results *out, const struct g16_shape *s,
                    const struct g16_pk *pk, const struct g16_assignment *w, void *ctx,
                    struct g16_timings *t, struct cuzk_error *err);

/* Prove n circuits of the same shape. r, s: n blinding pairs (Montgomery) or NULL to draw
 * them from the OS RNG. backend NULL = CPU. Same r, s => same bytes on every backend. */
int g16_prove(struct g16_proof *proofs, const struct g16_shape *s, const struct g16_pk *pk,
              const struct g16_assignment *w, size_t n, const fr_t *r, const fr_t *s_blind,
              g16_backend_fn backend, void *backend_ctx, struct g16_timings *t,
              struct cuzk_error *err);

/* --------------------------------------------------------------- verifying -- */

struct g16_pvk;   /* prepared verifying key (opaque) */
struct g16_pvk *g16_pvk_new(const struct g16_vk *vk, struct cuzk_error *err);
void g16_pvk_free(struct g16_pvk *pvk);
/* inputs: n_inputs - 1 public inputs (ONE excluded), Montgomery form.
 * CUZK_OK if valid, CUZK_E_VERIFY_FAILED if not, CUZK_E_IDENTITY for an identity A/B/C,
 * CUZK_E_INVALID_ARG for a wrong input count. */
int g16_verify(const struct g16_pvk *pvk, const struct g16_proof *proof, const fr_t *inputs,
               size_t n_inputs, struct cuzk_error *err);

/* ----------------------------------------------------------------- formats -- */

enum g16_validate {
    G16_VALIDATE_NONE,      /* coordinates < p only */
    G16_VALIDATE_CURVE,     /* + on the curve */
    G16_VALIDATE_FULL       /* + in the prime-order subgroup */
};
/* .params (bellperson layout) read with mmap; errors name file, section and index, e.g.
 * "x.params: h[1048575]: not on the curve". A digest cache next to the file
 * ("<file>.validated") lets a fully validated file skip validation next time. */
int g16_params_read(struct g16_pk *pk, const char *path, enum g16_validate mode,
                    struct pool *pool, struct cuzk_error *err);
int g16_params_write(const struct g16_pk *pk, const char *path, struct cuzk_error *err);
/* As g16_params_write; with `validated`, also the digest cache of a FULL validation
 * ("<file>.validated", hashed while the points are written), for a key whose points the
 * caller made itself (`cuzk-params setup`): its first load then reads at file speed. */
int g16_params_write_ex(const struct g16_pk *pk, const char *path, bool validated, struct cuzk_error *err);
int g16_vk_read(struct g16_vk *vk, const char *path, struct cuzk_error *err);
int g16_vk_write(const struct g16_vk *vk, const char *path, struct cuzk_error *err);

#define G16_PROOF_BYTES 192
/* A (G1 compressed) || B (G2 compressed) || C (G1 compressed). */
void g16_proof_to_bytes(uint8_t out[G16_PROOF_BYTES], const struct g16_proof *p);
/* Decompresses, subgroup-checks, rejects identity A/B/C (CUZK_E_IDENTITY). */
int g16_proof_from_bytes(struct g16_proof *p, const uint8_t in[G16_PROOF_BYTES],
                         struct cuzk_error *err);
/* n proofs concatenated (Filecoin: partition proofs in partition order), n * 192 bytes. */
void g16_proofs_to_bytes(uint8_t *out, const struct g16_proof *p, size_t n);
/* in_len must be exactly n * 192 (CUZK_E_FORMAT otherwise); errors name the proof index and
 * which of A/B/C failed, e.g. "proof[3]: B: not in the prime-order subgroup". */
int g16_proofs_from_bytes(struct g16_proof *out, size_t n, const uint8_t *in, size_t in_len,
                          struct cuzk_error *err);

/* Counts and byte offsets of a .params or .vk file, found by reading only the count words
 * (no full load). Checks the layout: truncation (CUZK_E_TRUNCATED, naming the section),
 * impossible counts and trailing bytes (CUZK_E_FORMAT). A file that ends right after ic is
 * a .vk (vk_only; the other counts are 0). Any thread. */
struct g16_params_info {
    uint64_t file_bytes;
    bool vk_only;
    uint32_t n_ic;
    uint64_t n_h, n_l, n_a, n_b_g1, n_b_g2;
    uint64_t off_ic, off_h, off_l, off_a, off_b_g1, off_b_g2;  /* offset of each first point */
};
int g16_params_info(struct g16_params_info *out, const char *path, struct cuzk_error *err);

/* g16_params_read with options. progress: -1 = automatic (files over 1 GiB print a line to
 * stderr every ~10%, or one line redrawn on a terminal: progress.h), 0 = off, 1 = on.
 * tracker: the caller's progress counters (a status page reads them while the file loads;
 * phases "reading and checking", "reading", "checking", counted in point bytes); NULL: an
 * internal one. use_cache: consult and (after a FULL validation)
 * write "<file>.validated". report may be NULL. */
/* A point checker that replaces the CPU's subgroup checks of a FULL validation (the GPU's:
 * gpu_g1_check_points / gpu_g2_check_points): *bad = index of the first of n points off the
 * curve or outside the subgroup, n if none. The CPU then names the point it reports. */
struct g16_point_checker {
    int (*g1)(void *self, const g1_aff_t *pts, size_t n, bool subgroup, size_t *bad,
              struct cuzk_error *err);
    int (*g2)(void *self, const g2_aff_t *pts, size_t n, bool subgroup, size_t *bad,
              struct cuzk_error *err);
    void *self;
};
struct cuzk_progress;   /* progress.h (not included: this header is also read by the CUDA C++) */
struct g16_params_read_opts {
    enum g16_validate mode;
    bool use_cache;
    int progress;
    const struct g16_point_checker *checker;   /* NULL: all checks on the CPU */
    struct cuzk_progress *tracker;             /* NULL: none of the caller's */
};
struct g16_params_read_report {
    bool cache_hit;         /* the cache matched: curve/subgroup checks were skipped */
    bool cache_written;     /* a FULL validation succeeded and the cache was (re)written */
    bool digest_valid;      /* digest was computed (mode != NONE) */
    uint8_t digest[16];     /* content digest of the file (see docs/formats.md) */
    uint64_t read_ns, check_ns;
    /* The external checker (the GPU's subgroup checks) runs beside the CPU pass, on each slice
     * of a section the CPU has decoded: ext_check_ns is its busy time, ext_wait_ns what the
     * read waited for it after the CPU pass (both within read_ns + check_ns). */
    uint64_t ext_check_ns, ext_wait_ns;
};
int g16_params_read_ex(struct g16_pk *pk, const char *path, const struct g16_params_read_opts *o,
                       struct pool *pool, struct g16_params_read_report *report,
                       struct cuzk_error *err);

/* The 128-bit non-cryptographic digest used by the cache and by `cuzk-params info` (it
 * detects accidental change, not an adversary). g16_vk_digest hashes the .vk bytes of vk. */
void g16_digest128(uint8_t out[16], const void *data, size_t n);
int g16_vk_digest(uint8_t out[16], const struct g16_vk *vk, struct cuzk_error *err);

#endif
