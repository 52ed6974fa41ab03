import CommandSupport

extension DefaultsCommand {
    /// The verbs and options of `defaults`: what help, `defaults.1` and the
    /// completions are checked against, and what `help VERB` knows.
    public static let reference = CommandReference(
        command: "defaults",
        options: ["-currentHost", "-host", "--root", "--format", "--key-path", "--settings-bundle", "--idiom", "--force", "--synced",
                  "--help", "-h", "--version"],
        verbs: [
            .init("read", options: ["--effective", "--unarchive", "-app", "-g", "-globalDomain"]),
            .init("read-type", options: ["-app", "-g", "-globalDomain"]),
            .init("write", options: ["--force", "-app", "-g", "-globalDomain", "-string", "-data", "-int", "-integer", "-float",
                                     "-bool", "-boolean", "-date", "-array", "-array-add", "-dict", "-dict-add"]),
            .init("rename", options: ["-app", "-g", "-globalDomain"]),
            .init("delete", options: ["-app", "-g", "-globalDomain"], aliases: ["remove"]),
            .init("delete-all", options: ["-app", "-g", "-globalDomain"]),
            .init("import", options: ["--force", "-app", "-g", "-globalDomain"]),
            .init("export", options: ["-app", "-g", "-globalDomain"]),
            .init("domains"),
            .init("find"),
            .init("help"),
            .init("printHostIdentifier"),
            .init("watch", options: ["-app", "-g", "-globalDomain"]),
            .init("apply", options: ["--dry-run", "--json"]),
            .init("lint", options: ["--json", "--strict", "--profile", "--idiom", "--schema"]),
            .init("validate", options: ["-app", "-g", "-globalDomain"]),
            .init("range", options: ["-app", "-g", "-globalDomain"]),
        ],
        caseInsensitiveVerbs: true)

    /// The options before the verb that `verb` (lowercased) honours; any
    /// other one given is refused (``refuseUnhonouredOptions(_:verb:_:)``),
    /// never ignored. `-currentHost`, `-host` and `--root` apply to every verb.
    /// A switch, not a dictionary: this runs in every start-up.
    static func honouredOptions(_ verb: String) -> [String] {
        switch verb {
        case "read": return ["--format", "--key-path", "--settings-bundle", "--idiom", "--synced"]
        case "read-type": return ["--format", "--key-path", "--synced"]
        case "write": return ["--key-path", "--settings-bundle", "--idiom", "--force", "--synced"]
        case "rename", "delete", "remove": return ["--key-path", "--synced"]
        case "delete-all": return ["--key-path"]
        case "import": return ["--format", "--settings-bundle", "--idiom", "--force", "--synced"]
        case "apply": return ["--format", "--settings-bundle", "--idiom", "--force"]
        case "export": return ["--format", "--synced"]
        case "domains", "find": return ["--format"]
        case "watch": return ["--synced"]
        case "lint", "validate", "range": return ["--settings-bundle", "--idiom"]
        default: return []
        }
    }

    /// Refuses an option before the verb that `verb` would not act on
    /// (`--format json write …`, `--force read …`).
    static func refuseUnhonouredOptions(_ options: Options, verb: String, _ args: [String]) throws(CommandFailure) {
        guard !options.given.isEmpty else { return }
        let honoured = honouredOptions(verb)
        for option in options.given where !honoured.contains(option) && option != "-currentHost" && option != "-host" && option != "--root" {
            throw .usage("option \(option) does not apply to \(verb)")
        }
        guard options.given.contains("--format") else { return }
        // Formats a verb cannot print in.
        let effective = verb == "read" && args.first == "--effective"
        switch (verb, options.format) {
        case ("read", .xml) where effective:
            throw .usage("read --effective prints text or json, not xml")
        case ("import", .text), ("apply", .text):
            throw .usage("\(verb) reads a property list: --format xml or json (or none to detect it)")
        case ("export", .text):
            throw .usage("export writes a property list: --format xml or json (or none: binary to a file, xml to stdout)")
        default:
            break
        }
    }
}
