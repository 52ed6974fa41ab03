// The Secret Service through libsecret, loaded on first use (dlopen), and
// the kernel's user keyring: imported only by KeychainSecretService.
//
// Nothing here links libsecret or GLib: a command that never talks to the
// Secret Service (prefsd answers, or the key is in a file) never loads
// them. The first call that needs the service loads libsecret-1.so.0 (which
// brings GLib, GObject and GIO) and resolves what it uses; a machine
// without it gets an error naming the library, never a crash.
#ifndef APPHOME_CSECRET_H
#define APPHOME_CSECRET_H

#include <stddef.h>

/// A failure from libsecret or GLib: the GError's domain, code and
/// message (malloc'd; free with apphome_secret_error_clear).
typedef struct apphome_secret_error {
    char *domain;
    int code;
    char *message;
} apphome_secret_error;

void apphome_secret_error_clear(apphome_secret_error *error);

/// Loads libsecret if it is not loaded yet: 1 when usable, else 0 with `error` set.
int apphome_secret_load(apphome_secret_error *error);

/// Makes every later load fail with `reason` (domain "dlopen") instead of
/// calling dlopen: for a statically linked program, which hands such work to
/// a dynamically linked one. Call it before anything may load libsecret.
void apphome_secret_forbid_loading(const char *reason);

/// Stores the NUL-terminated `secret` under the schema and the `count`
/// attributes (keys[i] = values[i]) in the default collection. 1 or 0 (error set).
int apphome_secret_store(const char *schema, const char *const *keys, const char *const *values, size_t count,
                         const char *label, const char *secret, apphome_secret_error *error);

/// The secret under the attributes, in non-pageable memory (free with
/// apphome_secret_password_free), or NULL: none (error unset) or a failure (error set).
char *apphome_secret_lookup(const char *schema, const char *const *keys, const char *const *values, size_t count,
                            apphome_secret_error *error);
void apphome_secret_password_free(char *password);

/// Removes every match: 1 removed, 0 none, -1 failure (error set).
int apphome_secret_clear(const char *schema, const char *const *keys, const char *const *values, size_t count,
                         apphome_secret_error *error);

/// Copies the first match's secret into `buffer` without prompting: its
/// length, -1 no such item, -2 locked, -3 failure (error set), -4 longer than `capacity`.
long apphome_secret_lookup_state(const char *schema, const char *const *keys, const char *const *values, size_t count,
                                 void *buffer, size_t capacity, apphome_secret_error *error);

/// Locks (`lock` 1) or unlocks (0; the service may prompt) the collection
/// holding the first match: 1 done, 0 no such item or not done, -1 failure.
int apphome_secret_set_locked(const char *schema, const char *const *keys, const char *const *values, size_t count,
                              int lock, apphome_secret_error *error);

/// Unlocks the collection holding the first match with its password,
/// without a prompt (gnome-keyring's UnlockWithMasterPassword): 1 done,
/// 0 no such item, -2 password refused, -1 failure.
int apphome_secret_unlock_with_password(const char *schema, const char *const *keys, const char *const *values, size_t count,
                                        const void *password, size_t length, apphome_secret_error *error);

/// Called on the watcher's thread: `state` 1 a collection locked, 0 one
/// unlocked, -1 one changed in a way that may be either.
typedef void (*apphome_lock_callback)(void *context, int state);

/// Starts a thread that calls `callback` when a Secret Service collection
/// locks or unlocks, for the rest of the process: 1, or 0 (error set).
int apphome_secret_watch_locks(apphome_lock_callback callback, void *context, apphome_secret_error *error);

// The kernel's user keyring (keyctl(2)).

/// Adds (or replaces) a "user" key in the user keyring, readable by the
/// user's processes, expiring after `seconds` (0: never). The key id or -1.
long apphome_keyring_store(const char *description, const void *payload, size_t length, unsigned seconds);
/// Reads a "user" key of the user keyring into `buffer`: its length or -1.
long apphome_keyring_read(const char *description, void *buffer, size_t length);
/// Removes a "user" key from the user keyring, if any.
void apphome_keyring_remove(const char *description);

/// No core dumps, not ptrace-attachable by other processes of the user.
void apphome_disable_core_dumps(void);

#endif
