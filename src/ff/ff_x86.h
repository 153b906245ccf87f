/* ff_x86.h: x86-64 Montgomery multiplication for 4 and 6 limbs with mulx/adcx/adox (BMI2+ADX),
 * as GNU inline assembly. Used only when the CPU has ADX (checked at run time, ff_x86.c). */
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
    "xorl %k[z], %k[z]\n\t"                                                                \
    "mulxq %[a0], " T0 ", " T1 "\n\t"                                                      \
    "mulxq %[a1], %[lo], " T2 "\n\t"                                                       \
    "adcxq %[lo], " T1 "\n\t"                                                              \
    "mulxq %[a2], %[lo], " T3 "\n\t"                                                       \
    "adcxq %[lo], " T2 "\n\t"                                                              \
    "mulxq %[a3], %[lo], " T4 "\n\t"                                                       \
    "adcxq %[lo], " T3 "\n\t"                                                              \
    "adcxq %[z], " T4 "\n\t"

/* t (T0..T3, T4 free) += a * B */
#define FF_X86_ROW4(B, T0, T1, T2, T3, T4)                                                \
    "movq " B ", %%rdx\n\t"                                                                \
    "xorl %k[z], %k[z]\n\t"                                                                \
    "mulxq %[a0], %[lo], %[hi]\n\t"                                                        \
    "adcxq %[lo], " T0 "\n\t"                                                              \
    "adoxq %[hi], " T1 "\n\t"                                                              \
    "mulxq %[a1], %[lo], %[hi]\n\t"                                                        \
    "adcxq %[lo], " T1 "\n\t"                                                              \
    "adoxq %[hi], " T2 "\n\t"                                                              \
    "mulxq %[a2], %[lo], %[hi]\n\t"                                                        \
    "adcxq %[lo], " T2 "\n\t"                                                              \
    "adoxq %[hi], " T3 "\n\t"                                                              \
    "mulxq %[a3], %[lo], " T4 "\n\t"                                                       \
    "adcxq %[lo], " T3 "\n\t"                                                              \
    "adoxq %[z], " T4 "\n\t"                                                               \
    "adcxq %[z], " T4 "\n\t"

/* t (T0..T4) += q * m with q = T0 * n0; afterwards T0 == 0 and t is T1..T4. */
#define FF_X86_RED4(T0, T1, T2, T3, T4)                                                   \
    "movq " T0 ", %%rdx\n\t"                                                               \
    "imulq %[n0], %%rdx\n\t"                                                               \
    "xorl %k[z], %k[z]\n\t"                                                                \
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
    "adcxq %[z], " T4 "\n\t"

#define FF_X86_FIRST_ROW6(B, T0, T1, T2, T3, T4, T5, T6)                                  \
    "movq " B ", %%rdx\n\t"                                                                \
    "xorl %k[z], %k[z]\n\t"                                                                \
    "mulxq %[a0], " T0 ", " T1 "\n\t"                                                      \
    "mulxq %[a1], %[lo], " T2 "\n\t"                                                       \
    "adcxq %[lo], " T1 "\n\t"                                                              \
    "mulxq %[a2], %[lo], " T3 "\n\t"                                                       \
    "adcxq %[lo], " T2 "\n\t"                                                              \
    "mulxq %[a3], %[lo], " T4 "\n\t"                                                       \
    "adcxq %[lo], " T3 "\n\t"                                                              \
    "mulxq %[a4], %[lo], " T5 "\n\t"                                                       \
    "adcxq %[lo], " T4 "\n\t"                                                              \
    "mulxq %[a5], %[lo], " T6 "\n\t"                                                       \
    "adcxq %[lo], " T5 "\n\t"                                                              \
    "adcxq %[z], " T6 "\n\t"

