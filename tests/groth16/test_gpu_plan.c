/* test_gpu_plan.c: the GPU memory plan (gpu_plan.h) over many (card, key, witness) sizes: it
 * never plans more than the memory it was given, it picks the fastest option that fits (an
 * exhaustive check of the eight options, written here from the header's contract), and the
 * 32 GiB PoRep and WindowPoSt keys land where the GPU runs showed they must. The plan of a
 * card holding several keys (gpu_plan_card_make): with one key it is the single-key plan, with
 * two or three random ones it fits and scores as the best plan a walk of every choice written
 * here finds, and the 32 GiB PoRep, WindowPoSt, SnapDeals (and WinningPoSt) keys on an 80 GB
 * and a 24 GB card (card_plan_of_the_32gib_keys prints docs/performance.md's plan table). */
#include <string.h>

#include "cuzk/gpu_plan.h"
#include "cuzk/util.h"
#include "test.h"

#define GIB (1ull << 30)

static uint64_t rnd(cuzk_rng *r, uint64_t lo, uint64_t hi)
{
    uint64_t x;
    cuzk_rng_bytes(r, (uint8_t *)&x, sizeof x);
    return lo + x % (hi - lo + 1);
}

/* A random key, matrices, witness and card: domain 2^10..2^28, each vector's points up to the
 * domain, matrices up to 64 bytes a point, up to 161 GiB of memory. */
static struct gpu_plan_in random_plan_in(cuzk_rng *r)
{
    struct gpu_plan_in in;
    memset(&in, 0, sizeof in);
    in.domain = 1ull << rnd(r, 10, 28);
    uint64_t pts = in.domain;
    in.key[0] = (pts - 1) * 96;
    in.key[1] = rnd(r, 1, pts) * 96;
    in.key[2] = rnd(r, 1, pts) * 96;
    uint64_t nb = rnd(r, 0, pts);
    in.key[3] = nb * 96;
    in.key[4] = nb * 192;
    in.shape = rnd(r, 0, pts * 64);
    in.witness = rnd(r, 1, pts) * 32;
    in.mem = rnd(r, 1, 160) * GIB + rnd(r, 0, GIB);
    return in;
}

/* The contract's whole-vector condition, written out: full MSMs (6 witness bytes per byte of
 * l's points), or room for a third buffer of the largest vector with 6 GiB beside it in what
 * the two buffers leave (spare). */
static bool uploads_hide(const uint64_t key[GPU_PLAN_VECTORS], uint64_t witness, uint64_t spare)
{
    uint64_t big = 0;
    for (int k = 0; k < GPU_PLAN_VECTORS; k++) big = key[k] > big ? key[k] : big;
    return 6 * witness >= key[1] || (spare >= big && spare - big >= 6 * GIB);
}

/* Option i from the header's contract, fastest first: tier i / 4 (0 resident key with the
 * matrices on the device, 1 key streamed in whole vectors with the matrices on the device, 2
 * resident key with the matrices in host memory, 3 streamed in pieces with the matrices on the
 * device, 4 streamed in pieces with the matrices in host memory), one witness buffer (i / 2 % 2),
 * two h vectors (i % 2); its total, or 0 when it does not fit; *chunk: the streamed piece size. */
#define OPTIONS 20
static uint64_t option_fit(const struct gpu_plan_in *in, int i, uint64_t *chunk)
{
    uint64_t key = 0, big = 0;
    for (int k = 0; k < GPU_PLAN_VECTORS; k++) {
        key += in->key[k];
        if (in->key[k] > big) big = in->key[k];
    }
    const int tier = i / 4;
    const bool mapped = tier == 2 || tier == 4, streamed = tier == 1 || tier >= 3;
    const uint64_t vectors = i % 2 ? 2 : 3;
    uint64_t fixed = (mapped ? 0 : in->shape) + vectors * in->domain * 32 + in->domain / 2 * 32 +
                     14 * in->domain + 2 * GIB + (i / 2 % 2 ? 1 : 2) * in->witness;
    *chunk = 0;
    if (!streamed) return fixed + key <= in->mem ? fixed + key : 0;
    if (fixed >= in->mem) return 0;
    uint64_t c = (in->mem - fixed) / 2;
    if (c > big) c = big;
    if (tier == 1 && (c < big || !uploads_hide(in->key, in->witness, in->mem - fixed - 2 * big))) return 0;
    if (c < big && c < GPU_PLAN_MIN_CHUNK) return 0;
    *chunk = c;
    return fixed + 2 * c;
}

static int option_of(const struct gpu_plan_in *in, const struct gpu_plan *p)
{
    uint64_t big = 0;
    for (int k = 0; k < GPU_PLAN_VECTORS; k++)
        if (in->key[k] > big) big = in->key[k];
    const uint64_t need = p->total - p->key_bytes;
    const bool hides = in->mem - need >= 2 * big && uploads_hide(in->key, in->witness, in->mem - need - 2 * big);
    int tier = p->key_mode == GPU_KEY_RESIDENT ? (p->shape_mapped ? 2 : 0)
             : p->shape_mapped                ? 4
             : p->stream_chunk == big && hides ? 1
                                               : 3;
    return tier * 4 + (p->witness_buffers == 1) * 2 + (p->h_vectors == 2);
}

