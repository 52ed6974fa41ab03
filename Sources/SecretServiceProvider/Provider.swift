#if canImport(Glibc)
import Glibc
#endif
import AppHomeSystem
import CGio
import Keychain
import PropertyList

/// A D-Bus error for the caller: its name and a message.
struct DBusFailure: Error {
    var name: String
    var message: String

    static func isLocked(_ m: String) -> DBusFailure { .init(name: "org.freedesktop.Secret.Error.IsLocked", message: m) }
    static func noSuchObject(_ m: String) -> DBusFailure { .init(name: "org.freedesktop.Secret.Error.NoSuchObject", message: m) }
    static func noSession(_ m: String) -> DBusFailure { .init(name: "org.freedesktop.Secret.Error.NoSession", message: m) }
    static func notSupported(_ m: String) -> DBusFailure { .init(name: "org.freedesktop.DBus.Error.NotSupported", message: m) }
    static func invalidArgs(_ m: String) -> DBusFailure { .init(name: "org.freedesktop.DBus.Error.InvalidArgs", message: m) }
    static func limits(_ m: String) -> DBusFailure { .init(name: "org.freedesktop.DBus.Error.LimitsExceeded", message: m) }
    static func failed(_ m: String) -> DBusFailure { .init(name: "org.freedesktop.DBus.Error.Failed", message: m) }

    init(name: String, message: String) { self.name = name; self.message = message }

    init(_ e: KeychainError) {
        switch e {
        case .interactionNotAllowed(let m): self = .isLocked("the login keychain is locked (\(m)); unlock it with `security unlock-keychain`")
        case .itemNotFound: self = .noSuchObject("no such item")
        case .duplicateItem: self = .failed("an item with these attributes exists already (replace it instead)")
        case .invalidParameter(let m): self = .invalidArgs(m)
        default: self = .failed("the login keychain failed: \(e)")
        }
    }
}

/// What a hostile or careless client may not exceed; every bound is checked
/// before anything is written.
public struct ProviderLimits: Sendable {
    public var secretBytes = 1 << 20
    public var labelBytes = 4096
    public var attributeCount = 64
    public var attributeKeyBytes = 256
    public var attributeValueBytes = 4096
    /// Items in the login keychain's group past which CreateItem adds no more.
    public var loginItems = 5000
    public var sessionItems = 1000
    public var sessionsPerClient = 64
    public var promptsPerClient = 64
    /// Calls one client may have waiting for their replies.
    public var queuedCallsPerClient = 1024
    public init() {}
}

/// The Secret Service on the session bus: the login keychain as the
/// `default` collection (also `login`), a `session` collection in memory,
/// sessions and prompts. Runs on the thread of the GLib main loop: GDBus
/// hands it each call there, and it serves them one at a time, the
/// clients taking turns (``CallQueue``).
final class Provider {
    static let root = "/org/freedesktop/secrets"
    static let loginPath = root + "/collection/login"
    static let aliasPath = root + "/aliases/default"
    static let sessionCollectionPath = root + "/collection/session"
    static let sessionsRoot = root + "/session"
    static let promptsRoot = root + "/prompt"
    /// The paths under which GDBus hands us calls (one subtree each: GDBus
    /// dispatches a subtree's root and its direct children only).
    static let subtreeRoots = [root, loginPath, aliasPath, sessionCollectionPath, sessionsRoot, promptsRoot]

    enum Collection { case login, session }
    enum Object {
        case service
        case collection(Collection)
        case item(Collection, String)
        case session(String)
        case prompt(String)
    }

    final class MemoryItem {
        var attributes: ItemAttributes
        var secret: SecureBytes
        init(attributes: ItemAttributes, secret: SecureBytes) { self.attributes = attributes; self.secret = secret }
    }

    struct Prompt { var owner: String; var objects: [String] }

    let connection: OpaquePointer
    let keychain: Keychain
    let group: AccessGroup
    let limits: ProviderLimits
    let now: () -> PlistDate
    var sessions: [String: Session] = [:]
    /// Each client's app context ("" for none), by its unique bus name
    /// (never reused on a bus); see ``refuseAppContext(_:)``.
    var appContexts: [String: String] = [:]
    var prompts: [String: Prompt] = [:]
    var memory: [Int: MemoryItem] = [:]
    var memoryOrder: [Int] = []
    var counter = 0
    let interfaces: [String: UnsafeMutablePointer<GDBusInterfaceInfo>]
    /// Work to do once the current call is answered (signals, a prompt's end).
    var afterReply: [() -> Void] = []
    /// The calls waiting for their turn, and whether they are being served.
    var calls = CallQueue()
    var serving = false
    /// The login group's items as last read, with the file's identity then
    /// (inode, modification time, size): read again only when the file was
    /// replaced (every write replaces it: `security`, prefsd, this process).
    var loginCache: (stamp: [Int], items: [IdentifiedItem])?

