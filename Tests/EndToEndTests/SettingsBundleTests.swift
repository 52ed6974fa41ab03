import Foundation
import Testing

/// Settings bundles through the built binaries: `defaults lint`, validated
/// `defaults write` (and `--force`), `defaults validate`, `read --effective`,
/// and `apphome install` warning about a broken bundle.
@Suite("settings bundles")
struct SettingsBundleEndToEndTests {
    static let id = "com.example.ScaryBugs"
    static var v1: String { InstalledAppTests.examples.appendingPathComponent("ScaryBugs-v1/ScaryBugs.app").path }

    func apphome(_ root: TempRoot, _ arguments: [String]) throws -> CommandResult {
        try CrashAndDoctorTests.apphome(root, arguments)
    }

    /// A copy of ScaryBugs v1 whose Root.plist is `root` (an XML plist text).
    func brokenApp(_ root: TempRoot, rootPlist: String) throws -> String {
        let app = root.workFile("ScaryBugs.app")
        try FileManager.default.copyItem(atPath: Self.v1, toPath: app.path)
        try rootPlist.write(to: app.appendingPathComponent("Settings.bundle/Root.plist"), atomically: true, encoding: .utf8)
        // An edited copy is a development build: unsigned (its old signature no longer holds).
        try FileManager.default.removeItem(at: app.appendingPathComponent("_CodeSignature"))
        return app.path
    }

    static let brokenRoot = """
    <?xml version="1.0" encoding="UTF-8"?>
    <plist version="1.0"><dict><key>PreferenceSpecifiers</key><array>
    <dict><key>Type</key><string>PSGroupSpecifier</string><key>Title</key><string>G</string></dict>
    <dict><key>Type</key><string>PSMultiValueSpecifier</string><key>Title</key><string>Sort</string><key>Key</key><string>sort</string>
      <key>DefaultValue</key><string>x</string><key>Values</key><array><string>a</string><string>b</string></array>
      <key>Titles</key><array><string>A</string><string>B</string></array></dict>
    <dict><key>Type</key><string>PSTextFieldSpecifier</string><key>Key</key><string>name</string><key>KeyboardType</key><string>Numbers</string><key>DefaultValue</key><string></string></dict>
    </array></dict></plist>
    """

