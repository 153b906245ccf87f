/* circuit.c: the Filecoin circuits as one table (fil_circuit.h). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cuzk/fil_circuit.h"
#include "cuzk/filecoin.h"

static const struct {
    const char *name, *id_prefix;
} KINDS[FIL_CIRCUIT_NKINDS] = {
    [FIL_CIRCUIT_POREP] = {"porep", "porep"},
    [FIL_CIRCUIT_WINDOW_POST] = {"window-post", "wpost"},
    [FIL_CIRCUIT_WINNING_POST] = {"winning-post", "winning"},
    [FIL_CIRCUIT_SNAP] = {"snap", "snap"},
};

static const struct { uint64_t size; const char *suffix; } SIZES[] = {
    {2048ull, "2k"}, {8ull << 20, "8m"}, {512ull << 20, "512m"}, {32ull << 30, "32g"}, {64ull << 30, "64g"},
};
#define NSIZES (sizeof SIZES / sizeof *SIZES)

/* v28 empty-sector-update parameter stems (parameters.json), per size in SIZES order. */
static const char *const SNAP_STEMS[NSIZES] = {
    "v28-empty-sector-update-merkletree-poseidon_hasher-8-0-0-fb9e095bebdd77511c0269b967b4d87ba8b8a525edaa0e165de23ba454510194",
    "v28-empty-sector-update-merkletree-poseidon_hasher-8-0-0-92180959e1918d26350b8e6cfe217bbdd0a2d8de51ebec269078b364b715ad63",
    "v28-empty-sector-update-merkletree-poseidon_hasher-8-0-0-61fa69f38b9cc771ba27b670124714b4ea77fbeae05e377fb859c4a43b73a30c",
    "v28-empty-sector-update-merkletree-poseidon_hasher-8-8-0-3b7f44a9362e3985369454947bc94022e118211e49fd672d52bec1cbfd599d18",
    "v28-empty-sector-update-merkletree-poseidon_hasher-8-8-2-102e1444a7e9a97ebf1e3d6855dcc77e66c011ea66f936d9b2c508f87f2f83a7",
};

int fil_circuit_parse_kind(enum fil_circuit_kind *out, const char *name, struct cuzk_error *err)
{
    for (int k = 0; k < FIL_CIRCUIT_NKINDS; k++)
        if (name && !strcmp(name, KINDS[k].name)) {
            *out = (enum fil_circuit_kind)k;
            return CUZK_OK;
        }
    return cuzk_fail(err, CUZK_E_INVALID_ARG,
                     "unknown circuit kind '%s' (expected porep, window-post, winning-post or snap)",
                     name ? name : "(null)");
}

const char *fil_circuit_kind_name(enum fil_circuit_kind k)
{
    return (unsigned)k < FIL_CIRCUIT_NKINDS ? KINDS[k].name : "unknown";
}

static int size_index(uint64_t size)
{
    for (size_t i = 0; i < NSIZES; i++)
        if (SIZES[i].size == size) return (int)i;
    return -1;
}

int fil_circuit_init(struct fil_circuit *c, enum fil_circuit_kind kind, uint64_t sector_size,
                     struct cuzk_error *err)
{
    memset(c, 0, sizeof *c);
    c->kind = kind;
    c->sector_size = sector_size;
    if (size_index(sector_size) < 0)
        return cuzk_fail(err, CUZK_E_UNSUPPORTED, "%s: no circuit for sector size %" PRIu64
                         " (2KiB, 8MiB, 512MiB, 32GiB or 64GiB)", fil_circuit_kind_name(kind),
                         sector_size);
    switch (kind) {
    case FIL_CIRCUIT_POREP: return porep_config_for_size(&c->cfg.porep, sector_size, err);
    case FIL_CIRCUIT_WINDOW_POST: return post_config_for_size(&c->cfg.post, POST_WINDOW, sector_size, err);
    case FIL_CIRCUIT_WINNING_POST: return post_config_for_size(&c->cfg.post, POST_WINNING, sector_size, err);
    case FIL_CIRCUIT_SNAP: return snap_config_for_size(&c->cfg.snap, sector_size, err);
    }
    return cuzk_fail(err, CUZK_E_INVALID_ARG, "circuit kind %d is not one of the table's", (int)kind);
}

void fil_circuit_synthesize_blank(struct gcs *cs, const struct fil_circuit *c)
{
    switch (c->kind) {
    case FIL_CIRCUIT_POREP: porep_synthesize(cs, &c->cfg.porep, NULL); break;
    case FIL_CIRCUIT_WINDOW_POST:
    case FIL_CIRCUIT_WINNING_POST: post_synthesize(cs, &c->cfg.post, NULL); break;
    case FIL_CIRCUIT_SNAP: snap_synthesize(cs, &c->cfg.snap, NULL); break;
    }
}

