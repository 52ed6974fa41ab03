// libsecret and GLib, resolved at run time (see include/CSecret.h for why).
//
// No libsecret or GLib header is included: the few types used are declared
// here as libsecret 0.20 / GLib 2.x define them in their stable ABI
// (opaque pointers, the GError and GList structs, the enum values used).
#define _GNU_SOURCE
#include "CSecret.h"

#include "CLazyLibrary.h"
#include <linux/keyctl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

typedef uint32_t GQuark;
typedef struct { GQuark domain; int code; char *message; } GError;
typedef struct GList { void *data; struct GList *next; struct GList *prev; } GList;
typedef void *gpointer;
typedef unsigned (*GHashFunc)(const void *);
typedef int (*GEqualFunc)(const void *, const void *);
typedef void (*GDestroyNotify)(void *);
typedef void (*GDBusSignalCallback)(void *connection, const char *sender, const char *path, const char *interface,
                                    const char *signal, void *parameters, void *data);
typedef void *(*GThreadFunc)(void *);

enum { SECRET_SCHEMA_NONE = 0, SECRET_SCHEMA_ATTRIBUTE_STRING = 0 };
enum { SECRET_SERVICE_OPEN_SESSION = 1 << 1, SECRET_SEARCH_ALL = 1 << 1 };
enum { SECRET_ERROR_IS_LOCKED = 2 };
enum { G_BUS_TYPE_SESSION = 2, G_DBUS_CALL_FLAGS_NONE = 0, G_DBUS_SIGNAL_FLAGS_NONE = 0 };

/// Every function used, by name: one place to see what is resolved.
#define APPHOME_SECRET_FUNCTIONS(X) \
    X(void *, secret_schema_newv, (const char *, int, void *)) \
    X(void, secret_schema_unref, (void *)) \
    X(int, secret_password_storev_sync, (void *, void *, const char *, const char *, const char *, void *, GError **)) \
    X(char *, secret_password_lookupv_nonpageable_sync, (void *, void *, void *, GError **)) \
    X(void, secret_password_free, (char *)) \
    X(int, secret_password_clearv_sync, (void *, void *, void *, GError **)) \
    X(void *, secret_service_get_sync, (int, void *, GError **)) \
    X(int, secret_service_search_for_dbus_paths_sync, (void *, void *, void *, void *, char ***, char ***, GError **)) \
    X(void *, secret_service_get_secret_for_dbus_path_sync, (void *, const char *, void *, GError **)) \
    X(const char *, secret_value_get, (void *, size_t *)) \
    X(void *, secret_value_new, (const char *, long, const char *)) \
    X(void, secret_value_unref, (void *)) \
    X(GQuark, secret_error_get_quark, (void)) \
    X(GList *, secret_service_search_sync, (void *, void *, void *, int, void *, GError **)) \
    X(int, secret_service_lock_dbus_paths_sync, (void *, const char **, void *, char ***, GError **)) \
    X(int, secret_service_unlock_dbus_paths_sync, (void *, const char **, void *, char ***, GError **)) \
    X(void *, secret_service_encode_dbus_secret, (void *, void *)) \
    X(void *, g_hash_table_new_full, (GHashFunc, GEqualFunc, GDestroyNotify, GDestroyNotify)) \
    X(void, g_hash_table_insert, (void *, void *, void *)) \
    X(void, g_hash_table_unref, (void *)) \
    X(unsigned, g_str_hash, (const void *)) \
    X(int, g_str_equal, (const void *, const void *)) \
    X(void, g_free, (void *)) \
    X(char *, g_strdup, (const char *)) \
    X(char *, g_strndup, (const char *, size_t)) \
    X(void, g_strfreev, (char **)) \
    X(void, g_error_free, (GError *)) \
    X(const char *, g_quark_to_string, (GQuark)) \
    X(void, g_object_unref, (void *)) \
    X(void, g_list_free_full, (GList *, GDestroyNotify)) \
    X(const char *, g_dbus_proxy_get_object_path, (void *)) \
    X(void *, g_dbus_proxy_get_connection, (void *)) \
    X(const char *, g_dbus_proxy_get_name, (void *)) \
    X(void *, g_dbus_connection_call_sync, (void *, const char *, const char *, const char *, const char *, void *, void *, int, int, void *, GError **)) \
    X(void *, g_variant_new, (const char *, ...)) \
    X(void, g_variant_unref, (void *)) \
    X(void, g_variant_get, (void *, const char *, ...)) \
    X(int, g_variant_lookup, (void *, const char *, const char *, ...)) \
    X(int, g_variant_is_of_type, (void *, const void *)) \
    X(const void *, g_variant_type_checked_, (const char *)) \
    X(int, g_dbus_error_is_remote_error, (const GError *)) \
    X(char *, g_dbus_error_get_remote_error, (const GError *)) \
    X(void *, g_bus_get_sync, (int, void *, GError **)) \
    X(unsigned, g_dbus_connection_signal_subscribe, (void *, const char *, const char *, const char *, const char *, const char *, int, GDBusSignalCallback, void *, GDestroyNotify)) \
    X(void *, g_main_context_new, (void)) \
    X(void, g_main_context_push_thread_default, (void *)) \
    X(void *, g_main_loop_new, (void *, int)) \
    X(void, g_main_loop_run, (void *)) \
    X(void *, g_thread_new, (const char *, GThreadFunc, void *)) \
    X(void, g_thread_unref, (void *))

