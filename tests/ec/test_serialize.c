/* test_serialize.c: zcash/bellperson/blst point encodings against published vectors
 * (generators, Ethereum BLS keys, ethereum/bls12-381-tests deserialization and hash_to_G2
 * cases; sources in tests/vectors/README.md), every malformed-input class with its code,
 * and round trips of random points. */
#include <string.h>

#include "cuzk/ec.h"
#include "test.h"

static void hex_to_bytes(uint8_t *out, const char *hex, size_t n)
{
    if (strlen(hex) != 2 * n) test_fail_at(__FILE__, __LINE__, "vector length %zu != %zu",
                                           strlen(hex), 2 * n);
    for (size_t i = 0; i < n; i++) {
        unsigned v;
        sscanf(hex + 2 * i, "%2x", &v);
        out[i] = (uint8_t)v;
    }
}

static void fr_rand(fr_t *o)
{
    uint8_t b[64];
    cuzk_rng_bytes(test_rng(), b, sizeof b);
    fr_from_wide_le(o, b);
}

static void fp_rand(fp_t *o)
{
    for (;;) {
        uint8_t b[48];
        cuzk_rng_bytes(test_rng(), b, sizeof b);
        b[0] &= 0x1f;
        if (fp_from_bytes_be(o, b) == CUZK_OK) return;
    }
}

/* A random point of E(Fp) / E'(Fp2), almost surely outside the subgroup. */
static void g1_rand_curve(g1_aff_t *o)
{
    fp_t rhs, four;
    fp_from_u64(&four, 4);
    do {
        fp_rand(&o->x);
        fp_sqr(&rhs, &o->x);
        fp_mul(&rhs, &rhs, &o->x);
        fp_add(&rhs, &rhs, &four);
    } while (!fp_sqrt(&o->y, &rhs));
    if (cuzk_rng_u64(test_rng()) & 1) fp_neg(&o->y, &o->y);
}

static void g2_rand_curve(g2_aff_t *o)
{
    fp2_t rhs, b;
    fp_from_u64(&b.c0, 4);
    b.c1 = b.c0;
    do {
        fp_rand(&o->x.c0);
        fp_rand(&o->x.c1);
        fp2_sqr(&rhs, &o->x);
        fp2_mul(&rhs, &rhs, &o->x);
        fp2_add(&rhs, &rhs, &b);
    } while (!fp2_sqrt(&o->y, &rhs));
    if (cuzk_rng_u64(test_rng()) & 1) fp2_neg(&o->y, &o->y);
}

static void g1_rand_sub(g1_aff_t *o)
{
    fr_t s;
    fr_rand(&s);
    g1_jac_t j;
    g1_jac_from_aff(&j, &G1_GENERATOR);
    g1_jac_mul_fr(&j, &j, &s);
    g1_jac_to_aff(o, &j);
}

static void g2_rand_sub(g2_aff_t *o)
{
    fr_t s;
    fr_rand(&s);
    g2_jac_t j;
    g2_jac_from_aff(&j, &G2_GENERATOR);
    g2_jac_mul_fr(&j, &j, &s);
    g2_jac_to_aff(o, &j);
}

/* (p - 1) / 2, big-endian: the independent "y is the larger root" oracle is a byte compare. */
static const char P_HALF_HEX[] =
    "0d0088f51cbff34d258dd3db21a5d66bb23ba5c279c2895fb39869507b587b120f55ffff58a9ffffdcff7fffffffd555";

static bool larger_root(const fp_t *y)
{
    uint8_t b[48], h[48];
    fp_to_bytes_be(b, y);
    hex_to_bytes(h, P_HALF_HEX, 48);
    return memcmp(b, h, 48) > 0;
}

/* ---- published vectors ---- */

#define G1_GEN_COMPRESSED                                                                    \
    "97f1d3a73197d7942695638c4fa9ac0fc3688c4f9774b905a14e3a3f171bac586c55e83ff97a1aeffb3af00a" \
    "db22c6bb"
#define G1_GEN_UNCOMPRESSED                                                                  \
    "17f1d3a73197d7942695638c4fa9ac0fc3688c4f9774b905a14e3a3f171bac586c55e83ff97a1aeffb3af00a" \
    "db22c6bb08b3f481e3aaa0f1a09e30ed741d8ae4fcf5e095d5d00af600db18cb2c04b3edd03cc744a2888ae4" \
    "0caa232946c5e7e1"
