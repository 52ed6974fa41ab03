import CGio

/// The GDBus side: the provider's subtrees, its callbacks (C function
/// pointers, which reach the provider through their user data), the
/// bus name, and clients leaving.
extension Provider {
    private static func this(_ ud: gpointer?) -> Provider { Unmanaged<Provider>.fromOpaque(ud!).takeUnretainedValue() }
    private static func str(_ p: UnsafePointer<gchar>?) -> String { p.map { String(cString: $0) } ?? "" }
    private static func fullPath(_ root: UnsafePointer<gchar>?, _ node: UnsafePointer<gchar>?) -> String {
        // GDBus (2.74) passes a child's call with the child's own path as
        // `object_path` in some calls, the subtree's root in others.
        let r = str(root)
        guard let node, Provider.subtreeRoots.contains(r) else { return r }
        return r + "/" + String(cString: node)
    }

    /// Every call, properties included (the vtable has no property
    /// functions, so GDBus hands `org.freedesktop.DBus.Properties` calls
    /// here too, and each error goes back with its own D-Bus name): queued
    /// by client, served by ``serveNext()``.
    private static let methodCall: GDBusInterfaceMethodCallFunc = { _, sender, path, interface, method, _, invocation, ud in
        Provider.this(ud).enqueue(PendingCall(sender: str(sender), path: str(path), interface: str(interface), method: str(method),
                                              invocation: invocation!))
    }

    /// Serves one queued call; runs while any is queued.
    private static let serveQueued: GSourceFunc = { ud in
        Provider.this(ud).serveNext() ? 1 : 0
    }

    /// Queues `call` behind its client's earlier calls, and wakes the server.
    /// A client with too many calls queued is refused at once.
    func enqueue(_ call: PendingCall) {
        guard calls.enqueue(call, limit: limits.queuedCallsPerClient) else {
            g_dbus_method_invocation_return_dbus_error(call.invocation, DBusFailure.limits("").name,
                                                       "this client has \(limits.queuedCallsPerClient) calls waiting; wait for their replies")
            return
        }
        if !serving {
            serving = true
            // Below GDBus's own priority: every call already read is queued
            // before the next is served, so each client gets its turn.
            g_idle_add_full(G_PRIORITY_DEFAULT_IDLE, Self.serveQueued, Unmanaged.passUnretained(self).toOpaque(), nil)
        }
    }

    /// Answers the next client's oldest call (clients take turns); whether
    /// any call is left.
    func serveNext() -> Bool {
        guard let call = calls.next() else { serving = false; return false }
        serve(call)
        if calls.isEmpty { serving = false; return false }
        return true
    }

    /// Answers one call, then does what waits for its reply (signals).
    func serve(_ call: PendingCall) {
        afterReply = []
        do throws(DBusFailure) {
            try refuseAppContext(call.sender)
            let parameters = g_dbus_method_invocation_get_parameters(call.invocation)!
            let reply = call.interface == Interfaces.properties
                ? try propertiesCall(path: call.path, method: call.method, parameters)
                : try self.call(sender: call.sender, path: call.path, interface: call.interface, method: call.method, parameters)
            g_dbus_method_invocation_return_value(call.invocation, reply)
        } catch {
            g_dbus_method_invocation_return_dbus_error(call.invocation, error.name, error.message)
        }
        let work = afterReply
        afterReply = []
        for w in work { w() }
    }

    nonisolated(unsafe) private static let interfaceVTable: UnsafeMutablePointer<GDBusInterfaceVTable> = {
        let v = UnsafeMutablePointer<GDBusInterfaceVTable>.allocate(capacity: 1)
        v.initialize(to: GDBusInterfaceVTable())
        v.pointee.method_call = methodCall
        return v
    }()

    /// A NULL-terminated `g_malloc`ed array of `g_strdup`ed strings.
    private static func strv(_ list: [String]) -> UnsafeMutablePointer<UnsafeMutablePointer<gchar>?> {
        let out = g_malloc0(gsize((list.count + 1) * MemoryLayout<UnsafeMutablePointer<gchar>?>.stride))!
            .assumingMemoryBound(to: UnsafeMutablePointer<gchar>?.self)
        for (i, s) in list.enumerated() { out[i] = g_strdup(s) }
        return out
    }

    private static let enumerate: GDBusSubtreeEnumerateFunc = { _, _, root, ud in
        let provider = Provider.this(ud)
        let nodes: [String]
        switch str(root) {
        case Provider.root: nodes = []
        case Provider.loginPath, Provider.aliasPath: nodes = provider.items(.login).map(\.node)
        case Provider.sessionCollectionPath: nodes = provider.items(.session).map(\.node)
        case Provider.sessionsRoot: nodes = provider.sessions.keys.map { String($0.split(separator: "/").last!) }
        case Provider.promptsRoot: nodes = provider.prompts.keys.map { String($0.split(separator: "/").last!) }
        default: nodes = []
        }
        return strv(nodes)
    }

    private static let introspect: GDBusSubtreeIntrospectFunc = { _, _, root, node, ud in
        let provider = Provider.this(ud)
        guard let object = provider.resolve(fullPath(root, node)) else { return nil }
        let names = provider.interfaceNames(of: object)
        let out = g_malloc0(gsize((names.count + 1) * MemoryLayout<UnsafeMutablePointer<GDBusInterfaceInfo>?>.stride))!
            .assumingMemoryBound(to: UnsafeMutablePointer<GDBusInterfaceInfo>?.self)
        for (i, n) in names.enumerated() { out[i] = g_dbus_interface_info_ref(provider.interfaces[n]!) }
        return out
    }