    @Test func lintPrintsEveryFindingAndFailsOnErrors() throws {
        let root = try TempRoot()
        let app = try brokenApp(root, rootPlist: Self.brokenRoot)
        let result = try root.run(["lint", app + "/Settings.bundle"])
        #expect(result.status == 1)
        #expect(result.stdout == """
        Root.plist: PreferenceSpecifiers[1] (Key "sort"): error: PSMultiValueSpecifier "sort": DefaultValue "x" (string) is not one of Values [a, b] [SB413]
        Root.plist: PreferenceSpecifiers[2] (Key "name"): warning: text field "name": KeyboardType "Numbers" is not one of Alphabet, NumbersAndPunctuation, NumberPad, URL, EmailAddress; Alphabet is used [SB431]
        Advanced.plist: info: Advanced.plist is not reachable from Root; not validated as a page [SB108]
        1 error(s), 1 warning(s), 1 info(s)

        """)
        #expect(result.stderr == "defaults: \(app)/Settings.bundle has 1 error(s)\n")
        let json = try root.run(["lint", "--json", app + "/Settings.bundle"])
        #expect(json.status == 1)
        let object = try JSONSerialization.jsonObject(with: json.stdoutData) as! [String: Any]
        #expect(object["errors"] as? Int == 1)
        #expect(object["version"] as? Int == 1)
        let findings = object["findings"] as! [[String: String]]
        #expect(findings.map { $0["rule"]! } == ["SB413", "SB431", "SB108"])
        #expect(findings[0]["location"] == "PreferenceSpecifiers[1] (Key \"sort\")")
        #expect(findings[0]["file"] == "Root.plist")
    }

    @Test func aBundleThatNamesAnAppGroupGovernsTheGroupsSuiteNotTheAppsDomain() throws {
        let root = try TempRoot()
        let app = root.workFile("ScaryBugs.app")
        try FileManager.default.copyItem(atPath: Self.v1, toPath: app.path)
        let group = "group.com.example.ScaryBugs"
        for (file, key, value) in [("Info.plist", "com.apple.security.application-groups", [group] as Any),
                                   ("Settings.bundle/Root.plist", "ApplicationGroupContainerIdentifier", group as Any)] {
            let url = app.appendingPathComponent(file)
            var plist = try PropertyListSerialization.propertyList(from: Data(contentsOf: url), format: nil) as! [String: Any]
            plist[key] = value
            try PropertyListSerialization.data(fromPropertyList: plist, format: .xml, options: 0).write(to: url)
        }
        // Only a signed app may claim an app group.
        try CrashAndDoctorTests.signWithNewKey(root, app.path)
        try #require(try apphome(root, ["install", app.path]).status == 0)

        // The group's suite is checked against the bundle and gets its defaults…
        let refused = try root.run(["write", group, "sortOrder", "-string", "colour"])
        #expect(refused.status == 1 && refused.stderr.contains("[SB701]\nDefaults have not been changed"), "\(refused)")
        try root.expectOutput(["read", "--effective", group, "showRatings"], "1\n(layer: registration)\n")
        try root.succeed(["write", group, "sortOrder", "-string", "name"])
        // …and the app's own domain is not: its settings live in the group.
        try root.succeed(["write", Self.id, "sortOrder", "-string", "colour"])
        let effective = try root.run(["read", "--effective", Self.id, "showRatings"])
        #expect(effective.status == 1 && effective.stderr
                == "defaults: The domain/default pair of (\(Self.id), showRatings) does not exist in any layer\n", "\(effective)")
        // lint of the app's domain still finds the app's bundle.
        #expect(try root.run(["lint", Self.id]).status == 0)
    }

    @Test func strictMakesWarningsFailAndTheExampleLintsClean() throws {
        let root = try TempRoot()
        try root.expectOutput(["lint", "--strict", Self.v1 + "/Settings.bundle"], "0 error(s), 0 warning(s), 0 info(s) (--strict: warnings count as errors)\n")
        let app = try brokenApp(root, rootPlist: Self.brokenRoot.replacingOccurrences(of: "<string>x</string>", with: "<string>a</string>"))
        #expect(try root.run(["lint", app + "/Settings.bundle"]).status == 0)
        let strict = try root.run(["lint", "--strict", app + "/Settings.bundle"])
        #expect(strict.status == 1)
        #expect(strict.stdout.contains("Root.plist: PreferenceSpecifiers[2] (Key \"name\"): error: text field \"name\": KeyboardType"))
        // A bundle whose pad variant is broken: the global --idiom picks which device lint checks.
        let pad = root.workFile("Pad.bundle")
        try FileManager.default.copyItem(atPath: Self.v1 + "/Settings.bundle", toPath: pad.path)
        try Self.brokenRoot.write(to: pad.appendingPathComponent("Root~ipad.plist"), atomically: true, encoding: .utf8)
        #expect(try root.run(["--idiom", "phone", "lint", pad.path]).status == 0)
        #expect(try root.run(["--idiom", "pad", "lint", pad.path]).status == 1)
        #expect(try root.run(["lint", pad.path]).status == 1)
        let usage = try root.run(["lint", "--profile", "android", Self.v1 + "/Settings.bundle"])
        #expect(usage.status == 255)
        #expect(usage.stderr.hasPrefix("defaults: option --profile needs apple or iask\n"))
    }

    @Test func installWarnsAboutABrokenBundleAndGoesOn() throws {
        let root = try TempRoot()
        let app = try brokenApp(root, rootPlist: Self.brokenRoot)
        let install = try apphome(root, ["install", app])
        #expect(install.status == 0)
        #expect(install.stdout.hasPrefix("installed \(Self.id) "))
        let home = try apphome(root, ["container", Self.id]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(install.stderr == """
        apphome: warning: Settings.bundle has 1 error(s); installed anyway (see 'defaults lint \(home)/Settings.bundle'):
          Settings.bundle/Root.plist: PreferenceSpecifiers[1] (Key "sort"): error: PSMultiValueSpecifier "sort": DefaultValue "x" (string) is not one of Values [a, b] [SB413]

        """)
        let clean = try apphome(root, ["update", Self.v1])
        #expect(clean.status == 0)
        #expect(clean.stderr == "")
    }

    @Test func writesOfAnInstalledAppAreValidatedAndForceWritesAnyway() throws {
        let root = try TempRoot()
        #expect(try apphome(root, ["install", Self.v1]).status == 0)
        let refused = try root.run(["write", Self.id, "sortOrder", "size"])
        #expect(refused.status == 1)
        #expect(refused.stderr == """
        defaults: com.example.ScaryBugs sortOrder: "size" is not one of the allowed values: "name" (Name), "scariness" (Scariness), "date" (Date added) [SB701]
        Defaults have not been changed (use --force to write anyway).

        """)
        #expect(try root.run(["read", Self.id]).status == 1)  // nothing was written
        let table: [([String], String?)] = [
            (["thumbnailSize", "-float", "200"], "defaults: com.example.ScaryBugs thumbnailSize: 200.0 is outside the valid range [32.0, 128.0] [SB702]"),
            (["thumbnailSize", "-int", "100"], nil),
            (["showRatings", "YES"], "defaults: com.example.ScaryBugs showRatings: toggle accepts only true or false [SB703]"),
            (["showRatings", "-bool", "NO"], nil),
            (["soundEnabled", "-bool", "yes"], "defaults: com.example.ScaryBugs soundEnabled: toggle accepts only \"YES\" or \"NO\" [SB703]"),
            (["soundEnabled", "NO"], nil),
            (["volume", "3"], "defaults: com.example.ScaryBugs volume: \"3\" is not one of the allowed values: 1 (Quiet), 2 (Normal), 3 (Loud) [SB701]"),
            (["volume", "-int", "3"], nil),
            (["userName", "-int", "7"], "defaults: com.example.ScaryBugs userName: text field values must be strings [SB707]"),
            (["userName", "Ray"], nil),
            (["lastBug", "-int", "7"], nil),
        ]
        // An untyped value the schema refuses, which a type flag would make pass: the advice is that flag.
        let typed = ["showRatings YES": "-bool YES", "volume 3": "-int 3"]
        for (args, message) in table {
            let result = try root.run(["write", Self.id] + args)
            if let message {
                #expect(result.status == 1, "\(args)")
                let advice = typed[args.joined(separator: " ")].map { "to store it as that type: defaults write \(Self.id) \(args[0]) \($0)" }
                #expect(result.stderr == message + "\nDefaults have not been changed (\(advice ?? "use --force to write anyway")).\n", "\(args)")
            } else {
                #expect(result.status == 0, "\(args): \(result.stderr)")
            }
        }
        try root.expectOutput(["read", Self.id, "userName"], "Ray\n")
        // A whole-domain write is checked key by key, and refused as a whole.
        let rep = try root.run(["write", Self.id, "{ userName = Ann; volume = 9; }"])
        #expect(rep.status == 1)
        #expect(rep.stderr.hasPrefix("defaults: com.example.ScaryBugs volume: \"9\" is not one of the allowed values"))
        try root.expectOutput(["read", Self.id, "userName"], "Ray\n")
        try root.expectOutput(["validate", Self.id], "")

        let forced = try root.run(["write", "--force", Self.id, "userName", "-int", "7"])
        #expect(forced.status == 0)
        #expect(forced.stderr == "defaults: warning: com.example.ScaryBugs userName: text field values must be strings [SB707] (written anyway: --force)\n")
        let validate = try root.run(["validate", Self.id])
        #expect(validate.status == 1)
        #expect(validate.stdout == "error: com.example.ScaryBugs userName: text field values must be strings [SB707]\n")
        #expect(validate.stderr == "defaults: 1 stored value(s) of com.example.ScaryBugs break its settings schema\n")
    }

    @Test func importIsValidatedAsAWholeAndForceImportsAnyway() throws {
        let root = try TempRoot()
        #expect(try apphome(root, ["install", Self.v1]).status == 0)
        try root.succeed(["write", Self.id, "userName", "Ray"])
        let plist = Data("{ userName = Ann; volume = 9; lastBug = Moth; }".utf8)
        let refused = try root.run(["import", Self.id, "-"], stdin: plist)
        #expect(refused.status == 1)
        #expect(refused.stderr == """
        defaults: com.example.ScaryBugs volume: "9" is not one of the allowed values: 1 (Quiet), 2 (Normal), 3 (Loud) [SB701]
        Defaults have not been changed (use --force to write anyway).

        """)
        try root.expectOutput(["read", Self.id], "{\n    userName = Ray;\n}\n")  // nothing of the import landed
        let good = #"<?xml version="1.0" encoding="UTF-8"?><plist version="1.0"><dict><key>userName</key><string>Ann</string><key>volume</key><integer>2</integer></dict></plist>"#
        try root.succeed(["import", Self.id, "-"], stdin: Data(good.utf8))
        try root.expectOutput(["read", Self.id, "userName"], "Ann\n")
        let forced = try root.run(["import", "--force", Self.id, "-"], stdin: plist)
        #expect(forced.status == 0)
        #expect(forced.stderr.hasPrefix("defaults: warning: com.example.ScaryBugs volume: \"9\" is not one of the allowed values"))
        try root.expectOutput(["read", Self.id, "lastBug"], "Moth\n")
    }

    @Test func effectiveReadShowsTheLayerWhilePlainReadStaysMacOSExact() throws {
        let root = try TempRoot()
        #expect(try apphome(root, ["install", Self.v1]).status == 0)
        try root.succeed(["write", Self.id, "lastBug", "Centipede"])
        let plain = try root.run(["read", Self.id, "sortOrder"])
        #expect(plain.status == 1)
        #expect(plain.stderr == "defaults: The domain/default pair of (com.example.ScaryBugs, sortOrder) does not exist\n")
        try root.expectOutput(["read", "--effective", Self.id, "sortOrder"], "name\n(layer: registration)\n")
        try root.expectOutput(["read", "--effective", Self.id, "thumbnailSize"], "64\n(layer: registration)\n")
        try root.expectOutput(["read", "--effective", Self.id, "lastBug"], "Centipede\n(layer: application)\n")
        try root.succeed(["write", "-g", "showRatings", "-bool", "NO"])
        try root.expectOutput(["read", "--effective", Self.id, "showRatings"], "0\n(layer: global)\n")
        try root.expectOutput(["read", "--effective", Self.id, "showRatings", "-showRatings", "YES"], "YES\n(layer: argument)\n")
        try root.expectOutput(["--format", "json", "read", "--effective", Self.id, "volume"], "{\"layer\": \"registration\", \"value\": 2}\n")
        try root.expectOutput(["--format", "json", "read", "--effective", Self.id, "thumbnailSize"], "{\"layer\": \"registration\", \"value\": 64.0}\n")
        try root.expectOutput(["range", Self.id, "thumbnailSize"], "range 32.0 128.0\n")
        try root.expectOutput(["range", Self.id, "volume"], "enum\n1 (Quiet)\n2 (Normal)\n3 (Loud)\n")
        let undeclared = try root.run(["range", Self.id, "lastBug"])
        #expect(undeclared.status == 1)
        #expect(undeclared.stderr == "defaults: key lastBug is not declared in the settings schema of com.example.ScaryBugs; any value is stored\n")
        let missing = try root.run(["read", "--effective", Self.id, "nothing"])
        #expect(missing.status == 1)
        #expect(missing.stderr == "defaults: The domain/default pair of (com.example.ScaryBugs, nothing) does not exist in any layer\n")
    }

    @Test func aBundleRegisteredUnderTheRootOrGivenExplicitlyValidatesItsDomain() throws {
        let root = try TempRoot()
        let registered = root.root.appendingPathComponent("Library/SettingsBundles")
        try FileManager.default.createDirectory(at: registered, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: registered.appendingPathComponent("org.example.notes.bundle").path,
                                                   withDestinationPath: Self.v1 + "/Settings.bundle")
        let refused = try root.run(["write", "org.example.notes", "volume", "-int", "9"])
        #expect(refused.status == 1)
        #expect(refused.stderr.hasPrefix("defaults: org.example.notes volume: 9 is not one of the allowed values"))
        // A domain with no bundle takes anything, unless one is named on the command line.
        try root.succeed(["write", "org.example.other", "volume", "-int", "9"])
        let explicit = try root.run(["--settings-bundle", Self.v1 + "/Settings.bundle", "write", "org.example.other", "volume", "-int", "9"])
        #expect(explicit.status == 1)
        let none = try root.run(["validate", "org.example.other"])
        #expect(none.status == 1)
        #expect(none.stderr.hasPrefix("defaults: no settings bundle for domain org.example.other"))
    }
}