#define G2_GEN_COMPRESSED                                                                    \
    "93e02b6052719f607dacd3a088274f65596bd0d09920b61ab5da61bbdc7f5049334cf11213945d57e5ac7d05" \
    "5d042b7e024aa2b2f08f0a91260805272dc51051c6e47ad4fa403b02b4510b647ae3d1770bac0326a805bbef" \
    "d48056c8c121bdb8"
#define G2_GEN_UNCOMPRESSED                                                                  \
    "13e02b6052719f607dacd3a088274f65596bd0d09920b61ab5da61bbdc7f5049334cf11213945d57e5ac7d05" \
    "5d042b7e024aa2b2f08f0a91260805272dc51051c6e47ad4fa403b02b4510b647ae3d1770bac0326a805bbef" \
    "d48056c8c121bdb80606c4a02ea734cc32acd2b02bc28b99cb3e287e85a763af267492ab572e99ab3f370d27" \
    "5cec1da1aaa9075ff05f79be0ce5d527727d6e118cc9cdc6da2e351aadfd9baa8cbdd3a76d429a695160d12c" \
    "923ac9cc3baca289e193548608b82801"

TEST(generator_encodings)
{
    uint8_t want[192], got[192];
    struct cuzk_error e_, *err = &e_;
    g1_aff_t p;
    g2_aff_t q;

    hex_to_bytes(want, G1_GEN_COMPRESSED, 48);
    g1_aff_to_compressed(got, &G1_GENERATOR);
    ASSERT_MEM_EQ(got, want, 48);
    ASSERT_OK(g1_aff_from_compressed(&p, want, true, err), err);
    ASSERT(g1_aff_eq(&p, &G1_GENERATOR));

    hex_to_bytes(want, G1_GEN_UNCOMPRESSED, 96);
    g1_aff_to_uncompressed(got, &G1_GENERATOR);
    ASSERT_MEM_EQ(got, want, 96);
    ASSERT_OK(g1_aff_from_uncompressed(&p, want, true, err), err);
    ASSERT(g1_aff_eq(&p, &G1_GENERATOR));

    hex_to_bytes(want, G2_GEN_COMPRESSED, 96);
    g2_aff_to_compressed(got, &G2_GENERATOR);
    ASSERT_MEM_EQ(got, want, 96);
    ASSERT_OK(g2_aff_from_compressed(&q, want, true, err), err);
    ASSERT(g2_aff_eq(&q, &G2_GENERATOR));

    hex_to_bytes(want, G2_GEN_UNCOMPRESSED, 192);
    g2_aff_to_uncompressed(got, &G2_GENERATOR);
    ASSERT_MEM_EQ(got, want, 192);
    ASSERT_OK(g2_aff_from_uncompressed(&q, want, true, err), err);
    ASSERT(g2_aff_eq(&q, &G2_GENERATOR));
}

TEST(infinity_encodings)
{
    uint8_t want[192], got[192];
    struct cuzk_error e_, *err = &e_;
    g1_aff_t inf1, p;
    g2_aff_t inf2, q;
    memset(&inf1, 0, sizeof inf1);
    memset(&inf2, 0, sizeof inf2);

    memset(want, 0, sizeof want);
    want[0] = 0xc0;
    g1_aff_to_compressed(got, &inf1);
    ASSERT_MEM_EQ(got, want, 48);
    g2_aff_to_compressed(got, &inf2);
    ASSERT_MEM_EQ(got, want, 96);
    memset(&p, 0x11, sizeof p);
    ASSERT_OK(g1_aff_from_compressed(&p, want, true, err), err);
    ASSERT(g1_aff_is_inf(&p));
    memset(&q, 0x11, sizeof q);
    ASSERT_OK(g2_aff_from_compressed(&q, want, true, err), err);
    ASSERT(g2_aff_is_inf(&q));

    want[0] = 0x40;
    g1_aff_to_uncompressed(got, &inf1);
    ASSERT_MEM_EQ(got, want, 96);
    g2_aff_to_uncompressed(got, &inf2);
    ASSERT_MEM_EQ(got, want, 192);
    memset(&p, 0x11, sizeof p);
    ASSERT_OK(g1_aff_from_uncompressed(&p, want, true, err), err);
    ASSERT(g1_aff_is_inf(&p));
    memset(&q, 0x11, sizeof q);
    ASSERT_OK(g2_aff_from_uncompressed(&q, want, true, err), err);
    ASSERT(g2_aff_is_inf(&q));
}

