import AppHomeSystem
import Preferences
import PropertyList

/// A domain together with its host scope: what a request names.
public struct DomainAddress: Hashable, Sendable {
    /// The domain (a name, the global domain, or a file).
    public var domain: Domain
    /// Which copy: the user's, or a ByHost copy.
    public var scope: HostScope

    public init(_ domain: Domain, scope: HostScope = .anyHost) {
        self.domain = domain
        self.scope = scope
    }

    /// The wire fields: `domain` (a name, `NSGlobalDomain`, or an absolute
    /// path ending in `.plist`) and `host` (absent for any host, `""` for
    /// the current host, else a host name).
    func encode(into d: inout [PlistKey: PlistValue]) {
        switch domain {
        case .named(let n): d["domain"] = .string(n)
        case .global: d["domain"] = .string("NSGlobalDomain")
        case .file(let p): d["domain"] = .string(p)
        }
        switch scope {
        case .anyHost: break
        case .currentHost: d["host"] = .string("")
        case .named(let h): d["host"] = .string(h)
        }
    }

    init(decoding d: [PlistKey: PlistValue]) throws(ProtocolError) {
        guard case .string(let name)? = d["domain"] else { throw .malformed("the request has no domain") }
        do { domain = try Domain(argument: name) } catch { throw .malformed(error.description) }
        switch d["host"] {
        case nil: scope = .anyHost
        case .string(let h)?: scope = h.isEmpty ? .currentHost : .named(h)
        default: throw .malformed("host must be a string")
        }
    }
}

extension WriteOptions {
    /// `force` (a boolean, sent only when true), `idiom` (a string) and
    /// `check` (the checked keys, an array of strings).
    func encode(into d: inout [PlistKey: PlistValue]) {
        if force { d["force"] = .bool(true) }
        if let idiom { d["idiom"] = .string(idiom) }
        if !checkedKeys.isEmpty { d["check"] = .array(checkedKeys.map { .string($0) }) }
    }

    init(decoding d: [PlistKey: PlistValue]) throws(ProtocolError) {
        self.init()
        if let f = d["force"] {
            guard case .bool(let b) = f else { throw .malformed("force must be a boolean") }
            force = b
        }
        if let i = d["idiom"] {
            guard case .string(let s) = i else { throw .malformed("idiom must be a string") }
            idiom = s
        }
        if d["check"] != nil { checkedKeys = try Request.strings(d["check"], "check") }
    }
}

/// The app a keychain request acts for, and the proof: the app's
/// credential token (see `AppCredential` and `Schemas/prefsd-protocol.md`).
public struct KeychainCaller: Equatable, Sendable {
    /// The app's bundle identifier.
    public var bundleIdentifier: String
    /// The token from the app's credential file.
    public var credential: String

    public init(bundleIdentifier: String, credential: String) {
        self.bundleIdentifier = bundleIdentifier
        self.credential = credential
    }

    func encode(into d: inout [PlistKey: PlistValue]) {
        d["app"] = .string(bundleIdentifier)
        d["credential"] = .string(credential)
    }

    init(decoding d: [PlistKey: PlistValue]) throws(ProtocolError) {
        guard case .string(let app)? = d["app"] else { throw .malformed("a keychain request needs an app") }
        guard case .string(let credential)? = d["credential"] else { throw .malformed("a keychain request needs a credential") }
        bundleIdentifier = app
        self.credential = credential
    }
}