TEST(plan_never_exceeds_memory_and_picks_the_fastest_fit)
{
    struct cuzk_error err_s, *err = &err_s;
    cuzk_rng *r = test_rng();
    unsigned fits = 0, refused = 0, streamed = 0, one_buffer = 0, mapped = 0, two_vectors = 0;
    for (int t = 0; t < 20000; t++) {
        struct gpu_plan_in in = random_plan_in(r);
        struct gpu_plan p;
        int rc = gpu_plan_make(&in, &p, err);
        int want = -1;
        uint64_t want_total = 0, want_chunk = 0;
        for (int i = 0; i < OPTIONS && want < 0; i++)
            if ((want_total = option_fit(&in, i, &want_chunk))) want = i;
        if (want < 0) {
            ASSERT_CODE(rc, CUZK_E_GPU_NOMEM, err);
            ASSERT_STR_CONTAINS(err->msg, "needs at least");
            refused++;
            continue;
        }
        ASSERT_OK(rc, err);
        ASSERT_MSG(p.total <= in.mem, "planned %llu of %llu bytes", (unsigned long long)p.total,
                   (unsigned long long)in.mem);
        ASSERT_EQ_U64(p.total, want_total);
        ASSERT_EQ_U64(p.stream_chunk, want_chunk);
        if (p.key_mode == GPU_KEY_STREAMED) ASSERT_EQ_U64(p.key_bytes, 2 * p.stream_chunk);
        ASSERT_EQ_INT(option_of(&in, &p), want);
        ASSERT_EQ_U64(p.total, (p.shape_mapped ? 0 : in.shape) + p.work_bytes + p.key_bytes +
                                   p.witness_buffers * in.witness);
        fits++;
        streamed += p.key_mode == GPU_KEY_STREAMED;
        one_buffer += p.witness_buffers == 1;
        mapped += p.shape_mapped;
        two_vectors += p.h_vectors == 2;
        /* more memory never gives a slower plan */
        struct gpu_plan q;
        in.mem += rnd(r, 0, 64) * GIB;
        ASSERT_OK(gpu_plan_make(&in, &q, err), err);
        ASSERT(option_of(&in, &q) <= option_of(&in, &p));
        if (option_of(&in, &q) == option_of(&in, &p)) ASSERT(q.stream_chunk >= p.stream_chunk);
    }
    /* the sample covered every outcome */
    ASSERT_MSG(fits > 1000 && refused > 100 && streamed > 100 && one_buffer > 20 && mapped > 20 && two_vectors > 20,
               "coverage: %u fit, %u refused, %u streamed, %u with one witness buffer, %u with mapped "
               "matrices, %u with two h vectors", fits, refused, streamed, one_buffer, mapped, two_vectors);
}

/* PoRep 32 GiB (130,278,869 constraints, 130,169,893 aux; key 47.4 GB) and WindowPoSt 32 GiB
 * (key 56.6 GiB) against an 80 GB card and the memory caps of issue 25. The daemon plans with
 * the packed size of the first witness (512 MiB with its slack for PoRep: 45% zeros, 45% ones);
 * the unpacked size (3.88 GiB) is what a plan made without a witness at hand uses. */
