/* test_gpu_plan.c: the GPU memory plan (gpu_plan.h) over many (card, key, witness) sizes: it
 * never plans more than the memory it was given, it picks the fastest option that fits (an
 * exhaustive check of the eight options, written here from the header's contract), and the
 * 32 GiB PoRep and WindowPoSt keys land where the GPU runs showed they must. */
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
    if (tier == 1 && c < big) return 0;
    if (c < big && c < GPU_PLAN_MIN_CHUNK) return 0;
    *chunk = c;
    return fixed + 2 * c;
}

static int option_of(const struct gpu_plan_in *in, const struct gpu_plan *p)
{
    uint64_t big = 0;
    for (int k = 0; k < GPU_PLAN_VECTORS; k++)
        if (in->key[k] > big) big = in->key[k];
    int tier = p->key_mode == GPU_KEY_RESIDENT ? (p->shape_mapped ? 2 : 0)
             : p->shape_mapped                ? 4
             : p->stream_chunk == big         ? 1
                                              : 3;
    return tier * 4 + (p->witness_buffers == 1) * 2 + (p->h_vectors == 2);
}

TEST(plan_never_exceeds_memory_and_picks_the_fastest_fit)
{
    struct cuzk_error err_s, *err = &err_s;
    cuzk_rng *r = test_rng();
    unsigned fits = 0, refused = 0, streamed = 0, one_buffer = 0, mapped = 0, two_vectors = 0;
    for (int t = 0; t < 20000; t++) {
        struct gpu_plan_in in;
        memset(&in, 0, sizeof in);
        unsigned lg = (unsigned)rnd(r, 10, 28);
        in.domain = 1ull << lg;
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
    porep.mem = 64ull * GIB;   /* streamed in whole vectors, not resident beside mapped matrices */
    ASSERT_OK(gpu_plan_make(&porep, &p, err), err);
    ASSERT_EQ_INT(p.key_mode, GPU_KEY_STREAMED);
    ASSERT(!p.shape_mapped);
    ASSERT_EQ_U64(p.stream_chunk, porep.key[0]);
    ASSERT_EQ_U64(p.witness_buffers, 2);
    ASSERT_EQ_U64(p.h_vectors, 3);
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
