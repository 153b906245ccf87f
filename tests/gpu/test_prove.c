/* test_prove.c: GPU SpMV against g16_eval_abc, the GPU backend's five MSM results against
 * g16_backend_cpu, and full proofs: GPU bytes == CPU bytes for the same r, s, and they verify,
 * with the key resident and streamed (forced; pageable key via staging chunks, pinned key).
 * Circuits: the synthetic family (src/circuits/synthetic.c) with a local setup. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cuzk/circuits.h"
#include "cuzk/groth16.h"
#include "gpu_helpers.h"

struct fixture {
    struct synth_params p;
    struct g16_shape s;
    struct g16_pk pk;
    fr_t *in, *aux;
};

static void fixture_init(struct fixture *f, uint64_t n, uint32_t n_public, uint64_t seed)
{
    struct cuzk_error err_s, *err = &err_s;
    f->p = (struct synth_params){n, n_public, false};
    ASSERT_OK(synth_build_shape(&f->s, &f->p, err), err);
    cuzk_rng rng;
    cuzk_rng_seed(&rng, seed);
    ASSERT_OK(g16_setup(&f->pk, &f->s, &rng, pool_default(), err), err);
    f->in = calloc(f->s.n_inputs, sizeof(fr_t));
    f->aux = calloc(f->s.n_aux + 1, sizeof(fr_t));
    ASSERT_OK(synth_witness(f->in, f->aux, &f->s, &f->p, seed, err), err);
}

static void fixture_fini(struct fixture *f)
{
    g16_pk_free(&f->pk);
    g16_shape_free(&f->s);
    free(f->in);
    free(f->aux);
}

/* The proof bytes of witness w (NULL: the fixture's own) under blinding r, s: by the CPU
 * prover (ctx NULL) or by the GPU backend on ctx. */
static void proof_bytes(uint8_t out[G16_PROOF_BYTES], struct gpu_ctx *ctx, const struct fixture *f,
                        const struct g16_assignment *w, const fr_t *r, const fr_t *s_blind)
{
    struct cuzk_error err_s, *err = &err_s;
    const struct g16_assignment own = {f->in, f->aux};
    struct g16_proof p;
    ASSERT_OK(g16_prove(&p, &f->s, &f->pk, w ? w : &own, 1, r, s_blind, ctx ? gpu_g16_backend : NULL, ctx, NULL, err),
              err);
    g16_proof_to_bytes(out, &p);
}

TEST(spmv_matches_cpu)
{
    struct gpu_ctx *ctx = gpu_test_ctx();
    struct cuzk_error err_s, *err = &err_s;
    /* the last two span several packing groups of the witness (2^17 values each) */
    const uint64_t ns[] = {5, 97, 1001, 20000, 300001, 300017};
    for (size_t k = 0; k < sizeof ns / sizeof ns[0]; k++) {
        struct fixture f;
        f.p = (struct synth_params){ns[k], 3, false};
        ASSERT_OK(synth_build_shape(&f.s, &f.p, err), err);
        f.in = calloc(f.s.n_inputs, sizeof(fr_t));
        f.aux = calloc(f.s.n_aux + 1, sizeof(fr_t));
        ASSERT_OK(synth_witness(f.in, f.aux, &f.s, &f.p, 7 + k, err), err);
        /* random (unsatisfying) values exercise every coefficient path */
        if (k % 2) rand_frs(f.aux, f.s.n_aux);
        struct g16_assignment w = {f.in, f.aux};
        size_t rows = f.s.n_constraints;
        fr_t *ref[3], *got[3];
        for (int i = 0; i < 3; i++) {
            ref[i] = malloc(rows * sizeof(fr_t));
            got[i] = malloc(rows * sizeof(fr_t));
        }
        ASSERT_OK(g16_eval_abc(ref[0], ref[1], ref[2], &f.s, &w, pool_default(), err), err);
        ASSERT_OK(gpu_eval_abc(ctx, got[0], got[1], got[2], &f.s, &w, err), err);
        for (int i = 0; i < 3; i++) {
            ASSERT_MSG(!memcmp(ref[i], got[i], rows * sizeof(fr_t)), "%c differs (n=%llu)", "abc"[i],
                       (unsigned long long)ns[k]);
            free(ref[i]);
            free(got[i]);
        }
        gpu_ctx_unload(ctx);
        g16_shape_free(&f.s);
        free(f.in);
        free(f.aux);
    }
    gpu_ctx_free(ctx);
}

/* Rows of every length around the SpMV's one-thread / one-warp boundary and far beyond it (a
 * PoRep shape's longest rows have hundreds of terms), long rows next to each other and as the
 * last row, random coefficients with many ones, in all three matrices. */
