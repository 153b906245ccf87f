/* bench_gpu_prove.c: cuzk-bench GPU prover benchmarks: gpu-prove (the GPU backend on the
 * synthetic circuit against the CPU backend) and gpu-porep (pl_*: a PoRep-like partition with a
 * random SRS, resident and streamed key, the two-prover pipeline; also used by gpu-circuit,
 * bench_gpu_circuit.c). Needs the `make gpu` build (build/bin/cuzk-bench-gpu). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"
#include "bench_gpu.h"
#include "cuzk/circuits.h"
#include "cuzk/ec.h"
#include "cuzk/gpu.h"
#include "cuzk/groth16.h"
#include "cuzk/util.h"
#include "gpu_tuning.h"

static int bench_gpu_porep(int argc, char **argv);

BENCH_CMD(gpu_prove, "gpu-prove",
          "GPU backend on the synthetic circuit: gpu-prove --constraints N [--reps R] [--cpu 0|1] "
          "[--set NAME=VALUE]... [--trace 1]; gpu-prove --porep-like LG [...]: see gpu-porep")
{
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--porep-like")) return bench_gpu_porep(argc, argv);
    uint64_t n = 1 << 16;
    int reps = 3, dev = 0, cpu = 1;
    char *args[64];
    int nargs;
    if (bench_gpu_parse_tuning("gpu-prove", argc, argv, NULL, args, &nargs)) return 2;
    argc = nargs;
    argv = args;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--constraints")) n = strtoull(argv[i + 1], NULL, 10);
        else if (!strcmp(argv[i], "--reps")) reps = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--device")) dev = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--cpu")) cpu = atoi(argv[i + 1]);
        else {
            fprintf(stderr, "usage: cuzk-bench gpu-prove --constraints N [--reps R] [--cpu 0|1] "
                            BENCH_GPU_TUNING_OPTS "\n");
            return 2;
        }
    }
    if (reps < 1 || reps > 100) reps = 3;
    struct gpu_ctx *ctx = open_gpu(dev);
    if (!ctx) return 1;
    struct cuzk_error err;
    struct synth_params p = {n, 4, false};
    struct g16_shape s;
    struct g16_pk pk;
    uint64_t t0 = cuzk_now_ns();
    if (synth_build_shape(&s, &p, &err) || g16_setup(&pk, &s, NULL, pool_default(), &err)) {
        fprintf(stderr, "gpu-prove: %s\n", err.msg);
        gpu_ctx_free(ctx);
        return 1;
    }
    printf("shape+setup %.1f ms: %llu constraints, h %llu, l %llu, a %llu, b %llu\n", ms_of(cuzk_now_ns() - t0),
           (unsigned long long)s.n_constraints, (unsigned long long)pk.n_h, (unsigned long long)pk.n_l,
           (unsigned long long)pk.n_a, (unsigned long long)pk.n_b);
    fr_t *in = calloc(s.n_inputs, sizeof(fr_t)), *aux = calloc(s.n_aux + 1, sizeof(fr_t));
    int rc = synth_witness(in, aux, &s, &p, 1, &err);
    struct g16_assignment w = {in, aux};
    t0 = cuzk_now_ns();
    if (!rc) rc = gpu_ctx_load_shape(ctx, &s, &err);
    if (!rc) rc = gpu_ctx_load_pk(ctx, &pk, &err);
    if (!rc) printf("upload shape+key %.1f ms\n", ms_of(cuzk_now_ns() - t0));
    double ms[100];
    struct g16_proof pr;
    for (int r = -1; !rc && r < reps; r++) {
        struct g16_timings t;
        t0 = cuzk_now_ns();
        rc = g16_prove(&pr, &s, &pk, &w, 1, NULL, NULL, gpu_g16_backend, ctx, &t, &err);
        double total = ms_of(cuzk_now_ns() - t0);
        if (r >= 0) ms[r] = total;
        if (!rc && r == reps - 1)
            printf("gpu phases: wit %.2f abc %.2f ntt %.2f h %.2f l %.2f a %.2f b_g1 %.2f b_g2 %.2f assembly %.2f ms\n",
                   ms_of(t.wit_ns), ms_of(t.abc_ns), ms_of(t.ntt_ns), ms_of(t.msm_h_ns), ms_of(t.msm_l_ns), ms_of(t.msm_a_ns),
                   ms_of(t.msm_b_g1_ns), ms_of(t.msm_b_g2_ns), ms_of(t.assembly_ns));
    }
    if (!rc) {
        printf("gpu_prove %llu constraints: %.2f ms (median of %d, resident key)\n", (unsigned long long)n,
               bench_median(ms, (size_t)reps), reps);
        struct g16_pvk *pvk = g16_pvk_new(&pk.vk, &err);
        rc = pvk ? g16_verify(pvk, &pr, in + 1, s.n_inputs - 1, &err) : CUZK_E_NOMEM;
        printf("verify: %s\n", rc ? err.msg : "ok");
        g16_pvk_free(pvk);
    }
    if (!rc && cpu) {
        struct g16_timings t;
        t0 = cuzk_now_ns();
        rc = g16_prove(&pr, &s, &pk, &w, 1, NULL, NULL, NULL, NULL, &t, &err);
        printf("cpu_prove %llu constraints: %.2f ms (threads %u)\n", (unsigned long long)n,
               ms_of(cuzk_now_ns() - t0), pool_size(pool_default()));
    }
    if (rc) fprintf(stderr, "gpu-prove: %s\n", err.msg);
    gpu_ctx_unload(ctx);
    free(in);
    free(aux);
    g16_pk_free(&pk);
    g16_shape_free(&s);
    gpu_ctx_free(ctx);
    return rc ? 1 : 0;
}

/* ---- gpu-porep: a synthetic partition shaped like PoRep 32 GiB at domain 2^LG, built on the
 * host without a trusted setup: the key is a random SRS of valid curve points (2^16 distinct
 * G1 and 2^14 G2 points tiled to the needed lengths; the toxic waste is unknown to anyone), so
 * the proof is timed but cannot verify. Correctness is covered by the verified smaller proofs
 * (tests/gpu/test_prove.c). Shape at LG = 27: 130M constraints (N - N/32), 328 inputs, one aux
 * per non-input row, A 99.7% dense, B 25% dense, witness 45% 0 / 45% 1 / 10% random. The
 * matrices have PoRep's row count but a simplified structure (A 2, B 1, C 1 terms per row):
 * SpMV is ~1% of a prove, so this affects only that phase. ---- */

