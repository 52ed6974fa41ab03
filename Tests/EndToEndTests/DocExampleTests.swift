import Foundation
import Testing

/// Every `console` block of the README, `docs/guide.md` and `Schemas/*.md` is run, in the
/// order of the page, by one shell on a throw-away root, and what each command prints is
/// compared with what the page shows. So an example can never fail when pasted.
///
/// The form of a block (see docs/guide.md, which follows it):
/// - `$ command` is a command; a command line ending in `\` continues on the next line,
///   which may begin with `> ` as a shell's second prompt does;
/// - the lines after it, up to the next `$ `, are what it prints (standard output and
///   standard error together). `…` alone on a line stands for any number of lines; `…`
///   inside a line for any run of characters. The value of `$APPHOME_ROOT` is shown as
///   `$APPHOME_ROOT`.
/// - A command shown with no output must exit 0 (its output is not checked); a command
///   shown with output may fail (the page shows the error), and `$ echo $?` shows a status.
@Suite struct DocExampleTests {
    static let packageRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The pages whose `console` blocks are run.
    static let pages: [String] = {
        let schemas = (try? FileManager.default.contentsOfDirectory(atPath: packageRoot.appendingPathComponent("Schemas").path)) ?? []
        return ["README.md", "docs/guide.md"] + schemas.filter { $0.hasSuffix(".md") }.sorted().map { "Schemas/" + $0 }
    }()

    @Test func theNewcomersPagesHaveExamples() throws {
        // The README's first session and the guide are the newcomer's path: they must stay tested.
        for page in ["README.md", "docs/guide.md"] {
            let text = try String(contentsOf: Self.packageRoot.appendingPathComponent(page), encoding: .utf8)
            #expect(DocExample.commands(in: text).count >= 5, "\(page) has fewer than five tested commands")
        }
    }

    @Test(.disabled(if: TempRoot.daemonMode, "the examples choose their own root; run once, on the files"),
          arguments: pages)
    func examplesRunAsShown(_ page: String) throws {
        let text = try String(contentsOf: Self.packageRoot.appendingPathComponent(page), encoding: .utf8)
        let commands = DocExample.commands(in: text)
        guard !commands.isEmpty else { return }
        let world = try DocWorld(packageRoot: Self.packageRoot)
        let results = try world.run(commands)
        for (command, result) in zip(commands, results) {
            if let problem = DocExample.check(command, against: result) {
                Issue.record("\(page):\(command.line): \(problem)")
            }
        }
    }

    // The matcher itself: a wrong output must be caught, or the page tests prove nothing.

    @Test func aWrongOutputIsCaught() {
        let page = "```console\n$ echo hello\nhullo\n$ false\n```\n"
        let commands = DocExample.commands(in: page)
        #expect(commands.count == 2)
        #expect(DocExample.check(commands[0], against: .init(output: "hello\n", status: 0, root: "")) != nil)
        #expect(DocExample.check(commands[1], against: .init(output: "", status: 1, root: "")) != nil)
    }

    @Test func wildcardsAndTheRootMatch() {
        let page = "```console\n$ ls \\\n> -d x\n$APPHOME_ROOT/Applications/…/Doc…\n…\nlast\n```\n"
        let commands = DocExample.commands(in: page)
        #expect(commands.count == 1)
        #expect(commands[0].text == "ls \\\n-d x")
        let result = DocExample.Result(output: "/tmp/r/Applications/AB12/Documents\nmore\nlines\nlast\n", status: 3, root: "/tmp/r")
        #expect(DocExample.check(commands[0], against: result) == nil)
        let short = DocExample.Result(output: "/tmp/r/Applications/AB12/Documents\n", status: 0, root: "/tmp/r")
        #expect(DocExample.check(commands[0], against: short) != nil)
    }

    @Test func aHereDocumentContinuesTheCommand() {
        let page = "```console\n$ cat <<'EOF'\n> a\n> EOF\na\n> not a command\n```\n"
        let commands = DocExample.commands(in: page)
        #expect(commands.count == 1)
        #expect(commands[0].text == "cat <<'EOF'\na\nEOF")
        #expect(commands[0].expected == ["a", "> not a command"])
    }

