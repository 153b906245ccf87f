/* kinds.c: the proof-kind registry: one row per kind, in the dense order of the counters and
 * snapshots (ENGINE_NKINDS). The engine knows no kind by name: it parses, synthesizes and
 * loads SRS entries through these rows. Each kind lives in its own kind_<name>.c. */
#include <stdio.h>
#include <string.h>

#include "engine_internal.h"

static const struct kind_def *const kinds[ENGINE_NKINDS] = {
    &kind_porep,          /* POREP_SEAL_COMMIT (kind_porep.c) */
    &kind_snap,           /* SNAP_DEALS_UPDATE (kind_snap.c) */
    &kind_window_post,    /* WINDOW_POST_PARTITION (kind_post.c) */
    &kind_winning_post,   /* WINNING_POST (kind_post.c) */
    &kind_synthetic,      /* SYNTHETIC (kind_synthetic.c) */
    &kind_ni_porep,       /* NI_POREP_SEAL_COMMIT (kind_porep.c) */
};

int engine_kind_index(int kind)
{
    for (int i = 0; i < ENGINE_NKINDS; i++)
        if (kinds[i]->kind == kind) return i;
    return -1;
}

const struct kind_def *kind_get(int kind)
{
    int i = engine_kind_index(kind);
    return i < 0 ? NULL : kinds[i];
}

const char *engine_kind_name(int kind)
{
    const struct kind_def *k = kind_get(kind);
    return k ? k->name : "unknown";
}

const char *engine_kind_label(int kind)
{
    const struct kind_def *k = kind_get(kind);
    return k ? k->label : "unknown";
}

int kind_for_circuit(const char *id, const struct kind_def **k, uint64_t *arg,
                     struct cuzk_error *err)
{
    for (int i = 0; i < ENGINE_NKINDS; i++) {
        if (!kinds[i]->srs_match) continue;
        int rc = kinds[i]->srs_match(id, arg, err);
        if (rc == CUZK_OK) *k = kinds[i];
        if (rc != CUZK_E_NOT_FOUND) return rc;
    }
    /* the message lists every id the registry knows, so a new kind's ids appear by itself */
    char known[512] = "";
    size_t n = 0;
    int last = -1;
    for (int i = 0; i < ENGINE_NKINDS; i++)
        if (kinds[i]->circuit_ids) last = i;
    for (int i = 0; i < ENGINE_NKINDS && n < sizeof known; i++) {
        if (!kinds[i]->circuit_ids) continue;
        n += (size_t)snprintf(known + n, sizeof known - n, "%s%s", n ? (i == last ? " or " : ", ") : "",
                              kinds[i]->circuit_ids);
    }
    return cuzk_fail(err, CUZK_E_INVALID_ARG, "unknown circuit id '%s' (expected %s)", id, known);
}