static uint64_t mix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

#define PL_INPUTS 328u

static bool pl_a_dense(uint64_t j) { return mix64(j ^ 0xa11ce) % 1000 < 997; }
static bool pl_b_dense(uint64_t j) { return mix64(j ^ 0xb0b) % 4 == 0; }

/* Rows [begin, end): row_ptr and entries of A, B, C. Input row r: A = (r, 1); aux row j:
 * A = (aux j, 1) + (aux j', c), B = (aux j'', 1), C = (aux j, c'). */
static void pl_rows(void *vctx, size_t begin, size_t end, unsigned worker)
{
    (void)worker;
    struct plike *pl = vctx;
    struct g16_shape *s = pl->s;
    uint64_t ni = s->n_inputs, na = s->n_aux;
    for (size_t r = begin; r < end; r++) {
        if (r < ni) {
            s->a.row_ptr[r] = r;
            s->b.row_ptr[r] = s->c.row_ptr[r] = 0;
            s->a.col[r] = (uint32_t)r;
            s->a.coeff_idx[r] = 0;
            continue;
        }
        uint64_t j = r - ni, h = mix64(j);
        uint64_t a0 = ni + 2 * j;
        s->a.row_ptr[r] = a0;
        s->b.row_ptr[r] = s->c.row_ptr[r] = j;
        s->a.col[a0] = (uint32_t)(ni + j);
        s->a.coeff_idx[a0] = 0;
        s->a.col[a0 + 1] = (uint32_t)(ni + (h >> 8) % na);
        s->a.coeff_idx[a0 + 1] = (h & 7) ? 0 : 3;
        s->b.col[j] = (uint32_t)(ni + (h >> 24) % na);
        s->b.coeff_idx[j] = 0;
        s->c.col[j] = (uint32_t)(ni + j);
        s->c.coeff_idx[j] = (uint16_t)(1 + (h & 1));
    }
    if (end == s->n_constraints) {
        s->a.row_ptr[end] = s->a.nnz;
        s->b.row_ptr[end] = s->b.nnz;
        s->c.row_ptr[end] = s->c.nnz;
    }
}

