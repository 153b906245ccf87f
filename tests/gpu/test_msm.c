/* test_msm.c: GPU G1/G2 MSM and 0/1 bitmap sums, bit-exact (same affine point) against the
 * CPU library (g1_msm, g2_msm, g1_sum_bitmap, g2_sum_bitmap) on fresh random inputs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_helpers.h"

enum scalar_kind { SC_RANDOM, SC_ZERO, SC_ONE, SC_MIXED01, SC_EDGE };

static void make_scalars(fr_t *s, size_t n, enum scalar_kind kind)
{
    for (size_t i = 0; i < n; i++) {
        switch (kind) {
        case SC_RANDOM: rand_fr(&s[i]); break;
        case SC_ZERO: s[i] = FR_ZERO; break;
        case SC_ONE: s[i] = FR_ONE; break;
        case SC_MIXED01: {
            uint64_t r = cuzk_rng_u64(test_rng()) % 100;
            if (r < 2) rand_fr(&s[i]);          /* few significant values */
            else s[i] = (r & 1) ? FR_ONE : FR_ZERO;
            break;
        }
        case SC_EDGE: {   /* -1, -2, 2, 1, small values: sign handling and top window */
            uint64_t r = cuzk_rng_u64(test_rng()) % 5;
            fr_from_u64(&s[i], r + 1);
            if (r >= 3) fr_neg(&s[i], &s[i]);
            break;
        }
        }
    }
}

/* GPU G1 MSM of (p, s) == CPU g1_msm; distinct = 0: fresh random points, else bases drawn
 * from that many points. */
static void compare_g1(struct gpu_ctx *ctx, const g1_aff_t *p, const fr_t *s, size_t n, size_t distinct,
                       enum scalar_kind kind)
{
    struct cuzk_error err_s, *err = &err_s;
    g1_jac_t ref, got;
    ASSERT_OK(g1_msm(&ref, p, s, n, pool_default(), err), err);
    ASSERT_OK(gpu_g1_msm(ctx, &got, p, s, n, err), err);
    g1_aff_t ra, ga;
    g1_jac_to_aff(&ra, &ref);
    g1_jac_to_aff(&ga, &got);
    ASSERT_MSG(g1_aff_eq(&ra, &ga), "G1 MSM n=%zu (distinct points %zu, 0 = all) kind=%d differs", n, distinct, (int)kind);
}

static void check_g1(struct gpu_ctx *ctx, size_t n, enum scalar_kind kind, bool with_inf)
{
    g1_aff_t *p = malloc((n ? n : 1) * sizeof *p);
    fr_t *s = malloc((n ? n : 1) * sizeof *s);
    rand_g1s(p, n);
    if (with_inf && n > 2) memset(&p[n / 2], 0, sizeof p[0]);   /* (0,0) = infinity */
    make_scalars(s, n, kind);
    compare_g1(ctx, p, s, n, 0, kind);
    free(p);
    free(s);
}

/* Bases drawn from `distinct` points (plus some at infinity), so that buckets hold the same
 * point twice (doubling), a point and its negation (cancellation) and infinity. */
static void check_g1_dup(struct gpu_ctx *ctx, size_t n, size_t distinct, enum scalar_kind kind)
{
    g1_aff_t *q = malloc(distinct * sizeof *q), *p = malloc(n * sizeof *p);
    fr_t *s = malloc(n * sizeof *s);
    rand_g1s(q, distinct);
    for (size_t i = 0; i < n; i++) p[i] = q[cuzk_rng_u64(test_rng()) % distinct];
    for (size_t i = 0; i < n; i += 97) memset(&p[i], 0, sizeof p[0]);
    make_scalars(s, n, kind);
    compare_g1(ctx, p, s, n, distinct, kind);
    free(q);
    free(p);
    free(s);
}

