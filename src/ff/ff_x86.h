/* ff_x86.h: x86-64 GNU inline assembly for 4 and 6 limbs: Montgomery multiplication with
 * mulx/adcx/adox (BMI2+ADX) and modular add/sub. Used when the CPU has ADX (ff_x86.c). */
#ifndef CUZK_FF_X86_H
#define CUZK_FF_X86_H

#include <stdint.h>

/* The asm needs up to 13 registers; gcc cannot always find them when not optimizing, so
 * unoptimized builds (and -DCUZK_PORTABLE_FF, and non-x86 targets) use the portable C only. */
#if defined(__x86_64__) && defined(__GNUC__) && defined(__OPTIMIZE__) && !defined(CUZK_PORTABLE_FF)
#define FF_HAVE_X86_ASM 1
#else
#define FF_HAVE_X86_ASM 0
#endif

/* Nonzero when the adcx/adox path is in use (set once at load time; ff_force_portable). */
extern int ff__use_adx __attribute__((visibility("hidden")));

#if FF_HAVE_X86_ASM

/* Word-serial Montgomery product (CIOS, "no final carry word" form): for each limb b_i of b,
 * one row adds a * b_i to the running value t, and one row adds q * m with q = t_0 * n0 so
 * that the lowest limb cancels and t shifts down a limb. Each row keeps two independent carry
 * chains, adcx (CF) for the low halves of the products and adox (OF) for the high halves, so
 * the multiplies and additions overlap. Registers rotate instead of moving: the limb freed by
 * the shift becomes the next row's top limb (the T.. arguments of the macros below).
 *
 * Bounds: with t < 2m at the start of a round and m < 2^(64n - 1) (p < 2^381, r < 2^255),
 * t + a*b_i + q*m < 2m + 2^65 m < 2^(64(n+1)), so n + 1 registers hold it and no carry leaves
 * the top limb; after the shift t < 2m again, and one conditional subtraction finishes. */

#define FF_X86_FIRST_ROW4(B, T0, T1, T2, T3, T4)                                          \
    "movq " B ", %%rdx\n\t"                                                                \
    "xorl %k[lo], %k[lo]\n\t"                                                              \
    "mulxq 0(%[a]), " T0 ", " T1 "\n\t"                                                      \
    "mulxq 8(%[a]), %[lo], " T2 "\n\t"                                                       \
    "adcxq %[lo], " T1 "\n\t"                                                              \
    "mulxq 16(%[a]), %[lo], " T3 "\n\t"                                                       \
    "adcxq %[lo], " T2 "\n\t"                                                              \
    "mulxq 24(%[a]), %[lo], " T4 "\n\t"                                                       \
    "adcxq %[lo], " T3 "\n\t"                                                              \
    "movl $0, %%edx\n\t"                                                                   \
    "adcxq %%rdx, " T4 "\n\t"

/* t (T0..T3, T4 free) += a * B */
#define FF_X86_ROW4(B, T0, T1, T2, T3, T4)                                                \
    "movq " B ", %%rdx\n\t"                                                                \
    "xorl %k[lo], %k[lo]\n\t"                                                              \
    "mulxq 0(%[a]), %[lo], %[hi]\n\t"                                                        \
    "adcxq %[lo], " T0 "\n\t"                                                              \
    "adoxq %[hi], " T1 "\n\t"                                                              \
    "mulxq 8(%[a]), %[lo], %[hi]\n\t"                                                        \
    "adcxq %[lo], " T1 "\n\t"                                                              \
    "adoxq %[hi], " T2 "\n\t"                                                              \
    "mulxq 16(%[a]), %[lo], %[hi]\n\t"                                                        \
    "adcxq %[lo], " T2 "\n\t"                                                              \
    "adoxq %[hi], " T3 "\n\t"                                                              \
    "mulxq 24(%[a]), %[lo], " T4 "\n\t"                                                       \
    "adcxq %[lo], " T3 "\n\t"                                                              \
    "movl $0, %%edx\n\t"                                                                   \
    "adoxq %%rdx, " T4 "\n\t"                                                              \
    "adcxq %%rdx, " T4 "\n\t"