TEST(plan_of_the_32gib_keys)
{
    struct cuzk_error err_s, *err = &err_s;
    struct gpu_plan_in porep = {
        .key = {((1ull << 27) - 1) * 96, 130169893ull * 96, (328ull + 129753292) * 96,
                (1ull + 33112281) * 96, (1ull + 33112281) * 192},
        .shape = 7493647734ull, .domain = 1ull << 27, .witness = 512ull << 20};
    struct gpu_plan p;
    porep.mem = 79ull * GIB;   /* an H100 80 GB after the CUDA context */
    ASSERT_OK(gpu_plan_make(&porep, &p, err), err);
    ASSERT_EQ_INT(p.key_mode, GPU_KEY_RESIDENT);
    ASSERT_EQ_U64(p.witness_buffers, 2);
    ASSERT_EQ_U64(p.h_vectors, 3);
    ASSERT(!p.shape_mapped);
    porep.mem = 64ull * GIB;   /* streamed in whole vectors through three buffers (its 0/1 MSMs
                                * are too short to hide an upload with two), not resident beside
                                * mapped matrices; the third buffer's room costs an h vector */
    ASSERT_OK(gpu_plan_make(&porep, &p, err), err);
    ASSERT_EQ_INT(p.key_mode, GPU_KEY_STREAMED);
    ASSERT(!p.shape_mapped);
    ASSERT_EQ_U64(p.stream_chunk, porep.key[0]);
    ASSERT_EQ_U64(p.witness_buffers, 2);
    ASSERT_EQ_U64(p.h_vectors, 2);
    ASSERT(porep.mem - p.total >= porep.key[0] + GPU_PLAN_THIRD_SPARE);
    porep.mem = 56ull * GIB;   /* streamed in whole vectors (two of h, 12.9 GB) */
    ASSERT_OK(gpu_plan_make(&porep, &p, err), err);
    ASSERT_EQ_INT(p.key_mode, GPU_KEY_STREAMED);
    ASSERT(!p.shape_mapped);
    ASSERT_EQ_U64(p.witness_buffers, 2);
    ASSERT_EQ_U64(p.stream_chunk, porep.key[0]);
    porep.mem = 32ull * GIB;   /* a 32 GB card: streamed in pieces */
    ASSERT_OK(gpu_plan_make(&porep, &p, err), err);
    ASSERT_EQ_INT(p.key_mode, GPU_KEY_STREAMED);
    ASSERT(p.stream_chunk >= GPU_PLAN_MIN_CHUNK && p.stream_chunk < porep.key[1]);
    ASSERT_EQ_U64(p.h_vectors, 3);
    ASSERT(p.total <= porep.mem);
    porep.mem = 24ull * GIB;   /* the matrices stay once the h pipeline takes two vectors */
    ASSERT_OK(gpu_plan_make(&porep, &p, err), err);
    ASSERT_EQ_INT(p.key_mode, GPU_KEY_STREAMED);
    ASSERT(!p.shape_mapped);
    ASSERT_EQ_U64(p.h_vectors, 2);
    ASSERT(p.total <= porep.mem);
    porep.mem = 16ull * GIB;   /* a 16 GB card: matrices in host memory, two h vectors */
    ASSERT_OK(gpu_plan_make(&porep, &p, err), err);
    ASSERT_EQ_INT(p.key_mode, GPU_KEY_STREAMED);
    ASSERT(p.shape_mapped);
    ASSERT_EQ_U64(p.h_vectors, 2);
    ASSERT(p.stream_chunk >= GPU_PLAN_MIN_CHUNK);
    ASSERT(p.total <= porep.mem);
    porep.mem = 12ull * GIB;   /* two h vectors and the twiddles alone are 10 GiB */
    ASSERT_CODE(gpu_plan_make(&porep, &p, err), CUZK_E_GPU_NOMEM, err);
    ASSERT_STR_CONTAINS(err->msg, "may use 12.00 GiB");
    /* planned with the unpacked witness, a 16 GB card is refused */
    porep.witness = (328ull + 130169893) * 32;
    porep.mem = 16ull * GIB;
    ASSERT_CODE(gpu_plan_make(&porep, &p, err), CUZK_E_GPU_NOMEM, err);
    porep.mem = 64ull * GIB;
    ASSERT_OK(gpu_plan_make(&porep, &p, err), err);
    ASSERT_EQ_INT(p.key_mode, GPU_KEY_STREAMED);
    ASSERT(!p.shape_mapped);
    ASSERT_EQ_U64(p.stream_chunk, porep.key[0]);
    porep.mem = 40ull * GIB;   /* whole vectors no longer fit beside two unpacked witnesses */
    ASSERT_OK(gpu_plan_make(&porep, &p, err), err);
    ASSERT_EQ_INT(p.key_mode, GPU_KEY_STREAMED);
    ASSERT(p.stream_chunk < porep.key[0]);

    /* WindowPoSt 32 GiB (docs/circuits.md: 125,279,217 constraints + 25,840 input rows, aux
     * 126,902,376, A-dense aux 96,179,805, B-dense aux 91,925,766, 1,147,216,366 nonzeros): its
     * 56.6 GiB key beside a proof's working set leaves room on an 80 GB card only with the
     * matrices (9.9 GB) in host memory, on the SpMV's critical path; streamed in whole vectors
     * with the matrices on the device instead, each vector's upload hides behind the MSM before */
    struct gpu_plan_in wpost = {
        .key = {((1ull << 27) - 1) * 96, 126902376ull * 96, (25840ull + 96179805) * 96, (1ull + 91925766) * 96,
                (1ull + 91925766) * 192},
        .shape = 3 * (125305057ull + 1) * 8 + 1147216366ull * 6, .domain = 1ull << 27,
        .witness = (25840ull + 126902376) * 32};
    uint64_t wkey = 0;
    for (int k = 0; k < GPU_PLAN_VECTORS; k++) wkey += wpost.key[k];
    /* the params file (60,780,374,232 bytes) less its 888-byte header and 96-byte IC points */
    ASSERT_EQ_U64(wkey, 60780374232ull - 888 - 96ull * 25840);
    wpost.mem = 76ull * GIB;
    ASSERT_OK(gpu_plan_make(&wpost, &p, err), err);
    ASSERT_EQ_INT(p.key_mode, GPU_KEY_STREAMED);
    ASSERT(!p.shape_mapped);
    ASSERT_EQ_U64(p.stream_chunk, wpost.key[4]);
    ASSERT_EQ_U64(p.witness_buffers, 2);
    ASSERT_EQ_U64(p.h_vectors, 3);
    wpost.mem = 130ull * GIB;   /* an H200: resident, matrices on the device */
    ASSERT_OK(gpu_plan_make(&wpost, &p, err), err);
    ASSERT_EQ_INT(p.key_mode, GPU_KEY_RESIDENT);
    ASSERT(!p.shape_mapped);
}