/* Ethereum consensus BLS keys: public key = sk * G1, compressed (ethereum/bls12-381-tests
 * sign/verify cases; also the "deserialization_succeeds_correct_point" G1 input). A known
 * answer for scalar multiplication and compression together. */
TEST(eth_pubkeys_sk_times_g1)
{
    static const char *const sk[3] = {
        "263dbd792f5b1be47ed85f8938c0f29586af0d3ac7b977f21c278fe1462040e3",
        "47b8192d77bf871b62e87859d653922725724a5c031afeabc60bcef5ff665138",
        "328388aff0d4a5b7dc9205abd374e7e98f3cd9f3418edb4eafda5fb16473d216"};
    static const char *const pk[3] = {
        "a491d1b0ecd9bb917989f0e74f0dea0422eac4a873e5e2644f368dffb9a6e20fd6e10c1b77654d067c0618f6e5a7f79a",
        "b301803f8b5ac4a1133581fc676dfedc60d891dd5fa99028805e5ea5b08d3491af75d0707adab3b70c6a6a580217bf81",
        "b53d21a4cfd562c469cc81514d4ce5a6b577d8403d32a394dc265dd190b47fa9f829fdd7963afdf972e5e77854051f6f"};
    for (int i = 0; i < 3; i++) {
        uint8_t skb[32], want[48], got[48];
        hex_to_bytes(skb, sk[i], 32);
        hex_to_bytes(want, pk[i], 48);
        fr_t s;
        ASSERT_EQ_INT(fr_from_bytes_be(&s, skb), CUZK_OK);
        g1_jac_t j;
        g1_aff_t a, d;
        g1_jac_from_aff(&j, &G1_GENERATOR);
        g1_jac_mul_fr(&j, &j, &s);
        g1_jac_to_aff(&a, &j);
        g1_aff_to_compressed(got, &a);
        ASSERT_MEM_EQ(got, want, 48);
        struct cuzk_error e_, *err = &e_;
        ASSERT_OK(g1_aff_from_compressed(&d, want, true, err), err);
        ASSERT(g1_aff_eq(&d, &a));
    }
}

struct deser_case {
    const char *name, *hex;
    int code_checked;     /* with check_subgroup */
    int code_unchecked;   /* without */
    const char *msg;      /* substring of the error message, or NULL */
};

/* ethereum/bls12-381-tests v0.1.2, deserialization_G1 (compressed, 48 bytes). The too-few /
 * too-many bytes cases do not apply to fixed-size arrays. */
static const struct deser_case G1_CASES[] = {
    {"infinity_with_false_b_flag (x = 0: the order-3 point (0, 2))",
     "800000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000",
     CUZK_E_NOT_IN_SUBGROUP, CUZK_OK, "subgroup"},
    {"infinity_with_true_b_flag",
     "c01000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000",
     CUZK_E_BAD_ENCODING, CUZK_E_BAD_ENCODING, "byte 1 is non-zero"},
    {"not_in_G1",
     "8123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
     CUZK_E_NOT_IN_SUBGROUP, CUZK_OK, "subgroup"},
    {"not_in_curve",
     "8123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcde0",
     CUZK_E_NOT_ON_CURVE, CUZK_E_NOT_ON_CURVE, "not a square"},
    {"with_b_flag_and_a_flag_true",
     "e00000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000",
     CUZK_E_BAD_ENCODING, CUZK_E_BAD_ENCODING, "sign flag"},
    {"with_b_flag_and_x_nonzero",
     "c123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
     CUZK_E_BAD_ENCODING, CUZK_E_BAD_ENCODING, "infinity"},
    {"with_wrong_c_flag",
     "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
     CUZK_E_BAD_ENCODING, CUZK_E_BAD_ENCODING, "compression flag"},
    {"x_equal_to_modulus",
     "9a0111ea397fe69a4b1ba7b6434bacd764774b84f38512bf6730d2a0f6b0f6241eabfffeb153ffffb9feffffffffaaab",
     CUZK_E_BAD_ENCODING, CUZK_E_BAD_ENCODING, "x (bytes 0..47) is not below"},
    {"x_greater_than_modulus",
     "9a0111ea397fe69a4b1ba7b6434bacd764774b84f38512bf6730d2a0f6b0f6241eabfffeb153ffffb9feffffffffaaac",
     CUZK_E_BAD_ENCODING, CUZK_E_BAD_ENCODING, "x (bytes 0..47) is not below"},
    {"succeeds_correct_point",
     "a491d1b0ecd9bb917989f0e74f0dea0422eac4a873e5e2644f368dffb9a6e20fd6e10c1b77654d067c0618f6e5a7f79a",
     CUZK_OK, CUZK_OK, NULL},
    {"succeeds_infinity_with_true_b_flag",
     "c00000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000",
     CUZK_OK, CUZK_OK, NULL},
};

