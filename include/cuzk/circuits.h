/* circuits.h: circuits recorded as shapes, with fast witness generation. Here: the synthetic
 * benchmark family (size is a parameter; realistic 0/1-heavy witness), used by benchmarks,
 * tests and the daemon's SYNTHETIC proof kind. Filecoin circuits: porep.h. See docs/circuits.md. */
#ifndef CUZK_CIRCUITS_H
#define CUZK_CIRCUITS_H

#include <stdbool.h>
#include <stdint.h>

#include "cuzk/err.h"
#include "cuzk/ff.h"
#include "cuzk/groth16.h"

/* The synthetic family (src/circuits/synthetic.c): 32 boolean "seed" bits w, then blocks of
 * 98 constraints: 32 fresh bits x (x*x = x), z = x XOR w ((2x)*w = x + w - z), t = z AND x
 * (z*x = t), p = sum 2^i t_i (packing: 32 power-of-two coefficients), q = p * q_prev (a
 * full-field product chain); then w = z. Public input k (allocated interleaved with aux,
 * as PoRep does) is constrained to equal the latest packed value p (or the latest aux
 * before the first p): p * ONE = input_k, spread evenly through the body. The body is cut
 * to exactly n_constraints - n_public constraints; every aux is constrained where it is
 * allocated. Witness: x bits from the seed (about half ones), so ~98% of aux are 0/1. */
struct synth_params {
    uint64_t n_constraints;   /* constraints emitted by the circuit, before the input rows */
    uint32_t n_public;        /* public inputs besides ONE (>= 1) */
    bool count_only;          /* shape: counts, nnz and densities only, no matrices (huge n) */
};

/* Record the shape. Deterministic in p: the same params give the same shape everywhere. */
int synth_build_shape(struct g16_shape *out, const struct synth_params *p,
                      struct cuzk_error *err);
/* Witness of instance `seed`: inputs (s->n_inputs values, inputs[0] = ONE) and aux
 * (s->n_aux values), caller-allocated. Satisfies the shape for every seed. */
int synth_witness(fr_t *inputs, fr_t *aux, const struct g16_shape *s,
                  const struct synth_params *p, uint64_t seed, struct cuzk_error *err);

#endif
