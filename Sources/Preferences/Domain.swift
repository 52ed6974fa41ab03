import AppHomeSystem
import PropertyList
/// A preference domain, validated once at the edge so that no name can
/// lead outside the root.
public enum Domain: Hashable, Sendable, CustomStringConvertible {
    /// A named domain such as `com.example.app`.
    case named(String)
    /// `NSGlobalDomain`, stored as `.GlobalPreferences.plist`.
    case global
    /// A plist file given by absolute path (stored with a `.plist` suffix).
    case file(path: String)

    /// Two domains are one when their names (or paths) have the same bytes:
    /// "é" and "e" + U+0301 name two files, so two domains (Swift's `String`
    /// would make them one).
    /// (Compared as ``PlistKey``s, with `memcmp`: a walk of two UTF-8 views
    /// took a write's look-ups in prefsd about 3,500 instructions.)
    public static func == (a: Domain, b: Domain) -> Bool {
        switch (a, b) {
        case (.global, .global): return true
        case (.named(let x), .named(let y)): return PlistKey(x) == PlistKey(y)
        case (.file(let x), .file(let y)): return PlistKey(x) == PlistKey(y)
        default: return false
        }
    }

    public func hash(into hasher: inout Hasher) {
        switch self {
        case .global: hasher.combine(0 as UInt8)
        case .named(let n): hasher.combine(1 as UInt8); hasher.combine(PlistKey(n))
        case .file(let p): hasher.combine(2 as UInt8); hasher.combine(PlistKey(p))
        }
    }

    /// The name macOS uses for the global domain in `read` output.
    public static let globalDisplayName = "Apple Global Domain"

    /// Parses a domain argument as `defaults` takes it: `-g`,
    /// `-globalDomain`, `NSGlobalDomain` or `Apple Global Domain` for the
    /// global domain, an absolute path for a file, otherwise a name.
    ///
    /// - Throws: ``PreferencesError/invalidDomainName(_:reason:)`` for an
    ///   empty name, `.` or `..`, a `/` inside a name, a NUL, a name too long
    ///   for a file name, or a path with `..` components.
    public init(argument: String) throws(PreferencesError) {
        switch argument {
        case "-g", "-globalDomain", "NSGlobalDomain", Domain.globalDisplayName:
            self = .global
            return
        default: break
        }
        if argument.utf8.contains(0) { throw .invalidDomainName(argument, reason: "it contains a NUL character") }
        if argument.hasPrefix("/") {
            let components = argument.split(separator: "/", omittingEmptySubsequences: true)
            if components.contains(where: { $0 == ".." || $0 == "." }) {
                throw .invalidDomainName(argument, reason: "a path domain must not contain '.' or '..' components")
            }
            guard !components.isEmpty else { throw .invalidDomainName(argument, reason: "a path domain must name a file") }
            self = .file(path: argument.hasSuffix(".plist") ? argument : argument + ".plist")
            return
        }
        try Domain.validateName(argument)
        self = .named(argument)
    }

    /// Checks that `name` is safe to use as one file-name component.
    ///
    /// The checks look at the UTF-8 bytes the file system will see, not at
    /// characters: a combining mark after `/` or `.` makes one `Character`
    /// of the pair, but the byte is still there.
    static func validateName(_ name: String) throws(PreferencesError) {
        let bytes = name.utf8
        if bytes.isEmpty { throw .invalidDomainName(name, reason: "a domain name must not be empty") }
        var previous: UInt8 = 0
        var dotDot = false, slash = false, nul = false, control = false
        for b in bytes {
            if b == UInt8(ascii: ".") && previous == UInt8(ascii: ".") { dotDot = true }
            if b == UInt8(ascii: "/") { slash = true }
            if b == 0 { nul = true }
            if b < 0x20 || b == 0x7F { control = true }
            previous = b
        }
        // In this order, so that a name with several faults names the same one as before.
        if dotDot || (bytes.count == 1 && previous == UInt8(ascii: ".")) { throw .invalidDomainName(name, reason: "a domain name must not contain '..'") }
        if slash {
            throw .invalidDomainName(name, reason: "a domain name must not contain '/' (give an absolute path for a file)")
        }
        if nul { throw .invalidDomainName(name, reason: "it contains a NUL character") }
        if bytes.count > 200 { throw .invalidDomainName(name, reason: "a domain name must be at most 200 bytes") }
        if control { throw .invalidDomainName(name, reason: "a domain name must not contain control characters") }
    }

    /// The name as `defaults` shows it in messages (`Apple Global Domain`
    /// for the global domain, the path as typed for a file).
    public var description: String {
        switch self {
        case .named(let n): return n
        case .global: return Domain.globalDisplayName
        case .file(let p): return p.hasSuffix(".plist") ? String(p.dropLast(6)) : p
        }
    }
}

/// Which copy of a domain: the user's, or a per-host (ByHost) copy.
public enum HostScope: Hashable, Sendable {
    /// `~/Library/Preferences/<domain>.plist`.
    case anyHost
    /// `-currentHost`: the ByHost copy for this machine's host identifier.
    case currentHost
    /// `-host <name>`: the ByHost copy for the named host.
    case named(String)
}
