/* test_fr.c: Fr against GMP on fresh random and edge inputs, for both the x86-64 adx and the
 * portable code; constants (2^32-th root of unity, generator 7), the GPU byte layout, LE/BE
 * encodings, wide reduction and Tonelli-Shanks square roots. The GMP side is
 * tests/ff/gmp_oracle.h; timings are `cuzk-bench ff`. */
#include "cuzk/ff.h"

#define GO_ELEM        fr_t
#define GO_LIMBS       4
#define GO_MODULUS_HEX "73eda753299d7d483339d80809a1d80553bda402fffe5bfeffffffff00000001"
#define GO_HIGH_BIT    254
#include "gmp_oracle.h"

#define NRAND 20000

TEST(fr_constants)
{
    setup();
    mpz_t t;
    mpz_init(t);
    uint64_t l[4];
    limbs_from_mpz(l, 4, P);
    ASSERT_MEM_EQ(FR_MODULUS.l, l, 32);
    limbs_from_mpz(l, 4, RM);
    ASSERT_MEM_EQ(FR_ONE.l, l, 32);            /* FR_ONE = 2^256 mod r */
    ASSERT(fr_is_one(&FR_ONE) && !fr_is_zero(&FR_ONE));
    ASSERT(fr_is_zero(&FR_ZERO) && !fr_is_one(&FR_ZERO));
    printf("  default backend: %s\n", ff_backend());
    for (int be = 0; be < 2; be++) {
        ff_force_portable(be);
        for (uint64_t v = 0; v < 300; v++) {
            fr_t a;
            fr_from_u64(&a, v * 0x9e3779b97f4a7c15ULL);
            mpz_set_ui(t, v * 0x9e3779b97f4a7c15ULL);
            check_eq(&a, t, "fr_from_u64", (int)v);
        }
    }
    ff_force_portable(false);
    mpz_clear(t);
}

TEST(fr_layout_is_gpu_u32_words)
{
    setup();
    mpz_t x, m;
    mpz_inits(x, m, NULL);
    for (int i = 0; i < 200; i++) {
        input(x, i);
        fr_t a;
        from_mpz(&a, x);
        uint64_t canon[4];
        limbs_from_mpz(canon, 4, x);
        fr_t b;
        fr_to_mont(&b, canon);
        /* the GPU stores x R mod r as 8 little-endian u32 words */
        mpz_mul(m, x, RM);
        mpz_mod(m, m, P);
        uint32_t w[8] = {0};
        mpz_export(w, NULL, -1, 4, -1, 0, m);
        ASSERT_MEM_EQ(&b, w, 32);
        ASSERT_MEM_EQ(&a, w, 32);
    }
    mpz_clears(x, m, NULL);
}

TEST(fr_add_sub_dbl_neg)
{
    setup();
    mpz_t x, y, w;
    mpz_inits(x, y, w, NULL);
    for (int be = 0; be < 2; be++) {
        ff_force_portable(be);
        for (int i = 0; i < NRAND; i++) {
            input(x, i % (NRAND / 2));
            if (i < NEDGE * NEDGE) edge_mpz(y, i % NEDGE), edge_mpz(x, i / NEDGE);
            else rand_mpz(y, P, 4);
            fr_t a, b, o;
            from_mpz(&a, x);
            from_mpz(&b, y);
            fr_add(&o, &a, &b);
            mpz_add(w, x, y), mpz_mod(w, w, P);
            check_eq(&o, w, "fr_add", i);
            fr_sub(&o, &a, &b);
            mpz_sub(w, x, y), mpz_mod(w, w, P);
            check_eq(&o, w, "fr_sub", i);
            fr_dbl(&o, &a);
            mpz_add(w, x, x), mpz_mod(w, w, P);
            check_eq(&o, w, "fr_dbl", i);
            fr_neg(&o, &a);
            mpz_neg(w, x), mpz_mod(w, w, P);
            check_eq(&o, w, "fr_neg", i);
            ASSERT(fr_eq(&a, &b) == (mpz_cmp(x, y) == 0));
            ASSERT(fr_is_zero(&a) == (mpz_sgn(x) == 0));
            ASSERT(fr_is_one(&a) == (mpz_cmp_ui(x, 1) == 0));
            /* outputs may alias inputs */
            o = a;
            fr_sub(&o, &o, &o);
            ASSERT(fr_is_zero(&o));
        }
    }
    ff_force_portable(false);
    mpz_clears(x, y, w, NULL);
}

