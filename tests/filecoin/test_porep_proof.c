/* test_porep_proof.c: PoRep C2 end to end on the CPU: an 8 MiB generated C1's witness
 * satisfies the 8 MiB shape (g16_check) and equals the sequential witness byte for byte, and
 * a 2 KiB proof made with a local setup (porep_fixture.h, shared with the daemon test)
 * verifies against the public inputs recomputed from the C1's (replica_id, seed, comm_d,
 * comm_r) with the .vk read from disk, and fails for other inputs. */
#include "cuzk/filecoin.h"
#include "cuzk/gadgets.h"
#include "cuzk/groth16.h"
#include "cuzk/util.h"
#include "filecoin/porep_fixture.h"
#include "filecoin/porep_witness_oracle.h"
#include "test.h"

static double secs(uint64_t t0) { return (double)(cuzk_now_ns() - t0) / 1e9; }

/* Partition k of c: the allocated inputs equal the recomputed ones, and every row holds. */
static void check_partition(const struct g16_shape *s, const struct fil_c1 *c, unsigned k)
{
    struct cuzk_error err_s = {0}, *err = &err_s;
    fr_t *in, *aux;
    uint32_t n_in, n_aux;
    uint64_t t0 = cuzk_now_ns();
    ASSERT_OK(fil_porep_witness_values(&in, &aux, &n_in, &n_aux, c, k, err), err);
    double wit_s = secs(t0);
    ASSERT_EQ_U64(n_in, s->n_inputs);
    ASSERT_EQ_U64(n_aux, s->n_aux);
    size_t ni = fil_porep_num_inputs(c->proof);
    fr_t *pub = malloc(ni * sizeof *pub);
    ASSERT_OK(fil_porep_public_inputs(pub, c->proof, c->replica_id, c->comm_d, c->comm_r, c->seed, k,
                                      err), err);
    for (size_t i = 0; i < ni; i++) ASSERT_MSG(fr_eq(&pub[i], &in[1 + i]), "public input %zu differs", i);
    struct g16_assignment a = {in, aux};
    t0 = cuzk_now_ns();
    ASSERT_OK(g16_check(s, &a, pool_default(), err), err);
    printf("partition %u: witness %.2f s, check %.2f s\n", k, wit_s, secs(t0));
    free(pub);
    cuzk_free(in);
    cuzk_free(aux);
}

TEST(porep_8m_witness_satisfies_shape)
{
    struct cuzk_error err_s = {0}, *err = &err_s;
    const struct fil_seal_proof *p = fil_seal_proof_by_name("StackedDrg8MiBV1_1");
    ASSERT(p);
    struct porep_config cfg;
    ASSERT_OK(porep_config_for_size(&cfg, p->sector_size, err), err);
    uint64_t t0 = cuzk_now_ns();
    struct g16_builder *b = g16_builder_new(false, err);
    ASSERT(b);
    struct gcs_sink sink = gcs_sink_builder(b);
    struct gcs cs;
    ASSERT_OK(gcs_init(&cs, GCS_SHAPE, &sink, err), err);
    porep_synthesize(&cs, &cfg, NULL);
    ASSERT_OK(gcs_status(&cs, err), err);
    gcs_free(&cs);
    struct g16_shape s;
    ASSERT_OK(g16_builder_finish(b, &s, err), err);
    g16_builder_free(b);
    ASSERT_EQ_U64(s.n_constraints, 3844969);
    printf("8 MiB shape: %.1f s\n", secs(t0));

    struct fil_c1 c;
    t0 = cuzk_now_ns();
    ASSERT_OK(fil_c1_generate(&c, p, 1000, 7, test_seed(), err), err);
    printf("8 MiB C1: %u partition(s), generated in %.2f s\n", c.partitions, secs(t0));
    for (unsigned k = 0; k < c.partitions; k++) check_partition(&s, &c, k);
    porep_witness_parallel_equals_sequential(&c, 0);
    /* and the check can fail: one tree-R sibling of the last challenge flipped */
    c.vp[c.challenges - 1].comm_r_last.sib[2][0] ^= 1;
    fr_t *in, *aux;
    uint32_t n_in, n_aux;
    ASSERT_OK(fil_porep_witness_values(&in, &aux, &n_in, &n_aux, &c, 0, err), err);
    struct g16_assignment a = {in, aux};
    ASSERT_CODE(g16_check(&s, &a, pool_default(), err), CUZK_E_UNSATISFIED, err);
    cuzk_free(in);
    cuzk_free(aux);
    fil_c1_free(&c);
    g16_shape_free(&s);
}

