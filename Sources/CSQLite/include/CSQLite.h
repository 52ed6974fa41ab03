// SQLite 3, imported only by the SQLiteBackup target, and loaded on the first
// call that needs it (dlopen), never linked: `apphome` runs most verbs without
// a database to copy, and libsqlite3 (bound at load, with its 1,600 symbols)
// was a large part of its start-up. The types and constants are SQLite's own
// header's; the calls are these, `apphome_sqlite3_…` for `sqlite3_…`.
#ifndef APPHOME_CSQLITE_H
#define APPHOME_CSQLITE_H
#include <sqlite3.h>

/// Loads libsqlite3 (once): NULL when it is loaded, else why it is not.
/// Every call below loads it first; when it cannot be loaded, they fail
/// (`SQLITE_CANTOPEN` from open, `SQLITE_ERROR` from the others) and
/// `apphome_sqlite3_errstr` gives the reason.
const char *apphome_sqlite3_load(void);

int apphome_sqlite3_open_v2(const char *filename, sqlite3 **db, int flags, const char *vfs);
int apphome_sqlite3_close_v2(sqlite3 *db);
int apphome_sqlite3_extended_result_codes(sqlite3 *db, int onoff);
int apphome_sqlite3_extended_errcode(sqlite3 *db);
const char *apphome_sqlite3_errstr(int code);
int apphome_sqlite3_exec(sqlite3 *db, const char *sql, int (*callback)(void *, int, char **, char **), void *context, char **errmsg);
int apphome_sqlite3_busy_handler(sqlite3 *db, int (*handler)(void *, int), void *context);
sqlite3_backup *apphome_sqlite3_backup_init(sqlite3 *destination, const char *destinationName, sqlite3 *source, const char *sourceName);
int apphome_sqlite3_backup_step(sqlite3_backup *backup, int pages);
int apphome_sqlite3_backup_finish(sqlite3_backup *backup);
int apphome_sqlite3_prepare_v2(sqlite3 *db, const char *sql, int bytes, sqlite3_stmt **statement, const char **tail);
int apphome_sqlite3_step(sqlite3_stmt *statement);
const unsigned char *apphome_sqlite3_column_text(sqlite3_stmt *statement, int column);
int apphome_sqlite3_finalize(sqlite3_stmt *statement);
#endif
