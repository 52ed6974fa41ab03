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

/// The Settings app on libsoup 3 and the GLib main loop: libsoup accepts
/// connections on the socket bound here and parses HTTP; each connection is
/// counted (at most ``maximumConnections``, the oldest one without an event
/// stream closed to make room) and its peer process identified once, before
/// its first request is answered (``Peer``); ``SettingsRouter`` answers;
/// event streams stay open and get a `change` event when a watched domain
/// changes; a page's WebSocket, once its handshake passed the same gate,
/// carries its changes (``SettingsRouter/socketMessage(_:changed:)``).
final class SettingsHTTPServer {
    /// Connections open at once; beyond it the oldest one that carries no
    /// event stream is closed.
    static let maximumConnections = 64
    /// Event streams open at once (one per open page).
    static let maximumStreams = 32
    /// WebSockets open at once (one per open page).
    static let maximumSockets = 32
    /// The largest request body read (a change is a few dozen bytes).
    static let maximumBody = ChangeRequest.maximumBody

    let root: String
    let prefsd: PrefsdSettings
    let managed: ManagedPreferences
    let console: Console
    let soup: UnsafeMutablePointer<SoupServer>
    /// The listening socket.
    var listening: UnsafeMutablePointer<GSocket>?
    let loop: OpaquePointer
    var gate: AccessGate
    let watchers: DomainWatchers
    /// The registry, the bundles' pages and strings tables, read again only when their files change.
    let cache = SettingsCache()
    /// prefsd's store for reads and writes, while it answers.
    var daemonStore: DaemonPreferenceStore?
    var socketPath: String?
    /// Open connections (their sockets' ``Peer``s), oldest first.
    var connections: [Peer] = []
    /// Open event streams.
    var streams: [OpaquePointer] = []
    /// Open WebSockets (a reference held on each) and their sockets.
    var webSockets: [(connection: OpaquePointer, socket: UnsafeMutablePointer<GSocket>)] = []
    /// The token of a request waiting for its peer's verdict.
    var tokens: [UnsafeMutableRawPointer: String] = [:]

