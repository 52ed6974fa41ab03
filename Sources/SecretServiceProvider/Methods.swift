import AppHomeSystem
import CGio
import Keychain
import PropertyList

extension Provider {
    /// One method call: the reply's tuple (`nil`: no values), or a failure.
    func call(sender: String, path: String, interface: String, method: String, _ p: Variant.Value) throws(DBusFailure) -> Variant.Value? {
        guard let object = resolve(path) else { throw .noSuchObject("no object \(path)") }
        switch (object, interface) {
        case (.service, Interfaces.service): return try serviceCall(sender: sender, method: method, p)
        case (.collection(let c), Interfaces.collection): return try collectionCall(c, sender: sender, method: method, p)
        case (.item(let c, let node), Interfaces.item): return try itemCall(c, node, sender: sender, method: method, p)
        case (.session(let sp), Interfaces.session):
            guard method == "Close" else { break }
            _ = try session(sp, sender: sender)
            sessions[sp] = nil
            return nil
        case (.prompt(let pp), Interfaces.prompt):
            return try promptCall(pp, sender: sender, method: method)
        default: break
        }
        throw .init(name: "org.freedesktop.DBus.Error.UnknownMethod", message: "no method \(interface).\(method) on \(path)")
    }

    // MARK: Service

    func serviceCall(sender: String, method: String, _ p: Variant.Value) throws(DBusFailure) -> Variant.Value? {
        switch method {
        case "OpenSession":
            let algorithm = Variant.withChild(p, 0) { Variant.text($0) }
            if sessions.values.filter({ $0.owner == sender }).count >= limits.sessionsPerClient {
                throw .limits("this client has \(limits.sessionsPerClient) sessions open; close some")
            }
            let path = Self.sessionsRoot + "/s\(nextNumber())"
            switch Session.Algorithm(rawValue: algorithm) {
            case .plain?:
                sessions[path] = .plain(path: path, owner: sender)
                return Variant.tuple([Variant.boxed(Variant.string("")), Variant.path(path)])
            case .dh?:
                let input = Variant.withChild(p, 1) { g_variant_get_variant($0)! }
                defer { g_variant_unref(input) }
                guard Variant.typeString(input) == "ay" else { throw .invalidArgs("the dh algorithm's input is the client's public key (ay)") }
                do {
                    let (s, ours) = try Session.dh(path: path, owner: sender, peer: Variant.byteArray(input))
                    sessions[path] = s
                    return Variant.tuple([Variant.boxed(Variant.bytes(ours)), Variant.path(path)])
                } catch { throw .invalidArgs(error.message) }
            case nil:
                throw .notSupported("the algorithm '\(algorithm)' is not supported (plain and dh-ietf1024-sha256-aes128-cbc-pkcs7 are)")
            }
        case "SearchItems":
            let query = try checkedAttributes(Variant.withChild(p, 0) { Variant.pairs($0) })
            var unlocked = search(.session, query)
            var lockedList: [String] = []
            let login = search(.login, query)
            if loginLocked { lockedList = login } else { unlocked = login + unlocked }
            return Variant.tuple([Variant.paths(unlocked), Variant.paths(lockedList)])
        case "Unlock":
            let objects = Variant.withChild(p, 0) { Variant.pathList($0) }
            let (open, closed) = partition(objects)
            if closed.isEmpty { return Variant.tuple([Variant.paths(open), Variant.path("/")]) }
            if prompts.values.filter({ $0.owner == sender }).count >= limits.promptsPerClient {
                throw .limits("this client has \(limits.promptsPerClient) prompts pending")
            }
            let prompt = Self.promptsRoot + "/p\(nextNumber())"
            prompts[prompt] = Prompt(owner: sender, objects: closed)
            return Variant.tuple([Variant.paths(open), Variant.path(prompt)])
        case "Lock":
            let objects = Variant.withChild(p, 0) { Variant.pathList($0) }
            var lockedNow: [String] = []
            var lockLogin = false
            for o in objects {
                guard let object = resolve(o) else { continue }
                switch object {
                case .collection(.login), .item(.login, _): lockLogin = true; lockedNow.append(o)
                default: break
                }
            }
            if lockLogin {
                do { try keychain.lock() } catch {
                    // A keychain with a plain key file cannot be locked: nothing is.
                    if case .invalidParameter = error { return Variant.tuple([Variant.paths([]), Variant.path("/")]) }
                    throw DBusFailure(error)
                }
                emitLater(Self.root, Interfaces.service, "CollectionChanged", [Self.loginPath])
            }
            return Variant.tuple([Variant.paths(lockedNow), Variant.path("/")])
        case "GetSecrets":
            let paths = Variant.withChild(p, 0) { Variant.pathList($0) }
            let s = try session(Variant.withChild(p, 1) { Variant.text($0) }, sender: sender)
            var out: [(String, Variant.Value)] = []
            for path in paths {
                guard case .item(let c, let node)? = resolve(path), let (secret, a) = try? self.secret(c, node) else { continue }
                out.append((path, outgoingSecret(secret, a, session: s)))
            }
            return Variant.tuple([Variant.secretsMap(out)])
        case "ReadAlias":
            let name = Variant.withChild(p, 0) { Variant.text($0) }
            switch name {
            case "default", "login": return Variant.tuple([Variant.path(Self.loginPath)])
            case "session": return Variant.tuple([Variant.path(Self.sessionCollectionPath)])
            default: return Variant.tuple([Variant.path("/")])
            }
        case "SetAlias":
            let name = Variant.withChild(p, 0) { Variant.text($0) }
            let target = Variant.withChild(p, 1) { Variant.text($0) }
            let wanted: String? = switch name {
            case "default", "login": Self.loginPath
            case "session": Self.sessionCollectionPath
            default: nil
            }
            guard let wanted, resolve(target).map({ if case .collection(let c) = $0 { return Self.path(of: c) == wanted }; return false }) ?? false else {
                throw .notSupported("AppHome's aliases are fixed: default and login are the login keychain, session the session collection")
            }
            return nil
        case "CreateCollection":
            let alias = Variant.withChild(p, 1) { Variant.text($0) }
            switch alias {
            case "default", "login": return Variant.tuple([Variant.path(Self.loginPath), Variant.path("/")])
            case "session": return Variant.tuple([Variant.path(Self.sessionCollectionPath), Variant.path("/")])
            default:
                throw .notSupported("AppHome serves the login keychain (alias default) and the session collection; it makes no other collections")
            }
        default:
            throw .init(name: "org.freedesktop.DBus.Error.UnknownMethod", message: "no method \(method)")
        }
    }

