/* test_setup.c: the GPU's trusted-setup and key-validation kernels (setup.cu) against the CPU
 * library: fixed-base multiplications byte for byte, a whole g16_setup_with on the GPU equal to
 * the CPU setup from the same seed, and the curve / subgroup checks on points inside and outside
 * the subgroups, including a .params read that names the bad point. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cuzk/circuits.h"
#include "cuzk/groth16.h"
#include "gpu_helpers.h"

static void special_scalars(fr_t *s, size_t n)
{
    rand_frs(s, n);
    s[0] = FR_ZERO;
    s[1] = FR_ONE;
    fr_neg(&s[2], &FR_ONE);   /* r - 1 */
    fr_from_u64(&s[3], 0xffff);
    fr_from_u64(&s[4], 0x10000);
}

TEST(fixed_base_g1_matches_cpu)
{
    struct cuzk_error err_s, *err = &err_s;
    struct gpu_ctx *ctx = gpu_test_ctx();
    size_t n = 5000;
    fr_t *s = malloc(n * sizeof *s);
    g1_aff_t *got = malloc(n * sizeof *got), *want = malloc(n * sizeof *want);
    g1_jac_t *j = malloc(n * sizeof *j);
    ASSERT(s && got && want && j);
    special_scalars(s, n);
    ASSERT_OK(gpu_g1_fixed_base(ctx, got, &G1_GENERATOR, s, n, err), err);
    g1_jac_t g;
    g1_jac_from_aff(&g, &G1_GENERATOR);
    for (size_t i = 0; i < n; i++) g1_jac_mul_fr(&j[i], &g, &s[i]);
    g1_batch_to_aff(want, j, n, pool_default());
    for (size_t i = 0; i < n; i++) ASSERT_MSG(!memcmp(&got[i], &want[i], sizeof got[i]), "point %zu differs", i);
    free(s), free(got), free(want), free(j);
    gpu_ctx_free(ctx);
}

TEST(fixed_base_g2_matches_cpu)
{
    struct cuzk_error err_s, *err = &err_s;
    struct gpu_ctx *ctx = gpu_test_ctx();
    size_t n = 3000;
    fr_t *s = malloc(n * sizeof *s);
    g2_aff_t *got = malloc(n * sizeof *got), *want = malloc(n * sizeof *want);
    g2_jac_t *j = malloc(n * sizeof *j);
    ASSERT(s && got && want && j);
    special_scalars(s, n);
    ASSERT_OK(gpu_g2_fixed_base(ctx, got, &G2_GENERATOR, s, n, err), err);
    g2_jac_t g;
    g2_jac_from_aff(&g, &G2_GENERATOR);
    for (size_t i = 0; i < n; i++) g2_jac_mul_fr(&j[i], &g, &s[i]);
    g2_batch_to_aff(want, j, n, pool_default());
    for (size_t i = 0; i < n; i++) ASSERT_MSG(!memcmp(&got[i], &want[i], sizeof got[i]), "point %zu differs", i);
    free(s), free(got), free(want), free(j);
    gpu_ctx_free(ctx);
}

static int fb_g1(void *self, g1_aff_t *out, const g1_aff_t *gen, const fr_t *sc, size_t n,
                 struct cuzk_error *err)
{
    return gpu_g1_fixed_base(self, out, gen, sc, n, err);
}
static int fb_g2(void *self, g2_aff_t *out, const g2_aff_t *gen, const fr_t *sc, size_t n,
                 struct cuzk_error *err)
{
    return gpu_g2_fixed_base(self, out, gen, sc, n, err);
}

static void assert_vec_eq(const void *a, const void *b, size_t n, size_t sz, const char *what)
{
    for (size_t i = 0; i < n; i++)
        ASSERT_MSG(!memcmp((const uint8_t *)a + i * sz, (const uint8_t *)b + i * sz, sz), "%s[%zu] differs", what, i);
}

