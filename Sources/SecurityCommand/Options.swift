import CommandSupport

/// One verb's command line, scanned: single-letter options with values,
/// flags, and `--app`.
struct VerbOptions {
    var values: [Character: String] = [:]
    var flags: Set<Character> = []
    /// `-w <secret>` on an add verb (visible in argv).
    var secretArgument: String?
    /// `-w` as the last argument of an add verb: prompt on a terminal (a
    /// piped standard input is read, as without `-w`).
    var promptForSecret = false
    var app: String?
    /// `--accessibility CLASS` (add verbs): the item's class by Apple's name.
    var accessibility: String?

    /// Scans `args`.
    ///
    /// - Parameters:
    ///   - valueOptions: letters that take a value.
    ///   - flagOptions: letters that do not.
    ///   - addSecret: whether `-w` takes an optional value (the add verbs).
    ///   - usage: the verb's usage, for errors.
    static func scan(_ args: [String], valueOptions: Set<Character>, flagOptions: Set<Character>, addSecret: Bool,
                     usage: String) throws(SecurityFailure) -> VerbOptions {
        var specs: [ArgumentScanner.Option] = [.init("--app", .required("a bundle identifier"), empty: "a bundle identifier")]
        for letter in valueOptions where !(letter == "w" && addSecret) { specs.append(.init("-\(letter)", .required("a value"))) }
        for letter in flagOptions where !(letter == "w" && addSecret) { specs.append(.init("-\(letter)")) }
        if addSecret {
            specs.append(.init("-w", .optional))
            specs.append(.init("--accessibility", .required("a class"), empty: "a class"))
        }
        var scanner = ArgumentScanner(args)
        var o = VerbOptions()
        let matches: [ArgumentScanner.Match]
        do {
            matches = try scanner.allOptions(specs) { arg, dashed in .usage(dashed ? "unknown option '\(arg)'" : "unexpected argument '\(arg)'") }
        } catch {
            throw .usage(error.message, usage)
        }
        for m in matches {
            if m.name == "--app" { o.app = m.value; continue }
            if m.name == "--accessibility" { o.accessibility = m.value; continue }
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