/* t (T0..T4) += q * m with q = T0 * n0; afterwards T0 == 0 and t is T1..T4. */
#define FF_X86_RED4(T0, T1, T2, T3, T4)                                                   \
    "movq " T0 ", %%rdx\n\t"                                                               \
    "imulq %[n0], %%rdx\n\t"                                                               \
    "xorl %k[lo], %k[lo]\n\t"                                                              \
    "mulxq %[m0], %[lo], %[hi]\n\t"                                                        \
    "adcxq " T0 ", %[lo]\n\t"                                                              \
    "adoxq %[hi], " T1 "\n\t"                                                              \
    "mulxq %[m1], %[lo], %[hi]\n\t"                                                        \
    "adcxq %[lo], " T1 "\n\t"                                                              \
    "adoxq %[hi], " T2 "\n\t"                                                              \
    "mulxq %[m2], %[lo], %[hi]\n\t"                                                        \
    "adcxq %[lo], " T2 "\n\t"                                                              \
    "adoxq %[hi], " T3 "\n\t"                                                              \
    "mulxq %[m3], %[lo], %[hi]\n\t"                                                        \
    "adcxq %[lo], " T3 "\n\t"                                                              \
    "adoxq %[hi], " T4 "\n\t"                                                              \
    "movl $0, %%edx\n\t"                                                                   \
    "adcxq %%rdx, " T4 "\n\t"

#define FF_X86_FIRST_ROW6(B, T0, T1, T2, T3, T4, T5, T6)                                  \
    "movq " B ", %%rdx\n\t"                                                                \
    "xorl %k[lo], %k[lo]\n\t"                                                              \
    "mulxq 0(%[a]), " T0 ", " T1 "\n\t"                                                      \
    "mulxq 8(%[a]), %[lo], " T2 "\n\t"                                                       \
    "adcxq %[lo], " T1 "\n\t"                                                              \
    "mulxq 16(%[a]), %[lo], " T3 "\n\t"                                                       \
    "adcxq %[lo], " T2 "\n\t"                                                              \
    "mulxq 24(%[a]), %[lo], " T4 "\n\t"                                                       \
    "adcxq %[lo], " T3 "\n\t"                                                              \
    "mulxq 32(%[a]), %[lo], " T5 "\n\t"                                                       \
    "adcxq %[lo], " T4 "\n\t"                                                              \
    "mulxq 40(%[a]), %[lo], " T6 "\n\t"                                                       \
    "adcxq %[lo], " T5 "\n\t"                                                              \
    "movl $0, %%edx\n\t"                                                                   \
    "adcxq %%rdx, " T6 "\n\t"

#define FF_X86_ROW6(B, T0, T1, T2, T3, T4, T5, T6)                                        \
    "movq " B ", %%rdx\n\t"                                                                \
    "xorl %k[lo], %k[lo]\n\t"                                                              \
    "mulxq 0(%[a]), %[lo], %[hi]\n\t"                                                        \
    "adcxq %[lo], " T0 "\n\t"                                                              \
    "adoxq %[hi], " T1 "\n\t"                                                              \
    "mulxq 8(%[a]), %[lo], %[hi]\n\t"                                                        \
    "adcxq %[lo], " T1 "\n\t"                                                              \
    "adoxq %[hi], " T2 "\n\t"                                                              \
    "mulxq 16(%[a]), %[lo], %[hi]\n\t"                                                        \
    "adcxq %[lo], " T2 "\n\t"                                                              \
    "adoxq %[hi], " T3 "\n\t"                                                              \
    "mulxq 24(%[a]), %[lo], %[hi]\n\t"                                                        \
    "adcxq %[lo], " T3 "\n\t"                                                              \
    "adoxq %[hi], " T4 "\n\t"                                                              \
    "mulxq 32(%[a]), %[lo], %[hi]\n\t"                                                        \
    "adcxq %[lo], " T4 "\n\t"                                                              \
    "adoxq %[hi], " T5 "\n\t"                                                              \
    "mulxq 40(%[a]), %[lo], " T6 "\n\t"                                                       \
    "adcxq %[lo], " T5 "\n\t"                                                              \
    "movl $0, %%edx\n\t"                                                                   \
    "adoxq %%rdx, " T6 "\n\t"                                                              \
    "adcxq %%rdx, " T6 "\n\t"