TEST(spmv_long_rows_match_cpu)
{
    struct gpu_ctx *ctx = gpu_test_ctx();
    struct cuzk_error err_s, *err = &err_s;
    const uint32_t n_aux = 5000;
    const size_t lens[] = {0, 1, 2, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100, 929, 929, 3000, 1, 0, 2, 17, 4999};
    const size_t n_lens = sizeof lens / sizeof lens[0];
    struct g16_builder *bld = g16_builder_new(false, err);
    ASSERT_OK(bld ? CUZK_OK : CUZK_E_NOMEM, err);
    uint32_t *var = malloc(n_aux * sizeof *var);
    for (uint32_t i = 0; i < n_aux; i++) var[i] = g16_alloc_aux(bld);
    fr_t pool_c[64];
    rand_frs(pool_c, 64);
    for (int i = 0; i < 64; i += 3) pool_c[i] = FR_ONE;
    struct g16_term *t[3];
    for (int m = 0; m < 3; m++) t[m] = malloc(n_aux * sizeof(struct g16_term));
    uint64_t x = 12345;
    for (size_t row = 0; row < 3 * n_lens + 40; row++) {
        struct g16_lc lc[3];
        for (int m = 0; m < 3; m++) {
            /* matrix m takes the lengths in another order, so long rows meet short ones */
            size_t len = row < 40 ? row % 4 : lens[(row + 7 * m) % n_lens];
            uint32_t start = (uint32_t)(x % n_aux);
            for (size_t k = 0; k < len; k++) {
                x = x * 6364136223846793005ull + 1442695040888963407ull;
                t[m][k].var = var[(start + k) % n_aux];   /* distinct variables */
                t[m][k].coeff = pool_c[(x >> 33) % 64];
            }
            lc[m] = (struct g16_lc){t[m], len};
        }
        ASSERT_OK(g16_enforce(bld, lc[0], lc[1], lc[2]), err);
    }
    struct g16_shape s;
    ASSERT_OK(g16_builder_finish(bld, &s, err), err);
    g16_builder_free(bld);
    fr_t *in = calloc(s.n_inputs, sizeof(fr_t)), *aux = calloc(s.n_aux + 1, sizeof(fr_t));
    in[0] = FR_ONE;
    rand_frs(aux, s.n_aux);
    struct g16_assignment w = {in, aux};
    const size_t rows = s.n_constraints;
    fr_t *ref[3], *got[3];
    for (int i = 0; i < 3; i++) {
        ref[i] = malloc(rows * sizeof(fr_t));
        got[i] = malloc(rows * sizeof(fr_t));
    }
    ASSERT_OK(g16_eval_abc(ref[0], ref[1], ref[2], &s, &w, pool_default(), err), err);
    ASSERT_OK(gpu_eval_abc(ctx, got[0], got[1], got[2], &s, &w, err), err);
    for (int i = 0; i < 3; i++) {
        for (size_t r = 0; r < rows; r++)
            ASSERT_MSG(!memcmp(&ref[i][r], &got[i][r], sizeof(fr_t)), "%c row %zu (%llu terms) differs", "ABC"[i], r,
                       (unsigned long long)((i == 0 ? s.a : i == 1 ? s.b : s.c).row_ptr[r + 1] -
                                            (i == 0 ? s.a : i == 1 ? s.b : s.c).row_ptr[r]));
        free(ref[i]);
        free(got[i]);
    }
    for (int m = 0; m < 3; m++) free(t[m]);
    free(var);
    free(in);
    free(aux);
    gpu_ctx_unload(ctx);
    g16_shape_free(&s);
    gpu_ctx_free(ctx);
}

TEST(backend_msm_results_match_cpu)
{
    struct gpu_ctx *ctx = gpu_test_ctx();
    struct cuzk_error err_s, *err = &err_s;
    const uint64_t ns[] = {300, 4000};
    for (size_t k = 0; k < sizeof ns / sizeof ns[0]; k++) {
        struct fixture f;
        fixture_init(&f, ns[k], 2, 100 + k);
        struct g16_assignment w = {f.in, f.aux};
        struct g16_msm_results ref, got;
        struct g16_timings t;
        memset(&t, 0, sizeof t);
        ASSERT_OK(g16_backend_cpu(&ref, &f.s, &f.pk, &w, NULL, &t, err), err);
        ASSERT_OK(gpu_g16_backend(&got, &f.s, &f.pk, &w, ctx, &t, err), err);
        ASSERT_MSG(g1_jac_eq(&ref.h, &got.h), "H differs");
        ASSERT_MSG(g1_jac_eq(&ref.l, &got.l), "L differs");
        ASSERT_MSG(g1_jac_eq(&ref.a, &got.a), "A differs");
        ASSERT_MSG(g1_jac_eq(&ref.b_g1, &got.b_g1), "B_G1 differs");
        ASSERT_MSG(g2_jac_eq(&ref.b_g2, &got.b_g2), "B_G2 differs");
        gpu_ctx_unload(ctx);
        fixture_fini(&f);
    }
    gpu_ctx_free(ctx);
}

TEST(gpu_proofs_equal_cpu_proofs_and_verify)
{
    struct gpu_ctx *ctx = gpu_test_ctx();
    struct cuzk_error err_s, *err = &err_s;
    const uint64_t ns[] = {100, 1023, 5001};
    for (size_t k = 0; k < sizeof ns / sizeof ns[0]; k++) {
        struct fixture f;
        fixture_init(&f, ns[k], 1 + (uint32_t)k, 500 + k);
        struct g16_assignment w = {f.in, f.aux};
        fr_t r, s;
        rand_fr(&r);
        rand_fr(&s);
        struct g16_proof pc, pg;
        ASSERT_OK(g16_prove(&pc, &f.s, &f.pk, &w, 1, &r, &s, NULL, NULL, NULL, err), err);
        ASSERT_OK(g16_prove(&pg, &f.s, &f.pk, &w, 1, &r, &s, gpu_g16_backend, ctx, NULL, err), err);
        uint8_t bc[G16_PROOF_BYTES], bg[G16_PROOF_BYTES];
        g16_proof_to_bytes(bc, &pc);
        g16_proof_to_bytes(bg, &pg);
        ASSERT_MEM_EQ(bc, bg, G16_PROOF_BYTES);
        struct g16_pvk *pvk = g16_pvk_new(&f.pk.vk, err);
        ASSERT(pvk);
        ASSERT_OK(g16_verify(pvk, &pg, f.in + 1, f.s.n_inputs - 1, err), err);
        g16_pvk_free(pvk);
        gpu_ctx_unload(ctx);
        fixture_fini(&f);
    }
    gpu_ctx_free(ctx);
}

/* One proof of f on ctx with fresh blinding: its bytes are the CPU's and it verifies.
 * Returns the scratch requests that loans served during it. */
static uint64_t lent_proof_equals_cpu(struct gpu_ctx *ctx, const struct fixture *f, struct g16_pvk *pvk)
{
    struct cuzk_error err_s, *err = &err_s;
    const struct g16_assignment w = {f->in, f->aux};
    fr_t r, s;
    rand_fr(&r);
    rand_fr(&s);
    const uint64_t before = gpu_ctx_msm_loans(ctx);
    struct g16_proof pc, pg;
    ASSERT_OK(g16_prove(&pc, &f->s, &f->pk, &w, 1, &r, &s, NULL, NULL, NULL, err), err);
    ASSERT_OK(g16_prove(&pg, &f->s, &f->pk, &w, 1, &r, &s, gpu_g16_backend, ctx, NULL, err), err);
    const uint64_t taken = gpu_ctx_msm_loans(ctx) - before;
    uint8_t bc[G16_PROOF_BYTES], bg[G16_PROOF_BYTES];
    g16_proof_to_bytes(bc, &pc);
    g16_proof_to_bytes(bg, &pg);
    ASSERT_MEM_EQ(bc, bg, G16_PROOF_BYTES);
    ASSERT_OK(g16_verify(pvk, &pg, f->in + 1, f->s.n_inputs - 1, err), err);
    return taken;
}