/* Pieces of the G2 cases (hex): Zk = k zero bytes; *_T = a 48-byte value without its first
 * byte, which the case supplies with its flags. */
#define Z46 "0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"  \
            "0"
#define Z47 "00" Z46
#define Z48 "00" Z47
#define P_HEX "1a0111ea397fe69a4b1ba7b6434bacd764774b84f38512bf6730d2a0f6b0f6241eabfffeb153ffffb9feffffffffaaab"
#define P1_HEX "1a0111ea397fe69a4b1ba7b6434bacd764774b84f38512bf6730d2a0f6b0f6241eabfffeb153ffffb9feffffffffaaac"
#define P_T "0111ea397fe69a4b1ba7b6434bacd764774b84f38512bf6730d2a0f6b0f6241eabfffeb153ffffb9feffffffffaaab"
#define P1_T "0111ea397fe69a4b1ba7b6434bacd764774b84f38512bf6730d2a0f6b0f6241eabfffeb153ffffb9feffffffffaaac"
#define X0123 "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define X_T "23456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

/* deserialization_G2 (compressed, 96 bytes: x.c1 || x.c0). */
static const struct deser_case G2_CASES[] = {
    {"infinity_with_false_b_flag (x = 0: 4(u+1) is not a square in Fp2)", "80" Z47 Z48,
     CUZK_E_NOT_ON_CURVE, CUZK_E_NOT_ON_CURVE, "not a square"},
    {"infinity_with_true_b_flag", "c010" Z46 Z48, CUZK_E_BAD_ENCODING, CUZK_E_BAD_ENCODING,
     "byte 1 is non-zero"},
    {"not_in_G2", "81" X_T X0123, CUZK_E_NOT_IN_SUBGROUP, CUZK_OK, "subgroup"},
    {"not_in_curve",
     "8123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
     "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcde0",
     CUZK_E_NOT_ON_CURVE, CUZK_E_NOT_ON_CURVE, "not a square"},
    {"with_b_flag_and_a_flag_true", "e0" Z47 Z48, CUZK_E_BAD_ENCODING, CUZK_E_BAD_ENCODING,
     "sign flag"},
    {"with_b_flag_and_x_nonzero", "c1" X_T X0123, CUZK_E_BAD_ENCODING, CUZK_E_BAD_ENCODING,
     "infinity"},
    {"with_wrong_c_flag", X0123 X0123, CUZK_E_BAD_ENCODING, CUZK_E_BAD_ENCODING,
     "compression flag"},
    {"xim_equal_to_modulus", "9a" P_T Z48, CUZK_E_BAD_ENCODING, CUZK_E_BAD_ENCODING,
     "x.c1 (bytes 0..47) is not below"},
    {"xim_greater_than_modulus", "9a" P1_T Z48, CUZK_E_BAD_ENCODING, CUZK_E_BAD_ENCODING,
     "x.c1 (bytes 0..47) is not below"},
    {"xre_equal_to_modulus", "80" Z47 P_HEX, CUZK_E_BAD_ENCODING, CUZK_E_BAD_ENCODING,
     "x.c0 (bytes 48..95) is not below"},
    {"xre_greater_than_modulus", "80" Z47 P1_HEX, CUZK_E_BAD_ENCODING, CUZK_E_BAD_ENCODING,
     "x.c0 (bytes 48..95) is not below"},
    {"succeeds_correct_point",
     "b2cc74bc9f089ed9764bbceac5edba416bef5e73701288977b9cac1ccb6964269d4ebf78b4e8aa7792ba09d3e49c8e6a"
     "1351bdf582971f796bbaf6320e81251c9d28f674d720cca07ed14596b96697cf18238e0e03ebd7fc1353d885a39407e0",
     CUZK_OK, CUZK_OK, NULL},
    {"succeeds_infinity_with_true_b_flag", "c0" Z47 Z48, CUZK_OK, CUZK_OK, NULL},
};

