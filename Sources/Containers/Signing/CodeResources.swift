import AppHomeSystem
import PropertyList

/// One entry of a signed bundle's file list.
public enum SealedEntry: Equatable, Sendable {
    /// A regular file and the BLAKE2b-256 digest of its bytes.
    case file(ContentHash)
    /// A symbolic link and the BLAKE2b-256 digest of its target string
    /// (the link is never followed).
    case symlink(ContentHash)
    /// A directory.
    case directory

    var kindName: String {
        switch self {
        case .file: return "file"
        case .symlink: return "symlink"
        case .directory: return "directory"
        }
    }

    var kindCode: UInt8 {
        switch self {
        case .file: return 1
        case .symlink: return 2
        case .directory: return 3
        }
    }

    var hash: ContentHash? {
        switch self {
        case .file(let h), .symlink(let h): return h
        case .directory: return nil
        }
    }
}

/// `Name.app/_CodeSignature/CodeResources`: what a signature covers and
/// the signature itself. The format is in `Schemas/code-signature.md`.
///
/// The signature is Ed25519 over ``signedBytes``, a byte layout built
/// from the fields alone (never from the plist's bytes), so a verifier
/// rebuilds exactly what the signer signed.
public struct CodeResources: Equatable, Sendable {
    /// The newest format version this code reads. It writes version 1, or
    /// version 2 when the entitlements name a key-value store (an older
    /// AppHome then refuses the bundle clearly instead of dropping the claim).
    public static let formatVersion = 2

    /// The version written for these entitlements.
    var writtenVersion: Int { entitlements.ubiquityKeyValueStore == nil ? 1 : 2 }
    /// The directory inside a bundle, and the file in it.
    public static let directoryName = "_CodeSignature"
    public static let fileName = "CodeResources"
    /// Where the file lives, relative to the bundle.
    public static let relativePath = directoryName + "/" + fileName
    /// The algorithm names written in the file.
    public static let signatureAlgorithm = "Ed25519"

    public var team: TeamIdentifier
    public var publicKey: [UInt8]
    public var entitlements: Entitlements
    /// Relative path (no leading `/`) → entry, for every file, link and
    /// directory of the bundle except `_CodeSignature/` and its file. Keyed
    /// by exact scalars: "é" and "e" + U+0301 are two paths.
    public var files: [PlistKey: SealedEntry]
    public var signature: [UInt8]

    /// The paths in byte order of their UTF-8, the order everything is signed in.
    var sortedPaths: [PlistKey] { files.keys.sorted() }

    /// The bytes the signature covers: a magic string, then each field as
    /// a big-endian `UInt32` length and its bytes (see the schema).
    public var signedBytes: [UInt8] {
        var out = Array("AppHome CodeResources\u{0}".utf8)
        func u32(_ n: Int) { withUnsafeBytes(of: UInt32(n).bigEndian) { out.append(contentsOf: $0) } }
        func field(_ bytes: [UInt8]) { u32(bytes.count); out.append(contentsOf: bytes) }
        u32(writtenVersion)
        field(Array(team.rawValue.utf8))
        field(publicKey)
        u32(entitlements.keychainAccessGroups.count)
        for g in entitlements.keychainAccessGroups { field(Array(g.utf8)) }
        u32(entitlements.applicationGroups.count)
        for g in entitlements.applicationGroups { field(Array(g.rawValue.utf8)) }
        if let store = entitlements.ubiquityKeyValueStore { field(Array(store.utf8)) }
        u32(files.count)
        for path in sortedPaths {
            let entry = files[path]!
            field(Array(path.string.utf8))
            out.append(entry.kindCode)
            field(entry.hash?.bytes ?? [])
        }
        return out
    }

    /// The file's bytes: a binary property list.
    public func encoded() throws(ContainersError) -> [UInt8] {
        var table: [PlistKey: PlistValue] = [:]
        for (path, entry) in files {
            var d: [PlistKey: PlistValue] = ["Kind": .string(entry.kindName)]
            if let h = entry.hash { d["Hash"] = .data(h.bytes) }
            table[path] = .dictionary(d)
        }
        var ent: [PlistKey: PlistValue] = [
            PlistKey(Entitlements.keychainAccessGroupsKey): .array(entitlements.keychainAccessGroups.map { .string($0) }),
            PlistKey(AppGroupIdentifier.infoPlistKey): .array(entitlements.applicationGroups.map { .string($0.rawValue) }),
        ]
        if let store = entitlements.ubiquityKeyValueStore { ent[PlistKey(Entitlements.ubiquityKeyValueStoreKey)] = .string(store) }
        let top: PlistValue = .dictionary([
            "FormatVersion": .integer(Int128(writtenVersion)),
            "SignatureAlgorithm": .string(Self.signatureAlgorithm),
            "HashAlgorithm": .string(ContentHash.algorithm),
            "TeamIdentifier": .string(team.rawValue),
            "PublicKey": .data(publicKey),
            "Entitlements": .dictionary(ent),
            "Files": .dictionary(table),
            "Signature": .data(signature),
        ])
        do { return try PlistCodec.encode(top, format: .binary) } catch {
            throw .signatureInvalid(path: "", reason: "cannot encode CodeResources: \(error)")
        }
    }

