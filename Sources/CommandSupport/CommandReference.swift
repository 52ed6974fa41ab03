/// One command's verbs and options: the list its help, its man page and its
/// shell completions are checked against (Tests/EndToEndTests/CommandReferenceTests),
/// and that `help VERB` and the one-line hint after a usage error use.
///
/// A new verb is one more entry here, one more section in the help text,
/// one more paragraph in the man page and one more word in each completion;
/// the consistency test says which of them is missing.
public struct CommandReference: Sendable {
    /// A verb and the options it takes.
    public struct Verb: Sendable {
        public var name: String
        /// Other spellings of the verb (`get_app_container` for `container`).
        public var aliases: [String]
        /// The verb's own options, as typed (`--dry-run`, `-w`).
        public var options: [String]

        public init(_ name: String, options: [String] = [], aliases: [String] = []) {
            self.name = name; self.options = options; self.aliases = aliases
        }
    }

    /// The executable's name.
    public var command: String
    /// Options every verb accepts (before the verb; `defaults` also right after it).
    public var options: [String]
    public var verbs: [Verb]
    /// Whether verbs are matched without regard to case (`defaults`, as on macOS).
    public var caseInsensitiveVerbs: Bool

    public init(command: String, options: [String], verbs: [Verb], caseInsensitiveVerbs: Bool = false) {
        self.command = command; self.options = options; self.verbs = verbs; self.caseInsensitiveVerbs = caseInsensitiveVerbs
    }

    /// The verb named `name` (or one of its aliases), or `nil`.
    ///
    /// Compares bytes, folding ASCII case when verbs are case-insensitive:
    /// no string is made, as this runs in every command's start-up.
    public func verb(_ name: String) -> Verb? {
        verbs.first { verb in Self.same(verb.name, name, caseInsensitiveVerbs) || verb.aliases.contains { Self.same($0, name, caseInsensitiveVerbs) } }
    }

    static func same(_ a: String, _ b: String, _ foldCase: Bool) -> Bool {
        guard foldCase else { return a == b }
        return a.utf8.elementsEqual(b.utf8) { x, y in x == y || (x | 0x20 == y | 0x20 && (x | 0x20) >= 0x61 && (x | 0x20) <= 0x7A) }
    }

    /// Every option: the command's and each verb's, without repeats, in order.
    public var allOptions: [String] {
        var seen: [String] = []
        for option in options + verbs.flatMap(\.options) where !seen.contains(option) { seen.append(option) }
        return seen
    }

    /// The one line shown after a usage error: where the usage of `verb` is
    /// (when it is one of the command's verbs), else where the list of verbs is.
    public func helpLine(for verb: String?) -> String {
        if verbs.allSatisfy({ $0.name == "help" }) { return "Run '\(command) --help' for its options." }
        if let verb, let known = self.verb(verb), known.name != "help" { return "Run '\(command) help \(known.name)' for its usage." }
        return "Run '\(command) help' for the list of verbs."
    }

    /// Whether `argument` asks for help instead of naming a verb or operand.
    public static func isHelpFlag(_ argument: String) -> Bool { argument == "--help" || argument == "-h" }
}

/// A verb's lines in a command's full help text: the lines that start with
/// the verb (at the indentation of a verb list) and the more deeply
/// indented lines that continue them.
public enum HelpSections {
    /// The lines of `text` that describe `verb` (`read` finds `read`,
    /// `read <domain>` and `read --effective …`), or `nil` when none does.
    ///
    /// An entry is a line indented by two spaces whose first word is the
    /// verb; the lines after it indented further belong to it.
    public static func section(of text: String, verb: String, caseInsensitive: Bool = false) -> String? {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        let wanted = caseInsensitive ? verb.lowercased() : verb
        var picked: [Substring] = []
        var index = 0
        while index < lines.count {
            let line = lines[index]
            index += 1
            guard line.hasPrefix("  "), !line.hasPrefix("   ") else { continue }
            let first = line.dropFirst(2).prefix { $0 != " " }
            guard (caseInsensitive ? first.lowercased() : String(first)) == wanted else { continue }
            picked.append(line)
            while index < lines.count, lines[index].hasPrefix("   ") {
                picked.append(lines[index])
                index += 1
            }
        }
        return picked.isEmpty ? nil : picked.joined(separator: "\n") + "\n"
    }
}
