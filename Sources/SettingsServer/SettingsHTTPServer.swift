#if canImport(Glibc)
import Glibc
#endif
import AppHomeSystem
import CommandSupport
import CSoup
import DefaultsCommand
import Preferences
import PrefsClient
import SettingsApp

/// The Settings app on libsoup 3 and the GLib main loop: connections are
/// accepted here (a `GSocketService`, at most ``maximumConnections``, the
/// oldest idle one closed to make room) and handed to libsoup, which parses
/// HTTP; ``SettingsRouter`` answers; event streams stay open and get a
/// `change` event when a watched domain changes.
final class SettingsHTTPServer {
    /// Connections open at once; beyond it the oldest one that carries no
    /// event stream is closed.
    static let maximumConnections = 64
    /// Event streams open at once (one per open page).
    static let maximumStreams = 32
    /// The largest request body read (a change is a few dozen bytes).
    static let maximumBody = ChangeRequest.maximumBody

    let root: String
    let prefsd: PrefsdSettings
    let managed: ManagedPreferences
    let console: Console
    let soup: UnsafeMutablePointer<SoupServer>
    let service: UnsafeMutablePointer<GSocketService>
    let loop: OpaquePointer
    var gate: AccessGate
    let watchers: DomainWatchers
    /// prefsd's store for reads and writes, while it answers.
    var daemonStore: DaemonPreferenceStore?
    var socketPath: String?
    /// Accepted connections, oldest first.
    var connections: [(stream: UnsafeMutablePointer<GSocketConnection>, since: UInt64)] = []
    /// Open event streams.
    var streams: [OpaquePointer] = []

    init(root: String, prefsd: PrefsdSettings, managed: ManagedPreferences, console: Console) throws {
        self.root = root
        self.prefsd = prefsd
        self.managed = managed
        self.console = console
        soup = apphome_soup_server_new()!
        service = g_socket_service_new()
        loop = g_main_loop_new(nil, 0)
        // Before the URL is printed: whoever read it may stop the server at once.
        _ = g_unix_signal_add_full(G_PRIORITY_DEFAULT, SIGTERM, cQuit, UnsafeMutableRawPointer(loop), nil)
        _ = g_unix_signal_add_full(G_PRIORITY_DEFAULT, SIGINT, cQuit, UnsafeMutableRawPointer(loop), nil)
        gate = AccessGate(address: .loopback(host: "127.0.0.1", port: 0), token: Random.alphanumeric(32), session: Random.alphanumeric(32))
        do { watchers = try DomainWatchers(root: root, prefsd: prefsd) } catch { throw CommandFailure.failure(error.description) }
        do {
            if let connection = try prefsd.connect(root: root) { daemonStore = DaemonPreferenceStore(connection: connection) }
        } catch {
            throw CommandFailure.failure(error.description)
        }
    }

