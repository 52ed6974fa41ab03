// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "AppHome",
    products: [
        .executable(name: "defaults", targets: ["defaults"]),
        .executable(name: "apphome", targets: ["apphome"]),
        .executable(name: "security", targets: ["security"]),
        .executable(name: "prefsd", targets: ["prefsd"]),
        .library(name: "PropertyList", targets: ["PropertyList"]),
        .library(name: "Preferences", targets: ["Preferences"]),
        .library(name: "SettingsBundle", targets: ["SettingsBundle"]),
    ],
    targets: [
        // Foundation-free on purpose: start-up time of `defaults` is the budget.
        .target(name: "PropertyList"),
        .target(name: "Preferences", dependencies: ["PropertyList"]),
        .target(name: "CommandSupport"),
        // libsodium: hashing for backups, encryption for the keychain.
        .systemLibrary(name: "CSodium", pkgConfig: "libsodium", providers: [.apt(["libsodium-dev"])]),
        .target(name: "DefaultsCommand", dependencies: ["PropertyList", "Preferences", "Containers", "CommandSupport", "SettingsBundle", "PrefsClient"]),
        .executableTarget(name: "defaults", dependencies: ["DefaultsCommand"]),
        .executableTarget(name: "plistbench", dependencies: ["PropertyList"]),
        // <sys/xattr.h>: not in Swift's Glibc module; glibc itself, nothing to link.
        .systemLibrary(name: "CXattr"),
        // SQLite: databases in a home are backed up with its online backup API; the only importer is SQLiteBackup.
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        .target(name: "SQLiteBackup", dependencies: ["CSQLite"]),
        .target(name: "Containers", dependencies: ["Preferences", "PropertyList", "CSodium", "CXattr", "SQLiteBackup"]),
        .target(name: "AppHomeCommand", dependencies: ["Containers", "Preferences", "PropertyList", "CommandSupport", "Keychain", "KeychainSecretService", "SettingsBundle", "PrefsClient"]),
        .executableTarget(name: "apphome", dependencies: ["AppHomeCommand", "Keychain"]),
        // libsecret (brings glib-2.0): the Secret Service keeps the keychain's device root key.
        .systemLibrary(name: "CSecret", pkgConfig: "libsecret-1", providers: [.apt(["libsecret-1-dev", "libglib2.0-dev"])]),
        .target(name: "Keychain", dependencies: ["CSodium", "Preferences", "PropertyList", "Containers"]),
        // The only target that imports libsecret: the Secret Service as the keychain's SecretStore.
        .target(name: "KeychainSecretService", dependencies: ["CSecret", "Keychain"]),
        // The client API: an app's keychain through prefsd when it answers, else the files.
        .target(name: "KeychainClient", dependencies: ["Keychain", "KeychainSecretService", "Containers", "Preferences", "PrefsClient", "PrefsProtocol", "PropertyList"]),
        .target(name: "SecurityCommand", dependencies: ["Keychain", "KeychainClient", "Containers", "CommandSupport", "PropertyList"]),
        .executableTarget(name: "security", dependencies: ["SecurityCommand", "Keychain", "KeychainSecretService"]),
        .executableTarget(name: "keychainbench", dependencies: ["Keychain", "KeychainSecretService"]),
        // prefsd: the wire protocol, the service, its command, and the client side.
        .target(name: "PrefsProtocol", dependencies: ["Preferences", "PropertyList"]),
        .target(name: "PrefsService", dependencies: ["PrefsProtocol", "Preferences", "PropertyList", "Containers", "CommandSupport", "Keychain", "KeychainSecretService"]),
        .executableTarget(name: "prefsd", dependencies: ["PrefsService", "CommandSupport"]),
        .target(name: "PrefsClient", dependencies: ["PrefsProtocol", "Preferences", "PropertyList"]),
        .executableTarget(name: "prefsbench", dependencies: ["PrefsClient", "PrefsProtocol", "Preferences", "PropertyList"]),
        .testTarget(name: "PrefsServiceTests", dependencies: ["PrefsService", "PrefsClient", "PrefsProtocol", "Preferences", "PropertyList", "CommandSupport", "Keychain", "Containers"]),
        .testTarget(name: "PropertyListTests", dependencies: ["PropertyList"]),
        .testTarget(name: "PreferencesTests", dependencies: ["Preferences", "PropertyList", "PrefsService", "PrefsClient"]),
        .testTarget(name: "DefaultsCommandTests", dependencies: ["DefaultsCommand", "Preferences", "PropertyList"]),
        .testTarget(name: "ContainersTests", dependencies: ["Containers", "Preferences", "PropertyList"]),
        .testTarget(name: "AppHomeCommandTests", dependencies: ["AppHomeCommand", "Containers", "CommandSupport", "Keychain", "PropertyList"]),
        .testTarget(name: "KeychainTests", dependencies: ["Keychain", "KeychainSecretService", "Containers", "Preferences", "PropertyList"]),
        .testTarget(name: "KeychainClientTests", dependencies: ["KeychainClient", "Keychain", "Containers", "PrefsService", "PrefsClient", "PrefsProtocol", "PropertyList"]),
        .testTarget(name: "SecurityCommandTests", dependencies: ["SecurityCommand", "Keychain", "Containers", "CommandSupport", "security", "PrefsService"]),
        // Settings.bundle loading, lint, write validation and registration; the
        // schema is Schemas/settings-bundle.schema.json, embedded at build time in the
        // binary form scripts/compile-settings-schema.py makes of it.
        .target(name: "SettingsBundle", dependencies: ["PropertyList", "Preferences"],
                resources: [.embedInCode("settings-bundle.schema.bplist"), .embedInCode("settings-bundle.kinds.bplist")]),
        .testTarget(name: "SettingsBundleTests", dependencies: ["SettingsBundle", "Preferences", "PropertyList"], exclude: ["Fixtures"]),
        .testTarget(name: "EndToEndTests", dependencies: ["PropertyList", "PrefsProtocol", "defaults", "apphome", "prefsd", "prefsbench", "security"]),
    ],
    swiftLanguageModes: [.v6]
)