static void check_g2(struct gpu_ctx *ctx, size_t n, enum scalar_kind kind)
{
    struct cuzk_error err_s, *err = &err_s;
    g2_aff_t *p = malloc((n ? n : 1) * sizeof *p);
    fr_t *s = malloc((n ? n : 1) * sizeof *s);
    rand_g2s(p, n);
    make_scalars(s, n, kind);
    g2_jac_t ref, got;
    ASSERT_OK(g2_msm(&ref, p, s, n, pool_default(), err), err);
    ASSERT_OK(gpu_g2_msm(ctx, &got, p, s, n, err), err);
    g2_aff_t ra, ga;
    g2_jac_to_aff(&ra, &ref);
    g2_jac_to_aff(&ga, &got);
    ASSERT_MSG(g2_aff_eq(&ra, &ga), "G2 MSM n=%zu kind=%d differs", n, (int)kind);
    free(p);
    free(s);
}

TEST(g1_msm_random_sizes)
{
    struct gpu_ctx *ctx = gpu_test_ctx();
    const size_t ns[] = {1, 2, 3, 31, 33, 127, 255, 257, 1000, 4095, 4097, 65537};
    for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++) check_g1(ctx, ns[i], SC_RANDOM, i % 2);
    gpu_ctx_free(ctx);
}

TEST(g1_msm_special_scalars)
{
    struct gpu_ctx *ctx = gpu_test_ctx();
    const size_t ns[] = {1, 77, 4099, 20000};
    for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++) {
        check_g1(ctx, ns[i], SC_ZERO, false);
        check_g1(ctx, ns[i], SC_ONE, false);
        check_g1(ctx, ns[i], SC_MIXED01, true);
        check_g1(ctx, ns[i], SC_EDGE, false);
    }
    check_g1(ctx, 0, SC_RANDOM, false);
    gpu_ctx_free(ctx);
}

TEST(g2_msm_matches_cpu)
{
    struct gpu_ctx *ctx = gpu_test_ctx();
    const size_t ns[] = {1, 2, 7, 100, 1025, 4097};
    for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++) check_g2(ctx, ns[i], SC_RANDOM);
    check_g2(ctx, 300, SC_ONE);
    check_g2(ctx, 300, SC_MIXED01);
    check_g2(ctx, 300, SC_EDGE);
    check_g2(ctx, 50, SC_ZERO);
    gpu_ctx_free(ctx);
}

/* GPU 0/1 sum of (p, bm) == the CPU's (g1_sum_bitmap / g2_sum_bitmap), as affine points */
static bool sum_g1_matches_cpu(struct gpu_ctx *ctx, const g1_aff_t *p, const uint64_t *bm, size_t n)
{
    struct cuzk_error err_s, *err = &err_s;
    g1_jac_t ref, got;
    g1_sum_bitmap(&ref, p, bm, n, pool_default());
    ASSERT_OK(gpu_g1_sum_bitmap(ctx, &got, p, bm, n, err), err);
    g1_aff_t ra, ga;
    g1_jac_to_aff(&ra, &ref);
    g1_jac_to_aff(&ga, &got);
    return g1_aff_eq(&ra, &ga);
}
static bool sum_g2_matches_cpu(struct gpu_ctx *ctx, const g2_aff_t *p, const uint64_t *bm, size_t n)
{
    struct cuzk_error err_s, *err = &err_s;
    g2_jac_t ref, got;
    g2_sum_bitmap(&ref, p, bm, n, pool_default());
    ASSERT_OK(gpu_g2_sum_bitmap(ctx, &got, p, bm, n, err), err);
    g2_aff_t ra, ga;
    g2_jac_to_aff(&ra, &ref);
    g2_jac_to_aff(&ga, &got);
    return g2_aff_eq(&ra, &ga);
}

