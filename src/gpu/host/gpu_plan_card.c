/* gpu_plan_card.c: the device memory plan of a card holding several proving keys
 * (gpu_plan.h, gpu_plan_card_make). An exhaustive search: at most 4 keys, each resident or
 * streamed with its matrices kept or mapped (4^4 placements), each proof with two or one
 * witness buffers and three or two h vectors (4^4 option sets): 65,536 candidates of a few
 * additions each, microseconds. */
#include <string.h>

#include "cuzk/gpu_plan.h"

#define GiB (1024.0 * 1024.0 * 1024.0)

static uint64_t key_bytes(const struct gpu_plan_key *k, uint64_t *largest)
{
    uint64_t sum = 0, big = 0;
    for (int v = 0; v < GPU_PLAN_VECTORS; v++) {
        sum += k->key[v];
        if (k->key[v] > big) big = k->key[v];
    }
    if (largest) *largest = big;
    return sum;
}

/* One candidate, scored. */
struct cand {
    struct gpu_plan_card plan;
    uint64_t tp_tier, tp_bytes, tp_rank, tp_chunk, dl_rank, dl_chunk;
    double dl_latency;
};

/* Is a better than b? The order of gpu_plan_card_make's contract. */
static bool better(const struct cand *a, const struct cand *b)
{
    if (a->tp_tier != b->tp_tier) return a->tp_tier < b->tp_tier;
    if (a->tp_bytes != b->tp_bytes) return a->tp_bytes < b->tp_bytes;
    if (a->tp_rank != b->tp_rank) return a->tp_rank < b->tp_rank;
    if (a->tp_chunk != b->tp_chunk) return a->tp_chunk > b->tp_chunk;
    /* latencies are sums of the same few figures: compare them to a nanosecond */
    if (a->dl_latency < b->dl_latency - 1e-9) return true;
    if (a->dl_latency > b->dl_latency + 1e-9) return false;
    if (a->dl_rank != b->dl_rank) return a->dl_rank < b->dl_rank;
    if (a->dl_chunk != b->dl_chunk) return a->dl_chunk > b->dl_chunk;
    return a->plan.kept < b->plan.kept;
}

/* Candidate (place, opt): for key i, place bit 2i = streamed, 2i+1 = matrices mapped; opt bit
 * 2i = two h vectors, 2i+1 = one witness buffer. false when it does not fit in->mem. */
static bool evaluate(const struct gpu_plan_card_in *in, unsigned place, unsigned opt, struct cand *c)
{
    memset(c, 0, sizeof *c);
    struct gpu_plan_card *p = &c->plan;
    uint64_t kept = 0, work = 0, wit = 0;
    for (unsigned i = 0; i < in->n; i++) {
        const struct gpu_plan_key *k = &in->keys[i];
        struct gpu_plan_card_key *o = &p->k[i];
        o->resident = !((place >> (2 * i)) & 1);
        o->shape_mapped = (place >> (2 * i + 1)) & 1;
        o->h_vectors = (opt >> (2 * i)) & 1 ? 2 : 3;
        o->witness_buffers = (opt >> (2 * i + 1)) & 1 ? 1 : 2;
        if (o->resident) kept += key_bytes(k, NULL);
        if (!o->shape_mapped) kept += k->shape;
        o->work_bytes = gpu_plan_work_bytes(k->domain, o->h_vectors);
        if (o->work_bytes > work) work = o->work_bytes;
        if (o->witness_buffers * k->witness > wit) wit = o->witness_buffers * k->witness;
    }
    if (kept > in->mem || work > in->mem - kept || wit > in->mem - kept - work) return false;
    const uint64_t avail = in->mem - kept - work - wit;
    uint64_t stream = 0;
    for (unsigned i = 0; i < in->n; i++) {
        struct gpu_plan_card_key *o = &p->k[i];
        if (o->resident) continue;
        uint64_t largest;
        key_bytes(&in->keys[i], &largest);
        if (!avail && largest) return false;   /* as gpu_plan_make: a streamed key needs room */
        uint64_t chunk = avail / 2 < largest ? avail / 2 : largest;
        if (chunk < GPU_PLAN_MIN_CHUNK && chunk < largest) return false;
        o->stream_chunk = chunk;
        if (2 * chunk > stream) stream = 2 * chunk;
    }
    p->kept = kept;
    p->work_bytes = work;
    p->witness_bytes = wit;
    p->stream_bytes = stream;
    p->peak = kept + work + wit + stream;
    /* the figures each key's proof costs, then what each one waits for */
    for (unsigned i = 0; i < in->n; i++) {
        const struct gpu_plan_key *k = &in->keys[i];
        struct gpu_plan_card_key *o = &p->k[i];
        uint64_t largest;
        const uint64_t kb = key_bytes(k, &largest);
        const bool whole = !o->resident && o->stream_chunk >= largest &&
                           gpu_plan_stream_hides(k->key, k->witness, in->mem - p->peak);
        o->pcie_bytes = (o->resident ? 0 : kb) + (o->shape_mapped ? k->shape : 0) +
                        (o->witness_buffers == 1 ? k->witness : 0);
        /* on the critical path: a key streamed in whole vectors hides behind the MSMs, one in
         * pieces and mapped matrices do not */
        const uint64_t exposed = o->pcie_bytes - (whole ? kb : 0);
        o->proof_s = k->lock_s + (double)exposed / in->pcie_bytes_per_s;
        const uint64_t rank = (o->witness_buffers == 1) * 2 + (o->h_vectors == 2);
        if (k->cls == GPU_CLASS_THROUGHPUT) {
            c->tp_tier += gpu_plan_tier(o->resident, o->shape_mapped, whole);
            c->tp_bytes += o->pcie_bytes - (o->witness_buffers == 1 ? k->witness : 0);
            c->tp_rank += rank;
            c->tp_chunk += o->stream_chunk;
        } else {
            c->dl_rank += rank;
            c->dl_chunk += o->stream_chunk;
        }
    }
    for (unsigned i = 0; i < in->n; i++) {
        struct gpu_plan_card_key *o = &p->k[i];
        for (unsigned j = 0; j < in->n; j++)
            if (j != i && p->k[j].proof_s > o->wait_s) o->wait_s = p->k[j].proof_s;
        o->latency_s = o->wait_s + o->proof_s;
        if (in->keys[i].cls == GPU_CLASS_DEADLINE) c->dl_latency += o->latency_s;
    }
    return true;
}