static struct { APPHOME_SECRET_FUNCTIONS(APPHOME_LAZY_FIELD) } api;

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static char *load_failure;  // NULL once everything resolved
static char *forbidden;     // set by apphome_secret_forbid_loading: never dlopen

void apphome_secret_forbid_loading(const char *reason) {
    if (forbidden == NULL) forbidden = strdup(reason ? reason : "libsecret is not loaded by this program");
}

static void load(void) {
    // A statically linked program cannot load shared libraries safely (a
    // second C library would come with them): it says so instead.
    if (forbidden != NULL) {
        load_failure = strdup(forbidden);
        return;
    }
    // Its dependencies (GLib, GObject, GIO) come with it; dlsym on its
    // handle searches them too.
    static const apphome_lazy_symbol symbols[] = { APPHOME_SECRET_FUNCTIONS(APPHOME_LAZY_SYMBOL) };
    load_failure = apphome_lazy_library_open("libsecret-1.so.0", symbols, APPHOME_LAZY_COUNT(symbols));
}

static void set_error(apphome_secret_error *out, const char *domain, int code, const char *message) {
    if (out == NULL) return;
    free(out->domain); free(out->message);
    out->domain = strdup(domain);
    out->code = code;
    out->message = strdup(message ? message : "");
}

/// Moves a GError into `out` and frees it.
static void take_error(apphome_secret_error *out, GError *error) {
    if (error == NULL) { set_error(out, "unknown", 0, "unknown failure"); return; }
    const char *domain = api.g_quark_to_string(error->domain);
    set_error(out, domain ? domain : "unknown", error->code, error->message);
    api.g_error_free(error);
}

void apphome_secret_error_clear(apphome_secret_error *error) {
    if (error == NULL) return;
    free(error->domain); free(error->message);
    error->domain = NULL; error->message = NULL; error->code = 0;
}

int apphome_secret_load(apphome_secret_error *error) {
    pthread_once(&load_once, load);
    if (load_failure != NULL) { set_error(error, forbidden != NULL ? "forbidden" : "dlopen", 0, load_failure); return 0; }
    return 1;
}

/// A schema of string attributes `keys` and the attribute table, both to
/// be released with release_query.
static void make_query(const char *schema, const char *const *keys, const char *const *values, size_t count,
                       void **schema_out, void **table_out) {
    void *description = api.g_hash_table_new_full(api.g_str_hash, api.g_str_equal, api.g_free, NULL);
    void *table = api.g_hash_table_new_full(api.g_str_hash, api.g_str_equal, api.g_free, api.g_free);
    for (size_t i = 0; i < count; i++) {
        api.g_hash_table_insert(description, api.g_strdup(keys[i]), (void *)(intptr_t)SECRET_SCHEMA_ATTRIBUTE_STRING);
        api.g_hash_table_insert(table, api.g_strdup(keys[i]), api.g_strdup(values[i]));
    }
    *schema_out = api.secret_schema_newv(schema, SECRET_SCHEMA_NONE, description);
    api.g_hash_table_unref(description);
    *table_out = table;
}