/* ---- several keys on one card (gpu_plan_card_make) ---- */

/* The key vectors of a circuit from its counts (the .params layout: h has domain - 1 points,
 * l one per aux value, a one per A-dense value, b_g1 and b_g2 one per B-dense value; G1 96
 * bytes, G2 192), and the device bytes of its matrices (row pointers of 8 bytes, columns of 4
 * and coefficient indexes of 2 per nonzero, for A, B and C: what gpu_ctx_load_shape uploads). */
static struct gpu_plan_key circuit_key(const char *name, enum gpu_key_class cls, uint64_t constraints,
                                       uint64_t inputs, uint64_t aux, uint64_t a_aux, uint64_t b_inp,
                                       uint64_t b_aux, uint64_t nnz_a, uint64_t nnz_b, uint64_t nnz_c,
                                       uint64_t witness, double lock_s)
{
    struct gpu_plan_key k;
    memset(&k, 0, sizeof k);
    k.name = name;
    k.cls = cls;
    k.domain = 1;
    while (k.domain < constraints) k.domain <<= 1;
    k.key[0] = (k.domain - 1) * 96;
    k.key[1] = aux * 96;
    k.key[2] = (inputs + a_aux) * 96;
    k.key[3] = (b_inp + b_aux) * 96;
    k.key[4] = (b_inp + b_aux) * 192;
    k.shape = 3 * (constraints + 1) * 8 + (nnz_a + nnz_b + nnz_c) * 6;
    k.witness = witness;
    k.lock_s = lock_s;
    return k;
}

/* The 32 GiB circuits of docs/circuits.md (constraints with the input rows, inputs with ONE,
 * aux, densities, nonzeros). Witness as the device holds it: PoRep's packed size with its
 * buffer's slack (measured, 45% zeros and 45% ones), the others unpacked (32 bytes a value: no
 * packed figure yet). Lock times measured on the H100 (docs/performance.md): PoRep and
 * SnapDeals through the daemon (witness staged), WinningPoSt with gpu-circuit, WindowPoSt with
 * gpu-circuit's key streamed in whole vectors (5.04 s) less its witness upload (abc 0.37 s
 * there, ~0.01 s staged). */
static struct gpu_plan_key porep_32g(void)
{
    return circuit_key("porep-32g", GPU_CLASS_THROUGHPUT, 130278869, 328, 130169893, 129753292, 1, 33112281,
                       309405051, 130327340, 282656500, 512ull << 20, 1.066);
}
static struct gpu_plan_key snap_32g(void)
{
    return circuit_key("snap-32g", GPU_CLASS_THROUGHPUT, 81049499 + 5, 5, 80978488, 80743581, 1, 20983607,
                       190374912, 81118127, 172187492, (5ull + 80978488) * 32, 1.031);
}
static struct gpu_plan_key wpost_32g(void)
{
    return circuit_key("wpost-32g", GPU_CLASS_DEADLINE, 125279217, 25840, 126902376, 96179805, 1, 91925766,
                       862416559, 127398015, 157401792, (25840ull + 126902376) * 32, 4.68);
}
static struct gpu_plan_key winning_32g(void)
{
    return circuit_key("winning-32g", GPU_CLASS_DEADLINE, 370590, 133, 375210, 284196, 1, 272184, 2549185,
                       376662, 465300, (133ull + 375210) * 32, 0.0489);
}

static uint64_t sum5(const uint64_t *v) { return v[0] + v[1] + v[2] + v[3] + v[4]; }
static uint64_t max5(const uint64_t *v)
{
    uint64_t m = 0;
    for (int i = 0; i < 5; i++) m = v[i] > m ? v[i] : m;
    return m;
}

/* The test's own reading of a plan against the contract: the peak from the per-key choices
 * (working set N (3 or 2 vectors + twiddles) * 32 + 14 N + 2 GiB, each part at its largest),
 * pieces as large as they may be, and the cost figures; false when it exceeds the memory. */