int gpu_plan_card_make(const struct gpu_plan_card_in *in, struct gpu_plan_card *out,
                       struct cuzk_error *err)
{
    memset(out, 0, sizeof *out);
    if (in->n < 1 || in->n > GPU_PLAN_MAX_KEYS)
        return cuzk_fail(err, CUZK_E_INVALID_ARG, "gpu_plan_card_make: %u keys (1 to %d)", in->n, GPU_PLAN_MAX_KEYS);
    if (!(in->pcie_bytes_per_s > 0))
        return cuzk_fail(err, CUZK_E_INVALID_ARG, "gpu_plan_card_make: PCIe rate %g bytes/s is not positive",
                         in->pcie_bytes_per_s);
    for (unsigned i = 0; i < in->n; i++) {
        const struct gpu_plan_key *k = &in->keys[i];
        const char *name = k->name ? k->name : "?";
        if (!k->domain || (k->domain & (k->domain - 1)))
            return cuzk_fail(err, CUZK_E_INVALID_ARG, "gpu_plan_card_make: key %u (%s): domain %llu is not a power of two",
                             i, name, (unsigned long long)k->domain);
        if (!(k->lock_s >= 0))
            return cuzk_fail(err, CUZK_E_INVALID_ARG, "gpu_plan_card_make: key %u (%s): lock time %g s", i, name, k->lock_s);
        if (k->cls != GPU_CLASS_THROUGHPUT && k->cls != GPU_CLASS_DEADLINE)
            return cuzk_fail(err, CUZK_E_INVALID_ARG, "gpu_plan_card_make: key %u (%s): unknown class %d", i, name, (int)k->cls);
        /* a key that fits nowhere alone: gpu_plan_make's message names its least need */
        struct gpu_plan_in one = {.mem = in->mem, .shape = k->shape, .domain = k->domain, .witness = k->witness};
        memcpy(one.key, k->key, sizeof one.key);
        struct gpu_plan alone;
        int rc = gpu_plan_make(&one, &alone, err);
        if (rc) return cuzk_fail_prefix(err, rc, "key %s", name);
    }
    const unsigned combos = 1u << (2 * in->n);
    struct cand best, c;
    memset(&best, 0, sizeof best);
    bool found = false;
    for (unsigned place = 0; place < combos; place++)
        for (unsigned opt = 0; opt < combos; opt++)
            if (evaluate(in, place, opt, &c) && (!found || better(&c, &best))) {
                best = c;
                found = true;
            }
    if (!found) {
        /* each fits alone: the keys' largest working set, witness and streaming buffers do not
         * fit together, even with every key streamed in the smallest pieces */
        uint64_t work = 0, wit = 0, stream = 0;
        for (unsigned i = 0; i < in->n; i++) {
            const struct gpu_plan_key *k = &in->keys[i];
            uint64_t largest, w2 = gpu_plan_work_bytes(k->domain, 2);
            key_bytes(k, &largest);
            const uint64_t piece = largest < GPU_PLAN_MIN_CHUNK ? largest : GPU_PLAN_MIN_CHUNK;
            if (w2 > work) work = w2;
            if (k->witness > wit) wit = k->witness;
            if (2 * piece > stream) stream = 2 * piece;
        }
        return cuzk_fail(err, CUZK_E_GPU_NOMEM,
                         "GPU memory plan of %u keys: each fits alone, together they need at least %.2f GiB "
                         "(largest proof working set %.2f, witness buffer %.2f, streamed key buffers %.2f GiB), "
                         "may use %.2f GiB", in->n, (work + wit + stream) / GiB, work / GiB, wit / GiB,
                         stream / GiB, in->mem / GiB);
    }
    *out = best.plan;
    return CUZK_OK;
}