TEST(eth_deserialization_g1)
{
    for (size_t i = 0; i < sizeof G1_CASES / sizeof G1_CASES[0]; i++) {
        const struct deser_case *c = &G1_CASES[i];
        uint8_t in[48];
        hex_to_bytes(in, c->hex, 48);
        for (int chk = 0; chk < 2; chk++) {
            struct cuzk_error e_, *err = &e_;
            g1_aff_t p;
            cuzk_error_clear(err);
            int rc = g1_aff_from_compressed(&p, in, chk == 1, err);
            int want = chk ? c->code_checked : c->code_unchecked;
            ASSERT_MSG(rc == want, "%s (check_subgroup %d): got %s, expected %s: %s", c->name, chk,
                       cuzk_errname(rc), cuzk_errname(want), err->msg);
            if (rc != CUZK_OK && c->msg) ASSERT_STR_CONTAINS(err->msg, c->msg);
            if (rc == CUZK_OK) {
                uint8_t back[48];
                g1_aff_to_compressed(back, &p);
                ASSERT_MEM_EQ(back, in, 48);
                ASSERT(g1_aff_is_on_curve(&p));
            }
        }
    }
}

TEST(eth_deserialization_g2)
{
    for (size_t i = 0; i < sizeof G2_CASES / sizeof G2_CASES[0]; i++) {
        const struct deser_case *c = &G2_CASES[i];
        uint8_t in[96];
        hex_to_bytes(in, c->hex, 96);
        for (int chk = 0; chk < 2; chk++) {
            struct cuzk_error e_, *err = &e_;
            g2_aff_t p;
            cuzk_error_clear(err);
            int rc = g2_aff_from_compressed(&p, in, chk == 1, err);
            int want = chk ? c->code_checked : c->code_unchecked;
            ASSERT_MSG(rc == want, "%s (check_subgroup %d): got %s, expected %s: %s", c->name, chk,
                       cuzk_errname(rc), cuzk_errname(want), err->msg);
            if (rc != CUZK_OK && c->msg) ASSERT_STR_CONTAINS(err->msg, c->msg);
            if (rc == CUZK_OK) {
                uint8_t back[96];
                g2_aff_to_compressed(back, &p);
                ASSERT_MEM_EQ(back, in, 96);
                ASSERT(g2_aff_is_on_curve(&p));
            }
        }
    }
}

/* Published G2 points given by affine coordinates (ethereum/bls12-381-tests hash_to_G2 outputs,
 * (c0, c1) pairs), and a published compressed signature: they decode, lie in G2 and survive
 * both encodings. */
