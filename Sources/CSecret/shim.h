// libsecret (and the GLib it brings), imported only by the Keychain target.
// Swift cannot call C variadic functions, so callers use the `…v_sync`
// variants with a GHashTable of attributes built by these helpers.
#include <libsecret/secret.h>

/// A string → string hash table that owns copies of its keys and values.
static inline GHashTable *apphome_string_table_new(void) {
    return g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
}

/// Inserts copies of `key` and `value`.
static inline void apphome_string_table_insert(GHashTable *table, const char *key, const char *value) {
    g_hash_table_insert(table, g_strdup(key), g_strdup(value));
}

/// A schema-description table: attribute name → SecretSchemaAttributeType.
static inline GHashTable *apphome_schema_table_new(void) {
    return g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
}

/// Declares `name` as a string attribute of a schema being built.
static inline void apphome_schema_table_add_string(GHashTable *table, const char *name) {
    g_hash_table_insert(table, g_strdup(name), GINT_TO_POINTER(SECRET_SCHEMA_ATTRIBUTE_STRING));
}

/// The numeric value of the libsecret error domain (a function-like macro in C).
static inline GQuark apphome_secret_error_quark(void) { return SECRET_ERROR; }