    /// Reads the file's bytes, checking every field's type and name.
    ///
    /// - Parameter fail: makes the error for a reason.
    public init(decoding bytes: [UInt8], fail: (String) -> ContainersError) throws(ContainersError) {
        guard let top = (try? PlistCodec.decode(bytes))?.dictionaryValue else { throw fail("CodeResources is not a property list dictionary") }
        guard case .integer(let version)? = top["FormatVersion"], version >= 1 else { throw fail("CodeResources has no valid FormatVersion") }
        if version > Int128(Self.formatVersion) {
            throw fail("CodeResources has format version \(version), but this AppHome reads only up to version \(Self.formatVersion); use a newer apphome")
        }
        guard case .string(Self.signatureAlgorithm)? = top["SignatureAlgorithm"], case .string(ContentHash.algorithm)? = top["HashAlgorithm"] else {
            throw fail("CodeResources names an algorithm other than \(Self.signatureAlgorithm) and \(ContentHash.algorithm)")
        }
        guard case .string(let teamText)? = top["TeamIdentifier"], let team = TeamIdentifier(teamText) else {
            throw fail("CodeResources has no valid TeamIdentifier")
        }
        guard case .data(let publicKey)? = top["PublicKey"], publicKey.count == Ed25519.publicKeyBytes else {
            throw fail("CodeResources has no valid PublicKey")
        }
        guard case .data(let signature)? = top["Signature"], signature.count == Ed25519.signatureBytes else {
            throw fail("CodeResources has no valid Signature")
        }
        guard case .dictionary(let ent)? = top["Entitlements"] else { throw fail("CodeResources has no Entitlements") }
        func strings(_ key: String) throws(ContainersError) -> [String] {
            guard case .array(let items)? = ent[key] else { throw fail("Entitlements in CodeResources has no \(key) array") }
            var out: [String] = []
            for item in items {
                guard case .string(let s) = item else { throw fail("\(key) in CodeResources holds a \(item.typeName)") }
                out.append(s)
            }
            return out
        }
        let keychain = try strings(Entitlements.keychainAccessGroupsKey)
        var appGroups: [AppGroupIdentifier] = []
        for text in try strings(AppGroupIdentifier.infoPlistKey) {
            guard let g = try? AppGroupIdentifier(text) else { throw fail("'\(text)' in CodeResources is not a valid app group identifier") }
            appGroups.append(g)
        }
        var store: String? = nil
        switch ent[PlistKey(Entitlements.ubiquityKeyValueStoreKey)] {
        case nil: break
        case .string(let s)? where version >= 2 && !s.isEmpty: store = s
        default: throw fail("\(Entitlements.ubiquityKeyValueStoreKey) in CodeResources is not a non-empty string of a version 2 file")
        }
        if version >= 2 && store == nil { throw fail("CodeResources of version 2 names no \(Entitlements.ubiquityKeyValueStoreKey)") }
        guard case .dictionary(let table)? = top["Files"] else { throw fail("CodeResources has no Files") }
        var files: [PlistKey: SealedEntry] = [:]
        for (key, value) in table {
            let path = FileNames.escaped(key.string)
            guard BundleWalk.isValidRelativePath(key.string) else { throw fail("CodeResources lists an invalid path '\(path)'") }
            guard case .dictionary(let d) = value, case .string(let kind)? = d["Kind"] else { throw fail("the entry '\(path)' in CodeResources has no Kind") }
            var hash: ContentHash? = nil
            if case .data(let h)? = d["Hash"] { hash = ContentHash(bytes: h) }
            switch (kind, hash) {
            case ("file", let h?): files[key] = .file(h)
            case ("symlink", let h?): files[key] = .symlink(h)
            case ("directory", nil) where d["Hash"] == nil: files[key] = .directory
            default: throw fail("the entry '\(path)' in CodeResources is malformed")
            }
        }
        self.team = team
        self.publicKey = publicKey
        self.entitlements = Entitlements(keychainAccessGroups: keychain, applicationGroups: appGroups, ubiquityKeyValueStore: store)
        self.files = files
        self.signature = signature
        // Entitlements' initializer drops duplicates: a file with them was not made by `sign`.
        if self.entitlements.keychainAccessGroups.count != keychain.count || self.entitlements.applicationGroups != appGroups {
            throw fail("the entitlements in CodeResources are not in canonical order or hold duplicates")
        }
    }

    init(team: TeamIdentifier, publicKey: [UInt8], entitlements: Entitlements, files: [PlistKey: SealedEntry], signature: [UInt8]) {
        self.team = team
        self.publicKey = publicKey
        self.entitlements = entitlements
        self.files = files
        self.signature = signature
    }
}