    private static let dispatch: GDBusSubtreeDispatchFunc = { _, _, _, _, _, outUserData, ud in
        outUserData?.pointee = ud
        return UnsafePointer(interfaceVTable)
    }

    nonisolated(unsafe) private static let subtreeVTable: UnsafeMutablePointer<GDBusSubtreeVTable> = {
        let v = UnsafeMutablePointer<GDBusSubtreeVTable>.allocate(capacity: 1)
        v.initialize(to: GDBusSubtreeVTable())
        v.pointee.enumerate = enumerate
        v.pointee.introspect = introspect
        v.pointee.dispatch = dispatch
        return v
    }()

    private static let nameOwnerChanged: GDBusSignalCallback = { _, _, _, _, _, parameters, ud in
        guard let parameters else { return }
        let name = Variant.withChild(parameters, 0) { Variant.text($0) }
        let newOwner = Variant.withChild(parameters, 2) { Variant.text($0) }
        if newOwner.isEmpty && name.hasPrefix(":") { Provider.this(ud).clientVanished(name) }
    }

    /// Registers every subtree and the watch on clients leaving. The
    /// provider is kept alive by the registration (never unregistered:
    /// the process ends with it).
    func register() throws(DBusFailure) {
        let ud = Unmanaged.passRetained(self).toOpaque()
        for path in Self.subtreeRoots {
            var error: UnsafeMutablePointer<GError>?
            let id = g_dbus_connection_register_subtree(connection, path, Self.subtreeVTable, G_DBUS_SUBTREE_FLAGS_DISPATCH_TO_UNENUMERATED_NODES,
                                                        ud, nil, &error)
            if id == 0 {
                defer { g_error_free(error) }
                throw .failed("cannot export \(path): \(String(cString: error!.pointee.message))")
            }
        }
        g_dbus_connection_signal_subscribe(connection, "org.freedesktop.DBus", "org.freedesktop.DBus", "NameOwnerChanged",
                                           "/org/freedesktop/DBus", nil, G_DBUS_SIGNAL_FLAGS_NONE, Self.nameOwnerChanged, ud, nil)
    }
}

/// The session bus and the name `org.freedesktop.secrets`.
enum Bus {
    static let name = "org.freedesktop.secrets"

    /// The session bus connection, or why there is none.
    static func session() throws(DBusFailure) -> OpaquePointer {
        var error: UnsafeMutablePointer<GError>?
        guard let c = g_bus_get_sync(G_BUS_TYPE_SESSION, nil, &error) else {
            defer { g_error_free(error) }
            throw .failed("cannot connect to the session bus: \(String(cString: error!.pointee.message))")
        }
        return c
    }

    /// A call to the bus itself; `nil` with the D-Bus error name when it fails.
    static func busCall(_ c: OpaquePointer, _ method: String, _ args: Variant.Value, reply: String) -> (Variant.Value?, String?) {
        var error: UnsafeMutablePointer<GError>?
        let r = g_dbus_connection_call_sync(c, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", method, args,
                                            nil, G_DBUS_CALL_FLAGS_NONE, -1, nil, &error)
        if let r { return (r, nil) }
        defer { g_error_free(error) }
        let remote = g_dbus_error_get_remote_error(error).map { p -> String in defer { g_free(p) }; return String(cString: p) }
        return (nil, remote ?? String(cString: error!.pointee.message))
    }

    /// The process id of the client `sender` (a unique bus name), or `nil`.
    static func processIdentifier(_ c: OpaquePointer, of sender: String) -> Int32? {
        let (r, _) = busCall(c, "GetConnectionUnixProcessID", Variant.tuple([Variant.string(sender)]), reply: "(u)")
        guard let r else { return nil }
        defer { g_variant_unref(r) }
        return Int32(truncatingIfNeeded: Variant.withChild(r, 0) { g_variant_get_uint32($0) })
    }

    /// The unique name owning `org.freedesktop.secrets`, or `nil`.
    static func currentOwner(_ c: OpaquePointer) -> String? {
        let (r, _) = busCall(c, "GetNameOwner", Variant.tuple([Variant.string(name)]), reply: "(s)")
        guard let r else { return nil }
        defer { g_variant_unref(r) }
        return Variant.withChild(r, 0) { Variant.text($0) }
    }

    /// Asks for the name without replacing an owner and without queueing.
    /// Returns `nil` when we own it, else the reason.
    static func requestName(_ c: OpaquePointer) -> String? {
        // DBUS_NAME_FLAG_DO_NOT_QUEUE (4); never REPLACE_EXISTING.
        let (r, failure) = busCall(c, "RequestName", Variant.tuple([Variant.string(name), g_variant_new_uint32(4)]), reply: "(u)")
        guard let r else { return "the bus refused the name: \(failure ?? "unknown error")" }
        defer { g_variant_unref(r) }
        let code = Variant.withChild(r, 0) { g_variant_get_uint32($0) }
        switch code {
        case 1, 4: return nil
        default: return "another Secret Service provider (\(currentOwner(c) ?? "unknown")) owns \(name)"
        }
    }
}