    var context: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }

    static func from(_ pointer: UnsafeMutableRawPointer?) -> SettingsHTTPServer {
        Unmanaged<SettingsHTTPServer>.fromOpaque(pointer!).takeUnretainedValue()
    }

    /// Binds the address or socket the options name.
    func listen(_ options: SettingsServerCommand.Options) throws {
        var error: UnsafeMutablePointer<GError>?
        let listener = UnsafeMutableRawPointer(service).assumingMemoryBound(to: GSocketListener.self)
        if let path = options.socket {
            // A socket left by a run that was killed is replaced; anything else is not.
            var st = stat()
            if lstat(path, &st) == 0 {
                guard (st.st_mode & S_IFMT) == S_IFSOCK else { throw CommandFailure.failure("\(path) exists and is not a socket") }
                unlink(path)
            }
            let address = g_unix_socket_address_new(path)
            defer { g_object_unref(address) }
            let old = umask(0o077)   // the socket is the user's alone
            let ok = g_socket_listener_add_address(listener, address, G_SOCKET_TYPE_STREAM, G_SOCKET_PROTOCOL_DEFAULT, nil, nil, &error)
            umask(old)
            guard ok != 0 else { throw CommandFailure.failure("cannot listen on \(path): \(Self.message(error))") }
            socketPath = path
            gate = AccessGate(address: .socket(path: path), token: gate.token, session: gate.session)
        } else {
            guard let address = g_inet_socket_address_new_from_string(options.host, guint(options.port)) else {
                throw CommandFailure.failure("cannot listen on \(options.host):\(options.port)")
            }
            defer { g_object_unref(address) }
            var effective: UnsafeMutablePointer<GSocketAddress>?
            let ok = g_socket_listener_add_address(listener, address, G_SOCKET_TYPE_STREAM, G_SOCKET_PROTOCOL_TCP, nil, &effective, &error)
            guard ok != 0, let effective else {
                throw CommandFailure.failure("cannot listen on \(options.host):\(options.port): \(Self.message(error))")
            }
            let port = Int(g_inet_socket_address_get_port(UnsafeMutableRawPointer(effective).assumingMemoryBound(to: GInetSocketAddress.self)))
            g_object_unref(effective)
            gate = AccessGate(address: .loopback(host: options.host, port: port), token: gate.token, session: gate.session)
        }
        _ = apphome_signal_connect(service, "incoming", unsafeBitCast(cIncoming, to: GCallback.self), context)
        soup_server_add_early_handler(soup, nil, cEarly, context, nil)
        soup_server_add_handler(soup, nil, cHandler, context, nil)
        g_socket_service_start(service)
    }

    static func message(_ error: UnsafeMutablePointer<GError>?) -> String {
        guard let error else { return "unknown error" }
        defer { g_error_free(error) }
        return String(cString: error.pointee.message)
    }

    /// Runs the main loop until SIGTERM or SIGINT.
    func run() {
        _ = g_unix_fd_add_full(G_PRIORITY_DEFAULT, watchers.readEnd, G_IO_IN, cChanged, context, nil)
        _ = g_timeout_add_seconds_full(G_PRIORITY_DEFAULT, 15, cKeepAlive, context, nil)
        // Every app with a Settings.bundle is watched from the start.
        for app in Catalog(root: root).apps() where app.settingsBundle != nil { watchers.watch(id: app.id, domain: app.domain()) }
        g_main_loop_run(loop)
        g_socket_service_stop(service)
        let listener = UnsafeMutableRawPointer(service).assumingMemoryBound(to: GSocketListener.self)
        g_socket_listener_close(listener)
        soup_server_disconnect(soup)
        if let socketPath { unlink(socketPath) }
    }

    /// The store of this request: prefsd's while it answers, else the files
    /// as `defaults` writes them (the registry read now: an app installed
    /// since start is routed to its home).
    func editor() -> SettingsEditor {
        if daemonStore == nil, prefsd.mode != .off, let connection = try? prefsd.connect(root: root) {
            daemonStore = DaemonPreferenceStore(connection: connection)
        }
        let store: PreferenceStore
        if let daemonStore {
            store = daemonStore
        } else {
            store = DefaultsCommand.fileStore(root: root, managed: managed)
        }
        return SettingsEditor(store: store, managed: managed)
    }

    // MARK: Connections

    /// A new connection: refused when the peer runs in an app's context or
    /// sandbox, else kept, counted and handed to libsoup (``admit(_:)``). On the
    /// Unix socket the kernel names the peer (`SO_PEERCRED`); on TCP its process
    /// is looked for on a thread (``PeerCheck/loopbackPeer(peerPort:serverPort:)``
    /// reads every process's descriptors), and the connection waits for the answer.
    func accept(_ connection: UnsafeMutablePointer<GSocketConnection>) {
        if socketPath != nil {
            if let socket = g_socket_connection_get_socket(connection), let why = PeerCheck.refusal(pid: apphome_socket_peer_pid(socket)) {
                refuse(connection, why)
            } else {
                admit(connection)
            }
            return
        }
        guard case .loopback(_, let serverPort) = gate.address, let peerPort = Self.remotePort(connection) else {
            admit(connection)
            return
        }
        g_object_ref(connection)
        let pending = PendingConnection(server: context, connection: connection)
        let thread = Threads.spawn {
            let refusal = PeerCheck.loopbackPeer(peerPort: peerPort, serverPort: serverPort).flatMap { PeerCheck.refusal(pid: $0) }
            pending.refusal = refusal
            // GLib's idle sources may be added from any thread: the verdict runs on the main loop.
            _ = g_idle_add_full(G_PRIORITY_DEFAULT, cVerdict, Unmanaged.passRetained(pending).toOpaque(), nil)
        }
        if let thread {
            pthread_detach(thread)
        } else {
            admit(connection)
            g_object_unref(connection)
        }
    }

    /// The remote port of a TCP connection.
    static func remotePort(_ connection: UnsafeMutablePointer<GSocketConnection>) -> Int? {
        guard let remote = g_socket_connection_get_remote_address(connection, nil) else { return nil }
        defer { g_object_unref(remote) }
        guard g_socket_address_get_family(remote) == G_SOCKET_FAMILY_IPV4 || g_socket_address_get_family(remote) == G_SOCKET_FAMILY_IPV6 else { return nil }
        return Int(g_inet_socket_address_get_port(UnsafeMutableRawPointer(remote).assumingMemoryBound(to: GInetSocketAddress.self)))
    }

    func refuse(_ connection: UnsafeMutablePointer<GSocketConnection>, _ why: String) {
        console.err("apphome settings: refused a connection: \(why)\n")
        g_io_stream_close(UnsafeMutableRawPointer(connection).assumingMemoryBound(to: GIOStream.self), nil, nil)
    }

    /// Keeps `connection` (within ``maximumConnections``) and hands it to libsoup.
    func admit(_ connection: UnsafeMutablePointer<GSocketConnection>) {
        prune()
        if connections.count >= Self.maximumConnections {
            // Room for the newcomer: the oldest connection that is not an event stream goes.
            let streamSockets = Set(streams.compactMap { soup_server_message_get_socket($0).map { UnsafeMutableRawPointer($0) } })
            if let index = connections.firstIndex(where: { !streamSockets.contains(UnsafeMutableRawPointer(g_socket_connection_get_socket($0.stream))) }) {
                g_io_stream_close(UnsafeMutableRawPointer(connections[index].stream).assumingMemoryBound(to: GIOStream.self), nil, nil)
                g_object_unref(connections[index].stream)
                connections.remove(at: index)
            } else {
                g_io_stream_close(UnsafeMutableRawPointer(connection).assumingMemoryBound(to: GIOStream.self), nil, nil)
                return
            }
        }
        g_object_ref(connection)
        connections.append((connection, UInt64(g_get_monotonic_time())))
        let local = g_socket_connection_get_local_address(connection, nil)
        let remote = g_socket_connection_get_remote_address(connection, nil)
        var error: UnsafeMutablePointer<GError>?
        let stream = UnsafeMutableRawPointer(connection).assumingMemoryBound(to: GIOStream.self)
        if soup_server_accept_iostream(soup, stream, local, remote, &error) == 0 {
            console.err("apphome settings: \(Self.message(error))\n")
        }
        if let local { g_object_unref(local) }
        if let remote { g_object_unref(remote) }
    }

    /// Forgets the connections libsoup has closed.
    func prune() {
        connections.removeAll { entry in
            let closed = g_io_stream_is_closed(UnsafeMutableRawPointer(entry.stream).assumingMemoryBound(to: GIOStream.self)) != 0
            if closed { g_object_unref(entry.stream) }
            return closed
        }
    }

    // MARK: Requests

    /// Refuses a body larger than ``maximumBody`` before it is read.
    func early(_ message: OpaquePointer) {
        let headers = soup_server_message_get_request_headers(message)
        let length = soup_message_headers_get_content_length(headers)
        let encoding = soup_message_headers_get_encoding(headers)
        if length > Self.maximumBody || (encoding != SOUP_ENCODING_CONTENT_LENGTH && encoding != SOUP_ENCODING_NONE) {
            respond(message, HTTPResponse(status: 413, body: Array("Request body too large\n".utf8)))
            soup_message_headers_replace(soup_server_message_get_response_headers(message), "Connection", "close")
        }
    }

    func handle(_ message: OpaquePointer, query: OpaquePointer?) {
        let method = String(cString: soup_server_message_get_method(message))
        let uri = soup_server_message_get_uri(message)
        let path = uri.flatMap { g_uri_get_path($0) }.map { String(cString: $0) } ?? "/"
        var token: String?
        if let query, let value = g_hash_table_lookup(query, "token") {
            token = String(cString: value.assumingMemoryBound(to: CChar.self))
        }
        let requestHeaders = soup_server_message_get_request_headers(message)
        var headers: [String: String] = [:]
        for name in ["host", "origin", "cookie", "accept-language", "content-type"] {
            if let v = soup_message_headers_get_one(requestHeaders, name) { headers[name] = String(cString: v) }
        }
        var body: [UInt8] = []
        if let b = soup_server_message_get_request_body(message), b.pointee.length > 0, let data = b.pointee.data {
            let n = Int(min(b.pointee.length, goffset(Self.maximumBody + 1)))
            body = Array(UnsafeRawBufferPointer(start: data, count: n))
        }
        let request = HTTPRequest(method: method, path: path, token: token, headers: headers, body: body)
        let router = SettingsRouter(gate: gate, catalog: Catalog(root: root), editor: editor())
        // The watchers report every change, this server's own included: no broadcast here.
        let response = router.handle(request)
        if daemonStore != nil, response.status == 500 { daemonStore = nil }   // prefsd went away: the files next time
        if response.isEventStream {
            openStream(message, response)
        } else {
            respond(message, response)
        }
        // A page that asked for an app watches its domain from now on.
        if method == "GET", path.hasPrefix("/api/apps/"), response.status == 200 {
            let id = String(path.dropFirst(10).prefix { $0 != "/" })
            if !watchers.isWatching(id), let app = Catalog(root: root).app(id) { watchers.watch(id: app.id, domain: app.domain()) }
        }
    }

    func respond(_ message: OpaquePointer, _ response: HTTPResponse) {
        soup_server_message_set_status(message, guint(response.status), nil)
        let headers = soup_server_message_get_response_headers(message)
        for (name, value) in response.headers { soup_message_headers_replace(headers, name, value) }
        response.body.withUnsafeBytes { bytes in
            soup_server_message_set_response(message, response.contentType, SOUP_MEMORY_COPY,
                                             bytes.baseAddress?.assumingMemoryBound(to: CChar.self), gsize(bytes.count))
        }
    }

    func openStream(_ message: OpaquePointer, _ response: HTTPResponse) {
        guard streams.count < Self.maximumStreams else {
            respond(message, HTTPResponse(status: 503, body: Array("Too many open Settings pages\n".utf8)))
            return
        }
        soup_server_message_set_status(message, 200, nil)
        let headers = soup_server_message_get_response_headers(message)
        for (name, value) in response.headers { soup_message_headers_replace(headers, name, value) }
        soup_message_headers_replace(headers, "Content-Type", "text/event-stream")
        soup_message_headers_set_encoding(headers, SOUP_ENCODING_CHUNKED)
        streams.append(message)
        _ = apphome_signal_connect(UnsafeMutableRawPointer(message), "finished", unsafeBitCast(cStreamFinished, to: GCallback.self), context)
        send(message, "retry: 1000\n: open\n\n")
    }

    func send(_ message: OpaquePointer, _ text: String) {
        let body = soup_server_message_get_response_body(message)
        var bytes = Array(text.utf8)
        bytes.withUnsafeMutableBytes { soup_message_body_append(body, SOUP_MEMORY_COPY, $0.baseAddress, gsize($0.count)) }
        soup_server_message_unpause(message)
    }

    func streamFinished(_ message: OpaquePointer) {
        streams.removeAll { $0 == message }
    }

    func broadcast(_ ids: [String]) {
        for id in ids {
            // An id is a bundle identifier: no newline can split the event.
            guard !id.contains("\n") && !id.contains("\r") else { continue }
            for stream in streams { send(stream, "event: change\ndata: \(id)\n\n") }
        }
    }
}

