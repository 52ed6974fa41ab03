// libsecret (and the GLib it brings), imported only by the Keychain target.
// Swift cannot call C variadic functions, so callers use the `…v_sync`
// variants with a GHashTable of attributes built by these helpers.
// The D-Bus path calls (secret-paths.h: lock and unlock by path, the
// encoding of a secret for the session) are libsecret's "unstable" API.
#define SECRET_API_SUBJECT_TO_CHANGE 1
#include <libsecret/secret.h>
#include <string.h>

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

// Locked collections, without prompts. libsecret's password calls try to
// unlock a locked item (a prompt, which fails or hangs without a display);
// these search with no UNLOCK flag, so a locked item is reported as such.

/// Copies the secret of the first item matching `attributes` into `buffer`.
/// Returns its length, -1 when there is no such item, -2 when the items are
/// all locked, -3 on error (`error` set), -4 when `capacity` is too small.
static inline long apphome_secret_lookup_state(const SecretSchema *schema, GHashTable *attributes,
                                               void *buffer, size_t capacity, GError **error) {
    SecretService *service = secret_service_get_sync(SECRET_SERVICE_OPEN_SESSION, NULL, error);
    if (service == NULL) return -3;
    // By D-Bus path: one SearchItems and one GetSecret, no item proxies to build.
    gchar **unlocked = NULL, **locked = NULL;
    long result = -1;
    if (!secret_service_search_for_dbus_paths_sync(service, schema, attributes, NULL, &unlocked, &locked, error)) {
        result = -3;
    } else if (unlocked != NULL && unlocked[0] != NULL) {
        SecretValue *value = secret_service_get_secret_for_dbus_path_sync(service, unlocked[0], NULL, error);
        if (value != NULL) {
            gsize length = 0;
            const gchar *bytes = secret_value_get(value, &length);
            if (length <= capacity) { memcpy(buffer, bytes, length); result = (long)length; } else { result = -4; }
            secret_value_unref(value);
        } else if (*error == NULL || g_error_matches(*error, SECRET_ERROR, SECRET_ERROR_IS_LOCKED)) {
            // Locked between the search and the read.
            g_clear_error(error);
            result = -2;
        } else {
            result = -3;
        }
    } else if (locked != NULL && locked[0] != NULL) {
        result = -2;
    }
    g_strfreev(unlocked);
    g_strfreev(locked);
    g_object_unref(service);
    return result;
}

/// The D-Bus path of the collection holding the first item matching
/// `attributes` (free with g_free), or NULL (no item, or `error` set).
static inline gchar *apphome_secret_collection_path(SecretService *service, const SecretSchema *schema,
                                                    GHashTable *attributes, GError **error) {
    GList *items = secret_service_search_sync(service, schema, attributes, SECRET_SEARCH_ALL, NULL, error);
    if (items == NULL) return NULL;
    const gchar *item_path = g_dbus_proxy_get_object_path(G_DBUS_PROXY(items->data));
    const gchar *slash = strrchr(item_path, '/');
    gchar *collection = slash ? g_strndup(item_path, (gsize)(slash - item_path)) : NULL;
    g_list_free_full(items, g_object_unref);
    return collection;
}

/// Locks (`lock` 1) or unlocks (0; the service may prompt) the collection
/// holding the item. Returns 1 when done, 0 when there is no such item or
/// the service did not do it, -1 on error.
static inline int apphome_secret_set_locked(const SecretSchema *schema, GHashTable *attributes, int lock, GError **error) {
    SecretService *service = secret_service_get_sync(SECRET_SERVICE_OPEN_SESSION, NULL, error);
    if (service == NULL) return -1;
    gchar *collection = apphome_secret_collection_path(service, schema, attributes, error);
    int result = *error != NULL ? -1 : 0;
    if (collection != NULL) {
        const gchar *paths[] = { collection, NULL };
        gchar **done = NULL;
        gint n = lock ? secret_service_lock_dbus_paths_sync(service, paths, NULL, &done, error)
                      : secret_service_unlock_dbus_paths_sync(service, paths, NULL, &done, error);
        g_strfreev(done);
        result = n < 0 || *error != NULL ? -1 : (n > 0 ? 1 : 0);
        g_free(collection);
    }
    g_object_unref(service);
    return result;
}

/// Unlocks the collection holding the item with its password, without a
/// prompt: gnome-keyring's internal
/// `UnlockWithMasterPassword` (the interface is named
/// `org.gnome.keyring.InternalUnsupportedGuiltRiddenInterface` in
/// gnome-keyring 42), the secret encoded for this client's
/// session. Returns 1 when done, 0 when there is no such item, -2 when the
/// service refuses the password (org.gnome.keyring.Error.Denied), -1 on error.
static inline int apphome_secret_unlock_with_password(const SecretSchema *schema, GHashTable *attributes,
                                                      const void *password, size_t length, GError **error) {
    SecretService *service = secret_service_get_sync(SECRET_SERVICE_OPEN_SESSION, NULL, error);
    if (service == NULL) return -1;
    gchar *collection = apphome_secret_collection_path(service, schema, attributes, error);
    int result = *error != NULL ? -1 : 0;
    if (collection != NULL) {
        SecretValue *value = secret_value_new(password, (gssize)length, "text/plain");
        GVariant *encoded = secret_service_encode_dbus_secret(service, value);
        secret_value_unref(value);
        GDBusProxy *proxy = G_DBUS_PROXY(service);
        GVariant *reply = g_dbus_connection_call_sync(g_dbus_proxy_get_connection(proxy), g_dbus_proxy_get_name(proxy),
                                                      "/org/freedesktop/secrets", "org.gnome.keyring.InternalUnsupportedGuiltRiddenInterface",
                                                      "UnlockWithMasterPassword",
                                                      g_variant_new("(o@(oayays))", collection, encoded),
                                                      NULL, G_DBUS_CALL_FLAGS_NONE, -1, NULL, error);
        if (reply != NULL) { g_variant_unref(reply); result = 1; } else { result = -1; }
        if (reply == NULL && *error != NULL && g_dbus_error_is_remote_error(*error)) {
            gchar *name = g_dbus_error_get_remote_error(*error);
            if (name != NULL && strcmp(name, "org.gnome.keyring.Error.Denied") == 0) {
                result = -2;
                g_clear_error(error);
            }
            g_free(name);
        }
        g_free(collection);
    }
    g_object_unref(service);
    return result;
}