TEST(bitmap_sums_match_cpu)
{
    struct gpu_ctx *ctx = gpu_test_ctx();
    const size_t ns[] = {1, 63, 64, 65, 1000, 100003};
    for (size_t k = 0; k < sizeof ns / sizeof ns[0]; k++) {
        size_t n = ns[k], words = (n + 63) / 64;
        g1_aff_t *p = malloc(n * sizeof *p);
        uint64_t *bm = calloc(words, 8);
        rand_g1s(p, n);
        for (int dens = 0; dens < 3; dens++) {
            for (size_t i = 0; i < n; i++) {
                uint64_t r = cuzk_rng_u64(test_rng()) % 4;
                bool set = dens == 0 ? r == 0 : dens == 1 ? r < 2 : true;
                if (set) bm[i / 64] |= 1ull << (i % 64);
                else bm[i / 64] &= ~(1ull << (i % 64));
            }
            ASSERT_MSG(sum_g1_matches_cpu(ctx, p, bm, n), "G1 bitmap sum n=%zu density %d differs", n, dens);
        }
        free(p);
        free(bm);
    }
    const size_t n2s[] = {1, 333, 5000};
    for (size_t k = 0; k < sizeof n2s / sizeof n2s[0]; k++) {
        size_t n = n2s[k], words = (n + 63) / 64;
        g2_aff_t *p = malloc(n * sizeof *p);
        uint64_t *bm = calloc(words, 8);
        rand_g2s(p, n);
        for (size_t i = 0; i < n; i++)
            if (cuzk_rng_u64(test_rng()) & 1) bm[i / 64] |= 1ull << (i % 64);
        ASSERT_MSG(sum_g2_matches_cpu(ctx, p, bm, n), "G2 bitmap sum n=%zu differs", n);
        free(p);
        free(bm);
    }
    gpu_ctx_free(ctx);
}

/* Points for the 0/1-sum tests: drawn from `distinct` random points (0: all fresh) with random
 * signs, and every 97th at infinity, so the pairs of a batch-affine round hit P + Q, P + P,
 * P + (-P) and infinity on either side. */
static void sum_points_g1(g1_aff_t *p, size_t n, size_t distinct)
{
    if (!distinct) {
        rand_g1s(p, n);
    } else {
        g1_aff_t *q = malloc(distinct * sizeof *q);
        rand_g1s(q, distinct);
        for (size_t i = 0; i < n; i++) {
            p[i] = q[cuzk_rng_u64(test_rng()) % distinct];
            if (cuzk_rng_u64(test_rng()) & 1) g1_aff_neg(&p[i], &p[i]);
        }
        free(q);
    }
    for (size_t i = 0; i < n; i += 97) memset(&p[i], 0, sizeof p[0]);
}

/* bit i set with probability pct / 100 */
static void sum_bitmap_fill(uint64_t *bm, size_t n, unsigned pct)
{
    memset(bm, 0, (n + 63) / 64 * 8);
    for (size_t i = 0; i < n; i++)
        if (cuzk_rng_u64(test_rng()) % 100 < pct) bm[i / 64] |= 1ull << (i % 64);
}

/* Rounds a 0/1 sum of m ones runs with sum.aff=R, sum.aff_minpt=minpt and sum.aff_min_t=1
 * (the rule documented in msm.cu): a round of v pairs runs while
 * v >= minpt, halving v each time, and none after a round of one pair. */
static unsigned expect_sum_rounds(size_t m, unsigned R, size_t minpt)
{
    unsigned r = 0;
    for (size_t v = (m + 1) / 2; r < R && v >= minpt; v = (v + 1) / 2) {
        r++;
        if (v == 1) break;
    }
    return r;
}

static size_t bitmap_ones(const uint64_t *bm, size_t n)
{
    size_t m = 0;
    for (size_t w = 0; w < (n + 63) / 64; w++) m += (size_t)__builtin_popcountll(bm[w]);
    return m;
}

/* 0/1 sums through batch-affine rounds (forced down to single pairs: every prefix chain, the
 * block inversion with idle threads, odd counts and the XYZZ pass over what is left) against
 * the CPU sum, for G1 and G2, then with the rounds switched off. Each case asserts which path
 * ran. */