/* The same seed through the CPU and the GPU multiplications: equal keys, point for point. */
TEST(setup_on_gpu_equals_cpu_setup)
{
    struct cuzk_error err_s, *err = &err_s;
    struct gpu_ctx *ctx = gpu_test_ctx();
    struct synth_params p = {.n_constraints = 3000, .n_public = 3};
    struct g16_shape s;
    ASSERT_OK(synth_build_shape(&s, &p, err), err);
    struct g16_pk cpu, gpu;
    cuzk_rng r1, r2;
    cuzk_rng_seed(&r1, 77);
    cuzk_rng_seed(&r2, 77);
    ASSERT_OK(g16_setup(&cpu, &s, &r1, pool_default(), err), err);
    struct g16_fixed_base fb = {.g1 = fb_g1, .g2 = fb_g2, .self = ctx};
    ASSERT_OK(g16_setup_with(&gpu, &s, &r2, pool_default(), &fb, err), err);
    ASSERT_EQ_U64(gpu.n_h, cpu.n_h);
    ASSERT_EQ_U64(gpu.n_l, cpu.n_l);
    ASSERT_EQ_U64(gpu.n_a, cpu.n_a);
    ASSERT_EQ_U64(gpu.n_b, cpu.n_b);
    assert_vec_eq(gpu.h, cpu.h, cpu.n_h, sizeof(g1_aff_t), "h");
    assert_vec_eq(gpu.l, cpu.l, cpu.n_l, sizeof(g1_aff_t), "l");
    assert_vec_eq(gpu.a, cpu.a, cpu.n_a, sizeof(g1_aff_t), "a");
    assert_vec_eq(gpu.b_g1, cpu.b_g1, cpu.n_b, sizeof(g1_aff_t), "b_g1");
    assert_vec_eq(gpu.b_g2, cpu.b_g2, cpu.n_b, sizeof(g2_aff_t), "b_g2");
    assert_vec_eq(gpu.vk.ic, cpu.vk.ic, cpu.vk.n_ic, sizeof(g1_aff_t), "ic");
    ASSERT(!memcmp(&gpu.vk.delta_g2, &cpu.vk.delta_g2, sizeof cpu.vk.delta_g2));
    g16_pk_free(&cpu);
    g16_pk_free(&gpu);
    g16_shape_free(&s);
    gpu_ctx_free(ctx);
}

/* A point of E(Fp) (x^3 + 4 a square), almost surely outside the order-r subgroup. */
static void g1_outside(g1_aff_t *p)
{
    fp_t x = FP_ONE, rhs, four;
    fp_dbl(&four, &FP_ONE);
    fp_dbl(&four, &four);
    for (;;) {
        fp_add(&x, &x, &FP_ONE);
        fp_sqr(&rhs, &x);
        fp_mul(&rhs, &rhs, &x);
        fp_add(&rhs, &rhs, &four);
        if (fp_sqrt(&p->y, &rhs)) break;
    }
    p->x = x;
    ASSERT(g1_aff_is_on_curve(p) && !g1_aff_in_subgroup(p));
}
static void g2_outside(g2_aff_t *p)
{
    fp2_t x = FP2_ONE, rhs, b;
    fp_dbl(&b.c0, &FP_ONE);
    fp_dbl(&b.c0, &b.c0);
    b.c1 = b.c0;   /* 4 (1 + u) */
    for (;;) {
        fp_add(&x.c1, &x.c1, &FP_ONE);
        fp2_sqr(&rhs, &x);
        fp2_mul(&rhs, &rhs, &x);
        fp2_add(&rhs, &rhs, &b);
        if (fp2_sqrt(&p->y, &rhs)) break;
    }
    p->x = x;
    ASSERT(g2_aff_is_on_curve(p) && !g2_aff_in_subgroup(p));
}

