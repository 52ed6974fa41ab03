import CSecret
import Keychain

/// Watches the Secret Service for collections that lock and tells a
/// ``Keybag``: prefsd drops the device root key (the `whenUnlocked…`
/// classes) the moment the login collection locks, and keeps no key a
/// locked store would refuse.
///
/// gnome-keyring signals `PropertiesChanged` with `Locked` on the
/// collection; the service's `CollectionChanged` comes with it. Any lock,
/// or a change that may be one, drops the root keys (dropping is always
/// safe: the next call that needs one asks the store again).
public enum SecretServiceLockWatch {
    /// Starts watching for the rest of the process, on a thread of its own.
    ///
    /// - Throws: ``KeychainError/secretService(domain:code:message:)`` when
    ///   the session bus cannot be reached.
    public static func start(keybag: Keybag) throws(KeychainError) {
        let context = Unmanaged.passRetained(keybag).toOpaque()
        var error = apphome_secret_error()
        let callback: apphome_lock_callback = { context, state in
            let keybag = Unmanaged<Keybag>.fromOpaque(context!).takeUnretainedValue()
            switch state {
            case 1: keybag.storeLocked()
            case 0: keybag.storeMayHaveUnlocked()
            default: keybag.storeChanged()
            }
        }
        guard apphome_secret_watch_locks(callback, context, &error) == 1 else {
            Unmanaged<Keybag>.fromOpaque(context).release()
            defer { apphome_secret_error_clear(&error) }
            let domain = error.domain.map { String(cString: $0) } ?? "unknown"
            let message = error.message.map { String(cString: $0) } ?? "unknown failure"
            throw .secretService(domain: domain, code: Int32(error.code), message: message)
        }
        keybag.watcherStarted()
    }
}
