/* ec_internal.h: constants and helpers shared by the src/ec files (not part of the API).
 * The generic point formulas live in point_impl.h, the generic MSM in msm_impl.h. */
#ifndef CUZK_EC_INTERNAL_H
#define CUZK_EC_INTERNAL_H

#include <stdint.h>

#include "cuzk/ec.h"

/* |u| for the BLS12-381 parameter u = -0xd201000000010000 (the curve's "x"). */
#define EC_U_ABS 0xd201000000010000ULL

/* Points per chunk of g1/g2_batch_to_aff: one inversion (~400 M) is amortised over this many
 * points, and the pool gets at least this much work per task. */
#define EC_BATCH_GRAIN 512

/* Test seam (tests/ec/test_msm.c): the MSM with its window width forced to c in [1, 16]
 * (0 = the automatic choice), so every width is exercised on small inputs. */
int g1__msm_window(g1_jac_t *out, const g1_aff_t *bases, const fr_t *scalars, size_t n,
                   unsigned c, struct pool *pool, struct cuzk_error *err);
int g2__msm_window(g2_jac_t *out, const g2_aff_t *bases, const fr_t *scalars, size_t n,
                   unsigned c, struct pool *pool, struct cuzk_error *err);

/* Flags in the batch-affine queue's bucket indices (msm_impl.h): the digit was negative (add
 * -P), resp. the addition is left to the XYZZ overflow (x equal to the bucket's). */
#define MSM_NEG 0x80000000u
#define MSM_SKIP 0x40000000u
#define MSM_BMASK 0x3fffffffu

/* msm_ifma.c: the G1 batch-affine flush on 8 lanes of AVX-512 IFMA. ec_ifma_usable: the CPU has
 * it (and the test seam did not turn it off). ec_g1_flush_ifma runs abk[b_j] += +-bases[i_j]
 * for j < m (b_j = bidx[j] & MSM_BMASK, sign MSM_NEG, distinct buckets) with one inversion;
 * an entry whose x equals its bucket's gets MSM_SKIP and is left to the caller. scratch:
 * ec_ifma_scratch_bytes(m) bytes. */
bool ec_ifma_usable(void);
size_t ec_ifma_scratch_bytes(size_t batch);
void ec_g1_flush_ifma(g1_aff_t *abk, const g1_aff_t *bases, uint32_t *bidx, const size_t *pidx,
                      size_t m, void *scratch);
/* Test seams: turn the IFMA path off (false) or back to what the CPU offers (true), returning
 * whether it was in use; and 8 lanes of a*b, a-b, a+b through the vector arithmetic. */
bool ec__ifma_set(bool on);
void ec__ifma_ops(fp_t mul[8], fp_t sub[8], fp_t add[8], const fp_t a[8], const fp_t b[8]);

#endif
