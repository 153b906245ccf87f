/* field_impl.h: one body for Fp and Fr, included by fp.c and fr.c with
 *   F (type), P(name) (prefix), NL (limbs), MOD, N0, R1 (one), R2, R3 (&F holding R^3 mod m),
 *   EXP_M2 (m-2), EXP_HALF ((m-1)/2), INV_BATCHES (ceil((2 len(m) - 1) / 31)), and the
 *   assembly MUL_X86, ADD_X86, SUB_X86 (ff_x86.h).
 * Writes each operation once, as blst does for its fields. */
#include "ff_x86.h"

static const uint64_t P(n0_)[1] = {N0};   /* in memory: the asm reads it as an operand */

/* The portable C bodies; with the assembly in use they stay out of line, so that the public
 * functions below need no stack frame for them. */
#if FF_HAVE_X86_ASM
#define FF_ASM __builtin_expect(ff__use_adx, 1)
#define FF_C_ATTR __attribute__((noinline))
#else
#define FF_ASM 0
#define FF_C_ATTR inline
#undef ADD_X86
#undef SUB_X86
#undef MUL_X86
#define ADD_X86(o, a, b, m) ((void)0)
#define SUB_X86(o, a, b, m) ((void)0)
#define MUL_X86(o, a, b, m, n0) ((void)0)
#endif
static FF_C_ATTR void P(add_c)(F *out, const F *a, const F *b)
{
    ff__add(out->l, a->l, b->l, MOD, NL);
}
static FF_C_ATTR void P(sub_c)(F *out, const F *a, const F *b)
{
    ff__sub(out->l, a->l, b->l, MOD, NL);
}
static FF_C_ATTR void P(mul_c)(F *out, const F *a, const F *b)
{
    ff__mont_mul(out->l, a->l, b->l, MOD, N0, NL);
}

void P(add)(F *out, const F *a, const F *b)
{
    if (FF_ASM) ADD_X86(out->l, a->l, b->l, MOD);
    else P(add_c)(out, a, b);
}
void P(sub)(F *out, const F *a, const F *b)
{
    if (FF_ASM) SUB_X86(out->l, a->l, b->l, MOD);
    else P(sub_c)(out, a, b);
}
void P(mul)(F *out, const F *a, const F *b)
{
    if (FF_ASM) MUL_X86(out->l, a->l, b->l, MOD, P(n0_));
    else P(mul_c)(out, a, b);
}
void P(dbl)(F *out, const F *a) { P(add)(out, a, a); }
void P(neg)(F *out, const F *a)
{
    static const F zero;
    P(sub)(out, &zero, a);
}
/* A dedicated asm squaring (15 cross products once, then a separate reduction) measured no
 * faster here: the serial reduction rounds, not the multiplier, set the time. */
void P(sqr)(F *out, const F *a) { P(mul)(out, a, a); }
bool P(is_zero)(const F *a) { return ff__is_zero(a->l, NL); }
bool P(is_one)(const F *a) { return memcmp(a->l, R1, sizeof a->l) == 0; }
bool P(eq)(const F *a, const F *b) { return memcmp(a->l, b->l, sizeof a->l) == 0; }

void P(pow)(F *out, const F *a, const uint64_t *e, size_t n)
{
    /* left-to-right square and multiply with a 4-bit fixed window */
    F tab[16], acc;
    memcpy(tab[0].l, R1, sizeof tab[0].l);
    tab[1] = *a;
    for (int i = 2; i < 16; i++) P(mul)(&tab[i], &tab[i - 1], a);
    memcpy(acc.l, R1, sizeof acc.l);
    bool started = false;
    for (size_t i = n; i-- > 0;) {
        for (int sh = 60; sh >= 0; sh -= 4) {
            unsigned w = (unsigned)(e[i] >> sh) & 15;
            if (started) {
                P(sqr)(&acc, &acc);
                P(sqr)(&acc, &acc);
                P(sqr)(&acc, &acc);
                P(sqr)(&acc, &acc);
            }
            if (w) {
                if (started) P(mul)(&acc, &acc, &tab[w]);
                else acc = tab[w];
                started = true;
            }
        }
    }
    *out = acc;
}

bool P(inv)(F *out, const F *a)
{
    if (P(is_zero)(a)) {
        memset(out, 0, sizeof *out);
        return false;
    }
    /* a holds x R; the GCD gives (x R)^-1, and a Montgomery product with R^3 makes it x^-1 R */
    F t;
    if (ff__inv_bingcd(t.l, a->l, MOD, N0, INV_BATCHES, NL)) {
        P(mul)(out, &t, R3);
        return true;
    }
    P(pow)(out, a, EXP_M2, NL);   /* not reached (see ff__inv_bingcd); Fermat: a^(m-2) */
    return true;
}

int P(legendre)(const F *a)
{
    if (P(is_zero)(a)) return 0;
    F t;
    P(pow)(&t, a, EXP_HALF, NL);
    return P(is_one)(&t) ? 1 : -1;
}

void P(batch_inv)(F *a, size_t n, F *scratch)
{
    /* Montgomery's trick; zero entries are skipped and stay zero. */
    F acc;
    memcpy(acc.l, R1, sizeof acc.l);
    for (size_t i = 0; i < n; i++) {
        scratch[i] = acc;
        if (!P(is_zero)(&a[i])) P(mul)(&acc, &acc, &a[i]);
    }
    P(inv)(&acc, &acc);
    for (size_t i = n; i-- > 0;) {
        if (P(is_zero)(&a[i])) continue;
        F t;
        P(mul)(&t, &acc, &scratch[i]);
        P(mul)(&acc, &acc, &a[i]);
        a[i] = t;
    }
}

/* Both are one Montgomery product: by R^2 (x -> x R), by 1 (x R -> x). */
void P(to_mont)(F *out, const uint64_t canon[NL])
{
    F t, r2;
    memcpy(t.l, canon, sizeof t.l);
    memcpy(r2.l, R2, sizeof r2.l);
    P(mul)(out, &t, &r2);
}

void P(from_mont)(uint64_t canon[NL], const F *a)
{
    static const F one = {{1}};
    F t;
    P(mul)(&t, a, &one);
    memcpy(canon, t.l, sizeof t.l);
}

void P(from_u64)(F *out, uint64_t v)
{
    uint64_t c[NL] = {v};
    P(to_mont)(out, c);
}
