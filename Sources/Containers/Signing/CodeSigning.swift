#if canImport(Glibc)
import Glibc
#endif
import AppHomeSystem
import Preferences
import PropertyList

/// Signing a bundle (`apphome sign`) and verifying it (`apphome verify`,
/// and every install, update and restore).
public enum CodeSigning {
    /// Signs the bundle at `path` with `key`: writes (or replaces)
    /// `_CodeSignature/CodeResources` sealing every file and the
    /// entitlements `Info.plist` declares, placeholders expanded.
    ///
    /// - Returns: the verified signature.
    /// - Throws: ``ContainersError/invalidBundle(path:reason:)`` for a bundle
    ///   that does not load, ``ContainersError/entitlementRefused(identifier:claim:reason:)``
    ///   for a keychain group that is not the key's team's;
    ///   ``ContainersError/unsupportedFileType(path:)``,
    ///   ``ContainersError/system(_:)``. Nothing is written then.
    @discardableResult
    public static func sign(bundleAt path: String, key: SigningKey) throws(ContainersError) -> CodeSignature {
        let bundle = try AppBundle(path: path, checkSignature: false)
        let entitlements = bundle.declaredEntitlements.expanded(team: key.team)
        for group in entitlements.keychainAccessGroups {
            if let problem = Entitlements.keychainGroupProblem(group, team: key.team) {
                throw .entitlementRefused(identifier: bundle.identifier.rawValue, claim: group, reason: problem)
            }
        }
        if let store = entitlements.ubiquityKeyValueStore, let problem = Entitlements.ubiquityStoreProblem(store, team: key.team) {
            throw .entitlementRefused(identifier: bundle.identifier.rawValue, claim: store, reason: problem)
        }
        var resources = CodeResources(team: key.team, publicKey: key.publicKey, entitlements: entitlements,
                                      files: try BundleWalk.seal(bundle.path), signature: [])
        resources.signature = key.sign(resources.signedBytes)
        let directory = bundle.path + "/" + CodeResources.directoryName
        do {
            var st = stat()
            if lstat(directory, &st) == 0 {
                guard (st.st_mode & S_IFMT) == S_IFDIR else {
                    throw ContainersError.invalidBundle(path: bundle.path, reason: "\(CodeResources.directoryName) is not a directory")
                }
            } else {
                guard mkdir(directory, 0o755) == 0 else { throw SystemError("mkdir", path: directory, errno: errno) }
            }
            try FileSystem.writeAtomically(try resources.encoded(), to: directory + "/" + CodeResources.fileName)
            _ = chmod(directory + "/" + CodeResources.fileName, 0o644)
        } catch let error as ContainersError {
            throw error
        } catch let error as SystemError {
            throw .system(error)
        } catch {
            throw .signatureInvalid(path: bundle.path, reason: "\(error)")
        }
        return try verify(bundleAt: bundle.path, declared: bundle.declaredEntitlements)
    }

    /// Verifies the signature of the bundle at `path`, whose `Info.plist`
    /// declares `declared`.
    ///
    /// Checks in order, naming the first problem: the file is there and
    /// readable; the team is the public key's; the signature is the key's
    /// over the sealed fields; every file, link and directory is as sealed
    /// (none added, removed or changed); the entitlements `Info.plist`
    /// declares are the signed ones.
    ///
    /// - Throws: ``ContainersError/notSigned(path:)`` when there is no
    ///   signature; ``ContainersError/signatureInvalid(path:reason:)``.
    public static func verify(bundleAt path: String, declared: Entitlements) throws(ContainersError) -> CodeSignature {
        func fail(_ reason: String) -> ContainersError { .signatureInvalid(path: path, reason: reason) }
        let file = path + "/" + CodeResources.relativePath
        let bytes: [UInt8]?
        do { bytes = try FileSystem.readFileIfPresent(file) } catch { throw fail("cannot read \(CodeResources.relativePath): \(error.reason)") }
        guard let bytes else { throw .notSigned(path: path) }
        let resources = try CodeResources(decoding: bytes, fail: fail)
        guard TeamIdentifier(publicKey: resources.publicKey) == resources.team else {
            throw fail("the team identifier \(resources.team) is not the one of the public key in CodeResources")
        }
        guard Ed25519.verify(resources.signature, message: resources.signedBytes, publicKey: resources.publicKey) else {
            throw fail("the signature does not match: CodeResources was altered after signing")
        }
        let actual: [PlistKey: SealedEntry]
        do { actual = try BundleWalk.seal(path) } catch .unsupportedFileType(let p) {
            throw fail("\(p) is not a regular file, directory or symbolic link")
        } catch .invalidFileName(let p, let kind) {
            // `sign` refuses such a name, so no signature seals one: it was added.
            throw fail("\(kind) added: \(p) (a name that is not valid UTF-8, shown with its bytes escaped)")
        }
        // By exact scalars: a canonically equivalent name is another name.
        let all = Set(actual.keys).union(resources.files.keys).sorted()
        for key in all {
            let p = FileNames.escaped(key.string)
            switch (resources.files[key], actual[key]) {
            case (nil, let a?): throw fail("\(a.kindName) added: \(p)")
            case (let s?, nil): throw fail("\(s.kindName) removed: \(p)")
            case (let s?, let a?) where s != a:
                if s.kindName != a.kindName { throw fail("\(p) was a \(s.kindName) when signed and is now a \(a.kindName)") }
                throw fail("\(s.kindName) changed: \(p)")
            default: continue
            }
        }
        guard declared.expanded(team: resources.team) == resources.entitlements else {
            throw fail("the entitlements in Info.plist are not the signed ones")
        }
        return CodeSignature(team: resources.team, publicKey: resources.publicKey, entitlements: resources.entitlements)
    }
}

/// A verified signature: who signed the bundle and what it may claim.
public struct CodeSignature: Equatable, Sendable {
    /// The signer's team.
    public let team: TeamIdentifier
    /// The signer's Ed25519 public key.
    public let publicKey: [UInt8]
    /// The signed entitlements, placeholders expanded.
    public let entitlements: Entitlements
}
