/* serialize.c: zcash / bellperson / blst point encodings (big-endian coordinates, G2 as
 * c1 || c0, flags in the top three bits of byte 0) and their validating decoders. */
#include <stdio.h>
#include <string.h>

#include "cuzk/ec.h"
#include "ec_internal.h"

#define FLAG_COMPRESSED 0x80
#define FLAG_INFINITY 0x40
#define FLAG_SIGN 0x20      /* y is the lexicographically larger root (compressed only) */
#define FLAG_MASK 0xe0

/* ---- encoders ---- */

void g1_aff_to_compressed(uint8_t out[48], const g1_aff_t *p)
{
    if (g1_aff_is_inf(p)) {
        memset(out, 0, 48);
        out[0] = FLAG_COMPRESSED | FLAG_INFINITY;
        return;
    }
    fp_to_bytes_be(out, &p->x);
    out[0] |= FLAG_COMPRESSED | (fp_is_odd_half(&p->y) ? FLAG_SIGN : 0);
}

void g1_aff_to_uncompressed(uint8_t out[96], const g1_aff_t *p)
{
    if (g1_aff_is_inf(p)) {
        memset(out, 0, 96);
        out[0] = FLAG_INFINITY;
        return;
    }
    fp_to_bytes_be(out, &p->x);
    fp_to_bytes_be(out + 48, &p->y);
}

static void fp2_to_bytes_(uint8_t out[96], const fp2_t *a)
{
    fp_to_bytes_be(out, &a->c1);          /* imaginary part first */
    fp_to_bytes_be(out + 48, &a->c0);
}

void g2_aff_to_compressed(uint8_t out[96], const g2_aff_t *p)
{
    if (g2_aff_is_inf(p)) {
        memset(out, 0, 96);
        out[0] = FLAG_COMPRESSED | FLAG_INFINITY;
        return;
    }
    fp2_to_bytes_(out, &p->x);
    out[0] |= FLAG_COMPRESSED | (fp2_is_odd_half(&p->y) ? FLAG_SIGN : 0);
}

void g2_aff_to_uncompressed(uint8_t out[192], const g2_aff_t *p)
{
    if (g2_aff_is_inf(p)) {
        memset(out, 0, 192);
        out[0] = FLAG_INFINITY;
        return;
    }
    fp2_to_bytes_(out, &p->x);
    fp2_to_bytes_(out + 96, &p->y);
}

/* ---- decoders ---- */

/* Checks the flag bits of an n-byte encoding and, for infinity, that every other bit is zero.
 * Returns CUZK_OK with *inf set, or CUZK_E_BAD_ENCODING naming the problem. */
static int check_flags_(bool *inf, const uint8_t *in, size_t n, bool compressed, const char *what,
                        struct cuzk_error *err)
{
    uint8_t f = in[0] & FLAG_MASK;
    *inf = false;
    if (compressed && !(f & FLAG_COMPRESSED))
        return cuzk_fail(err, CUZK_E_BAD_ENCODING,
                         "%s: byte 0: compression flag 0x80 not set on a %zu-byte compressed "
                         "encoding (got 0x%02x)", what, n, in[0]);
    if (!compressed && (f & FLAG_COMPRESSED))
        return cuzk_fail(err, CUZK_E_BAD_ENCODING,
                         "%s: byte 0: compression flag 0x80 set on a %zu-byte uncompressed "
                         "encoding (got 0x%02x)", what, n, in[0]);
    if (!compressed && (f & FLAG_SIGN))
        return cuzk_fail(err, CUZK_E_BAD_ENCODING,
                         "%s: byte 0: sign flag 0x20 set on an uncompressed encoding (got 0x%02x)",
                         what, in[0]);
    if (f & FLAG_INFINITY) {
        if (f & FLAG_SIGN)
            return cuzk_fail(err, CUZK_E_BAD_ENCODING,
                             "%s: byte 0: sign flag 0x20 set on the point at infinity (got 0x%02x)",
                             what, in[0]);
        if (in[0] & ~FLAG_MASK)
            return cuzk_fail(err, CUZK_E_BAD_ENCODING,
                             "%s: infinity flag set but byte 0 has non-zero coordinate bits "
                             "(expected 0x%02x, got 0x%02x)", what, f, in[0]);
        for (size_t i = 1; i < n; i++)
            if (in[i])
                return cuzk_fail(err, CUZK_E_BAD_ENCODING,
                                 "%s: infinity flag set but byte %zu is non-zero (expected 0x00, "
                                 "got 0x%02x)", what, i, in[i]);
        *inf = true;
    }
    return CUZK_OK;
}

/* Reads a 48-byte big-endian coordinate; the flag bits of byte 0 are cleared first when
 * strip_flags. */
static int read_fp_(fp_t *out, const uint8_t *in, bool strip_flags, const char *what,
                    const char *coord, size_t off, struct cuzk_error *err)
{
    uint8_t b[48];
    memcpy(b, in, 48);
    if (strip_flags) b[0] &= (uint8_t)~FLAG_MASK;
    if (fp_from_bytes_be(out, b) != CUZK_OK)
        return cuzk_fail(err, CUZK_E_BAD_ENCODING,
                         "%s: %s (bytes %zu..%zu) is not below the field modulus p", what, coord,
                         off, off + 47);
    return CUZK_OK;
}

static int g1_finish_(g1_aff_t *out, const g1_aff_t *p, bool check_subgroup, const char *what,
                      struct cuzk_error *err)
{
    if (check_subgroup && !g1_aff_in_subgroup(p))
        return cuzk_fail(err, CUZK_E_NOT_IN_SUBGROUP,
                         "%s: point is on the curve but not in the order-r subgroup G1", what);
    *out = *p;
    return CUZK_OK;
}

