/* durable.h: the daemon's durability: the job journal (journal.h) wired to the engine's hooks
 * (engine_hooks) and replayed at start. See docs/daemon.md ("The job journal"). */
#ifndef CUZK_DAEMON_DURABLE_H
#define CUZK_DAEMON_DURABLE_H

#include <stddef.h>
#include <stdint.h>

#include "cuzk/engine.h"
#include "cuzk/err.h"

struct durable;

/* The journal's directory for [daemon] state_dir: "off" gives "" (no journal); "" (the
 * default) gives the instance lock's path with ".state" for ".lock": "<socket path>.state"
 * beside a unix socket, "<runtime dir>/cuzk-daemon-<address>.state" for a TCP listener
 * (lifecycle.c, lc_lock): one journal per listen address, like the lock; anything else is
 * used as given. */
void durable_state_dir(char *out, size_t cap, const char *state_dir, const char *lock_path);

/* Open (and lock) the journal in dir; fails naming the path (see journal_open). */
int durable_open(struct durable **out, const char *dir, uint64_t retention_ms,
                 uint32_t retention_count, struct cuzk_error *err);
/* The engine hooks that make e's work durable (set them in engine_config before engine_new). */
void durable_hooks(struct durable *d, struct engine_hooks *h);
/* Hand the journal's records to the engine (after engine_new, before the listeners start):
 * finished results become answerable (engine_restore), unfinished jobs are submitted again in
 * their original order and priority. A record that cannot be replayed is finished FAILED with
 * the reason (its AwaitProof says why). Logs what it did. */
void durable_replay(struct durable *d, struct engine *e);
/* After engine_free (no hook may run any more). NULL is a no-op. */
void durable_close(struct durable *d);

#endif