/* The prover's MSMs borrow memory that is dead once h is formed: the sort buffers come from
 * the h pipeline's other two vectors (16 N bytes each with the coset table, 4 N without; with
 * one window per sort, set by msm.max_windows, every MSM here fits), the split's tail scalars
 * from h's vector, and from
 * 2^16 the split's other buffers from the coset factor table, which the next proof must
 * rebuild. Two proofs per size on one context, each equal to the CPU's and verified (a table
 * left stale would make the second proof differ), each with its scratch requests served by
 * loans. */
TEST(msm_scratch_lent_by_h_pipeline)
{
    struct gpu_ctx *ctx = gpu_test_ctx();
    struct cuzk_error err_s, *err = &err_s;
    gpu_tune("msm.max_windows=1");
    const uint64_t ns[] = {1023, 40000};
    for (size_t k = 0; k < sizeof ns / sizeof ns[0]; k++) {
        struct fixture f;
        fixture_init(&f, ns[k], 2, 700 + k);
        struct g16_pvk *pvk = g16_pvk_new(&f.pk.vk, err);
        ASSERT(pvk);
        for (int rep = 0; rep < 2; rep++) {
            const uint64_t taken = lent_proof_equals_cpu(ctx, &f, pvk);
            /* 4 sort buffers for each of the 5 MSMs, the tail scalars of the 3 splits, and
             * with the table their 3 other buffers as well */
            const bool tab = gpu_ctx_h_shift_table(ctx);
            const uint64_t want = tab ? 32 : 23;
            ASSERT_MSG(taken >= want, "n=%llu proof %d: %llu scratch requests served by loans, want >= %llu (table %d)",
                       (unsigned long long)ns[k], rep, (unsigned long long)taken, (unsigned long long)want, (int)tab);
            if (ns[k] >= 40000) ASSERT_MSG(tab, "n=%llu: the h pipeline did not use its coset table", (unsigned long long)ns[k]);
        }
        g16_pvk_free(pvk);
        gpu_ctx_unload(ctx);
        fixture_fini(&f);
    }
    gpu_tuning_reset();
    gpu_ctx_free(ctx);
}

/* Without the coset table the rest of the two idle h vectors holds the batch-affine rounds'
 * second points and prefix products (what lets an 80 GB card beside a resident 32 GiB key run
 * the H MSM's rounds). Rounds forced at this small size (every limit at its floor) in the MSMs
 * and the 0/1 sums: two proofs on one context equal the CPU's and verify, and besides the 23
 * sort and tail loans of the test above, the rounds' buffers were lent too. */
TEST(msm_rounds_borrow_h_vectors_without_table)
{
    struct gpu_ctx *ctx = gpu_test_ctx();
    struct cuzk_error err_s, *err = &err_s;
    gpu_tune("msm.max_windows=1");
    gpu_tune("msm.aff_min_n_g1=0");
    gpu_tune("msm.aff_min_n_g2=0");
    gpu_tune("msm.aff_minpt_g1=1");
    gpu_tune("msm.aff_minpt_g2=1");
    gpu_tune("sum.aff_min_n=0");
    gpu_tune("sum.aff_min_t=1");
    gpu_tune("sum.aff_minpt=1");
    struct fixture f;
    fixture_init(&f, 1023, 2, 731);
    struct g16_pvk *pvk = g16_pvk_new(&f.pk.vk, err);
    ASSERT(pvk);
    for (int rep = 0; rep < 2; rep++) {
        const uint64_t taken = lent_proof_equals_cpu(ctx, &f, pvk);
        ASSERT_MSG(!gpu_ctx_h_shift_table(ctx), "a 2^11 domain has no coset table");
        ASSERT_MSG(taken >= 25, "proof %d: %llu scratch requests served by loans, want >= 25", rep,
                   (unsigned long long)taken);
    }
    g16_pvk_free(pvk);
    gpu_ctx_unload(ctx);
    fixture_fini(&f);
    gpu_tuning_reset();
    gpu_ctx_free(ctx);
}

/* A copy of pk whose five vectors live in one pinned host block (the bench's layout). */
static void *pin_key(struct g16_pk *out, const struct g16_pk *pk)
{
    struct cuzk_error err_s, *err = &err_s;
    size_t b1 = sizeof(g1_aff_t), b2 = sizeof(g2_aff_t);
    size_t total = (pk->n_h + pk->n_l + pk->n_a + pk->n_b) * b1 + pk->n_b * b2;
    void *blk = NULL;
    ASSERT_OK(gpu_host_alloc_pinned(&blk, total, err), err);
    *out = *pk;
    char *p = blk;
    out->h = (g1_aff_t *)p, memcpy(p, pk->h, pk->n_h * b1), p += pk->n_h * b1;
    out->l = (g1_aff_t *)p, memcpy(p, pk->l, pk->n_l * b1), p += pk->n_l * b1;
    out->a = (g1_aff_t *)p, memcpy(p, pk->a, pk->n_a * b1), p += pk->n_a * b1;
    out->b_g1 = (g1_aff_t *)p, memcpy(p, pk->b_g1, pk->n_b * b1), p += pk->n_b * b1;
    out->b_g2 = (g2_aff_t *)p, memcpy(p, pk->b_g2, pk->n_b * b2);
    return blk;
}