/// What a client asks prefsd; one case per ``Operation`` (see
/// `Schemas/prefsd-protocol.md` for the fields and results of each).
///
/// The service dispatches on these cases in one place
/// (`PrefsServer.handle`); the keychain cases use codes from
/// ``Operation/reservedForKeychain`` and run off the service's loop.
public enum Request: Equatable, Sendable {
    /// Opens a session for the AppHome root the client expects.
    case hello(root: String)
    /// The service's state and counters.
    case status
    /// A whole domain, or with `key` one value of it.
    case read(DomainAddress, key: String?)
    /// Sets keys; `options` go to the domain's write policy (`force`, `idiom`).
    case write(DomainAddress, set: [PlistKey: PlistValue], options: WriteOptions = WriteOptions())
    /// Removes keys, or (`nil`) the whole domain.
    case delete(DomainAddress, keys: [String]?)
    /// Sets and removes keys atomically if the expected values still hold
    /// and the domain's write policy allows the result.
    case batch(DomainAddress, ChangeSet, options: WriteOptions = WriteOptions())
    /// The stored domains' names.
    case listDomains
    /// Pushes the domain's changes to this connection from now on.
    case subscribe(DomainAddress)
    /// Ends a subscription of this connection.
    case unsubscribe(Int)
    /// Uninstalls an app; the hooks get `hookEnvironment` (allowed variables only).
    case uninstall(bundleIdentifier: String, hookEnvironment: HookEnvironment)
    /// This machine's identifier for ByHost domains.
    case hostIdentifier
    /// The file holding a domain.
    case location(DomainAddress)
    /// The caller's app's items matching `query` (a `KeychainWire` query).
    case keychainFind(KeychainCaller, query: [PlistKey: PlistValue])
    /// Adds an item with `attributes` and the secret `data`.
    case keychainAdd(KeychainCaller, attributes: [PlistKey: PlistValue], data: [UInt8])
    /// Changes the matching items; `data`, when given, is the new secret.
    case keychainUpdate(KeychainCaller, query: [PlistKey: PlistValue], changes: [PlistKey: PlistValue], data: [UInt8]?)
    /// Deletes the matching items.
    case keychainDelete(KeychainCaller, query: [PlistKey: PlistValue])
    /// The keychain was locked: drop every class key kept (the user's caller only).
    case keychainLocked(KeychainCaller)

    /// The operation code.
    public var operation: Operation {
        switch self {
        case .hello: .hello
        case .status: .status
        case .read: .read
        case .write: .write
        case .delete: .delete
        case .batch: .batch
        case .listDomains: .listDomains
        case .subscribe: .subscribe
        case .unsubscribe: .unsubscribe
        case .uninstall: .uninstall
        case .hostIdentifier: .hostIdentifier
        case .location: .location
        case .keychainFind: .keychainFind
        case .keychainAdd: .keychainAdd
        case .keychainUpdate: .keychainUpdate
        case .keychainDelete: .keychainDelete
        case .keychainLocked: .keychainLocked
        }
    }

    /// The payload (a binary plist dictionary) for request number `id`.
    public func encode(id: Int) throws(PlistError) -> [UInt8] {
        var d: [PlistKey: PlistValue] = ["op": .integer(Int128(operation.rawValue)), "id": .integer(Int128(id))]
        switch self {
        case .hello(let root): d["root"] = .string(root)
        case .status, .listDomains, .hostIdentifier: break
        case .read(let a, let key):
            a.encode(into: &d)
            if let key { d["key"] = .string(key) }
        case .write(let a, let set, let options):
            a.encode(into: &d)
            d["set"] = .dictionary(set)
            options.encode(into: &d)
        case .delete(let a, let keys):
            a.encode(into: &d)
            if let keys { d["keys"] = .array(keys.map { .string($0) }) }
        case .batch(let a, let c, let options):
            a.encode(into: &d)
            options.encode(into: &d)
            if !c.set.isEmpty { d["set"] = .dictionary(c.set) }
            if !c.remove.isEmpty { d["remove"] = .array(c.remove.map { .string($0.string) }) }
            if c.removeAll { d["removeAll"] = .bool(true) }
            var expect: [PlistKey: PlistValue] = [:], absent: [PlistValue] = []
            for (k, v) in c.expected {
                if let v { expect[k] = v } else { absent.append(.string(k.string)) }
            }
            if !expect.isEmpty { d["expect"] = .dictionary(expect) }
            if !absent.isEmpty { d["expectAbsent"] = .array(absent) }
        case .subscribe(let a), .location(let a):
            a.encode(into: &d)
        case .unsubscribe(let s): d["subscription"] = .integer(Int128(s))
        case .uninstall(let id, let env):
            d["bundleIdentifier"] = .string(id)
            d["hookEnvironment"] = .dictionary(Dictionary(uniqueKeysWithValues: env.variables.map { (PlistKey($0.key), PlistValue.string($0.value)) }))
        case .keychainFind(let caller, let query), .keychainDelete(let caller, let query):
            caller.encode(into: &d)
            d["query"] = .dictionary(query)
        case .keychainAdd(let caller, let attributes, let data):
            caller.encode(into: &d)
            d["attributes"] = .dictionary(attributes)
            d["data"] = .data(data)
        case .keychainUpdate(let caller, let query, let changes, let data):
            caller.encode(into: &d)
            d["query"] = .dictionary(query)
            d["changes"] = .dictionary(changes)
            if let data { d["data"] = .data(data) }
        case .keychainLocked(let caller):
            caller.encode(into: &d)
        }
        return try PlistCodec.encode(.dictionary(d), format: .binary)
    }

