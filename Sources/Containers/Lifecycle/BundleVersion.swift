/// A `CFBundleVersion` compared as Apple compares bundle versions:
/// period-separated non-negative integers, compared component by component
/// as numbers, a missing component counting as 0 (`1.10` is newer than
/// `1.9`, `1` is the same as `1.0`).
public struct BundleVersion: Comparable, Sendable, CustomStringConvertible {
    /// The integer components, as written.
    public let components: [UInt64]
    /// The text it was read from.
    public let text: String

    /// Reads `text`; `nil` unless it is one or more components of 1 to 18
    /// ASCII digits separated by single periods.
    public init?(_ text: String) {
        var parts: [UInt64] = []
        for piece in text.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false) {
            guard !piece.isEmpty, piece.count <= 18, piece.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
            parts.append(piece.reduce(0) { $0 * 10 + UInt64($1 - 0x30) })
        }
        guard !parts.isEmpty else { return nil }
        components = parts
        self.text = text
    }

    public var description: String { text }

    public static func < (a: BundleVersion, b: BundleVersion) -> Bool {
        for i in 0..<max(a.components.count, b.components.count) {
            let x = i < a.components.count ? a.components[i] : 0
            let y = i < b.components.count ? b.components[i] : 0
            if x != y { return x < y }
        }
        return false
    }

    /// Equal as versions (`1` and `1.0`), not as text.
    public static func == (a: BundleVersion, b: BundleVersion) -> Bool { !(a < b) && !(b < a) }
}

extension ContainerOperation {
    /// Versions only go up: refuses to replace `installed` (a `CFBundleVersion`,
    /// shown as `installedDisplay`) with `offered` when `offered` is lower, or
    /// when either is not a bundle version so that no order can be told,
    /// unless `allowDowngrade`.
    ///
    /// - Parameter what: what is offered, as the message names it
    ///   (`the bundle`, `the backup`).
    /// - Throws: ``ContainersError/downgrade(identifier:installed:offered:reason:)``.
    public func checkNotDowngrade(_ identifier: BundleIdentifier, installed: String, installedDisplay: String,
                           offered: String, offeredDisplay: String, what: String, allowDowngrade: Bool) throws(ContainersError) {
        if allowDowngrade || installed.utf8.elementsEqual(offered.utf8) { return }
        guard let old = BundleVersion(installed), let new = BundleVersion(offered) else {
            throw .downgrade(identifier: identifier.rawValue, installed: installedDisplay, offered: "\(what) \(offeredDisplay)",
                             reason: "AppHome cannot tell which is newer (a CFBundleVersion is period-separated integers)")
        }
        if new < old {
            throw .downgrade(identifier: identifier.rawValue, installed: installedDisplay, offered: "\(what) \(offeredDisplay)",
                             reason: "CFBundleVersion \(offered) is lower than \(installed)")
        }
    }
}

/// Something that names an app's version: a bundle, a registry entry, a
/// backup's manifest.
public protocol BundleVersioned {
    /// `CFBundleVersion`, the build.
    var version: String { get }
    /// `CFBundleShortVersionString`, the release, if the bundle has one.
    var shortVersion: String? { get }
}

extension BundleVersioned {
    /// The version as people read it: `1.0 (1)`, or the build alone.
    public var displayVersion: String {
        if let short = shortVersion { return "\(short) (\(version))" }
        return version
    }
}

extension AppBundle: BundleVersioned {}
extension RegistryEntry: BundleVersioned {}