TEST(streamed_key_proofs_equal_cpu_proofs)
{
    struct gpu_ctx *ctx = gpu_test_ctx();
    struct cuzk_error err_s, *err = &err_s;
    gpu_test_stream_key(ctx, true);
    /* small staging chunks: every vector of these keys takes several chunks */
    gpu_tune("stage.chunk=4096");
    const uint64_t ns[] = {100, 5001, 20000};
    for (size_t k = 0; k < sizeof ns / sizeof ns[0]; k++) {
        struct fixture f;
        fixture_init(&f, ns[k], 2 + (uint32_t)k, 900 + k);
        struct g16_assignment w = {f.in, f.aux};
        size_t key_bytes = (f.pk.n_h + f.pk.n_l + f.pk.n_a + f.pk.n_b) * sizeof(g1_aff_t) +
                           f.pk.n_b * sizeof(g2_aff_t);
        fr_t r, s;
        rand_fr(&r);
        rand_fr(&s);
        struct g16_proof pc, pg, pp;
        ASSERT_OK(g16_prove(&pc, &f.s, &f.pk, &w, 1, &r, &s, NULL, NULL, NULL, err), err);
        /* twice: the second prove reuses the buffers and staging chunks; with at most 1, 2
         * and 3 device buffers (stream.bufs; the third comes once the context has proved:
         * these keys are small, so every buffer asked for fits); the upload starting with the
         * prove, then after the witness (stream.after_wit) */
        for (int rep = 0; rep < 6; rep++) {
            const int maxb = 3 - rep / 2;
            gpu_tune("stream.bufs=%d", maxb);
            gpu_tune("stream.after_wit=%d", rep & 1);
            ASSERT_OK(g16_prove(&pg, &f.s, &f.pk, &w, 1, &r, &s, gpu_g16_backend, ctx, NULL, err), err);
            struct gpu_stream_stats ss;
            gpu_ctx_stream_stats(ctx, &ss);
            ASSERT_EQ_U64(ss.bytes, key_bytes);
            ASSERT_EQ_U64((uint64_t)ss.staged, 1);
            const int want = maxb == 3 && k == 0 && rep == 0 ? 2 : maxb;   /* first proof of ctx: no third */
            ASSERT_MSG(ss.buffers == want, "at most %d buffers (rep %d): %d", maxb, rep, ss.buffers);
            uint8_t bc[G16_PROOF_BYTES], bg[G16_PROOF_BYTES];
            g16_proof_to_bytes(bc, &pc);
            g16_proof_to_bytes(bg, &pg);
            ASSERT_MEM_EQ(bc, bg, G16_PROOF_BYTES);
        }
        /* the same key in pinned memory: copied directly, no staging */
        struct g16_pk pinned;
        void *blk = pin_key(&pinned, &f.pk);
        ASSERT_OK(g16_prove(&pp, &f.s, &pinned, &w, 1, &r, &s, gpu_g16_backend, ctx, NULL, err), err);
        struct gpu_stream_stats ss;
        gpu_ctx_stream_stats(ctx, &ss);
        ASSERT_EQ_U64(ss.bytes, key_bytes);
        ASSERT_EQ_U64((uint64_t)ss.staged, 0);
        uint8_t bc[G16_PROOF_BYTES], bp[G16_PROOF_BYTES];
        g16_proof_to_bytes(bc, &pc);
        g16_proof_to_bytes(bp, &pp);
        ASSERT_MEM_EQ(bc, bp, G16_PROOF_BYTES);
        gpu_tune("stream.bufs=3");
        gpu_tune("stream.after_wit=0");
        /* and back to resident: the option off gives the resident path (stats zero) */
        gpu_test_stream_key(ctx, false);
        ASSERT_OK(g16_prove(&pp, &f.s, &f.pk, &w, 1, &r, &s, gpu_g16_backend, ctx, NULL, err), err);
        gpu_ctx_stream_stats(ctx, &ss);
        ASSERT_EQ_U64(ss.bytes, 0);
        g16_proof_to_bytes(bp, &pp);
        ASSERT_MEM_EQ(bc, bp, G16_PROOF_BYTES);
        gpu_test_stream_key(ctx, true);
        gpu_ctx_unload(ctx);
        gpu_host_free_pinned(blk);
        fixture_fini(&f);
    }
    gpu_tuning_reset();
    gpu_ctx_free(ctx);
}

/* A key streamed in pieces (the memory plan's answer for a card smaller than two of its
 * largest vectors: a 32 GiB PoRep key on a 32 GB card): every MSM runs per piece and adds up;
 * the proofs equal the CPU's for piece sizes that split the vectors unevenly, leave the B
 * vectors whole or in one point per piece (capped at the streamer's piece count). */
TEST(key_streamed_in_pieces_proofs_equal_cpu_proofs)
{
    struct gpu_ctx *ctx = gpu_test_ctx();
    struct cuzk_error err_s, *err = &err_s;
    gpu_test_stream_key(ctx, true);
    struct fixture f;
    fixture_init(&f, 20000, 3, 977);
    struct g16_assignment w = {f.in, f.aux};
    void *vecs[G16_PK_VECTORS];
    size_t vec_bytes[G16_PK_VECTORS];
    const uint64_t key_bytes = g16_pk_vectors(&f.pk, vecs, vec_bytes);
    fr_t r, s;
    rand_fr(&r);
    rand_fr(&s);
    struct g16_proof pg;
    uint8_t bc[G16_PROOF_BYTES], bg[G16_PROOF_BYTES];
    proof_bytes(bc, NULL, &f, NULL, &r, &s);
    const uint64_t pieces[] = {96 * 1000 + 17, 96 * 4096, 192 * 777, 96, 1ull << 30};
    for (size_t i = 0; i < sizeof pieces / sizeof pieces[0]; i++) {
        gpu_tune("stream.piece=%llu", (unsigned long long)pieces[i]);
        for (int bufs = 1; bufs <= 3; bufs += 2) {
            gpu_tune("stream.bufs=%d", bufs);
            ASSERT_OK(g16_prove(&pg, &f.s, &f.pk, &w, 1, &r, &s, gpu_g16_backend, ctx, NULL, err), err);
            struct gpu_stream_stats ss;
            gpu_ctx_stream_stats(ctx, &ss);
            ASSERT_EQ_U64(ss.bytes, key_bytes);
            g16_proof_to_bytes(bg, &pg);
            ASSERT_MSG(!memcmp(bc, bg, G16_PROOF_BYTES), "piece %llu bytes, %d buffers: proof differs from the CPU's",
                       (unsigned long long)pieces[i], bufs);
        }
    }
    gpu_tuning_reset();
    gpu_test_stream_key(ctx, false);
    fixture_fini(&f);
    gpu_ctx_free(ctx);
}

/* The constraint matrices in pinned host memory (what the memory plan picks when the key fits
 * only without them): the SpMV reads them over PCIe, the proofs are the CPU's. */
