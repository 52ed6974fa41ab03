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
        var error: UnsafeMutablePointer<GError>?
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
            let message = error.flatMap { $0.pointee.message.map { String(cString: $0) } } ?? "unknown failure"
            if let error { g_error_free(error) }
            throw .secretService(domain: "g-io-error", code: 0, message: message)
        }
        keybag.watcherStarted()
    }
}
