/* test_snap_proof.c: a SnapDeals 2 KiB update proved end to end through the library, as
 * `cuzk-bench prove --kind snap` and the daemon's kind do it: generated vanilla proof
 * (snap_gen.h) -> parse -> native check -> parallel witness -> Groth16 proof with a local
 * setup (snap_fixture.h, shared with the daemon test) -> verified with the .vk read back from
 * disk against public inputs recomputed from (k, h, the three commitments) alone; the proof
 * must not verify for another partition index or another comm_r_new. */
#include "cuzk/snap_gen.h"
#include "cuzk/vanilla.h"
#include "filecoin/snap_fixture.h"

static struct cuzk_error g_err;
static struct cuzk_error *E = &g_err;

TEST_T(snap_2k_generated_update_proves_and_verifies, 900)
{
    snap_fixture_skip_if_slow();
    struct param_fixture fx;
    snap_fixture_get(&fx, 2048);
    struct fil_snap_gen g;
    ASSERT_OK(fil_snap_generate(&g, 2048, test_seed(), E), E);
    ASSERT_EQ_U64(g.partitions, 1);
    fr_t ro, rn, dn;
    ASSERT_OK(fil_snap_commitment(&ro, g.comm_r_old, 32, "comm_r_old", E), E);
    ASSERT_OK(fil_snap_commitment(&rn, g.comm_r_new, 32, "comm_r_new", E), E);
    ASSERT_OK(fil_snap_commitment(&dn, g.comm_d_new, 32, "comm_d_new", E), E);
    struct fil_snap_partition_proof p;
    ASSERT_OK(fil_snap_partition_proof_parse(&p, &g.cfg, g.blob[0], g.len[0], 0, E), E);
    ASSERT_OK(fil_snap_partition_check(&g.cfg, &p, 0, g.h, &ro, &dn, &rn, E), E);

    struct g16_pk pk;
    struct g16_shape s;
    ASSERT_OK(g16_params_read(&pk, fx.params, G16_VALIDATE_NONE, pool_default(), E), E);
    ASSERT_OK(g16_shape_load(&s, fx.shape, E), E);
    fr_t *in, *aux;
    uint32_t n_in, n_aux;
    ASSERT_OK(fil_snap_witness_values(&in, &aux, &n_in, &n_aux, &g.cfg, &p, 0, g.h, &ro, &dn, &rn, pool_default(), E),
              E);
    ASSERT_EQ_U64(n_in, s.n_inputs);
    ASSERT_EQ_U64(n_aux, s.n_aux);
    struct g16_assignment w = {in, aux};
    struct g16_proof proof;
    uint64_t t0 = cuzk_now_ns();
    ASSERT_OK(g16_prove(&proof, &s, &pk, &w, 1, NULL, NULL, g16_backend_cpu, NULL, NULL, E), E);
    printf("SnapDeals 2 KiB partition proved on the CPU in %.1f s\n", (double)(cuzk_now_ns() - t0) / 1e9);
    uint8_t bytes[G16_PROOF_BYTES];
    g16_proof_to_bytes(bytes, &proof);
    ASSERT_OK(g16_proof_from_bytes(&proof, bytes, E), E);

    struct g16_vk vk;
    ASSERT_OK(g16_vk_read(&vk, fx.vk, E), E);
    struct g16_pvk *pvk = g16_pvk_new(&vk, E);
    ASSERT_MSG(pvk, "%s", E->msg);
    fr_t pub[4];
    ASSERT_OK(snap_public_inputs(pub, &g.cfg, 0, g.h, &ro, &dn, &rn, E), E);
    ASSERT_OK(g16_verify(pvk, &proof, pub, 4, E), E);
    /* k_and_h_select of 2 KiB is 1 (k 0, h_select index 0): another value must fail */
    fr_add(&pub[0], &pub[0], &FR_ONE);
    ASSERT_CODE(g16_verify(pvk, &proof, pub, 4, E), CUZK_E_VERIFY_FAILED, E);
    ASSERT_OK(snap_public_inputs(pub, &g.cfg, 0, g.h, &ro, &dn, &rn, E), E);
    fr_add(&pub[3], &pub[3], &FR_ONE);
    ASSERT_CODE(g16_verify(pvk, &proof, pub, 4, E), CUZK_E_VERIFY_FAILED, E);

    g16_pvk_free(pvk);
    g16_vk_free(&vk);
    cuzk_free(in);
    cuzk_free(aux);
    g16_pk_free(&pk);
    g16_shape_free(&s);
    fil_snap_partition_proof_free(&p);
    fil_snap_gen_free(&g);
}
