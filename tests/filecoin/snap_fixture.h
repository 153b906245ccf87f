/* snap_fixture.h: the SnapDeals parameter sets of param_fixture.h, shared by the programs that
 * prove SnapDeals (tests/filecoin/test_snap_proof.c, tests/e2e/test_daemon.c) in
 * <build>/test-cache/<circuit id> (snap-2k, ...). 2 KiB (1.7M constraints) takes about 70 s
 * here; 8 MiB (10M) several minutes, so only the slow tests use it. Header-only. */
#ifndef CUZK_TEST_SNAP_FIXTURE_H
#define CUZK_TEST_SNAP_FIXTURE_H

#include "cuzk/fil_circuit.h"
#include "cuzk/groth16.h"
#include "param_fixture.h"

static inline void snap_fixture_skip_if_slow(void)
{
    param_fixture_skip_if_slow("SnapDeals setup");
}

/* Fill fx with the parameter set of the SnapDeals circuit at sector_size, making it first if
 * it is missing or stale. */
static inline void snap_fixture_get(struct param_fixture *fx, uint64_t sector_size)
{
    struct cuzk_error err_s = {0}, *err = &err_s;
    struct fil_circuit circ;
    ASSERT_OK(fil_circuit_init(&circ, FIL_CIRCUIT_SNAP, sector_size, err), err);
    char id[32], stem[256];
    fil_circuit_id(id, sizeof id, &circ);
    ASSERT_OK(fil_circuit_param_stem(stem, sizeof stem, &circ, err), err);
    struct g16_shape s;
    ASSERT_OK(fil_circuit_shape(&s, &circ, pool_default(), err), err);
    param_fixture_make(fx, id, stem, &s, sector_size, id);
    g16_shape_free(&s);
}

#endif
