/* engine_kit.h: what the engine tests without a daemon share (test_engine_gpu.c,
 * test_engine_status.c): a synthetic key in the param cache and SYNTHETIC jobs submitted
 * straight to an engine. Header-only. */
#ifndef CUZK_E2E_ENGINE_KIT_H
#define CUZK_E2E_ENGINE_KIT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "cuzk/circuits.h"
#include "cuzk/engine.h"
#include "cuzk/groth16.h"
#include "cuzk/util.h"
#include "test.h"

/* dir/synthetic-<n>.params (its path in path) from a fresh local setup with the synthetic
 * kind's public inputs */
static inline void write_params(const char *dir, uint64_t n, char *path, size_t cap)
{
    struct cuzk_error err_s, *err = &err_s;
    struct synth_params sp = {.n_constraints = n, .n_public = 2};
    struct g16_shape shape;
    struct g16_pk pk;
    ASSERT_OK(synth_build_shape(&shape, &sp, err), err);
    ASSERT_OK(g16_setup(&pk, &shape, NULL, pool_default(), err), err);
    snprintf(path, cap, "%s/synthetic-%llu.params", dir, (unsigned long long)n);
    ASSERT_OK(g16_params_write(&pk, path, err), err);
    g16_pk_free(&pk);
    g16_shape_free(&shape);
}

/* A SYNTHETIC job of `parts` circuits of n constraints at priority prio (0: NORMAL, the kind's
 * default; 4: CRITICAL, WinningPoSt's); the submit must succeed. */
static inline void submit_prio(struct engine *e, const char *id, uint64_t n, uint32_t parts, int prio)
{
    struct cuzk_error err_s, *err = &err_s;
    struct engine_request r;
    memset(&r, 0, sizeof r);
    r.request_id = id;
    r.priority = prio;
    r.kind = ENGINE_KIND_SYNTHETIC;
    r.synthetic.constraints = n;
    r.synthetic.partitions = parts;
    char job[ENGINE_ID_MAX];
    uint32_t pos;
    bool existing;
    ASSERT_OK(engine_submit(e, &r, job, &pos, &existing, err), err);
}

static inline void submit(struct engine *e, const char *id, uint64_t n, uint32_t parts)
{
    submit_prio(e, id, n, parts, 0);
}

#endif