TEST(fr_mul_sqr)
{
    setup();
    mpz_t x, y, w;
    mpz_inits(x, y, w, NULL);
    for (int be = 0; be < 2; be++) {
        ff_force_portable(be);
        printf("  %s\n", backend_name(be));
        for (int i = 0; i < NRAND; i++) {
            if (i < NEDGE * NEDGE) edge_mpz(x, i / NEDGE), edge_mpz(y, i % NEDGE);
            else rand_mpz(x, P, 4), rand_mpz(y, P, 4);
            fr_t a, b, o;
            from_mpz(&a, x);
            from_mpz(&b, y);
            fr_mul(&o, &a, &b);
            mpz_mul(w, x, y), mpz_mod(w, w, P);
            check_eq(&o, w, "fr_mul", i);
            fr_sqr(&o, &a);
            mpz_mul(w, x, x), mpz_mod(w, w, P);
            check_eq(&o, w, "fr_sqr", i);
            fr_mul(&a, &a, &b);   /* aliasing */
            mpz_mul(w, x, y), mpz_mod(w, w, P);
            check_eq(&a, w, "fr_mul aliased", i);
            fr_sqr(&b, &b);
            mpz_mul(w, y, y), mpz_mod(w, w, P);
            check_eq(&b, w, "fr_sqr aliased", i);
        }
    }
    ff_force_portable(false);
    mpz_clears(x, y, w, NULL);
}

TEST(fr_inv)
{
    setup();
    mpz_t x, w;
    mpz_inits(x, w, NULL);
    for (int be = 0; be < 2; be++) {
        ff_force_portable(be);
        fr_t o = FR_ONE;
        ASSERT(!fr_inv(&o, &FR_ZERO));
        ASSERT(fr_is_zero(&o));
        for (int i = 0; i < NRAND; i++) {
            input(x, i);
            if (i >= NEDGE && i < NEDGE + 400) {   /* small values and powers of two */
                if (i & 1) mpz_set_ui(x, (unsigned long)(i - NEDGE + 1));
                else mpz_set_ui(x, 0), mpz_setbit(x, (mp_bitcnt_t)((i - NEDGE) % 255));
            }
            if (mpz_sgn(x) == 0) continue;
            fr_t a;
            from_mpz(&a, x);
            ASSERT(fr_inv(&o, &a));
            ASSERT(mpz_invert(w, x, P));
            check_eq(&o, w, "fr_inv", i);
            ASSERT(fr_inv(&a, &a));   /* aliasing */
            check_eq(&a, w, "fr_inv aliased", i);
        }
    }
    ff_force_portable(false);
    mpz_clears(x, w, NULL);
}

TEST(fr_pow)
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
            fr_t a, o;
            from_mpz(&a, x);
            fr_pow(&o, &a, el, n);
            mpz_powm(w, x, e, P);
            check_eq(&o, w, "fr_pow", i);
        }
    }
    ff_force_portable(false);
    mpz_clears(x, e, w, NULL);
}

TEST(fr_sqrt_legendre)
{
    setup();
    mpz_t x, s, w;
    mpz_inits(x, s, w, NULL);
    for (int be = 0; be < 2; be++) {
        ff_force_portable(be);
        int squares = 0, nonsquares = 0;
        for (int i = 0; i < 1500; i++) {
            input(x, i);
            fr_t a, r;
            from_mpz(&a, x);
            int leg = mpz_legendre(x, P);
            ASSERT_EQ_INT(fr_legendre(&a), leg);
            bool ok = fr_sqrt(&r, &a);
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
            fr_t sq;
            fr_sqr(&sq, &a);
            ASSERT(fr_sqrt(&r, &sq));
            fr_t na;
            fr_neg(&na, &a);
            ASSERT(fr_eq(&r, &a) || fr_eq(&r, &na));
            ASSERT(fr_legendre(&sq) == (mpz_sgn(x) ? 1 : 0));
        }
        ASSERT(squares > 500 && nonsquares > 500);
    }
    ff_force_portable(false);
    mpz_clears(x, s, w, NULL);
}

TEST(fr_batch_inv)
{
    setup();
    enum { N = 300 };
    static fr_t v[N], orig[N], scratch[N];
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
            fr_batch_inv(v, n, scratch);
            for (size_t i = 0; i < n; i++) {
                to_mpz(x, &orig[i]);
                if (mpz_sgn(x) == 0) {
                    ASSERT(fr_is_zero(&v[i]));
                    continue;
                }
                mpz_invert(w, x, P);
                check_eq(&v[i], w, "fr_batch_inv", (int)i);
            }
        }
    }
    ff_force_portable(false);
    mpz_clears(x, w, NULL);
}

/* x as 32 little-endian bytes */
static void le_from_mpz(uint8_t out[32], const mpz_t x)
{
    memset(out, 0, 32);
    mpz_export(out, NULL, -1, 1, -1, 0, x);
}