    /// Reads a request payload.
    ///
    /// - Returns: the request id (0 when it cannot be read) and the request
    ///   or the reason it cannot be served.
    public static func decode(_ payload: [UInt8]) -> (id: Int, request: Result<Request, ProtocolError>) {
        guard payload.starts(with: Array("bplist00".utf8)) else { return (0, .failure(.malformed("the payload is not a binary property list"))) }
        let value: PlistValue
        do { value = try PlistCodec.decode(payload, format: .binary) } catch {
            return (0, .failure(.malformed("the payload is not a property list: \(error)")))
        }
        guard case .dictionary(let d) = value else { return (0, .failure(.malformed("the payload is not a dictionary"))) }
        var id = 0
        switch d["id"] {
        case nil: break
        case .integer(let n)? where Int(exactly: n) != nil: id = Int(exactly: n)!
        default: return (0, .failure(.malformed("id must be an integer")))
        }
        switch d["op"] {
        case .integer?: break
        case nil: return (id, .failure(.malformed("the request has no op")))
        default: return (id, .failure(.malformed("op must be an integer")))
        }
        guard case .integer(let op)? = d["op"] else { return (id, .failure(.malformed("the request has no op"))) }
        guard let code = Int(exactly: op), let operation = Operation(rawValue: code) else {
            return (id, .failure(.unknownOperation(Int(clamping: op))))
        }
        do { return (id, .success(try decode(operation, d))) } catch { return (id, .failure(error)) }
    }

    static func strings(_ v: PlistValue?, _ field: String) throws(ProtocolError) -> [String] {
        guard case .array(let items)? = v else { throw .malformed("\(field) must be an array of strings") }
        var out: [String] = []
        for item in items {
            guard case .string(let s) = item else { throw .malformed("\(field) must be an array of strings") }
            out.append(s)
        }
        return out
    }

    private static func decode(_ op: Operation, _ d: [PlistKey: PlistValue]) throws(ProtocolError) -> Request {
        switch op {
        case .hello:
            guard case .string(let root)? = d["root"] else { throw .malformed("hello needs a root") }
            return .hello(root: root)
        case .status: return .status
        case .listDomains: return .listDomains
        case .hostIdentifier: return .hostIdentifier
        case .read:
            var key: String?
            if let k = d["key"] {
                guard case .string(let s) = k else { throw .malformed("key must be a string") }
                key = s
            }
            return .read(try DomainAddress(decoding: d), key: key)
        case .write:
            guard case .dictionary(let set)? = d["set"] else { throw .malformed("write needs a set dictionary") }
            return .write(try DomainAddress(decoding: d), set: set, options: try WriteOptions(decoding: d))
        case .delete:
            let keys = d["keys"] == nil ? nil : try strings(d["keys"], "keys")
            return .delete(try DomainAddress(decoding: d), keys: keys)
        case .batch:
            var c = ChangeSet()
            if let s = d["set"] {
                guard case .dictionary(let set) = s else { throw .malformed("set must be a dictionary") }
                c.set = set
            }
            if d["remove"] != nil { c.remove = try strings(d["remove"], "remove").map { PlistKey($0) } }
            if let r = d["removeAll"] {
                guard case .bool(let b) = r else { throw .malformed("removeAll must be a boolean") }
                c.removeAll = b
            }
            if let e = d["expect"] {
                guard case .dictionary(let expect) = e else { throw .malformed("expect must be a dictionary") }
                for (k, v) in expect { c.expected[k] = .some(v) }
            }
            if d["expectAbsent"] != nil {
                for k in try strings(d["expectAbsent"], "expectAbsent") { c.expected[k] = .some(nil) }
            }
            return .batch(try DomainAddress(decoding: d), c, options: try WriteOptions(decoding: d))
        case .subscribe: return .subscribe(try DomainAddress(decoding: d))
        case .location: return .location(try DomainAddress(decoding: d))
        case .unsubscribe:
            guard case .integer(let n)? = d["subscription"], let s = Int(exactly: n) else { throw .malformed("unsubscribe needs a subscription number") }
            return .unsubscribe(s)
        case .uninstall:
            guard case .string(let id)? = d["bundleIdentifier"] else { throw .malformed("uninstall needs a bundleIdentifier") }
            var env: [String: String] = [:]
            if let h = d["hookEnvironment"] {
                guard case .dictionary(let e) = h else { throw .malformed("hookEnvironment must be a dictionary of strings") }
                for (k, v) in e {
                    guard case .string(let s) = v else { throw .malformed("hookEnvironment must be a dictionary of strings") }
                    env[k.string] = s
                }
            }
            return .uninstall(bundleIdentifier: id, hookEnvironment: HookEnvironment(from: env))
        case .keychainFind, .keychainDelete:
            let caller = try KeychainCaller(decoding: d)
            guard case .dictionary(let query)? = d["query"] else { throw .malformed("a keychain request needs a query dictionary") }
            return op == .keychainFind ? .keychainFind(caller, query: query) : .keychainDelete(caller, query: query)
        case .keychainAdd:
            let caller = try KeychainCaller(decoding: d)
            guard case .dictionary(let attributes)? = d["attributes"] else { throw .malformed("keychain add needs an attributes dictionary") }
            guard case .data(let data)? = d["data"] else { throw .malformed("keychain add needs data") }
            return .keychainAdd(caller, attributes: attributes, data: data)
        case .keychainUpdate:
            let caller = try KeychainCaller(decoding: d)
            guard case .dictionary(let query)? = d["query"] else { throw .malformed("a keychain request needs a query dictionary") }
            guard case .dictionary(let changes)? = d["changes"] else { throw .malformed("keychain update needs a changes dictionary") }
            var data: [UInt8]?
            if let v = d["data"] {
                guard case .data(let bytes) = v else { throw .malformed("data must be data") }
                data = bytes
            }
            return .keychainUpdate(caller, query: query, changes: changes, data: data)
        case .keychainLocked:
            return .keychainLocked(try KeychainCaller(decoding: d))
        }
    }
}

