import PropertyList
import Testing
@testable import SettingsBundle

/// InAppSettingsKit's extras: accepted under `iask`, warned about under `apple`.
@Suite struct ProfileTests {
    static let bundle = BundleDirectory(["Root.plist": Rows.page([
        Rows.group(),
        .dictionary(["Type": "PSChildPaneSpecifier", "Title": "Custom", "IASKViewControllerClass": "MyController"]),
        .dictionary(["Type": "IASKDatePickerSpecifier", "Title": "When", "Key": "when", "DefaultValue": .date(PlistDate(secondsSinceReferenceDate: 0)),
                     "DatePickerMode": "Date"]),
        .dictionary(["Type": "PSTextFieldSpecifier", "Title": "Code", "Key": "code", "DefaultValue": "", "KeyboardType": "DecimalPad",
                     "IASKPlaceholder": "123"]),
    ])], forProcess: true)

    @Test func iaskAcceptsItsTypesKeysAndValuesAndAChildPaneWithoutFile() {
        #expect(Linter(profile: .iask).lint(Self.bundle.bundle).findings.map(\.text) == [])
    }

    @Test func appleWarnsAboutEachExtraAndWantsFile() {
        #expect(Linter(profile: .apple).lint(Self.bundle.bundle).findings.map(\.text) == [
            "Root.plist: PreferenceSpecifiers[1]: warning: key \"IASKViewControllerClass\" is not valid for PSChildPaneSpecifier and is ignored [SB304]",
            "Root.plist: PreferenceSpecifiers[1]: error: PSChildPaneSpecifier \"Custom\" requires \"File\" [SB401]",
            "Root.plist: PreferenceSpecifiers[2] (Key \"when\"): warning: unknown specifier Type \"IASKDatePickerSpecifier\"; Settings.app will not show this row [SB303]",
            "Root.plist: PreferenceSpecifiers[3] (Key \"code\"): warning: key \"IASKPlaceholder\" is not valid for PSTextFieldSpecifier and is ignored [SB304]",
            "Root.plist: PreferenceSpecifiers[3] (Key \"code\"): warning: text field \"code\": KeyboardType \"DecimalPad\" is not one of Alphabet, NumbersAndPunctuation, NumberPad, URL, EmailAddress; Alphabet is used [SB431]",
        ])
    }

    @Test func iaskRegistersItsEditableTypes() {
        #expect(Registration.defaults(of: Self.bundle.bundle, profile: .iask) == ["when": .date(PlistDate(secondsSinceReferenceDate: 0)), "code": ""])
        #expect(Registration.defaults(of: Self.bundle.bundle, profile: .apple) == ["code": ""])
    }
}
