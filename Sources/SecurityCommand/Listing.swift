import AppHomeSystem
import Keychain
import PropertyList

/// The macOS-style listing of an item (`find-*-password` without `-w`,
/// `dump-keychain`).
enum Listing {
    /// - Parameter accessible: also print the item's class (`dump-keychain`),
    ///   as `accessible: "afterFirstUnlock"` after the `class:` line.
    static func item(_ a: ItemAttributes, directory: String, accessible: Bool = false) -> String {
        var lines: [String] = []
        let group = a.accessGroup?.rawValue ?? ""
        lines.append("keychain: \"\(directory)/\(group).keychain\"")
        lines.append("version: 512")
        lines.append("class: \"\(a.itemClass.rawValue)\"")
        if accessible { lines.append("accessible: \"\(a.accessibility.name)\"") }
        lines.append("attributes:")
        func blob(_ code: String, _ value: String?) { lines.append("    \(code)<blob>=" + (value.map(quoted) ?? "<NULL>")) }
        blob("0x00000007 ", a.label)
        blob("\"acct\"", a.account)
        blob("\"agrp\"", group)
        if a.itemClass == .internetPassword { blob("\"atyp\"", a.authenticationType) }
        lines.append("    \"cdat\"<timedate>=" + timedate(a.creationDate))
        blob("\"desc\"", a.description)
        if a.itemClass == .genericPassword { blob("\"gena\"", a.generic.map { String(decoding: $0, as: UTF8.self) }) }
        blob("\"icmt\"", a.comment)
        lines.append("    \"mdat\"<timedate>=" + timedate(a.modificationDate))
        switch a.itemClass {
        case .genericPassword:
            blob("\"svce\"", a.service)
        case .internetPassword:
            blob("\"path\"", a.path)
            lines.append("    \"port\"<uint32>=" + hex32(a.port))
            lines.append("    \"ptcl\"<uint32>=" + (a.protocol.isEmpty ? "0x00000000 " : quoted(a.protocol)))
            blob("\"sdmn\"", a.securityDomain)
            blob("\"srvr\"", a.server)
        }
        // What a Secret Service client gave the item (docs/secret-service.md).
        if let map = a.secretServiceAttributes {
            lines.append("secret service attributes:")
            for (k, v) in map.sorted(by: { $0.key < $1.key }) { lines.append("    \(quoted(k.string))=\(quoted(v))") }
            if let t = a.contentType { lines.append("    content type: \(quoted(t))") }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    static func quoted(_ text: String) -> String {
        var out = "\""
        for ch in text.unicodeScalars {
            switch ch {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            default:
                // Three octal digits, as macOS prints them, so a digit after the escape stays a digit.
                if ch.value < 0x20 || ch.value == 0x7F { out += "\\" + octal3(ch.value) } else { out.unicodeScalars.append(ch) }
            }
        }
        return out + "\""
    }

    /// A secret as `-g` and `dump-keychain -d` print it: quoted when it is
    /// valid UTF-8, else `0x` and the lowercase hex of its bytes; never
    /// altered (no replacement characters).
    static func quoted(_ data: SecureBytes) -> String {
        SecretText.withText(data) { text in text.map(quoted) } ?? "0x" + SecretText.hex(data)
    }

    /// `n` (below 0o400) as three octal digits.
    static func octal3(_ n: UInt32) -> String {
        let digits = String(n, radix: 8)
        return String(repeating: "0", count: max(0, 3 - digits.count)) + digits
    }

    static func hex32(_ n: Int) -> String {
        "0x" + Hex.digits(UInt32(truncatingIfNeeded: n), width: 8, uppercase: true) + " "
    }

    /// `0x…  "YYYYMMDDhhmmssZ\000"` as macOS prints a timedate.
    static func timedate(_ date: PlistDate) -> String {
        guard let c = CivilTime(date) else { return "<NULL>" }
        func pad(_ n: Int, _ w: Int) -> String { let s = String(n); return String(repeating: "0", count: max(0, w - s.count)) + s }
        let text = pad(c.year, 4) + pad(c.month, 2) + pad(c.day, 2) + pad(c.hour, 2) + pad(c.minute, 2) + pad(c.second, 2) + "Z"
        let hex = Hex.encode(Array(text.utf8) + [0], uppercase: true)
        return "0x\(hex)  \"\(text)\\000\""
    }
}
