/* test_fp.c: Fp against GMP on fresh random and edge inputs, for both the x86-64 adx and the
 * portable multiplication; constants, the GPU byte layout and encodings. The GMP side is
 * tests/ff/gmp_oracle.h; timings are `cuzk-bench ff`. */
#include "cuzk/ff.h"

#include "gmp_oracle_fp.h"

#define NRAND 20000

TEST(fp_constants)
{
    setup();
    mpz_t t;
    mpz_init(t);
    uint64_t l[6];
    limbs_from_mpz(l, 6, P);
    ASSERT_MEM_EQ(FP_MODULUS.l, l, 48);
    limbs_from_mpz(l, 6, RM);
    ASSERT_MEM_EQ(FP_ONE.l, l, 48);            /* FP_ONE = 2^384 mod p */
    ASSERT_MEM_EQ(FP2_ONE.c0.l, l, 48);
    ASSERT(fp_is_one(&FP_ONE) && !fp_is_zero(&FP_ONE));
    ASSERT(fp_is_zero(&FP_ZERO_ELEM) && !fp_is_one(&FP_ZERO_ELEM));
    printf("  default backend: %s\n", ff_backend());
    for (int be = 0; be < 2; be++) {
        ff_force_portable(be);
        for (uint64_t v = 0; v < 300; v++) {
            fp_t a;
            fp_from_u64(&a, v * 0x9e3779b97f4a7c15ULL);
            mpz_set_ui(t, v * 0x9e3779b97f4a7c15ULL);
            check_eq(&a, t, "fp_from_u64", (int)v);
        }
    }
    ff_force_portable(false);
    mpz_clear(t);
}

TEST(fp_layout_is_gpu_u32_words)
{
    setup();
    mpz_t x, m;
    mpz_inits(x, m, NULL);
    for (int i = 0; i < 200; i++) {
        input(x, i);
        fp_t a;
        from_mpz(&a, x);
        uint64_t canon[6];
        limbs_from_mpz(canon, 6, x);
        fp_t b;
        fp_to_mont(&b, canon);
        /* the GPU stores x R mod p as 12 little-endian u32 words */
        mpz_mul(m, x, RM);
        mpz_mod(m, m, P);
        uint32_t w[12] = {0};
        mpz_export(w, NULL, -1, 4, -1, 0, m);
        ASSERT_MEM_EQ(&b, w, 48);
        ASSERT_MEM_EQ(&a, w, 48);
    }
    mpz_clears(x, m, NULL);
}

TEST(fp_add_sub_dbl_neg)
{
    setup();
    mpz_t x, y, w;
    mpz_inits(x, y, w, NULL);
    for (int be = 0; be < 2; be++) {
        ff_force_portable(be);
        for (int i = 0; i < NRAND; i++) {
            input(x, i % (NRAND / 2));
            if (i < NEDGE * NEDGE) edge_mpz(y, i % NEDGE), edge_mpz(x, i / NEDGE);
            else rand_mpz(y, P, 6);
            fp_t a, b, o;
            from_mpz(&a, x);
            from_mpz(&b, y);
            fp_add(&o, &a, &b);
            mpz_add(w, x, y), mpz_mod(w, w, P);
            check_eq(&o, w, "fp_add", i);
            fp_sub(&o, &a, &b);
            mpz_sub(w, x, y), mpz_mod(w, w, P);
            check_eq(&o, w, "fp_sub", i);
            fp_dbl(&o, &a);
            mpz_add(w, x, x), mpz_mod(w, w, P);
            check_eq(&o, w, "fp_dbl", i);
            fp_neg(&o, &a);
            mpz_neg(w, x), mpz_mod(w, w, P);
            check_eq(&o, w, "fp_neg", i);
            ASSERT(fp_eq(&a, &b) == (mpz_cmp(x, y) == 0));
            ASSERT(fp_is_zero(&a) == (mpz_sgn(x) == 0));
            ASSERT(fp_is_one(&a) == (mpz_cmp_ui(x, 1) == 0));
            mpz_sub_ui(w, P, 1), mpz_fdiv_q_2exp(w, w, 1);
            ASSERT(fp_is_odd_half(&a) == (mpz_cmp(x, w) > 0));
            /* outputs may alias inputs */
            o = a;
            fp_sub(&o, &o, &o);
            ASSERT(fp_is_zero(&o));
        }
    }
    ff_force_portable(false);
    mpz_clears(x, y, w, NULL);
}

