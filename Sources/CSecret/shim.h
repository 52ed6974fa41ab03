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

// The kernel's user keyring (keyctl(2)), where `security` caches the device
// root key for a short time. syscall(2) is variadic, so these wrap it.
#include <linux/keyctl.h>
#include <sys/syscall.h>
#include <unistd.h>

/// Adds (or replaces) a "user" key `description` in the user keyring,
/// readable by the user's processes, expiring after `seconds`. Returns the
/// key id or -1 (errno set).
static inline long apphome_keyring_store(const char *description, const void *payload, size_t length, unsigned seconds) {
    long id = syscall(SYS_add_key, "user", description, payload, length, KEY_SPEC_USER_KEYRING);
    if (id < 0) return -1;
    syscall(SYS_keyctl, KEYCTL_SETPERM, id, 0x3f000000 | 0x000b0000); // possessor: all; user: view, read, search
    syscall(SYS_keyctl, KEYCTL_SET_TIMEOUT, id, seconds);
    return id;
}

/// Reads the "user" key `description` of the user keyring into `buffer`;
/// returns its length or -1.
static inline long apphome_keyring_read(const char *description, void *buffer, size_t length) {
    long id = syscall(SYS_keyctl, KEYCTL_SEARCH, KEY_SPEC_USER_KEYRING, "user", description, 0);
    if (id < 0) return -1;
    return syscall(SYS_keyctl, KEYCTL_READ, id, buffer, length);
}

/// Removes the "user" key `description` from the user keyring, if any.
static inline void apphome_keyring_remove(const char *description) {
    long id = syscall(SYS_keyctl, KEYCTL_SEARCH, KEY_SPEC_USER_KEYRING, "user", description, 0);
    if (id >= 0) syscall(SYS_keyctl, KEYCTL_INVALIDATE, id);
}

// Process hardening for commands that hold secrets: no core dumps, not
// ptrace-attachable by other processes of the user (prctl is variadic).
#include <sys/prctl.h>
#include <sys/resource.h>

static inline void apphome_disable_core_dumps(void) {
    struct rlimit none = {0, 0};
    setrlimit(RLIMIT_CORE, &none);
    prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
}