struct card_score {
    uint64_t peak, tp_tier, tp_bytes, tp_rank, tp_chunk, dl_rank, dl_chunk, kept;
    double dl_latency;
};
static bool card_check(const struct gpu_plan_card_in *in, const struct gpu_plan_card *p, struct card_score *sc)
{
    memset(sc, 0, sizeof *sc);
    uint64_t kept = 0, work = 0, wit = 0, stream = 0;
    for (unsigned i = 0; i < in->n; i++) {
        const struct gpu_plan_key *k = &in->keys[i];
        const struct gpu_plan_card_key *o = &p->k[i];
        if (o->resident) kept += sum5(k->key);
        if (!o->shape_mapped) kept += k->shape;
        uint64_t w = o->h_vectors * k->domain * 32 + k->domain / 2 * 32 + 14 * k->domain + 2 * GIB;
        if (w > work) work = w;
        if (o->witness_buffers * k->witness > wit) wit = o->witness_buffers * k->witness;
    }
    if (kept + work + wit > in->mem) return false;
    for (unsigned i = 0; i < in->n; i++) {
        const struct gpu_plan_key *k = &in->keys[i];
        const struct gpu_plan_card_key *o = &p->k[i];
        if (o->resident) {
            if (o->stream_chunk) return false;
            continue;
        }
        uint64_t room = (in->mem - kept - work - wit) / 2, big = max5(k->key);
        if (o->stream_chunk != (room < big ? room : big)) return false;
        if (o->stream_chunk < GPU_PLAN_MIN_CHUNK && o->stream_chunk < big) return false;
        if (2 * o->stream_chunk > stream) stream = 2 * o->stream_chunk;
    }
    sc->peak = kept + work + wit + stream;
    sc->kept = kept;
    double proof[GPU_PLAN_MAX_KEYS];
    for (unsigned i = 0; i < in->n; i++) {
        const struct gpu_plan_key *k = &in->keys[i];
        const struct gpu_plan_card_key *o = &p->k[i];
        /* the tiers of the header's contract, written out: resident with the matrices on the
         * device, streamed in whole vectors, resident mapped, streamed in pieces, pieces mapped */
        const uint64_t spare = in->mem - sc->peak, big = max5(k->key);
        const bool whole = !o->resident && o->stream_chunk == big &&
                           uploads_hide(k->key, k->witness, spare);
        const uint64_t tier = o->resident ? (o->shape_mapped ? 2 : 0) : o->shape_mapped ? 4 : whole ? 1 : 3;
        /* on the critical path: all but a key streamed in whole vectors */
        uint64_t exposed = (o->resident || whole ? 0 : sum5(k->key)) + (o->shape_mapped ? k->shape : 0);
        uint64_t rank = (o->witness_buffers == 1 ? 2 : 0) + (o->h_vectors == 2 ? 1 : 0);
        proof[i] = k->lock_s + (double)(exposed + (o->witness_buffers == 1 ? k->witness : 0)) / in->pcie_bytes_per_s;
        if (k->cls == GPU_CLASS_THROUGHPUT) {
            sc->tp_tier += tier;
            sc->tp_bytes += (o->resident ? 0 : sum5(k->key)) + (o->shape_mapped ? k->shape : 0);
            sc->tp_rank += rank;
            sc->tp_chunk += o->stream_chunk;
        } else {
            sc->dl_rank += rank;
            sc->dl_chunk += o->stream_chunk;
        }
    }
    for (unsigned i = 0; i < in->n; i++) {
        double wait = 0;
        for (unsigned j = 0; j < in->n; j++)
            if (j != i && proof[j] > wait) wait = proof[j];
        if (in->keys[i].cls == GPU_CLASS_DEADLINE) sc->dl_latency += wait + proof[i];
    }
    return sc->peak <= in->mem;
}

/* -1, 0, 1: a's score is better, equal, worse than b's, in the contract's order */
static int score_cmp(const struct card_score *a, const struct card_score *b)
{
#define CMP_LESS(x, y) if ((x) != (y)) return (x) < (y) ? -1 : 1
    CMP_LESS(a->tp_tier, b->tp_tier);
    CMP_LESS(a->tp_bytes, b->tp_bytes);
    CMP_LESS(a->tp_rank, b->tp_rank);
    CMP_LESS(b->tp_chunk, a->tp_chunk);
    if (a->dl_latency < b->dl_latency - 1e-9) return -1;
    if (a->dl_latency > b->dl_latency + 1e-9) return 1;
    CMP_LESS(a->dl_rank, b->dl_rank);
    CMP_LESS(b->dl_chunk, a->dl_chunk);
    CMP_LESS(a->kept, b->kept);
#undef CMP_LESS
    return 0;
}

/* The best score over every plan, by the test's own walk: each key's placement and options
 * chosen in turn (depth first), every piece size the largest the others leave. */