TEST(fr_bytes_and_mont)
{
    setup();
    mpz_t x, y;
    mpz_inits(x, y, NULL);
    for (int i = 0; i < NRAND; i++) {
        input(x, i);
        uint8_t le[32], be[32], out[32];
        le_from_mpz(le, x);
        for (int k = 0; k < 32; k++) be[k] = le[31 - k];
        fr_t a, b;
        ASSERT_OK(fr_from_bytes_le(&a, le), (struct cuzk_error *)NULL);
        check_eq(&a, x, "fr_from_bytes_le", i);
        ASSERT_OK(fr_from_bytes_be(&b, be), (struct cuzk_error *)NULL);
        ASSERT(fr_eq(&a, &b));
        fr_to_bytes_le(out, &a);
        ASSERT_MEM_EQ(out, le, 32);
        fr_to_bytes_be(out, &a);
        ASSERT_MEM_EQ(out, be, 32);
        /* to_mont / from_mont against the GMP conversion */
        uint64_t canon[4], back[4];
        limbs_from_mpz(canon, 4, x);
        fr_to_mont(&b, canon);
        fr_t want;
        from_mpz(&want, x);
        ASSERT_MEM_EQ(&b, &want, 32);
        fr_from_mont(back, &b);
        ASSERT_MEM_EQ(back, canon, 32);
    }
    /* non-canonical encodings: r, r+1, 2^255 - 1, 2^255, 2^256 - 1, r + 2^200 */
    for (int k = 0; k < 6; k++) {
        switch (k) {
        case 0: mpz_set(y, P); break;
        case 1: mpz_add_ui(y, P, 1); break;
        case 2: mpz_set_ui(y, 0), mpz_setbit(y, 255), mpz_sub_ui(y, y, 1); break;
        case 3: mpz_set_ui(y, 0), mpz_setbit(y, 255); break;
        case 4: mpz_set_ui(y, 0), mpz_setbit(y, 256), mpz_sub_ui(y, y, 1); break;
        default: mpz_set_ui(y, 0), mpz_setbit(y, 200), mpz_add(y, y, P); break;
        }
        uint8_t le[32], be[32];
        le_from_mpz(le, y);
        for (int b = 0; b < 32; b++) be[b] = le[31 - b];
        fr_t a = FR_ONE;
        ASSERT_CODE(fr_from_bytes_le(&a, le), CUZK_E_BAD_ENCODING, (struct cuzk_error *)NULL);
        ASSERT_CODE(fr_from_bytes_be(&a, be), CUZK_E_BAD_ENCODING, (struct cuzk_error *)NULL);
    }
    /* r - 1 is the largest accepted */
    mpz_sub_ui(y, P, 1);
    uint8_t le[32];
    le_from_mpz(le, y);
    fr_t a;
    ASSERT_OK(fr_from_bytes_le(&a, le), (struct cuzk_error *)NULL);
    check_eq(&a, y, "r-1", 0);
    mpz_clears(x, y, NULL);
}

TEST(fr_from_wide_le)
{
    setup();
    mpz_t x, w;
    mpz_inits(x, w, NULL);
    cuzk_rng *g = test_rng();
    for (int be = 0; be < 2; be++) {
        ff_force_portable(be);
        for (int i = 0; i < NRAND; i++) {
            uint8_t in[64];
            cuzk_rng_bytes(g, in, 64);
            switch (i) {   /* all zero, all ones, r, 2^256, r * 2^256 + r - 1 */
            case 0: memset(in, 0, 64); break;
            case 1: memset(in, 0xff, 64); break;
            case 2: memset(in, 0, 64), mpz_export(in, NULL, -1, 1, -1, 0, P); break;
            case 3: memset(in, 0, 64), in[32] = 1; break;
            case 4:
                memset(in, 0, 64);
                mpz_mul_2exp(x, P, 256), mpz_add(x, x, P), mpz_sub_ui(x, x, 1);
                mpz_export(in, NULL, -1, 1, -1, 0, x);
                break;
            default:
                if (i % 4 == 0) memset(in + 32, 0xff, 32);   /* high half >= r */
                break;
            }
            mpz_import(x, 64, -1, 1, -1, 0, in);
            mpz_mod(w, x, P);
            fr_t a;
            fr_from_wide_le(&a, in);
            check_eq(&a, w, "fr_from_wide_le", i);
        }
    }
    ff_force_portable(false);
    mpz_clears(x, w, NULL);
}

TEST(fr_root_of_unity_and_generator)
{
    setup();
    mpz_t x, e;
    mpz_inits(x, e, NULL);
    /* FR_GENERATOR is 7, a non-residue */
    mpz_set_ui(x, 7);
    check_eq(&FR_GENERATOR, x, "FR_GENERATOR", 0);
    ASSERT_EQ_INT(fr_legendre(&FR_GENERATOR), -1);
    ASSERT_EQ_INT(mpz_legendre(x, P), -1);
    /* FR_ROOT_OF_UNITY_2_32 = 7^((r-1)/2^32) */
    mpz_sub_ui(e, P, 1);
    ASSERT(mpz_scan1(e, 0) == 32);   /* 2-adicity of r - 1 */
    mpz_fdiv_q_2exp(e, e, 32);
    mpz_powm(x, x, e, P);
    check_eq(&FR_ROOT_OF_UNITY_2_32, x, "FR_ROOT_OF_UNITY_2_32", 0);
    /* order exactly 2^32: w^(2^31) = -1, w^(2^32) = 1 */
    fr_t w = FR_ROOT_OF_UNITY_2_32, m1;
    fr_neg(&m1, &FR_ONE);
    for (int k = 0; k < 31; k++) {
        ASSERT(!fr_is_one(&w));
        fr_sqr(&w, &w);
    }
    ASSERT(fr_eq(&w, &m1));
    fr_sqr(&w, &w);
    ASSERT(fr_is_one(&w));
    mpz_clears(x, e, NULL);
}