static int g2_finish_(g2_aff_t *out, const g2_aff_t *p, bool check_subgroup, const char *what,
                      struct cuzk_error *err)
{
    if (check_subgroup && !g2_aff_in_subgroup(p))
        return cuzk_fail(err, CUZK_E_NOT_IN_SUBGROUP,
                         "%s: point is on the curve but not in the order-r subgroup G2", what);
    *out = *p;
    return CUZK_OK;
}

int g1_aff_from_compressed(g1_aff_t *out, const uint8_t in[48], bool check_subgroup,
                           struct cuzk_error *err)
{
    static const char what[] = "g1 compressed";
    bool inf;
    int rc = check_flags_(&inf, in, 48, true, what, err);
    if (rc) return rc;
    if (inf) {
        memset(out, 0, sizeof *out);
        return CUZK_OK;
    }
    g1_aff_t p;
    if ((rc = read_fp_(&p.x, in, true, what, "x", 0, err))) return rc;
    fp_t rhs, four;
    fp_sqr(&rhs, &p.x);
    fp_mul(&rhs, &rhs, &p.x);
    fp_from_u64(&four, 4);
    fp_add(&rhs, &rhs, &four);
    if (!fp_sqrt(&p.y, &rhs))
        return cuzk_fail(err, CUZK_E_NOT_ON_CURVE,
                         "%s: x is not the abscissa of a curve point (x^3 + 4 is not a square "
                         "in Fp)", what);
    if (fp_is_odd_half(&p.y) != ((in[0] & FLAG_SIGN) != 0)) fp_neg(&p.y, &p.y);
    return g1_finish_(out, &p, check_subgroup, what, err);
}

int g1_aff_from_uncompressed(g1_aff_t *out, const uint8_t in[96], bool check_subgroup,
                             struct cuzk_error *err)
{
    static const char what[] = "g1 uncompressed";
    bool inf;
    int rc = check_flags_(&inf, in, 96, false, what, err);
    if (rc) return rc;
    if (inf) {
        memset(out, 0, sizeof *out);
        return CUZK_OK;
    }
    g1_aff_t p;
    if ((rc = read_fp_(&p.x, in, false, what, "x", 0, err))) return rc;
    if ((rc = read_fp_(&p.y, in + 48, false, what, "y", 48, err))) return rc;
    if (g1_aff_is_inf(&p) || !g1_aff_is_on_curve(&p))
        return cuzk_fail(err, CUZK_E_NOT_ON_CURVE, "%s: (x, y) is not on y^2 = x^3 + 4", what);
    return g1_finish_(out, &p, check_subgroup, what, err);
}

static int read_fp2_(fp2_t *out, const uint8_t *in, bool strip_flags, const char *what,
                     const char *coord, size_t off, struct cuzk_error *err)
{
    char name[16];
    int rc;
    snprintf(name, sizeof name, "%s.c1", coord);
    if ((rc = read_fp_(&out->c1, in, strip_flags, what, name, off, err))) return rc;
    snprintf(name, sizeof name, "%s.c0", coord);
    return read_fp_(&out->c0, in + 48, false, what, name, off + 48, err);
}

int g2_aff_from_compressed(g2_aff_t *out, const uint8_t in[96], bool check_subgroup,
                           struct cuzk_error *err)
{
    static const char what[] = "g2 compressed";
    bool inf;
    int rc = check_flags_(&inf, in, 96, true, what, err);
    if (rc) return rc;
    if (inf) {
        memset(out, 0, sizeof *out);
        return CUZK_OK;
    }
    g2_aff_t p;
    if ((rc = read_fp2_(&p.x, in, true, what, "x", 0, err))) return rc;
    fp2_t rhs, b;
    fp2_sqr(&rhs, &p.x);
    fp2_mul(&rhs, &rhs, &p.x);
    fp_from_u64(&b.c0, 4);
    b.c1 = b.c0;                                   /* b' = 4 + 4u */
    fp2_add(&rhs, &rhs, &b);
    if (!fp2_sqrt(&p.y, &rhs))
        return cuzk_fail(err, CUZK_E_NOT_ON_CURVE,
                         "%s: x is not the abscissa of a curve point (x^3 + 4(u+1) is not a "
                         "square in Fp2)", what);
    if (fp2_is_odd_half(&p.y) != ((in[0] & FLAG_SIGN) != 0)) fp2_neg(&p.y, &p.y);
    return g2_finish_(out, &p, check_subgroup, what, err);
}

int g2_aff_from_uncompressed(g2_aff_t *out, const uint8_t in[192], bool check_subgroup,
                             struct cuzk_error *err)
{
    static const char what[] = "g2 uncompressed";
    bool inf;
    int rc = check_flags_(&inf, in, 192, false, what, err);
    if (rc) return rc;
    if (inf) {
        memset(out, 0, sizeof *out);
        return CUZK_OK;
    }
    g2_aff_t p;
    if ((rc = read_fp2_(&p.x, in, false, what, "x", 0, err))) return rc;
    if ((rc = read_fp2_(&p.y, in + 96, false, what, "y", 96, err))) return rc;
    if (g2_aff_is_inf(&p) || !g2_aff_is_on_curve(&p))
        return cuzk_fail(err, CUZK_E_NOT_ON_CURVE, "%s: (x, y) is not on y^2 = x^3 + 4(u+1)",
                         what);
    return g2_finish_(out, &p, check_subgroup, what, err);
}
