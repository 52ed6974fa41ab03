#if canImport(Glibc)
import Glibc
#endif
import AppHomeSystem
import Containers
import Keychain
import PrefsProtocol
import PropertyList

/// A keychain call made for a client that proved it acts for an app.
enum KeychainJob {
    /// What the service keeps of the files a keychain call reads, while
    /// they are unchanged (a `stat` each per call): the registry, and the
    /// keychain's files and the apps' credentials (``KeychainReadCache``).
    /// Shared by the loop and the workers.
    final class Caches: Sendable {
        let files = KeychainReadCache()
        let registry: RegistryCache

        init(registry: RegistryCache) { self.registry = registry }

        /// The registry entry of `identifier`, as installed now.
        func entry(for identifier: BundleIdentifier) throws(ContainersError) -> RegistryEntry {
            guard let e = registry.current().entries[identifier] else { throw .notInstalled(identifier.rawValue) }
            return e
        }
    }

    /// Checks that `caller` holds its app's credential, then makes the
    /// call in that app's keychain context (its access groups only); the
    /// caller `login` (no bundle id can be that) must hold the user's
    /// ``LoginCredential`` and gets the login keychain only.
    ///
    /// The login keychain is the user's, never an app's: a peer that runs in
    /// an app's sandbox, or outside one started with `APPHOME_BUNDLE_ID` or
    /// `APPHOME_HOME` (``ProcessContext/appContext(ofProcess:)``), is refused
    /// it whatever credential it shows.
    ///
    /// `keychainLocked` (`security lock-keychain`) is the user's alone: the
    /// keybag then drops every key it keeps, as a reboot does, and the next
    /// call opens the classes afresh (the after-first-unlock ones from the
    /// kernel's keyring, where the first unlock left them).
    ///
    /// A peer in an app's sandbox (`peerSandbox`, read when it connected) is
    /// that app and no other: it acts for its own app only, whatever
    /// credential it shows.
    static func perform(_ request: Request, caller: KeychainCaller, peerPID: Int32 = 0, peerSandbox: PeerSandbox? = nil, root: String,
                        policy: DeviceKeyPolicy, now: @escaping @Sendable () -> PlistDate,
                        caches: Caches? = nil) -> Result<[PlistKey: PlistValue], RemoteError> {
        var policy = policy
        policy.mayWait = true
        // With mayWait the keychain never throws wouldBlock.
        return attempt(request, caller: caller, peerPID: peerPID, peerSandbox: peerSandbox, root: root, policy: policy, now: now, caches: caches)
            ?? .failure(RemoteError(.keychain, KeychainError.wouldBlock.description, status: KeychainError.wouldBlock.status))
    }

    /// Like ``perform(_:caller:peerPID:peerSandbox:root:policy:now:caches:)``
    /// under `policy` as it is: `nil` when the call would have to wait and
    /// `policy` says it may not (``DeviceKeyPolicy/mayWait``).
    static func attempt(_ request: Request, caller: KeychainCaller, peerPID: Int32, peerSandbox: PeerSandbox?, root: String,
                        policy: DeviceKeyPolicy, now: @escaping @Sendable () -> PlistDate,
                        caches: Caches?) -> Result<[PlistKey: PlistValue], RemoteError>? {
        let manager = ContainerManager(root: root)
        if let confined = peerSandbox?.confinedApp, caller.bundleIdentifier != confined {
            return .failure(RemoteError(.notAuthorized, "prefsd: the caller runs in the sandbox of \(confined) and may act for no other app (it named \(caller.bundleIdentifier))"))
        }
        let context: KeychainContext
        if case .keychainLocked = request, caller.bundleIdentifier != KeychainContext.loginGroupName {
            return .failure(RemoteError(.notAuthorized, "prefsd: only the user locks the keychain; \(caller.bundleIdentifier) is an app"))
        }
        if caller.bundleIdentifier == KeychainContext.loginGroupName {
            if let app = peerSandbox.map({ ProcessContext.appContext(pid: peerPID, sandbox: $0) }) ?? appContext(of: peerPID) {
                return .failure(RemoteError(.notAuthorized, "prefsd: the login keychain is the user's and no app may use it: the caller runs in the context of \(app)"))
            }
            // The login keychain: the user's credential, never an app's.
            guard LoginCredential.verify(caller.credential, root: root) else {
                return .failure(RemoteError(.notAuthorized, "prefsd: the caller did not prove it is the user (login keychain)"))
            }
            context = .login
        } else {
            let refused = RemoteError(.notAuthorized, "prefsd: the caller did not prove it acts for the app \(caller.bundleIdentifier)")
            guard let identifier = try? BundleIdentifier(caller.bundleIdentifier),
                  let entry = try? caches?.entry(for: identifier) ?? manager.entry(for: identifier) else {
                return .failure(RemoteError(.notAuthorized, "prefsd: no installed app \(caller.bundleIdentifier)"))
            }
            let home = manager.layout.home(uuid: entry.homeUUID, bundleName: entry.bundleName)
            guard AppCredential.verify(caller.credential, home: home, cache: caches?.files) else { return .failure(refused) }
            do throws(KeychainError) { context = try KeychainContext(installed: entry) } catch {
                return .failure(RemoteError(.keychain, error.description, status: error.status))
            }
        }
        let keychain = Keychain(root: root, policy: policy, now: now, readCache: caches?.files)
        do throws(KeychainError) {
            switch request {
            case .keychainFind(_, let query):
                let found = try keychain.copyMatching(try KeychainWire.query(query), context: context)
                return .success(["items": .array(found.map { .dictionary(KeychainWire.encode($0)) })])
            // The secret also sits in the request's frame and plist buffers, so
            // it is copied into secure memory here, not "wiped" from a copy.
            case .keychainAdd(_, let attributes, let data):
                try keychain.add(try KeychainWire.attributes(attributes), data: SecureBytes(data), context: context)
            case .keychainUpdate(_, let query, let changes, let data):
                var c = try KeychainWire.changes(changes)
                if let bytes = data { c.data = SecureBytes(bytes) }
                try keychain.update(try KeychainWire.query(query), with: c, context: context)
            case .keychainDelete(_, let query):
                try keychain.delete(try KeychainWire.query(query), context: context)
            case .keychainLocked:
                policy.keybag?.forgetAll()
                return .success(["keybag": .bool(policy.keybag != nil)])
            default:
                return .failure(RemoteError(.unknownOperation, "operation \(request.operation.rawValue) is not a keychain operation"))
            }
            return .success([:])
        } catch {
            if case .wouldBlock = error { return nil }
            return .failure(RemoteError(.keychain, error.description, status: error.status))
        }
    }

    /// The app whose context the process `pid` was started in
    /// (``ProcessContext/appContext(ofProcess:)``).
    static func appContext(of pid: Int32) -> String? { ProcessContext.appContext(ofProcess: pid) }
}
