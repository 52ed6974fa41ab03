/// One verb's command line, scanned: single-letter options with values,
/// flags, and `--app`.
struct VerbOptions {
    var values: [Character: String] = [:]
    var flags: Set<Character> = []
    /// `-w <secret>` on an add verb (visible in argv).
    var secretArgument: String?
    /// `-w` as the last argument of an add verb: prompt.
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
        var o = VerbOptions()
        var i = 0
        func fail(_ m: String) -> SecurityFailure { .usage(m, usage) }
        while i < args.count {
            let arg = args[i]
            i += 1
            if arg == "--app" {
                guard i < args.count, !args[i].isEmpty else { throw fail("option --app needs a bundle identifier") }
                o.app = args[i]; i += 1; continue
            }
            if addSecret && (arg == "--accessibility" || arg.hasPrefix("--accessibility=")) {
                if arg == "--accessibility" {
                    guard i < args.count else { throw fail("option --accessibility needs a class") }
                    o.accessibility = args[i]; i += 1
                } else {
                    o.accessibility = String(arg.dropFirst(16))
                }
                if o.accessibility!.isEmpty { throw fail("option --accessibility needs a class") }
                continue
            }
            if arg.hasPrefix("--app=") {
                o.app = String(arg.dropFirst(6))
                if o.app!.isEmpty { throw fail("option --app needs a bundle identifier") }
                continue
            }
            guard arg.hasPrefix("-"), arg.count == 2, let letter = arg.last else {
                throw fail(arg.hasPrefix("-") ? "unknown option '\(arg)'" : "unexpected argument '\(arg)'")
            }
            if letter == "w" && addSecret {
                if i == args.count { o.promptForSecret = true } else { o.secretArgument = args[i]; i += 1 }
            } else if valueOptions.contains(letter) {
                guard i < args.count else { throw fail("option -\(letter) needs a value") }
                o.values[letter] = args[i]; i += 1
            } else if flagOptions.contains(letter) {
                o.flags.insert(letter)
            } else {
                throw fail("unknown option '\(arg)'")
            }
        }
        return o
    }
}