TEST(point_checks_match_cpu)
{
    struct cuzk_error err_s, *err = &err_s;
    struct gpu_ctx *ctx = gpu_test_ctx();
    size_t n = 20000, bad = 0;
    g1_aff_t *p1 = malloc(n * sizeof *p1);
    g2_aff_t *p2 = malloc(n * sizeof *p2);
    ASSERT(p1 && p2);
    rand_g1s(p1, n);
    rand_g2s(p2, n);
    memset(&p1[7], 0, sizeof p1[7]);   /* infinity passes */
    ASSERT_OK(gpu_g1_check_points(ctx, p1, n, true, &bad, err), err);
    ASSERT_EQ_U64(bad, n);
    ASSERT_OK(gpu_g2_check_points(ctx, p2, n, true, &bad, err), err);
    ASSERT_EQ_U64(bad, n);
    /* outside the subgroup: found with subgroup checks only; the first bad index wins */
    g1_outside(&p1[12345]);
    g1_outside(&p1[19999]);
    ASSERT_OK(gpu_g1_check_points(ctx, p1, n, false, &bad, err), err);
    ASSERT_EQ_U64(bad, n);
    ASSERT_OK(gpu_g1_check_points(ctx, p1, n, true, &bad, err), err);
    ASSERT_EQ_U64(bad, 12345);
    g2_outside(&p2[4321]);
    ASSERT_OK(gpu_g2_check_points(ctx, p2, n, true, &bad, err), err);
    ASSERT_EQ_U64(bad, 4321);
    /* off the curve: found by either check */
    fp_add(&p1[99].y, &p1[99].y, &FP_ONE);
    ASSERT_OK(gpu_g1_check_points(ctx, p1, n, false, &bad, err), err);
    ASSERT_EQ_U64(bad, 99);
    fp_add(&p2[5].x.c1, &p2[5].x.c1, &FP_ONE);
    ASSERT_OK(gpu_g2_check_points(ctx, p2, n, false, &bad, err), err);
    ASSERT_EQ_U64(bad, 5);
    free(p1), free(p2);
    gpu_ctx_free(ctx);
}

static int chk_g1(void *self, const g1_aff_t *pts, size_t n, bool subgroup, size_t *bad, struct cuzk_error *err)
{
    return gpu_g1_check_points(self, pts, n, subgroup, bad, err);
}
static int chk_g2(void *self, const g2_aff_t *pts, size_t n, bool subgroup, size_t *bad, struct cuzk_error *err)
{
    return gpu_g2_check_points(self, pts, n, subgroup, bad, err);
}

/* Points outside the subgroups where the check's additions meet their edge cases (the
 * accumulator equal to or the negation of the base, infinity on the way): the order-3 points
 * (0, +-2) of G1, and r Q for Q outside the subgroup (only the cofactor's torsion left, small
 * orders among them), beside Q itself and G-multiples. Each point alone, the GPU's verdict
 * against the CPU's (src/ec, tested there against r P = O). */
