/* cs_builder.c: the gcs sink that records a circuit into a g16_builder (groth16.h). Kept
 * apart from cs.c so that programs using only the witness or counting modes do not link
 * the builder. */
#include "cuzk/gadgets.h"

static uint32_t sink_alloc_input(void *ctx) { return g16_alloc_input(ctx); }
static uint32_t sink_alloc_aux(void *ctx) { return g16_alloc_aux(ctx); }
static int sink_enforce(void *ctx, struct g16_lc a, struct g16_lc b, struct g16_lc c)
{
    return g16_enforce(ctx, a, b, c);
}

struct gcs_sink gcs_sink_builder(struct g16_builder *b)
{
    struct gcs_sink s = {b, sink_alloc_input, sink_alloc_aux, sink_enforce};
    return s;
}

int gcs_record(struct g16_builder *b, gcs_synth_fn fn, void *arg, struct cuzk_error *err)
{
    uint32_t in0, aux0;
    g16_builder_counts(b, &in0, &aux0, NULL);
    struct gcs_sink sink = gcs_sink_builder(b);
    struct gcs cs;
    int rc = gcs_init_at(&cs, GCS_SHAPE, &sink, in0, aux0, err);
    if (rc) return rc;
    fn(&cs, arg);
    rc = gcs_status(&cs, err);
    gcs_free(&cs);
    return rc;
}