/* Density bitmap words [begin, end) and the witness aux values of those 64-variable blocks. */
static void pl_dens_wit(void *vctx, size_t begin, size_t end, unsigned worker)
{
    (void)worker;
    struct plike *pl = vctx;
    struct g16_shape *s = pl->s;
    for (size_t wd = begin; wd < end; wd++) {
        uint64_t am = 0, bm = 0;
        for (unsigned bit = 0; bit < 64; bit++) {
            uint64_t j = wd * 64 + bit;
            if (j >= s->n_aux) break;
            am |= (uint64_t)pl_a_dense(j) << bit;
            bm |= (uint64_t)pl_b_dense(j) << bit;
            uint64_t h = mix64(j ^ 0x5eed) % 100;
            if (h < 45) {
                pl->aux[j] = FR_ZERO;
            } else if (h < 90) {
                pl->aux[j] = FR_ONE;
            } else {
                uint8_t b[64];
                for (int k = 0; k < 8; k++) {
                    uint64_t x = mix64(j * 8 + (uint64_t)k + 0x77);
                    memcpy(b + 8 * k, &x, 8);
                }
                fr_from_wide_le(&pl->aux[j], b);
            }
        }
        s->a_aux_density[wd] = am;
        s->b_aux_density[wd] = bm;
    }
}

/* Key vector k (0 h, 1 l, 2 a, 3 b_g1, 4 b_g2) entries [begin, end): tiled random points. */
struct pl_fill { struct plike *pl; void *dst; int g; uint64_t off; };

static void pl_fill_fn(void *vctx, size_t begin, size_t end, unsigned worker)
{
    (void)worker;
    struct pl_fill *f = vctx;
    for (size_t i = begin; i < end; i++) {
        uint64_t t = i * 40503u + f->off;
        if (f->g == 1) ((g1_aff_t *)f->dst)[i] = f->pl->p1[t % f->pl->d1];
        else ((g2_aff_t *)f->dst)[i] = f->pl->p2[t % f->pl->d2];
    }
}

static int pl_alloc(void **out, size_t bytes, bool pinned, struct cuzk_error *err)
{
    if (pinned) return gpu_host_alloc_pinned(out, bytes, err);
    *out = cuzk_malloc(bytes ? bytes : 16);
    return *out ? CUZK_OK : cuzk_fail(err, CUZK_E_NOMEM, "gpu-prove: host allocation of %zu bytes failed", bytes);
}

static void pl_free_key(struct g16_pk *pk, bool pinned)
{
    void *v[5] = {pk->h, pk->l, pk->a, pk->b_g1, pk->b_g2};
    for (int k = 0; k < 5; k++) {
        if (pinned) gpu_host_free_pinned(v[k]);
        else cuzk_free(v[k]);
    }
    pk->h = pk->l = pk->a = pk->b_g1 = NULL;
    pk->b_g2 = NULL;
    g16_pk_free(pk);   /* the vk */
}

void pl_free(struct plike *pl, bool key_pinned)
{
    pl_free_key(pl->pk, key_pinned);
    g16_shape_free(pl->s);
    cuzk_free(pl->in);
    cuzk_free(pl->aux);
    free((void *)pl->p1);
    free((void *)pl->p2);
}

static int pl_build(struct plike *pl, unsigned lg, bool pinned, struct cuzk_error *err)
{
    struct g16_shape *s = pl->s;
    struct g16_pk *pk = pl->pk;
    uint64_t N = (uint64_t)1 << lg;
    memset(s, 0, sizeof *s);
    memset(pk, 0, sizeof *pk);
    s->n_inputs = PL_INPUTS;
    s->n_constraints = N - N / 32;
    s->n_aux = (uint32_t)(s->n_constraints - s->n_inputs);
    s->a.nnz = s->n_inputs + 2 * (uint64_t)s->n_aux;
    s->b.nnz = s->c.nnz = s->n_aux;
    struct g16_matrix *m[3] = {&s->a, &s->b, &s->c};
    for (int i = 0; i < 3; i++) {
        m[i]->row_ptr = cuzk_malloc((s->n_constraints + 1) * 8);
        m[i]->col = cuzk_malloc(m[i]->nnz * 4);
        m[i]->coeff_idx = cuzk_malloc(m[i]->nnz * 2);
        if (!m[i]->row_ptr || !m[i]->col || !m[i]->coeff_idx)
            return cuzk_fail(err, CUZK_E_NOMEM, "gpu-porep: matrix allocation failed");
    }
    s->n_coeffs = 4;
    s->coeffs = cuzk_malloc(4 * sizeof(fr_t));
    size_t aw = (s->n_aux + 63) / 64;
    s->a_aux_density = cuzk_calloc(aw, 8);
    s->b_aux_density = cuzk_calloc(aw, 8);
    s->b_inp_density = cuzk_calloc((s->n_inputs + 63) / 64, 8);
    pl->in = cuzk_malloc(s->n_inputs * sizeof(fr_t));
    pl->aux = cuzk_malloc(((size_t)s->n_aux + 1) * sizeof(fr_t));
    if (!s->coeffs || !s->a_aux_density || !s->b_aux_density || !s->b_inp_density || !pl->in || !pl->aux)
        return cuzk_fail(err, CUZK_E_NOMEM, "gpu-porep: host allocation failed");
    s->coeffs[0] = FR_ONE;
    fr_from_u64(&s->coeffs[1], 2);
    fr_neg(&s->coeffs[2], &FR_ONE);
    fr_from_u64(&s->coeffs[3], 0x1234567);
    s->b_inp_density[0] = 1;   /* ONE is B-dense, the public inputs are not */
    s->b_inp_count = 1;
    pool_parallel_for(pool_default(), s->n_constraints, 1 << 16, pl_rows, pl);
    pool_parallel_for(pool_default(), aw, 1 << 10, pl_dens_wit, pl);
    for (size_t k = 0; k < aw; k++) {
        s->a_aux_count += (uint64_t)__builtin_popcountll(s->a_aux_density[k]);
        s->b_aux_count += (uint64_t)__builtin_popcountll(s->b_aux_density[k]);
    }
    pl->in[0] = FR_ONE;
    for (uint32_t i = 1; i < s->n_inputs; i++) fr_from_u64(&pl->in[i], mix64(i));
    return pl_key(pl, pinned, err);
}