TEST_T(porep_2k_proof_verifies, 900)
{
    porep_fixture_skip_if_slow();
    struct param_fixture fx;
    porep_fixture_get(&fx);
    struct cuzk_error err_s = {0}, *err = &err_s;
    struct g16_pk pk;
    struct g16_vk vk;
    struct g16_shape s;
    uint64_t t0 = cuzk_now_ns();
    /* the fixture made these keys in-process; the daemon test covers the validating load */
    struct g16_params_read_opts o = {.mode = G16_VALIDATE_NONE, .use_cache = false, .progress = 0};
    ASSERT_OK(g16_params_read_ex(&pk, fx.params, &o, pool_default(), NULL, err), err);
    ASSERT_OK(g16_shape_load(&s, fx.shape, err), err);
    ASSERT_OK(g16_vk_read(&vk, fx.vk, err), err);
    printf("params + shape + vk read in %.1f s\n", secs(t0));
    struct g16_pvk *pvk = g16_pvk_new(&vk, err);
    ASSERT_MSG(pvk, "%s", err->msg);

    const struct fil_seal_proof *p = fil_seal_proof_by_name("StackedDrg2KiBV1_1");
    struct fil_c1 c;
    ASSERT_OK(fil_c1_generate(&c, p, 1000, 42, test_seed(), err), err);
    fr_t *in, *aux;
    uint32_t n_in, n_aux;
    t0 = cuzk_now_ns();
    ASSERT_OK(fil_porep_witness_values(&in, &aux, &n_in, &n_aux, &c, 0, err), err);
    double wit_s = secs(t0);
    ASSERT_EQ_U64(n_in, s.n_inputs);
    ASSERT_EQ_U64(n_aux, s.n_aux);
    struct g16_assignment w = {in, aux};
    struct g16_proof proof, back;
    struct g16_timings t;
    memset(&t, 0, sizeof t);
    ASSERT_OK(g16_prove(&proof, &s, &pk, &w, 1, NULL, NULL, NULL, NULL, &t, err), err);
    printf("2 KiB partition: witness %.2f s, prove %.1f s\n", wit_s, (double)t.total_ns / 1e9);
    uint8_t bytes[G16_PROOF_BYTES];
    g16_proof_to_bytes(bytes, &proof);
    ASSERT_OK(g16_proof_from_bytes(&back, bytes, err), err);

    size_t ni = fil_porep_num_inputs(p);
    ASSERT_EQ_U64(ni + 1, s.n_inputs);
    fr_t *pub = malloc(ni * sizeof *pub);
    ASSERT_OK(fil_porep_public_inputs(pub, p, c.replica_id, c.comm_d, c.comm_r, c.seed, 0, err), err);
    ASSERT_OK(g16_verify(pvk, &back, pub, ni, err), err);
    /* other public inputs must not verify: another seed (other challenges), another comm_d */
    uint8_t seed2[32];
    memcpy(seed2, c.seed, 32);
    seed2[0] ^= 1;
    ASSERT_OK(fil_porep_public_inputs(pub, p, c.replica_id, c.comm_d, c.comm_r, seed2, 0, err), err);
    ASSERT_CODE(g16_verify(pvk, &back, pub, ni, err), CUZK_E_VERIFY_FAILED, err);
    ASSERT_OK(fil_porep_public_inputs(pub, p, c.replica_id, c.comm_d, c.comm_r, c.seed, 0, err), err);
    fr_add(&pub[1], &pub[1], &FR_ONE);
    ASSERT_CODE(g16_verify(pvk, &back, pub, ni, err), CUZK_E_VERIFY_FAILED, err);

    free(pub);
    cuzk_free(in);
    cuzk_free(aux);
    fil_c1_free(&c);
    g16_pvk_free(pvk);
    g16_vk_free(&vk);
    g16_pk_free(&pk);
    g16_shape_free(&s);
}
