// SQLite 3, imported only by the SQLiteBackup target.
#include <sqlite3.h>