int pl_key(struct plike *pl, bool pinned, struct cuzk_error *err)
{
    struct g16_shape *s = pl->s;
    struct g16_pk *pk = pl->pk;
    uint64_t N = 1;
    while (N < s->n_constraints) N <<= 1;
    memset(pk, 0, sizeof *pk);
    pk->n_h = N - 1;
    pk->n_l = s->n_aux;
    pk->n_a = s->n_inputs + s->a_aux_count;
    pk->n_b = s->b_inp_count + s->b_aux_count;
    pl->key_pinned = pinned;
    int rc = pl_alloc((void **)&pk->h, pk->n_h * sizeof(g1_aff_t), pinned, err);
    if (!rc) rc = pl_alloc((void **)&pk->l, pk->n_l * sizeof(g1_aff_t), pinned, err);
    if (!rc) rc = pl_alloc((void **)&pk->a, pk->n_a * sizeof(g1_aff_t), pinned, err);
    if (!rc) rc = pl_alloc((void **)&pk->b_g1, pk->n_b * sizeof(g1_aff_t), pinned, err);
    if (!rc) rc = pl_alloc((void **)&pk->b_g2, pk->n_b * sizeof(g2_aff_t), pinned, err);
    pk->vk.ic = cuzk_malloc(s->n_inputs * sizeof(g1_aff_t));
    if (!rc && !pk->vk.ic) rc = cuzk_fail(err, CUZK_E_NOMEM, "gpu-porep: vk allocation failed");
    if (rc) return rc;
    pk->vk.n_ic = s->n_inputs;
    struct pl_fill f[6] = {{pl, pk->h, 1, 1}, {pl, pk->l, 1, 2}, {pl, pk->a, 1, 3},
                           {pl, pk->b_g1, 1, 4}, {pl, pk->b_g2, 2, 5}, {pl, pk->vk.ic, 1, 6}};
    uint64_t len[6] = {pk->n_h, pk->n_l, pk->n_a, pk->n_b, pk->n_b, s->n_inputs};
    for (int k = 0; k < 6; k++) pool_parallel_for(pool_default(), len[k], 1 << 16, pl_fill_fn, &f[k]);
    pk->vk.alpha_g1 = pl->p1[11];
    pk->vk.beta_g1 = pl->p1[12];
    pk->vk.delta_g1 = pl->p1[13];
    pk->vk.beta_g2 = pl->p2[11];
    pk->vk.gamma_g2 = pl->p2[12];
    pk->vk.delta_g2 = pl->p2[13];
    return CUZK_OK;
}

static double gib(double b) { return b / (double)(1ull << 30); }

/* A streamed key is page-locked for direct DMA, as the daemon does (engine/devices.c); false
 * (and nothing left registered) when the system refuses, and the proves then copy it through
 * the staging chunks. */
static bool pl_pin(struct g16_pk *pk)
{
    void *v[G16_PK_VECTORS];
    size_t nb[G16_PK_VECTORS];
    g16_pk_vectors(pk, v, nb);
    struct cuzk_error e = {0};
    uint64_t t0 = cuzk_now_ns();
    for (int k = 0; k < G16_PK_VECTORS; k++)
        if (gpu_host_register(v[k], nb[k], &e)) {
            printf("[streamed] key not pinned (%s): staged copies\n", e.msg);
            while (k-- > 0) gpu_host_unregister(v[k]);
            return false;
        }
    printf("[streamed] key pinned in host memory: %.1f ms\n", ms_of(cuzk_now_ns() - t0));
    return true;
}

