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

#endif