TEST(bitmap_sums_batch_affine_match_cpu)
{
    struct gpu_ctx *ctx = gpu_test_ctx();
    gpu_tune("sum.aff_min_n=0");
    gpu_tune("sum.aff_min_t=1");
    const char *rounds[] = {"1", "3", "16"}, *minpt[] = {"1", "5", "2"};
    const unsigned R[] = {1, 3, 16};
    bool any_rounds = false;
    for (int k = 0; k < 3; k++) {
        gpu_tune("sum.aff=%s", rounds[k]);
        gpu_tune("sum.aff_minpt=%s", minpt[k]);
        const size_t ns[] = {1, 2, 63, 1000, 4099, 100003};
        const size_t distinct[] = {0, 3, 50};
        for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++) {
            size_t n = ns[i];
            g1_aff_t *p = malloc(n * sizeof *p);
            uint64_t *bm = malloc((n + 63) / 64 * 8);
            for (size_t d = 0; d < 3; d++) {
                sum_points_g1(p, n, distinct[d]);
                const unsigned pcts[] = {25, 50, 100};
                for (int q = 0; q < 3; q++) {
                    sum_bitmap_fill(bm, n, pcts[q]);
                    const unsigned want = expect_sum_rounds(bitmap_ones(bm, n), R[k], (size_t)atoi(minpt[k]));
                    ASSERT_MSG(sum_g1_matches_cpu(ctx, p, bm, n), "G1 affine 0/1 sum n=%zu distinct=%zu density %u%% rounds<=%s differs",
                               n, distinct[d], pcts[q], rounds[k]);
                    ASSERT_MSG(gpu_ctx_sum_aff_rounds(ctx) == want, "G1 n=%zu: %u batch-affine rounds ran, expected %u", n,
                               gpu_ctx_sum_aff_rounds(ctx), want);
                    any_rounds |= want > 0;
                }
            }
            free(p);
            free(bm);
        }
        const size_t n2s[] = {3, 333, 5000};
        for (size_t i = 0; i < sizeof n2s / sizeof n2s[0]; i++) {
            size_t n = n2s[i];
            g2_aff_t *p = malloc(n * sizeof *p);
            uint64_t *bm = malloc((n + 63) / 64 * 8);
            rand_g2s(p, n);
            for (size_t j = 1; j < n; j += 5) p[j] = p[j - 1];              /* P + P */
            for (size_t j = 3; j < n; j += 7) g2_aff_neg(&p[j], &p[j - 1]); /* P + (-P) */
            for (size_t j = 0; j < n; j += 97) memset(&p[j], 0, sizeof p[0]);
            sum_bitmap_fill(bm, n, i == 0 ? 100 : 60);
            ASSERT_MSG(sum_g2_matches_cpu(ctx, p, bm, n), "G2 affine 0/1 sum n=%zu rounds<=%s differs", n, rounds[k]);
            const unsigned want = expect_sum_rounds(bitmap_ones(bm, n), R[k], (size_t)atoi(minpt[k]));
            ASSERT_MSG(gpu_ctx_sum_aff_rounds(ctx) == want, "G2 n=%zu: %u batch-affine rounds ran, expected %u", n,
                       gpu_ctx_sum_aff_rounds(ctx), want);
            ASSERT_MSG(i == 0 || want > 0, "G2 n=%zu: the case should run rounds", n);
            free(p);
            free(bm);
        }
    }
    ASSERT(any_rounds);
    /* short GPU memory (msm.mem_cap, fresh contexts): with ~1 MB free for scratch the
     * rounds' buffers (~10 MB here) do not fit and the XYZZ kernel runs, with ~330 MB they do;
     * both exact */
    {
        const size_t n = 100003;
        const char *caps[] = {"68000000", "400000000"};
        g1_aff_t *p = malloc(n * sizeof *p);
        uint64_t *bm = malloc((n + 63) / 64 * 8);
        sum_points_g1(p, n, 50);
        sum_bitmap_fill(bm, n, 100);
        for (int k = 0; k < 2; k++) {
            gpu_tune("msm.mem_cap=%s", caps[k]);
            struct gpu_ctx *c2 = gpu_test_ctx();
            ASSERT_MSG(sum_g1_matches_cpu(c2, p, bm, n), "G1 0/1 sum under memory cap %s differs", caps[k]);
            const unsigned want = k ? expect_sum_rounds(n, 16, 2) : 0;
            ASSERT_MSG(gpu_ctx_sum_aff_rounds(c2) == want, "cap %s: %u rounds ran, expected %u", caps[k],
                       gpu_ctx_sum_aff_rounds(c2), want);
            gpu_ctx_free(c2);
        }
        gpu_tune("msm.mem_cap=0");
        free(p);
        free(bm);
    }
    /* off: the XYZZ kernel alone */
    gpu_tune("sum.aff=0");
    {
        const size_t n = 4099;
        g1_aff_t *p = malloc(n * sizeof *p);
        uint64_t *bm = malloc((n + 63) / 64 * 8);
        sum_points_g1(p, n, 3);
        sum_bitmap_fill(bm, n, 50);
        ASSERT(sum_g1_matches_cpu(ctx, p, bm, n));
        ASSERT(gpu_ctx_sum_aff_rounds(ctx) == 0);
        free(p);
        free(bm);
    }
    gpu_tuning_reset();
    gpu_ctx_free(ctx);
}