    init(root: String, prefsd: PrefsdSettings, managed: ManagedPreferences, console: Console) throws {
        self.root = root
        self.prefsd = prefsd
        self.managed = managed
        self.console = console
        soup = apphome_soup_server_new()!
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

    /// Binds the address or socket the options name, and hands it to libsoup.
    func listen(_ options: SettingsServerCommand.Options) throws {
        var error: UnsafeMutablePointer<GError>?
        let address: UnsafeMutablePointer<GSocketAddress>
        let where_: String
        if let path = options.socket {
            // A socket left by a run that was killed is replaced; anything else is not.
            var st = stat()
            if lstat(path, &st) == 0 {
                guard (st.st_mode & S_IFMT) == S_IFSOCK else { throw CommandFailure.failure("\(path) exists and is not a socket") }
                unlink(path)
            }
            address = g_unix_socket_address_new(path)
            where_ = path
        } else {
            guard let inet = g_inet_socket_address_new_from_string(options.host, guint(options.port)) else {
                throw CommandFailure.failure("cannot listen on \(options.host):\(options.port)")
            }
            address = inet
            where_ = "\(options.host):\(options.port)"
        }
        defer { g_object_unref(address) }
        guard let socket = g_socket_new(g_socket_address_get_family(address), G_SOCKET_TYPE_STREAM, G_SOCKET_PROTOCOL_DEFAULT, &error) else {
            throw CommandFailure.failure("cannot listen on \(where_): \(Self.message(error))")
        }
        listening = socket
        let old = umask(0o077)   // a Unix socket is the user's alone
        let bound = g_socket_bind(socket, address, 1, &error) != 0
        umask(old)
        guard bound, g_socket_listen(socket, &error) != 0 else { throw CommandFailure.failure("cannot listen on \(where_): \(Self.message(error))") }
        if let path = options.socket {
            socketPath = path
            gate = AccessGate(address: .socket(path: path), token: gate.token, session: gate.session)
        } else {
            guard let local = g_socket_get_local_address(socket, &error) else { throw CommandFailure.failure("cannot listen on \(where_): \(Self.message(error))") }
            let port = Int(g_inet_socket_address_get_port(UnsafeMutableRawPointer(local).assumingMemoryBound(to: GInetSocketAddress.self)))
            g_object_unref(local)
            gate = AccessGate(address: .loopback(host: options.host, port: port), token: gate.token, session: gate.session)
        }
        _ = apphome_signal_connect(soup, "request-started", unsafeBitCast(cRequestStarted, to: GCallback.self), context)
        soup_server_add_early_handler(soup, nil, cEarly, context, nil)
        soup_server_add_handler(soup, nil, cHandler, context, nil)
        guard soup_server_listen_socket(soup, socket, SoupServerListenOptions(rawValue: 0), &error) != 0 else {
            throw CommandFailure.failure("cannot listen on \(where_): \(Self.message(error))")
        }
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
        for app in Catalog(root: root, cache: cache).apps() where app.settingsBundle != nil { watchers.watch(id: app.id, domain: app.domain()) }
        g_main_loop_run(loop)
        soup_server_disconnect(soup)
        if let socketPath { unlink(socketPath) }
    }

    /// The store of this request: prefsd's while it answers, else the files
    /// as `defaults` writes them (the registry read now: an app installed
    /// since start is routed to its home).
    func editor() -> SettingsEditor {
        // The schemas of this request: each bundle's files are looked at once, by the editor and the write policy alike.
        let schemas = RequestSchemas(cache: cache)
        if daemonStore == nil, prefsd.mode != .off, let connection = try? prefsd.connect(root: root) {
            daemonStore = DaemonPreferenceStore(connection: connection)
        }
        let store: PreferenceStore
        if let daemonStore {
            store = daemonStore
        } else {
            store = DefaultsCommand.fileStore(root: root, registry: cache.registry(root: root), managed: managed, validators: schemas.validators)
        }
        return SettingsEditor(store: store, managed: managed, cache: cache, schemas: schemas)
    }

    // MARK: Connections

    /// A connection's first request is starting: the connection is counted
    /// (its ``Peer`` lives as long as its socket) and, beyond
    /// ``maximumConnections``, the oldest one that carries no event stream is
    /// closed.
    func requestStarted(_ message: OpaquePointer) {
        guard let socket = soup_server_message_get_socket(message), Peer.of(socket) == nil else { return }
        let peer = Peer(server: self, socket: socket)
        g_object_set_data_full(UnsafeMutableRawPointer(socket).assumingMemoryBound(to: GObject.self), Peer.key, Unmanaged.passRetained(peer).toOpaque(), cPeerGone)
        connections.append(peer)
        // A closed socket stays listed until libsoup lets it go.
        let open = connections.filter { g_socket_is_closed($0.socket) == 0 }
        if open.count > Self.maximumConnections {
            let streamSockets = Set(streams.compactMap { soup_server_message_get_socket($0).map { UnsafeMutableRawPointer($0) } })
                .union(webSockets.map { UnsafeMutableRawPointer($0.socket) })
            if let oldest = open.first(where: { !streamSockets.contains(UnsafeMutableRawPointer($0.socket)) }) {
                g_socket_close(oldest.socket, nil)
            }
        }
    }

    /// A counted connection's socket is gone.
    func forget(_ peer: Peer) {
        connections.removeAll { $0 === peer }
    }

    /// Whether `message`'s peer may be answered: decided once per
    /// connection. On the Unix socket the kernel names the peer
    /// (`SO_PEERCRED`); on TCP its process is looked for on a thread
    /// (``PeerCheck/loopbackPeer(peerPort:serverPort:)`` reads every
    /// process's descriptors) while the message waits, paused.
    ///
    /// - Returns: ``Peer/Verdict/waiting`` when the message was paused until the peer is known.
    func verdict(for message: OpaquePointer) -> Peer.Verdict {
        guard let socket = soup_server_message_get_socket(message), let peer = Peer.of(socket) else { return .allowed }
        if let verdict = peer.verdict { return verdict }
        if socketPath != nil {
            let verdict: Peer.Verdict = PeerCheck.refusal(pid: apphome_socket_peer_pid(socket)).map { .refused($0) } ?? .allowed
            peer.verdict = verdict
            return verdict
        }
        guard case .loopback(_, let serverPort) = gate.address, let peerPort = Self.remotePort(socket) else {
            peer.verdict = .allowed
            return .allowed
        }
        g_object_ref(UnsafeMutableRawPointer(message))
        soup_server_message_pause(message)
        peer.waiting.append(message)
        if peer.waiting.count == 1 {
            let pending = PendingVerdict(peer: Unmanaged.passRetained(peer).toOpaque())
            let thread = Threads.spawn {
                pending.refusal = PeerCheck.loopbackPeer(peerPort: peerPort, serverPort: serverPort).flatMap { PeerCheck.refusal(pid: $0) }
                // GLib's idle sources may be added from any thread: the verdict is applied on the main loop.
                _ = g_idle_add_full(G_PRIORITY_DEFAULT, cVerdict, Unmanaged.passRetained(pending).toOpaque(), nil)
            }
            if let thread {
                pthread_detach(thread)
            } else {
                Unmanaged<Peer>.fromOpaque(pending.peer).release()
                decided(peer, .allowed)
            }
        }
        return .waiting
    }

    /// The peer of a connection is known: its waiting requests are answered.
    func decided(_ peer: Peer, _ verdict: Peer.Verdict) {
        peer.verdict = verdict
        let waiting = peer.waiting
        peer.waiting = []
        for message in waiting {
            answer(message, verdict)
            soup_server_message_unpause(message)
            g_object_unref(UnsafeMutableRawPointer(message))
        }
    }

    /// The remote port of a TCP socket.
    static func remotePort(_ socket: UnsafeMutablePointer<GSocket>) -> Int? {
        guard let remote = g_socket_get_remote_address(socket, nil) else { return nil }
        defer { g_object_unref(remote) }
        let family = g_socket_address_get_family(remote)
        guard family == G_SOCKET_FAMILY_IPV4 || family == G_SOCKET_FAMILY_IPV6 else { return nil }
        return Int(g_inet_socket_address_get_port(UnsafeMutableRawPointer(remote).assumingMemoryBound(to: GInetSocketAddress.self)))
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
        // The token is read now: the query table is libsoup's only during this call.
        if let query, let value = g_hash_table_lookup(query, "token") {
            tokens[UnsafeMutableRawPointer(message)] = String(cString: value.assumingMemoryBound(to: CChar.self))
        }
        let verdict = verdict(for: message)
        if case .waiting = verdict { return }
        answer(message, verdict)
    }

    /// Answers `message`, or refuses it when its peer is refused.
    func answer(_ message: OpaquePointer, _ verdict: Peer.Verdict) {
        let token = tokens.removeValue(forKey: UnsafeMutableRawPointer(message))
        if case .refused(let why) = verdict {
            console.err("apphome settings: refused a request: \(why)\n")
            respond(message, HTTPResponse(status: 403, body: Array("Refused: \(why)\n".utf8)))
            soup_message_headers_replace(soup_server_message_get_response_headers(message), "Connection", "close")
            return
        }
        let method = String(cString: soup_server_message_get_method(message))
        let uri = soup_server_message_get_uri(message)
        let path = uri.flatMap { g_uri_get_path($0) }.map { String(cString: $0) } ?? "/"
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
        let router = SettingsRouter(gate: gate, catalog: Catalog(root: root, cache: cache), editor: editor())
        // The watchers report every change, this server's own included: no broadcast here.
        let response = router.handle(request)
        if daemonStore != nil, response.status == 500 { daemonStore = nil }   // prefsd went away: the files next time
        if response.isEventStream {
            openStream(message, response)
        } else if response.isWebSocket {
            openWebSocket(message)
        } else {
            respond(message, response)
        }
        // A page that asked for an app watches its domain from now on.
        if method == "GET", path.hasPrefix("/api/apps/"), response.status == 200 {
            let id = String(path.dropFirst(10).prefix { $0 != "/" })
            if !watchers.isWatching(id), let app = Catalog(root: root, cache: cache).app(id) { watchers.watch(id: app.id, domain: app.domain()) }
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

    /// Answers a WebSocket handshake the router let through: libsoup checks
    /// its headers and answers 101 (or 400); once that is written the
    /// connection is taken from the HTTP layer (``webSocketUpgraded(_:)``).
    func openWebSocket(_ message: OpaquePointer) {
        guard webSockets.count < Self.maximumSockets else {
            respond(message, HTTPResponse(status: 503, body: Array("Too many open Settings pages\n".utf8)))
            return
        }
        guard soup_websocket_server_process_handshake(message, nil, nil, nil, nil) != 0 else { return }
        _ = apphome_signal_connect(UnsafeMutableRawPointer(message), "wrote-informational", unsafeBitCast(cWebSocketUpgraded, to: GCallback.self), context)
    }

    func webSocketUpgraded(_ message: OpaquePointer) {
        guard let socket = soup_server_message_get_socket(message) else { return }
        g_object_ref(UnsafeMutableRawPointer(message))
        defer { g_object_unref(UnsafeMutableRawPointer(message)) }
        guard let stream = soup_server_message_steal_connection(message) else { return }
        let origin = soup_message_headers_get_one(soup_server_message_get_request_headers(message), "Origin")
        let connection = soup_websocket_connection_new(stream, soup_server_message_get_uri(message), SOUP_WEBSOCKET_CONNECTION_SERVER, origin, nil, nil)!
        g_object_unref(stream)
        soup_websocket_connection_set_max_incoming_payload_size(connection, guint64(Self.maximumBody))
        soup_websocket_connection_set_keepalive_interval(connection, 15)
        webSockets.append((connection, socket))
        _ = apphome_signal_connect(UnsafeMutableRawPointer(connection), "message", unsafeBitCast(cWebSocketMessage, to: GCallback.self), context)
        _ = apphome_signal_connect(UnsafeMutableRawPointer(connection), "closed", unsafeBitCast(cWebSocketClosed, to: GCallback.self), context)
    }

    /// A page's message: a change, answered on the socket after its commit.
    func webSocketMessage(_ connection: OpaquePointer, type: Int32, data: OpaquePointer) {
        guard type == Int32(SOUP_WEBSOCKET_DATA_TEXT.rawValue) else {
            soup_websocket_connection_close(connection, guint16(SOUP_WEBSOCKET_CLOSE_UNSUPPORTED_DATA.rawValue), nil)
            return
        }
        var size: gsize = 0
        let bytes = g_bytes_get_data(data, &size).map { Array(UnsafeRawBufferPointer(start: $0, count: Int(size))) } ?? []
        let router = SettingsRouter(gate: gate, catalog: Catalog(root: root, cache: cache), editor: editor())
        let (status, answer) = router.socketMessage(bytes)
        if daemonStore != nil, status == 500 { daemonStore = nil }   // prefsd went away: the files next time
        soup_websocket_connection_send_text(connection, answer.text)
    }

    func webSocketClosed(_ connection: OpaquePointer) {
        webSockets.removeAll { $0.connection == connection }
        // Let go once the signal's emission is over.
        _ = g_idle_add_full(G_PRIORITY_DEFAULT, cRelease, UnsafeMutableRawPointer(connection), nil)
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

    /// Tells every open page what changed: the changed keys as the page
    /// shows them (``PageDocument/changeEvent(_:set:removed:managed:idiom:cache:)``),
    /// or only the app's id when the page must read the whole document again.
    func broadcast(_ changes: [(String, Pending)]) {
        guard !streams.isEmpty else { return }
        let catalog = Catalog(root: root, cache: cache)
        for (id, pending) in changes {
            let event: JSON
            if let delta = pending.delta, let app = catalog.app(id) {
                event = PageDocument.changeEvent(app, set: delta.set, removed: delta.removed, managed: managed, cache: cache)
            } else {
                event = .object([("id", .string(id))])
            }
            // JSON text escapes every line break: one `data` line.
            for stream in streams { send(stream, "event: change\ndata: \(event.text)\n\n") }
        }
    }
}

// The C callbacks: each finds the server from its user data.

private let cRequestStarted: @convention(c) (UnsafeMutablePointer<SoupServer>?, OpaquePointer?, UnsafeMutableRawPointer?) -> Void = {
    _, message, context in
    if let message { SettingsHTTPServer.from(context).requestStarted(message) }
}

private let cPeerGone: @convention(c) (UnsafeMutableRawPointer?) -> Void = { pointer in
    let peer = Unmanaged<Peer>.fromOpaque(pointer!).takeRetainedValue()
    peer.server?.forget(peer)
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

private let cWebSocketUpgraded: @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?) -> Void = { message, context in
    if let message { SettingsHTTPServer.from(context).webSocketUpgraded(message) }
}

private let cWebSocketMessage: @convention(c) (OpaquePointer?, Int32, OpaquePointer?, UnsafeMutableRawPointer?) -> Void = {
    connection, type, data, context in
    if let connection, let data { SettingsHTTPServer.from(context).webSocketMessage(connection, type: type, data: data) }
}

private let cWebSocketClosed: @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?) -> Void = { connection, context in
    if let connection { SettingsHTTPServer.from(context).webSocketClosed(connection) }
}

private let cRelease: @convention(c) (UnsafeMutableRawPointer?) -> gboolean = { object in
    g_object_unref(object)
    return 0
}

private let cQuit: @convention(c) (UnsafeMutableRawPointer?) -> gboolean = { loop in
    g_main_loop_quit(OpaquePointer(loop))
    return 0
}

/// A connection's peer, kept on its socket (`g_object_set_data_full`): it
/// goes when the socket does.
final class Peer {
    /// What is known of the peer process.
    enum Verdict {
        case allowed
        case refused(String)
        /// Being identified; the request is paused until it is.
        case waiting
    }

    static let key = "apphome-settings-peer"
    weak var server: SettingsHTTPServer?
    let socket: UnsafeMutablePointer<GSocket>
    var verdict: Verdict?
    /// Requests paused until the verdict.
    var waiting: [OpaquePointer] = []

    init(server: SettingsHTTPServer, socket: UnsafeMutablePointer<GSocket>) {
        self.server = server
        self.socket = socket
    }

    /// The peer of `socket`, once counted.
    static func of(_ socket: UnsafeMutablePointer<GSocket>) -> Peer? {
        g_object_get_data(UnsafeMutableRawPointer(socket).assumingMemoryBound(to: GObject.self), key).map { Unmanaged<Peer>.fromOpaque($0).takeUnretainedValue() }
    }
}

/// A peer being identified on a thread.
final class PendingVerdict: @unchecked Sendable {
    /// The ``Peer``, retained until the verdict is applied.
    let peer: UnsafeMutableRawPointer
    /// Set by the identifying thread before the verdict is queued.
    var refusal: String?

    init(peer: UnsafeMutableRawPointer) {
        self.peer = peer
    }
}

private let cVerdict: @convention(c) (UnsafeMutableRawPointer?) -> gboolean = { pointer in
    let pending = Unmanaged<PendingVerdict>.fromOpaque(pointer!).takeRetainedValue()
    let peer = Unmanaged<Peer>.fromOpaque(pending.peer).takeRetainedValue()
    peer.server?.decided(peer, pending.refusal.map { .refused($0) } ?? .allowed)
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
    return 1
}
