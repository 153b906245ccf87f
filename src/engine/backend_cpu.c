/* backend_cpu.c: the CPU prover behind the engine's backend interface: no devices, every
 * prover worker runs g16_backend_cpu on the shared compute pool. */
#include <stdio.h>
#include <string.h>

#include "engine_internal.h"

static int cpu_prove(void *self, unsigned d, struct g16_msm_results *out, const struct g16_shape *s,
                     const struct g16_pk *pk, const struct g16_assignment *w, struct g16_timings *t,
                     struct cuzk_error *err)
{
    (void)self;
    (void)d;
    return g16_backend_cpu(out, s, pk, w, NULL, t, err);
}

static const struct engine_backend_ops cpu_ops = {.prove = cpu_prove};

void engine_backend_cpu(struct engine_backend *out, const char *reason)
{
    memset(out, 0, sizeof *out);
    out->ops = &cpu_ops;
    snprintf(out->cpu_reason, sizeof out->cpu_reason, "%s", reason && reason[0] ? reason : "no GPU backend");
}
