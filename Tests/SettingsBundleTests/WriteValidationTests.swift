import PropertyList
import Preferences
import Testing
@testable import SettingsBundle

/// `defaults write` checks against a schema: each row accepts or refuses a
/// value, and the refusal's words are pinned.
@Suite struct WriteValidationTests {
    static let bundle = BundleDirectory(["Root.plist": Rows.page([
        Rows.group("G", ["Key": "section"]),
        Rows.toggle("flag"),
        Rows.toggle("mode", ["TrueValue": "on", "FalseValue": "off", "DefaultValue": "off"]),
        .dictionary(["Type": "PSSliderSpecifier", "Key": "size", "DefaultValue": 5.0, "MinimumValue": 0.0, "MaximumValue": 10.0]),
        .dictionary(["Type": "PSMultiValueSpecifier", "Title": "Sort", "Key": "sort", "DefaultValue": "name",
                     "Values": ["name", "date"], "Titles": ["Name", "Date"]]),
        .dictionary(["Type": "PSRadioGroupSpecifier", "Key": "level", "DefaultValue": 1, "Values": [1, 2], "Titles": ["Low", "High"]]),
        .dictionary(["Type": "PSTextFieldSpecifier", "Title": "Name", "Key": "user", "DefaultValue": ""]),
        .dictionary(["Type": "PSTitleValueSpecifier", "Key": "version", "DefaultValue": "1", "Values": ["1", "2"], "Titles": ["One", "Two"]]),
        .dictionary(["Type": "PSChildPaneSpecifier", "Title": "More", "File": "Child", "Key": "pane"]),
        Rows.toggle("padOnly", ["SupportedUserInterfaceIdioms": ["Pad"]]),
    ]), "Child.plist": Rows.page([Rows.group()])], forProcess: true)

    static let validator = WriteValidator(bundle: bundle.bundle)

    /// (key, value, nil for accepted or the rule and message of the finding)
    static let cases: [(String, PlistValue, String?)] = [
        ("flag", true, nil),
        ("flag", false, nil),
        ("flag", 1, "SB703 error: com.app flag: toggle accepts only true or false"),
        ("flag", "YES", "SB703 error: com.app flag: toggle accepts only true or false"),
        ("mode", "on", nil),
        ("mode", "off", nil),
        ("mode", true, "SB703 error: com.app mode: toggle accepts only \"on\" or \"off\""),
        ("mode", "maybe", "SB703 error: com.app mode: toggle accepts only \"on\" or \"off\""),
        ("size", 0.0, nil),
        ("size", 10.0, nil),
        ("size", 7, nil),
        ("size", .real(-0.000001), "SB702 error: com.app size: -1e-06 is outside the valid range [0.0, 10.0]"),
        ("size", .real(10.000001), "SB702 error: com.app size: 10.000001 is outside the valid range [0.0, 10.0]"),
        ("size", .real(.nan), "SB702 error: com.app size: nan is outside the valid range [0.0, 10.0]"),
        ("size", "5", "SB700 error: com.app size: expected a number for PSSliderSpecifier, got string"),
        ("size", true, "SB700 error: com.app size: expected a number for PSSliderSpecifier, got Boolean"),
        ("sort", "name", nil),
        ("sort", "date", nil),
        ("sort", "size", "SB701 error: com.app sort: \"size\" is not one of the allowed values: \"name\" (Name), \"date\" (Date)"),
        ("level", 1, nil),
        ("level", 2.0, nil),
        ("level", "1", "SB701 error: com.app level: \"1\" is not one of the allowed values: 1 (Low), 2 (High)"),
        ("level", 3, "SB701 error: com.app level: 3 is not one of the allowed values: 1 (Low), 2 (High)"),
        ("user", "ray", nil),
        ("user", "", nil),
        ("user", 3, "SB707 error: com.app user: text field values must be strings"),
        ("version", "2", nil),
        ("version", "3", "SB705 warning: com.app version: key is read-only in Settings (PSTitleValueSpecifier); value not among Values"),
        ("section", "x", "SB706 error: com.app section: \"section\" names a PSGroupSpecifier, which stores no value"),
        ("pane", "x", "SB706 error: com.app pane: \"pane\" names a PSChildPaneSpecifier, which stores no value"),
        ("private", ["any", "thing"], "SB704 info: com.app private: key is not declared in the settings schema; stored without validation"),
        ("padOnly", "x", "SB708 info: com.app padOnly: key is hidden on idiom phone (SupportedUserInterfaceIdioms)"),
    ]

    @Test(arguments: cases.indices)
    func writeIsAcceptedOrRefusedWithItsMessage(index: Int) {
        let (key, value, expected) = Self.cases[index]
        let finding = Self.validator.declarations[key] == nil
            ? Self.validator.undeclared(domain: "com.app", key: key)
            : Self.validator.check(domain: "com.app", key: key, value: value)
        let text = finding.map { "\($0.rule) \($0.severity.rawValue): \($0.message)" }
        #expect(text == expected, "\(key) = \(value)")
    }

