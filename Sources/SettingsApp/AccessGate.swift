/// Who may use the Settings app: the browser that opened the URL with the
/// token, on the address the app serves, from the page itself.
///
/// - The token printed at start is exchanged once per browser for a
///   session cookie (`HttpOnly`, `SameSite=Strict`): the page's later
///   requests carry the cookie, never the token.
/// - `Host` must name the loopback address served (a DNS-rebinding page on
///   another name is refused); through a Unix socket the proxy in front
///   decides the host, and only `Origin` is checked against it.
/// - A change (`POST`) needs an `Origin` that is the served origin (CSRF).
public struct AccessGate: Sendable {
    /// Where the app listens.
    public enum Address: Sendable, Equatable {
        /// A loopback host (`127.0.0.1`, `::1`) and port.
        case loopback(host: String, port: Int)
        /// A Unix socket, for a reverse proxy.
        case socket(path: String)
    }

    public let address: Address
    /// The secret in the printed URL.
    public let token: String
    /// The cookie's value once the token was shown.
    public let session: String

    /// The session cookie's name.
    public static let cookieName = "apphome_settings"

    public init(address: Address, token: String, session: String) {
        self.address = address
        self.token = token
        self.session = session
    }

    /// The `host:port` forms a browser sends for the served address.
    public var allowedHosts: [String] {
        guard case .loopback(let host, let port) = address else { return [] }
        let h = host.contains(":") ? "[\(host)]" : host
        return ["\(h):\(port)", "localhost:\(port)"]
    }

    /// The URL printed at start.
    public var startURL: String {
        switch address {
        case .loopback: return "http://\(allowedHosts[0])/?token=\(token)"
        case .socket(let path): return "unix:\(path) /?token=\(token)"
        }
    }

    /// Whether a `Host` header names the served address.
    public func hostAllowed(_ host: String?) -> Bool {
        guard let host, !host.isEmpty else { return false }
        if case .socket = address { return true }
        return allowedHosts.contains(host.lowercased())
    }

    /// Whether an `Origin` header is the page's own origin (`host` is the request's `Host`).
    public func originAllowed(_ origin: String?, host: String?) -> Bool {
        guard let origin, let host, hostAllowed(host) else { return false }
        switch address {
        case .loopback: return origin.lowercased() == "http://" + host.lowercased()
        case .socket: return origin.lowercased() == "http://" + host.lowercased() || origin.lowercased() == "https://" + host.lowercased()
        }
    }

    /// Whether `candidate` is the token.
    public func tokenMatches(_ candidate: String?) -> Bool {
        guard let candidate else { return false }
        return Self.constantTimeEqual(candidate, token)
    }

    /// Whether a `Cookie` header carries the session.
    public func cookieAllowed(_ header: String?) -> Bool {
        guard let header else { return false }
        for part in header.split(separator: ";") {
            let pair = part.trimmingSpaces
            guard let eq = pair.firstIndex(of: "=") else { continue }
            if pair[..<eq] == Self.cookieName, Self.constantTimeEqual(String(pair[pair.index(after: eq)...]), session) { return true }
        }
        return false
    }

    /// The `Set-Cookie` value that gives the browser the session.
    public var setCookie: String {
        "\(Self.cookieName)=\(session); Path=/; HttpOnly; SameSite=Strict"
    }

    static func constantTimeEqual(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8), y = Array(b.utf8)
        guard x.count == y.count else { return false }
        var diff: UInt8 = 0
        for i in 0..<x.count { diff |= x[i] ^ y[i] }
        return diff == 0
    }
}

/// `Accept-Language`'s languages, best first (`fr-CH, fr;q=0.9, en;q=0.8`).
public enum AcceptLanguage {
    public static func languages(_ header: String?) -> [String] {
        guard let header else { return [] }
        var weighted: [(String, Double, Int)] = []
        for (i, item) in header.split(separator: ",").prefix(32).enumerated() {
            let parts = item.split(separator: ";")
            guard let tag = parts.first?.trimmingSpaces, !tag.isEmpty, tag != "*",
                  tag.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }) else { continue }
            var q = 1.0
            for p in parts.dropFirst() {
                let kv = p.trimmingSpaces
                if kv.hasPrefix("q="), let v = Double(kv.dropFirst(2)) { q = v }
            }
            if q > 0 { weighted.append((String(tag), q, i)) }
        }
        return weighted.sorted { ($0.1, -$0.2) > ($1.1, -$1.2) }.map(\.0)
    }
}

extension StringProtocol {
    var trimmingSpaces: Substring {
        let s = self[...]
        let start = s.firstIndex { $0 != " " && $0 != "\t" } ?? s.endIndex
        let end = s.lastIndex { $0 != " " && $0 != "\t" }.map { s.index(after: $0) } ?? start
        return Substring(s[start..<Swift.max(start, end)])
    }
}
