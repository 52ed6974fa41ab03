// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "AppHome",
    products: [
        .executable(name: "defaults", targets: ["defaults"]),
        .executable(name: "apphome", targets: ["apphome"]),
        .library(name: "PropertyList", targets: ["PropertyList"]),
        .library(name: "Preferences", targets: ["Preferences"]),
    ],
    targets: [
        // Foundation-free on purpose: start-up time of `defaults` is the budget.
        .target(name: "PropertyList"),
        .target(name: "Preferences", dependencies: ["PropertyList"]),
        .target(name: "CommandSupport"),
        // libsodium: hashing for backups, encryption for the keychain.
        .systemLibrary(name: "CSodium", pkgConfig: "libsodium", providers: [.apt(["libsodium-dev"])]),
        .target(name: "DefaultsCommand", dependencies: ["PropertyList", "Preferences", "Containers", "CommandSupport"]),
        .executableTarget(name: "defaults", dependencies: ["DefaultsCommand"]),
        .executableTarget(name: "plistbench", dependencies: ["PropertyList"]),
        // <sys/xattr.h>: not in Swift's Glibc module; glibc itself, nothing to link.
        .systemLibrary(name: "CXattr"),
        .target(name: "Containers", dependencies: ["Preferences", "PropertyList", "CSodium", "CXattr"]),
        .target(name: "AppHomeCommand", dependencies: ["Containers", "PropertyList", "CommandSupport"]),
        .executableTarget(name: "apphome", dependencies: ["AppHomeCommand"]),
        .testTarget(name: "PropertyListTests", dependencies: ["PropertyList"]),
        .testTarget(name: "PreferencesTests", dependencies: ["Preferences", "PropertyList"]),
        .testTarget(name: "DefaultsCommandTests", dependencies: ["DefaultsCommand", "Preferences", "PropertyList"]),
        .testTarget(name: "ContainersTests", dependencies: ["Containers", "Preferences", "PropertyList"]),
        .testTarget(name: "AppHomeCommandTests", dependencies: ["AppHomeCommand", "Containers", "CommandSupport", "PropertyList"]),
        .testTarget(name: "EndToEndTests", dependencies: ["PropertyList", "defaults", "apphome"]),
    ],
    swiftLanguageModes: [.v6]
)