static void pl_unpin(struct g16_pk *pk)
{
    void *v[G16_PK_VECTORS];
    size_t nb[G16_PK_VECTORS];
    g16_pk_vectors(pk, v, nb);
    for (int k = 0; k < G16_PK_VECTORS; k++) gpu_host_unregister(v[k]);
}

/* Warm-up + reps proves; medians of the total and of every phase. */
int pl_time(struct gpu_ctx *ctx, struct plike *pl, int reps, bool streamed, struct cuzk_error *err)
{
    const char *mode = streamed ? "streamed" : "resident";
    gpu_ctx_unload(ctx);
    struct gpu_options opt = bench_gpu_options();
    opt.stream_key = streamed;
    gpu_ctx_set_options(ctx, &opt);
    uint64_t t0 = cuzk_now_ns();
    int rc = gpu_ctx_load_shape(ctx, pl->s, err);
    if (rc) return rc;
    printf("[%s] upload shape %.1f ms\n", mode, ms_of(cuzk_now_ns() - t0));
    if (!streamed) {
        t0 = cuzk_now_ns();
        rc = gpu_ctx_load_pk(ctx, pl->pk, err);
        if (rc == CUZK_E_GPU_NOMEM) {
            /* the memory plan keeps this key off the card: the proves stream it, as the
             * daemon's would (a card that cannot hold it is not an error) */
            printf("[resident] not resident: %s; the key is streamed\n", err->msg);
            mode = "streamed";
            cuzk_error_clear(err);
            rc = CUZK_OK;
            streamed = true;
        }
        if (rc) return rc;
    }
    if (!streamed) {
        double ms = ms_of(cuzk_now_ns() - t0);
        printf("[resident] upload key %.1f ms (%.2f GiB, %.1f GB/s)\n", ms,
               gib((double)((pl->pk->n_h + pl->pk->n_l + pl->pk->n_a + pl->pk->n_b) * sizeof(g1_aff_t) +
                            pl->pk->n_b * sizeof(g2_aff_t))),
               (double)((pl->pk->n_h + pl->pk->n_l + pl->pk->n_a + pl->pk->n_b) * sizeof(g1_aff_t) +
                        pl->pk->n_b * sizeof(g2_aff_t)) / (ms * 1e6));
    }
    const bool pin = streamed && !pl->key_pinned && pl_pin(pl->pk);
    fflush(stdout);
    enum { NPH = 13 };
    static const char *const names[NPH] = {"total", "wit", "abc", "ntt", "h", "l", "a", "b_g1", "b_g2", "assembly",
                                           "stage", "upload", "upload_wait"};
    double v[NPH][100];
    struct g16_assignment w = {pl->in, pl->aux};
    struct g16_proof pr;
    bool staged_all = true;
    for (int r = -1; r < reps; r++) {
        struct g16_timings t;
        /* the timed proves take a staged witness, as the daemon's do (its next worker stages
         * before its device turn): "total" is then the daemon's device lock plus assembly */
        double stage_ms = 0;
        if (r >= 0) {
            t0 = cuzk_now_ns();
            if (gpu_g16_stage_witness(ctx, pl->s, &w, err)) {
                if (staged_all) printf("[%s] witness not staged (uploaded inside the prove): %s\n", mode, err->msg);
                staged_all = false;
                cuzk_error_clear(err);
            }
            stage_ms = ms_of(cuzk_now_ns() - t0);
        }
        t0 = cuzk_now_ns();
        rc = g16_prove(&pr, pl->s, pl->pk, &w, 1, NULL, NULL, gpu_g16_backend, ctx, &t, err);
        if (rc) break;
        double total = ms_of(cuzk_now_ns() - t0);
        struct gpu_stream_stats ss;
        gpu_ctx_stream_stats(ctx, &ss);
        printf("[%s] prove %s: %.1f ms\n", mode, r < 0 ? "warm-up" : "timed", total);
        fflush(stdout);
        if (r < 0) continue;
        double x[NPH] = {total, ms_of(t.wit_ns), ms_of(t.abc_ns), ms_of(t.ntt_ns), ms_of(t.msm_h_ns), ms_of(t.msm_l_ns),
                         ms_of(t.msm_a_ns), ms_of(t.msm_b_g1_ns), ms_of(t.msm_b_g2_ns), ms_of(t.assembly_ns),
                         stage_ms, ms_of(ss.upload_ns), ms_of(ss.wait_ns)};
        for (int k = 0; k < NPH; k++) v[k][r] = x[k];
        if (streamed && r == reps - 1)
            printf("[streamed] key %.2f GiB per prove, %d device buffer(s), %s\n", gib((double)ss.bytes),
                   ss.buffers, ss.staged ? "staged through pinned chunks" : "direct DMA from pinned key");
    }
    if (pin) pl_unpin(pl->pk);
    if (rc) return rc;
    printf("gpu_%s_prove_%s %.1f ms (median of %d after a warm-up, witness %s; proof NOT verified: random SRS)\n",
           pl->label, mode, bench_median(v[0], (size_t)reps), reps, staged_all ? "staged" : "uploaded in the prove");
    printf("[%s] phase medians (ms):", mode);
    for (int k = 1; k < (streamed ? NPH : NPH - 2); k++) printf(" %s %.1f", names[k], bench_median(v[k], (size_t)reps));
    printf("\n");
    fflush(stdout);
    return CUZK_OK;
}

