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
