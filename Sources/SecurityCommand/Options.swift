import CommandSupport

/// One verb's command line, scanned: single-letter options with values,
/// flags, `--app`, and a keychain after the options.
struct VerbOptions {
    var values: [Character: String] = [:]
    var flags: Set<Character> = []
    /// `-w <secret>` on an add verb (visible in argv).
    var secretArgument: String?
    /// `-w` as the last argument of an add verb: prompt on a terminal (a
    /// piped standard input is read, as without `-w`).
    var promptForSecret = false
    var app: String?
    /// `--root` and `--access-group` given after the verb (as before it).
    var root: String?
    var accessGroup: String?
    /// `--accessibility CLASS` (add verbs): the item's class by Apple's name.
    var accessibility: String?
    /// `-T PATH` (add verbs, repeatable) and `-A`: macOS's per-application
    /// access list. Accepted so that macOS scripts run; the app's access
    /// groups decide access here (``SecurityCommand/accessListNote``).
    var trustedApplications: [String] = []
    /// The keychain named after the options (`login.keychain`, a path), if any.
    var keychain: String?

    /// Scans `args`.
    ///
    /// - Parameters:
    ///   - valueOptions: letters that take a value.
    ///   - flagOptions: letters that do not.
    ///   - addSecret: whether `-w` takes an optional value, and `-T`/`-A`
    ///     are accepted (the add verbs).
    static func scan(_ args: [String], valueOptions: Set<Character>, flagOptions: Set<Character>,
                     addSecret: Bool) throws(SecurityFailure) -> VerbOptions {
        var specs: [ArgumentScanner.Option] = [.init("--app", .required("a bundle identifier"), empty: "a bundle identifier"),
                                               .init("--root", .required("a value"), empty: "a value"),
                                               .init("--access-group", .required("a value"), empty: "a value")]
        for letter in valueOptions where !(letter == "w" && addSecret) { specs.append(.init("-\(letter)", .required("a value"))) }
        for letter in flagOptions where !(letter == "w" && addSecret) { specs.append(.init("-\(letter)")) }
        if addSecret {
            specs.append(.init("-w", .optional))
            specs.append(.init("--accessibility", .required("a class"), empty: "a class"))
            specs.append(.init("-T", .required("an application path")))
            specs.append(.init("-A"))
        }
        var scanner = ArgumentScanner(args)
        var o = VerbOptions()
        let matches: [ArgumentScanner.Match]
        do {
            matches = try scanner.leadingOptions(specs, unknown: { .usage("unknown option '\($0)'") })
        } catch {
            throw .securityUsage(error.message)
        }
        // As on macOS, one keychain may follow the options.
        if let keychain = scanner.next() {
            if let extra = scanner.next() { throw .securityUsage("unexpected argument '\(extra)' (a keychain is the last argument)") }
            o.keychain = keychain
        }
        for m in matches {
            switch m.name {
            case "--app": o.app = m.value; continue
            case "--root": o.root = m.value; continue
            case "--access-group": o.accessGroup = m.value; continue
            case "--accessibility": o.accessibility = m.value; continue
            case "-T": o.trustedApplications.append(m.value ?? ""); continue
            case "-A": o.trustedApplications.append("*"); continue
            default: break
            }
            let letter = m.name.last!
            if letter == "w" && addSecret {
                if let secret = m.value { o.secretArgument = secret } else { o.promptForSecret = true }
            } else if let value = m.value {
                o.values[letter] = value
            } else {
                o.flags.insert(letter)
            }
        }
        return o
    }
}