TEST(published_g2_points)
{
    static const char *const pts[3][4] = {
        {"02c2d18e033b960562aae3cab37a27ce00d80ccd5ba4b7fe0e7a210245129dbec7780ccc7954725f4168aff2787776e6",
         "139cddbccdc5e91b9623efd38c49f81a6f83f175e80b06fc374de9eb4b41dfe4ca3a230ed250fbe3a2acf73a41177fd8",
         "1787327b68159716a37440985269cf584bcb1e621d3a7202be6ea05c4cfe244aeb197642555a0645fb87bf7466b2ba48",
         "00aa65dae3c8d732d10ecd2c50f8a1baf3001578f71c694e03866e9f3d49ac1e1ce70dd94a733534f106d4cec0eddd16"},
        {"0141ebfbdca40eb85b87142e130ab689c673cf60f1a3e98d69335266f30d9b8d4ac44c1038e9dcdd5393faf5c41fb78a",
         "05cb8437535e20ecffaef7752baddf98034139c38452458baeefab379ba13dff5bf5dd71b72418717047f5b0f37da03d",
         "0503921d7f6a12805e72940b963c0cf3471c7b2a524950ca195d11062ee75ec076daf2d4bc358c4b190c0c98064fdd92",
         "12424ac32561493f3fe3c260708a12b7c620e7be00099a974e259ddc7d1f6395c3c811cdd19f1e8dbf3e9ecfdcbab8d6"},
        {"121982811d2491fde9ba7ed31ef9ca474f0e1501297f68c298e9f4c0028add35aea8bb83d53c08cfc007c1e005723cd0",
         "190d119345b94fbd15497bcba94ecf7db2cbfd1e1fe7da034d26cbba169fb3968288b3fafb265f9ebd380512a71c3f2c",
         "05571a0f8d3c08d094576981f4a3b8eda0a8e771fcdcc8ecceaf1356a6acf17574518acb506e435b639353c2e14827c8",
         "0bb5e7572275c567462d91807de765611490205a941a5a6af3b1691bfe596c31225d3aabdf15faff860cb4ef17c7c3be"},
    };
    struct cuzk_error e_, *err = &e_;
    for (int i = 0; i < 3; i++) {
        uint8_t unc[192], comp[96], back[192];
        hex_to_bytes(unc, pts[i][1], 48);         /* x.c1 */
        hex_to_bytes(unc + 48, pts[i][0], 48);    /* x.c0 */
        hex_to_bytes(unc + 96, pts[i][3], 48);    /* y.c1 */
        hex_to_bytes(unc + 144, pts[i][2], 48);   /* y.c0 */
        g2_aff_t p, q;
        ASSERT_OK(g2_aff_from_uncompressed(&p, unc, true, err), err);
        g2_aff_to_uncompressed(back, &p);
        ASSERT_MEM_EQ(back, unc, 192);
        g2_aff_to_compressed(comp, &p);
        ASSERT_MEM_EQ(comp + 1, unc + 1, 95);     /* compressed = x with flags */
        ASSERT_OK(g2_aff_from_compressed(&q, comp, true, err), err);
        ASSERT(g2_aff_eq(&p, &q));
    }
    /* The signature of the Ethereum "verify_valid_case" with sk 0x263d... (compressed G2). */
    uint8_t sig[96], back[96];
    hex_to_bytes(sig,
                 "882730e5d03f6b42c3abc26d3372625034e1d871b65a8a6b900a56dae22da98abbe1b68f85e49fe7"
                 "652a55ec3d0591c20767677e33e5cbb1207315c41a9ac03be39c2e7668edc043d6cb1d9fd93033ca"
                 "a8a1c5b0e84bedaeb6c64972503a43eb", 96);
    g2_aff_t s;
    ASSERT_OK(g2_aff_from_compressed(&s, sig, true, err), err);
    g2_aff_to_compressed(back, &s);
    ASSERT_MEM_EQ(back, sig, 96);
}