TEST(matrices_in_host_memory_give_same_proofs)
{
    struct gpu_ctx *ctx = gpu_test_ctx();
    gpu_tune("shape.host=1");
    struct fixture f;
    fixture_init(&f, 20000, 3, 991);
    fr_t r, s;
    rand_fr(&r);
    rand_fr(&s);
    uint8_t bc[G16_PROOF_BYTES], bg[G16_PROOF_BYTES];
    proof_bytes(bc, NULL, &f, NULL, &r, &s);
    for (int rep = 0; rep < 2; rep++) {
        proof_bytes(bg, ctx, &f, NULL, &r, &s);
        ASSERT_MSG(gpu_ctx_shape_mapped(ctx), "the matrices stayed on the device");
        ASSERT_MSG(!memcmp(bc, bg, G16_PROOF_BYTES), "proof %d differs from the CPU's", rep);
    }
    gpu_tuning_reset();
    gpu_ctx_unload(ctx);
    fixture_fini(&f);
    gpu_ctx_free(ctx);
}

/* A proof of another circuit beside the resident one (the daemon's prove_beside: a deadline
 * proof during a batch): the same bytes as the CPU's, its key streamed, and the resident
 * circuit's key and shape untouched, so the next proof of the resident circuit is again the
 * CPU's, from the resident key (nothing streamed). Twice, so the second beside proof reuses
 * what the first gave back. */
TEST(proof_beside_the_resident_key_equals_cpu_and_keeps_it)
{
    struct gpu_ctx *ctx = gpu_test_ctx();
    struct cuzk_error err_s, *err = &err_s;
    struct fixture home, other;
    fixture_init(&home, 20000, 3, 1201);
    fixture_init(&other, 5001, 2, 1202);
    const size_t other_key = (other.pk.n_h + other.pk.n_l + other.pk.n_a + other.pk.n_b) * sizeof(g1_aff_t) +
                             other.pk.n_b * sizeof(g2_aff_t);
    fr_t r, s;
    rand_fr(&r);
    rand_fr(&s);
    uint8_t home_cpu[G16_PROOF_BYTES], other_cpu[G16_PROOF_BYTES], got[G16_PROOF_BYTES];
    proof_bytes(home_cpu, NULL, &home, NULL, &r, &s);
    proof_bytes(other_cpu, NULL, &other, NULL, &r, &s);
    proof_bytes(got, ctx, &home, NULL, &r, &s);   /* makes home's key and shape resident */
    ASSERT_MEM_EQ(home_cpu, got, G16_PROOF_BYTES);
    for (int rep = 0; rep < 2; rep++) {
        const struct g16_assignment w = {other.in, other.aux};
        struct g16_proof p;
        ASSERT_OK(g16_prove(&p, &other.s, &other.pk, &w, 1, &r, &s, gpu_g16_backend_beside, ctx, NULL, err), err);
        g16_proof_to_bytes(got, &p);
        ASSERT_MSG(!memcmp(other_cpu, got, G16_PROOF_BYTES), "beside proof %d differs from the CPU's", rep);
        struct gpu_stream_stats ss;
        gpu_ctx_stream_stats(ctx, &ss);
        ASSERT_EQ_U64(ss.bytes, other_key);   /* its key was streamed */
        proof_bytes(got, ctx, &home, NULL, &r, &s);
        ASSERT_MSG(!memcmp(home_cpu, got, G16_PROOF_BYTES), "resident proof after beside proof %d differs", rep);
        gpu_ctx_stream_stats(ctx, &ss);
        ASSERT_EQ_U64(ss.bytes, 0);   /* home's key still resident: nothing streamed */
    }
    gpu_ctx_unload(ctx);
    fixture_fini(&home);
    fixture_fini(&other);
    gpu_ctx_free(ctx);
}

/* The h pipeline in two domain vectors (what the memory plan picks on a small card; forced by
 * the h.two hook): GPU proof bytes == CPU proof bytes, with the key resident and streamed, the
 * MSMs borrowing the one idle vector. */
TEST(two_h_vectors_give_same_proofs)
{
    struct gpu_ctx *ctx = gpu_test_ctx();
    gpu_tune("h.two=1");
    struct fixture f;
    fixture_init(&f, 20000, 3, 1993);
    fr_t r, s;
    rand_fr(&r);
    rand_fr(&s);
    uint8_t bc[G16_PROOF_BYTES], bg[G16_PROOF_BYTES];
    proof_bytes(bc, NULL, &f, NULL, &r, &s);
    for (int streamed = 0; streamed < 2; streamed++) {
        gpu_test_stream_key(ctx, streamed);
        for (int rep = 0; rep < 2; rep++) {
            proof_bytes(bg, ctx, &f, NULL, &r, &s);
            ASSERT_MSG(!memcmp(bc, bg, G16_PROOF_BYTES), "proof %d (%s key) differs from the CPU's", rep,
                       streamed ? "streamed" : "resident");
        }
    }
    gpu_tuning_reset();
    gpu_ctx_unload(ctx);
    fixture_fini(&f);
    gpu_ctx_free(ctx);
}

/* A backend call that runs out of device memory gives its scratch back, so the daemon's retry
 * plans from what is free then rather than beside the failed call's buffers; with room again
 * the same proof is the CPU's. The cap leaves no room to grow beyond what the context holds
 * once the larger circuit's shape and key are loaded. */
