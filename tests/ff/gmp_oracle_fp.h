/* gmp_oracle_fp.h: gmp_oracle.h instantiated for Fp (the BLS12-381 base field), the one
 * parameter set test_fp.c and test_fp2.c share. */
#ifndef CUZK_TEST_GMP_ORACLE_FP_H
#define CUZK_TEST_GMP_ORACLE_FP_H

#include "cuzk/ff.h"

#define GO_ELEM        fp_t
#define GO_LIMBS       6
#define GO_MODULUS_HEX "1a0111ea397fe69a4b1ba7b6434bacd764774b84f38512bf6730d2a0f6b0f6241eabfffeb1" \
                      "53ffffb9feffffffffaaab"
#define GO_HIGH_BIT    380
#include "gmp_oracle.h"

#endif
