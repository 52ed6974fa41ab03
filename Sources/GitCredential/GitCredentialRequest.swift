import Keychain

/// What git sends a credential helper on standard input (gitcredentials(7)):
/// `key=value` lines up to a blank line or the end.
///
/// `host` may carry a port (`example.com:8443`); `url` is split into the
/// other fields when they are not given. Unknown keys are ignored, as git
/// asks helpers to do. The password is kept in secure memory.
public struct GitCredentialRequest {
    public var `protocol`: String?
    public var host: String?
    public var port: Int?
    public var path: String?
    public var username: String?
    public var password: SecureBytes?

    /// Why a request cannot be used.
    public enum Problem: Error, Equatable, CustomStringConvertible {
        case malformedLine(String)
        case badPort(String)
        case missing(String)
        case unsupportedProtocol(String)

        public var description: String {
            switch self {
            case .malformedLine(let key): return "a line of the request has no '=' (it starts '\(key)')"
            case .badPort(let text): return "the port '\(text)' is not a number from 1 to 65535"
            case .missing(let key): return "the request has no \(key)"
            case .unsupportedProtocol(let p): return "the protocol '\(p)' has no four-character keychain protocol code"
            }
        }
    }

    /// Parses `bytes` (the helper's standard input).
    ///
    /// - Throws: ``Problem``.
    public init(parsing bytes: [UInt8]) throws(Problem) {
        var lines = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)[...]
        var url: String?
        while let raw = lines.popFirst() {
            var line = raw
            if line.last == UInt8(ascii: "\r") { line = line.dropLast() }
            if line.isEmpty { break }
            guard let eq = line.firstIndex(of: UInt8(ascii: "=")) else {
                throw .malformedLine(String(decoding: line.prefix(20), as: UTF8.self))
            }
            let key = String(decoding: line[line.startIndex..<eq], as: UTF8.self)
            let valueBytes = line[(eq + 1)...]
            switch key {
            case "protocol": self.protocol = String(decoding: valueBytes, as: UTF8.self)
            case "host": try setHost(String(decoding: valueBytes, as: UTF8.self))
            case "path": path = String(decoding: valueBytes, as: UTF8.self)
            case "username": username = String(decoding: valueBytes, as: UTF8.self)
            case "password": password = SecureBytes(Array(valueBytes))
            case "url": url = String(decoding: valueBytes, as: UTF8.self)
            default: break
            }
        }
        if let url, let schemeEnd = Self.schemeEnd(url) {
            if self.protocol == nil { self.protocol = String(url[..<schemeEnd]) }
            var rest = url[url.index(schemeEnd, offsetBy: 3)...]
            var pathPart: Substring?
            if let slash = rest.firstIndex(of: "/") { pathPart = rest[rest.index(after: slash)...]; rest = rest[..<slash] }
            if let at = rest.lastIndex(of: "@") {
                if username == nil { username = String(rest[..<at].split(separator: ":", maxSplits: 1).first ?? "") }
                rest = rest[rest.index(after: at)...]
            }
            if host == nil { try setHost(String(rest)) }
            if path == nil, let pathPart, !pathPart.isEmpty { path = String(pathPart) }
        }
        if let p = self.protocol, Self.keychainProtocol(p).utf8.count > 4 { throw .unsupportedProtocol(p) }
    }

    /// Where `://` starts in `url`.
    private static func schemeEnd(_ url: String) -> String.Index? {
        var i = url.startIndex
        while i < url.endIndex {
            if url[i...].hasPrefix("://") { return i }
            i = url.index(after: i)
        }
        return nil
    }

    private mutating func setHost(_ text: String) throws(Problem) {
        // An IPv6 literal is bracketed; only a colon after the brackets starts a port.
        let afterBrackets = text.lastIndex(of: "]") ?? text.startIndex
        if let colon = text[afterBrackets...].lastIndex(of: ":") {
            let portText = String(text[text.index(after: colon)...])
            guard let n = Int(portText), (1...65535).contains(n) else { throw .badPort(portText) }
            host = String(text[..<colon])
            port = n
        } else {
            host = text
            port = nil
        }
    }

    /// The keychain's four-character protocol code for git's protocol name:
    /// `https` is `htps` as in `security -r htps`; a name of four characters
    /// or fewer is padded with spaces (`ssh` is `ssh `).
    public static func keychainProtocol(_ name: String) -> String {
        switch name {
        case "https": return "htps"
        default: return name + String(repeating: " ", count: max(0, 4 - name.utf8.count))
        }
    }
}
