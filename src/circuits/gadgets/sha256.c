/* sha256.c: bellperson's SHA-256 gadget: message schedule and rounds over UInt32 with the
 * additions deferred into multi-operand addmany calls sharing one MultiEq per block, and
 * constant padding / IV (bellperson src/gadgets/sha256.rs); the constants are sha256.h's. */
#include <string.h>

#include "cuzk/gadgets.h"
#include "cuzk/sha256.h"
#include "cuzk/util.h"

/* A working variable that is either a concrete word or a deferred sum of up to 8 words
 * (upstream's Maybe): a and e stay deferred so their additions fuse into one addmany. */
struct maybe {
    gu32 ops[8];
    unsigned n;         /* 0 = concrete (ops[0]) */
};

static gu32 maybe_compute(struct gcs *cs, struct gmultieq *m, struct maybe *x,
                          const gu32 *extra)
{
    if (x->n == 0) return x->ops[0];     /* concrete: upstream ignores `extra` here too */
    if (extra) x->ops[x->n++] = *extra;
    return gu32_addmany(cs, m, x->ops, x->n);
}

/* x ^ rotr/shr of x, in upstream's order: first (rotr r1) ^ (rotr r2), then ^ third. */
static gu32 sigma(struct gcs *cs, const gu32 *x, unsigned r1, unsigned r2, unsigned r3, bool shr3)
{
    gu32 s = gu32_rotr(x, r1);
    gu32 t = gu32_rotr(x, r2);
    s = gu32_xor(cs, &s, &t);
    t = shr3 ? gu32_shr(x, r3) : gu32_rotr(x, r3);
    return gu32_xor(cs, &s, &t);
}

void g_sha256_compress(struct gcs *cs, gu32 out[8], const gbool in[512], const gu32 cur[8])
{
    gu32 w[64];
    for (int i = 0; i < 16; i++) w[i] = gu32_from_bits_be(&in[32 * i]);

    struct gmultieq m;
    gmeq_init(&m);
    for (int i = 16; i < 64; i++) {
        gu32 ops[4];
        ops[0] = w[i - 16];
        ops[1] = sigma(cs, &w[i - 15], 7, 18, 3, true);
        ops[2] = w[i - 7];
        ops[3] = sigma(cs, &w[i - 2], 17, 19, 10, true);
        w[i] = gu32_addmany(cs, &m, ops, 4);
    }

    struct maybe a = {.n = 0}, e = {.n = 0};
    a.ops[0] = cur[0];
    e.ops[0] = cur[4];
    gu32 b = cur[1], c = cur[2], d = cur[3], f = cur[5], g = cur[6], h = cur[7];
    for (int i = 0; i < 64; i++) {
        gu32 new_e = maybe_compute(cs, &m, &e, NULL);
        gu32 s1 = sigma(cs, &new_e, 6, 11, 25, false);
        gu32 ch = gu32_sha256_ch(cs, &new_e, &f, &g);
        gu32 new_a = maybe_compute(cs, &m, &a, NULL);
        gu32 s0 = sigma(cs, &new_a, 2, 13, 22, false);
        gu32 maj = gu32_sha256_maj(cs, &new_a, &b, &c);

        /* temp1 = h + S1 + ch + CUZK_SHA256_K[i] + w[i]; e = temp1 + d; a = temp1 + S0 + maj */
        gu32 temp1[5] = {h, s1, ch, gu32_const(CUZK_SHA256_K[i]), w[i]};
        h = g;
        g = f;
        f = new_e;
        memcpy(e.ops, temp1, sizeof temp1);
        e.ops[5] = d;
        e.n = 6;
        d = c;
        c = b;
        b = new_a;
        memcpy(a.ops, temp1, sizeof temp1);
        a.ops[5] = s0;
        a.ops[6] = maj;
        a.n = 7;
    }

    gu32 two[2];
    out[0] = maybe_compute(cs, &m, &a, &cur[0]);
    two[0] = cur[1]; two[1] = b; out[1] = gu32_addmany(cs, &m, two, 2);
    two[0] = cur[2]; two[1] = c; out[2] = gu32_addmany(cs, &m, two, 2);
    two[0] = cur[3]; two[1] = d; out[3] = gu32_addmany(cs, &m, two, 2);
    out[4] = maybe_compute(cs, &m, &e, &cur[4]);
    two[0] = cur[5]; two[1] = f; out[5] = gu32_addmany(cs, &m, two, 2);
    two[0] = cur[6]; two[1] = g; out[6] = gu32_addmany(cs, &m, two, 2);
    two[0] = cur[7]; two[1] = h; out[7] = gu32_addmany(cs, &m, two, 2);
    gmeq_finish(cs, &m);
}

static void iv_words(gu32 iv[8])
{
    for (int i = 0; i < 8; i++) iv[i] = gu32_const(CUZK_SHA256_IV[i]);
}

void g_sha256_block_no_padding(struct gcs *cs, gbool out[256], const gbool in[512])
{
    gu32 iv[8], h[8];
    iv_words(iv);
    g_sha256_compress(cs, h, in, iv);
    for (int i = 0; i < 8; i++) gu32_to_bits_be(&out[32 * i], &h[i]);
}

void g_sha256(struct gcs *cs, gbool out[256], const gbool *in, size_t nbits)
{
    if (nbits % 8) {
        gcs_fail(cs, CUZK_E_INVALID_ARG, "sha256: %zu bits is not a whole number of bytes", nbits);
        return;
    }
    /* Padding as constant Booleans: a 1 bit, zeros, the 64-bit big-endian length. */
    size_t total = nbits + 1;
    while ((total + 64) % 512) total++;
    total += 64;
    gbool *p = cuzk_malloc(total * sizeof *p);
    if (!p) {
        gcs_fail(cs, CUZK_E_NOMEM, "sha256: padded message of %zu bits", total);
        return;
    }
    memcpy(p, in, nbits * sizeof *p);
    p[nbits] = gb_const(true);
    for (size_t i = nbits + 1; i < total - 64; i++) p[i] = gb_const(false);
    for (int i = 0; i < 64; i++) p[total - 64 + i] = gb_const(((uint64_t)nbits >> (63 - i)) & 1u);

    gu32 cur[8];
    iv_words(cur);
    for (size_t blk = 0; blk < total / 512; blk++) {
        gu32 next[8];
        g_sha256_compress(cs, next, &p[512 * blk], cur);
        memcpy(cur, next, sizeof cur);
    }
    cuzk_free(p);
    for (int i = 0; i < 8; i++) gu32_to_bits_be(&out[32 * i], &cur[i]);
}

void gnum_to_bits_byte_reversed(struct gcs *cs, gbool out[256], const gnum *x)
{
    gbool le[256];
    gnum_to_bits_le(cs, le, x);
    le[255] = gb_const(false);
    for (int i = 0; i < 256; i++) out[i] = le[(i & ~7) + 7 - (i & 7)];
}

gnum g_sha256_node(struct gcs *cs, const gnum *l, const gnum *r)
{
    gbool msg[512], dig[256], le[256];
    gnum_to_bits_byte_reversed(cs, msg, l);
    gnum_to_bits_byte_reversed(cs, msg + 256, r);
    g_sha256(cs, dig, msg, 512);
    for (int i = 0; i < 256; i++) le[i] = dig[(i & ~7) + 7 - (i & 7)];
    return g_pack_bits(cs, le, 254);
}