#define FF_X86_RED6(T0, T1, T2, T3, T4, T5, T6)                                           \
    "movq " T0 ", %%rdx\n\t"                                                               \
    "imulq %[n0], %%rdx\n\t"                                                               \
    "xorl %k[lo], %k[lo]\n\t"                                                              \
    "mulxq %[m0], %[lo], %[hi]\n\t"                                                        \
    "adcxq " T0 ", %[lo]\n\t"                                                              \
    "adoxq %[hi], " T1 "\n\t"                                                              \
    "mulxq %[m1], %[lo], %[hi]\n\t"                                                        \
    "adcxq %[lo], " T1 "\n\t"                                                              \
    "adoxq %[hi], " T2 "\n\t"                                                              \
    "mulxq %[m2], %[lo], %[hi]\n\t"                                                        \
    "adcxq %[lo], " T2 "\n\t"                                                              \
    "adoxq %[hi], " T3 "\n\t"                                                              \
    "mulxq %[m3], %[lo], %[hi]\n\t"                                                        \
    "adcxq %[lo], " T3 "\n\t"                                                              \
    "adoxq %[hi], " T4 "\n\t"                                                              \
    "mulxq %[m4], %[lo], %[hi]\n\t"                                                        \
    "adcxq %[lo], " T4 "\n\t"                                                              \
    "adoxq %[hi], " T5 "\n\t"                                                              \
    "mulxq %[m5], %[lo], %[hi]\n\t"                                                        \
    "adcxq %[lo], " T5 "\n\t"                                                              \
    "adoxq %[hi], " T6 "\n\t"                                                              \
    "movl $0, %%edx\n\t"                                                                   \
    "adcxq %%rdx, " T6 "\n\t"

#define FF_R0 "%[r0]"
#define FF_R1 "%[r1]"
#define FF_R2 "%[r2]"
#define FF_R3 "%[r3]"
#define FF_R4 "%[r4]"
#define FF_R5 "%[r5]"
#define FF_R6 "%[r6]"

/* Final step, t < 2m in T0..T5: out = t >= m ? t - m : t. The copies of t go to the four free
 * registers and, for the top two limbs, to out itself (all reads of a and b are done). */
#define FF_X86_FINAL6(T0, T1, T2, T3, T4, T5, TF)                                         \
    "movq " T0 ", %[lo]\n\t"                                                               \
    "movq " T1 ", %[hi]\n\t"                                                               \
    "movq " T2 ", %%rdx\n\t"                                                               \
    "movq " T3 ", " TF "\n\t"                                                              \
    "movq " T4 ", 32(%[out])\n\t"                                                          \
    "movq " T5 ", 40(%[out])\n\t"                                                          \
    "subq %[m0], " T0 "\n\t"                                                               \
    "sbbq %[m1], " T1 "\n\t"                                                               \
    "sbbq %[m2], " T2 "\n\t"                                                               \
    "sbbq %[m3], " T3 "\n\t"                                                               \
    "sbbq %[m4], " T4 "\n\t"                                                               \
    "sbbq %[m5], " T5 "\n\t"                                                               \
    "cmovcq %[lo], " T0 "\n\t"                                                             \
    "cmovcq %[hi], " T1 "\n\t"                                                             \
    "cmovcq %%rdx, " T2 "\n\t"                                                             \
    "cmovcq " TF ", " T3 "\n\t"                                                            \
    "cmovcq 32(%[out]), " T4 "\n\t"                                                        \
    "cmovcq 40(%[out]), " T5 "\n\t"                                                        \
    "movq " T0 ", 0(%[out])\n\t"                                                           \
    "movq " T1 ", 8(%[out])\n\t"                                                           \
    "movq " T2 ", 16(%[out])\n\t"                                                          \
    "movq " T3 ", 24(%[out])\n\t"                                                          \
    "movq " T4 ", 32(%[out])\n\t"                                                          \
    "movq " T5 ", 40(%[out])\n\t"

#define FF_X86_FINAL4(T0, T1, T2, T3, TF)                                                 \
    "movq " T0 ", %[lo]\n\t"                                                               \
    "movq " T1 ", %[hi]\n\t"                                                               \
    "movq " T2 ", %%rdx\n\t"                                                               \
    "movq " T3 ", " TF "\n\t"                                                              \
    "subq %[m0], " T0 "\n\t"                                                               \
    "sbbq %[m1], " T1 "\n\t"                                                               \
    "sbbq %[m2], " T2 "\n\t"                                                               \
    "sbbq %[m3], " T3 "\n\t"                                                               \
    "cmovcq %[lo], " T0 "\n\t"                                                             \
    "cmovcq %[hi], " T1 "\n\t"                                                             \
    "cmovcq %%rdx, " T2 "\n\t"                                                             \
    "cmovcq " TF ", " T3 "\n\t"                                                            \
    "movq " T0 ", 0(%[out])\n\t"                                                           \
    "movq " T1 ", 8(%[out])\n\t"                                                           \
    "movq " T2 ", 16(%[out])\n\t"                                                          \
    "movq " T3 ", 24(%[out])\n\t"