TEST(memory_check_gives_clear_error)
{
    struct gpu_ctx *ctx = gpu_test_ctx();
    struct cuzk_error err_s, *err = &err_s;
    ASSERT_CODE(gpu_alloc_probe(ctx, (size_t)1 << 50, err), CUZK_E_GPU_NOMEM, err);
    ASSERT_STR_CONTAINS(err->msg, "not enough GPU memory: need");
    ASSERT_STR_CONTAINS(err->msg, "free");
    /* the context stays usable afterwards */
    ASSERT_OK(gpu_alloc_probe(ctx, (size_t)1 << 20, err), err);
    check_g1(ctx, 100, SC_RANDOM, false);
    gpu_ctx_free(ctx);
}

TEST(bad_device_index_is_rejected)
{
    struct gpu_ctx *ctx = gpu_test_ctx();
    gpu_ctx_free(ctx);
    struct cuzk_error err_s, *err = &err_s;
    ASSERT_CODE(gpu_ctx_new(&ctx, 1000, err), CUZK_E_INVALID_ARG, err);
    ASSERT(ctx == NULL);
}

/* Short GPU memory (msm.mem_cap caps what the MSM planner sees as free): the plan
 * shrinks (fewer windows per group, then smaller windows) and results stay exact. Without the
 * cap a 2^16 MSM sorts all its windows in one group. */
TEST(msm_plan_shrinks_to_fit_memory)
{
    struct gpu_ctx *ctx = gpu_test_ctx();
    const size_t n = 65536;
    check_g1(ctx, n, SC_RANDOM, false);
    unsigned c0, g0;
    gpu_ctx_msm_plan(ctx, &c0, &g0);
    ASSERT_MSG(c0 >= 8 && g0 == (256 + c0 - 1) / c0, "default plan c=%u g=%u", c0, g0);
    gpu_ctx_free(ctx);

    /* fresh contexts (no scratch yet): 64 MiB margin + a few MiB */
    const char *caps[] = {"75000000", "68000000"};
    unsigned last_c = c0, last_g = g0;
    for (int k = 0; k < 2; k++) {
        gpu_tune("msm.mem_cap=%s", caps[k]);
        ctx = gpu_test_ctx();
        check_g1(ctx, n, SC_RANDOM, false);
        check_g1(ctx, 1000, SC_EDGE, true);
        unsigned c, g;
        check_g1(ctx, n, SC_MIXED01, false);
        gpu_ctx_msm_plan(ctx, &c, &g);
        ASSERT_MSG(g < g0 || c < c0, "cap %s: plan c=%u g=%u not smaller than c=%u g=%u", caps[k], c, g, c0, g0);
        ASSERT_MSG(c < last_c || g <= last_g, "cap %s: plan c=%u g=%u grew", caps[k], c, g);
        last_c = c, last_g = g;
        check_g2(ctx, 4097, SC_RANDOM);
        gpu_ctx_free(ctx);
    }
    gpu_tuning_reset();
}

/* A context that already holds the scratch of a smaller MSM pays only the growth of its
 * buffers for a larger one (gpu_scratch frees a buffer before regrowing it), so the plan must
 * count the difference, not the whole size: under a cap between the two (msm.mem_cap),
 * a fresh context shrinks its plan for a 2^16 MSM, and a context that ran a 2^15 MSM first
 * keeps the full one. Exact either way. */
