/* porep_witness_oracle.h: the parallel PoRep witness (fil_porep_witness_values_ex on a pool,
 * and in the calling thread) must equal, byte for byte, the sequential reference run of
 * porep_synthesize in one GCS_VALUES context. Header-only (static), for the tests in
 * tests/filecoin that have generated C1s. */
#ifndef CUZK_TEST_POREP_WITNESS_ORACLE_H
#define CUZK_TEST_POREP_WITNESS_ORACLE_H

#include "cuzk/filecoin.h"
#include "cuzk/gadgets.h"
#include "cuzk/porep.h"
#include "cuzk/util.h"
#include "test.h"

static void porep_witness_parallel_equals_sequential(const struct fil_c1 *c, unsigned k)
{
    struct cuzk_error err_s = {0}, *err = &err_s;
    struct fil_porep_witness w;
    ASSERT_OK(fil_porep_witness_build(&w, c, k, err), err);
    struct gcs cs;
    ASSERT_OK(gcs_init(&cs, GCS_VALUES, NULL, err), err);
    porep_synthesize(&cs, &w.cfg, &w.w);
    ASSERT_OK(gcs_status(&cs, err), err);
    /* more workers than the machine has cores: challenges really run on different threads */
    struct pool *pool = pool_new(3, err);
    ASSERT(pool);
    for (int run = 0; run < 2; run++) {
        fr_t *in, *aux;
        uint32_t n_in, n_aux;
        ASSERT_OK(fil_porep_witness_values_ex(&in, &aux, &n_in, &n_aux, c, k, run ? pool : NULL, err), err);
        ASSERT_EQ_U64(n_in, cs.n_inputs);
        ASSERT_EQ_U64(n_aux, cs.n_aux);
        ASSERT_MEM_EQ(in, cs.inputs, (size_t)n_in * sizeof *in);
        ASSERT_MEM_EQ(aux, cs.aux, (size_t)n_aux * sizeof *aux);
        cuzk_free(in);
        cuzk_free(aux);
    }
    pool_free(pool);
    gcs_free(&cs);
    fil_porep_witness_free(&w);
}

#endif