#define FF_X86_ROW6(B, T0, T1, T2, T3, T4, T5, T6)                                        \
    "movq " B ", %%rdx\n\t"                                                                \
    "xorl %k[z], %k[z]\n\t"                                                                \
    "mulxq %[a0], %[lo], %[hi]\n\t"                                                        \
    "adcxq %[lo], " T0 "\n\t"                                                              \
    "adoxq %[hi], " T1 "\n\t"                                                              \
    "mulxq %[a1], %[lo], %[hi]\n\t"                                                        \
    "adcxq %[lo], " T1 "\n\t"                                                              \
    "adoxq %[hi], " T2 "\n\t"                                                              \
    "mulxq %[a2], %[lo], %[hi]\n\t"                                                        \
    "adcxq %[lo], " T2 "\n\t"                                                              \
    "adoxq %[hi], " T3 "\n\t"                                                              \
    "mulxq %[a3], %[lo], %[hi]\n\t"                                                        \
    "adcxq %[lo], " T3 "\n\t"                                                              \
    "adoxq %[hi], " T4 "\n\t"                                                              \
    "mulxq %[a4], %[lo], %[hi]\n\t"                                                        \
    "adcxq %[lo], " T4 "\n\t"                                                              \
    "adoxq %[hi], " T5 "\n\t"                                                              \
    "mulxq %[a5], %[lo], " T6 "\n\t"                                                       \
    "adcxq %[lo], " T5 "\n\t"                                                              \
    "adoxq %[z], " T6 "\n\t"                                                               \
    "adcxq %[z], " T6 "\n\t"

#define FF_X86_RED6(T0, T1, T2, T3, T4, T5, T6)                                           \
    "movq " T0 ", %%rdx\n\t"                                                               \
    "imulq %[n0], %%rdx\n\t"                                                               \
    "xorl %k[z], %k[z]\n\t"                                                                \
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
    "adcxq %[z], " T6 "\n\t"

#define FF_R0 "%[r0]"
#define FF_R1 "%[r1]"
#define FF_R2 "%[r2]"
#define FF_R3 "%[r3]"
#define FF_R4 "%[r4]"
#define FF_R5 "%[r5]"
#define FF_R6 "%[r6]"

/* out = t - m if t >= m else t; t < 2m. Runs in C so the compiler picks the registers;
 * gcc and clang turn the borrow chain into sub/sbb and the choice into cmov. */
static inline __attribute__((always_inline)) void ff__x86_final_sub(uint64_t *out,
                                                                    const uint64_t *t,
                                                                    const uint64_t *m, int n)
{
    uint64_t s[6];
    unsigned char bw = 0;
    for (int i = 0; i < n; i++) {
        unsigned long long d;
        bw = __builtin_ia32_sbb_u64(bw, t[i], m[i], &d);
        s[i] = d;
    }
    uint64_t keep = (uint64_t)0 - bw;   /* borrow: t < m, keep t */
    for (int i = 0; i < n; i++) out[i] = (t[i] & keep) | (s[i] & ~keep);
}

static inline __attribute__((always_inline)) void ff__x86_mont_mul4(uint64_t out[4],
                                                                    const uint64_t a[4],
                                                                    const uint64_t b[4],
                                                                    const uint64_t m[4],
                                                                    const uint64_t *n0)
{
    uint64_t r0, r1, r2, r3, r4, lo, hi, z, rdx;
    __asm__(FF_X86_FIRST_ROW4("%[b0]", FF_R0, FF_R1, FF_R2, FF_R3, FF_R4)
            FF_X86_RED4(FF_R0, FF_R1, FF_R2, FF_R3, FF_R4)
            FF_X86_ROW4("%[b1]", FF_R1, FF_R2, FF_R3, FF_R4, FF_R0)
            FF_X86_RED4(FF_R1, FF_R2, FF_R3, FF_R4, FF_R0)
            FF_X86_ROW4("%[b2]", FF_R2, FF_R3, FF_R4, FF_R0, FF_R1)
            FF_X86_RED4(FF_R2, FF_R3, FF_R4, FF_R0, FF_R1)
            FF_X86_ROW4("%[b3]", FF_R3, FF_R4, FF_R0, FF_R1, FF_R2)
            FF_X86_RED4(FF_R3, FF_R4, FF_R0, FF_R1, FF_R2)
            : [r0] "=&r"(r0), [r1] "=&r"(r1), [r2] "=&r"(r2), [r3] "=&r"(r3),
              [r4] "=&r"(r4), [lo] "=&r"(lo), [hi] "=&r"(hi), [z] "=&r"(z), "=&d"(rdx)
            : [a0] "m"(a[0]), [a1] "m"(a[1]), [a2] "m"(a[2]), [a3] "m"(a[3]),
              [b0] "m"(b[0]), [b1] "m"(b[1]), [b2] "m"(b[2]), [b3] "m"(b[3]),
              [m0] "m"(m[0]), [m1] "m"(m[1]), [m2] "m"(m[2]), [m3] "m"(m[3]), [n0] "m"(*n0)
            : "cc");
    (void)lo, (void)hi, (void)z, (void)rdx, (void)r3;
    const uint64_t t[4] = {r4, r0, r1, r2};   /* after 4 rotations the limbs start at r4 */
    ff__x86_final_sub(out, t, m, 4);
}