    @Test func blocksOfOtherLanguagesAreNotRun() {
        let page = "```sh\n$ rm -rf /\n```\n```swift\nlet x = 1\n```\n"
        #expect(DocExample.commands(in: page).isEmpty)
    }
}

/// One command of a page, with what the page shows it printing.
struct DocExample {
    var line: Int
    var text: String
    var expected: [String]

    struct Result {
        var output: String
        var status: Int32
        var root: String
    }

    static func commands(in page: String) -> [DocExample] {
        var commands: [DocExample] = []
        var inBlock = false
        // After a line ending in `\` the next line continues the command; right after a
        // command line, lines beginning with `> ` (a here-document, say) continue it too.
        var continuing = false
        var inCommand = false
        for (index, line) in page.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = String(line)
            if !inBlock {
                if line.trimmingCharacters(in: .whitespaces) == "```console" { inBlock = true }
                continue
            }
            if line.hasPrefix("```") { inBlock = false; continuing = false; inCommand = false; continue }
            if !commands.isEmpty, continuing || (inCommand && line.hasPrefix("> ")) {
                let part = line.hasPrefix("> ") ? String(line.dropFirst(2)) : line
                commands[commands.count - 1].text += "\n" + part
                continuing = part.hasSuffix("\\")
            } else if line.hasPrefix("$ ") {
                let text = String(line.dropFirst(2))
                commands.append(DocExample(line: index + 1, text: text, expected: []))
                continuing = text.hasSuffix("\\")
                inCommand = true
            } else if !commands.isEmpty {
                commands[commands.count - 1].expected.append(line)
                inCommand = false
            }
        }
        return commands
    }

    /// nil when the result is what the page shows; otherwise what differs.
    static func check(_ command: DocExample, against result: Result) -> String? {
        var output = result.output
        if !result.root.isEmpty { output = output.replacingOccurrences(of: result.root, with: "$APPHOME_ROOT") }
        var lines = output.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        if lines.last == "" { lines.removeLast() }
        var expected = command.expected
        while expected.last == "" { expected.removeLast() }
        if expected.isEmpty {
            return result.status == 0 ? nil
                : "`\(command.text)` exited \(result.status) and the page shows no output:\n\(output)"
        }
        if matches(expected[...], lines[...]) { return nil }
        return "`\(command.text)` printed\n\(output)\nbut the page shows\n\(expected.joined(separator: "\n"))"
    }

    private static func matches(_ pattern: ArraySlice<String>, _ lines: ArraySlice<String>) -> Bool {
        guard let first = pattern.first else { return lines.isEmpty }
        if first == "…" {
            var rest = lines
            while true {
                if matches(pattern.dropFirst(), rest) { return true }
                if rest.isEmpty { return false }
                rest = rest.dropFirst()
            }
        }
        guard let line = lines.first, lineMatches(first, line) else { return false }
        return matches(pattern.dropFirst(), lines.dropFirst())
    }

    /// `…` inside a line matches any run of characters.
    static func lineMatches(_ pattern: String, _ line: String) -> Bool {
        let parts = pattern.components(separatedBy: "…")
        if parts.count == 1 { return pattern == line }
        var rest = Substring(line)
        guard rest.hasPrefix(parts[0]) else { return false }
        rest = rest.dropFirst(parts[0].count)
        for part in parts.dropFirst().dropLast() {
            guard let range = rest.range(of: part) else { return false }
            rest = rest[range.upperBound...]
        }
        return rest.hasSuffix(parts.last!)
    }
}

/// A throw-away world shaped like a fresh clone after `make demo`: the examples, schemas
/// and contrib of the package, and `.build/release` holding the binaries under test.
struct DocWorld {
    let base: URL
    let clone: URL
    let home: URL