    /// `objects` split into those open now and those of the locked login keychain.
    func partition(_ objects: [String]) -> (open: [String], closed: [String]) {
        let locked = loginLocked
        var open: [String] = [], closed: [String] = []
        for o in objects {
            switch resolve(o) {
            case .collection(.login)?, .item(.login, _)?: if locked { closed.append(o) } else { open.append(o) }
            case .collection(.session)?, .item(.session, _)?: open.append(o)
            default: break
            }
        }
        return (open, closed)
    }

    // MARK: Prompt

    /// AppHome has no prompt agent: a prompt completes dismissed, unless the
    /// keychain was unlocked meanwhile (`security unlock-keychain`).
    func promptCall(_ path: String, sender: String, method: String) throws(DBusFailure) -> Variant.Value? {
        guard let prompt = prompts[path], prompt.owner == sender else { throw .noSuchObject("no prompt \(path) of this client") }
        prompts[path] = nil
        switch method {
        case "Prompt":
            let (open, closed) = partition(prompt.objects)
            let dismissed = !closed.isEmpty
            afterReply.append { [unowned self] in
                self.emit(path, Interfaces.prompt, "Completed", [Variant.bool(dismissed), Variant.boxed(Variant.paths(dismissed ? [] : open))])
            }
            return nil
        case "Dismiss":
            afterReply.append { [unowned self] in
                self.emit(path, Interfaces.prompt, "Completed", [Variant.bool(true), Variant.boxed(Variant.paths([]))])
            }
            return nil
        default:
            throw .init(name: "org.freedesktop.DBus.Error.UnknownMethod", message: "no method \(method)")
        }
    }

    // MARK: Collection

