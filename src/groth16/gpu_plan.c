/* gpu_plan.c: the device memory plan of a proving key and its proofs (gpu_plan.h). */
#include "cuzk/gpu_plan.h"

#include <string.h>

#define GiB (1024.0 * 1024.0 * 1024.0)

uint64_t gpu_plan_work_bytes(uint64_t domain)
{
    return 3 * domain * 32 + (1ull << 30);
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
     * than the upload of a witness under the device lock */
    const struct { enum gpu_key_mode mode; uint64_t key; unsigned wit; } opt[4] = {
        {GPU_KEY_RESIDENT, key, 2},
        {GPU_KEY_RESIDENT, key, 1},
        {GPU_KEY_STREAMED, 2 * largest, 2},
        {GPU_KEY_STREAMED, 2 * largest, 1},
    };
    for (int i = 0; i < 4; i++) {
        uint64_t total = base + opt[i].key + opt[i].wit * in->witness;
        if (total <= in->mem) {
            out->key_mode = opt[i].mode;
            out->witness_buffers = opt[i].wit;
            out->key_bytes = opt[i].key;
            out->work_bytes = work;
            out->total = total;
            return CUZK_OK;
        }
    }
    const uint64_t least = base + 2 * largest + in->witness;
    return cuzk_fail(err, CUZK_E_GPU_NOMEM,
                     "GPU memory plan: needs at least %.2f GiB (streamed key buffers %.2f, matrices "
                     "%.2f, proof working set %.2f, witness %.2f GiB), may use %.2f GiB",
                     least / GiB, 2 * largest / GiB, in->shape / GiB, work / GiB, in->witness / GiB,
                     in->mem / GiB);
}