/* --pipeline P: P proofs back to back with the key resident, first by one prover (each
 * proof uploads its witness), then by two provers on two witnesses sharing the device the
 * daemon's way: stage the witness outside the device lock (gpu_g16_stage_witness), prove
 * under it, so one upload runs beside the other prover's kernels. Per-proof wall times of
 * both in the same process. */
struct pipe_prover {
    struct gpu_ctx *ctx;
    struct plike *pl;
    struct g16_assignment w;
    int proofs, hits, rc;
    struct cuzk_error err;
};

static void *pipe_main(void *arg)
{
    struct pipe_prover *p = arg;
    for (int i = 0; i < p->proofs && !p->rc; i++) {
        struct cuzk_error se;
        int src = gpu_g16_stage_witness(p->ctx, p->pl->s, &p->w, &se);
        gpu_ctx_lock(p->ctx);
        struct g16_proof pr;
        p->rc = g16_prove(&pr, p->pl->s, p->pl->pk, &p->w, 1, NULL, NULL, gpu_g16_backend, p->ctx, NULL, &p->err);
        p->hits += !src && gpu_ctx_last_witness_staged(p->ctx);
        gpu_ctx_unlock(p->ctx);
        gpu_g16_unstage_witness(p->ctx, p->pl->s, &p->w);
        if (src && i == 0) printf("[pipeline] not staged: %s\n", se.msg);
    }
    return NULL;
}

int pl_pipeline(struct gpu_ctx *ctx, struct plike *pl, int proofs, struct cuzk_error *err)
{
    const size_t aux_b = (size_t)pl->s->n_aux * sizeof(fr_t);
    fr_t *aux2 = cuzk_malloc(aux_b);
    if (!aux2) return cuzk_fail(err, CUZK_E_NOMEM, "gpu-porep --pipeline: second witness (%zu bytes)", aux_b);
    memcpy(aux2, pl->aux, aux_b);
    struct g16_assignment w = {pl->in, pl->aux};
    struct g16_proof pr;
    int rc = CUZK_OK;
    uint64_t t0 = cuzk_now_ns();
    for (int i = 0; i < proofs && !rc; i++)
        rc = g16_prove(&pr, pl->s, pl->pk, &w, 1, NULL, NULL, gpu_g16_backend, ctx, NULL, err);
    double seq = ms_of(cuzk_now_ns() - t0) / proofs;
    if (!rc) {
        struct pipe_prover pp[2];
        pthread_t th[2];
        memset(pp, 0, sizeof pp);
        t0 = cuzk_now_ns();
        for (int k = 0; k < 2; k++) {
            pp[k].ctx = ctx;
            pp[k].pl = pl;
            pp[k].w = (struct g16_assignment){pl->in, k ? aux2 : pl->aux};
            pp[k].proofs = proofs / 2 + (k < proofs % 2);
            if (pthread_create(&th[k], NULL, pipe_main, &pp[k])) {
                pp[k].proofs = 0;
                pp[k].rc = cuzk_fail(&pp[k].err, CUZK_E_NOMEM, "gpu-porep --pipeline: thread");
            }
        }
        for (int k = 0; k < 2; k++)
            if (pp[k].proofs) pthread_join(th[k], NULL);
        double pipe = ms_of(cuzk_now_ns() - t0) / proofs;
        for (int k = 0; k < 2 && !rc; k++)
            if (pp[k].rc) rc = pp[k].rc, *err = pp[k].err;
        if (!rc)
            printf("gpu_%s_pipeline %d proofs: one prover %.1f ms/proof, two provers with witness prefetch "
                   "%.1f ms/proof (%.3fx; %d of %d witnesses staged)\n",
                   pl->label, proofs, seq, pipe, seq / pipe, pp[0].hits + pp[1].hits, proofs);
        fflush(stdout);
    }
    cuzk_free(aux2);
    return rc;
}

