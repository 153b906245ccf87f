/* msm_tests.h: MSM and bitmap-sum tests written once, included by test_msm.c for G1 and G2
 * with PT(name), AFF, JAC, GEN, NAME(test), SIZES (MSM sizes), BIG (a size with several
 * point ranges per window) and MAX_WINDOW (largest window width tested) defined.
 * Oracle: the sum of plain double-and-add scalar multiplications (library dbl/add, which
 * test_g1.c / test_g2.c check against the affine chord-and-tangent law). */

/* out = sum k_i P_i by double-and-add on each term. */
static void NAME(naive_msm)(JAC *out, const AFF *b, const fr_t *s, size_t n)
{
    PT(jac_set_inf)(out);
    for (size_t i = 0; i < n; i++) {
        uint64_t k[4];
        fr_from_mont(k, &s[i]);
        JAC p, acc;
        PT(jac_from_aff)(&p, &b[i]);
        PT(jac_set_inf)(&acc);
        for (int li = 3; li >= 0; li--)
            for (int bit = 63; bit >= 0; bit--) {
                PT(jac_dbl)(&acc, &acc);
                if ((k[li] >> bit) & 1) PT(jac_add)(&acc, &acc, &p);
            }
        PT(jac_add)(out, out, &acc);
    }
}

/* n distinct subgroup points a G, (a + d) G, (a + 2d) G, ... (cheap: one addition each). */
static void NAME(make_bases)(AFF *out, size_t n)
{
    JAC g, acc, step;
    fr_t a, d;
    fr_rand(&a);
    fr_rand(&d);
    PT(jac_from_aff)(&g, &GEN);
    PT(jac_mul_fr)(&acc, &g, &a);
    PT(jac_mul_fr)(&step, &g, &d);
    JAC *tmp = malloc((n ? n : 1) * sizeof *tmp);
    for (size_t i = 0; i < n; i++) {
        tmp[i] = acc;
        PT(jac_add)(&acc, &acc, &step);
    }
    PT(batch_to_aff)(out, tmp, n, NULL);
    free(tmp);
}

/* Every size, every scalar kind, with and without the pool, bases with and without infinity,
 * repeated points and P, -P pairs (so buckets see P + P and P + (-P)). */
TEST(NAME(msm_vs_naive))
{
    static const size_t sizes[] = SIZES;
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
        size_t n = sizes[si];
        AFF *b = malloc(n * sizeof *b);
        fr_t *s = malloc(n * sizeof *s);
        NAME(make_bases)(b, n);
        for (int kind = 0; kind < SC__N; kind++) {
            /* the naive oracle costs ~0.3 ms a term: larger sizes get only the mixed kind
             * (random, 0, 1, r - 1 and short scalars) with the edge-case bases */
            if (n > 100 && kind != SC_MIXED) continue;
            for (int variant = n > 100; variant < 2; variant++) {
                if (variant == 1) {   /* infinity, repeats and negations among the bases */
                    for (size_t i = 0; i < n; i++) {
                        uint64_t r = cuzk_rng_u64(test_rng()) % 8;
                        size_t j = (size_t)(cuzk_rng_u64(test_rng()) % n);
                        if (r == 0) memset(&b[i], 0, sizeof b[i]);
                        else if (r == 1) b[i] = b[j];
                        else if (r == 2) PT(aff_neg)(&b[i], &b[j]);
                    }
                }
                make_scalars(s, n, kind);
                JAC want, got;
                NAME(naive_msm)(&want, b, s, n);
                struct cuzk_error e_, *err = &e_;
                ASSERT_OK(PT(msm)(&got, b, s, n, NULL, err), err);
                ASSERT_MSG(PT(jac_eq)(&got, &want), "n = %zu kind %d variant %d (no pool)", n,
                           kind, variant);
                ASSERT_OK(PT(msm)(&got, b, s, n, pool_default(), err), err);
                ASSERT_MSG(PT(jac_eq)(&got, &want), "n = %zu kind %d variant %d (pool)", n,
                           kind, variant);
                if (kind == SC_ZERO) ASSERT(PT(jac_is_inf)(&got));
            }
        }
        free(b);
        free(s);
    }
}

/* Window widths 1..12 and MAX_WINDOW on the same input (widths the size heuristic only picks
 * for large n), including scalars whose top bits are set (r - 1). */
TEST(NAME(msm_every_window))
{
    enum { N = 40 };
    AFF b[N];
    fr_t s[N];
    NAME(make_bases)(b, N);
    make_scalars(s, N, SC_MIXED);
    memset(&b[3], 0, sizeof b[3]);
    b[5] = b[4];
    JAC want, got;
    NAME(naive_msm)(&want, b, s, N);
    for (unsigned c = 1; c <= MAX_WINDOW; c++) {
        if (c > 12 && c < MAX_WINDOW) continue;   /* 2^(c-1) buckets to reduce: keep it quick */
        struct cuzk_error e_, *err = &e_;
        ASSERT_OK(PT(_msm_window)(&got, b, s, N, c, pool_default(), err), err);
        ASSERT_MSG(PT(jac_eq)(&got, &want), "window %u", c);
    }
    struct cuzk_error e_, *err = &e_;
    ASSERT_CODE(PT(_msm_window)(&got, b, s, N, 17, NULL, err), CUZK_E_INVALID_ARG, err);
}

