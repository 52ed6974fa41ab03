import Keychain
import PrefsClient
import PrefsProtocol
import PropertyList

/// What the verbs need from a keychain: the keychain itself (direct
/// access), or prefsd acting for the app (``DaemonKeychain``).
public protocol KeychainAccess {
    /// The keychain's directory, for listings.
    var directory: String { get }
    func add(_ attributes: ItemAttributes, data: SecureBytes, context: KeychainContext) throws(KeychainError)
    func copyMatching(_ query: ItemQuery, context: KeychainContext) throws(KeychainError) -> [ItemResult]
    func update(_ query: ItemQuery, with changes: ItemChanges, context: KeychainContext) throws(KeychainError)
    func delete(_ query: ItemQuery, context: KeychainContext) throws(KeychainError)
}

extension Keychain: KeychainAccess {}

/// The keychain through prefsd: the service makes the calls in the
/// context it derives from the app's installation (the `context` passed
/// here is only this side's view of it), after checking the app's
/// credential. Failures come back as the same ``KeychainError``s, so the
/// output and exit statuses match direct access.
public final class DaemonKeychain: KeychainAccess {
    let connection: PrefsConnection
    let caller: KeychainCaller
    public let directory: String

    public init(connection: PrefsConnection, caller: KeychainCaller, directory: String) {
        self.connection = connection
        self.caller = caller
        self.directory = directory
    }

    /// errSecAuthFailed: the service did not accept the credential.
    public static let refusedStatus: Int32 = -25293
    /// errSecInternalComponent: the service could not be reached or answered badly.
    public static let brokenStatus: Int32 = -2070

    private func call(_ request: Request) throws(KeychainError) -> [PlistKey: PlistValue] {
        do throws(PrefsClientError) { return try connection.call(request) } catch {
            switch error {
            case .remote(let e) where e.code == ErrorCode.keychain.rawValue:
                throw KeychainError.reported(status: e.status ?? Self.brokenStatus, message: e.message)
            case .remote(let e) where e.code == ErrorCode.notAuthorized.rawValue:
                throw KeychainError.service(status: Self.refusedStatus, message: e.message)
            default:
                throw KeychainError.service(status: Self.brokenStatus, message: error.description)
            }
        }
    }

    public func add(_ attributes: ItemAttributes, data: SecureBytes, context: KeychainContext) throws(KeychainError) {
        var bytes = data.exposedCopy()
        defer { SecureBytes.wipe(&bytes) }
        _ = try call(.keychainAdd(caller, attributes: KeychainWire.encode(attributes), data: bytes))
    }

    public func copyMatching(_ query: ItemQuery, context: KeychainContext) throws(KeychainError) -> [ItemResult] {
        let fields = try call(.keychainFind(caller, query: KeychainWire.encode(query)))
        guard case .array(let items)? = fields["items"] else {
            throw .service(status: Self.brokenStatus, message: "prefsd's keychain reply has no items")
        }
        var out: [ItemResult] = []
        for item in items {
            guard case .dictionary(let d) = item else { throw .service(status: Self.brokenStatus, message: "prefsd's keychain reply holds a non-dictionary item") }
            out.append(try KeychainWire.result(d))
        }
        if out.isEmpty { throw .itemNotFound }
        return out
    }

    public func update(_ query: ItemQuery, with changes: ItemChanges, context: KeychainContext) throws(KeychainError) {
        var bytes = changes.data?.exposedCopy()
        defer { if bytes != nil { SecureBytes.wipe(&bytes!) } }
        _ = try call(.keychainUpdate(caller, query: KeychainWire.encode(query), changes: KeychainWire.encode(changes), data: bytes))
    }

    public func delete(_ query: ItemQuery, context: KeychainContext) throws(KeychainError) {
        _ = try call(.keychainDelete(caller, query: KeychainWire.encode(query)))
    }
}