TEST(out_of_memory_gives_scratch_back)
{
    struct cuzk_error err_s, *err = &err_s;
    struct gpu_ctx *ctx = gpu_test_ctx();
    size_t f0 = 0, f1 = 0, tot = 0;
    ASSERT_OK(gpu_mem_info(ctx, &f0, &tot, err), err);
    struct fixture small, big;
    fixture_init(&small, 4000, 2, 71);
    fixture_init(&big, 60000, 2, 72);
    fr_t r, s;
    rand_fr(&r);
    rand_fr(&s);
    uint8_t bc[G16_PROOF_BYTES], bg[G16_PROOF_BYTES];
    proof_bytes(bg, ctx, &small, NULL, &r, &s);
    ASSERT(gpu_ctx_scratch_bytes(ctx) > 0);
    ASSERT_OK(gpu_ctx_load_shape(ctx, &big.s, err), err);
    ASSERT_OK(gpu_ctx_load_pk(ctx, &big.pk, err), err);
    ASSERT_OK(gpu_mem_info(ctx, &f1, &tot, err), err);
    struct gpu_options o;
    memset(&o, 0, sizeof o);
    o.mem_limit_bytes = (f0 > f1 ? f0 - f1 : 0) + ((size_t)65 << 20);   /* held now + the check's margin */
    gpu_ctx_set_options(ctx, &o);
    const struct g16_assignment w = {big.in, big.aux};
    struct g16_proof p;
    int rc = g16_prove(&p, &big.s, &big.pk, &w, 1, &r, &s, gpu_g16_backend, ctx, NULL, err);
    ASSERT_MSG(rc == CUZK_E_GPU_NOMEM, "capped proof: rc %d (%s), expected out of GPU memory", rc, err->msg);
    ASSERT_EQ_U64(gpu_ctx_scratch_bytes(ctx), 0);
    o.mem_limit_bytes = 0;
    gpu_ctx_set_options(ctx, &o);
    proof_bytes(bc, NULL, &big, NULL, &r, &s);
    proof_bytes(bg, ctx, &big, NULL, &r, &s);
    ASSERT_MSG(!memcmp(bc, bg, G16_PROOF_BYTES), "the proof after the out-of-memory differs from the CPU's");
    gpu_ctx_unload(ctx);
    fixture_fini(&small);
    fixture_fini(&big);
    gpu_ctx_free(ctx);
}

/* Default 64 MiB staging chunks with multi-piece parallel copies (h is 12 MiB, the witness
 * 2.2 MiB, both over the 2 MiB copy grain), then the same key and witness page-locked in
 * place (gpu_host_register): direct DMA on both the resident and the streamed path. */
TEST(registered_host_memory_gives_same_proofs)
{
    struct gpu_ctx *ctx = gpu_test_ctx();
    struct cuzk_error err_s, *err = &err_s;
    struct fixture f;
    fixture_init(&f, 70000, 3, 4242);
    struct g16_assignment w = {f.in, f.aux};
    fr_t r, s;
    rand_fr(&r);
    rand_fr(&s);
    struct g16_proof pg;
    uint8_t bc[G16_PROOF_BYTES], bg[G16_PROOF_BYTES];
    proof_bytes(bc, NULL, &f, NULL, &r, &s);
    proof_bytes(bg, ctx, &f, NULL, &r, &s);
    ASSERT_MEM_EQ(bc, bg, G16_PROOF_BYTES);
    gpu_ctx_unload(ctx);

    void *v[G16_PK_VECTORS];
    size_t nb[G16_PK_VECTORS];
    g16_pk_vectors(&f.pk, v, nb);
    for (int k = 0; k < G16_PK_VECTORS; k++) ASSERT_OK(gpu_host_register(v[k], nb[k], err), err);
    ASSERT_OK(gpu_host_register(f.aux, (size_t)f.s.n_aux * sizeof(fr_t), err), err);
    for (int streamed = 0; streamed < 2; streamed++) {
        gpu_test_stream_key(ctx, streamed != 0);
        ASSERT_OK(g16_prove(&pg, &f.s, &f.pk, &w, 1, &r, &s, gpu_g16_backend, ctx, NULL, err), err);
        g16_proof_to_bytes(bg, &pg);
        ASSERT_MEM_EQ(bc, bg, G16_PROOF_BYTES);
        struct gpu_stream_stats ss;
        gpu_ctx_stream_stats(ctx, &ss);
        if (streamed) ASSERT_EQ_U64((uint64_t)ss.staged, 0);   /* registered: direct DMA */
        gpu_ctx_unload(ctx);
    }
    gpu_test_stream_key(ctx, false);
    for (int k = 0; k < G16_PK_VECTORS; k++) gpu_host_unregister(v[k]);
    gpu_host_unregister(f.aux);
    /* an impossible registration is an error with a message, not a crash */
    int rc = gpu_host_register((void *)(uintptr_t)4096, (size_t)1 << 50, err);
    ASSERT_MSG(rc == CUZK_E_GPU || rc == CUZK_E_NOMEM, "register of unmapped memory gave %s", cuzk_errname(rc));
    ASSERT(strstr(err->msg, "gpu_host_register") != NULL);
    fixture_fini(&f);
    gpu_ctx_free(ctx);
}

/* Pinned allocations and registrations are counted (gpu_host_pinned_bytes: what the daemon
 * reports) and given back by their frees, whatever the order. */
TEST(pinned_alloc_roundtrip)
{
    struct gpu_ctx *ctx = gpu_test_ctx();
    struct cuzk_error err_s, *err = &err_s;
    uint64_t now0, peak0, now, peak;
    gpu_host_pinned_bytes(&now0, &peak0);
    uint8_t *p = NULL;
    ASSERT_OK(gpu_host_alloc_pinned((void **)&p, 1 << 20, err), err);
    ASSERT(p);
    memset(p, 0xa5, 1 << 20);   /* writable host memory */
    ASSERT_EQ_U64(p[(1 << 20) - 1], 0xa5);
    const size_t rb = (size_t)3 << 20;
    void *r = aligned_alloc(4096, rb);
    ASSERT(r);
    ASSERT_OK(gpu_host_register(r, rb, err), err);
    gpu_host_pinned_bytes(&now, &peak);
    ASSERT_EQ_U64(now, now0 + (1 << 20) + rb);
    ASSERT(peak >= now);
    gpu_host_free_pinned(p);
    gpu_host_pinned_bytes(&now, &peak);
    ASSERT_EQ_U64(now, now0 + rb);
    ASSERT(peak >= now0 + (1 << 20) + rb);
    gpu_host_unregister(r);
    free(r);
    gpu_host_free_pinned(NULL);
    gpu_host_pinned_bytes(&now, &peak);
    ASSERT_EQ_U64(now, now0);
    gpu_ctx_free(ctx);
}

/* Witness prefetch (gpu_g16_stage_witness): a staged witness gives the same proof bytes as an
 * uploaded one and is taken by its own backend call; an unstaged copy is never taken for new
 * contents at the same pointers; staging declines before the first proof; a backend call
 * whose buffers both hold copies staged for other proofs still proves; two threads that
 * stage outside the device lock and prove under it get every witness staged. */