/* Every malformed uncompressed class (and the compressed ones not covered above). */
TEST(malformed_classes)
{
    struct cuzk_error e_, *err = &e_;
    uint8_t g1u[96], g1c[48], g2u[192], g2c[96], b[192];
    g1_aff_t p;
    g2_aff_t q;
    g1_aff_to_uncompressed(g1u, &G1_GENERATOR);
    g1_aff_to_compressed(g1c, &G1_GENERATOR);
    g2_aff_to_uncompressed(g2u, &G2_GENERATOR);
    g2_aff_to_compressed(g2c, &G2_GENERATOR);

    /* compression bit on an uncompressed-length input */
    memcpy(b, g1u, 96);
    b[0] |= 0x80;
    ASSERT_CODE(g1_aff_from_uncompressed(&p, b, false, err), CUZK_E_BAD_ENCODING, err);
    ASSERT_STR_CONTAINS(err->msg, "compression flag 0x80 set on a 96-byte uncompressed");
    memcpy(b, g2u, 192);
    b[0] |= 0x80;
    ASSERT_CODE(g2_aff_from_uncompressed(&q, b, false, err), CUZK_E_BAD_ENCODING, err);
    ASSERT_STR_CONTAINS(err->msg, "192-byte uncompressed");
    /* sign bit on an uncompressed input */
    memcpy(b, g1u, 96);
    b[0] |= 0x20;
    ASSERT_CODE(g1_aff_from_uncompressed(&p, b, false, err), CUZK_E_BAD_ENCODING, err);
    ASSERT_STR_CONTAINS(err->msg, "sign flag 0x20 set on an uncompressed");
    memcpy(b, g2u, 192);
    b[0] |= 0x20;
    ASSERT_CODE(g2_aff_from_uncompressed(&q, b, false, err), CUZK_E_BAD_ENCODING, err);
    /* infinity with non-zero bytes, uncompressed (last byte, and low bits of byte 0) */
    memset(b, 0, sizeof b);
    b[0] = 0x40;
    b[95] = 1;
    ASSERT_CODE(g1_aff_from_uncompressed(&p, b, false, err), CUZK_E_BAD_ENCODING, err);
    ASSERT_STR_CONTAINS(err->msg, "byte 95 is non-zero");
    b[95] = 0;
    b[191] = 1;
    ASSERT_CODE(g2_aff_from_uncompressed(&q, b, false, err), CUZK_E_BAD_ENCODING, err);
    ASSERT_STR_CONTAINS(err->msg, "byte 191 is non-zero");
    b[191] = 0;
    b[0] = 0x41;
    ASSERT_CODE(g1_aff_from_uncompressed(&p, b, false, err), CUZK_E_BAD_ENCODING, err);
    ASSERT_STR_CONTAINS(err->msg, "byte 0 has non-zero coordinate bits");
    /* infinity with the sign bit, compressed */
    memset(b, 0, sizeof b);
    b[0] = 0xe0;
    ASSERT_CODE(g1_aff_from_compressed(&p, b, false, err), CUZK_E_BAD_ENCODING, err);
    ASSERT_STR_CONTAINS(err->msg, "sign flag 0x20 set on the point at infinity");
    /* missing compression bit on a compressed-length input */
    memcpy(b, g1c, 48);
    b[0] &= 0x7f;
    ASSERT_CODE(g1_aff_from_compressed(&p, b, false, err), CUZK_E_BAD_ENCODING, err);
    memcpy(b, g2c, 96);
    b[0] &= 0x7f;
    ASSERT_CODE(g2_aff_from_compressed(&q, b, false, err), CUZK_E_BAD_ENCODING, err);
    /* coordinates >= p, uncompressed: each coordinate named */
    uint8_t ph[48];
    hex_to_bytes(ph, P_HEX, 48);
    memcpy(b, g1u, 96);
    memcpy(b, ph, 48);
    ASSERT_CODE(g1_aff_from_uncompressed(&p, b, false, err), CUZK_E_BAD_ENCODING, err);
    ASSERT_STR_CONTAINS(err->msg, "g1 uncompressed: x (bytes 0..47) is not below");
    memcpy(b, g1u, 96);
    memcpy(b + 48, ph, 48);
    ASSERT_CODE(g1_aff_from_uncompressed(&p, b, false, err), CUZK_E_BAD_ENCODING, err);
    ASSERT_STR_CONTAINS(err->msg, "y (bytes 48..95) is not below");
    static const char *const names[4] = {"x.c1 (bytes 0..47)", "x.c0 (bytes 48..95)",
                                         "y.c1 (bytes 96..143)", "y.c0 (bytes 144..191)"};
    for (int k = 0; k < 4; k++) {
        memcpy(b, g2u, 192);
        memcpy(b + 48 * k, ph, 48);
        ASSERT_CODE(g2_aff_from_uncompressed(&q, b, false, err), CUZK_E_BAD_ENCODING, err);
        ASSERT_STR_CONTAINS(err->msg, names[k]);
    }
    /* not on the curve: y + 1, and (0, 0) without the infinity flag */
    memcpy(b, g1u, 96);
    b[95] ^= 1;
    ASSERT_CODE(g1_aff_from_uncompressed(&p, b, false, err), CUZK_E_NOT_ON_CURVE, err);
    memcpy(b, g2u, 192);
    b[191] ^= 1;
    ASSERT_CODE(g2_aff_from_uncompressed(&q, b, false, err), CUZK_E_NOT_ON_CURVE, err);
    memset(b, 0, sizeof b);
    ASSERT_CODE(g1_aff_from_uncompressed(&p, b, false, err), CUZK_E_NOT_ON_CURVE, err);
    ASSERT_CODE(g2_aff_from_uncompressed(&q, b, false, err), CUZK_E_NOT_ON_CURVE, err);
    /* on the curve, outside the subgroup: only rejected when asked */
    g1_aff_t r1;
    g2_aff_t r2;
    g1_rand_curve(&r1);
    g2_rand_curve(&r2);
    g1_aff_to_uncompressed(b, &r1);
    ASSERT_OK(g1_aff_from_uncompressed(&p, b, false, err), err);
    ASSERT_CODE(g1_aff_from_uncompressed(&p, b, true, err), CUZK_E_NOT_IN_SUBGROUP, err);
    g1_aff_to_compressed(b, &r1);
    ASSERT_CODE(g1_aff_from_compressed(&p, b, true, err), CUZK_E_NOT_IN_SUBGROUP, err);
    g2_aff_to_uncompressed(b, &r2);
    ASSERT_OK(g2_aff_from_uncompressed(&q, b, false, err), err);
    ASSERT_CODE(g2_aff_from_uncompressed(&q, b, true, err), CUZK_E_NOT_IN_SUBGROUP, err);
    g2_aff_to_compressed(b, &r2);
    ASSERT_CODE(g2_aff_from_compressed(&q, b, true, err), CUZK_E_NOT_IN_SUBGROUP, err);
    ASSERT_STR_CONTAINS(err->msg, "G2");
}