TEST(fp_mul_sqr)
{
    setup();
    mpz_t x, y, w;
    mpz_inits(x, y, w, NULL);
    for (int be = 0; be < 2; be++) {
        ff_force_portable(be);
        printf("  %s\n", backend_name(be));
        for (int i = 0; i < NRAND; i++) {
            if (i < NEDGE * NEDGE) edge_mpz(x, i / NEDGE), edge_mpz(y, i % NEDGE);
            else rand_mpz(x, P, 6), rand_mpz(y, P, 6);
            fp_t a, b, o;
            from_mpz(&a, x);
            from_mpz(&b, y);
            fp_mul(&o, &a, &b);
            mpz_mul(w, x, y), mpz_mod(w, w, P);
            check_eq(&o, w, "fp_mul", i);
            fp_sqr(&o, &a);
            mpz_mul(w, x, x), mpz_mod(w, w, P);
            check_eq(&o, w, "fp_sqr", i);
            fp_mul(&a, &a, &b);   /* aliasing */
            mpz_mul(w, x, y), mpz_mod(w, w, P);
            check_eq(&a, w, "fp_mul aliased", i);
            fp_sqr(&b, &b);
            mpz_mul(w, y, y), mpz_mod(w, w, P);
            check_eq(&b, w, "fp_sqr aliased", i);
        }
    }
    ff_force_portable(false);
    mpz_clears(x, y, w, NULL);
}

TEST(fp_inv)
{
    setup();
    mpz_t x, w;
    mpz_inits(x, w, NULL);
    for (int be = 0; be < 2; be++) {
        ff_force_portable(be);
        fp_t o = FP_ONE;
        ASSERT(!fp_inv(&o, &FP_ZERO_ELEM));
        ASSERT(fp_is_zero(&o));
        for (int i = 0; i < NRAND; i++) {
            input(x, i);
            if (i >= NEDGE && i < NEDGE + 400) {   /* small values and powers of two */
                if (i & 1) mpz_set_ui(x, (unsigned long)(i - NEDGE + 1));
                else mpz_set_ui(x, 0), mpz_setbit(x, (mp_bitcnt_t)((i - NEDGE) % 381));
            }
            if (mpz_sgn(x) == 0) continue;
            fp_t a;
            from_mpz(&a, x);
            ASSERT(fp_inv(&o, &a));
            ASSERT(mpz_invert(w, x, P));
            check_eq(&o, w, "fp_inv", i);
            ASSERT(fp_inv(&a, &a));   /* aliasing */
            check_eq(&a, w, "fp_inv aliased", i);
        }
    }
    ff_force_portable(false);
    mpz_clears(x, w, NULL);
}

TEST(fp_pow)
{
    setup();
    mpz_t x, e, w;
    mpz_inits(x, e, w, NULL);
    cuzk_rng *g = test_rng();
    for (int be = 0; be < 2; be++) {
        ff_force_portable(be);
        for (int i = 0; i < 1000; i++) {
            input(x, i);
            uint64_t el[7];
            size_t n = (size_t)(cuzk_rng_u64(g) % 8);   /* 0..7 limbs; 0 gives a^0 = 1 */
            for (size_t k = 0; k < n; k++) el[k] = cuzk_rng_u64(g);
            if (i < 64 && n) el[0] = (uint64_t)i, n = 1;   /* tiny exponents */
            mpz_import(e, n, -1, 8, 0, 0, el);
            if (n == 0) mpz_set_ui(e, 0);
            fp_t a, o;
            from_mpz(&a, x);
            fp_pow(&o, &a, el, n);
            mpz_powm(w, x, e, P);
            check_eq(&o, w, "fp_pow", i);
        }
    }
    ff_force_portable(false);
    mpz_clears(x, e, w, NULL);
}

TEST(fp_sqrt_legendre)
{
    setup();
    mpz_t x, s, w;
    mpz_inits(x, s, w, NULL);
    for (int be = 0; be < 2; be++) {
        ff_force_portable(be);
        int squares = 0, nonsquares = 0;
        for (int i = 0; i < 1500; i++) {
            input(x, i);
            fp_t a, r;
            from_mpz(&a, x);
            int leg = mpz_legendre(x, P);
            ASSERT_EQ_INT(fp_legendre(&a), leg);
            bool ok = fp_sqrt(&r, &a);
            ASSERT_EQ_INT(ok, leg >= 0);
            if (ok) {
                to_mpz(s, &r);
                mpz_mul(w, s, s), mpz_mod(w, w, P);
                ASSERT(mpz_cmp(w, x) == 0);
                squares++;
            } else {
                nonsquares++;
            }
            /* a^2 is always a square, with root +-a */
            fp_t sq;
            fp_sqr(&sq, &a);
            ASSERT(fp_sqrt(&r, &sq));
            fp_t na;
            fp_neg(&na, &a);
            ASSERT(fp_eq(&r, &a) || fp_eq(&r, &na));
            ASSERT(fp_legendre(&sq) == (mpz_sgn(x) ? 1 : 0));
        }
        ASSERT(squares > 500 && nonsquares > 500);
    }
    ff_force_portable(false);
    mpz_clears(x, s, w, NULL);
}

