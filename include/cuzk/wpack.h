/* wpack.h: a witness packed by value class, the form in which the GPU prover uploads and keeps
 * a witness (pure C, tested on the CPU; the device reads it with the same inline accessors).
 *
 * A Groth16 witness of a Filecoin circuit is mostly zeros and ones (a 32 GiB PoRep partition:
 * 45% and 45% of its 130 M values). The values w[0 .. n) (inputs, then aux) are cut into
 * blocks of 32; each block is a 16-byte record: 2 bits per value (WPACK_ZERO, WPACK_ONE,
 * WPACK_OTHER; value j of the block at bits 2j, 2j+1) and `pre`, the number of other values in
 * all earlier blocks. The other values follow in order, so value i of class OTHER is
 * val[wpack_rank(blk + i / 32, i)]. A 32 GiB PoRep witness is 3.88 GiB as Fr values and ~0.5
 * GiB packed; a witness without zeros or ones costs 1/64 more than unpacked. */
#ifndef CUZK_WPACK_H
#define CUZK_WPACK_H

#include <stddef.h>
#include <stdint.h>

#include "cuzk/ff.h"

#ifdef __CUDACC__
#define WPACK_INLINE __host__ __device__ __forceinline__
#else
#define WPACK_INLINE static inline
#endif

#define WPACK_ZERO 0u
#define WPACK_ONE 1u
#define WPACK_OTHER 2u
#define WPACK_GROUP 4096u   /* blocks per packing task: 2^17 values, 4 MiB of witness */

struct wpack_blk {
    uint64_t bits;
    uint32_t pre;
    uint32_t pad;   /* zero */
};

/* the class of value i (its block is b = blk + i / 32) */
WPACK_INLINE unsigned wpack_class(const struct wpack_blk *b, uint32_t i)
{
    return (unsigned)(b->bits >> (2 * (i & 31))) & 3u;
}

/* the index in the other values of value i, of class WPACK_OTHER (its block b) */
WPACK_INLINE uint32_t wpack_rank(const struct wpack_blk *b, uint32_t i)
{
    const uint64_t below = b->bits & 0xaaaaaaaaaaaaaaaaull & ((1ull << (2 * (i & 31))) - 1);
#ifdef __CUDA_ARCH__
    return b->pre + (uint32_t)__popcll(below);
#else
    return b->pre + (uint32_t)__builtin_popcountll(below);
#endif
}

WPACK_INLINE uint64_t wpack_blocks(uint64_t n) { return (n + 31) / 32; }
WPACK_INLINE uint64_t wpack_groups(uint64_t n) { return (wpack_blocks(n) + WPACK_GROUP - 1) / WPACK_GROUP; }

#ifdef __cplusplus
extern "C" {
#endif

struct pool;

/* The witness w = in[0 .. n_in) ++ aux[0 .. n_aux) (n_in + n_aux < 2^32), packed in two passes
 * over groups of WPACK_GROUP blocks, in parallel on pool (NULL: this thread):
 * wpack_classify writes the blk[wpack_blocks(n)] records with `pre` counted within each group
 * and group[wpack_groups(n)] the groups' offsets, and returns the number of other values;
 * wpack_fill then completes `pre` and copies the other values into val[that many]. */
uint64_t wpack_classify(struct wpack_blk *blk, uint64_t *group, const fr_t *in, uint64_t n_in,
                        const fr_t *aux, uint64_t n_aux, struct pool *pool);
void wpack_fill(fr_t *val, struct wpack_blk *blk, const uint64_t *group, const fr_t *in, uint64_t n_in,
                const fr_t *aux, uint64_t n_aux, struct pool *pool);

/* value i of a packed witness (the host's reading, as the device does it) */
void wpack_get(fr_t *out, const struct wpack_blk *blk, const fr_t *val, uint32_t i);

#ifdef __cplusplus
}
#endif

#endif