/// A failure the service reports: a code for programs, a message for people.
public struct RemoteError: Error, Equatable, Sendable, CustomStringConvertible {
    /// An ``ErrorCode`` raw value (a string, so that codes added later still decode).
    public var code: String
    /// The text for people; for `preferences`, exactly what the embedded store says.
    public var message: String
    /// For `keychain`: the `OSStatus` of the failure.
    public var status: Int32?

    public init(_ code: ErrorCode, _ message: String, status: Int32? = nil) { self.code = code.rawValue; self.message = message; self.status = status }
    public init(code: String, message: String, status: Int32? = nil) { self.code = code; self.message = message; self.status = status }

    public var description: String { message }
}

/// Why a request cannot be served, found while reading it.
public enum ProtocolError: Error, Equatable, Sendable {
    case malformed(String)
    case unknownOperation(Int)

    /// The reply error for this problem.
    public var remote: RemoteError {
        switch self {
        case .malformed(let m): return RemoteError(.malformedRequest, m)
        case .unknownOperation(let op): return RemoteError(.unknownOperation, "operation \(op) is not supported")
        }
    }
}

/// One message from the service: the reply to a request, or a pushed change.
public enum Reply: Equatable, Sendable {
    /// The reply to request `id`: its result fields, or an error.
    case response(id: Int, Result<[PlistKey: PlistValue], RemoteError>)
    /// A change to a subscribed domain.
    case change(DomainChange)

    /// The payload of this reply.
    public func encode() throws(PlistError) -> [UInt8] {
        var d: [PlistKey: PlistValue]
        switch self {
        case .response(let id, .success(let result)) where result.isEmpty:
            return Self.plainSuccess(id: id)
        case .response(let id, .success(let result)):
            d = ["id": .integer(Int128(id)), "ok": .bool(true)]
            if !result.isEmpty { d["result"] = .dictionary(result) }
        case .response(let id, .failure(let e)):
            var error: [PlistKey: PlistValue] = ["code": .string(e.code), "message": .string(e.message)]
            if let status = e.status { error["status"] = .integer(Int128(status)) }
            d = ["id": .integer(Int128(id)), "ok": .bool(false), "error": .dictionary(error)]
        case .change(let c):
            d = ["id": .integer(0), "event": .string("changed"), "subscription": .integer(Int128(c.subscription)),
                 "set": .dictionary(c.set), "removed": .array(c.removed.map { .string($0) })]
            c.address.encode(into: &d)
        }
        return try PlistCodec.encode(.dictionary(d), format: .binary)
    }

