import AppHomeSystem
import Keychain
import PropertyList

/// What git sends a credential helper on standard input (gitcredentials(7)):
/// `key=value` lines up to a blank line or the end.
///
/// `host` may carry a port (`example.com:8443`); `url` is split into the
/// other fields when they are not given. Unknown keys are ignored, as git
/// asks helpers to do. The password is kept in secure memory.
///
/// Read strictly, never repaired: a NUL anywhere, a carriage return inside
/// a value, or a value this helper uses (every one but the password, which
/// is bytes) that is not valid UTF-8 is refused, naming the key, so that two
/// different byte strings can never become one host or one account.
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
        case notUTF8(key: String, value: String)
        case controlCharacter(key: String)

        public var description: String {
            switch self {
            case .malformedLine(let key): return "a line of the request has no '=' (it starts '\(key)')"
            case .badPort(let text): return "the port '\(text)' is not a number from 1 to 65535"
            case .missing(let key): return "the request has no \(key)"
            case .unsupportedProtocol(let p): return "the protocol '\(p)' has no four-character keychain protocol code"
            case .notUTF8(let key, let value):
                return "the \(key) \"\(value)\" of the request is not valid UTF-8 (shown with its bytes escaped); it was refused, not repaired"
            case .controlCharacter(let key):
                return "the \(key) of the request holds a NUL or a carriage return, which git's credential protocol cannot carry; it was refused"
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
                throw .malformedLine(FileNames.escaped(line.prefix(20)))
            }
            let keyBytes = line[line.startIndex..<eq]
            let valueBytes = line[(eq + 1)...]
            // Unknown keys are ignored, whatever they hold; a NUL is refused anywhere.
            guard let key = FileNames.text(keyBytes) else {
                if line.contains(0) { throw .controlCharacter(key: FileNames.escaped(keyBytes)) }
                continue
            }
            guard Self.usedKeys.contains(PlistKey(key)) else {
                if line.contains(0) { throw .controlCharacter(key: FileNames.escaped(key)) }
                continue
            }
            if PlistKey(key) == "password" {
                if valueBytes.contains(0) { throw .controlCharacter(key: key) }
                password = SecureBytes(Array(valueBytes))
                continue
            }
            guard let value = FileNames.text(valueBytes) else { throw .notUTF8(key: key, value: FileNames.escaped(valueBytes)) }
            if valueBytes.contains(0) || valueBytes.contains(0x0D) { throw .controlCharacter(key: key) }
            switch PlistKey(key) {
            case "protocol": self.protocol = value
            case "host": try setHost(value)
            case "path": path = value
            case "username": username = value
            default: url = value
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

    /// The keys this helper reads; every other is ignored.
    static let usedKeys: Set<PlistKey> = ["protocol", "host", "path", "username", "password", "url"]

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