/* Random points (in and out of the subgroup) survive both encodings; the sign flag agrees
 * with an independent byte compare against (p-1)/2 (G2: of y.c1, which is non-zero here);
 * negation flips only the sign flag. */
TEST(round_trips)
{
    struct cuzk_error e_, *err = &e_;
    for (int i = 0; i < 40; i++) {
        bool sub = i % 2 == 0;
        g1_aff_t p, d, np;
        g2_aff_t q, e, nq;
        if (sub) {
            g1_rand_sub(&p);
            g2_rand_sub(&q);
        } else {
            g1_rand_curve(&p);
            g2_rand_curve(&q);
        }
        uint8_t c1[48], u1[96], c2[96], u2[192], n1[48], n2[96];
        g1_aff_to_compressed(c1, &p);
        g1_aff_to_uncompressed(u1, &p);
        ASSERT_EQ_INT((c1[0] & 0x20) != 0, larger_root(&p.y));
        ASSERT_EQ_INT(c1[0] & 0xc0, 0x80);
        ASSERT_OK(g1_aff_from_compressed(&d, c1, sub, err), err);
        ASSERT(g1_aff_eq(&d, &p));
        ASSERT_OK(g1_aff_from_uncompressed(&d, u1, sub, err), err);
        ASSERT(g1_aff_eq(&d, &p));
        g1_aff_neg(&np, &p);
        g1_aff_to_compressed(n1, &np);
        ASSERT_EQ_INT(n1[0] ^ c1[0], 0x20);
        ASSERT_MEM_EQ(n1 + 1, c1 + 1, 47);

        g2_aff_to_compressed(c2, &q);
        g2_aff_to_uncompressed(u2, &q);
        ASSERT(!fp_is_zero(&q.y.c1));
        ASSERT_EQ_INT((c2[0] & 0x20) != 0, larger_root(&q.y.c1));
        ASSERT_OK(g2_aff_from_compressed(&e, c2, sub, err), err);
        ASSERT(g2_aff_eq(&e, &q));
        ASSERT_OK(g2_aff_from_uncompressed(&e, u2, sub, err), err);
        ASSERT(g2_aff_eq(&e, &q));
        g2_aff_neg(&nq, &q);
        g2_aff_to_compressed(n2, &nq);
        ASSERT_EQ_INT(n2[0] ^ c2[0], 0x20);
        ASSERT_MEM_EQ(n2 + 1, c2 + 1, 95);
    }
}
