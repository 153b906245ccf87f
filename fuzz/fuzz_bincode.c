/* fuzz_bincode.c: libFuzzer target for the bincode vanilla-proof readers (vanilla.h). Byte 0
 * picks the format and sector size (0-3: FallbackPoStSectorProof for WindowPoSt 2 KiB,
 * WinningPoSt 2 KiB, WindowPoSt 32 GiB, WindowPoSt 64 GiB; 4-7: SnapDeals PartitionProof for
 * 2 KiB, 8 MiB, 32 GiB, 64 GiB); the rest is the blob. An accepted blob is turned into its
 * witness (post partition / snap witness) and the parsed indices are range-checked; an accepted
 * blob also goes through its native check (fil_post_sector_proof_check, fil_snap_partition_check). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cuzk/gadgets.h"
#include "cuzk/vanilla.h"
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const uint64_t SIZES[4] = {2048, 2048, 32ull << 30, 64ull << 30};
static const uint64_t SNAP_SIZES[4] = {2048, 8ull << 20, 32ull << 30, 64ull << 30};

static void fuzz_post(unsigned sel, const uint8_t *d, size_t n)
{
    struct post_config c;
    struct cuzk_error e = {0};
    if (post_config_for_size(&c, sel == 1 ? POST_WINNING : POST_WINDOW, SIZES[sel], &e)) abort();
    struct fil_post_sector_proof p;
    int rc = fil_post_sector_proof_parse(&p, &c, d, n, 0, &e);
    fuzz_check_err(rc, &e);
    if (rc) {
        if (p.arena) abort();       /* zeroed on failure */
        return;
    }
    for (unsigned i = 0; i < p.challenges; i++)
        if (p.leaf_index[i] >> c.nodes_log2) abort();
    struct fil_post_partition part;
    rc = fil_post_partition_build(&part, &c, &p, 1, &e);
    fuzz_check_err(rc, &e);
    if (rc) abort();                /* one parsed sector always fits its own config */
    fil_post_partition_free(&part);
    /* the native check of an accepted sector (registered proofs Window V1_1 / Winning, Go
     * numbering) may only refuse it as inconsistent */
    static const uint64_t GO_ID[4] = {10, 0, 13, 14};
    static const uint8_t rnd[32];
    rc = fil_post_sector_proof_check(fil_post_proof_by_id(GO_ID[sel]), &p, rnd, 0, 0, &e);
    fuzz_check_err(rc, &e);
    if (rc && rc != CUZK_E_FORMAT) abort();
    fil_post_sector_proof_free(&p);
}

static void fuzz_snap(unsigned sel, const uint8_t *d, size_t n)
{
    struct snap_config c;
    struct cuzk_error e = {0};
    if (snap_config_for_size(&c, SNAP_SIZES[sel], &e)) abort();
    struct fil_snap_partition_proof p;
    int rc = fil_snap_partition_proof_parse(&p, &c, d, n, 0, &e);
    fuzz_check_err(rc, &e);
    if (rc) {
        if (p.arena) abort();
        return;
    }
    for (unsigned i = 0; i < p.challenges; i++)
        if (p.node[i] >> c.nodes_log2) abort();
    struct snap_witness w;
    fr_t z = {0};
    rc = fil_snap_witness_fill(&w, &c, &p, 0, snap_h_default(&c), &z, &z, &z, &e);
    fuzz_check_err(rc, &e);
    if (rc && rc != CUZK_E_FORMAT) abort();     /* only inconsistent partition paths */
    /* the native check against commitments taken from the blob itself (so it gets past the
     * commitment step): it may only accept, or refuse with CUZK_E_FORMAT */
    const struct poseidon_consts *p2 = poseidon_consts_get(2, &e);
    if (!p2) abort();
    fr_t in[2] = {p.comm_c, p.root_r_old[0]}, ro, rn;
    poseidon_hash(&ro, p2, in);
    in[1] = p.root_r_new[0];
    poseidon_hash(&rn, p2, in);
    rc = fil_snap_partition_check(&c, &p, 0, snap_h_default(&c), &ro, &p.root_d[0], &rn, &e);
    fuzz_check_err(rc, &e);
    if (rc && rc != CUZK_E_FORMAT) abort();
    fil_snap_partition_proof_free(&p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    unsigned sel = data[0] & 7;
    if (sel < 4) fuzz_post(sel, data + 1, size - 1);
    else fuzz_snap(sel - 4, data + 1, size - 1);
    return 0;
}
