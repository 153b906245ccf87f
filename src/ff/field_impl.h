/* field_impl.h: one body for Fp and Fr, included by fp.c and fr.c with
 *   F (type), P(name) (prefix), NL (limbs), MOD, N0, R1 (one), R2, EXP_M2 (m-2), EXP_HALF ((m-1)/2).
 * Writes each operation once, as blst does for its fields. */

void P(add)(F *out, const F *a, const F *b) { ff__add(out->l, a->l, b->l, MOD, NL); }
void P(sub)(F *out, const F *a, const F *b) { ff__sub(out->l, a->l, b->l, MOD, NL); }
void P(dbl)(F *out, const F *a) { ff__add(out->l, a->l, a->l, MOD, NL); }
void P(neg)(F *out, const F *a)
{
    static const uint64_t zero[NL];
    ff__sub(out->l, zero, a->l, MOD, NL);
}
void P(mul)(F *out, const F *a, const F *b) { ff__mont_mul(out->l, a->l, b->l, MOD, N0, NL); }
void P(sqr)(F *out, const F *a) { ff__mont_mul(out->l, a->l, a->l, MOD, N0, NL); }
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
    P(pow)(out, a, EXP_M2, NL);   /* Fermat: a^(m-2) */
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

void P(to_mont)(F *out, const uint64_t canon[NL])
{
    F t;
    memcpy(t.l, canon, sizeof t.l);
    ff__mont_mul(out->l, t.l, R2, MOD, N0, NL);
}

void P(from_mont)(uint64_t canon[NL], const F *a)
{
    static const uint64_t one[NL] = {1};
    ff__mont_mul(canon, a->l, one, MOD, N0, NL);
}

void P(from_u64)(F *out, uint64_t v)
{
    uint64_t c[NL] = {v};
    P(to_mont)(out, c);
}
