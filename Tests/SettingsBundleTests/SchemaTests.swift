import Foundation
import PropertyList
import Testing
@testable import SettingsBundle

@Suite struct SchemaTests {
    static func schemaJSON() throws -> PlistValue {
        try Fixtures.json(Fixtures.repository + "/Schemas/settings-bundle.schema.json")
    }

    @Test func theBuiltInSchemaIsTheFileInSchemas() throws {
        let fromFile = try Schema.load(try PlistCodec.encode(try Self.schemaJSON(), format: .json))
        #expect(fromFile.types == Schema.builtIn.types)
        #expect(fromFile.rules == Schema.builtIn.rules)
        #expect(Schema.builtIn.version == 1)
    }

    @Test func theEmbeddedBinarySchemaIsCompiledFromTheJSON() throws {
        let binary = try PlistCodec.decode([UInt8](try Data(contentsOf: URL(fileURLWithPath: Fixtures.repository + "/Schemas/settings-bundle.schema.bplist"))))
        #expect(binary == (try Self.schemaJSON()), "Schemas/settings-bundle.schema.bplist is stale: run scripts/compile-settings-schema.py")
        let kinds = try Schema.load([UInt8](try Data(contentsOf: URL(fileURLWithPath: Fixtures.repository + "/Schemas/settings-bundle.kinds.bplist"))), kindsOnly: true)
        #expect(kinds.types == Schema.builtIn.types.mapValues { var t = $0; t.keys = [:]; return t },
                "Schemas/settings-bundle.kinds.bplist is stale: run scripts/compile-settings-schema.py")
    }

    @Test func everyAppleTypeIsKnown() {
        for t in ["PSGroupSpecifier", "PSTextFieldSpecifier", "PSToggleSwitchSpecifier", "PSSliderSpecifier",
                  "PSTitleValueSpecifier", "PSMultiValueSpecifier", "PSRadioGroupSpecifier", "PSChildPaneSpecifier"] {
            #expect(Schema.builtIn.types[t]?.profile == .apple, "\(t)")
        }
        #expect(Schema.builtIn.types.values.filter { $0.profile == .iask }.count == 7)
    }

    @Test func everyRuleNamedByAKeyExists() {
        let s = Schema.builtIn
        var named: [String] = []
        for spec in Array(s.rootKeys.values) + Array(s.commonKeys.values) + s.types.values.flatMap({ Array($0.keys.values) }) {
            named += [spec.requiredRule, spec.typeRule, spec.valuesRule, spec.ignoredRule].compactMap { $0 }
        }
        #expect(named.count >= 10, "the keys name their rules")
        #expect(named.allSatisfy { s.rules[$0] != nil })
    }

    @Test func aNewTypeIsADataChange() throws {
        guard case .dictionary(var top) = try Self.schemaJSON(), case .dictionary(var types) = top["types"] else { Issue.record(); return }
        types["PSColorSpecifier"] = ["kind": "textField", "key": "required", "keys": ["Title": ["type": "string"], "DefaultValue": ["type": "string"]]]
        top["types"] = .dictionary(types)
        let schema = try Schema.load(try PlistCodec.encode(.dictionary(top), format: .json))
        let dir = BundleDirectory(["Root.plist": Rows.page([Rows.group(),
            .dictionary(["Type": "PSColorSpecifier", "Title": "Tint", "Key": "tint", "DefaultValue": "red"])])])
        #expect(Linter().lint(dir.bundle).findings.map(\.rule) == ["SB303"])
        #expect(Linter(schema: schema).lint(dir.bundle).findings.isEmpty)
        #expect(Registration.defaults(of: dir.bundle, schema: schema) == ["tint": "red"])
    }

    static let badSchemas: [(String, String)] = [
        ("[]", "invalid settings-bundle schema: the top level is not an object"),
        ("{\"format\": \"x\", \"version\": 1}", "invalid settings-bundle schema: \"format\" is not \"org.apphome.settings-bundle-schema\""),
        ("{\"format\": \"org.apphome.settings-bundle-schema\", \"version\": 2}",
         "invalid settings-bundle schema: version 2 is not supported (this build reads version 1)"),
        ("{\"format\": \"org.apphome.settings-bundle-schema\", \"version\": 1, \"rootKeys\": {}, \"commonKeys\": {}, \"types\": {\"T\": {}}}",
         "invalid settings-bundle schema: types.T needs \"kind\" and \"key\""),
    ]

    @Test(arguments: badSchemas.indices)
    func badSchemasAreRefusedWithAReason(index: Int) {
        let (text, message) = Self.badSchemas[index]
        #expect(throws: SettingsBundleError.invalidSchema(String(message.dropFirst("invalid settings-bundle schema: ".count)))) {
            try Schema.load(Array(text.utf8))
        }
    }
}
