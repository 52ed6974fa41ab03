import AppHomeSystem
import Preferences
import PropertyList
import SettingsBundle

/// A request as the HTTP layer read it.
public struct HTTPRequest: Sendable {
    public var method: String
    /// The path, without the query.
    public var path: String
    /// The query's `token`, if any.
    public var token: String?
    /// Header values by lowercased name (the first of each).
    public var headers: [String: String]
    public var body: [UInt8]

    public init(method: String, path: String, token: String? = nil, headers: [String: String] = [:], body: [UInt8] = []) {
        self.method = method
        self.path = path
        self.token = token
        self.headers = headers
        self.body = body
    }

    public subscript(header name: String) -> String? { headers[name] }
}

/// An answer: a status, a body and its type, extra headers; or the start of
/// the event stream the HTTP layer keeps open.
public struct HTTPResponse: Sendable {
    public var status: Int
    public var contentType: String
    public var body: [UInt8]
    public var headers: [(String, String)]
    /// The server-sent events stream (`text/event-stream`), kept open.
    public var isEventStream = false
    /// The page's WebSocket (`/api/socket`): the handshake may go on (the
    /// HTTP layer answers it and then hands each message to
    /// ``SettingsRouter/socketMessage(_:)``).
    public var isWebSocket = false

    public init(status: Int, contentType: String = "text/plain; charset=utf-8", body: [UInt8] = [], headers: [(String, String)] = []) {
        self.status = status
        self.contentType = contentType
        self.body = body
        self.headers = headers
    }

    static func text(_ status: Int, _ message: String) -> HTTPResponse {
        HTTPResponse(status: status, body: Array((message + "\n").utf8))
    }

    static func json(_ status: Int, _ value: JSON) -> HTTPResponse {
        HTTPResponse(status: status, contentType: "application/json", body: value.bytes)
    }

    static func error(_ e: SettingsAppError) -> HTTPResponse {
        json(e.status, .object([("error", .string(e.description))]))
    }

    /// Headers every response carries: no script but the page's own, no
    /// framing, no sniffing, no referrer, nothing cached.
    public static let securityHeaders: [(String, String)] = [
        ("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
            + "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"),
        ("X-Frame-Options", "DENY"),
        ("X-Content-Type-Options", "nosniff"),
        ("Referrer-Policy", "no-referrer"),
        ("Cache-Control", "no-store"),
        ("Cross-Origin-Resource-Policy", "same-origin"),
    ]
}

/// The Settings app's routes, behind its ``AccessGate``.
///
/// | Route | What |
/// |---|---|
/// | `GET /?token=T` | the token for the session cookie, then `/` |
/// | `GET /`, `/app.js`, `/app.css` | the page |
/// | `GET /api/apps` | the installed apps |
/// | `GET /api/apps/ID` | an app's page document (``PageDocument``) |
/// | `GET /api/apps/ID/icon`, `/api/apps/ID/image/NAME` | its icon, a slider image (PNG) |
/// | `POST /api/apps/ID/values` | a change (``ChangeRequest``) |
/// | `POST /api/apps/ID/raw` | `{"key", "type", "text"}`: a key no row declares, typed |
/// | `POST /api/apps/ID/reset` | reset to the registered defaults |
/// | `GET /api/events` | server-sent events: `change` with an app id |
/// | `GET /api/socket` | the page's WebSocket: changes as `POST …/values` makes them (``socketMessage(_:)``) |
public struct SettingsRouter {
    let gate: AccessGate
    let catalog: Catalog
    let editor: SettingsEditor

    public init(gate: AccessGate, catalog: Catalog, editor: SettingsEditor) {
        self.gate = gate
        self.catalog = catalog
        self.editor = editor
    }

    /// Answers `request`. Called with `changed` for each app whose values a request changed.
    public func handle(_ request: HTTPRequest, changed: (String) -> Void = { _ in }) -> HTTPResponse {
        var response = route(request, changed: changed)
        response.headers += HTTPResponse.securityHeaders
        return response
    }

