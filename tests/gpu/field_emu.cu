/* field_emu.cu: host check of the device Montgomery product (src/gpu/field.cuh) with the PTX
 * carry primitives emulated in C (CZ_HOST_EMU), against GMP: needs nvcc but no GPU.
 * Build and run: make gpu-field-check. */
#define CZ_HOST_EMU 1
#include <gmp.h>
#include <stdio.h>

#include "../../src/gpu/field.cuh"

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint32_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)rng_state;
}

/* Operands < p of several shapes: uniform, p - small, tiny, sparse limbs, low words zero, one
 * set bit (kind 5, the inversion check only). */
template <class P> static void gen(uint32_t *x, int kind)
{
    const int N = P::N;
    for (int i = 0; i < N; i++)
        x[i] = kind == 0 || kind == 4 ? rnd() : kind == 1 ? P::p(i) : kind == 2 ? 0 : rnd() & rnd();
    if (kind == 1) {   /* p - d, d in {1, 2, random word} */
        uint32_t d = rnd() % 3 == 0 ? 1 : rnd() % 2 ? 2 : rnd() | 1;
        uint64_t br = d;
        for (int i = 0; i < N; i++) {
            uint64_t v = (uint64_t)x[i] - br;
            x[i] = (uint32_t)v;
            br = v >> 63;
        }
    }
    if (kind == 2) x[0] = rnd() % 3;
    if (kind == 4) x[0] = x[1] = 0;   /* low words zero: rows whose m is 0 with the rest not */
    if (kind == 0 || kind == 3 || kind == 4) x[N - 1] %= P::p(N - 1);
    if (kind == 5) {   /* one set bit below the modulus' top bit: the GCD's longest runs of halvings */
        for (int i = 0; i < N; i++) x[i] = 0;
        const int b = (int)(rnd() % (32 * N - 3));
        x[b >> 5] = 1u << (b & 31);
    }
}

/* p and R^-1 mod p (R = 2^(32N)) for the oracle. */
template <class P> static void modulus(mpz_t p, mpz_t rinv)
{
    uint32_t pl[16];
    for (int i = 0; i < P::N; i++) pl[i] = P::p(i);
    mpz_import(p, P::N, -1, 4, 0, 0, pl);
    mpz_set_ui(rinv, 1);
    mpz_mul_2exp(rinv, rinv, 32 * P::N);
    mpz_invert(rinv, rinv, p);
}

template <class P> static int check(const char *name, int count)
{
    const int N = P::N;
    mpz_t p, rinv, a, b, r, e;
    mpz_inits(p, rinv, a, b, r, e, NULL);
    uint32_t av[16], bv[16], rv[16];
    modulus<P>(p, rinv);
    int bad = 0;
    for (int t = 0; t < count && bad < 5; t++) {
        gen<P>(av, t % 5);
        gen<P>(bv, (t / 5) % 5);
        f_mul_rows<P>(rv, av, bv);
        mpz_import(a, N, -1, 4, 0, 0, av);
        mpz_import(b, N, -1, 4, 0, 0, bv);
        mpz_import(r, N, -1, 4, 0, 0, rv);
        mpz_mul(e, a, b);
        mpz_mul(e, e, rinv);
        mpz_mod(e, e, p);
        if (mpz_cmp(e, r)) {
            gmp_printf("%s: a %Zx b %Zx: got %Zx expected %Zx\n", name, a, b, r, e);
            bad++;
        }
    }
    mpz_clears(p, rinv, a, b, r, e, NULL);
    printf("%s: %d products, %d wrong\n", name, count, bad);
    return bad;
}

/* f_redc_rows (out of Montgomery form) against GMP: a * R^-1 mod p, canonical. */
template <class P> static int check_redc(const char *name, int count)
{
    const int N = P::N;
    mpz_t p, rinv, a, r, e;
    mpz_inits(p, rinv, a, r, e, NULL);
    uint32_t av[16], rv[16];
    modulus<P>(p, rinv);
    int bad = 0;
    for (int t = 0; t < count && bad < 5; t++) {
        gen<P>(av, t % 4);
        f_redc_rows<P>(rv, av);
        mpz_import(a, N, -1, 4, 0, 0, av);
        mpz_import(r, N, -1, 4, 0, 0, rv);
        mpz_mul(e, a, rinv);
        mpz_mod(e, e, p);
        if (mpz_cmp(e, r)) {
            gmp_printf("%s redc: a %Zx: got %Zx expected %Zx\n", name, a, r, e);
            bad++;
        }
    }
    mpz_clears(p, rinv, a, r, e, NULL);
    printf("%s: %d reductions, %d wrong\n", name, count, bad);
    return bad;
}

/* f_inv_rows against GMP: for a = x R (Montgomery form), x^-1 R = R^2 / a mod p; 0 -> 0. */
template <class P> static int check_inv(const char *name, int count)
{
    const int N = P::N;
    mpz_t p, rinv, a, r, e, r2;
    mpz_inits(p, rinv, a, r, e, r2, NULL);
    uint32_t av[16], rv[16];
    modulus<P>(p, rinv);
    mpz_set_ui(r2, 1);
    mpz_mul_2exp(r2, r2, 64 * N);
    mpz_mod(r2, r2, p);
    int bad = 0;
    for (int t = 0; t < count && bad < 5; t++) {
        gen<P>(av, t % 3 == 2 ? 5 : t % 4);
        f_inv_rows<P>(rv, av);
        mpz_import(a, N, -1, 4, 0, 0, av);
        mpz_import(r, N, -1, 4, 0, 0, rv);
        if (mpz_sgn(a) == 0) {
            mpz_set_ui(e, 0);
        } else {
            mpz_invert(e, a, p);
            mpz_mul(e, e, r2);
            mpz_mod(e, e, p);
        }
        if (mpz_cmp(e, r)) {
            gmp_printf("%s inv: a %Zx: got %Zx expected %Zx\n", name, a, r, e);
            bad++;
        }
        /* the binary GCD itself must finish for every a != 0: the Fermat fallback would hide a
         * short batch count */
        uint32_t g[16];
        if (inv_bingcd<P>(g, av) != (mpz_sgn(a) != 0)) {
            gmp_printf("%s inv: a %Zx: the binary GCD did not end at gcd 1\n", name, a);
            bad++;
        }
    }
    mpz_clears(p, rinv, a, r, e, r2, NULL);
    printf("%s: %d inversions, %d wrong\n", name, count, bad);
    return bad;
}

int main(void)
{
    int failed = (check<fp_params>("fp", 200000) != 0) + (check<fr_params>("fr", 200000) != 0) +
                 (check_redc<fp_params>("fp", 100000) != 0) + (check_redc<fr_params>("fr", 100000) != 0) +
                 (check_inv<fp_params>("fp", 20000) != 0) + (check_inv<fr_params>("fr", 20000) != 0);
    printf("%d passed, %d failed\n", 6 - failed, failed);
    return failed ? 1 : 0;
}
