/* gpu_plan.c: the device memory plan of a proving key and its proofs (gpu_plan.h). */
#include "cuzk/gpu_plan.h"

#include <string.h>

#define GiB (1024.0 * 1024.0 * 1024.0)

uint64_t gpu_plan_work_bytes(uint64_t domain)
{
    return 3 * domain * 32 + 12 * domain + (2ull << 30);
}

int gpu_plan_make(const struct gpu_plan_in *in, struct gpu_plan *out, struct cuzk_error *err)
{
    memset(out, 0, sizeof *out);
    uint64_t key = 0, largest = 0;
    for (int k = 0; k < GPU_PLAN_VECTORS; k++) {
        key += in->key[k];
        if (in->key[k] > largest) largest = in->key[k];
    }
    const uint64_t work = gpu_plan_work_bytes(in->domain);
    const uint64_t base = in->shape + work;
    /* in order of speed: a streamed key costs its whole size over PCIe per proof, far more
     * than the upload of a witness under the device lock; smaller pieces cost more launches */
    bool ok = false;
    for (unsigned wit = 2; wit >= 1 && !ok; wit--)
        if (base + key + wit * in->witness <= in->mem) {
            out->key_mode = GPU_KEY_RESIDENT, out->witness_buffers = wit, out->key_bytes = key;
            ok = true;
        }
    for (unsigned wit = 2; wit >= 1 && !ok; wit--) {
        uint64_t need = base + wit * in->witness;
        if (need >= in->mem) continue;
        uint64_t chunk = (in->mem - need) / 2;
        if (chunk > largest) chunk = largest;
        if (chunk < GPU_PLAN_MIN_CHUNK && chunk < largest) continue;
        out->key_mode = GPU_KEY_STREAMED, out->witness_buffers = wit;
        out->stream_chunk = chunk, out->key_bytes = 2 * chunk;
        ok = true;
    }
    if (ok) {
        out->work_bytes = work;
        out->total = base + out->key_bytes + out->witness_buffers * in->witness;
        return CUZK_OK;
    }
    memset(out, 0, sizeof *out);
    const uint64_t piece = largest < GPU_PLAN_MIN_CHUNK ? largest : GPU_PLAN_MIN_CHUNK;
    const uint64_t least = base + 2 * piece + in->witness;
    return cuzk_fail(err, CUZK_E_GPU_NOMEM,
                     "GPU memory plan: needs at least %.2f GiB (streamed key buffers %.2f, matrices "
                     "%.2f, proof working set %.2f, witness %.2f GiB), may use %.2f GiB",
                     least / GiB, 2 * piece / GiB, in->shape / GiB, work / GiB, in->witness / GiB,
                     in->mem / GiB);
}
