/* walscan.h: read the journal's write-ahead log the way SQLite's recovery will, before SQLite
 * opens the database, so a warning can say what recovery is about to drop (walscan.c). Internal
 * to src/journal. */
#ifndef CUZK_JOURNAL_WALSCAN_H
#define CUZK_JOURNAL_WALSCAN_H

#include "cuzk/journal.h"

/* Fill r's wal_* fields from the log at path (nothing when it is missing or empty). */
void wal_scan(const char *path, struct journal_report *r);

#endif