    init(packageRoot: URL) throws {
        let fm = FileManager.default
        base = fm.temporaryDirectory.appendingPathComponent("apphome-doc-\(UUID().uuidString)")
        clone = base.appendingPathComponent("clone")
        home = base.appendingPathComponent("home")
        try fm.createDirectory(at: clone.appendingPathComponent(".build"), withIntermediateDirectories: true)
        try fm.createDirectory(at: home, withIntermediateDirectories: true)
        for entry in ["examples", "Schemas", "contrib", "docs", "README.md"] {
            try fm.createSymbolicLink(at: clone.appendingPathComponent(entry), withDestinationURL: packageRoot.appendingPathComponent(entry))
        }
        let binaries = try DefaultsBinary.url().deletingLastPathComponent()
        try fm.createSymbolicLink(at: clone.appendingPathComponent(".build/release"), withDestinationURL: binaries)
    }

    /// Runs every command in one shell, in order, and returns what each printed.
    func run(_ commands: [DocExample]) throws -> [DocExample.Result] {
        defer { try? FileManager.default.removeItem(at: base) }
        // `$?` is carried over the markers, so that `echo $?` shows the previous command's status.
        var script = "cd \(shellQuoted(clone.path)) || exit 99\nexec 2>&1 </dev/null\n"
            + "__doc_status=0\n__doc_restore() { return \"$1\"; }\n"
        for (index, command) in commands.enumerated() {
            script += "printf '\\036BEGIN \(index)\\036\\n'\n__doc_restore \"$__doc_status\"\n\(command.text)\n"
            script += "__doc_status=$?\nprintf '\\n\\036END \(index) %d %s\\036\\n' \"$__doc_status\" \"${APPHOME_ROOT-}\"\n"
        }
        let scriptFile = base.appendingPathComponent("page.sh")
        try Data(script.utf8).write(to: scriptFile)
        let io = base.appendingPathComponent("io")
        try FileManager.default.createDirectory(at: io, withIntermediateDirectories: true)
        let environment = [
            "PATH": clone.appendingPathComponent(".build/release").path + ":/usr/bin:/bin",
            "HOME": home.path,
            "XDG_DATA_HOME": home.appendingPathComponent(".local/share").path,
            "XDG_CONFIG_HOME": home.appendingPathComponent(".config").path,
            "XDG_RUNTIME_DIR": base.appendingPathComponent("run").path,
            "TMPDIR": base.path,
            "LANG": "C.UTF-8",
            "TZ": "UTC",
            "APPHOME_PREFSD": "off",
            "APPHOME_MANAGED_DIR": base.appendingPathComponent("managed").path,
        ]
        let result = try Subprocess.start(URL(fileURLWithPath: "/bin/bash"), ["--noprofile", "--norc", scriptFile.path],
                                          environment: environment, ioDirectory: io, timeout: 300).finish()
        return try Self.split(result.stdout, count: commands.count)
    }

    static func split(_ transcript: String, count: Int) throws -> [DocExample.Result] {
        var results: [DocExample.Result] = []
        var rest = Substring(transcript)
        for index in 0..<count {
            let begin = "\u{1E}BEGIN \(index)\u{1E}\n"
            guard let start = rest.range(of: begin) else {
                throw HarnessError.helper("the page's shell stopped before command \(index + 1):\n\(rest.suffix(2000))")
            }
            rest = rest[start.upperBound...]
            guard let end = rest.range(of: "\n\u{1E}END \(index) ") else {
                throw HarnessError.helper("command \(index + 1) did not finish:\n\(rest.suffix(2000))")
            }
            let output = String(rest[..<end.lowerBound])
            rest = rest[end.upperBound...]
            guard let close = rest.firstIndex(of: "\u{1E}") else { throw HarnessError.helper("a damaged transcript") }
            let fields = rest[..<close].split(separator: " ", maxSplits: 1, omittingEmptySubsequences: false)
            rest = rest[rest.index(after: close)...]
            results.append(.init(output: output, status: Int32(fields.first ?? "") ?? -1,
                                 root: fields.count > 1 ? String(fields[1]) : ""))
        }
        return results
    }

    private func shellQuoted(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }
}
