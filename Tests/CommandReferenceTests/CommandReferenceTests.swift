import AppHomeCommand
import AppHomeSystem
import CommandSupport
import DefaultsCommand
import Foundation
import GitCredential
import Keychain
import PrefsdCommand
import SecurityCommand
import Testing

/// Help, man pages and completions agree with each command's one list of
/// verbs and options (``CommandReference``), both ways: every verb and
/// option in the list is in the help, the man page and each completion
/// (bash, zsh, fish), and nothing they offer is missing from the list.
@Suite("Help, man pages and completions from one list")
struct CommandReferenceTests {
    /// One command: its list, its help (as `help` prints it), its man page and completions.
    struct Command: Sendable, CustomTestStringConvertible {
        var reference: CommandReference
        var manPage: String
        var completes: Bool
        /// Words in the help or man page's prose that look like options but are not
        /// the command's (`mkdir -m 700`, the `-Key value` placeholder).
        var prose: Set<String>
        var testDescription: String { reference.command }
    }

    static let commands: [Command] = [
        Command(reference: DefaultsCommand.reference, manPage: "man/defaults.1", completes: true, prose: ["-Key", "-p", "-unarchive"]),
        Command(reference: AppHomeCommand.reference, manPage: "man/apphome.1", completes: true, prose: ["-m", "--prune"]),
        Command(reference: SecurityCommand.reference, manPage: "man/security.1", completes: true, prose: []),
        Command(reference: PrefsdCommand.reference, manPage: "man/prefsd.8", completes: false, prose: ["--user", "--now", "--synced"]),
        Command(reference: GitCredentialHelper.reference, manPage: "man/git-credential-apphome.1", completes: false, prose: ["--global"]),
    ]

    static let top = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static func file(_ relative: String) throws -> String {
        try String(contentsOf: top.appendingPathComponent(relative), encoding: .utf8)
    }

    // MARK: - Running a command in process

    static func run(_ command: String, _ arguments: [String]) -> (status: Int32, out: String, err: String) {
        let console = CapturingConsole()
        let configuration = Configuration(variable: { $0 == "APPHOME_ROOT" ? "/nonexistent/apphome-reference-test" : nil })
        let status: Int32
        switch command {
        case "defaults": status = DefaultsCommand.run(arguments, configuration: configuration, console: console)
        case "apphome": status = AppHomeCommand.run(arguments, environment: AppHomeEnvironment(configuration: configuration), console: console)
        case "security":
            status = SecurityCommand.run(arguments, environment: SecurityEnvironment(configuration: configuration, standardInputIsTerminal: false),
                                         console: console, prompter: NoPrompter())
        case "prefsd": status = PrefsdCommand.run(arguments, environment: .init(configuration: configuration, pid: 1, uid: 0), console: console)
        default: status = GitCredentialHelper.run(arguments, configuration: configuration, console: console)
        }
        return (status, console.standardOutput, console.standardError)
    }

    final class NoPrompter: SecretPrompter {
        func readSecret(prompt: String) -> SecureBytes? { nil }
    }

    /// The whole help and every verb's (`security help add-generic-password`
    /// has options the overview leaves out).
    static func help(_ command: Command) -> String {
        let name = command.reference.command
        var text = run(name, ["--help"]).out
        if hasVerbHelp(command) {
            for verb in command.reference.verbs where verb.name != "help" { text += run(name, ["help", verb.name]).out }
        }
        return text
    }

    /// Whether `help VERB` is a thing (a git credential helper takes one word).
    static func hasVerbHelp(_ command: Command) -> Bool {
        command.reference.verbs.count > 1 && command.reference.command != "git-credential-apphome"
    }

    // MARK: - Extracting verbs and options

