import AppHomeSystem
import CommandSupport
import Containers

extension AppHomeCommand {
    /// The verbs that work on files, not on a root: `keygen`, `sign`, `verify`.
    static let signingVerbs: Set<String> = ["keygen", "sign", "verify"]

    /// Runs a verb of ``signingVerbs``.
    ///
    /// - Returns: the exit status (0; failures throw).
    static func performSigning(_ verb: String, _ args: [String], console: Console) throws -> Int32 {
        switch verb {
        case "keygen":
            let file = try plainOperand(args, "key file")
            try requireDirectory(of: file)
            let key = SigningKey.generate()
            try key.write(to: file)
            console.out("team identifier: \(key.team)\nsecret key: \(file) (0600; keep it private)\npublic key: \(file).pub\n")
        case "sign":
            var bundlePath: String?
            var keyPath: String?
            var rest = args[...]
            while let arg = rest.popFirst() {
                if arg == "--key" {
                    guard let value = rest.popFirst(), !value.isEmpty else { throw CommandFailure.usage("option --key needs a key file") }
                    keyPath = value
                } else if arg.hasPrefix("--key=") {
                    keyPath = String(arg.dropFirst(6))
                    if keyPath!.isEmpty { throw CommandFailure.usage("option --key needs a key file") }
                } else if arg.hasPrefix("-") {
                    throw CommandFailure.usage("unknown option '\(arg)'")
                } else if bundlePath == nil {
                    bundlePath = arg
                } else {
                    throw CommandFailure.usage("unexpected argument '\(arg)'")
                }
            }
            guard let bundlePath else { throw CommandFailure.usage("missing bundle path") }
            guard let keyPath else { throw CommandFailure.usage("missing --key KEYFILE") }
            let key = try SigningKey.read(from: keyPath)
            let signature = try CodeSigning.sign(bundleAt: bundlePath, key: key)
            console.out("signed \(bundlePath) as team \(signature.team)\(describe(signature.entitlements))\n")
        case "verify":
            let path = try plainOperand(args, "bundle path")
            let bundle = try AppBundle(path: path, checkSignature: false)
            let signature = try CodeSigning.verify(bundleAt: bundle.path, declared: bundle.declaredEntitlements)
            console.out("\(bundle.path): valid signature, team \(signature.team)\(describe(signature.entitlements))\n")
        default:
            throw CommandFailure.usage("unknown verb '\(verb)'")
        }
        return 0
    }

    /// Refuses a key file whose directory is missing (or is no directory),
    /// naming the directory: a secret key's directory is the user's to make
    /// (and to make private), never made on the side.
    static func requireDirectory(of file: String) throws(CommandFailure) {
        guard file.contains("/") else { return }
        let directory = FileSystem.parentDirectory(file)
        if FileSystem.isDirectory(directory) { return }
        if FileSystem.exists(directory) {
            throw .failure("cannot make \(file): \(directory) is not a directory; no key was made")
        }
        throw .failure("cannot make \(file): the directory \(directory) does not exist; "
                       + "make it first (mkdir -m 700 \(directory)); no key was made")
    }

    /// The one operand of a verb that takes no options.
    static func plainOperand(_ args: [String], _ name: String) throws(CommandFailure) -> String {
        if let option = args.first(where: { $0.hasPrefix("-") && $0 != "-" }) { throw .usage("unknown option '\(option)'") }
        guard let first = args.first else { throw .usage("missing \(name)") }
        if args.count > 1 { throw .usage("unexpected argument '\(args[1])'") }
        return first
    }

    static func describe(_ e: Entitlements) -> String {
        var parts: [String] = []
        if !e.keychainAccessGroups.isEmpty { parts.append("keychain access groups " + e.keychainAccessGroups.joined(separator: ", ")) }
        if let store = e.ubiquityKeyValueStore { parts.append("key-value store " + store) }
        if !e.applicationGroups.isEmpty { parts.append("app groups " + e.applicationGroups.map(\.rawValue).joined(separator: ", ")) }
        return parts.isEmpty ? "" : "; " + parts.joined(separator: "; ")
    }
}
