#if canImport(Glibc)
import Glibc
#endif
import Keychain

/// The service manager's side of a credential connection: its abstract
/// address `\0<random>/unit/<unit>/<id>` names the unit and the
/// credential (systemd's exec-credential.c; systemd.exec(5)).
enum PeerAddress {
    /// The unit and the id the peer of `fd` is bound to, or why the
    /// address is not one the service manager makes.
    static func parse(_ fd: Int32) -> Result<(SystemdUnitName, CredentialID), PeerRefusal> {
        var address = sockaddr_un()
        var length = socklen_t(MemoryLayout<sockaddr_un>.size)
        let rc = withUnsafeMutablePointer(to: &address) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { getpeername(fd, $0, &length) }
        }
        guard rc == 0 else { return .failure(PeerRefusal("getpeername failed: \(String(cString: strerror(errno)))")) }
        let pathOffset = MemoryLayout<sa_family_t>.size
        let count = Int(length) - pathOffset
        guard count > 0 else { return .failure(PeerRefusal("the peer's address is unnamed, not the service manager's abstract address")) }
        let bytes = withUnsafeBytes(of: &address.sun_path) { Array($0.prefix(count)) }
        guard bytes[0] == 0 else {
            return .failure(PeerRefusal("the peer is bound to a file path, not the service manager's abstract address"))
        }
        return parse(name: Array(bytes.dropFirst()))
    }

    /// The unit and the id in an abstract name (without its leading NUL).
    static func parse(name: [UInt8]) -> Result<(SystemdUnitName, CredentialID), PeerRefusal> {
        // Shown only in a refusal: most peers are the service manager, named well.
        func shown() -> String { printable(String(decoding: name, as: UTF8.self)) }
        guard !name.contains(0), String(validating: name, as: UTF8.self) != nil else {
            return .failure(PeerRefusal("the peer's abstract address is not text"))
        }
        let slash = UInt8(ascii: "/")
        var cuts: [Int] = []
        for (i, b) in name.enumerated() where b == slash { cuts.append(i) }
        guard cuts.count == 3, cuts[0] > 0, name[(cuts[0] + 1)..<cuts[1]].elementsEqual("unit".utf8) else {
            return .failure(PeerRefusal("the peer's abstract address '\(shown())' is not <random>/unit/<unit>/<credential id> (a unit or id with '/'?)"))
        }
        let unit: SystemdUnitName, id: CredentialID
        do throws(KeychainError) {
            unit = try SystemdUnitName(String(decoding: name[(cuts[1] + 1)..<cuts[2]], as: UTF8.self))
            id = try CredentialID(String(decoding: name[(cuts[2] + 1)...], as: UTF8.self))
        } catch {
            let why = if case .invalidParameter(let w) = error { w } else { error.description }
            return .failure(PeerRefusal("the peer's abstract address '\(shown())': \(why)"))
        }
        return .success((unit, id))
    }

    /// At most 120 characters of `text`, control characters escaped.
    static func printable(_ text: String) -> String {
        var out = ""
        for scalar in text.unicodeScalars.prefix(120) {
            out += scalar.value < 0x20 || scalar.value == 0x7F ? "\\x" + String(scalar.value, radix: 16) : String(scalar)
        }
        return text.unicodeScalars.count > 120 ? out + "…" : out
    }
}

/// Why a peer's address is refused (logged as is).
struct PeerRefusal: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