struct wit {
    fr_t *in, *aux;
    uint8_t want[G16_PROOF_BYTES];
};

static void wit_init(struct wit *x, const struct fixture *f, uint64_t seed, const fr_t *r, const fr_t *s_blind)
{
    struct cuzk_error err_s, *err = &err_s;
    x->in = calloc(f->s.n_inputs, sizeof(fr_t));
    x->aux = calloc(f->s.n_aux + 1, sizeof(fr_t));
    ASSERT(x->in && x->aux);
    ASSERT_OK(synth_witness(x->in, x->aux, &f->s, &f->p, seed, err), err);
    proof_bytes(x->want, NULL, f, &(struct g16_assignment){x->in, x->aux}, r, s_blind);
}

static void gpu_proof_bytes(uint8_t out[G16_PROOF_BYTES], struct gpu_ctx *ctx, const struct fixture *f,
                            const struct wit *x, const fr_t *r, const fr_t *s_blind)
{
    proof_bytes(out, ctx, f, &(struct g16_assignment){x->in, x->aux}, r, s_blind);
}

struct pf_thread {
    struct gpu_ctx *ctx;
    const struct fixture *f;
    struct wit *x;
    const fr_t *r, *s;
    int reps, hits, bad, rc;
    struct cuzk_error err;
};

static void *pf_main(void *arg)
{
    struct pf_thread *t = arg;
    struct g16_assignment w = {t->x->in, t->x->aux};
    for (int i = 0; i < t->reps && !t->rc; i++) {
        struct cuzk_error se;
        int src = gpu_g16_stage_witness(t->ctx, &t->f->s, &w, &se);   /* outside the lock */
        gpu_ctx_lock(t->ctx);
        struct g16_proof p;
        t->rc = g16_prove(&p, &t->f->s, &t->f->pk, &w, 1, t->r, t->s, gpu_g16_backend, t->ctx, NULL, &t->err);
        t->hits += !src && gpu_ctx_last_witness_staged(t->ctx);
        gpu_ctx_unlock(t->ctx);
        gpu_g16_unstage_witness(t->ctx, &t->f->s, &w);
        uint8_t b[G16_PROOF_BYTES];
        if (!t->rc) g16_proof_to_bytes(b, &p);
        if (!t->rc && memcmp(b, t->x->want, G16_PROOF_BYTES)) t->bad++;
    }
    return NULL;
}

/* The device lock is granted in request order: a holder that unlocks and asks again at once
 * queues behind a waiter (with a plain mutex it took the lock straight back, and the other
 * prover's staged witness upload gained nothing). */
struct fifo_waiter {
    struct gpu_ctx *ctx;
    volatile int *order;
    volatile int *n;
};

static void *fifo_main(void *arg)
{
    struct fifo_waiter *f = arg;
    gpu_ctx_lock(f->ctx);
    f->order[(*f->n)++] = 1;
    gpu_ctx_unlock(f->ctx);
    return NULL;
}

TEST(device_lock_is_fifo)
{
    struct gpu_ctx *ctx = gpu_test_ctx();
    for (int rep = 0; rep < 20; rep++) {
        volatile int order[2] = {0, 0}, n = 0;
        struct fifo_waiter f = {ctx, order, &n};
        gpu_ctx_lock(ctx);
        pthread_t th;
        ASSERT(pthread_create(&th, NULL, fifo_main, &f) == 0);
        usleep(20000);   /* the waiter is queued */
        gpu_ctx_unlock(ctx);
        gpu_ctx_lock(ctx);   /* at once again: must come after the waiter */
        order[n++] = 2;
        gpu_ctx_unlock(ctx);
        pthread_join(th, NULL);
        ASSERT_MSG(n == 2 && order[0] == 1 && order[1] == 2, "rep %d: the re-lock overtook the waiter", rep);
    }
    gpu_ctx_free(ctx);
}