/* out = a b R^-1 mod m for a, b < m (R = 2^256); out may alias a or b. n0 = -m^-1 mod 2^64. */
static inline __attribute__((always_inline)) void ff__x86_mont_mul4(uint64_t out[4],
                                                                    const uint64_t a[4],
                                                                    const uint64_t b[4],
                                                                    const uint64_t m[4],
                                                                    const uint64_t *n0)
{
    uint64_t r0, r1, r2, r3, r4, lo, hi, rdx;
    __asm__(FF_X86_FIRST_ROW4("0(%[b])", FF_R0, FF_R1, FF_R2, FF_R3, FF_R4)
            FF_X86_RED4(FF_R0, FF_R1, FF_R2, FF_R3, FF_R4)
            FF_X86_ROW4("8(%[b])", FF_R1, FF_R2, FF_R3, FF_R4, FF_R0)
            FF_X86_RED4(FF_R1, FF_R2, FF_R3, FF_R4, FF_R0)
            FF_X86_ROW4("16(%[b])", FF_R2, FF_R3, FF_R4, FF_R0, FF_R1)
            FF_X86_RED4(FF_R2, FF_R3, FF_R4, FF_R0, FF_R1)
            FF_X86_ROW4("24(%[b])", FF_R3, FF_R4, FF_R0, FF_R1, FF_R2)
            FF_X86_RED4(FF_R3, FF_R4, FF_R0, FF_R1, FF_R2)
            FF_X86_FINAL4(FF_R4, FF_R0, FF_R1, FF_R2, FF_R3)
            : [r0] "=&r"(r0), [r1] "=&r"(r1), [r2] "=&r"(r2), [r3] "=&r"(r3),
              [r4] "=&r"(r4), [lo] "=&r"(lo), [hi] "=&r"(hi), "=&d"(rdx),
              "=m"(*(uint64_t(*)[4])out)
            : [a] "r"(a), [b] "r"(b), [out] "r"(out), "m"(*(const uint64_t(*)[4])a),
              "m"(*(const uint64_t(*)[4])b), [m0] "m"(m[0]), [m1] "m"(m[1]), [m2] "m"(m[2]),
              [m3] "m"(m[3]), [n0] "m"(*n0)
            : "cc");
    (void)r0, (void)r1, (void)r2, (void)r3, (void)r4, (void)lo, (void)hi, (void)rdx;
}

