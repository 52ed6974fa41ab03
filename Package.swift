// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "AppHome",
    products: [
        .executable(name: "defaults", targets: ["defaults"]),
        .executable(name: "apphome", targets: ["apphome"]),
        .executable(name: "prefsd", targets: ["prefsd"]),
        .library(name: "PropertyList", targets: ["PropertyList"]),
        .library(name: "Preferences", targets: ["Preferences"]),
    ],
    targets: [
        // Foundation-free on purpose: start-up time of `defaults` is the budget.
        .target(name: "PropertyList"),
        .target(name: "Preferences", dependencies: ["PropertyList"]),
        .target(name: "CommandSupport"),
        .target(name: "DefaultsCommand", dependencies: ["PropertyList", "Preferences", "Containers", "CommandSupport", "PrefsClient"]),
        .executableTarget(name: "defaults", dependencies: ["DefaultsCommand"]),
        .executableTarget(name: "plistbench", dependencies: ["PropertyList"]),
        .target(name: "Containers", dependencies: ["Preferences", "PropertyList"]),
        .target(name: "AppHomeCommand", dependencies: ["Containers", "PropertyList", "CommandSupport", "PrefsClient"]),
        .executableTarget(name: "apphome", dependencies: ["AppHomeCommand"]),
        // prefsd: the wire protocol, the service, its command, and the client side.
        .target(name: "PrefsProtocol", dependencies: ["Preferences", "PropertyList"]),
        .target(name: "PrefsService", dependencies: ["PrefsProtocol", "Preferences", "PropertyList", "Containers", "CommandSupport"]),
        .executableTarget(name: "prefsd", dependencies: ["PrefsService", "CommandSupport"]),
        .target(name: "PrefsClient", dependencies: ["PrefsProtocol", "Preferences", "PropertyList"]),
        .executableTarget(name: "prefsbench", dependencies: ["PrefsClient", "PrefsProtocol", "Preferences", "PropertyList"]),
        .testTarget(name: "PrefsServiceTests", dependencies: ["PrefsService", "PrefsClient", "PrefsProtocol", "Preferences", "PropertyList", "CommandSupport"]),
        .testTarget(name: "PropertyListTests", dependencies: ["PropertyList"]),
        .testTarget(name: "PreferencesTests", dependencies: ["Preferences", "PropertyList", "PrefsService", "PrefsClient"]),
        .testTarget(name: "DefaultsCommandTests", dependencies: ["DefaultsCommand", "Preferences", "PropertyList"]),
        .testTarget(name: "ContainersTests", dependencies: ["Containers", "Preferences", "PropertyList"]),
        .testTarget(name: "AppHomeCommandTests", dependencies: ["AppHomeCommand", "Containers", "CommandSupport", "PropertyList"]),
        .testTarget(name: "EndToEndTests", dependencies: ["PropertyList", "PrefsProtocol", "defaults", "apphome", "prefsd", "prefsbench"]),
    ],
    swiftLanguageModes: [.v6]
)