// The C callbacks: each finds the server from its user data.

private let cIncoming: @convention(c) (UnsafeMutablePointer<GSocketService>?, UnsafeMutablePointer<GSocketConnection>?,
                                      UnsafeMutablePointer<GObject>?, UnsafeMutableRawPointer?) -> gboolean = { _, connection, _, context in
    if let connection { SettingsHTTPServer.from(context).accept(connection) }
    return 1
}

private let cEarly: @convention(c) (UnsafeMutablePointer<SoupServer>?, OpaquePointer?, UnsafePointer<CChar>?, OpaquePointer?, UnsafeMutableRawPointer?) -> Void = {
    _, message, _, _, context in
    if let message { SettingsHTTPServer.from(context).early(message) }
}

private let cHandler: @convention(c) (UnsafeMutablePointer<SoupServer>?, OpaquePointer?, UnsafePointer<CChar>?, OpaquePointer?, UnsafeMutableRawPointer?) -> Void = {
    _, message, _, query, context in
    if let message { SettingsHTTPServer.from(context).handle(message, query: query) }
}

private let cStreamFinished: @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?) -> Void = { message, context in
    if let message { SettingsHTTPServer.from(context).streamFinished(message) }
}

private let cQuit: @convention(c) (UnsafeMutableRawPointer?) -> gboolean = { loop in
    g_main_loop_quit(OpaquePointer(loop))
    return 0
}