    func collectionCall(_ c: Collection, sender: String, method: String, _ p: Variant.Value) throws(DBusFailure) -> Variant.Value? {
        switch method {
        case "SearchItems":
            let query = try checkedAttributes(Variant.withChild(p, 0) { Variant.pairs($0) })
            return Variant.tuple([Variant.paths(search(c, query))])
        case "CreateItem":
            var label = ""
            var map: [PlistKey: String] = [:]
            let props = Variant.withChild(p, 0) { Variant.properties($0) }
            defer { for (_, v) in props { g_variant_unref(v) } }
            for (k, v) in props {
                switch k {
                case "org.freedesktop.Secret.Item.Label":
                    guard Variant.typeString(v) == "s" else { throw .invalidArgs("\(k) must be a string") }
                    label = try checkedLabel(Variant.text(v))
                case "org.freedesktop.Secret.Item.Attributes":
                    guard Variant.typeString(v) == "a{ss}" else { throw .invalidArgs("\(k) must be a{ss}") }
                    map = try checkedAttributes(Variant.pairs(v))
                default: break
                }
            }
            let (secret, contentType) = try Variant.withChild(p, 1) { v throws(DBusFailure) in try incomingSecret(v, sender: sender) }
            let replace = Variant.withChild(p, 2) { Variant.boolean($0) }
            let attributes = SecretServiceMapping.itemAttributes(for: map, label: label, contentType: contentType)
            let node: String
            let replaced: Bool
            switch c {
            case .login:
                if loginLocked { throw .isLocked("the login keychain is locked; unlock it with `security unlock-keychain`") }
                do {
                    let r = try keychain.addOrReplace(attributes, data: secret, in: group, replace: replace, maxItems: limits.loginItems)
                    node = Hex.encode(r.id); replaced = r.replaced
                } catch .invalidParameter(let m) { throw .limits(m) } catch { throw DBusFailure(error) }
            case .session:
                if let existing = memoryOrder.first(where: { SecretServiceMapping.sameMap(memory[$0]!.attributes.secretServiceAttributes, map) }) {
                    guard replace else { throw .failed("an item with these attributes exists already (replace it instead)") }
                    var a = attributes
                    a.creationDate = memory[existing]!.attributes.creationDate
                    a.modificationDate = now()
                    memory[existing] = MemoryItem(attributes: a, secret: secret)
                    node = String(existing); replaced = true
                } else {
                    guard memoryOrder.count < limits.sessionItems else { throw .limits("the session collection holds \(limits.sessionItems) items, the most it keeps") }
                    var a = attributes
                    a.creationDate = now(); a.modificationDate = a.creationDate
                    let n = nextNumber()
                    memory[n] = MemoryItem(attributes: a, secret: secret)
                    memoryOrder.append(n)
                    node = String(n); replaced = false
                }
            }
            let path = Self.itemPath(c, node)
            emitLater(Self.path(of: c), Interfaces.collection, replaced ? "ItemChanged" : "ItemCreated", [path])
            return Variant.tuple([Variant.path(path), Variant.path("/")])
        case "Delete":
            guard c == .session else {
                throw .notSupported("the login keychain is not deleted through the Secret Service; delete its items instead")
            }
            let gone = memoryOrder.map { Self.itemPath(.session, String($0)) }
            memory = [:]; memoryOrder = []
            for g in gone { emitLater(Self.sessionCollectionPath, Interfaces.collection, "ItemDeleted", [g]) }
            return Variant.tuple([Variant.path("/")])
        default:
            throw .init(name: "org.freedesktop.DBus.Error.UnknownMethod", message: "no method \(method)")
        }
    }

    func collectionProperty(_ c: Collection, _ name: String) throws(DBusFailure) -> Variant.Value {
        switch name {
        case "Items": return Variant.paths(items(c).map { Self.itemPath(c, $0.node) })
        case "Label": return Variant.string(c == .login ? "Login" : "Session")
        case "Locked": return Variant.bool(locked(c))
        case "Created", "Modified":
            let dates = items(c).map { name == "Created" ? $0.attributes.creationDate : $0.attributes.modificationDate }
            let d = name == "Created" ? dates.min() : dates.max()
            return Variant.uint64(d.map(Self.unixSeconds) ?? 0)
        default: throw .invalidArgs("no property \(name)")
        }
    }

    static func unixSeconds(_ d: PlistDate) -> UInt64 {
        let s = d.secondsSinceReferenceDate + PlistDate.unixEpochOffset
        return s <= 0 ? 0 : UInt64(s)
    }

    // MARK: Item

    func itemCall(_ c: Collection, _ node: String, sender: String, method: String, _ p: Variant.Value) throws(DBusFailure) -> Variant.Value? {
        let path = Self.itemPath(c, node)
        switch method {
        case "GetSecret":
            let s = try session(Variant.withChild(p, 0) { Variant.text($0) }, sender: sender)
            let (secret, a) = try self.secret(c, node)
            return Variant.tuple([outgoingSecret(secret, a, session: s)])
        case "SetSecret":
            let (secret, contentType) = try Variant.withChild(p, 0) { v throws(DBusFailure) in try incomingSecret(v, sender: sender) }
            try change(c, node, data: secret) { $0.contentType = contentType }
            emitLater(Self.path(of: c), Interfaces.collection, "ItemChanged", [path])
            return nil
        case "Delete":
            _ = try item(c, node)
            switch c {
            case .login:
                if loginLocked { throw .isLocked("the login keychain is locked; unlock it with `security unlock-keychain`") }
                do { try keychain.deleteItem(Hex.decode(node)!, in: group) } catch { throw DBusFailure(error) }
            case .session:
                memory[Int(node)!] = nil
                memoryOrder.removeAll { $0 == Int(node)! }
            }
            emitLater(Self.path(of: c), Interfaces.collection, "ItemDeleted", [path])
            return Variant.tuple([Variant.path("/")])
        default:
            throw .init(name: "org.freedesktop.DBus.Error.UnknownMethod", message: "no method \(method)")
        }
    }

