/* synth_kit.h: what the daemon tests that prove SYNTHETIC jobs share besides the daemon
 * harness: a client connection that fails the test when it cannot be made, and the independent
 * verifier of their proofs. The verifier is the oracle: the test writes synthetic-<n>.params
 * itself (its own setup, so it holds the verifying key) and recomputes the public inputs from
 * the seed it sent, so a daemon that proved the wrong circuit or witness fails verification.
 * Header-only (static inline): each test program is one translation unit. */
#ifndef CUZK_E2E_SYNTH_KIT_H
#define CUZK_E2E_SYNTH_KIT_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client.h"
#include "cuzk/circuits.h"
#include "cuzk/groth16.h"
#include "test.h"

static inline struct cz_client *connect_to(const char *addr)
{
    struct cz_client *c = NULL;
    struct cuzk_error err_s, *err = &err_s;
    ASSERT_OK(cz_connect(&c, addr, err), err);
    return c;
}

/* Our own parameters for synthetic-<n>, written into the daemon's param_cache dir. */
struct vkit {
    struct synth_params sp;
    struct g16_shape shape;
    struct g16_pk pk;
    struct g16_pvk *pvk;
};

static inline void vkit_make(struct vkit *k, const char *dir, uint64_t n)
{
    struct cuzk_error err_s, *err = &err_s;
    memset(k, 0, sizeof *k);
    k->sp.n_constraints = n;
    k->sp.n_public = 2;   /* the daemon's synthetic circuits have two public inputs */
    ASSERT_OK(synth_build_shape(&k->shape, &k->sp, err), err);
    ASSERT_OK(g16_setup(&k->pk, &k->shape, test_rng(), pool_default(), err), err);
    char path[512];
    snprintf(path, sizeof path, "%s/synthetic-%llu.params", dir, (unsigned long long)n);
    ASSERT_OK(g16_params_write(&k->pk, path, err), err);
    k->pvk = g16_pvk_new(&k->pk.vk, err);
    ASSERT_MSG(k->pvk, "pvk: %s", err->msg);
}

/* Proof bytes of partition p, made from instance seed + p, must verify under our key. */
static inline void vkit_verify(const struct vkit *k, uint64_t seed, const uint8_t *bytes)
{
    struct cuzk_error err_s, *err = &err_s;
    fr_t *in = malloc(k->shape.n_inputs * sizeof(fr_t)), *aux = malloc((k->shape.n_aux + 1) * sizeof(fr_t));
    ASSERT_OK(synth_witness(in, aux, &k->shape, &k->sp, seed, err), err);
    struct g16_proof p;
    ASSERT_OK(g16_proof_from_bytes(&p, bytes, err), err);
    ASSERT_OK(g16_verify(k->pvk, &p, in + 1, k->shape.n_inputs - 1, err), err);
    free(in);
    free(aux);
}

/* The 8 bytes a SYNTHETIC request carries as its vanilla proof: the instance seed, LE. */
static inline void seed_bytes(uint8_t out[8], uint64_t seed)
{
    for (int i = 0; i < 8; i++) out[i] = (uint8_t)(seed >> (8 * i));
}

#endif