TEST(point_checks_match_cpu_on_torsion_points)
{
    struct cuzk_error err_s, *err = &err_s;
    struct gpu_ctx *ctx = gpu_test_ctx();
    enum { NQ = 12 };
    g1_aff_t p1[3 * NQ + 2];
    g2_aff_t p2[2 * NQ + 2];
    size_t n1 = 0, n2 = 0, bad;
    fp_t x = FP_ONE, rhs, four;
    fp_dbl(&four, &FP_ONE);
    fp_dbl(&four, &four);
    p1[0].x = FP_ZERO_ELEM;   /* (0, 2) and (0, -2) */
    fp_dbl(&p1[0].y, &FP_ONE);
    p1[1] = p1[0];
    fp_neg(&p1[1].y, &p1[0].y);
    n1 = 2;
    for (int q = 0; q < NQ; q++) {
        g1_aff_t a;
        do {
            fp_add(&x, &x, &FP_ONE);
            fp_sqr(&rhs, &x);
            fp_mul(&rhs, &rhs, &x);
            fp_add(&rhs, &rhs, &four);
        } while (!fp_sqrt(&a.y, &rhs));
        a.x = x;
        g1_jac_t j, t;
        g1_jac_from_aff(&j, &a);
        g1_jac_mul_u64s(&t, &j, FR_MODULUS.l, 4);   /* r Q: the torsion part */
        p1[n1++] = a;
        g1_jac_to_aff(&p1[n1++], &t);
        g1_jac_dbl(&t, &t);
        g1_jac_to_aff(&p1[n1++], &t);
    }
    rand_g2s(p2, 2);
    n2 = 2;
    for (int q = 0; q < NQ; q++) {
        g2_aff_t a;
        g2_outside(&a);
        fp_add(&a.x.c0, &a.x.c0, &FP_ONE);   /* g2_outside walks x.c1: vary c0 too */
        fp2_t r2, b;
        fp_dbl(&b.c0, &FP_ONE);
        fp_dbl(&b.c0, &b.c0);
        b.c1 = b.c0;
        for (;;) {
            fp2_sqr(&r2, &a.x);
            fp2_mul(&r2, &r2, &a.x);
            fp2_add(&r2, &r2, &b);
            if (fp2_sqrt(&a.y, &r2)) break;
            fp_add(&a.x.c0, &a.x.c0, &FP_ONE);
        }
        g2_jac_t j, t;
        g2_jac_from_aff(&j, &a);
        g2_jac_mul_u64s(&t, &j, FR_MODULUS.l, 4);
        p2[n2++] = a;
        g2_jac_to_aff(&p2[n2++], &t);
    }
    int outside1 = 0, outside2 = 0;
    for (size_t i = 0; i < n1; i++) {
        ASSERT(g1_aff_is_on_curve(&p1[i]));
        bool want = g1_aff_in_subgroup(&p1[i]);
        outside1 += !want;
        ASSERT_OK(gpu_g1_check_points(ctx, &p1[i], 1, true, &bad, err), err);
        ASSERT_MSG((bad == 1) == want, "G1 point %zu: GPU says %s, CPU %s", i, bad == 1 ? "in" : "out",
                   want ? "in" : "out");
    }
    for (size_t i = 0; i < n2; i++) {
        ASSERT(g2_aff_is_on_curve(&p2[i]));
        bool want = g2_aff_in_subgroup(&p2[i]);
        outside2 += !want;
        ASSERT_OK(gpu_g2_check_points(ctx, &p2[i], 1, true, &bad, err), err);
        ASSERT_MSG((bad == 1) == want, "G2 point %zu: GPU says %s, CPU %s", i, bad == 1 ? "in" : "out",
                   want ? "in" : "out");
    }
    ASSERT_MSG(outside1 >= 2 * NQ && outside2 >= NQ, "outside: G1 %d, G2 %d", outside1, outside2);
    gpu_ctx_free(ctx);
}

/* A FULL read with the GPU checker accepts a good key and names a point outside G1. */
TEST(params_read_with_gpu_checker_names_the_bad_point)
{
    struct cuzk_error err_s, *err = &err_s;
    struct gpu_ctx *ctx = gpu_test_ctx();
    struct synth_params p = {.n_constraints = 2000, .n_public = 2};
    struct g16_shape s;
    struct g16_pk pk, back;
    ASSERT_OK(synth_build_shape(&s, &p, err), err);
    ASSERT_OK(g16_setup(&pk, &s, NULL, pool_default(), err), err);
    char path[] = "/tmp/cuzk-gpu-params-XXXXXX";
    int fd = mkstemp(path);
    ASSERT(fd >= 0);
    close(fd);
    struct g16_point_checker c = {chk_g1, chk_g2, ctx};
    struct g16_params_read_opts o = {.mode = G16_VALIDATE_FULL, .use_cache = false, .checker = &c};
    ASSERT_OK(g16_params_write(&pk, path, err), err);
    ASSERT_OK(g16_params_read_ex(&back, path, &o, pool_default(), NULL, err), err);
    ASSERT(!memcmp(back.l, pk.l, pk.n_l * sizeof *pk.l));
    g16_pk_free(&back);
    g1_outside(&pk.l[321]);
    ASSERT_OK(g16_params_write(&pk, path, err), err);
    ASSERT_CODE(g16_params_read_ex(&back, path, &o, pool_default(), NULL, err), CUZK_E_NOT_IN_SUBGROUP, err);
    ASSERT_STR_CONTAINS(err->msg, "l[321]");
    ASSERT_STR_CONTAINS(err->msg, "subgroup");
    unlink(path);
    g16_pk_free(&pk);
    g16_shape_free(&s);
    gpu_ctx_free(ctx);
}