int fil_circuit_count(const struct fil_circuit *c, uint64_t *rows, uint32_t *n_inputs,
                      uint32_t *n_aux, struct cuzk_error *err)
{
    struct gcs cs;
    int rc = gcs_init(&cs, 0, NULL, err);
    if (rc) return rc;
    fil_circuit_synthesize_blank(&cs, c);
    rc = gcs_status(&cs, err);
    if (!rc) {
        *rows = cs.n_constraints + cs.n_inputs;
        *n_inputs = cs.n_inputs;
        *n_aux = cs.n_aux;
    }
    gcs_free(&cs);
    return rc;
}

int fil_circuit_shape_into(struct g16_builder *b, const struct fil_circuit *c, struct pool *pool,
                           struct cuzk_error *err)
{
    switch (c->kind) {
    case FIL_CIRCUIT_POREP: return porep_shape(b, &c->cfg.porep, pool, err);
    case FIL_CIRCUIT_WINDOW_POST:
    case FIL_CIRCUIT_WINNING_POST: return post_shape(b, &c->cfg.post, pool, err);
    case FIL_CIRCUIT_SNAP: return snap_shape(b, &c->cfg.snap, pool, err);
    }
    return cuzk_fail(err, CUZK_E_INVALID_ARG, "circuit kind %d is not one of the table's", (int)c->kind);
}

int fil_circuit_shape(struct g16_shape *out, const struct fil_circuit *c, struct pool *pool, struct cuzk_error *err)
{
    memset(out, 0, sizeof *out);
    struct g16_builder *b = g16_builder_new(false, err);
    if (!b) return err && err->code ? err->code : CUZK_E_NOMEM;
    int rc = fil_circuit_shape_into(b, c, pool, err);
    if (!rc) rc = g16_builder_finish(b, out, err);
    g16_builder_free(b);
    return rc;
}

int fil_circuit_param_stem(char *out, size_t out_len, const struct fil_circuit *c,
                           struct cuzk_error *err)
{
    int si = size_index(c->sector_size);
    if (si < 0)
        return cuzk_fail(err, CUZK_E_UNSUPPORTED, "param stem: sector size %" PRIu64 " is not published",
                         c->sector_size);
    switch (c->kind) {
    case FIL_CIRCUIT_POREP: return fil_porep_param_stem(out, out_len, c->sector_size, err);
    case FIL_CIRCUIT_WINDOW_POST:
    case FIL_CIRCUIT_WINNING_POST: {
        /* V1 and V1_2 share the circuit and the file: any registered proof of the kind and size */
        enum post_kind pk = c->kind == FIL_CIRCUIT_WINNING_POST ? POST_WINNING : POST_WINDOW;
        for (size_t i = 0; i < fil_post_proof_count(); i++) {
            const struct fil_post_proof *p = fil_post_proof_at(i);
            if (p->kind == pk && p->sector_size == c->sector_size)
                return fil_post_param_stem(out, out_len, p, err);
        }
        break;
    }
    case FIL_CIRCUIT_SNAP: {
        int n = snprintf(out, out_len, "%s", SNAP_STEMS[si]);
        if (n < 0 || (size_t)n >= out_len)
            return cuzk_fail(err, CUZK_E_INVALID_ARG, "param stem: buffer of %zu bytes too small", out_len);
        return CUZK_OK;
    }
    }
    return cuzk_fail(err, CUZK_E_UNSUPPORTED, "param stem: no %s circuit of %" PRIu64 " bytes",
                     fil_circuit_kind_name(c->kind), c->sector_size);
}

void fil_circuit_id(char *out, size_t out_len, const struct fil_circuit *c)
{
    int si = size_index(c->sector_size);
    snprintf(out, out_len, "%s-%s", (unsigned)c->kind < FIL_CIRCUIT_NKINDS ? KINDS[c->kind].id_prefix : "unknown",
             si < 0 ? "unknown" : SIZES[si].suffix);
}

int fil_circuit_parse_id(struct fil_circuit *c, enum fil_circuit_kind kind, const char *id,
                         struct cuzk_error *err)
{
    if ((unsigned)kind >= FIL_CIRCUIT_NKINDS) return CUZK_E_NOT_FOUND;
    const char *pre = KINDS[kind].id_prefix;
    size_t n = strlen(pre);
    if (strncmp(id, pre, n) || id[n] != '-') return CUZK_E_NOT_FOUND;
    for (size_t i = 0; i < NSIZES; i++)
        if (!strcmp(id + n + 1, SIZES[i].suffix)) return fil_circuit_init(c, kind, SIZES[i].size, err);
    return cuzk_fail(err, CUZK_E_INVALID_ARG, "circuit id '%s': unknown size '%s' (expected %s-2k, "
                     "%s-8m, %s-512m, %s-32g or %s-64g)", id, id + n + 1, pre, pre, pre, pre, pre);
}