static inline __attribute__((always_inline)) void ff__x86_mont_mul6(uint64_t out[6],
                                                                    const uint64_t a[6],
                                                                    const uint64_t b[6],
                                                                    const uint64_t m[6],
                                                                    const uint64_t *n0)
{
    uint64_t r0, r1, r2, r3, r4, r5, r6, lo, hi, z, rdx;
    __asm__(FF_X86_FIRST_ROW6("%[b0]", FF_R0, FF_R1, FF_R2, FF_R3, FF_R4, FF_R5, FF_R6)
            FF_X86_RED6(FF_R0, FF_R1, FF_R2, FF_R3, FF_R4, FF_R5, FF_R6)
            FF_X86_ROW6("%[b1]", FF_R1, FF_R2, FF_R3, FF_R4, FF_R5, FF_R6, FF_R0)
            FF_X86_RED6(FF_R1, FF_R2, FF_R3, FF_R4, FF_R5, FF_R6, FF_R0)
            FF_X86_ROW6("%[b2]", FF_R2, FF_R3, FF_R4, FF_R5, FF_R6, FF_R0, FF_R1)
            FF_X86_RED6(FF_R2, FF_R3, FF_R4, FF_R5, FF_R6, FF_R0, FF_R1)
            FF_X86_ROW6("%[b3]", FF_R3, FF_R4, FF_R5, FF_R6, FF_R0, FF_R1, FF_R2)
            FF_X86_RED6(FF_R3, FF_R4, FF_R5, FF_R6, FF_R0, FF_R1, FF_R2)
            FF_X86_ROW6("%[b4]", FF_R4, FF_R5, FF_R6, FF_R0, FF_R1, FF_R2, FF_R3)
            FF_X86_RED6(FF_R4, FF_R5, FF_R6, FF_R0, FF_R1, FF_R2, FF_R3)
            FF_X86_ROW6("%[b5]", FF_R5, FF_R6, FF_R0, FF_R1, FF_R2, FF_R3, FF_R4)
            FF_X86_RED6(FF_R5, FF_R6, FF_R0, FF_R1, FF_R2, FF_R3, FF_R4)
            : [r0] "=&r"(r0), [r1] "=&r"(r1), [r2] "=&r"(r2), [r3] "=&r"(r3),
              [r4] "=&r"(r4), [r5] "=&r"(r5), [r6] "=&r"(r6), [lo] "=&r"(lo), [hi] "=&r"(hi),
              [z] "=&r"(z), "=&d"(rdx)
            : [a0] "m"(a[0]), [a1] "m"(a[1]), [a2] "m"(a[2]), [a3] "m"(a[3]), [a4] "m"(a[4]),
              [a5] "m"(a[5]), [b0] "m"(b[0]), [b1] "m"(b[1]), [b2] "m"(b[2]), [b3] "m"(b[3]),
              [b4] "m"(b[4]), [b5] "m"(b[5]), [m0] "m"(m[0]), [m1] "m"(m[1]), [m2] "m"(m[2]),
              [m3] "m"(m[3]), [m4] "m"(m[4]), [m5] "m"(m[5]), [n0] "m"(*n0)
            : "cc");
    (void)lo, (void)hi, (void)z, (void)rdx, (void)r5;
    const uint64_t t[6] = {r6, r0, r1, r2, r3, r4};   /* after 6 rotations: r6 is limb 0 */
    ff__x86_final_sub(out, t, m, 6);
}

#endif /* FF_HAVE_X86_ASM */
#endif