    /// Option-like words (`-w`, `--dry-run`, `-currentHost`) of plain text;
    /// `-int[eger]` gives `-int` and `-integer`.
    static func optionWords(_ text: String) -> Set<String> {
        let regex = try! NSRegularExpression(pattern: #"(?<![A-Za-z0-9.\-/_~=$'"])(--?[A-Za-z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)*)(\[[a-z]+\])?"#)
        var words: Set<String> = []
        let ns = text as NSString
        for m in regex.matches(in: text, range: NSRange(location: 0, length: ns.length)) {
            let word = ns.substring(with: m.range(at: 1))
            words.insert(word)
            if m.range(at: 2).location != NSNotFound {
                words.insert(word + ns.substring(with: m.range(at: 2)).dropFirst().dropLast())
            }
        }
        return words
    }

    /// A man page's text without roff's font changes and with its `\-` as `-`.
    static func manText(_ source: String) -> String {
        source.replacingOccurrences(of: #"\\f[BIRP]"#, with: "", options: .regularExpression)
            .replacingOccurrences(of: #"\\\([a-z]{2}"#, with: " ", options: .regularExpression)
            .replacingOccurrences(of: "\\-", with: "-")
            .replacingOccurrences(of: "\\&", with: "")
    }

    /// The verbs a man page describes: the first word of each tagged paragraph of
    /// its VERBS (or ACTIONS) section.
    static func manVerbs(_ source: String) -> Set<String> {
        var verbs: Set<String> = []
        var inVerbs = false
        var tagNext = false
        for line in manText(source).split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix(".SH ") { inVerbs = line == ".SH VERBS" || line == ".SH ACTIONS"; continue }
            guard inVerbs else { continue }
            if line == ".TP" { tagNext = true; continue }
            if tagNext {
                tagNext = false
                let words = line.split(separator: " ")
                let start = words.first?.hasPrefix(".") == true ? 1 : 0
                if start < words.count, !words[start].hasPrefix("-") { verbs.insert(String(words[start]).trimmingCharacters(in: CharacterSet(charactersIn: "\","))) }
            }
        }
        return verbs
    }

    /// Verbs and options a completion file offers: bash's and zsh's `verbs`,
    /// `options`, `own` and `types` lists; fish's `set -l verbs` and the
    /// `-l`, `-o`, `-s` of its `complete` lines.
    static func completion(_ source: String, fish: Bool) -> (verbs: Set<String>, options: Set<String>) {
        var verbs: Set<String> = [], options: Set<String> = []
        if fish {
            for line in source.split(separator: "\n") {
                let words = shellWords(String(line))
                if words.starts(with: ["set", "-l", "verbs"]) { verbs.formUnion(words.dropFirst(3)) }
                guard words.first == "complete" else { continue }
                var i = 1
                while i < words.count {
                    switch words[i] {
                    case "-l": options.insert("--" + words[i + 1]); i += 1
                    case "-o": options.insert("-" + words[i + 1]); i += 1
                    case "-s": options.insert("-" + words[i + 1]); i += 1
                    case "-c", "-n", "-a", "-d": i += 1
                    default: break
                    }
                    i += 1
                }
            }
            return (verbs, options)
        }
        let regex = try! NSRegularExpression(pattern: #"\b(verbs|options|own|types)\+?=(?:"([^"]*)"|\(([^)]*)\))"#)
        let ns = source as NSString
        for m in regex.matches(in: source, range: NSRange(location: 0, length: ns.length)) {
            let list = m.range(at: 2).location != NSNotFound ? ns.substring(with: m.range(at: 2)) : ns.substring(with: m.range(at: 3))
            let words = list.split(whereSeparator: { $0 == " " || $0 == "\n" }).map(String.init).filter { !$0.hasPrefix("$") }
            if ns.substring(with: m.range(at: 1)) == "verbs" { verbs.formUnion(words) } else { options.formUnion(words) }
        }
        return (verbs, options)
    }

    /// `line` split as a shell would (quotes, no expansion).
    static func shellWords(_ line: String) -> [String] {
        var words: [String] = [], current = "", quote: Character?, any = false
        for c in line {
            if let q = quote {
                if c == q { quote = nil } else { current.append(c) }
            } else if c == "\"" || c == "'" {
                quote = c; any = true
            } else if c == " " || c == "\t" {
                if any || !current.isEmpty { words.append(current) }
                current = ""; any = false
            } else if c == "#" && current.isEmpty && !any {
                break
            } else {
                current.append(c)
            }
        }
        if any || !current.isEmpty { words.append(current) }
        return words
    }

    static func completionFiles(_ command: String) -> [(name: String, fish: Bool)] {
        [("completions/\(command)", false), ("completions/_\(command)", false), ("completions/\(command).fish", true)]
    }

    /// The words of `text` (letters, digits, '_' and '-').
    static func words(_ text: String) -> Set<String> {
        Set(text.split { !($0.isLetter || $0.isNumber || $0 == "_" || $0 == "-") }.map(String.init))
    }

    static func allNames(_ reference: CommandReference) -> Set<String> {
        Set(reference.verbs.flatMap { [$0.name] + $0.aliases })
    }

    // MARK: - The checks

    @Test(arguments: commands)
    func theHelpNamesEveryVerbAndOptionAndNoOther(_ command: Command) throws {
        let reference = command.reference
        let help = Self.help(command)
        #expect(!help.isEmpty)
        let words = Self.optionWords(help)
        for verb in reference.verbs {
            #expect(help.contains(verb.name), "\(reference.command)'s help does not name the verb \(verb.name)")
        }
        // Every other name of a verb (what the completions offer too) is named as a word of the help.
        let helpWords = Self.words(help)
        for alias in reference.verbs.flatMap(\.aliases) {
            #expect(helpWords.contains(alias), "\(reference.command)'s help does not name the alias \(alias)")
        }
        for option in reference.allOptions {
            #expect(words.contains(option), "\(reference.command)'s help does not name the option \(option)")
        }
        let unknown = words.subtracting(reference.allOptions).subtracting(command.prose)
        #expect(unknown.isEmpty, "\(reference.command)'s help names options its reference does not list: \(unknown.sorted())")
    }

    @Test(arguments: commands)
    func theManPageDescribesEveryVerbAndOptionAndNoOther(_ command: Command) throws {
        let reference = command.reference
        let source = try Self.file(command.manPage)
        let text = Self.manText(source)
        let words = Self.optionWords(text)
        let verbs = Self.manVerbs(source)
        if reference.verbs.count > 1 {
            for verb in reference.verbs {
                #expect(verbs.contains(verb.name), "\(command.manPage) has no paragraph for the verb \(verb.name) (it has \(verbs.sorted()))")
            }
            let unknown = verbs.subtracting(Self.allNames(reference))
            #expect(unknown.isEmpty, "\(command.manPage) describes verbs the reference does not list: \(unknown.sorted())")
        }
        for option in reference.allOptions {
            #expect(words.contains(option), "\(command.manPage) does not name the option \(option)")
        }
        let unknown = words.subtracting(reference.allOptions).subtracting(command.prose)
        #expect(unknown.isEmpty, "\(command.manPage) names options the reference does not list: \(unknown.sorted())")
    }

    @Test(arguments: commands.filter(\.completes))
    func everyCompletionOffersEveryVerbAndOptionAndNoOther(_ command: Command) throws {
        let reference = command.reference
        let help = Self.help(command)
        for (name, fish) in Self.completionFiles(reference.command) {
            let (verbs, options) = Self.completion(try Self.file(name), fish: fish)
            for verb in reference.verbs {
                #expect(verbs.contains(verb.name), "\(name) does not offer the verb \(verb.name)")
            }
            #expect(verbs.subtracting(Self.allNames(reference)).isEmpty,
                    "\(name) offers verbs the reference does not list: \(verbs.subtracting(Self.allNames(reference)).sorted())")
            for alias in reference.verbs.flatMap(\.aliases) {
                #expect(verbs.contains(alias), "\(name) does not offer the alias \(alias) its help names")
            }
            let unnamed = verbs.subtracting(Self.words(help))
            #expect(unnamed.isEmpty, "\(name) offers verbs \(reference.command)'s help does not name: \(unnamed.sorted())")
            for option in reference.allOptions {
                #expect(options.contains(option), "\(name) does not offer the option \(option)")
            }
            #expect(options.subtracting(reference.allOptions).isEmpty,
                    "\(name) offers options the reference does not list: \(options.subtracting(reference.allOptions).sorted())")
        }
    }

    /// `help VERB` and `VERB --help` print the same, for every verb, on
    /// standard output with status 0; an unknown verb is a usage error.
    @Test(arguments: commands.filter(hasVerbHelp))
    func everyVerbHasItsOwnHelp(_ command: Command) throws {
        let name = command.reference.command
        for verb in command.reference.verbs where verb.name != "help" {
            let asked = Self.run(name, ["help", verb.name])
            #expect(asked.status == 0 && asked.err.isEmpty && asked.out.contains(verb.name), "\(name) help \(verb.name): \(asked)")
            let flag = Self.run(name, [verb.name, "--help"])
            #expect(flag.status == 0 && flag.out == asked.out, "\(name) \(verb.name) --help: \(flag)")
            let short = Self.run(name, [verb.name, "-h"])
            #expect(short.status == 0 && short.out == asked.out, "\(name) \(verb.name) -h: \(short)")
        }
        let unknown = Self.run(name, ["help", "no-such-verb"])
        #expect(unknown.status != 0 && unknown.out.isEmpty, "\(unknown)")
        #expect(unknown.err.split(separator: "\n").count == 2, "a reason and one line: \(unknown.err)")
    }

    /// The one version number: every command prints it, and the package takes it
    /// from the same constant (`make print-version`, which build-deb.sh reads).
    @Test(arguments: commands)
    func versionComesFromTheOneConstant(_ command: Command) throws {
        let result = Self.run(command.reference.command, ["--version"])
        #expect(result.status == 0 && result.out == "\(command.reference.command) (AppHome) \(AppHomeVersion.number)\n", "\(result)")
    }

    @Test func thePackageTakesItsVersionFromTheConstant() throws {
        let make = Process()
        make.executableURL = URL(fileURLWithPath: "/usr/bin/make")
        make.arguments = ["-s", "--no-print-directory", "-C", Self.top.path, "print-version"]
        let pipe = Pipe()
        make.standardOutput = pipe
        try make.run()
        let out = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        make.waitUntilExit()
        #expect(make.terminationStatus == 0 && out == AppHomeVersion.number + "\n", "make print-version: \(out)")
        let script = try Self.file("packaging/build-deb.sh")
        #expect(script.contains("make -s -C \"$top\" print-version"), "build-deb.sh must take the version from make print-version")
        #expect(!FileManager.default.fileExists(atPath: Self.top.appendingPathComponent("packaging/VERSION").path),
                "a second version file would drift")
    }

    /// The completions load in their shells without a syntax error.
    @Test(arguments: [("zsh", "completions/_defaults"), ("zsh", "completions/_apphome"), ("zsh", "completions/_security"),
                      ("fish", "completions/defaults.fish"), ("fish", "completions/apphome.fish"), ("fish", "completions/security.fish"),
                      ("bash", "completions/defaults"), ("bash", "completions/apphome"), ("bash", "completions/security"),
                      ("bash", "completions/plutil"), ("bash", "completions/apphome-secretd")])
    func theCompletionsParse(_ shell: String, _ file: String) throws {
        let path = ["/usr/bin/", "/bin/"].map { $0 + shell }.first { FileManager.default.isExecutableFile(atPath: $0) }
        let executable = try #require(path, "\(shell) is not installed (make deps installs it)")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = ["-n", Self.top.appendingPathComponent(file).path]
        let pipe = Pipe()
        process.standardError = pipe
        try process.run()
        let err = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0 && err.isEmpty, "\(shell) -n \(file): \(err)")
    }
}
