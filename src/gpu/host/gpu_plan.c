/* gpu_plan.c: the device memory plan of a proving key and its proofs (gpu_plan.h). */
#include "cuzk/gpu_plan.h"

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#define GiB (1024.0 * 1024.0 * 1024.0)

uint64_t gpu_plan_work_bytes(uint64_t domain, unsigned vectors)
{
    return vectors * domain * 32 + domain / 2 * 32 + 14 * domain + (2ull << 30);
}

bool gpu_plan_stream_hides(const uint64_t key[GPU_PLAN_VECTORS], uint64_t witness, uint64_t spare)
{
    uint64_t largest = 0;
    for (int k = 0; k < GPU_PLAN_VECTORS; k++)
        if (key[k] > largest) largest = key[k];
    /* full MSMs: a witness of mostly full-width values (its packed size at least half the
     * unpacked aux, l's vector being 3 bytes of point per byte of scalar) */
    if (6 * witness >= key[1]) return true;
    return spare >= largest && spare - largest >= GPU_PLAN_THIRD_SPARE;
}

unsigned gpu_plan_tier(bool resident, bool mapped, bool whole)
{
    return resident ? (mapped ? 2 : 0) : mapped ? 4 : whole ? 1 : 3;
}

int gpu_plan_make(const struct gpu_plan_in *in, struct gpu_plan *out, struct cuzk_error *err)
{
    memset(out, 0, sizeof *out);
    uint64_t key = 0, largest = 0;
    for (int k = 0; k < GPU_PLAN_VECTORS; k++) {
        key += in->key[k];
        if (in->key[k] > largest) largest = in->key[k];
    }
    /* In order of the time a proof loses to PCIe (decisions.md, "a key streamed in whole
     * vectors before a resident key with its matrices in host memory"). A resident key with
     * the matrices on the device loses none. A key streamed in whole vectors loses almost none
     * where each vector uploads during the previous vector's MSM (gpu_plan_stream_hides), and
     * its proofs keep the room a resident key would take for their MSMs' scratch. Matrices
     * read from host memory sit on the SpMV's critical path, and beside a key that barely fits
     * they leave the MSMs short of scratch too. A key streamed in pieces smaller than a vector
     * runs every MSM per piece, and with the matrices in host memory it pays both. Within each
     * tier, two witness buffers before one and three h vectors before two (c then waits for a
     * b). */
    static const struct { bool streamed, mapped, whole; } tiers[] = {
        {false, false, false}, {true, false, true}, {false, true, false}, {true, false, false}, {true, true, false},
    };
    for (size_t t = 0; t < sizeof tiers / sizeof *tiers; t++)
        for (unsigned wit = 2; wit >= 1; wit--)
            for (unsigned vec = 3; vec >= 2; vec--) {
                const bool streamed = tiers[t].streamed, mapped = tiers[t].mapped;
                const uint64_t work = gpu_plan_work_bytes(in->domain, vec);
                const uint64_t need = (mapped ? 0 : in->shape) + work + wit * in->witness;
                uint64_t kb = key, chunk = 0;
                if (!streamed) {
                    if (need + key > in->mem) continue;
                } else {
                    if (need >= in->mem) continue;
                    chunk = (in->mem - need) / 2;
                    if (chunk > largest) chunk = largest;
                    if (tiers[t].whole &&
                        (chunk < largest || !gpu_plan_stream_hides(in->key, in->witness, in->mem - need - 2 * chunk)))
                        continue;
                    if (chunk < GPU_PLAN_MIN_CHUNK && chunk < largest) continue;
                    kb = 2 * chunk;
                }
                out->key_mode = streamed ? GPU_KEY_STREAMED : GPU_KEY_RESIDENT;
                out->shape_mapped = mapped;
                out->witness_buffers = wit;
                out->h_vectors = vec;
                out->key_bytes = kb;
                out->stream_chunk = chunk;
                out->work_bytes = work;
                out->total = need + kb;
                return CUZK_OK;
            }
    memset(out, 0, sizeof *out);
    const uint64_t piece = largest < GPU_PLAN_MIN_CHUNK ? largest : GPU_PLAN_MIN_CHUNK;
    const uint64_t work = gpu_plan_work_bytes(in->domain, 2);
    const uint64_t least = work + 2 * piece + in->witness;
    return cuzk_fail(err, CUZK_E_GPU_NOMEM,
                     "GPU memory plan: needs at least %.2f GiB (streamed key buffers %.2f, proof working "
                     "set %.2f, witness %.2f GiB; the %.2f GiB of matrices read from host memory), may use "
                     "%.2f GiB",
                     least / GiB, 2 * piece / GiB, work / GiB, in->witness / GiB, in->shape / GiB, in->mem / GiB);
}