static void card_best(const struct gpu_plan_card_in *in, struct gpu_plan_card *p, unsigned i, bool *found,
                      struct card_score *best)
{
    if (i == in->n) {
        /* pieces: the largest the fixed parts leave (card_check insists on exactly that) */
        uint64_t kept = 0, work = 0, wit = 0;
        for (unsigned j = 0; j < in->n; j++) {
            const struct gpu_plan_key *k = &in->keys[j];
            const struct gpu_plan_card_key *o = &p->k[j];
            kept += (o->resident ? sum5(k->key) : 0) + (o->shape_mapped ? 0 : k->shape);
            uint64_t w = o->h_vectors * k->domain * 32 + k->domain / 2 * 32 + 14 * k->domain + 2 * GIB;
            work = w > work ? w : work;
            wit = o->witness_buffers * k->witness > wit ? o->witness_buffers * k->witness : wit;
        }
        if (kept + work + wit > in->mem) return;
        for (unsigned j = 0; j < in->n; j++) {
            uint64_t room = (in->mem - kept - work - wit) / 2, big = max5(in->keys[j].key);
            p->k[j].stream_chunk = p->k[j].resident ? 0 : room < big ? room : big;
        }
        struct card_score sc;
        if (!card_check(in, p, &sc)) return;
        if (!*found || score_cmp(&sc, best) < 0) *best = sc;
        *found = true;
        return;
    }
    for (int r = 1; r >= 0; r--)
        for (int m = 0; m < 2; m++)
            for (unsigned wb = 2; wb >= 1; wb--)
                for (unsigned hv = 3; hv >= 2; hv--) {
                    p->k[i].resident = r;
                    p->k[i].shape_mapped = m;
                    p->k[i].witness_buffers = wb;
                    p->k[i].h_vectors = hv;
                    card_best(in, p, i + 1, found, best);
                }
}

TEST(card_plan_of_one_key_is_the_single_key_plan)
{
    struct cuzk_error err_s, *err = &err_s;
    cuzk_rng *r = test_rng();
    unsigned fits = 0, refused = 0;
    for (int t = 0; t < 3000; t++) {
        struct gpu_plan_in in = random_plan_in(r);
        if (in.shape >= sum5(in.key)) in.shape = sum5(in.key) / 2;   /* a real circuit's matrices weigh less */
        struct gpu_plan p;
        int rc = gpu_plan_make(&in, &p, err);
        struct gpu_plan_card_in ci;
        memset(&ci, 0, sizeof ci);
        ci.mem = in.mem;
        ci.pcie_bytes_per_s = 25e9;
        ci.n = 1;
        ci.keys[0].name = "k";
        ci.keys[0].cls = GPU_CLASS_THROUGHPUT;
        memcpy(ci.keys[0].key, in.key, sizeof in.key);
        ci.keys[0].shape = in.shape;
        ci.keys[0].domain = in.domain;
        ci.keys[0].witness = in.witness;
        ci.keys[0].lock_s = 1;
        struct gpu_plan_card c;
        int crc = gpu_plan_card_make(&ci, &c, err);
        if (rc) {
            ASSERT_CODE(crc, CUZK_E_GPU_NOMEM, err);
            ASSERT_STR_CONTAINS(err->msg, "key k");
            refused++;
            continue;
        }
        ASSERT_OK(crc, err);
        ASSERT_EQ_INT(c.k[0].resident, p.key_mode == GPU_KEY_RESIDENT);
        ASSERT_EQ_INT(c.k[0].shape_mapped, p.shape_mapped);
        ASSERT_EQ_U64(c.k[0].witness_buffers, p.witness_buffers);
        ASSERT_EQ_U64(c.k[0].h_vectors, p.h_vectors);
        ASSERT_EQ_U64(c.k[0].stream_chunk, p.stream_chunk);
        ASSERT_EQ_U64(c.peak, p.total);
        ASSERT(c.k[0].wait_s == 0);   /* nothing else uses the card */
        fits++;
    }
    ASSERT_MSG(fits > 500 && refused > 50, "coverage: %u fit, %u refused", fits, refused);
}

