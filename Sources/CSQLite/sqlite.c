// libsqlite3 through dlopen: see include/CSQLite.h.
#include "CSQLite.h"
#include "CLazyLibrary.h"
#include <stdlib.h>
#include <string.h>

#define APPHOME_SQLITE_FUNCTIONS(X) \
    X(int, sqlite3_open_v2, (const char *, sqlite3 **, int, const char *)) \
    X(int, sqlite3_close_v2, (sqlite3 *)) \
    X(int, sqlite3_extended_result_codes, (sqlite3 *, int)) \
    X(int, sqlite3_extended_errcode, (sqlite3 *)) \
    X(const char *, sqlite3_errstr, (int)) \
    X(int, sqlite3_exec, (sqlite3 *, const char *, int (*)(void *, int, char **, char **), void *, char **)) \
    X(int, sqlite3_busy_handler, (sqlite3 *, int (*)(void *, int), void *)) \
    X(sqlite3_backup *, sqlite3_backup_init, (sqlite3 *, const char *, sqlite3 *, const char *)) \
    X(int, sqlite3_backup_step, (sqlite3_backup *, int)) \
    X(int, sqlite3_backup_finish, (sqlite3_backup *)) \
    X(int, sqlite3_prepare_v2, (sqlite3 *, const char *, int, sqlite3_stmt **, const char **)) \
    X(int, sqlite3_step, (sqlite3_stmt *)) \
    X(const unsigned char *, sqlite3_column_text, (sqlite3_stmt *, int)) \
    X(int, sqlite3_finalize, (sqlite3_stmt *))

APPHOME_LAZY_LIBRARY(APPHOME_SQLITE_FUNCTIONS, "libsqlite3.so.0", apphome_sqlite3_load)

#define LOADED (apphome_sqlite3_load() == NULL)

int apphome_sqlite3_open_v2(const char *filename, sqlite3 **db, int flags, const char *vfs) {
    if (!LOADED) { if (db) *db = NULL; return SQLITE_CANTOPEN; }
    return api.sqlite3_open_v2(filename, db, flags, vfs);
}
int apphome_sqlite3_close_v2(sqlite3 *db) { return LOADED ? api.sqlite3_close_v2(db) : SQLITE_ERROR; }
int apphome_sqlite3_extended_result_codes(sqlite3 *db, int onoff) { return LOADED ? api.sqlite3_extended_result_codes(db, onoff) : SQLITE_ERROR; }
int apphome_sqlite3_extended_errcode(sqlite3 *db) { return LOADED ? api.sqlite3_extended_errcode(db) : SQLITE_ERROR; }
const char *apphome_sqlite3_errstr(int code) { return LOADED ? api.sqlite3_errstr(code) : apphome_sqlite3_load(); }
int apphome_sqlite3_exec(sqlite3 *db, const char *sql, int (*callback)(void *, int, char **, char **), void *context, char **errmsg) {
    return LOADED ? api.sqlite3_exec(db, sql, callback, context, errmsg) : SQLITE_ERROR;
}
int apphome_sqlite3_busy_handler(sqlite3 *db, int (*handler)(void *, int), void *context) {
    return LOADED ? api.sqlite3_busy_handler(db, handler, context) : SQLITE_ERROR;
}
sqlite3_backup *apphome_sqlite3_backup_init(sqlite3 *destination, const char *destinationName, sqlite3 *source, const char *sourceName) {
    return LOADED ? api.sqlite3_backup_init(destination, destinationName, source, sourceName) : NULL;
}
int apphome_sqlite3_backup_step(sqlite3_backup *backup, int pages) { return LOADED ? api.sqlite3_backup_step(backup, pages) : SQLITE_ERROR; }
int apphome_sqlite3_backup_finish(sqlite3_backup *backup) { return LOADED ? api.sqlite3_backup_finish(backup) : SQLITE_ERROR; }
int apphome_sqlite3_prepare_v2(sqlite3 *db, const char *sql, int bytes, sqlite3_stmt **statement, const char **tail) {
    if (!LOADED) { if (statement) *statement = NULL; return SQLITE_ERROR; }
    return api.sqlite3_prepare_v2(db, sql, bytes, statement, tail);
}
int apphome_sqlite3_step(sqlite3_stmt *statement) { return LOADED ? api.sqlite3_step(statement) : SQLITE_ERROR; }
const unsigned char *apphome_sqlite3_column_text(sqlite3_stmt *statement, int column) {
    return LOADED ? api.sqlite3_column_text(statement, column) : NULL;
}
int apphome_sqlite3_finalize(sqlite3_stmt *statement) { return LOADED ? api.sqlite3_finalize(statement) : SQLITE_ERROR; }