TEST(staged_witness_proofs_equal_cpu_proofs)
{
    struct gpu_ctx *ctx = gpu_test_ctx();
    struct cuzk_error err_s, *err = &err_s;
    struct fixture f;
    fixture_init(&f, 3001, 2, 900);
    fr_t r, s;
    rand_fr(&r);
    rand_fr(&s);
    struct wit x[4];
    for (int i = 0; i < 4; i++) wit_init(&x[i], &f, 901 + (uint64_t)i, &r, &s);
    for (int i = 1; i < 4; i++) ASSERT(memcmp(x[0].want, x[i].want, G16_PROOF_BYTES));   /* distinct */
    struct g16_assignment w0 = {x[0].in, x[0].aux}, w1 = {x[1].in, x[1].aux}, w2 = {x[2].in, x[2].aux},
                          w3 = {x[3].in, x[3].aux};
    uint8_t got[G16_PROOF_BYTES];

    /* before the first proof the context declines (its working memory is not sized) */
    ASSERT_EQ_INT(gpu_g16_stage_witness(ctx, &f.s, &w0, err), CUZK_E_UNSUPPORTED);
    gpu_proof_bytes(got, ctx, &f, &x[0], &r, &s);
    ASSERT_MEM_EQ(got, x[0].want, G16_PROOF_BYTES);
    ASSERT(!gpu_ctx_last_witness_staged(ctx));

    /* staged, then taken by its own proof */
    ASSERT_OK(gpu_g16_stage_witness(ctx, &f.s, &w1, err), err);
    gpu_proof_bytes(got, ctx, &f, &x[1], &r, &s);
    ASSERT_MEM_EQ(got, x[1].want, G16_PROOF_BYTES);
    ASSERT(gpu_ctx_last_witness_staged(ctx));

    /* staged and dropped: new contents at the same pointers must be uploaded, not the copy */
    ASSERT_OK(gpu_g16_stage_witness(ctx, &f.s, &w2, err), err);
    gpu_g16_unstage_witness(ctx, &f.s, &w2);
    fr_t *keep_in = malloc(f.s.n_inputs * sizeof(fr_t)), *keep_aux = malloc(f.s.n_aux * sizeof(fr_t));
    ASSERT(keep_in && keep_aux);
    memcpy(keep_in, x[2].in, f.s.n_inputs * sizeof(fr_t));
    memcpy(keep_aux, x[2].aux, f.s.n_aux * sizeof(fr_t));
    memcpy(x[2].in, x[3].in, f.s.n_inputs * sizeof(fr_t));
    memcpy(x[2].aux, x[3].aux, f.s.n_aux * sizeof(fr_t));
    gpu_proof_bytes(got, ctx, &f, &x[2], &r, &s);
    ASSERT_MEM_EQ(got, x[3].want, G16_PROOF_BYTES);
    ASSERT(!gpu_ctx_last_witness_staged(ctx));
    memcpy(x[2].in, keep_in, f.s.n_inputs * sizeof(fr_t));
    memcpy(x[2].aux, keep_aux, f.s.n_aux * sizeof(fr_t));
    free(keep_in);
    free(keep_aux);

    /* both buffers hold copies staged for other proofs: a third proof evicts the older one,
     * the newer one is still taken by its own proof; a third stage finds no buffer */
    ASSERT_OK(gpu_g16_stage_witness(ctx, &f.s, &w2, err), err);
    ASSERT_OK(gpu_g16_stage_witness(ctx, &f.s, &w3, err), err);
    ASSERT_EQ_INT(gpu_g16_stage_witness(ctx, &f.s, &w1, err), CUZK_E_BUSY);
    gpu_proof_bytes(got, ctx, &f, &x[0], &r, &s);
    ASSERT_MEM_EQ(got, x[0].want, G16_PROOF_BYTES);
    ASSERT(!gpu_ctx_last_witness_staged(ctx));
    gpu_proof_bytes(got, ctx, &f, &x[3], &r, &s);
    ASSERT_MEM_EQ(got, x[3].want, G16_PROOF_BYTES);
    ASSERT(gpu_ctx_last_witness_staged(ctx));
    gpu_proof_bytes(got, ctx, &f, &x[2], &r, &s);   /* its copy was evicted: uploaded again */
    ASSERT_MEM_EQ(got, x[2].want, G16_PROOF_BYTES);
    ASSERT(!gpu_ctx_last_witness_staged(ctx));

    /* two provers: stage outside the lock, prove under it (the daemon's pattern) */
    struct pf_thread th[2];
    pthread_t tid[2];
    for (int i = 0; i < 2; i++) {
        th[i] = (struct pf_thread){ctx, &f, &x[i], &r, &s, 3, 0, 0, CUZK_OK, {0}};
        ASSERT(pthread_create(&tid[i], NULL, pf_main, &th[i]) == 0);
    }
    for (int i = 0; i < 2; i++) pthread_join(tid[i], NULL);
    for (int i = 0; i < 2; i++) {
        ASSERT_MSG(th[i].rc == CUZK_OK, "prover %d: %s", i, th[i].err.msg);
        ASSERT_EQ_INT(th[i].bad, 0);
        ASSERT_EQ_INT(th[i].hits, 3);
    }
    for (int i = 0; i < 4; i++) {
        free(x[i].in);
        free(x[i].aux);
    }
    gpu_ctx_unload(ctx);
    fixture_fini(&f);
    gpu_ctx_free(ctx);
}

/* Every GPU at once, one thread and one context per device, each proving its own circuit
 * twice (resident key, then streamed) while the others run: per-device state must not leak
 * between devices. Skipped with fewer than 2 GPUs (run on an nvidia-h200-x2 machine). */
#define MD_MAX 8
struct md_job {
    int dev;
    struct fixture f;
    fr_t r, s;
    uint8_t want[G16_PROOF_BYTES], got[2][G16_PROOF_BYTES];
    int rc;
    struct cuzk_error err;
};

static void *md_main(void *arg)
{
    struct md_job *j = arg;
    struct gpu_ctx *ctx = NULL;
    j->rc = gpu_ctx_new(&ctx, j->dev, &j->err);
    struct g16_assignment w = {j->f.in, j->f.aux};
    for (int rep = 0; !j->rc && rep < 2; rep++) {
        gpu_test_stream_key(ctx, rep == 1);
        struct g16_proof p;
        j->rc = g16_prove(&p, &j->f.s, &j->f.pk, &w, 1, &j->r, &j->s, gpu_g16_backend, ctx, NULL, &j->err);
        if (!j->rc) g16_proof_to_bytes(j->got[rep], &p);
    }
    if (ctx) gpu_ctx_unload(ctx);
    gpu_ctx_free(ctx);
    return NULL;
}

TEST_T(every_gpu_proves_concurrently, 300)
{
    struct cuzk_error err_s, *err = &err_s;
    int n = 0;
    if (gpu_device_count(&n, err) != CUZK_OK || n < 2) test_skip("%d GPU(s): needs 2 or more", n);
    if (n > MD_MAX) n = MD_MAX;
    struct md_job *jobs = calloc((size_t)n, sizeof *jobs);
    ASSERT(jobs);
    for (int d = 0; d < n; d++) {
        struct md_job *j = &jobs[d];
        j->dev = d;
        fixture_init(&j->f, 20000 + 1000 * (uint64_t)d, 2 + (uint32_t)d, 7000 + (uint64_t)d);
        rand_fr(&j->r);
        rand_fr(&j->s);
        struct g16_assignment w = {j->f.in, j->f.aux};
        struct g16_proof p;
        ASSERT_OK(g16_prove(&p, &j->f.s, &j->f.pk, &w, 1, &j->r, &j->s, NULL, NULL, NULL, err), err);
        g16_proof_to_bytes(j->want, &p);
    }
    pthread_t th[MD_MAX];
    for (int d = 0; d < n; d++) ASSERT(pthread_create(&th[d], NULL, md_main, &jobs[d]) == 0);
    for (int d = 0; d < n; d++) pthread_join(th[d], NULL);
    for (int d = 0; d < n; d++) {
        struct md_job *j = &jobs[d];
        ASSERT_MSG(j->rc == CUZK_OK, "GPU %d: %s", d, j->err.msg);
        ASSERT_MEM_EQ(j->want, j->got[0], G16_PROOF_BYTES);
        ASSERT_MEM_EQ(j->want, j->got[1], G16_PROOF_BYTES);
        fixture_fini(&j->f);
    }
    free(jobs);
}
