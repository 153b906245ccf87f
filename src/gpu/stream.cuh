/* stream.cuh: the streamed key (stream.cu), shared by stream.cu and prover.cu only. A helper
 * thread uploads the five key vectors in proof order (h, l, a,
 * b_g1, b_g2), in pieces of at most the memory plan's stream_chunk bytes (whole vectors when
 * the card has room for two of the largest), into nbuf (1..3) device buffers on ctx->up_st;
 * piece i goes to buffer i % nbuf once piece i - nbuf has been consumed, and each MSM runs
 * per piece and adds the results. Pageable host memory goes through the two pinned staging
 * chunks (memcpy into chunk j % 2 while chunk j - 1 is in DMA); pinned host memory is copied
 * directly. Hand-over is host-side (mutex + condition): the prover thread synchronises its
 * stream after every MSM anyway (lap), so "consumed" is exact. */
#ifndef CUZK_GPU_STREAM_CUH
#define CUZK_GPU_STREAM_CUH

#include "gpu_internal.cuh"

#define NVEC G16_PK_VECTORS

#define STREAM_MAX_PIECES 512

struct streamer {
    struct gpu_ctx *ctx;
    void *host[NVEC];
    size_t bytes[NVEC];
    /* Pieces, in proof order: vector k is pieces [first[k], first[k + 1]), each at most the
     * memory plan's stream_chunk bytes (whole vectors when two of the largest fit); piece i
     * of vector k holds its points [off[i], off[i] + pts[i]) and goes to buffer i % nbuf. */
    int npieces, first[NVEC + 1], vec[STREAM_MAX_PIECES];
    size_t off[STREAM_MAX_PIECES], pts[STREAM_MAX_PIECES], psize[NVEC];
    void *dev[3];
    size_t buf_bytes;   /* each of dev[0..nbuf) */
    int nbuf;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int ready;      /* pieces [0, ready) are on the device */
    int consumed;   /* pieces [0, consumed) have been used by their MSM */
    bool go;        /* uploads may begin (gpu_stream_go) */
    bool stop;
    int rc;
    struct cuzk_error err;
    uint64_t t_start, t_end;
    uint64_t wait_ns;   /* prover thread blocked in gpu_stream_bases */
    bool staged;
    pthread_t th;
    bool started;
};

/* Allocate the buffers (one to three) and start the helper thread. */
int gpu_stream_start(struct streamer *sm, struct gpu_ctx *ctx, const struct g16_pk *pk,
                     struct cuzk_error *err);
/* The helper thread may begin uploading (no-op for sm NULL): at once, or with
 * stream.after_wit once the witness is on the device, so that the witness, which the first
 * kernels need, does not share PCIe with key pieces that only the H MSM needs. */
void gpu_stream_go(struct streamer *sm);
/* The pieces of vector k: [*i0, *i1) (sm NULL, the key resident: one piece, index k). */
void gpu_stream_pieces(const struct streamer *sm, int k, int *i0, int *i1);
/* Device bases of piece i (sm NULL: the resident vector), once uploaded; *off, *n: its
 * points; the time waited is added to *wait_ns. */
int gpu_stream_bases(struct streamer *sm, int i, const void **d, const void *resident, uint64_t n_all,
                     uint64_t *off, uint64_t *n, uint64_t *wait_ns, struct cuzk_error *err);
/* Piece i's MSM is done: its buffer may take a later piece (no-op for sm NULL). */
void gpu_stream_consumed(struct streamer *sm, int i);
/* A buffer that no piece from i on goes to (sm NULL or none: NULL): its last piece was consumed
 * before piece i's MSM, and nothing more is uploaded into it. */
void *gpu_stream_idle_buffer(const struct streamer *sm, int i);
/* Stop and join the helper thread (no-op when it was not started). */
void gpu_stream_stop(struct streamer *sm);

#endif
