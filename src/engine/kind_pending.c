/* kind_pending.c: the Filecoin kinds whose circuits are not built in yet (WINDOW_POST_PARTITION,
 * WINNING_POST): their requests FAIL saying so, and their SRS ids can
 * still be preloaded and evicted from the published v28 parameter files. When a circuit lands
 * its kind moves to a kind_<name>.c of its own, following kind_porep.c, and its row in kinds.c
 * points there. */
#include <string.h>

#include "engine_internal.h"

/* Parameter files as published in parameters.json, per circuit id. */
static const struct { int kind; const char *id, *file; } params[] = {
    {ENGINE_KIND_WINDOW_POST, "wpost-32g", "v28-proof-of-spacetime-fallback-merkletree-poseidon_hasher-8-8-0-0377ded656c6f524f1618760bffe4e0a1c51d5a70c4509eedae8a27555733edc.params"},
    {ENGINE_KIND_WINNING_POST, "winning-32g", "v28-proof-of-spacetime-fallback-merkletree-poseidon_hasher-8-8-0-559e581f022bb4e4ec6e719e563bf0e026ad6de42e56c18714a2c692b1b88d7e.params"},
};
#define N_PARAMS (sizeof params / sizeof params[0])

static int parse_pending(struct job *j, const struct engine_request *r, struct cuzk_error *err)
{
    (void)r;
    return cuzk_fail(err, CUZK_E_UNSUPPORTED,
                     "proof kind %s is not supported yet by this daemon: the Filecoin circuits "
                     "are not built in (only POREP_SEAL_COMMIT, SNAP_DEALS_UPDATE and SYNTHETIC proofs can be proved)",
                     engine_kind_name(j->kind));
}

/* arg: the row in params[] */
static int match(int kind, const char *id, uint64_t *arg)
{
    for (size_t i = 0; i < N_PARAMS; i++)
        if (params[i].kind == kind && !strcmp(id, params[i].id)) {
            *arg = i;
            return CUZK_OK;
        }
    return CUZK_E_NOT_FOUND;
}
static int match_window(const char *id, uint64_t *arg, struct cuzk_error *err)
{
    (void)err;
    return match(ENGINE_KIND_WINDOW_POST, id, arg);
}
static int match_winning(const char *id, uint64_t *arg, struct cuzk_error *err)
{
    (void)err;
    return match(ENGINE_KIND_WINNING_POST, id, arg);
}

/* The key only: there is no circuit to check it against or to prove with yet. */
static int load_pending(struct engine *e, struct srs_entry *x, struct cuzk_error *err)
{
    return srs_load_file(e, x, params[x->arg].file, err);
}

/* no witness hook: parse refuses every request, so no partition reaches synthesis */
const struct kind_def kind_window_post = {   /* HIGH by default, as upstream */
    .kind = ENGINE_KIND_WINDOW_POST, .name = "window-post", .label = "window_post",
    .default_priority = 3, .parse = parse_pending, .circuit_ids = "wpost-32g",
    .srs_match = match_window, .srs_load = load_pending,
};
const struct kind_def kind_winning_post = {   /* CRITICAL by default: a missed one costs rewards */
    .kind = ENGINE_KIND_WINNING_POST, .name = "winning-post", .label = "winning_post",
    .default_priority = 4, .parse = parse_pending, .circuit_ids = "winning-32g",
    .srs_match = match_winning, .srs_load = load_pending,
};