TEST(fp_batch_inv)
{
    setup();
    enum { N = 300 };
    static fp_t v[N], orig[N], scratch[N];
    mpz_t x, w;
    mpz_inits(x, w, NULL);
    cuzk_rng *g = test_rng();
    for (int be = 0; be < 2; be++) {
        ff_force_portable(be);
        for (size_t n = 0; n <= N; n += (n < 5 ? 1 : 59)) {
            for (size_t i = 0; i < n; i++) {
                input(x, (int)i);
                if (cuzk_rng_u64(g) % 7 == 0) mpz_set_ui(x, 0);   /* zeros inside */
                from_mpz(&v[i], x);
                orig[i] = v[i];
            }
            fp_batch_inv(v, n, scratch);
            for (size_t i = 0; i < n; i++) {
                to_mpz(x, &orig[i]);
                if (mpz_sgn(x) == 0) {
                    ASSERT(fp_is_zero(&v[i]));
                    continue;
                }
                mpz_invert(w, x, P);
                check_eq(&v[i], w, "fp_batch_inv", (int)i);
            }
        }
    }
    ff_force_portable(false);
    mpz_clears(x, w, NULL);
}

TEST(fp_bytes_and_mont)
{
    setup();
    mpz_t x, y;
    mpz_inits(x, y, NULL);
    for (int i = 0; i < NRAND; i++) {
        input(x, i);
        uint8_t be[48] = {0}, out[48];
        size_t cnt;
        mpz_export(be + 48 - (mpz_sizeinbase(x, 256) * (mpz_sgn(x) != 0)), &cnt, 1, 1, 1, 0, x);
        fp_t a;
        ASSERT_OK(fp_from_bytes_be(&a, be), (struct cuzk_error *)NULL);
        check_eq(&a, x, "fp_from_bytes_be", i);
        fp_to_bytes_be(out, &a);
        ASSERT_MEM_EQ(out, be, 48);
        /* to_mont / from_mont against the GMP conversion */
        uint64_t canon[6], back[6];
        limbs_from_mpz(canon, 6, x);
        fp_t b;
        fp_to_mont(&b, canon);
        fp_t want;
        from_mpz(&want, x);
        ASSERT_MEM_EQ(&b, &want, 48);
        fp_from_mont(back, &b);
        ASSERT_MEM_EQ(back, canon, 48);
    }
    /* non-canonical encodings: p, p+1, 2^381 - 1, 2^381, 2^384 - 1, p + 2^200 */
    for (int k = 0; k < 6; k++) {
        switch (k) {
        case 0: mpz_set(y, P); break;
        case 1: mpz_add_ui(y, P, 1); break;
        case 2: mpz_set_ui(y, 0), mpz_setbit(y, 381), mpz_sub_ui(y, y, 1); break;
        case 3: mpz_set_ui(y, 0), mpz_setbit(y, 381); break;
        case 4: mpz_set_ui(y, 0), mpz_setbit(y, 384), mpz_sub_ui(y, y, 1); break;
        default: mpz_set_ui(y, 0), mpz_setbit(y, 200), mpz_add(y, y, P); break;
        }
        uint8_t be[48] = {0};
        mpz_export(be + 48 - mpz_sizeinbase(y, 256), NULL, 1, 1, 1, 0, y);
        fp_t a = FP_ONE;
        ASSERT_CODE(fp_from_bytes_be(&a, be), CUZK_E_BAD_ENCODING, (struct cuzk_error *)NULL);
    }
    /* p - 1 is the largest accepted */
    mpz_sub_ui(y, P, 1);
    uint8_t be[48];
    mpz_export(be, NULL, 1, 1, 1, 0, y);
    fp_t a;
    ASSERT_OK(fp_from_bytes_be(&a, be), (struct cuzk_error *)NULL);
    check_eq(&a, y, "p-1", 0);
    mpz_clears(x, y, NULL);
}