/* The batch-affine path (widths >= 12) under stress: many batches (B = 256 at c = 12),
 * buckets queued twice in one batch (all scalars 1, or small), x-equal additions (repeated
 * points, P and -P) and infinities among the bases, all through the XYZZ overflow. */
TEST(NAME(msm_batch_affine_edges))
{
    size_t n = EDGE_N;
    AFF *b = malloc(n * sizeof *b);
    fr_t *s = malloc(n * sizeof *s);
    NAME(make_bases)(b, n);
    for (size_t i = 0; i < n; i++) {
        uint64_t r = cuzk_rng_u64(test_rng()) % 8;
        size_t j = (size_t)(cuzk_rng_u64(test_rng()) % n);
        if (r == 0) memset(&b[i], 0, sizeof b[i]);
        else if (r == 1 || r == 2) b[i] = b[j];
        else if (r == 3) PT(aff_neg)(&b[i], &b[j]);
    }
    static const int kinds[3] = {SC_ONE, SC_SMALL, SC_MIXED};
    for (int ki = 0; ki < 3; ki++) {
        make_scalars(s, n, kinds[ki]);
        JAC want, got;
        NAME(naive_msm)(&want, b, s, n);
        for (unsigned c = 12; c <= 13; c++) {
            struct cuzk_error e_, *err = &e_;
            ASSERT_OK(PT(_msm_window)(&got, b, s, n, c, pool_default(), err), err);
            ASSERT_MSG(PT(jac_eq)(&got, &want), "kind %d window %u", kinds[ki], c);
        }
    }
    free(b);
    free(s);
}

/* The split path (several point ranges per window, each with its own bucket reduction) only
 * runs when the pool has more threads than windows: use a private 16-thread pool. */
TEST(NAME(msm_split_ranges))
{
    struct cuzk_error e_, *err = &e_;
    struct pool *pool = pool_new(16, err);
    ASSERT(pool != NULL);
    size_t n = BIG;
    AFF *b = malloc(n * sizeof *b);
    fr_t *s = malloc(n * sizeof *s);
    NAME(make_bases)(b, n);
    make_scalars(s, n, SC_RANDOM);
    JAC want, got;
    ASSERT_OK(PT(_msm_window)(&want, b, s, n, 13, NULL, err), err);   /* 20 windows, 1 range */
    ASSERT_OK(PT(_msm_window)(&got, b, s, n, 13, pool, err), err);   /* 20 windows x 2 ranges */
    ASSERT(PT(jac_eq)(&got, &want));
    ASSERT_OK(PT(_msm_window)(&got, b, s, n, 9, pool, err), err);    /* 29 windows, 1 range */
    ASSERT(PT(jac_eq)(&got, &want));
    pool_free(pool);
    free(b);
    free(s);
}

TEST(NAME(msm_nomem))
{
    AFF b[4];
    fr_t s[4];
    NAME(make_bases)(b, 4);
    make_scalars(s, 4, SC_RANDOM);
    JAC got;
    struct cuzk_error e_, *err = &e_;
    cuzk_alloc_fail_after(0);
    int rc = PT(msm)(&got, b, s, 4, NULL, err);
    cuzk_alloc_fail_after(-1);
    ASSERT_CODE(rc, CUZK_E_NOMEM, err);
    ASSERT_STR_CONTAINS(err->msg, "msm");
    ASSERT_OK(PT(msm)(&got, b, 0, 0, NULL, err), err);   /* n = 0: infinity */
    ASSERT(PT(jac_is_inf)(&got));
}

TEST(NAME(sum_bitmap_vs_naive))
{
    static const size_t sizes[] = {0, 1, 63, 64, 65, 5000, BIG};
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
        size_t n = sizes[si], words = (n + 63) / 64 + 1;
        AFF *b = malloc((n ? n : 1) * sizeof *b);
        uint64_t *bm = malloc(words * sizeof *bm);
        NAME(make_bases)(b, n);
        if (n > 10) memset(&b[7], 0, sizeof b[7]);   /* an infinity among them */
        if (n > 10) b[9] = b[8];                     /* a repeat */
        if (n > 10) b[1] = b[0];                     /* ... that meets itself: P + P */
        for (int dens = 0; dens < 3; dens++) {
            for (size_t w = 0; w < words; w++) {
                uint64_t r = cuzk_rng_u64(test_rng());
                bm[w] = dens == 0 ? r : dens == 1 ? (r & cuzk_rng_u64(test_rng()) & 0x1111)
                                                  : ~(uint64_t)0;
            }
            JAC want, got;
            PT(jac_set_inf)(&want);
            for (size_t i = 0; i < n; i++)
                if ((bm[i / 64] >> (i % 64)) & 1) PT(jac_add_aff)(&want, &want, &b[i]);
            PT(sum_bitmap)(&got, b, bm, n, NULL);
            ASSERT_MSG(PT(jac_eq)(&got, &want), "n = %zu density %d (no pool)", n, dens);
            PT(sum_bitmap)(&got, b, bm, n, pool_default());
            ASSERT_MSG(PT(jac_eq)(&got, &want), "n = %zu density %d (pool)", n, dens);
        }
        free(b);
        free(bm);
    }
}
