/* circuits.h: circuits recorded as shapes, with fast witness generation. Here: the synthetic
 * benchmark family (size is a parameter; realistic 0/1-heavy witness), used by benchmarks,
 * tests and the daemon's SYNTHETIC proof kind. Filecoin circuits: porep.h. See docs/circuits.md. */
#ifndef CUZK_CIRCUITS_H
#define CUZK_CIRCUITS_H

#include <stdint.h>

#include "cuzk/err.h"
#include "cuzk/ff.h"
#include "cuzk/groth16.h"

struct synth_params {
    uint64_t n_constraints;   /* constraints emitted by the circuit, before the input rows */
    uint32_t n_public;        /* public inputs besides ONE (>= 1) */
};

/* Record the shape. Deterministic in p: the same params give the same shape everywhere. */
int synth_build_shape(struct g16_shape *out, const struct synth_params *p,
                      struct cuzk_error *err);
/* Witness of instance `seed`: inputs (s->n_inputs values, inputs[0] = ONE) and aux
 * (s->n_aux values), caller-allocated. Satisfies the shape for every seed. */
int synth_witness(fr_t *inputs, fr_t *aux, const struct g16_shape *s,
                  const struct synth_params *p, uint64_t seed, struct cuzk_error *err);

#endif