    func route(_ request: HTTPRequest, changed: (String) -> Void) -> HTTPResponse {
        guard gate.hostAllowed(request[header: "host"]) else {
            return .text(421, "Refused: the Host header must name the address the Settings app serves")
        }
        let isRead = request.method == "GET" || request.method == "HEAD"
        guard isRead || request.method == "POST" else { return .text(405, "Method not allowed") }
        if request.path == "/", request.token != nil {
            guard isRead, gate.tokenMatches(request.token) else { return .text(403, "Refused: the token is not this Settings app's") }
            // The token becomes a cookie; the address bar loses the token.
            return HTTPResponse(status: 303, headers: [("Location", "/"), ("Set-Cookie", gate.setCookie)])
        }
        guard gate.cookieAllowed(request[header: "cookie"]) else {
            return .text(403, "Refused: open the URL `apphome settings` printed (it holds the token)")
        }
        if !isRead {
            guard gate.originAllowed(request[header: "origin"], host: request[header: "host"]) else {
                return .text(403, "Refused: a change must come from the Settings page itself (Origin)")
            }
        }
        let parts = request.path.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        switch (request.method, request.path) {
        case ("GET", "/"), ("HEAD", "/"): return HTTPResponse(status: 200, contentType: "text/html; charset=utf-8", body: Array(Assets.html.utf8))
        case ("GET", "/app.js"): return HTTPResponse(status: 200, contentType: "text/javascript; charset=utf-8", body: Array(Assets.javascript.utf8))
        case ("GET", "/app.css"): return HTTPResponse(status: 200, contentType: "text/css; charset=utf-8", body: Array(Assets.css.utf8))
        case ("GET", "/api/apps"): return .json(200, appList())
        case ("GET", "/api/events"):
            var r = HTTPResponse(status: 200, contentType: "text/event-stream")
            r.isEventStream = true
            return r
        case ("GET", "/api/socket"):
            // Its handshake is a GET, but the socket carries changes: it must come from the page itself.
            guard gate.originAllowed(request[header: "origin"], host: request[header: "host"]) else {
                return .text(403, "Refused: a change must come from the Settings page itself (Origin)")
            }
            var r = HTTPResponse(status: 101)
            r.isWebSocket = true
            return r
        default: break
        }
        // /api/apps/ID[/…]
        guard parts.count >= 4, parts[1] == "api", parts[2] == "apps", let app = catalog.app(parts[3]) else {
            return .error(.notFound("Not found"))
        }
        let languages = AcceptLanguage.languages(request[header: "accept-language"])
        let rest = Array(parts[4...])
        switch (request.method, rest.first, rest.count) {
        case ("GET", nil, 0):
            do { return .json(200, try editor.document(app, languages: languages).json()) } catch { return .error(error) }
        case ("GET", "icon"?, 1):
            guard let path = app.iconPath else { return .error(.notFound("\(app.id) has no icon")) }
            return png(path)
        case ("GET", "image"?, 2):
            let name = rest[1]
            guard Catalog.isPlainFileName(name), let bundle = app.settingsBundle else { return .error(.notFound("Not found")) }
            return png(bundle.path + "/" + name)
        case ("POST", "values"?, 1):
            let (status, answer) = change(app, { () throws(SettingsAppError) in try ChangeRequest(body: request.body) }, changed: changed)
            return .json(status, answer)
        case ("POST", "raw"?, 1):
            guard request.body.count <= ChangeRequest.maximumBody, case .dictionary(let d)? = try? PlistCodec.decode(request.body, format: .json),
                  case .string(let key)? = d["key"], case .string(let type)? = d["type"], case .string(let text)? = d["text"] else {
                return .error(.badRequest("the request body is not {\"key\", \"type\", \"text\"}"))
            }
            do {
                let stored = try editor.setRaw(app, key: key, type: type, text: text)
                changed(app.id)
                return .json(200, .object([("key", .string(key)), ("value", JSON(value: stored))]))
            } catch {
                return .error(error)
            }
        case ("POST", "reset"?, 1):
            do {
                let removed = try editor.reset(app)
                changed(app.id)
                return .json(200, .object([("removed", .array(removed.map { .string($0) }))]))
            } catch {
                return .error(error)
            }
        default:
            return .error(.notFound("Not found"))
        }
    }

    /// A change of `app` (the ``ChangeRequest`` `request` makes): the status and the answer.
    func change(_ app: InstalledApp, _ request: () throws(SettingsAppError) -> ChangeRequest, changed: (String) -> Void) -> (Int, JSON) {
        do {
            let change = try request()
            let stored = try editor.change(app, change)
            changed(app.id)
            return (200, .object([("key", .string(change.key)), ("value", JSON(value: stored))]))
        } catch {
            return (error.status, .object([("error", .string(error.description))]))
        }
    }

    /// Answers one message of the page's WebSocket, whose handshake passed
    /// the gate (host, cookie, origin) as a request does.
    ///
    /// A message is a change, `{"id": N, "app": ID, "key": K, "value": V}`,
    /// made exactly as `POST /api/apps/ID/values` makes it (the same write
    /// policy and commit, answered after the commit); the answer is
    /// `{"id": N, "status": S, …}` with that route's status and the members
    /// of its answer (`key` and `value`, or `error`). The socket saves the
    /// page the browser's per-request work of a `fetch`, most of a change's
    /// round trip once the commit is done.
    ///
    /// - Returns: the status and the answer (`id` 0 when the message has none).
    public func socketMessage(_ bytes: [UInt8], changed: (String) -> Void = { _ in }) -> (status: Int, answer: JSON) {
        guard bytes.count <= ChangeRequest.maximumBody, case .dictionary(let d)? = try? PlistCodec.decode(bytes, format: .json) else {
            return Self.socketAnswer(0, 400, .object([("error", .string("the message is not a JSON object"))]))
        }
        guard case .integer(let id)? = d["id"] else {
            return Self.socketAnswer(0, 400, .object([("error", .string("the message has no id"))]))
        }
        guard case .string(let appID)? = d["app"], let app = catalog.app(appID) else {
            return Self.socketAnswer(id, 404, .object([("error", .string("Not found"))]))
        }
        let (status, answer) = change(app, { () throws(SettingsAppError) in try ChangeRequest(object: d) }, changed: changed)
        return Self.socketAnswer(id, status, answer)
    }

    static func socketAnswer(_ id: Int128, _ status: Int, _ answer: JSON) -> (status: Int, answer: JSON) {
        guard case .object(let members) = answer else { return (status, answer) }
        return (status, .object([("id", .integer(id)), ("status", .integer(Int128(status)))] + members))
    }

    func appList() -> JSON {
        .array(catalog.apps().map { app in
            .object([("id", .string(app.id)), ("name", .string(app.name)), ("version", .string(app.version)),
                     ("settings", .bool(app.settingsBundle != nil)), ("icon", .bool(app.iconPath != nil))])
        })
    }

    /// A PNG file (checked by its signature), at most ``Catalog/maximumImageBytes``.
    func png(_ path: String) -> HTTPResponse {
        guard let size = Catalog.regularFileSize(path), size <= Catalog.maximumImageBytes,
              let bytes = try? FileSystem.readFileIfPresent(path), bytes.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) else {
            return .error(.notFound("Not found"))
        }
        return HTTPResponse(status: 200, contentType: "image/png", body: bytes)
    }
}