/* out = a b R^-1 mod m for a, b < m (R = 2^384); out may alias a or b. */
static inline __attribute__((always_inline)) void ff__x86_mont_mul6(uint64_t out[6],
                                                                    const uint64_t a[6],
                                                                    const uint64_t b[6],
                                                                    const uint64_t m[6],
                                                                    const uint64_t *n0)
{
    uint64_t r0, r1, r2, r3, r4, r5, r6, lo, hi, rdx;
    __asm__(FF_X86_FIRST_ROW6("0(%[b])", FF_R0, FF_R1, FF_R2, FF_R3, FF_R4, FF_R5, FF_R6)
            FF_X86_RED6(FF_R0, FF_R1, FF_R2, FF_R3, FF_R4, FF_R5, FF_R6)
            FF_X86_ROW6("8(%[b])", FF_R1, FF_R2, FF_R3, FF_R4, FF_R5, FF_R6, FF_R0)
            FF_X86_RED6(FF_R1, FF_R2, FF_R3, FF_R4, FF_R5, FF_R6, FF_R0)
            FF_X86_ROW6("16(%[b])", FF_R2, FF_R3, FF_R4, FF_R5, FF_R6, FF_R0, FF_R1)
            FF_X86_RED6(FF_R2, FF_R3, FF_R4, FF_R5, FF_R6, FF_R0, FF_R1)
            FF_X86_ROW6("24(%[b])", FF_R3, FF_R4, FF_R5, FF_R6, FF_R0, FF_R1, FF_R2)
            FF_X86_RED6(FF_R3, FF_R4, FF_R5, FF_R6, FF_R0, FF_R1, FF_R2)
            FF_X86_ROW6("32(%[b])", FF_R4, FF_R5, FF_R6, FF_R0, FF_R1, FF_R2, FF_R3)
            FF_X86_RED6(FF_R4, FF_R5, FF_R6, FF_R0, FF_R1, FF_R2, FF_R3)
            FF_X86_ROW6("40(%[b])", FF_R5, FF_R6, FF_R0, FF_R1, FF_R2, FF_R3, FF_R4)
            FF_X86_RED6(FF_R5, FF_R6, FF_R0, FF_R1, FF_R2, FF_R3, FF_R4)
            FF_X86_FINAL6(FF_R6, FF_R0, FF_R1, FF_R2, FF_R3, FF_R4, FF_R5)
            : [r0] "=&r"(r0), [r1] "=&r"(r1), [r2] "=&r"(r2), [r3] "=&r"(r3),
              [r4] "=&r"(r4), [r5] "=&r"(r5), [r6] "=&r"(r6), [lo] "=&r"(lo), [hi] "=&r"(hi),
              "=&d"(rdx), "=m"(*(uint64_t(*)[6])out)
            : [a] "r"(a), [b] "r"(b), [out] "r"(out), "m"(*(const uint64_t(*)[6])a),
              "m"(*(const uint64_t(*)[6])b), [m0] "m"(m[0]), [m1] "m"(m[1]), [m2] "m"(m[2]),
              [m3] "m"(m[3]), [m4] "m"(m[4]), [m5] "m"(m[5]), [n0] "m"(*n0)
            : "cc");
    (void)r0, (void)r1, (void)r2, (void)r3, (void)r4, (void)r5, (void)r6, (void)lo, (void)hi,
        (void)rdx;
}


/* out = a + b mod m (4 limbs, m < 2^(64*4-1) so a + b has no carry out): the sum goes to out,
 * then the sum minus m replaces it unless that borrowed. */
static inline __attribute__((always_inline)) void ff__x86_add4(uint64_t *out, const uint64_t *a,
                                                                const uint64_t *b,
                                                                const uint64_t *m)
{
    uint64_t t[4];
    __asm__("movq 0(%[a]), %[t0]\n\t" "addq 0(%[b]), %[t0]\n\t"
            "movq 8(%[a]), %[t1]\n\t" "adcq 8(%[b]), %[t1]\n\t"
            "movq 16(%[a]), %[t2]\n\t" "adcq 16(%[b]), %[t2]\n\t"
            "movq 24(%[a]), %[t3]\n\t" "adcq 24(%[b]), %[t3]\n\t"
            "movq %[t0], 0(%[out])\n\t"
            "movq %[t1], 8(%[out])\n\t"
            "movq %[t2], 16(%[out])\n\t"
            "movq %[t3], 24(%[out])\n\t"
            "subq %[m0], %[t0]\n\t"
            "sbbq %[m1], %[t1]\n\t"
            "sbbq %[m2], %[t2]\n\t"
            "sbbq %[m3], %[t3]\n\t"
            "cmovcq 0(%[out]), %[t0]\n\t"
            "cmovcq 8(%[out]), %[t1]\n\t"
            "cmovcq 16(%[out]), %[t2]\n\t"
            "cmovcq 24(%[out]), %[t3]\n\t"
            "movq %[t0], 0(%[out])\n\t"
            "movq %[t1], 8(%[out])\n\t"
            "movq %[t2], 16(%[out])\n\t"
            "movq %[t3], 24(%[out])\n\t"
            : [t0] "=&r"(t[0]), [t1] "=&r"(t[1]), [t2] "=&r"(t[2]), [t3] "=&r"(t[3]), "=m"(*(uint64_t(*)[4])out)
            : [a] "r"(a), [b] "r"(b), [out] "r"(out), "m"(*(const uint64_t(*)[4])a),
              "m"(*(const uint64_t(*)[4])b), [m0] "m"(m[0]), [m1] "m"(m[1]), [m2] "m"(m[2]), [m3] "m"(m[3])
            : "cc");
}

/* out = a - b mod m: the difference goes to out, then difference plus m replaces it if the
 * subtraction borrowed (k = -borrow). */
