import Foundation
import Testing

/// docs/ARCHITECTURE.md is the map: these checks fail when the code and the
/// map part ways on what the map promises about targets and layers.
@Suite struct ArchitectureTests {
    static var packageRoot: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    }

    /// Imports a layer must never make: the target whose sources are scanned,
    /// and the modules it may not import (a lower layer never reaches up).
    static let forbiddenImports: [(target: String, modules: [String], why: String)] = [
        ("Containers", ["Backups"], "the backup engine sits above the lifecycle; the lifecycle reaches it only through the command layer"),
        ("AppHomeSystem", ["Containers", "Backups", "Preferences"], "the system layer is under everything but PropertyList (which imports nothing; the sandbox's info file is a property list)"),
        ("PropertyList", ["AppHomeSystem", "Containers", "Backups", "Preferences"], "the value model imports nothing (Foundation-free start-up)"),
    ]

    /// Every `import X` (also `@testable import`, `import struct X.Y`) in `source`.
    static func imports(in source: String) -> Set<String> {
        var modules: Set<String> = []
        for line in source.split(separator: "\n") {
            var words = line.split(separator: " ").map(String.init)
            if words.first == "@testable" || words.first == "@_exported" || words.first?.hasPrefix("@_implementationOnly") == true {
                words.removeFirst()
            }
            guard words.first == "import", words.count >= 2 else { continue }
            let name = words.count >= 3 && ["struct", "class", "enum", "func", "protocol", "var", "let", "typealias"].contains(words[1]) ? words[2] : words[1]
            modules.insert(String(name.split(separator: ".")[0]))
        }
        return modules
    }

    /// The modules the Swift files under `Sources/<target>` import, with the file that does.
    static func imports(ofTarget target: String) throws -> [(file: String, module: String)] {
        let base = packageRoot.appendingPathComponent("Sources").appendingPathComponent(target)
        guard let walker = FileManager.default.enumerator(atPath: base.path) else { return [] }
        var out: [(String, String)] = []
        for case let relative as String in walker where relative.hasSuffix(".swift") {
            let text = try String(contentsOf: base.appendingPathComponent(relative), encoding: .utf8)
            for module in imports(in: text).sorted() { out.append(("Sources/\(target)/\(relative)", module)) }
        }
        return out
    }

    /// The names of the targets Package.swift declares (`.target(name: "X"`, `.testTarget(name: …`).
    static func packageTargets() throws -> [String] {
        let text = try String(contentsOf: packageRoot.appendingPathComponent("Package.swift"), encoding: .utf8)
        let pattern = try NSRegularExpression(pattern: #"\.(?:target|executableTarget|testTarget|systemLibrary)\(name: "([^"]+)""#)
        return pattern.matches(in: text, range: NSRange(text.startIndex..., in: text)).map {
            String(text[Range($0.range(at: 1), in: text)!])
        }
    }

    @Test func theScanSeesImports() {
        #expect(Self.imports(in: "import Glibc\n@testable import Backups\nimport struct Containers.ContainerLayout\n// import Nothing\n")
            == ["Glibc", "Backups", "Containers"])
    }

    @Test func noLayerImportsALayerAboveIt() throws {
        for rule in Self.forbiddenImports {
            let found = try Self.imports(ofTarget: rule.target)
            #expect(!found.isEmpty, "no sources found for \(rule.target) at \(Self.packageRoot.path)")
            for (file, module) in found where rule.modules.contains(module) {
                Issue.record("\(file) imports \(module): \(rule.target) must not (\(rule.why); docs/ARCHITECTURE.md)")
            }
        }
    }

    @Test func everyTargetIsOnTheMap() throws {
        let map = try String(contentsOf: Self.packageRoot.appendingPathComponent("docs/ARCHITECTURE.md"), encoding: .utf8)
        // Named in code type (`X`) anywhere, or as a word of the layers' drawing (the first fenced block).
        let fences = map.components(separatedBy: "```")
        let drawing = fences.count > 2 ? fences[1] : ""
        let words = Set(drawing.split { !($0.isLetter || $0.isNumber || $0 == "-") }.map(String.init))
        let targets = try Self.packageTargets()
        #expect(targets.count > 20, "Package.swift's targets were not found")
        for target in targets where !map.contains("`\(target)`") && !words.contains(target) {
            Issue.record("Package.swift's target \(target) is not named in docs/ARCHITECTURE.md: add it to the layers or the table")
        }
    }

    /// Files that may name the app-context variables, and why: reading the
    /// environment is `Configuration`'s alone; `ProcessContext` reads another
    /// process's only to narrow an unconfined one; the run and the sandbox
    /// set them for the app (and pass them into the sandbox), uninstall
    /// hooks get them. Anywhere else a read could widen what a caller may do
    /// by what it says of itself, which the sandbox made a peer's sandbox's
    /// business.
    static let appVariableNamers: [String: String] = [
        "Sources/AppHomeSystem/Configuration.swift": "the one reading of this process's environment",
        "Sources/AppHomeSystem/ProcessContext.swift": "another process's environment, to narrow an unconfined one only",
        "Sources/Containers/Lifecycle/Run.swift": "sets them for the app it starts",
        "Sources/Containers/Lifecycle/Sandbox.swift": "passes the app's variables into its sandbox",
        "Sources/Containers/Lifecycle/Uninstall.swift": "sets them for an uninstall hook",
    ]

    static let appVariableKeys = ["\"APPHOME_BUNDLE_ID\"", "\"APPHOME_HOME\"", "\"APPHOME_BUNDLE_ID=\"", "\"APPHOME_HOME=\""]

    @Test func noCodeReadsTheAppVariablesButConfigurationAndTheSandbox() throws {
        let sources = Self.packageRoot.appendingPathComponent("Sources")
        guard let walker = FileManager.default.enumerator(atPath: sources.path) else { throw CocoaError(.fileReadUnknown) }
        var seen = 0
        for case let relative as String in walker where relative.hasSuffix(".swift") {
            let file = "Sources/" + relative
            let text = try String(contentsOf: sources.appendingPathComponent(relative), encoding: .utf8)
            for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                // A name as a key (`"APPHOME_HOME"`, `"APPHOME_HOME="`): a read or a write of
                // the variable; the names in messages and help are prose, not keys.
                guard !line.drop(while: { $0 == " " }).hasPrefix("//"),
                      Self.appVariableKeys.contains(where: { line.contains($0) }) else { continue }
                seen += 1
                if Self.appVariableNamers[file] == nil {
                    Issue.record("\(file):\(number + 1) uses APPHOME_BUNDLE_ID or APPHOME_HOME as a key: only Configuration reads the environment (docs/sandbox.md)")
                }
            }
        }
        #expect(seen >= 5, "the scan found only \(seen) lines: is it reading Sources/?")
    }
}