TEST(msm_plan_counts_regrown_scratch_net)
{
    const size_t n = 65536;
    struct gpu_ctx *ctx = gpu_test_ctx();
    check_g1(ctx, n, SC_RANDOM, false);
    unsigned c0, g0, c, g;
    gpu_ctx_msm_plan(ctx, &c0, &g0);
    const size_t full = gpu_ctx_scratch_bytes(ctx);
    gpu_ctx_free(ctx);
    ctx = gpu_test_ctx();
    check_g1(ctx, n / 2, SC_RANDOM, false);
    const size_t half = gpu_ctx_scratch_bytes(ctx);
    ASSERT_MSG(half > full / 4 && half < full, "scratch after 2^15: %zu, after 2^16: %zu", half, full);
    /* free memory seen: the 64 MiB margin + half the 2^16 MSM's scratch (which is ~50 MB at
     * 2^16: the whole of it does not fit, its growth over the 2^15 MSM's does) */
    char cap[32];
    snprintf(cap, sizeof cap, "%zu", ((size_t)64 << 20) + full / 2);
    gpu_tune("msm.mem_cap=%s", cap);
    check_g1(ctx, n, SC_RANDOM, true);
    gpu_ctx_msm_plan(ctx, &c, &g);
    ASSERT_MSG(c == c0 && g == g0, "after 2^15, cap %s: plan c=%u g=%u, want the full c=%u g=%u", cap, c, g, c0, g0);
    gpu_ctx_free(ctx);
    ctx = gpu_test_ctx();
    check_g1(ctx, n, SC_RANDOM, true);
    gpu_ctx_msm_plan(ctx, &c, &g);
    ASSERT_MSG(c < c0 || g < g0, "fresh context, cap %s: plan c=%u g=%u did not shrink", cap, c, g);
    gpu_ctx_free(ctx);
    gpu_tuning_reset();
}

/* Window groups above the base of 2^26 keys (here lowered to 2^18 by the test hook
 * msm.sort_base_lg, so that a 2^16 MSM has a base of 4 windows per sort) are taken only while
 * 8 GiB (msm.reserve's default outside the prover) stay free beside them: with ~4 GB free
 * (msm.mem_cap) the plan stays at the base; without the cap it sorts every window at once.
 * Exact either way. */
TEST(msm_large_sort_groups_leave_a_reserve)
{
    const size_t n = 65536;
    gpu_tune("msm.sort_base_lg=18");
    for (int capped = 0; capped < 2; capped++) {
        gpu_tune("msm.mem_cap=%s", capped ? "4000000000" : "0");
        struct gpu_ctx *ctx = gpu_test_ctx();   /* fresh: no scratch yet */
        check_g1_dup(ctx, n, 4096, SC_RANDOM);
        unsigned c, g;
        gpu_ctx_msm_plan(ctx, &c, &g);
        const unsigned W = (256 + c - 1) / c, base = (1u << 18) / n;
        if (capped) ASSERT_MSG(g <= base, "4 GB free: plan g=%u above the base %u", g, base);
        else ASSERT_MSG(g == W && W > base, "no cap: plan g=%u, want all %u windows (base %u)", g, W, base);
        check_g2(ctx, 20000, SC_RANDOM);
        gpu_ctx_free(ctx);
    }
    gpu_tuning_reset();
}

/* The batch-affine rounds of every G1 size class and of every G2 one. */
static void set_msm_aff(unsigned g1_rounds, unsigned g2_rounds)
{
    gpu_tune("msm.aff_g1=%u", g1_rounds);
    gpu_tune("msm.aff_g1_large=%u", g1_rounds);
    gpu_tune("msm.aff_g1_huge=%u", g1_rounds);
    gpu_tune("msm.aff_g1_huge_1w=%u", g1_rounds);
    gpu_tune("msm.aff_g2=%u", g2_rounds);
    gpu_tune("msm.aff_g2_large=%u", g2_rounds);
}

/* Batch-affine rounds (k_aff_round) forced on small MSMs: few pairs per thread (so every
 * thread's chain of prefix products and its inversion are exercised), several rounds, and
 * the cases a pair can hit: P + Q, P + P, P + (-P), infinity on either side, odd runs. Each
 * check also asserts that the rounds ran. */