static inline __attribute__((always_inline)) void ff__x86_sub4(uint64_t *out, const uint64_t *a,
                                                                const uint64_t *b,
                                                                const uint64_t *m)
{
    uint64_t t[4], k;
    __asm__("movq 0(%[a]), %[t0]\n\t" "subq 0(%[b]), %[t0]\n\t"
            "movq 8(%[a]), %[t1]\n\t" "sbbq 8(%[b]), %[t1]\n\t"
            "movq 16(%[a]), %[t2]\n\t" "sbbq 16(%[b]), %[t2]\n\t"
            "movq 24(%[a]), %[t3]\n\t" "sbbq 24(%[b]), %[t3]\n\t"
            "sbbq %[k], %[k]\n\t"
            "movq %[t0], 0(%[out])\n\t"
            "movq %[t1], 8(%[out])\n\t"
            "movq %[t2], 16(%[out])\n\t"
            "movq %[t3], 24(%[out])\n\t"
            "addq %[m0], %[t0]\n\t"
            "adcq %[m1], %[t1]\n\t"
            "adcq %[m2], %[t2]\n\t"
            "adcq %[m3], %[t3]\n\t"
            "testq %[k], %[k]\n\t"
            "cmovzq 0(%[out]), %[t0]\n\t"
            "cmovzq 8(%[out]), %[t1]\n\t"
            "cmovzq 16(%[out]), %[t2]\n\t"
            "cmovzq 24(%[out]), %[t3]\n\t"
            "movq %[t0], 0(%[out])\n\t"
            "movq %[t1], 8(%[out])\n\t"
            "movq %[t2], 16(%[out])\n\t"
            "movq %[t3], 24(%[out])\n\t"
            : [t0] "=&r"(t[0]), [t1] "=&r"(t[1]), [t2] "=&r"(t[2]), [t3] "=&r"(t[3]), [k] "=&r"(k), "=m"(*(uint64_t(*)[4])out)
            : [a] "r"(a), [b] "r"(b), [out] "r"(out), "m"(*(const uint64_t(*)[4])a),
              "m"(*(const uint64_t(*)[4])b), [m0] "m"(m[0]), [m1] "m"(m[1]), [m2] "m"(m[2]), [m3] "m"(m[3])
            : "cc");
}

/* out = a + b mod m (6 limbs, m < 2^(64*6-1) so a + b has no carry out): the sum goes to out,
 * then the sum minus m replaces it unless that borrowed. */
static inline __attribute__((always_inline)) void ff__x86_add6(uint64_t *out, const uint64_t *a,
                                                                const uint64_t *b,
                                                                const uint64_t *m)
{
    uint64_t t[6];
    __asm__("movq 0(%[a]), %[t0]\n\t" "addq 0(%[b]), %[t0]\n\t"
            "movq 8(%[a]), %[t1]\n\t" "adcq 8(%[b]), %[t1]\n\t"
            "movq 16(%[a]), %[t2]\n\t" "adcq 16(%[b]), %[t2]\n\t"
            "movq 24(%[a]), %[t3]\n\t" "adcq 24(%[b]), %[t3]\n\t"
            "movq 32(%[a]), %[t4]\n\t" "adcq 32(%[b]), %[t4]\n\t"
            "movq 40(%[a]), %[t5]\n\t" "adcq 40(%[b]), %[t5]\n\t"
            "movq %[t0], 0(%[out])\n\t"
            "movq %[t1], 8(%[out])\n\t"
            "movq %[t2], 16(%[out])\n\t"
            "movq %[t3], 24(%[out])\n\t"
            "movq %[t4], 32(%[out])\n\t"
            "movq %[t5], 40(%[out])\n\t"
            "subq %[m0], %[t0]\n\t"
            "sbbq %[m1], %[t1]\n\t"
            "sbbq %[m2], %[t2]\n\t"
            "sbbq %[m3], %[t3]\n\t"
            "sbbq %[m4], %[t4]\n\t"
            "sbbq %[m5], %[t5]\n\t"
            "cmovcq 0(%[out]), %[t0]\n\t"
            "cmovcq 8(%[out]), %[t1]\n\t"
            "cmovcq 16(%[out]), %[t2]\n\t"
            "cmovcq 24(%[out]), %[t3]\n\t"
            "cmovcq 32(%[out]), %[t4]\n\t"
            "cmovcq 40(%[out]), %[t5]\n\t"
            "movq %[t0], 0(%[out])\n\t"
            "movq %[t1], 8(%[out])\n\t"
            "movq %[t2], 16(%[out])\n\t"
            "movq %[t3], 24(%[out])\n\t"
            "movq %[t4], 32(%[out])\n\t"
            "movq %[t5], 40(%[out])\n\t"
            : [t0] "=&r"(t[0]), [t1] "=&r"(t[1]), [t2] "=&r"(t[2]), [t3] "=&r"(t[3]), [t4] "=&r"(t[4]), [t5] "=&r"(t[5]), "=m"(*(uint64_t(*)[6])out)
            : [a] "r"(a), [b] "r"(b), [out] "r"(out), "m"(*(const uint64_t(*)[6])a),
              "m"(*(const uint64_t(*)[6])b), [m0] "m"(m[0]), [m1] "m"(m[1]), [m2] "m"(m[2]), [m3] "m"(m[3]), [m4] "m"(m[4]), [m5] "m"(m[5])
            : "cc");
}