static void release_query(void *schema, void *table) {
    api.secret_schema_unref(schema);
    api.g_hash_table_unref(table);
}

int apphome_secret_store(const char *schema, const char *const *keys, const char *const *values, size_t count,
                         const char *label, const char *secret, apphome_secret_error *error) {
    if (!apphome_secret_load(error)) return 0;
    void *s, *t;
    make_query(schema, keys, values, count, &s, &t);
    GError *e = NULL;
    int ok = api.secret_password_storev_sync(s, t, NULL, label, secret, NULL, &e);
    release_query(s, t);
    if (!ok) { take_error(error, e); return 0; }
    return 1;
}

char *apphome_secret_lookup(const char *schema, const char *const *keys, const char *const *values, size_t count,
                            apphome_secret_error *error) {
    if (!apphome_secret_load(error)) return NULL;
    void *s, *t;
    make_query(schema, keys, values, count, &s, &t);
    GError *e = NULL;
    char *found = api.secret_password_lookupv_nonpageable_sync(s, t, NULL, &e);
    release_query(s, t);
    if (found == NULL && e != NULL) take_error(error, e);
    return found;
}

void apphome_secret_password_free(char *password) {
    if (password != NULL) api.secret_password_free(password);
}

int apphome_secret_clear(const char *schema, const char *const *keys, const char *const *values, size_t count,
                         apphome_secret_error *error) {
    if (!apphome_secret_load(error)) return -1;
    void *s, *t;
    make_query(schema, keys, values, count, &s, &t);
    GError *e = NULL;
    int ok = api.secret_password_clearv_sync(s, t, NULL, &e);
    release_query(s, t);
    if (!ok && e != NULL) { take_error(error, e); return -1; }
    return ok ? 1 : 0;
}

// Locked collections, without prompts. libsecret's password calls try to
// unlock a locked item (a prompt, which fails or hangs without a display);
// these search with no UNLOCK flag, so a locked item is reported as such.

long apphome_secret_lookup_state(const char *schema, const char *const *keys, const char *const *values, size_t count,
                                 void *buffer, size_t capacity, apphome_secret_error *error) {
    if (!apphome_secret_load(error)) return -3;
    GError *e = NULL;
    void *service = api.secret_service_get_sync(SECRET_SERVICE_OPEN_SESSION, NULL, &e);
    if (service == NULL) { take_error(error, e); return -3; }
    void *s, *t;
    make_query(schema, keys, values, count, &s, &t);
    // By D-Bus path: one SearchItems and one GetSecret, no item proxies to build.
    char **unlocked = NULL, **locked = NULL;
    long result = -1;
    if (!api.secret_service_search_for_dbus_paths_sync(service, s, t, NULL, &unlocked, &locked, &e)) {
        take_error(error, e);
        result = -3;
    } else if (unlocked != NULL && unlocked[0] != NULL) {
        void *value = api.secret_service_get_secret_for_dbus_path_sync(service, unlocked[0], NULL, &e);
        if (value != NULL) {
            size_t length = 0;
            const char *bytes = api.secret_value_get(value, &length);
            if (length <= capacity) { memcpy(buffer, bytes, length); result = (long)length; } else { result = -4; }
            api.secret_value_unref(value);
        } else if (e == NULL || (e->domain == api.secret_error_get_quark() && e->code == SECRET_ERROR_IS_LOCKED)) {
            // Locked between the search and the read.
            if (e != NULL) api.g_error_free(e);
            result = -2;
        } else {
            take_error(error, e);
            result = -3;
        }
    } else if (locked != NULL && locked[0] != NULL) {
        result = -2;
    }
    api.g_strfreev(unlocked);
    api.g_strfreev(locked);
    release_query(s, t);
    api.g_object_unref(service);
    return result;
}