/// A TCP connection waiting for its peer to be identified.
final class PendingConnection: @unchecked Sendable {
    let server: UnsafeMutableRawPointer
    let connection: UnsafeMutablePointer<GSocketConnection>
    /// Set by the identifying thread before the verdict is queued.
    var refusal: String?

    init(server: UnsafeMutableRawPointer, connection: UnsafeMutablePointer<GSocketConnection>) {
        self.server = server
        self.connection = connection
    }
}

private let cVerdict: @convention(c) (UnsafeMutableRawPointer?) -> gboolean = { pointer in
    let pending = Unmanaged<PendingConnection>.fromOpaque(pointer!).takeRetainedValue()
    let server = SettingsHTTPServer.from(pending.server)
    if let why = pending.refusal { server.refuse(pending.connection, why) } else { server.admit(pending.connection) }
    g_object_unref(pending.connection)
    return 0
}

private let cChanged: @convention(c) (Int32, GIOCondition, UnsafeMutableRawPointer?) -> gboolean = { _, _, context in
    let server = SettingsHTTPServer.from(context)
    server.broadcast(server.watchers.takeChanged())
    return 1
}

private let cKeepAlive: @convention(c) (UnsafeMutableRawPointer?) -> gboolean = { context in
    let server = SettingsHTTPServer.from(context)
    for stream in server.streams { server.send(stream, ": ping\n\n") }
    server.prune()
    return 1
}