// Watching the Secret Service for collections that lock (prefsd's keybag).
// gnome-keyring emits org.freedesktop.DBus.Properties.PropertiesChanged
// with {'Locked': <true>} on the collection's path when it locks; the
// service's CollectionChanged comes with it (and is all some providers send).

/// Called on the watcher's thread: `state` 1 a collection locked, 0 one
/// unlocked, -1 one changed in a way that may be either.
typedef void (*apphome_lock_callback)(void *context, int state);

struct apphome_lock_watch {
    apphome_lock_callback callback;
    void *context;
    GDBusConnection *connection;
};

static inline void apphome_lock_properties_changed(GDBusConnection *c, const gchar *sender, const gchar *path, const gchar *interface,
                                                   const gchar *signal, GVariant *parameters, gpointer data) {
    struct apphome_lock_watch *w = data;
    if (!g_variant_is_of_type(parameters, G_VARIANT_TYPE("(sa{sv}as)"))) return;
    const gchar *changed_interface = NULL;
    GVariant *changed = NULL;
    const gchar **invalidated = NULL;
    g_variant_get(parameters, "(&s@a{sv}^a&s)", &changed_interface, &changed, &invalidated);
    gboolean locked = FALSE;
    if (g_variant_lookup(changed, "Locked", "b", &locked)) {
        w->callback(w->context, locked ? 1 : 0);
    } else if (invalidated != NULL) {
        for (const gchar **i = invalidated; *i != NULL; i++) {
            if (strcmp(*i, "Locked") == 0) { w->callback(w->context, -1); break; }
        }
    }
    g_free(invalidated);
    g_variant_unref(changed);
}

static inline void apphome_lock_collection_changed(GDBusConnection *c, const gchar *sender, const gchar *path, const gchar *interface,
                                                   const gchar *signal, GVariant *parameters, gpointer data) {
    struct apphome_lock_watch *w = data;
    w->callback(w->context, -1);
}

static inline gpointer apphome_lock_watch_thread(gpointer data) {
    struct apphome_lock_watch *w = data;
    GMainContext *context = g_main_context_new();
    g_main_context_push_thread_default(context);
    // Signals are delivered in the context that is the thread default when subscribing.
    g_dbus_connection_signal_subscribe(w->connection, "org.freedesktop.secrets", "org.freedesktop.DBus.Properties", "PropertiesChanged",
                                       NULL, "org.freedesktop.Secret.Collection", G_DBUS_SIGNAL_FLAGS_NONE,
                                       apphome_lock_properties_changed, w, NULL);
    g_dbus_connection_signal_subscribe(w->connection, "org.freedesktop.secrets", "org.freedesktop.Secret.Service", "CollectionChanged",
                                       "/org/freedesktop/secrets", NULL, G_DBUS_SIGNAL_FLAGS_NONE,
                                       apphome_lock_collection_changed, w, NULL);
    GMainLoop *loop = g_main_loop_new(context, FALSE);
    g_main_loop_run(loop);
    return NULL;
}

/// Starts a thread that calls `callback` when a Secret Service collection
/// locks or unlocks, for the rest of the process. Returns 1, or 0 with
/// `error` set when the session bus cannot be reached.
static inline int apphome_secret_watch_locks(apphome_lock_callback callback, void *context, GError **error) {
    GDBusConnection *connection = g_bus_get_sync(G_BUS_TYPE_SESSION, NULL, error);
    if (connection == NULL) return 0;
    struct apphome_lock_watch *w = g_new0(struct apphome_lock_watch, 1);
    w->callback = callback;
    w->context = context;
    w->connection = connection;
    GThread *thread = g_thread_new("apphome-lock-watch", apphome_lock_watch_thread, w);
    g_thread_unref(thread);
    return 1;
}

// The kernel's user keyring (keyctl(2)), where the after-first-unlock
// class keys live until reboot or logout. Three syscalls through glibc's
// syscall(2) (variadic, so wrapped here) rather than libkeyutils: no extra
// package, nothing else of keyutils is needed.
#include <linux/keyctl.h>
#include <sys/syscall.h>
#include <unistd.h>

/// Adds (or replaces) a "user" key `description` in the user keyring,
/// readable by the user's processes, expiring after `seconds` (0: never,
/// until the user keyring goes at reboot or logout). Returns the
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