    init(connection: OpaquePointer, keychain: Keychain, limits: ProviderLimits, now: @escaping () -> PlistDate) throws(DBusFailure) {
        self.connection = connection
        self.keychain = keychain
        self.group = KeychainContext.loginGroup
        self.limits = limits
        self.now = now
        var error: UnsafeMutablePointer<GError>?
        guard let node = g_dbus_node_info_new_for_xml(Interfaces.xml, &error) else {
            defer { g_error_free(error) }
            throw .failed("the interface description does not parse: \(String(cString: error!.pointee.message))")
        }
        var found: [String: UnsafeMutablePointer<GDBusInterfaceInfo>] = [:]
        for name in [Interfaces.service, Interfaces.collection, Interfaces.item, Interfaces.session, Interfaces.prompt] {
            found[name] = g_dbus_node_info_lookup_interface(node, name)
        }
        interfaces = found
    }

    // MARK: Objects

    func resolve(_ path: String) -> Object? {
        func child(_ prefix: String) -> String? {
            guard path.hasPrefix(prefix + "/") else { return nil }
            let node = String(path.dropFirst(prefix.count + 1))
            return node.isEmpty || node.contains("/") ? nil : node
        }
        switch path {
        case Self.root: return .service
        case Self.loginPath, Self.aliasPath: return .collection(.login)
        case Self.sessionCollectionPath: return .collection(.session)
        default: break
        }
        if let n = child(Self.loginPath) ?? child(Self.aliasPath) { return .item(.login, n) }
        if let n = child(Self.sessionCollectionPath) { return .item(.session, n) }
        if child(Self.sessionsRoot) != nil { return .session(path) }
        if child(Self.promptsRoot) != nil { return .prompt(path) }
        return nil
    }

    func interfaceNames(of object: Object) -> [String] {
        switch object {
        case .service: return [Interfaces.service]
        case .collection: return [Interfaces.collection]
        case .item: return [Interfaces.item]
        case .session: return [Interfaces.session]
        case .prompt: return [Interfaces.prompt]
        }
    }

    static func path(of c: Collection) -> String { c == .login ? loginPath : sessionCollectionPath }
    static func itemPath(_ c: Collection, _ node: String) -> String { path(of: c) + "/" + node }

    /// Whether the login keychain's whenUnlocked classes are closed.
    var loginLocked: Bool {
        guard let info = try? keychain.lockInfo() else { return false }
        return info.state == .locked
    }

    func locked(_ c: Collection) -> Bool { c == .login ? loginLocked : false }

    /// The items of `c` with their nodes; the login keychain's when its
    /// attributes can be read (a keychain never unlocked since boot shows none).
    func items(_ c: Collection) -> [(node: String, attributes: ItemAttributes)] {
        switch c {
        case .login:
            return ((try? loginItems()) ?? []).map { (Hex.encode($0.id), $0.attributes) }
        case .session:
            return memoryOrder.map { (String($0), memory[$0]!.attributes) }
        }
    }

    func item(_ c: Collection, _ node: String) throws(DBusFailure) -> ItemAttributes {
        switch c {
        case .login:
            guard node.utf8.count == 32, let id = Hex.decode(node) else { throw .noSuchObject("no such item") }
            let list: [IdentifiedItem]
            do { list = try loginItems() } catch { throw DBusFailure(error) }
            guard let found = list.first(where: { $0.id == id }) else { throw .noSuchObject("no such item") }
            return found.attributes
        case .session:
            guard let n = Int(node), let m = memory[n] else { throw .noSuchObject("no such item") }
            return m.attributes
        }
    }

    /// The login group's items, from the cache while the file is the same.
    func loginItems() throws(KeychainError) -> [IdentifiedItem] {
        var st = stat()
        guard stat(keychain.groupFilePath(group), &st) == 0 else { loginCache = nil; return [] }
        let stamp = [Int(st.st_ino), st.st_mtim.tv_sec, st.st_mtim.tv_nsec, Int(st.st_size)]
        if let cached = loginCache, cached.stamp == stamp { return cached.items }
        let items = try keychain.identifiedItems(in: group)
        loginCache = (stamp, items)
        return items
    }

    func secret(_ c: Collection, _ node: String) throws(DBusFailure) -> (SecureBytes, ItemAttributes) {
        let a = try item(c, node)
        switch c {
        case .login:
            if loginLocked { throw .isLocked("the login keychain is locked; unlock it with `security unlock-keychain`") }
            do { return (try keychain.secret(ofItem: Hex.decode(node)!, in: group), a) } catch { throw DBusFailure(error) }
        case .session:
            return (memory[Int(node)!]!.secret, a)
        }
    }

