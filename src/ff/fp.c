/* fp.c: the BLS12-381 base field Fp, p = 0x1a0111ea...ffffaaab (381 bits), Montgomery R = 2^384.
 * Constants were computed with Python integers and are checked by tests/ff/test_fp.c. */
#include "cuzk/ff.h"
#include "ff_internal.h"

static const uint64_t P_MOD[6] = {0xb9feffffffffaaabULL, 0x1eabfffeb153ffffULL,
                                  0x6730d2a0f6b0f624ULL, 0x64774b84f38512bfULL,
                                  0x4b1ba7b6434bacd7ULL, 0x1a0111ea397fe69aULL};
static const uint64_t P_R1[6] = {0x760900000002fffdULL, 0xebf4000bc40c0002ULL,
                                 0x5f48985753c758baULL, 0x77ce585370525745ULL,
                                 0x5c071a97a256ec6dULL, 0x15f65ec3fa80e493ULL};
static const uint64_t P_R2[6] = {0xf4df1f341c341746ULL, 0x0a76e6a609d104f1ULL,
                                 0x8de5476c4c95b6d5ULL, 0x67eb88a9939d83c0ULL,
                                 0x9a793e85b519952dULL, 0x11988fe592cae3aaULL};
static const uint64_t P_M2[6] = {0xb9feffffffffaaa9ULL, 0x1eabfffeb153ffffULL,
                                 0x6730d2a0f6b0f624ULL, 0x64774b84f38512bfULL,
                                 0x4b1ba7b6434bacd7ULL, 0x1a0111ea397fe69aULL};
static const uint64_t P_HALF[6] = {0xdcff7fffffffd555ULL, 0x0f55ffff58a9ffffULL,
                                   0xb39869507b587b12ULL, 0xb23ba5c279c2895fULL,
                                   0x258dd3db21a5d66bULL, 0x0d0088f51cbff34dULL};
static const uint64_t P_SQRT_EXP[6] = {0xee7fbfffffffeaabULL, 0x07aaffffac54ffffULL, /* (p+1)/4 */
                                       0xd9cc34a83dac3d89ULL, 0xd91dd2e13ce144afULL,
                                       0x92c6e9ed90d2eb35ULL, 0x0680447a8e5ff9a6ULL};

const fp_t FP_ZERO_ELEM = {{0}};
const fp_t FP_ONE = {{0x760900000002fffdULL, 0xebf4000bc40c0002ULL, 0x5f48985753c758baULL,
                      0x77ce585370525745ULL, 0x5c071a97a256ec6dULL, 0x15f65ec3fa80e493ULL}};
const fp_t FP_MODULUS = {{0xb9feffffffffaaabULL, 0x1eabfffeb153ffffULL, 0x6730d2a0f6b0f624ULL,
                          0x64774b84f38512bfULL, 0x4b1ba7b6434bacd7ULL, 0x1a0111ea397fe69aULL}};

/* R^3 mod p: turns the GCD's (x R)^-1 into x^-1 R with one Montgomery product */
static const fp_t P_R3 = {{0xed48ac6bd94ca1e0ULL, 0x315f831e03a7adf8ULL, 0x9a53352a615e29ddULL,
                           0x34c04e5e921e1761ULL, 0x2512d43565724728ULL, 0x0aa6346091755d4dULL}};

#define F fp_t
#define P(name) fp_##name
#define NL 6
#define MOD P_MOD
#define N0 0x89f3fffcfffcfffdULL
#define R1 P_R1
#define R2 P_R2
#define EXP_M2 P_M2
#define EXP_HALF P_HALF
#define R3 (&P_R3)
#define INV_BATCHES 25   /* ceil((2 * 381 - 1) / 31) */
#define MUL_X86 ff__x86_mont_mul6
#define ADD_X86 ff__x86_add6
#define SUB_X86 ff__x86_sub6
#include "field_impl.h"

bool fp_sqrt(fp_t *out, const fp_t *a)
{
    /* p = 3 mod 4: the candidate is a^((p+1)/4); it is a root iff a is a square. */
    fp_t r, chk;
    fp_pow(&r, a, P_SQRT_EXP, 6);
    fp_sqr(&chk, &r);
    if (!fp_eq(&chk, a)) return false;
    *out = r;
    return true;
}

bool fp_is_odd_half(const fp_t *a)
{
    uint64_t c[6];
    fp_from_mont(c, a);
    /* c > (p-1)/2 */
    for (int i = 5; i >= 0; i--)
        if (c[i] != P_HALF[i]) return c[i] > P_HALF[i];
    return false;
}

int fp_from_bytes_be(fp_t *out, const uint8_t in[48])
{
    uint64_t c[6];
    for (int i = 0; i < 6; i++) {
        uint64_t v = 0;
        for (int j = 0; j < 8; j++) v = (v << 8) | in[(5 - i) * 8 + j];
        c[i] = v;
    }
    if (ff__geq(c, P_MOD, 6)) return CUZK_E_BAD_ENCODING;
    fp_to_mont(out, c);
    return CUZK_OK;
}

void fp_to_bytes_be(uint8_t out[48], const fp_t *a)
{
    uint64_t c[6];
    fp_from_mont(c, a);
    for (int i = 0; i < 6; i++)
        for (int j = 0; j < 8; j++) out[(5 - i) * 8 + j] = (uint8_t)(c[i] >> (56 - 8 * j));
}