TEST(card_plan_never_exceeds_memory_and_is_the_best)
{
    struct cuzk_error err_s, *err = &err_s;
    cuzk_rng *r = test_rng();
    unsigned fits = 0, refused = 0, mixed = 0;
    for (int t = 0; t < 400; t++) {
        struct gpu_plan_card_in in;
        memset(&in, 0, sizeof in);
        in.n = (unsigned)rnd(r, 2, 3);
        in.mem = rnd(r, 2, 160) * GIB + rnd(r, 0, GIB);
        in.pcie_bytes_per_s = (double)rnd(r, 8, 64) * 1e9;
        for (unsigned i = 0; i < in.n; i++) {
            struct gpu_plan_key *k = &in.keys[i];
            k->name = "k";
            k->cls = rnd(r, 0, 1) ? GPU_CLASS_DEADLINE : GPU_CLASS_THROUGHPUT;
            k->domain = 1ull << rnd(r, 18, 27);
            uint64_t pts = k->domain;
            k->key[0] = (pts - 1) * 96;
            k->key[1] = rnd(r, 1, pts) * 96;
            k->key[2] = rnd(r, 1, pts) * 96;
            uint64_t nb = rnd(r, 0, pts);
            k->key[3] = nb * 96;
            k->key[4] = nb * 192;
            k->shape = rnd(r, 0, pts * 64);
            k->witness = rnd(r, 1, pts) * 32;
            k->lock_s = (double)rnd(r, 1, 2000) / 1000;
        }
        struct gpu_plan_card p;
        int rc = gpu_plan_card_make(&in, &p, err);
        struct gpu_plan_card walk;
        memset(&walk, 0, sizeof walk);
        bool found = false;
        struct card_score best;
        card_best(&in, &walk, 0, &found, &best);
        if (!found) {
            ASSERT_CODE(rc, CUZK_E_GPU_NOMEM, err);
            ASSERT_STR_CONTAINS(err->msg, "GiB");
            refused++;
            continue;
        }
        ASSERT_OK(rc, err);
        struct card_score sc;
        ASSERT_MSG(card_check(&in, &p, &sc), "plan does not fit or its pieces are not the largest");
        ASSERT_MSG(sc.peak <= in.mem, "peak %llu of %llu", (unsigned long long)sc.peak, (unsigned long long)in.mem);
        ASSERT_EQ_U64(p.peak, sc.peak);
        ASSERT_EQ_U64(p.kept, sc.kept);
        ASSERT_MSG(score_cmp(&sc, &best) == 0, "the plan is not the best the walk found");
        for (unsigned i = 0; i < in.n; i++) {   /* the reported figures are the plan's */
            double wait = 0;
            for (unsigned j = 0; j < in.n; j++)
                if (j != i && p.k[j].proof_s > wait) wait = p.k[j].proof_s;
            ASSERT(p.k[i].wait_s == wait);
            ASSERT(p.k[i].latency_s == p.k[i].wait_s + p.k[i].proof_s);
        }
        bool res = false, str = false;
        for (unsigned i = 0; i < in.n; i++) res |= p.k[i].resident, str |= !p.k[i].resident;
        mixed += res && str;
        fits++;
    }
    ASSERT_MSG(fits > 100 && refused > 4 && mixed > 20, "coverage: %u fit, %u refused, %u mixed", fits,
               refused, mixed);
}

TEST(card_plan_refuses_bad_input_by_name)
{
    struct cuzk_error err_s, *err = &err_s;
    struct gpu_plan_card_in in;
    memset(&in, 0, sizeof in);
    struct gpu_plan_card p;
    in.mem = 80 * GIB;
    in.pcie_bytes_per_s = 50e9;
    ASSERT_CODE(gpu_plan_card_make(&in, &p, err), CUZK_E_INVALID_ARG, err);
    ASSERT_STR_CONTAINS(err->msg, "0 keys");
    in.n = 1;
    in.keys[0] = porep_32g();
    in.pcie_bytes_per_s = 0;
    ASSERT_CODE(gpu_plan_card_make(&in, &p, err), CUZK_E_INVALID_ARG, err);
    ASSERT_STR_CONTAINS(err->msg, "PCIe rate");
    in.pcie_bytes_per_s = 50e9;
    in.keys[0].domain = 3;
    ASSERT_CODE(gpu_plan_card_make(&in, &p, err), CUZK_E_INVALID_ARG, err);
    ASSERT_STR_CONTAINS(err->msg, "porep-32g");
    ASSERT_STR_CONTAINS(err->msg, "power of two");
    in.keys[0] = porep_32g();
    in.mem = 12 * GIB;   /* two h vectors and the twiddles alone are 10 GiB */
    ASSERT_CODE(gpu_plan_card_make(&in, &p, err), CUZK_E_GPU_NOMEM, err);
    ASSERT_STR_CONTAINS(err->msg, "key porep-32g");
    ASSERT_STR_CONTAINS(err->msg, "needs at least");
}

/* Print a plan the way docs/performance.md's table reads it. */
static void card_print(const char *card, const struct gpu_plan_card_in *in, const struct gpu_plan_card *p)
{
    printf("%s: %.2f GiB usable, PCIe %.0f GB/s: kept %.2f + work %.2f + witness %.2f + streaming %.2f = peak %.2f GiB\n",
           card, in->mem / (double)GIB, in->pcie_bytes_per_s / 1e9, p->kept / (double)GIB, p->work_bytes / (double)GIB,
           p->witness_bytes / (double)GIB, p->stream_bytes / (double)GIB, p->peak / (double)GIB);
    for (unsigned i = 0; i < in->n; i++) {
        const struct gpu_plan_card_key *o = &p->k[i];
        printf("  %-12s key %.2f GiB %s, matrices %.2f GiB %s, %u witness buffer(s) of %.2f GiB, %u h vectors, "
               "pieces %.2f GiB; per proof %.1f GB over PCIe, proof %.3f s, waits <= %.3f s, latency <= %.3f s\n",
               in->keys[i].name, sum5(in->keys[i].key) / (double)GIB, o->resident ? "resident" : "streamed",
               in->keys[i].shape / (double)GIB, o->shape_mapped ? "in host memory" : "on the device", o->witness_buffers,
               in->keys[i].witness / (double)GIB, o->h_vectors, o->stream_chunk / (double)GIB, o->pcie_bytes / 1e9,
               o->proof_s, o->wait_s, o->latency_s);
    }
}