    func search(_ c: Collection, _ query: [PlistKey: String]) -> [String] {
        items(c).filter { SecretServiceMapping.matches($0.attributes, query) }.map { Self.itemPath(c, $0.node) }
    }

    // MARK: Sessions and secrets

    func session(_ path: String, sender: String) throws(DBusFailure) -> Session {
        guard let s = sessions[path], s.owner == sender else { throw .noSession("no session \(path) of this client") }
        return s
    }

    /// The secret of a `(oayays)` argument, decoded in its session.
    func incomingSecret(_ v: Variant.Value, sender: String) throws(DBusFailure) -> (SecureBytes, String) {
        let sessionPath = Variant.withChild(v, 0) { Variant.text($0) }
        let parameters = Variant.withChild(v, 1) { Variant.byteArray($0) }
        let contentType = Variant.withChild(v, 3) { Variant.text($0) }
        let s = try session(sessionPath, sender: sender)
        let valueCount = Variant.withChild(v, 2) { Variant.count($0) }
        if valueCount > limits.secretBytes + 16 {
            throw .limits("the secret has \(valueCount) bytes; at most \(limits.secretBytes) are kept")
        }
        if contentType.utf8.count > 255 { throw .limits("the content type is longer than 255 bytes") }
        let value = Variant.withChild(v, 2) { Variant.byteArray($0) }
        let secret: SecureBytes
        do { secret = try s.decode(parameters: parameters, value: value) } catch { throw .invalidArgs(error.message) }
        if secret.count > limits.secretBytes { throw .limits("the secret has \(secret.count) bytes; at most \(limits.secretBytes) are kept") }
        return (secret, contentType)
    }

    func outgoingSecret(_ secret: SecureBytes, _ a: ItemAttributes, session s: Session) -> Variant.Value {
        let (parameters, value) = s.encode(secret)
        return Variant.secret(session: s.path, parameters: parameters, value: value, contentType: a.contentType ?? "text/plain")
    }

    // MARK: Checks of client data

    func checkedLabel(_ label: String) throws(DBusFailure) -> String {
        if label.utf8.count > limits.labelBytes { throw .limits("the label is longer than \(limits.labelBytes) bytes") }
        return label
    }

    func checkedAttributes(_ pairs: [(String, String)]) throws(DBusFailure) -> [PlistKey: String] {
        if pairs.count > limits.attributeCount { throw .limits("\(pairs.count) attributes; at most \(limits.attributeCount) are kept") }
        var map: [PlistKey: String] = [:]
        for (k, v) in pairs {
            if k.isEmpty { throw .invalidArgs("an attribute has an empty name") }
            if k.utf8.count > limits.attributeKeyBytes { throw .limits("an attribute name is longer than \(limits.attributeKeyBytes) bytes") }
            if v.utf8.count > limits.attributeValueBytes { throw .limits("the value of attribute '\(k)' is longer than \(limits.attributeValueBytes) bytes") }
            map[PlistKey(k)] = v
        }
        return map
    }

    // MARK: Signals

    func emit(_ path: String, _ interface: String, _ name: String, _ args: [Variant.Value]) {
        g_dbus_connection_emit_signal(connection, nil, path, interface, name, Variant.tuple(args), nil)
    }

    func emitLater(_ path: String, _ interface: String, _ name: String, _ args: [String]) {
        afterReply.append { [unowned self] in self.emit(path, interface, name, args.map { Variant.path($0) }) }
    }

    // MARK: Clients that leave

    func clientVanished(_ name: String) {
        sessions = sessions.filter { $0.value.owner != name }
        prompts = prompts.filter { $0.value.owner != name }
    }

    func nextNumber() -> Int { counter += 1; return counter }
}

extension Provider {
    /// Refuses a client started in an app's context (`apphome run`,
    /// `apphome launch`): the login keychain, and the session collection every
    /// client shares, are the user's, never an app's, as in prefsd's keychain
    /// jobs and `git-credential-apphome`.
    func refuseAppContext(_ sender: String) throws(DBusFailure) {
        if appContexts.count > 4096 { appContexts.removeAll() }
        let app: String
        if let known = appContexts[sender] {
            app = known
        } else {
            app = Bus.processIdentifier(connection, of: sender).flatMap { ProcessContext.appContext(ofProcess: $0) } ?? ""
            appContexts[sender] = app
        }
        guard app.isEmpty else {
            throw .init(name: "org.freedesktop.DBus.Error.AccessDenied",
                        message: "the login keychain is the user's: a program started in the context of the app \(app) may not use it")
        }
    }
}