    /// `{"id": id, "ok": true}`, the reply to almost every write, laid out
    /// byte for byte as the binary writer lays it out (`MessageTests`
    /// compares the two), without building a value and encoding it: the
    /// general writer takes about 7,500 instructions for these 40 bytes
    /// (most of it its fixed cost: tables, buffers, the sort of the keys),
    /// this about 500; it was an eighth of prefsd's work for a write in a storm.
    static func plainSuccess(id: Int) -> [UInt8] {
        // Objects: 0 the dictionary, 1 "id", 2 "ok", 3 the integer, 4 true;
        // the header and the two keys take bytes 0..<14, the integer starts at 14.
        var out: [UInt8] = [0x62, 0x70, 0x6C, 0x69, 0x73, 0x74, 0x30, 0x30, 0x52, 0x69, 0x64, 0x52, 0x6F, 0x6B]
        out.reserveCapacity(64)
        let width = switch id {
        case 0...0xFF: 1
        case 0...0xFFFF: 2
        case 0...0xFFFF_FFFF: 4
        default: 8  // and every negative number, as two's complement
        }
        out.append(0x10 | UInt8(width.trailingZeroBitCount))
        let bits = UInt64(bitPattern: Int64(id))
        for byte in stride(from: width - 1, through: 0, by: -1) { out.append(UInt8(truncatingIfNeeded: bits >> (8 * byte))) }
        let trueAt = out.count
        out.append(0x09)
        let dictionaryAt = out.count
        out += [0xD2, 1, 2, 3, 4]
        let tableAt = out.count
        out += [UInt8(dictionaryAt), 8, 11, 14, UInt8(trueAt)]
        // The trailer: six unused bytes, 1-byte offsets and references, five
        // objects, the top object 0, and where the offset table starts.
        out += [0, 0, 0, 0, 0, 0, 1, 1]
        for field in [UInt64(5), 0, UInt64(tableAt)] {
            for byte in stride(from: 7, through: 0, by: -1) { out.append(UInt8(truncatingIfNeeded: field >> (8 * byte))) }
        }
        return out
    }

    /// Reads a reply payload.
    public static func decode(_ payload: [UInt8]) throws(ProtocolError) -> Reply {
        let value: PlistValue
        do { value = try PlistCodec.decode(payload, format: .binary) } catch { throw .malformed("the reply is not a property list: \(error)") }
        guard case .dictionary(let d) = value, case .integer(let n)? = d["id"], let id = Int(exactly: n) else {
            throw .malformed("the reply has no id")
        }
        if case .string("changed")? = d["event"] {
            guard case .integer(let s)? = d["subscription"], let sub = Int(exactly: s),
                  case .dictionary(let set)? = d["set"], case .array(let removed)? = d["removed"] else {
                throw .malformed("a change notification lacks fields")
            }
            let keys = removed.compactMap { v -> String? in if case .string(let k) = v { return k }; return nil }
            return .change(DomainChange(subscription: sub, address: try DomainAddress(decoding: d), set: set, removed: keys))
        }
        if case .bool(true)? = d["ok"] {
            return .response(id: id, .success(d["result"]?.dictionaryValue ?? [:]))
        }
        guard case .dictionary(let e)? = d["error"], case .string(let code)? = e["code"], case .string(let message)? = e["message"] else {
            throw .malformed("a failed reply has no error")
        }
        var status: Int32?
        if case .integer(let n)? = e["status"] { status = Int32(exactly: n) }
        return .response(id: id, .failure(RemoteError(code: code, message: message, status: status)))
    }
}

/// Keys of a subscribed domain that changed: new values, and keys removed.
public struct DomainChange: Equatable, Sendable {
    /// The subscription it answers.
    public var subscription: Int
    /// The domain that changed.
    public var address: DomainAddress
    /// Keys added or changed, with their new values.
    public var set: [PlistKey: PlistValue]
    /// Keys removed, sorted.
    public var removed: [String]

    public init(subscription: Int, address: DomainAddress, set: [PlistKey: PlistValue], removed: [String]) {
        self.subscription = subscription; self.address = address; self.set = set; self.removed = removed
    }

    /// The change that turns `old` into `new` (nil when nothing changed).
    public static func between(_ old: [PlistKey: PlistValue], _ new: [PlistKey: PlistValue], subscription: Int, address: DomainAddress) -> DomainChange? {
        var set: [PlistKey: PlistValue] = [:]
        for (k, v) in new where old[k] != v { set[k] = v }
        let removed = old.keys.filter { new[$0] == nil }.sorted().map(\.string)
        if set.isEmpty && removed.isEmpty { return nil }
        return DomainChange(subscription: subscription, address: address, set: set, removed: removed)
    }
}