/* out = a - b mod m: the difference goes to out, then difference plus m replaces it if the
 * subtraction borrowed (k = -borrow). */
static inline __attribute__((always_inline)) void ff__x86_sub6(uint64_t *out, const uint64_t *a,
                                                                const uint64_t *b,
                                                                const uint64_t *m)
{
    uint64_t t[6], k;
    __asm__("movq 0(%[a]), %[t0]\n\t" "subq 0(%[b]), %[t0]\n\t"
            "movq 8(%[a]), %[t1]\n\t" "sbbq 8(%[b]), %[t1]\n\t"
            "movq 16(%[a]), %[t2]\n\t" "sbbq 16(%[b]), %[t2]\n\t"
            "movq 24(%[a]), %[t3]\n\t" "sbbq 24(%[b]), %[t3]\n\t"
            "movq 32(%[a]), %[t4]\n\t" "sbbq 32(%[b]), %[t4]\n\t"
            "movq 40(%[a]), %[t5]\n\t" "sbbq 40(%[b]), %[t5]\n\t"
            "sbbq %[k], %[k]\n\t"
            "movq %[t0], 0(%[out])\n\t"
            "movq %[t1], 8(%[out])\n\t"
            "movq %[t2], 16(%[out])\n\t"
            "movq %[t3], 24(%[out])\n\t"
            "movq %[t4], 32(%[out])\n\t"
            "movq %[t5], 40(%[out])\n\t"
            "addq %[m0], %[t0]\n\t"
            "adcq %[m1], %[t1]\n\t"
            "adcq %[m2], %[t2]\n\t"
            "adcq %[m3], %[t3]\n\t"
            "adcq %[m4], %[t4]\n\t"
            "adcq %[m5], %[t5]\n\t"
            "testq %[k], %[k]\n\t"
            "cmovzq 0(%[out]), %[t0]\n\t"
            "cmovzq 8(%[out]), %[t1]\n\t"
            "cmovzq 16(%[out]), %[t2]\n\t"
            "cmovzq 24(%[out]), %[t3]\n\t"
            "cmovzq 32(%[out]), %[t4]\n\t"
            "cmovzq 40(%[out]), %[t5]\n\t"
            "movq %[t0], 0(%[out])\n\t"
            "movq %[t1], 8(%[out])\n\t"
            "movq %[t2], 16(%[out])\n\t"
            "movq %[t3], 24(%[out])\n\t"
            "movq %[t4], 32(%[out])\n\t"
            "movq %[t5], 40(%[out])\n\t"
            : [t0] "=&r"(t[0]), [t1] "=&r"(t[1]), [t2] "=&r"(t[2]), [t3] "=&r"(t[3]), [t4] "=&r"(t[4]), [t5] "=&r"(t[5]), [k] "=&r"(k), "=m"(*(uint64_t(*)[6])out)
            : [a] "r"(a), [b] "r"(b), [out] "r"(out), "m"(*(const uint64_t(*)[6])a),
              "m"(*(const uint64_t(*)[6])b), [m0] "m"(m[0]), [m1] "m"(m[1]), [m2] "m"(m[2]), [m3] "m"(m[3]), [m4] "m"(m[4]), [m5] "m"(m[5])
            : "cc");
}

#endif /* FF_HAVE_X86_ASM */
#endif