BENCH_CMD(gpu_porep, "gpu-porep",
          "GPU prove of a PoRep-32GiB-shaped synthetic partition, random SRS (timed, not verified): "
          "gpu-porep --lg LG [--key resident|streamed|both] [--pinned 0|1|2] [--reps R] [--force 1] [--cpu-check 1] "
          "[--pipeline P]; --pinned 1: key in cudaMallocHost memory, 2: key and witness page-locked in place; "
          "--pipeline P: P proofs by one prover, then by two provers with witness prefetch; "
          "--vary NAME=v1,v2,...: the resident proves once per value of tuning knob NAME; "
          "[--set NAME=VALUE]... [--trace 1]")
{
    unsigned lg = 27;
    int reps = 3, dev = 0, pinned = 0, force = 0, cpu_check = 0, pipeline = 0;
    const char *key = "both";
    /* --vary NAME=v1,v2,...: the resident-key proves once per value, in one process (one key
     * build for all of them) */
    struct bench_gpu_vary vy;
    char *vargs[64];
    int vn;
    if (bench_gpu_parse_tuning("gpu-porep", argc, argv, &vy, vargs, &vn)) return 2;
    argc = vn;
    argv = vargs;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--streamed")) { key = "streamed"; continue; }
        if (!v) goto usage;
        if (!strcmp(a, "--lg") || !strcmp(a, "--porep-like")) lg = (unsigned)atoi(v);
        else if (!strcmp(a, "--key")) key = v;
        else if (!strcmp(a, "--pinned")) pinned = atoi(v);
        else if (!strcmp(a, "--reps")) reps = atoi(v);
        else if (!strcmp(a, "--device")) dev = atoi(v);
        else if (!strcmp(a, "--force")) force = atoi(v);
        else if (!strcmp(a, "--cpu-check")) cpu_check = atoi(v);
        else if (!strcmp(a, "--pipeline")) pipeline = atoi(v);
        else goto usage;
        i++;
    }
    if (lg < 10 || lg > 27 || reps < 1 || reps > 100 || pipeline < 0 || pipeline > 100 ||
        (strcmp(key, "resident") && strcmp(key, "streamed") && strcmp(key, "both")))
        goto usage;
    {
        uint64_t N = (uint64_t)1 << lg, rows = N - N / 32, na = rows - PL_INPUTS;
        double key_b = (double)(N - 1 + na + PL_INPUTS + 0.997 * (double)na + 0.25 * (double)na) * sizeof(g1_aff_t) +
                       0.25 * (double)na * sizeof(g2_aff_t);
        double shape_b = 3.0 * (double)(rows + 1) * 8 + (double)(PL_INPUTS + 4 * na) * 6 + (double)na / 4;
        double wit_b = (double)(na + PL_INPUTS) * sizeof(fr_t);
        double host = key_b + shape_b + wit_b * (pipeline ? 2 : 1);
        double phys = (double)sysconf(_SC_PHYS_PAGES) * (double)sysconf(_SC_PAGESIZE);
        printf("porep-like 2^%u: %llu constraints, %u inputs, %llu aux; host memory: key %.1f GiB%s, shape %.1f GiB, "
               "witness %.1f GiB, total %.1f GiB of %.1f GiB\n",
               lg, (unsigned long long)rows, PL_INPUTS, (unsigned long long)na, gib(key_b), pinned == 1 ? " (pinned)" : pinned == 2 ? " (registered)" : "",
               gib(shape_b), gib(wit_b), gib(host), gib(phys));
        printf("GPU memory (estimate): resident key %.1f GiB + shape %.1f + witness %.1f + NTT 3 x %.1f + MSM scratch; "
               "streamed: 2-3 x %.1f GiB key buffers instead of the key\n",
               gib(key_b), gib(shape_b), gib(wit_b), gib((double)N * 32), gib((double)N * sizeof(g1_aff_t)));
        fflush(stdout);
        if (host > 0.85 * phys && !force) {
            fprintf(stderr, "gpu-porep: needs %.1f GiB of host memory, more than 85%% of %.1f GiB (--force 1 to try)\n",
                    gib(host), gib(phys));
            return 1;
        }
    }
    {
        struct cuzk_error err;
        struct g16_shape s;
        struct g16_pk pk;
        memset(&s, 0, sizeof s);
        memset(&pk, 0, sizeof pk);
        struct plike pl = {&s, &pk, NULL, NULL, NULL, NULL, PL_D1, PL_D2, "porep", false};
        uint64_t t0 = cuzk_now_ns();
        pl.p1 = make_points(1, PL_D1);
        pl.p2 = make_points(2, PL_D2);
        int rc = pl.p1 && pl.p2 ? CUZK_OK : cuzk_fail(&err, CUZK_E_NOMEM, "gpu-porep: point tables");
        if (!rc) rc = pl_build(&pl, lg, pinned == 1, &err);
        /* --pinned 2: page-lock the pageable key and witness in place (what a daemon can do
         * once per loaded key / reused witness buffer) */
        void *reg[7] = {0};
        if (!rc && pinned == 2) {
            uint64_t tr = cuzk_now_ns();
            void *v[7] = {pl.aux, pl.in};
            size_t nb[7] = {(size_t)s.n_aux * sizeof(fr_t), (size_t)s.n_inputs * sizeof(fr_t)};
            g16_pk_vectors(&pk, v + 2, nb + 2);
            double tot = 0;
            for (int k = 0; !rc && k < 7; k++) {
                rc = gpu_host_register(v[k], nb[k], &err);
                if (!rc) reg[k] = v[k], tot += (double)nb[k];
            }
            if (!rc) printf("host_register key + witness %.1f GiB: %.1f ms\n", gib(tot), ms_of(cuzk_now_ns() - tr));
        }
        if (!rc)
            printf("build %.1f s (threads %u): h %llu, l %llu, a %llu (A-dense aux %.2f%%), b %llu (B-dense aux %.2f%%)\n",
                   ms_of(cuzk_now_ns() - t0) / 1e3, pool_size(pool_default()), (unsigned long long)pk.n_h,
                   (unsigned long long)pk.n_l, (unsigned long long)pk.n_a, 100.0 * (double)s.a_aux_count / s.n_aux,
                   (unsigned long long)pk.n_b, 100.0 * (double)s.b_aux_count / s.n_aux);
        fflush(stdout);
        struct gpu_ctx *ctx = NULL;
        if (!rc && cpu_check) {
            /* the CPU prover checks the key against the shape and runs the real SpMV/h/MSMs */
            struct g16_assignment w = {pl.in, pl.aux};
            struct g16_proof pr;
            t0 = cuzk_now_ns();
            rc = g16_prove(&pr, &s, &pk, &w, 1, NULL, NULL, NULL, NULL, NULL, &err);
            if (!rc) printf("cpu prove (key/shape consistency) %.1f ms: ok\n", ms_of(cuzk_now_ns() - t0));
        } else if (!rc) {
            ctx = open_gpu(dev);
            if (!ctx) rc = CUZK_E_NO_GPU, snprintf(err.msg, sizeof err.msg, "no GPU context");
        }
        for (int v = 0; v < (vy.n ? vy.n : 1) && !rc && ctx && strcmp(key, "streamed"); v++) {
            rc = bench_gpu_vary_step("gpu-porep", &vy, v, &err);
            if (!rc) rc = pl_time(ctx, &pl, reps, false, &err);
        }
        if (!rc && ctx && strcmp(key, "streamed") && pipeline) rc = pl_pipeline(ctx, &pl, pipeline, &err);
        if (!rc && ctx && strcmp(key, "resident")) rc = pl_time(ctx, &pl, reps, true, &err);
        if (rc) fprintf(stderr, "gpu-porep: %s\n", err.msg);
        if (ctx) gpu_ctx_unload(ctx);
        gpu_ctx_free(ctx);
        for (int k = 0; k < 7; k++) gpu_host_unregister(reg[k]);
        pl_free(&pl, pinned == 1);
        return rc ? 1 : 0;
    }
usage:
    fprintf(stderr, "usage: cuzk-bench gpu-porep --lg LG (10..27) [--key resident|streamed|both] [--streamed] "
                    "[--pinned 0|1|2] [--reps R] [--device D] [--force 1] [--cpu-check 1 (no GPU: CPU prove of the shape)] "
                    "[--pipeline P (resident key: P proofs by one prover, then two with witness prefetch)] "
                    "[--vary NAME=v1,v2,... (resident proves once per value of tuning knob NAME)] "
                    BENCH_GPU_TUNING_OPTS "\n");
    return 2;
}