/* The 32 GiB keys on an 80 GB H100 (78 GiB usable after the CUDA context) and on a 24 GB card
 * (23.5 GiB usable), the inputs of docs/performance.md's plan table. */
TEST(card_plan_of_the_32gib_keys)
{
    struct cuzk_error err_s, *err = &err_s;
    struct gpu_plan_card_in h100;
    memset(&h100, 0, sizeof h100);
    h100.mem = 78 * GIB;
    h100.pcie_bytes_per_s = 53.4e9;   /* registered host memory to an H200 (docs/performance.md) */
    h100.n = 3;
    h100.keys[0] = porep_32g();
    h100.keys[1] = wpost_32g();
    h100.keys[2] = snap_32g();
    struct gpu_plan_card p;
    ASSERT_OK(gpu_plan_card_make(&h100, &p, err), err);
    card_print("H100 80 GB", &h100, &p);
    ASSERT(p.peak <= h100.mem);
    /* PoRep, the key proved most, stays with its matrices; SnapDeals is streamed with its
     * matrices kept; WindowPoSt's 56.6 GiB key and 9.2 GiB of matrices fit only streamed, the
     * matrices read from host memory, its 3.8 GiB witness in one buffer */
    ASSERT(p.k[0].resident && !p.k[0].shape_mapped);
    ASSERT(!p.k[2].resident && !p.k[2].shape_mapped);
    ASSERT(!p.k[1].resident && p.k[1].shape_mapped);
    ASSERT_EQ_U64(p.k[1].witness_buffers, 1);
    /* a WindowPoSt proof waits at most for the longest other proof: the streamed SnapDeals one */
    ASSERT(p.k[2].proof_s > p.k[0].proof_s);
    ASSERT(p.k[1].wait_s == p.k[2].proof_s);
    ASSERT(p.k[0].proof_s == porep_32g().lock_s);   /* nothing of PoRep's crosses PCIe */
    h100.n = 4;
    h100.keys[3] = winning_32g();
    struct gpu_plan_card q;
    ASSERT_OK(gpu_plan_card_make(&h100, &q, err), err);
    card_print("H100 80 GB", &h100, &q);
    ASSERT(q.peak <= h100.mem);
    for (unsigned i = 0; i < 3; i++) {   /* WinningPoSt changes nothing for the others */
        ASSERT_EQ_INT(q.k[i].resident, p.k[i].resident);
        ASSERT_EQ_INT(q.k[i].shape_mapped, p.k[i].shape_mapped);
    }
    /* a WinningPoSt proof: its 183 MiB key streamed in whole vectors, after at most one
     * WindowPoSt proof (the longest) */
    ASSERT(!q.k[3].resident);
    ASSERT_EQ_U64(q.k[3].stream_chunk, max5(winning_32g().key));
    ASSERT(q.k[3].wait_s == q.k[1].proof_s);
    ASSERT(q.k[3].proof_s < 0.1);

    struct gpu_plan_card_in c24 = h100;
    c24.mem = 23 * GIB + GIB / 2;
    c24.pcie_bytes_per_s = 25e9;   /* PCIe 4.0 x16 */
    c24.n = 3;
    ASSERT_OK(gpu_plan_card_make(&c24, &p, err), err);
    card_print("24 GB", &c24, &p);
    ASSERT(p.peak <= c24.mem);
    for (unsigned i = 0; i < 3; i++) ASSERT(!p.k[i].resident);   /* no key fits */
    /* alone, PoRep would keep its 7 GiB of matrices on this card; beside WindowPoSt's proof
     * (two h vectors 13.75 GiB, witness 3.8 GiB, pieces) they must go to host memory */
    struct gpu_plan_in alone = {.mem = c24.mem, .shape = c24.keys[0].shape, .domain = c24.keys[0].domain,
                                .witness = c24.keys[0].witness};
    memcpy(alone.key, c24.keys[0].key, sizeof alone.key);
    struct gpu_plan single;
    ASSERT_OK(gpu_plan_make(&alone, &single, err), err);
    ASSERT(!single.shape_mapped);
    ASSERT(p.k[0].shape_mapped);
    ASSERT_EQ_U64(p.k[1].h_vectors, 2);
    c24.n = 4;
    ASSERT_OK(gpu_plan_card_make(&c24, &q, err), err);
    card_print("24 GB", &c24, &q);
    ASSERT(q.peak <= c24.mem);
    ASSERT(q.k[3].wait_s == q.k[1].proof_s);   /* WinningPoSt waits at most for one WindowPoSt proof */

    /* a 16 GB card proves PoRep alone (gpu_plan_make), but not WindowPoSt 32 GiB (two h vectors
     * and its unpacked witness alone are 17.5 GiB): refused, naming the key */
    c24.mem = 16 * GIB;
    ASSERT_CODE(gpu_plan_card_make(&c24, &q, err), CUZK_E_GPU_NOMEM, err);
    ASSERT_STR_CONTAINS(err->msg, "wpost-32g");
}
