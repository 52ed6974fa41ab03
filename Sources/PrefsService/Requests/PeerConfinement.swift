import AppHomeSystem
import Containers
import Preferences
import PrefsProtocol

/// What a client in an app's sandbox may ask prefsd: its socket is the
/// sandbox's one door, so the service keeps the app to its own domain and
/// its app groups' suites (the global domain it may read), as iOS does.
/// Which app it is comes from its sandbox (``PeerIdentity``), read when it
/// connected, and the domains from the registry, never from the client.
struct PeerConfinement: Sendable {
    /// The app, as messages name it.
    let app: String
    /// The named domains it may read and write.
    let domains: Set<String>

    /// The confinement of a peer in `sandbox` served for `root`; `nil` for
    /// a peer outside any sandbox. An app whose sandbox names another root,
    /// or a home the registry no longer gives it (updated or reinstalled
    /// since it started), or a sandbox that cannot be told, may address no
    /// domain at all.
    static func of(_ sandbox: PeerSandbox, root: String) -> PeerConfinement? {
        switch sandbox {
        case .unconfined:
            return nil
        case .unknown:
            return PeerConfinement(app: sandbox.confinedApp ?? "?", domains: [])
        case .sandboxed(let info):
            let layout = ContainerLayout(root: root)
            guard info.root.map({ PrefsServer.normalized($0) == PrefsServer.normalized(root) }) ?? true,
                  let id = try? BundleIdentifier(info.bundleIdentifier),
                  let registry = try? RegistryFile(layout: layout).read(), let entry = registry.entries[id],
                  layout.home(uuid: entry.homeUUID, bundleName: entry.bundleName).path == info.home else {
                return PeerConfinement(app: info.bundleIdentifier, domains: [])
            }
            var domains: Set<String> = [id.rawValue]
            for group in entry.groups where registry.groups[group] != nil { domains.insert(group.rawValue) }
            return PeerConfinement(app: id.rawValue, domains: domains)
        }
    }

    /// Why `request` is refused to this peer, or `nil` when it may make it.
    /// Keychain calls are checked by ``KeychainJob`` against the sandbox.
    func refusal(for request: Request) -> String? {
        switch request {
        case .hello, .status, .hostIdentifier, .unsubscribe, .listDomains,
             .keychainFind, .keychainAdd, .keychainUpdate, .keychainDelete, .keychainLocked:
            return nil
        case .read(let a, _), .subscribe(let a), .location(let a):
            return refusal(for: a, writing: false)
        case .write(let a, _, _), .delete(let a, _), .batch(let a, _, _):
            return refusal(for: a, writing: true)
        case .uninstall:
            return refused(" and may not uninstall apps")
        }
    }

    private func refusal(for address: DomainAddress, writing: Bool) -> String? {
        switch address.domain {
        case .named(let name) where domains.contains(name):
            return nil
        case .global where !writing:
            return nil
        case .global:
            return refused(": the global domain is the user's (read-only to apps)")
        case .named(let name):
            return refused(" and may not use the domain \(name) (only its own and its app groups')")
        case .file(let path):
            return refused(" and may not name a domain by its file (\(path))")
        }
    }

    /// A refusal: the sentence every one starts with, then `why`.
    private func refused(_ why: String) -> String { "the caller runs in the sandbox of \(app)" + why }

    /// The names of `names` this peer may see.
    func visible(_ names: [String]) -> [String] { names.filter { domains.contains($0) } }
}
