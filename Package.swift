// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "AppHome",
    products: [
        .executable(name: "defaults", targets: ["defaults"]),
        .executable(name: "apphome", targets: ["apphome"]),
        .library(name: "PropertyList", targets: ["PropertyList"]),
        .library(name: "Preferences", targets: ["Preferences"]),
        .library(name: "SettingsBundle", targets: ["SettingsBundle"]),
    ],
    targets: [
        // Foundation-free on purpose: start-up time of `defaults` is the budget.
        .target(name: "PropertyList"),
        .target(name: "Preferences", dependencies: ["PropertyList"]),
        .target(name: "CommandSupport"),
        .target(name: "DefaultsCommand", dependencies: ["PropertyList", "Preferences", "Containers", "CommandSupport", "SettingsBundle"]),
        .executableTarget(name: "defaults", dependencies: ["DefaultsCommand"]),
        .executableTarget(name: "plistbench", dependencies: ["PropertyList"]),
        .target(name: "Containers", dependencies: ["Preferences", "PropertyList"]),
        .target(name: "AppHomeCommand", dependencies: ["Containers", "PropertyList", "CommandSupport", "SettingsBundle"]),
        .executableTarget(name: "apphome", dependencies: ["AppHomeCommand"]),
        .testTarget(name: "PropertyListTests", dependencies: ["PropertyList"]),
        .testTarget(name: "PreferencesTests", dependencies: ["Preferences", "PropertyList"]),
        .testTarget(name: "DefaultsCommandTests", dependencies: ["DefaultsCommand", "Preferences", "PropertyList"]),
        .testTarget(name: "ContainersTests", dependencies: ["Containers", "Preferences", "PropertyList"]),
        .testTarget(name: "AppHomeCommandTests", dependencies: ["AppHomeCommand", "Containers", "CommandSupport", "PropertyList"]),
        // Settings.bundle loading, lint, write validation and registration; the
        // schema is Schemas/settings-bundle.schema.json, embedded at build time in the
        // binary form scripts/compile-settings-schema.py makes of it.
        .target(name: "SettingsBundle", dependencies: ["PropertyList", "Preferences"],
                resources: [.embedInCode("settings-bundle.schema.bplist"), .embedInCode("settings-bundle.kinds.bplist")]),
        .testTarget(name: "SettingsBundleTests", dependencies: ["SettingsBundle", "Preferences", "PropertyList"], exclude: ["Fixtures"]),
        .testTarget(name: "EndToEndTests", dependencies: ["PropertyList", "defaults", "apphome"]),
    ],
    swiftLanguageModes: [.v6]
)