TEST(msm_batch_affine_rounds_match_cpu)
{
    struct gpu_ctx *ctx = gpu_test_ctx();
    /* k = 0: five G1 rounds (the default above 2^25 points) and four G2 rounds; k = 1: two and
     * one with at least 7 pairs per thread; k = 2: three and two. One inversion per block, G2's
     * over the norms of the denominators (the only paths). */
    const unsigned g1_rounds[] = {5, 2, 3}, g2_rounds[] = {4, 1, 2}, minpt[] = {2, 7, 2};
    gpu_tune("msm.aff_min_n_g1=0");
    gpu_tune("msm.aff_min_n_g2=0");
    for (int k = 0; k < 3; k++) {
        set_msm_aff(g1_rounds[k], g2_rounds[k]);
        gpu_tune("msm.aff_minpt_g1=%u", minpt[k]);
        gpu_tune("msm.aff_minpt_g2=%u", minpt[k]);
        const size_t ns[] = {1000, 4097, 65537};
        for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++) {
            check_g1(ctx, ns[i], SC_RANDOM, i % 2 == 0);
            ASSERT_MSG(gpu_ctx_msm_aff_rounds(ctx) > 0, "n=%zu: no batch-affine round ran", ns[i]);
        }
        check_g1(ctx, 20000, SC_ONE, false);    /* one bucket of 20000 entries */
        ASSERT(gpu_ctx_msm_aff_rounds(ctx) > 0);
        check_g1(ctx, 20000, SC_MIXED01, true);
        check_g1(ctx, 20000, SC_EDGE, false);
        ASSERT(gpu_ctx_msm_aff_rounds(ctx) > 0);
        check_g1_dup(ctx, 30000, 3, SC_EDGE);   /* same point, same and opposite signs */
        ASSERT(gpu_ctx_msm_aff_rounds(ctx) > 0);
        check_g1_dup(ctx, 30000, 50, SC_RANDOM);
        check_g1_dup(ctx, 5000, 1, SC_ONE);     /* one point 5000 times: doublings all the way */
        ASSERT(gpu_ctx_msm_aff_rounds(ctx) > 0);
        check_g2(ctx, 4097, SC_RANDOM);
        ASSERT_MSG(gpu_ctx_msm_aff_rounds(ctx) > 0, "G2: no batch-affine round ran");
        check_g2(ctx, 3000, SC_EDGE);
        check_g2(ctx, 3000, SC_ONE);
    }
    /* and off again: no round runs */
    set_msm_aff(0, 0);
    check_g1(ctx, 4097, SC_RANDOM, false);
    ASSERT(gpu_ctx_msm_aff_rounds(ctx) == 0);
    check_g2(ctx, 4097, SC_RANDOM);
    ASSERT(gpu_ctx_msm_aff_rounds(ctx) == 0);
    gpu_tuning_reset();
    gpu_ctx_free(ctx);
}

/* The window sizes the plan takes from measurements at large n (15, 16, 19, 20 bits: several
 * windows per sort, Booth carries across window groups), forced on MSMs small enough to check
 * against the CPU. */
TEST(msm_measured_window_sizes_match_cpu)
{
    struct gpu_ctx *ctx = gpu_test_ctx();
    const char *cs[] = {"15", "16", "19", "20", "22"};
    for (size_t k = 0; k < sizeof cs / sizeof cs[0]; k++) {
        gpu_tune("msm.window=%s", cs[k]);
        check_g1(ctx, 5000, SC_RANDOM, true);
        check_g1(ctx, 40000, SC_EDGE, false);
        unsigned c, g;
        gpu_ctx_msm_plan(ctx, &c, &g);
        ASSERT_MSG(c == (unsigned)atoi(cs[k]), "forced c=%s, plan c=%u", cs[k], c);
        check_g2(ctx, 5000, SC_RANDOM);
    }
    gpu_tuning_reset();
    gpu_ctx_free(ctx);
}

/* G1's window reductions run on their own stream, overlapping the next window group (G2's run
 * in line): with one window per group (msm.max_windows=1) the two bucket sets alternate over
 * many groups, so a missing wait between a group's reduction and the reuse of its buckets two
 * groups later would change the sums; then the plan's own groups. */