/// The D-Bus path of the collection holding the first match (free with
/// g_free), or NULL (no item, or `*e` set).
static char *collection_path(void *service, void *schema, void *table, GError **e) {
    GList *items = api.secret_service_search_sync(service, schema, table, SECRET_SEARCH_ALL, NULL, e);
    if (items == NULL) return NULL;
    const char *item_path = api.g_dbus_proxy_get_object_path(items->data);
    const char *slash = strrchr(item_path, '/');
    char *collection = slash ? api.g_strndup(item_path, (size_t)(slash - item_path)) : NULL;
    api.g_list_free_full(items, api.g_object_unref);
    return collection;
}

int apphome_secret_set_locked(const char *schema, const char *const *keys, const char *const *values, size_t count,
                              int lock, apphome_secret_error *error) {
    if (!apphome_secret_load(error)) return -1;
    GError *e = NULL;
    void *service = api.secret_service_get_sync(SECRET_SERVICE_OPEN_SESSION, NULL, &e);
    if (service == NULL) { take_error(error, e); return -1; }
    void *s, *t;
    make_query(schema, keys, values, count, &s, &t);
    char *collection = collection_path(service, s, t, &e);
    int result = 0;
    if (e != NULL) {
        take_error(error, e);
        result = -1;
    } else if (collection != NULL) {
        const char *paths[] = { collection, NULL };
        char **done = NULL;
        int n = lock ? api.secret_service_lock_dbus_paths_sync(service, paths, NULL, &done, &e)
                     : api.secret_service_unlock_dbus_paths_sync(service, paths, NULL, &done, &e);
        api.g_strfreev(done);
        if (n < 0 || e != NULL) { take_error(error, e); result = -1; } else { result = n > 0 ? 1 : 0; }
    }
    api.g_free(collection);
    release_query(s, t);
    api.g_object_unref(service);
    return result;
}

int apphome_secret_unlock_with_password(const char *schema, const char *const *keys, const char *const *values, size_t count,
                                        const void *password, size_t length, apphome_secret_error *error) {
    if (!apphome_secret_load(error)) return -1;
    GError *e = NULL;
    void *service = api.secret_service_get_sync(SECRET_SERVICE_OPEN_SESSION, NULL, &e);
    if (service == NULL) { take_error(error, e); return -1; }
    void *s, *t;
    make_query(schema, keys, values, count, &s, &t);
    char *collection = collection_path(service, s, t, &e);
    int result = 0;
    if (e != NULL) {
        take_error(error, e);
        result = -1;
    } else if (collection != NULL) {
        void *value = api.secret_value_new(password, (long)length, "text/plain");
        void *encoded = api.secret_service_encode_dbus_secret(service, value);
        api.secret_value_unref(value);
        // gnome-keyring's internal interface (named so in gnome-keyring 42).
        void *reply = api.g_dbus_connection_call_sync(api.g_dbus_proxy_get_connection(service), api.g_dbus_proxy_get_name(service),
                                                      "/org/freedesktop/secrets", "org.gnome.keyring.InternalUnsupportedGuiltRiddenInterface",
                                                      "UnlockWithMasterPassword", api.g_variant_new("(o@(oayays))", collection, encoded),
                                                      NULL, G_DBUS_CALL_FLAGS_NONE, -1, NULL, &e);
        if (reply != NULL) {
            api.g_variant_unref(reply);
            result = 1;
        } else {
            result = -1;
            if (e != NULL && api.g_dbus_error_is_remote_error(e)) {
                char *name = api.g_dbus_error_get_remote_error(e);
                if (name != NULL && strcmp(name, "org.gnome.keyring.Error.Denied") == 0) {
                    result = -2;
                    api.g_error_free(e);
                    e = NULL;
                }
                api.g_free(name);
            }
            if (e != NULL) take_error(error, e);
        }
    }
    api.g_free(collection);
    release_query(s, t);
    api.g_object_unref(service);
    return result;
}

// Watching the Secret Service for collections that lock (prefsd's keybag).
// gnome-keyring emits org.freedesktop.DBus.Properties.PropertiesChanged
// with {'Locked': <true>} on the collection's path when it locks; the
// service's CollectionChanged comes with it (and is all some providers send).

struct lock_watch {
    apphome_lock_callback callback;
    void *context;
    void *connection;
};

