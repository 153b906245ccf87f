/* gpu_internal.cuh: what the CUDA translation units share: the context layout, the one
 * CUDA error-checking macro, grow-only scratch buffers and the internal device-pointer entry
 * points (NTT, MSM, sums, SpMV) the prover composes. Only the .cu files include this. */
#ifndef CUZK_GPU_INTERNAL_CUH
#define CUZK_GPU_INTERNAL_CUH

#include <cuda_runtime.h>
#include <pthread.h>
#include <stdint.h>

/* The public headers are C17: map _Static_assert to C++'s and give them C linkage. */
#ifndef _Static_assert
#define _Static_assert static_assert
#endif
extern "C" {
#include "cuzk/gpu.h"
#include "cuzk/util.h"
#include "cuzk/wpack.h"
}
#include "gpu_tuning.h"
#include "curve.cuh"

/* Every CUDA runtime call goes through CK: on failure it fills err with "file:line: call:
 * cudaGetErrorString" and returns CUZK_E_GPU (CUZK_E_GPU_NOMEM for allocation failures). */
int gpu_fail_cuda(struct cuzk_error *err, cudaError_t e, const char *call, const char *file,
                  int line);
#define CK(call)                                                                   \
    do {                                                                           \
        cudaError_t ck_e_ = (call);                                                \
        if (ck_e_ != cudaSuccess) return gpu_fail_cuda(err, ck_e_, #call, __FILE__, __LINE__); \
    } while (0)
/* After a kernel launch: launch-configuration errors surface here. */
#define CK_LAUNCH() CK(cudaGetLastError())

enum gpu_slot {
    /* h pipeline */
    SL_NTT_A, SL_NTT_B, SL_NTT_C,
    /* MSM */
    SL_KEYS0, SL_KEYS1, SL_VALS0, SL_VALS1, SL_CUB, SL_BSTART, SL_BEND,
    SL_PARTIAL, SL_BUCKETS, SL_RED0, SL_RED1, SL_WIN, SL_SMALL,
    /* 0/1 split and prover */
    SL_ONES, SL_FLAGS, SL_TAIL_IDX, SL_TAIL_SC, SL_SUM_PART, SL_W, SL_STREAM_BASES,
    SL_EXTRA, SL_RESULTS, SL_BENCH0, SL_BENCH1, SL_POS, SL_HEAVY, SL_NUM,
    SL_STREAM_BASES2,   /* second and third buffers of the streamed key */
    SL_STREAM_BASES3,
    /* batch-affine MSM rounds: reduced points (ping-pong), prefix products, per-bucket
     * pair counts and output offsets, CUB scan storage, each output's pair of point values */
    SL_AFF_PTS0, SL_AFF_PTS1, SL_AFF_PRE, SL_AFF_CNT, SL_AFF_CUB, SL_AFF_PAIR,
    /* one window per sort: plain scalars as 8 word planes, Booth carry per scalar */
    SL_PLANES, SL_CARRY,
    SL__COUNT
};

/* Pinned staging chunks for pageable host -> device copies: chunk j goes through buffer
 * j % GPU_STAGE_N; ev[b] marks the end of buffer b's last DMA. */
#define GPU_STAGE_N 3
#define GPU_STAGE_CHUNK ((size_t)64 << 20)
enum { GPU_STAGER_MAIN = 0, GPU_STAGER_STREAM = 1, GPU_STAGER_PREFETCH = 2, GPU_STAGERS = 3 };
struct gpu_stager {
    void *buf[GPU_STAGE_N];
    cudaEvent_t ev[GPU_STAGE_N];
    size_t chunk;   /* bytes per buffer in use (GPU_STAGE_CHUNK, or less: test hook) */
};

/* Packed witness (cuzk/wpack.h): the witness travels and stays on the device packed by value
 * class, so a 32 GiB PoRep witness is ~0.5 GiB instead of 3.88: its upload is that much
 * shorter and a second witness buffer fits where an unpacked one did not (decisions.md,
 * "Witnesses packed by value class"). */
struct dwit {
    const wpack_blk *blk;
    const dfr *val;
};
/* A packed witness on the host (pinned, per stager) and its device size. */
struct gpu_wit_packed {
    const wpack_blk *blk;
    const fr_t *val;
    size_t nblk, n_other;
    size_t valoff;   /* device offset of the values: after the blocks, 256-byte aligned */
    size_t bytes;    /* device bytes */
};
struct gpu_wpack_buf {
    wpack_blk *blk;
    size_t blk_cap;
    fr_t *val;
    size_t val_cap;
    uint64_t *group;
    size_t group_cap;
    cudaEvent_t done;   /* end of the last upload from these buffers */
};

/* One device copy of a witness (inputs ++ aux), known by the host pointers and sizes it was
 * uploaded from: READY between gpu_g16_stage_witness and the backend call (or
 * gpu_g16_unstage_witness) that takes it, BUSY while uploading or proving. */
#define GPU_WIT_SLOTS 2
enum { WIT_FREE = 0, WIT_BUSY = 1, WIT_READY = 2 };
struct gpu_wit_slot {
    void *d;
    size_t cap;
    size_t bytes;    /* the packed copy's size (<= cap) */
    size_t valoff;   /* the packed copy's values (struct gpu_wit_packed) */
    int state;
    const void *inputs, *aux;
    size_t n_in, n_aux;
    uint64_t seq;
    cudaEvent_t done;   /* end of the upload on pf_st */
};
struct gpu_ctx {
    int dev;
    int sm_count;
    size_t total_mem;
    cudaStream_t st[3];
    cudaEvent_t ev[4];
    /* grow-only scratch */
    void *slot[SL__COUNT];
    size_t slot_size[SL__COUNT];
    /* Loans (prover.cu msm_loans_give, during its MSMs): device memory dead at that time (the
     * h pipeline's vectors, the shift half of its coset table) that gpu_scratch hands out for
     * named slots instead of their own buffers, when large enough; loan_used marks the slots
     * so served (a used table loan leaves the table stale), loans_taken counts them (tests).
     * msm_reserve, when nonzero, replaces GPU_MSM_RESERVE (what a large window group must
     * leave free) with what the prover knows it still needs; what its 0/1 splits and sums
     * of up to msm_split_pts points (the largest tail piece) still allocate is added to it
     * and binds every group (msm_plan.cu split_reserve). The loans free the memory a
     * card of 80 GB needs beside a resident 32 GiB-PoRep key (decisions.md, "The prover's MSMs
     * borrow the h pipeline's dead memory"). */
    void *loan[SL__COUNT];
    size_t loan_size[SL__COUNT];
    bool loan_used[SL__COUNT];
    uint64_t loans_taken;
    size_t msm_reserve;
    /* the scalars of the MSMs now running are dead after them (the prover's h): their word
     * planes are made in place */
    bool msm_sc_dead;
    uint64_t msm_split_pts;
    /* NTT: tw[e] = omega_{tw_lg}^e for e < 2^(tw_lg-1); coset tables of 2^14 entries each:
     * [0] g^i, [1] g^(2^14 i), [2] g^-i, [3] g^(-2^14 i), [4]/[5] = [1]/[3] times 1/N and
     * [6] = [3] times 1/(N Z) (the h pipeline's unshift) for the domain coset_lg. */
    dfr *tw;
    unsigned tw_lg;
    dfr *coset;
    unsigned coset_lg;
    /* h pipeline: the coset factors of its iNTTs' last passes per position, [0, N) g^rev(j) / N
     * and [N, 2N) g^-rev(j) / (N Z) for N = 2^shift_lg (0: none; ntt.cu coset_full) */
    dfr *shift_tab;
    unsigned shift_lg;
    bool shift_stale;   /* its shift half was lent to the prover's MSMs: rebuild it before use */
    bool h_last_tab;   /* the last h pipeline used shift_tab */
    /* resident proving key (pointer identity) */
    const struct g16_pk *pk;
    void *d_h, *d_l, *d_a, *d_bg1, *d_bg2;
    /* resident shape */
    const struct g16_shape *shape;
    uint64_t *d_rowptr[3];
    uint32_t *d_col[3];
    uint16_t *d_cidx[3];
    dfr *d_coeffs;
    uint32_t *d_a_sel, *d_b_sel;   /* A/B scalar positions in w = inputs ++ aux */
    /* the operator's options (gpu_ctx_set_options): reserve, forced key streaming, tracing */
    struct gpu_options opt;
    size_t free0;                  /* free device memory when the context opened (memory_limit) */
    size_t shape_dev_bytes;        /* the resident shape's device bytes */
    /* the memory plan of the loaded key (gpu_plan.h): 0 before any, else 1 or 2 witness
     * buffers (1: the next witness is not staged ahead) */
    unsigned plan_wit;
    unsigned plan_hvec;            /* and the h pipeline's domain vectors (0 before any: 3) */
    size_t plan_wit_bytes;         /* one witness buffer's room in that plan */
    size_t wit_hint;               /* the device bytes of the witness at hand when the key is
                                    * loaded (its packed size with slack): the plan's unit */
    const struct g16_shape *wit_hint_shape;   /* the circuit wit_hint was measured for */
    /* streamed key (stream.cu): its upload stream */
    cudaStream_t up_st;
    /* MSM window reductions on their own stream (msm.cu, created on first use): window group
     * i's reduction overlaps group i+1's digits, sort and rounds; acc_ev[p] marks group p's
     * buckets complete, red_ev[p] their reduction done (p = group parity) */
    cudaStream_t red_st;
    cudaEvent_t acc_ev[2], red_ev[2];
    struct gpu_stream_stats stream_stats;
    unsigned msm_last_c, msm_last_g;   /* the last MSM's window bits and windows per group */
    unsigned msm_last_aff;             /* and its batch-affine rounds (0: none) */
    unsigned msm_last_parts;           /* the parts it ran in (msm_parts) */
    unsigned sum_last_aff;             /* batch-affine rounds of the last 0/1 sum (0: XYZZ only) */
    bool msm_last_planes;              /* and whether its digits came from word planes */
    /* pinned staging for uploads from pageable memory (gpu_h2d): [GPU_STAGER_MAIN] for the
     * caller's thread (witness, key and shape loads), [GPU_STAGER_STREAM] for the streamed
     * key's helper thread, so both can upload at once */
    struct gpu_stager stage[GPU_STAGERS];
    /* witness buffers (witness.cu): the backend proves from one while gpu_g16_stage_witness
     * uploads the next proof's witness into the other from another thread (its own stream
     * pf_st and stager). wit_mu guards the table; pf_mu admits one prefetch at a time. */
    pthread_mutex_t wit_mu, pf_mu;
    struct gpu_wit_slot wit[GPU_WIT_SLOTS];
    uint64_t wit_seq;          /* stage order (the oldest ready slot is evicted first) */
    cudaStream_t pf_st;
    uint64_t proofs;           /* backend calls that succeeded (under wit_mu) */
    bool last_wit_staged;      /* the last backend call found its witness staged */
    size_t stream_chunk;       /* a streamed key's piece size from the memory plan (0: whole vectors) */
    char plan_refused[CUZK_ERR_MSG_MAX]; /* why no plan fits the loaded key ("" if one does) */
    /* the resident shape's rows too long for one thread each, per matrix (spmv.cu) */
    uint32_t *d_long[3];
    uint32_t n_long[3];
    uint64_t spmv_lim;         /* their bound: longer than this (spmv.long when listed) */
    struct gpu_wpack_buf wpack[GPU_STAGERS];   /* pinned packing buffers per stager (witness.cu) */
    size_t wit_cur_bytes;      /* the packed bytes of the witness being proved */
    /* the constraint matrices (row_ptr, col, coeff_idx of A, B, C) on the device take
     * shape_mat_bytes; when the memory plan maps them (shape_mapped), they live in pinned host
     * memory h_mat instead and d_rowptr / d_col / d_cidx are its device addresses */
    size_t shape_mat_bytes;
    bool shape_mapped;
    void *h_mat[3][3];
};

#define COSET_TAB 16384u

/* Every scratch slot given back (after a call that ran out of device memory: the retry plans
 * its scratch again from what is free then, not beside the failed call's buffers). */
void gpu_scratch_release(struct gpu_ctx *ctx);
/* Scratch slot of at least `bytes` (contents not preserved on growth). */
int gpu_scratch(struct gpu_ctx *ctx, enum gpu_slot s, size_t bytes, void **out,
                struct cuzk_error *err);
/* What gpu_scratch allocates for a request of `bytes` where memory allows: at least 1 MiB, and
 * 1/16 more (at most 256 MiB) so that slightly larger later requests reuse the buffer. The
 * MSM plan counts this size, not the request: the slack of a split's three buffers was what a
 * tight card lacked for the sum after them. */
static inline size_t gpu_scratch_size(size_t bytes)
{
    const size_t slack = bytes / 16 < ((size_t)256 << 20) ? bytes / 16 : ((size_t)256 << 20);
    return bytes < ((size_t)1 << 20) ? ((size_t)1 << 20) : bytes + slack;
}
/* What gpu_mem_check leaves free beside every allocation: CUDA's own allocations (module data,
 * CUB, streams). */
#define GPU_MEM_MARGIN ((size_t)64 << 20)
/* Free device memory the backend may take: cudaMemGetInfo's figure less the operator's
 * reserve (gpu_options.reserve_bytes). */
int gpu_mem_usable(struct gpu_ctx *ctx, size_t *free_b, struct cuzk_error *err);
/* Checked cudaMalloc: cudaMemGetInfo first, clear CUZK_E_GPU_NOMEM message. */
int gpu_malloc(struct gpu_ctx *ctx, void **p, size_t bytes, const char *what,
               struct cuzk_error *err);
int gpu_set_device(struct gpu_ctx *ctx, struct cuzk_error *err);
/* Lazily create the upload stream (ctx.cu). */
int gpu_stream_prepare(struct gpu_ctx *ctx, struct cuzk_error *err);
/* True when [p, p + bytes) is page-locked host memory (cudaMallocHost or cudaHostRegister). */
bool gpu_host_is_pinned(const void *p, size_t bytes);
/* Host -> device copy of n bytes, ordered on stream st. Pinned sources: one asynchronous DMA
 * (the caller keeps the source alive until st reaches this point). Pageable sources: staged
 * through stager `which` (GPU_STAGER_*): the copies into the pinned chunks run on the shared
 * CPU pool in parallel while the previous chunk's DMA is in flight; returns once the source
 * has been read. *staged (nullable) is set when the staging path was taken. */
int gpu_h2d(struct gpu_ctx *ctx, int which, void *d, const void *h, size_t n, cudaStream_t st,
            bool *staged, struct cuzk_error *err);
/* Witness w = inputs ++ aux of shape s (witness.cu): gpu_wit_bytes is its unpacked size;
 * gpu_wit_pack packs it into stager `which`'s pinned buffers (on the CPU pool; waits for their
 * last upload), gpu_wit_put copies a packing to device buffer d (p->bytes) on st. */
size_t gpu_wit_bytes(const struct g16_shape *s);
int gpu_wit_pack(struct gpu_ctx *ctx, int which, const struct g16_shape *s, const struct g16_assignment *w,
                 struct gpu_wit_packed *p, struct cuzk_error *err);
int gpu_wit_put(struct gpu_ctx *ctx, int which, void *d, const struct gpu_wit_packed *p, cudaStream_t st,
                struct cuzk_error *err);
static inline dwit gpu_wit_dev(const void *d, size_t valoff)
{
    dwit w = {(const wpack_blk *)d, (const dfr *)((const char *)d + valoff)};
    return w;
}
void gpu_wpack_free(struct gpu_ctx *ctx);
/* The witness buffers (witness.cu), for the backend (prover.cu). Under wit_mu: the staged
 * copy of w, or NULL. */
struct gpu_wit_slot *gpu_wit_staged(struct gpu_ctx *ctx, const struct g16_shape *s, const struct g16_assignment *w);
/* A witness buffer's allocation for a packing of `bytes` (room to spare: packings vary). */
size_t gpu_wit_alloc_size(size_t bytes);
/* The backend's witness on the device (*out, BUSY): the staged copy of w (st waits for its
 * upload), else a buffer filled on st from *packed (nullable: packed here). */
int gpu_wit_acquire(struct gpu_ctx *ctx, const struct g16_shape *s, const struct g16_assignment *w,
                    const struct gpu_wit_packed *packed, cudaStream_t st, struct gpu_wit_slot **out,
                    struct cuzk_error *err);
/* Frees slot k after the proof (proved: counts it in ctx->proofs). */
void gpu_wit_release(struct gpu_ctx *ctx, struct gpu_wit_slot *k, bool proved);

/* ---- NTT (ntt.cu); v on device, stream st ---- */
int gpu_ntt_prepare(struct gpu_ctx *ctx, unsigned lg, struct cuzk_error *err);
/* One transform of v. out NULL: in place, left bit-reversed unless natural_out (then the
 * bit-reversal pass); out non-NULL: out of place into out in natural order, v clobbered.
 * The library's transforms and the NTT benchmarks (bench/ntt_bench.cu) run through it. */
int gpu_ntt_run(struct gpu_ctx *ctx, dfr *v, dfr *out, unsigned lg, bool inverse, bool coset,
                bool natural_out, cudaStream_t st, struct cuzk_error *err);
/* Writes c's 2^lg values (zero-padded) into the buffer c on stream st: the two-vector h
 * pipeline calls it once a = a b has freed b. */
typedef int (*gpu_make_c)(void *arg, dfr *c, cudaStream_t st, struct cuzk_error *err);
/* h pipeline on device buffers of 2^lg entries (a, b, c zero-padded); *h = the buffer that
 * holds h's coefficients on return (b, or a for lg = 0 and for two vectors); all are
 * clobbered. c NULL: two vectors, c made by make_c(arg, b, ...) after a = a b (the memory
 * plan's h_vectors = 2). */
int gpu_compute_h_dev(struct gpu_ctx *ctx, dfr *a, dfr *b, dfr *c, unsigned lg, dfr **h,
                      gpu_make_c make_c, void *arg, struct cuzk_error *err);

/* ---- MSM and sums (msm.cu); all on stream st ----
 * The MSMs write out (host memory) and return with st synchronised: the last step, the
 * Horner pass over the window sums, runs on the CPU. idx (nullable): point index of scalar i
 * (else i). extra (nullable): device XYZZ point added to the result. */
int gpu_g1_msm_dev(struct gpu_ctx *ctx, g1_jac_t *out, const g1a_d *bases,
                   const dfr *scalars, const uint32_t *idx, size_t n, const g1x_d *extra,
                   cudaStream_t st, struct cuzk_error *err);
int gpu_g2_msm_dev(struct gpu_ctx *ctx, g2_jac_t *out, const g2a_d *bases,
                   const dfr *scalars, const uint32_t *idx, size_t n, const g2x_d *extra,
                   cudaStream_t st, struct cuzk_error *err);
/* out (device XYZZ) = sum of bases[i] with bit i of the u32 bitmap set. */
int gpu_g1_sum_bitmap_dev(struct gpu_ctx *ctx, g1x_d *out, const g1a_d *bases,
                          const uint32_t *bitmap, size_t n, cudaStream_t st,
                          struct cuzk_error *err);
int gpu_g2_sum_bitmap_dev(struct gpu_ctx *ctx, g2x_d *out, const g2a_d *bases,
                          const uint32_t *bitmap, size_t n, cudaStream_t st,
                          struct cuzk_error *err);
/* ---- SpMV (spmv.cu): out = M . w for the resident shape's matrix m (0 = A, 1 = B, 2 = C) */
int gpu_spmv_dev(struct gpu_ctx *ctx, dfr *out, int m, dwit w, cudaStream_t st,
                 struct cuzk_error *err);
/* At shape load: list the long rows (*bytes: their device bytes); unload frees them. */
int gpu_spmv_prepare(struct gpu_ctx *ctx, const struct g16_shape *s, size_t *bytes, struct cuzk_error *err);
void gpu_spmv_unload(struct gpu_ctx *ctx);

/* The resident shape and the memory plan of the resident key, set aside while a proof of
 * another circuit runs beside the resident key (gpu_g16_backend_beside, ctx.cu): the context
 * then holds no shape, the other circuit's is loaded as if it were the only one, and
 * gpu_shape_put_back unloads it and puts the resident one back as it was. */
struct gpu_shape_state {
    const struct g16_shape *shape;
    uint64_t *d_rowptr[3];
    uint32_t *d_col[3];
    uint16_t *d_cidx[3];
    dfr *d_coeffs;
    uint32_t *d_a_sel, *d_b_sel;
    uint32_t *d_long[3];
    uint32_t n_long[3];
    uint64_t spmv_lim;
    size_t shape_dev_bytes, shape_mat_bytes;
    bool shape_mapped;
    void *h_mat[3][3];
    unsigned plan_wit, plan_hvec;
    size_t plan_wit_bytes, stream_chunk, wit_hint;
    const struct g16_shape *wit_hint_shape;
};
void gpu_shape_set_aside(struct gpu_ctx *ctx, struct gpu_shape_state *st);
void gpu_shape_put_back(struct gpu_ctx *ctx, const struct gpu_shape_state *st);
/* The loaded shape's matrices to pinned host memory, read by the SpMV over PCIe (the plan's
 * shape_mapped). */
int gpu_shape_map_host(struct gpu_ctx *ctx, struct cuzk_error *err);
/* What gpu_ctx_load_shape allocates for s on the device: *matrices (row pointers, columns,
 * coefficient indexes: what the plan may map to host memory) and the rest (the coefficient
 * table and the A/B positions; the SpMV's long-row lists come on top, a few MiB). */
void gpu_shape_bytes(const struct g16_shape *s, size_t *matrices, size_t *rest);

static inline size_t gpu_div_up(size_t a, size_t b) { return (a + b - 1) / b; }

#endif
