import Foundation
import PropertyList
import Testing
@testable import SettingsBundle

/// The per-rule fixtures: `Fixtures/rules/<RULE>.json` holds a valid bundle
/// and one or more invalid ones, each pinning the exact lines the linter
/// prints for that rule.
@Suite struct RuleFixtureTests {
    static let lintRules = Schema.builtIn.ruleIDs(phase: "lint")

    struct Case {
        var files: [String: PlistValue]
        var profile: Profile
        var expect: [String]
    }

    static func load(_ rule: String) throws -> (valid: Case, invalid: [Case]) {
        let doc = try Fixtures.json(Fixtures.directory + "/rules/\(rule).json").dictionaryValue!
        #expect(doc["rule"] == .string(rule))
        func parse(_ v: PlistValue) -> Case {
            let d = v.dictionaryValue!
            guard case .string(let p)? = d["profile"] else { fatalError("fixture \(rule) has no profile") }
            let expect = d["expect"]?.arrayValue?.map { v -> String in if case .string(let s) = v { return s }; return "" } ?? []
            return Case(files: Dictionary(uniqueKeysWithValues: d["files"]!.dictionaryValue!.stringEntries.map { ($0.key, $0.value) }), profile: Profile(rawValue: p)!, expect: expect)
        }
        return (parse(doc["valid"]!), doc["invalid"]!.arrayValue!.map(parse))
    }

    @Test func everyRuleOfTheSchemaHasAFixtureFile() throws {
        let files = try FileManager.default.contentsOfDirectory(atPath: Fixtures.directory + "/rules")
            .filter { $0.hasSuffix(".json") }.map { String($0.dropLast(5)) }.sorted()
        #expect(files == Self.lintRules)
        #expect(Self.lintRules.count >= 60)
    }

    @Test(arguments: lintRules)
    func validFixtureDoesNotTriggerTheRuleAndInvalidOnesPinIt(rule: String) throws {
        let (valid, invalid) = try Self.load(rule)
        let good = BundleDirectory(valid.files)
        let clean = Linter(profile: valid.profile).lint(good.bundle).findings
        #expect(!clean.contains { $0.rule == rule }, "\(rule) valid: \(clean.map(\.text))")
        #expect(!clean.contains { $0.severity != .info }, "\(rule) valid is not clean: \(clean.map(\.text))")
        #expect(!invalid.isEmpty)
        for bad in invalid {
            #expect(!bad.expect.isEmpty)
            #expect(bad.expect.allSatisfy { $0.hasSuffix("[\(rule)]") })
            let dir = BundleDirectory(bad.files)
            let lines = Linter(profile: bad.profile).lint(dir.bundle).findings.filter { $0.rule == rule }.map(\.text)
            #expect(lines == bad.expect)
        }
    }

    @Test func strictTurnsEveryWarningIntoAnError() throws {
        let (_, invalid) = try Self.load("SB431")
        let dir = BundleDirectory(invalid[0].files)
        let report = Linter().lint(dir.bundle)
        #expect(!report.hasErrors)
        #expect(report.strict().hasErrors)
        #expect(report.strict().findings.map(\.severity) == report.findings.map { $0.severity == .warning ? Severity.error : $0.severity })
    }

    @Test func lintReportsEveryProblemNotJustTheFirst() throws {
        let dir = BundleDirectory(["Root.plist": Rows.page([
            Rows.group(),
            .dictionary(["Type": "PSMultiValueSpecifier", "Title": "M", "Key": "m", "DefaultValue": "x", "Values": ["a", "b"], "Titles": ["A"]]),
            .dictionary(["Type": "PSSliderSpecifier", "Key": "s", "DefaultValue": 20.0, "MinimumValue": 0.0, "MaximumValue": 10.0]),
            .dictionary(["Type": "PSTextFieldSpecifier", "Key": "", "DefaultValue": ""]),
        ])])
        #expect(Linter().lint(dir.bundle).findings.map(\.rule) == ["SB411", "SB413", "SB454", "SB302"])
    }
}