    /// Changes an item's attributes (and secret) in its collection.
    func change(_ c: Collection, _ node: String, data: SecureBytes?, _ edit: (inout ItemAttributes) -> Void) throws(DBusFailure) {
        _ = try item(c, node)
        switch c {
        case .login:
            if loginLocked { throw .isLocked("the login keychain is locked; unlock it with `security unlock-keychain`") }
            do { try keychain.updateItem(Hex.decode(node)!, in: group, data: data, change: edit) } catch { throw DBusFailure(error) }
        case .session:
            let m = memory[Int(node)!]!
            edit(&m.attributes)
            m.attributes.modificationDate = now()
            if let data { m.secret = data }
        }
    }

    func itemProperty(_ c: Collection, _ node: String, _ name: String) throws(DBusFailure) -> Variant.Value {
        let a = try item(c, node)
        switch name {
        case "Locked": return Variant.bool(locked(c))
        case "Attributes":
            let map = SecretServiceMapping.attributeMap(of: a).sorted { $0.key < $1.key }.map { ($0.key.string, $0.value) }
            return Variant.stringMap(map)
        case "Label": return Variant.string(a.label ?? "")
        case "Type": return Variant.string(a.contentType ?? "text/plain")
        case "Created": return Variant.uint64(Self.unixSeconds(a.creationDate))
        case "Modified": return Variant.uint64(Self.unixSeconds(a.modificationDate))
        default: throw .invalidArgs("no property \(name)")
        }
    }

    func setItemProperty(_ c: Collection, _ node: String, _ name: String, _ v: Variant.Value) throws(DBusFailure) {
        switch name {
        case "Label":
            let label = try checkedLabel(Variant.text(v))
            try change(c, node, data: nil) { $0.label = label }
        case "Attributes":
            let map = try checkedAttributes(Variant.pairs(v))
            try change(c, node, data: nil) { $0 = SecretServiceMapping.changing($0, to: map) }
        case "Type":
            let type = Variant.text(v)
            if type.utf8.count > 255 { throw .limits("the content type is longer than 255 bytes") }
            try change(c, node, data: nil) { $0.contentType = type }
        default: throw .invalidArgs("property \(name) cannot be set")
        }
        emitLater(Self.path(of: c), Interfaces.collection, "ItemChanged", [Self.itemPath(c, node)])
    }

    // MARK: Properties

    /// `org.freedesktop.DBus.Properties`: Get, Set and GetAll (GDBus has
    /// checked the interface and property names, access and value types).
    func propertiesCall(path: String, method: String, _ p: Variant.Value) throws(DBusFailure) -> Variant.Value? {
        let interface = Variant.withChild(p, 0) { Variant.text($0) }
        switch method {
        case "Get":
            let name = Variant.withChild(p, 1) { Variant.text($0) }
            return Variant.tuple([Variant.boxed(try property(path: path, interface: interface, name: name))])
        case "Set":
            let name = Variant.withChild(p, 1) { Variant.text($0) }
            let value = Variant.withChild(p, 2) { g_variant_get_variant($0)! }
            defer { g_variant_unref(value) }
            try setProperty(path: path, interface: interface, name: name, value)
            return nil
        case "GetAll":
            if case .item(let c, let node)? = resolve(path) { _ = try item(c, node) }
            let names = Interfaces.propertyNames(of: interface)
            var values: [(String, Variant.Value)] = []
            for n in names { values.append((n, try property(path: path, interface: interface, name: n))) }
            return Variant.tuple([Variant.propertyMap(values)])
        default:
            throw .init(name: "org.freedesktop.DBus.Error.UnknownMethod", message: "no method \(Interfaces.properties).\(method)")
        }
    }

    func property(path: String, interface: String, name: String) throws(DBusFailure) -> Variant.Value {
        switch resolve(path) {
        case .service?:
            guard name == "Collections" else { throw .invalidArgs("no property \(name)") }
            return Variant.paths([Self.loginPath, Self.sessionCollectionPath])
        case .collection(let c)?: return try collectionProperty(c, name)
        case .item(let c, let node)?: return try itemProperty(c, node, name)
        default: throw .invalidArgs("no property \(interface).\(name) on \(path)")
        }
    }

    func setProperty(path: String, interface: String, name: String, _ v: Variant.Value) throws(DBusFailure) {
        switch resolve(path) {
        case .item(let c, let node)?: try setItemProperty(c, node, name, v)
        case .collection?: throw .notSupported("the labels of AppHome's collections are fixed")
        default: throw .invalidArgs("property \(interface).\(name) cannot be set on \(path)")
        }
    }
}
