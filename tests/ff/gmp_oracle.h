/* gmp_oracle.h: the GMP side of the prime-field tests, written once and included by test_fp.c
 * (Fp, 6 limbs) and test_fr.c (Fr, 4 limbs). Conversions go through the raw Montgomery limbs
 * with GMP's own x * R^-1 mod m, never through the library under test, and every value read
 * back must be fully reduced.
 *
 * Parameters from the includer (#define before the #include):
 *   GO_ELEM          the element type (fp_t, fr_t), with a uint64_t l[GO_LIMBS] member
 *   GO_LIMBS         limbs per element; R = 2^(64 GO_LIMBS)
 *   GO_MODULUS_HEX   the modulus in hex
 *   GO_HIGH_BIT      a power of two below the modulus used as an edge value (2^GO_HIGH_BIT)
 * It defines P (the modulus, whatever the field), RM (R mod P), RINV (R^-1 mod P), and
 * setup(), limbs_from_mpz, to_mpz, from_mpz, rand_mpz, edge_mpz / NEDGE, input, check_eq,
 * backend_name (static inline: an includer such as test_fp2.c uses only some of them). */
#ifndef CUZK_TESTS_GMP_ORACLE_H
#define CUZK_TESTS_GMP_ORACLE_H

#include <gmp.h>
#include <string.h>

#include "test.h"

#if !defined(GO_ELEM) || !defined(GO_LIMBS) || !defined(GO_MODULUS_HEX) || !defined(GO_HIGH_BIT)
#error "gmp_oracle.h: define GO_ELEM, GO_LIMBS, GO_MODULUS_HEX and GO_HIGH_BIT before including it"
#endif

static mpz_t P, RM, RINV;   /* the modulus, R = 2^(64 GO_LIMBS) mod P, R^-1 mod P */

/* Every case calls it first (each case runs in its own forked process). */
static inline void setup(void)
{
    mpz_init_set_str(P, GO_MODULUS_HEX, 16);
    mpz_init(RM);
    mpz_init(RINV);
    mpz_setbit(RM, 64 * GO_LIMBS);
    mpz_mod(RM, RM, P);
    mpz_invert(RINV, RM, P);
}

static inline void limbs_from_mpz(uint64_t *out, int n, const mpz_t x)
{
    memset(out, 0, (size_t)n * 8);
    ASSERT(mpz_sizeinbase(x, 2) <= (size_t)64 * n);
    mpz_export(out, NULL, -1, 8, 0, 0, x);
}

/* Oracle conversions, computed by GMP from the raw Montgomery limbs (not by the library). */
static inline void to_mpz(mpz_t r, const GO_ELEM *a)
{
    mpz_import(r, GO_LIMBS, -1, 8, 0, 0, a->l);
    ASSERT_MSG(mpz_cmp(r, P) < 0, "result not fully reduced");
    mpz_mul(r, r, RINV);
    mpz_mod(r, r, P);
}
static inline void from_mpz(GO_ELEM *a, const mpz_t x)
{
    mpz_t t;
    mpz_init(t);
    mpz_mul(t, x, RM);
    mpz_mod(t, t, P);
    limbs_from_mpz(a->l, GO_LIMBS, t);
    mpz_clear(t);
}

/* Random values, a quarter of them built from carry-heavy limbs (0, ~0, m's limbs). */
static inline void rand_mpz(mpz_t r, const mpz_t m, int nl)
{
    cuzk_rng *g = test_rng();
    uint64_t l[8];
    mpz_t mm;
    mpz_init_set(mm, m);
    uint64_t ml[8];
    limbs_from_mpz(ml, nl, mm);
    unsigned kind = (unsigned)(cuzk_rng_u64(g) % 4);
    for (int i = 0; i < nl; i++) {
        uint64_t x = cuzk_rng_u64(g);
        if (kind == 0) {
            switch (cuzk_rng_u64(g) % 5) {
            case 0: x = 0; break;
            case 1: x = ~(uint64_t)0; break;
            case 2: x = ml[i]; break;
            case 3: x = ml[i] - 1; break;
            default: break;
            }
        }
        l[i] = x;
    }
    mpz_import(r, (size_t)nl, -1, 8, 0, 0, l);
    mpz_mod(r, r, m);
    mpz_clear(mm);
}

/* Edge values: 0, 1, 2, P-1, P-2, (P-1)/2, (P+1)/2, 2^GO_HIGH_BIT, 2^64-1, 2^64, R mod P, P-R. */
#define NEDGE 12
static inline void edge_mpz(mpz_t r, int i)
{
    switch (i) {
    case 0: mpz_set_ui(r, 0); break;
    case 1: mpz_set_ui(r, 1); break;
    case 2: mpz_set_ui(r, 2); break;
    case 3: mpz_sub_ui(r, P, 1); break;
    case 4: mpz_sub_ui(r, P, 2); break;
    case 5: mpz_sub_ui(r, P, 1); mpz_fdiv_q_2exp(r, r, 1); break;
    case 6: mpz_add_ui(r, P, 1); mpz_fdiv_q_2exp(r, r, 1); break;
    case 7: mpz_set_ui(r, 0); mpz_setbit(r, GO_HIGH_BIT); break;
    case 8: mpz_set_ui(r, 0); mpz_setbit(r, 64); mpz_sub_ui(r, r, 1); break;
    case 9: mpz_set_ui(r, 0); mpz_setbit(r, 64); break;
    case 10: mpz_set(r, RM); break;
    default: mpz_sub(r, P, RM); break;
    }
}

/* Value i of a test stream: the edge values first, then random ones. */
static inline void input(mpz_t r, int i)
{
    if (i < NEDGE) edge_mpz(r, i);
    else rand_mpz(r, P, GO_LIMBS);
}

static inline void check_eq(const GO_ELEM *got, const mpz_t want, const char *what, int i)
{
    mpz_t g;
    mpz_init(g);
    to_mpz(g, got);
    if (mpz_cmp(g, want) != 0) {
        gmp_printf("  %s #%d:\n  got  %Zx\n  want %Zx\n", what, i, g, want);
        ASSERT_MSG(0, "%s mismatch", what);
    }
    mpz_clear(g);
}

static inline const char *backend_name(int be) { return be ? "portable" : "adx-or-default"; }

#endif