TEST(msm_overlapped_window_reductions_match_cpu)
{
    struct gpu_ctx *ctx = gpu_test_ctx();
    for (int one = 1; one >= 0; one--) {
        gpu_tune("msm.max_windows=%d", one);   /* 0: the plan's */
        check_g1(ctx, 65537, SC_RANDOM, false);
        if (one) {
            unsigned c, g;
            gpu_ctx_msm_plan(ctx, &c, &g);
            ASSERT_MSG(g == 1, "msm.max_windows=1: plan c=%u g=%u", c, g);
        }
        check_g1(ctx, 20000, SC_EDGE, true);
        check_g1(ctx, 5000, SC_MIXED01, false);
        check_g2(ctx, 4097, SC_RANDOM);
        check_g2(ctx, 2000, SC_EDGE);
    }
    gpu_tuning_reset();
    gpu_ctx_free(ctx);
}

/* One window per sort (what MSMs of more than 2^25 points do, forced here by
 * msm.max_windows=1): the digits come from plain-scalar word planes with the Booth carry passed
 * from window to window. */
TEST(msm_digit_planes_match_cpu)
{
    struct gpu_ctx *ctx = gpu_test_ctx();
    gpu_tune("msm.max_windows=1");
    const size_t ns[] = {1, 5, 4097, 65537};
    for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++) {
        check_g1(ctx, ns[i], SC_RANDOM, i % 2);
        ASSERT_MSG(gpu_ctx_msm_digit_planes(ctx), "n=%zu: the plan took no word planes", ns[i]);
    }
    check_g1(ctx, 20000, SC_EDGE, true);
    check_g1(ctx, 20000, SC_MIXED01, false);
    check_g1(ctx, 20000, SC_ONE, false);
    check_g1(ctx, 3000, SC_ZERO, false);
    gpu_tune("msm.window=22");   /* the window of the 2^27 H MSM */
    check_g1(ctx, 9000, SC_RANDOM, false);
    ASSERT(gpu_ctx_msm_digit_planes(ctx));
    gpu_tune("msm.window=0");
    check_g2(ctx, 4097, SC_RANDOM);
    check_g2(ctx, 2000, SC_EDGE);
    gpu_tuning_reset();
    gpu_ctx_free(ctx);
}

/* An MSM whose batch-affine rounds do not fit in the GPU memory left (msm.mem_cap, fresh
 * contexts) but fit for half or a quarter of its points runs in that many parts (msm_parts),
 * each with its rounds; the sum is exact. Swept over caps from none of the rounds fitting to
 * all of them: every cap exact, parts only with rounds, at least one cap in parts, the largest
 * cap in one part. One window per sort (msm.sort_base_lg) as at the sizes where this happens. */
TEST(msm_runs_in_parts_where_only_parts_keep_their_rounds)
{
    gpu_tune("msm.aff_min_n_g1=0");
    gpu_tune("msm.aff_min_n_g2=0");
    gpu_tune("msm.aff_minpt_g1=2");
    gpu_tune("msm.aff_minpt_g2=2");
    gpu_tune("msm.sort_base_lg=10");
    set_msm_aff(3, 2);
    for (int g2 = 0; g2 < 2; g2++) {
        const size_t n = g2 ? 20011 : 65537;
        unsigned in_parts = 0, last_parts = 0, last_rounds = 0;
        for (size_t mb = 65; mb <= 110; mb++) {
            gpu_tune("msm.mem_cap=%zu", mb << 20);
            struct gpu_ctx *ctx = gpu_test_ctx();
            if (g2) check_g2(ctx, n, SC_RANDOM);
            else check_g1(ctx, n, SC_RANDOM, true);
            last_parts = gpu_ctx_msm_parts(ctx);
            last_rounds = gpu_ctx_msm_aff_rounds(ctx);
            ASSERT_MSG(last_parts >= 1 && last_parts <= 4, "G%d cap %zu MiB: %u parts", g2 + 1, mb, last_parts);
            ASSERT_MSG(last_parts == 1 || last_rounds > 0, "G%d cap %zu MiB: %u parts without rounds", g2 + 1, mb,
                       last_parts);
            if (last_parts > 1) in_parts++;
            gpu_ctx_free(ctx);
        }
        ASSERT_MSG(in_parts > 0, "G%d n=%zu: no cap ran the MSM in parts", g2 + 1, n);
        ASSERT_MSG(last_parts == 1 && last_rounds > 0, "G%d: with 110 MiB %u parts, %u rounds (want 1 part with rounds)",
                   g2 + 1, last_parts, last_rounds);
    }
    gpu_tuning_reset();
}
