/* porep_fixture.h: the 2 KiB PoRep parameter set of param_fixture.h, shared by the test
 * programs that prove PoRep (tests/filecoin/test_porep_proof.c, tests/e2e/test_daemon.c, ...)
 * in <build>/test-cache/porep-2KiB. The setup takes about a minute here. Header-only. */
#ifndef CUZK_TEST_POREP_FIXTURE_H
#define CUZK_TEST_POREP_FIXTURE_H

#include "cuzk/filecoin.h"
#include "cuzk/gadgets.h"
#include "cuzk/groth16.h"
#include "cuzk/porep.h"
#include "param_fixture.h"

static inline void porep_fixture_skip_if_slow(void)
{
    param_fixture_skip_if_slow("2 KiB PoRep setup");
}

/* Fill fx with the shared parameter set, making it first if it is missing or stale. */
static inline void porep_fixture_get(struct param_fixture *fx)
{
    struct cuzk_error err_s = {0}, *err = &err_s;
    char stem[256];
    ASSERT_OK(fil_porep_param_stem(stem, sizeof stem, 2048, err), err);
    struct porep_config cfg;
    ASSERT_OK(porep_config_for_size(&cfg, 2048, err), err);
    struct g16_builder *b = g16_builder_new(false, err);
    ASSERT(b);
    struct gcs_sink sink = gcs_sink_builder(b);
    struct gcs cs;
    ASSERT_OK(gcs_init(&cs, GCS_SHAPE, &sink, err), err);
    porep_synthesize(&cs, &cfg, NULL);
    ASSERT_OK(gcs_status(&cs, err), err);
    gcs_free(&cs);
    struct g16_shape s;
    ASSERT_OK(g16_builder_finish(b, &s, err), err);
    g16_builder_free(b);
    param_fixture_make(fx, "porep-2KiB", stem, &s, 2048, "2 KiB PoRep");
    g16_shape_free(&s);
}

#endif
