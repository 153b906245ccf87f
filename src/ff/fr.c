/* fr.c: the BLS12-381 scalar field Fr, r = 0x73eda753...ffff00000001 (255 bits), R = 2^256.
 * 2-adicity 32; generator 7 (blstrs MULTIPLICATIVE_GENERATOR). See docs/ff.md. */
#include "cuzk/ff.h"
#include "ff_internal.h"

static const uint64_t R_MOD[4] = {0xffffffff00000001ULL, 0x53bda402fffe5bfeULL,
                                  0x3339d80809a1d805ULL, 0x73eda753299d7d48ULL};
static const uint64_t R_R1[4] = {0x00000001fffffffeULL, 0x5884b7fa00034802ULL,
                                 0x998c4fefecbc4ff5ULL, 0x1824b159acc5056fULL};
static const uint64_t R_R2[4] = {0xc999e990f3f29c6dULL, 0x2b6cedcb87925c23ULL,
                                 0x05d314967254398fULL, 0x0748d9d99f59ff11ULL};
static const uint64_t R_M2[4] = {0xfffffffeffffffffULL, 0x53bda402fffe5bfeULL,
                                 0x3339d80809a1d805ULL, 0x73eda753299d7d48ULL};
static const uint64_t R_HALF[4] = {0x7fffffff80000000ULL, 0xa9ded2017fff2dffULL,
                                   0x199cec0404d0ec02ULL, 0x39f6d3a994cebea4ULL};
/* (T-1)/2 with r - 1 = 2^32 * T, T odd: Tonelli-Shanks exponent. */
static const uint64_t R_TM1H[4] = {0x7fff2dff7fffffffULL, 0x04d0ec02a9ded201ULL,
                                   0x94cebea4199cec04ULL, 0x0000000039f6d3a9ULL};

const fr_t FR_ZERO = {{0}};
const fr_t FR_ONE = {{0x00000001fffffffeULL, 0x5884b7fa00034802ULL, 0x998c4fefecbc4ff5ULL,
                      0x1824b159acc5056fULL}};
const fr_t FR_MODULUS = {{0xffffffff00000001ULL, 0x53bda402fffe5bfeULL, 0x3339d80809a1d805ULL,
                          0x73eda753299d7d48ULL}};
/* 7^((r-1)/2^32) = 0x16a2a19edfe81f20d09b681922c813b4b63683508c2280b93829971f439f0d2b */
const fr_t FR_ROOT_OF_UNITY_2_32 = {{0xb9b58d8c5f0e466aULL, 0x5b1b4c801819d7ecULL,
                                     0x0af53ae352a31e64ULL, 0x5bf3adda19e9b27bULL}};
const fr_t FR_GENERATOR = {{0x0000000efffffff1ULL, 0x17e363d300189c0fULL,
                            0xff9c57876f8457b0ULL, 0x351332208fc5a8c4ULL}};

/* R^3 mod r: turns the GCD's (x R)^-1 into x^-1 R with one Montgomery product */
static const fr_t R_R3 = {{0xc62c1807439b73afULL, 0x1b3e0d188cf06990ULL, 0x73d13c71c7b5f418ULL,
                           0x6e2a5bb9c8db33e9ULL}};

#define F fr_t
#define P(name) fr_##name
#define NL 4
#define MOD R_MOD
#define N0 0xfffffffeffffffffULL
#define R1 R_R1
#define R2 R_R2
#define EXP_M2 R_M2
#define EXP_HALF R_HALF
#define R3 (&R_R3)
#define INV_BATCHES 17   /* ceil((2 * 255 - 1) / 31) */
#define MUL_X86 ff__x86_mont_mul4
#define ADD_X86 ff__x86_add4
#define SUB_X86 ff__x86_sub4
#include "field_impl.h"

bool fr_sqrt(fr_t *out, const fr_t *a)
{
    /* Tonelli-Shanks, s = 32, z = 7^T (the 2^32-th root of unity). */
    if (fr_is_zero(a)) {
        *out = FR_ZERO;
        return true;
    }
    if (fr_legendre(a) != 1) return false;
    fr_t w, x, b, z = FR_ROOT_OF_UNITY_2_32;
    fr_pow(&w, a, R_TM1H, 4);          /* w = a^((T-1)/2) */
    fr_mul(&x, a, &w);                 /* x = a^((T+1)/2) */
    fr_mul(&b, &x, &w);                /* b = a^T */
    unsigned v = 32;
    while (!fr_is_one(&b)) {
        unsigned k = 0;
        fr_t t = b;
        while (!fr_is_one(&t)) {
            fr_sqr(&t, &t);
            k++;
        }
        fr_t wz = z;                   /* wz = z^(2^(v-k-1)) */
        for (unsigned i = 0; i + k + 1 < v; i++) fr_sqr(&wz, &wz);
        fr_sqr(&z, &wz);
        fr_mul(&b, &b, &z);
        fr_mul(&x, &x, &wz);
        v = k;
    }
    *out = x;
    return true;
}

static int fr_from_canon(fr_t *out, uint64_t c[4])
{
    if (ff__geq(c, R_MOD, 4)) return CUZK_E_BAD_ENCODING;
    fr_to_mont(out, c);
    return CUZK_OK;
}

int fr_from_bytes_le(fr_t *out, const uint8_t in[32])
{
    uint64_t c[4];
    for (int i = 0; i < 4; i++) {
        uint64_t v = 0;
        for (int j = 7; j >= 0; j--) v = (v << 8) | in[i * 8 + j];
        c[i] = v;
    }
    return fr_from_canon(out, c);
}

int fr_from_bytes_be(fr_t *out, const uint8_t in[32])
{
    uint8_t le[32];
    for (int i = 0; i < 32; i++) le[i] = in[31 - i];
    return fr_from_bytes_le(out, le);
}

void fr_to_bytes_le(uint8_t out[32], const fr_t *a)
{
    uint64_t c[4];
    fr_from_mont(c, a);
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 8; j++) out[i * 8 + j] = (uint8_t)(c[i] >> (8 * j));
}

void fr_to_bytes_be(uint8_t out[32], const fr_t *a)
{
    uint8_t le[32];
    fr_to_bytes_le(le, a);
    for (int i = 0; i < 32; i++) out[i] = le[31 - i];
}

void fr_from_wide_le(fr_t *out, const uint8_t in[64])
{
    /* x = lo + hi * 2^256 mod r, each half first reduced below r. */
    uint64_t lo[4], hi[4];
    for (int i = 0; i < 4; i++) {
        uint64_t a = 0, b = 0;
        for (int j = 7; j >= 0; j--) {
            a = (a << 8) | in[i * 8 + j];
            b = (b << 8) | in[32 + i * 8 + j];
        }
        lo[i] = a;
        hi[i] = b;
    }
    /* reduce each half below r by subtracting r while needed (at most twice: 2^256 < 3r) */
    while (ff__geq(lo, R_MOD, 4)) ff__sub(lo, lo, R_MOD, R_MOD, 4);
    while (ff__geq(hi, R_MOD, 4)) ff__sub(hi, hi, R_MOD, R_MOD, 4);
    fr_t l, h, r2m;
    fr_to_mont(&l, lo);                 /* lo*R */
    fr_to_mont(&h, hi);                 /* hi*R */
    fr_to_mont(&r2m, R_R1);             /* (2^256 mod r) in Montgomery form */
    fr_mul(&h, &h, &r2m);               /* hi*2^256*R */
    fr_add(out, &l, &h);
}