    @Test func theKindsOnlySchemaKnowsEveryTypeAndMessagesStillComeFromTheFullOne() {
        #expect(Schema.builtInKinds.types.mapValues(\.kind) == Schema.builtIn.types.mapValues(\.kind))
        #expect(Schema.builtInKinds.rules.isEmpty)
        #expect(Self.validator.check(domain: "d", key: "size", value: "x")?.message == "d size: expected a number for PSSliderSpecifier, got string")
    }

    @Test func theCompiledFormAnswersEveryCaseAndRangeAsTheWalkDoes() {
        let cache = CompiledSchemaCache(directory: Self.bundle.base + "/compiled")
        let keys = Array(Set(Self.cases.map(\.0)))
        _ = cache.validator(for: Self.bundle.bundle, idiom: .phone, keys: keys)
        let compiled = cache.validator(for: Self.bundle.bundle, idiom: .phone, keys: keys)
        #expect(compiled.pageFiles.isEmpty)
        for (key, value, _) in Self.cases {
            let walked = Self.validator.declarations[key] == nil ? Self.validator.undeclared(domain: "com.app", key: key)
                : Self.validator.check(domain: "com.app", key: key, value: value)
            let fromFile = compiled.declarations[key] == nil ? compiled.undeclared(domain: "com.app", key: key)
                : compiled.check(domain: "com.app", key: key, value: value)
            #expect(walked == fromFile, "\(key) = \(value)")
            #expect(Self.validator.range(of: key) == compiled.range(of: key), "\(key)")
        }
    }

    @Test func everyWriteRuleOfTheSchemaHasAnAcceptedAndARefusedCase() {
        #expect(Schema.builtIn.ruleIDs(phase: "write").count >= 5, "the schema's write rules are read")
        for rule in Schema.builtIn.ruleIDs(phase: "write") {
            let refused = Self.cases.filter { $0.2?.hasPrefix(rule + " ") == true }
            #expect(!refused.isEmpty, "\(rule) has no refused case")
            let keys = Set(refused.map(\.0))
            // SB704's accepted twin is any declared key; the others need an accepted value of the same key.
            let accepted = Self.cases.filter { $0.2 == nil && (keys.contains($0.0) || ["SB704", "SB706", "SB708"].contains(rule)) }
            #expect(!accepted.isEmpty, "\(rule) has no accepted case")
        }
    }

    static let ranges: [(String, [String]?)] = [
        ("flag", ["type boolean"]),
        ("mode", ["enum", "\"on\"", "\"off\""]),
        ("size", ["range 0.0 10.0"]),
        ("sort", ["enum", "\"name\" (Name)", "\"date\" (Date)"]),
        ("level", ["enum", "1 (Low)", "2 (High)"]),
        ("user", ["type string"]),
        ("section", ["none (PSGroupSpecifier stores no value)"]),
        ("private", nil),
    ]

    @Test(arguments: ranges.indices)
    func rangeDescribesWhatAKeyAccepts(index: Int) {
        let (key, expected) = Self.ranges[index]
        #expect(Self.validator.range(of: key) == expected)
    }

    @Test func violationsListsStoredValuesThatBreakTheSchemaInKeyOrder() {
        let stored: [PlistKey: PlistValue] = ["sort": "size", "flag": true, "size": 99, "private": 1, "version": "9"]
        #expect(Self.validator.violations(domain: "com.app", contents: stored).map(\.rule) == ["SB702", "SB701", "SB705"])
    }

    @Test func rowsHiddenOnTheIdiomAreNotDeclared() {
        let dir = BundleDirectory(["Root.plist": Rows.page([Rows.group(), Rows.toggle("padOnly", ["SupportedUserInterfaceIdioms": ["Pad"]])])])
        let phone = WriteValidator(bundle: dir.bundle, idiom: .phone).check(domain: "d", key: "padOnly", value: 1)
        let pad = WriteValidator(bundle: dir.bundle, idiom: .pad).check(domain: "d", key: "padOnly", value: 1)
        #expect(phone == nil)
        #expect(pad?.rule == "SB703")
    }

    /// The keys a write checks: set or changed ones and the checked keys
    /// the new contents hold, once each, in code point order (as PlistKey
    /// sorts: "Z" before "a", "é" composed after "z").
    @Test func keysToCheckAreTheChangedAndCheckedKeysOnceInCodePointOrder() {
        let old: [PlistKey: PlistValue] = ["same": 1, "changed": 1, "gone": 1]
        let new: [PlistKey: PlistValue] = ["same": 1, "changed": 2, "a": 1, "Z": 1, "\u{E9}": 1, "e\u{301}": 1]
        let keys = SettingsWritePolicy.keysToCheck(old: old, new: new, options: WriteOptions(checkedKeys: ["same", "same", "changed", "absent"]))
        #expect(keys == ["Z", "a", "changed", "e\u{301}", "same", "\u{E9}"])
    }
}