static void properties_changed(void *c, const char *sender, const char *path, const char *interface,
                               const char *signal, void *parameters, void *data) {
    struct lock_watch *w = data;
    if (!api.g_variant_is_of_type(parameters, api.g_variant_type_checked_("(sa{sv}as)"))) return;
    const char *changed_interface = NULL;
    void *changed = NULL;
    const char **invalidated = NULL;
    api.g_variant_get(parameters, "(&s@a{sv}^a&s)", &changed_interface, &changed, &invalidated);
    int locked = 0;
    if (api.g_variant_lookup(changed, "Locked", "b", &locked)) {
        w->callback(w->context, locked ? 1 : 0);
    } else if (invalidated != NULL) {
        for (const char **i = invalidated; *i != NULL; i++) {
            if (strcmp(*i, "Locked") == 0) { w->callback(w->context, -1); break; }
        }
    }
    api.g_free(invalidated);
    api.g_variant_unref(changed);
}

static void collection_changed(void *c, const char *sender, const char *path, const char *interface,
                               const char *signal, void *parameters, void *data) {
    struct lock_watch *w = data;
    w->callback(w->context, -1);
}

static void *watch_thread(void *data) {
    struct lock_watch *w = data;
    void *context = api.g_main_context_new();
    api.g_main_context_push_thread_default(context);
    // Signals are delivered in the context that is the thread default when subscribing.
    api.g_dbus_connection_signal_subscribe(w->connection, "org.freedesktop.secrets", "org.freedesktop.DBus.Properties", "PropertiesChanged",
                                           NULL, "org.freedesktop.Secret.Collection", G_DBUS_SIGNAL_FLAGS_NONE, properties_changed, w, NULL);
    api.g_dbus_connection_signal_subscribe(w->connection, "org.freedesktop.secrets", "org.freedesktop.Secret.Service", "CollectionChanged",
                                           "/org/freedesktop/secrets", NULL, G_DBUS_SIGNAL_FLAGS_NONE, collection_changed, w, NULL);
    api.g_main_loop_run(api.g_main_loop_new(context, 0));
    return NULL;
}

int apphome_secret_watch_locks(apphome_lock_callback callback, void *context, apphome_secret_error *error) {
    if (!apphome_secret_load(error)) return 0;
    GError *e = NULL;
    void *connection = api.g_bus_get_sync(G_BUS_TYPE_SESSION, NULL, &e);
    if (connection == NULL) { take_error(error, e); return 0; }
    struct lock_watch *w = calloc(1, sizeof *w);
    if (w == NULL) { set_error(error, "apphome", 0, "out of memory"); return 0; }
    w->callback = callback;
    w->context = context;
    w->connection = connection;
    api.g_thread_unref(api.g_thread_new("apphome-lock-watch", watch_thread, w));
    return 1;
}

// The kernel's user keyring (keyctl(2)), where the after-first-unlock
// class keys live until reboot or logout: three syscalls (variadic, so
// wrapped here) rather than libkeyutils.

long apphome_keyring_store(const char *description, const void *payload, size_t length, unsigned seconds) {
    long id = syscall(SYS_add_key, "user", description, payload, length, KEY_SPEC_USER_KEYRING);
    if (id < 0) return -1;
    syscall(SYS_keyctl, KEYCTL_SETPERM, id, 0x3f000000 | 0x000b0000); // possessor: all; user: view, read, search
    syscall(SYS_keyctl, KEYCTL_SET_TIMEOUT, id, seconds);
    return id;
}

long apphome_keyring_read(const char *description, void *buffer, size_t length) {
    long id = syscall(SYS_keyctl, KEYCTL_SEARCH, KEY_SPEC_USER_KEYRING, "user", description, 0);
    if (id < 0) return -1;
    return syscall(SYS_keyctl, KEYCTL_READ, id, buffer, length);
}

void apphome_keyring_remove(const char *description) {
    long id = syscall(SYS_keyctl, KEYCTL_SEARCH, KEY_SPEC_USER_KEYRING, "user", description, 0);
    if (id >= 0) syscall(SYS_keyctl, KEYCTL_INVALIDATE, id);
}

void apphome_disable_core_dumps(void) {
    struct rlimit none = {0, 0};
    setrlimit(RLIMIT_CORE, &none);
    prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
}
