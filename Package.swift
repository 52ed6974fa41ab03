// swift-tools-version:6.0
// AppHome: the iOS application home on Linux, in Swift.
// Copyright 2026 AppHome developers. Licensed under the Apache License, Version 2.0
// (the "License"); see the LICENSE file at the root of this tree.
import PackageDescription

// Every shipped executable has the Swift standard library linked in statically: no libswift*.so
// to load, no rpath into the toolchain. In debug too (the fully static ones below are static
// executables in release and add staticStdlibInDebug), so that the debug build packages as the
// release one does: `make test` packages the
// debug build (InstallationTests), and builds nothing in release. Test targets therefore never
// depend on an executable target: SwiftPM would link the executable's module, and these flags,
// into the test bundle. `swift build --build-tests` (and `swift test`) builds every executable.
let staticStdlib: [LinkerSetting] = [.unsafeFlags(["-static-stdlib"])]
let staticStdlibInDebug: LinkerSetting = .unsafeFlags(["-static-stdlib"], .when(configuration: .debug))

let package = Package(
    name: "AppHome",
    products: [
        .executable(name: "defaults", targets: ["defaults"]),
        .executable(name: "apphome", targets: ["apphome"]),
        .executable(name: "security", targets: ["security"]),
        .executable(name: "prefsd", targets: ["prefsd"]),
        .executable(name: "git-credential-apphome", targets: ["git-credential-apphome"]),
        .executable(name: "plutil", targets: ["plutil"]),
        .executable(name: "apphome-secretd", targets: ["apphome-secretd"]),
        .library(name: "PropertyList", targets: ["PropertyList"]),
        .library(name: "KeyedArchive", targets: ["KeyedArchive"]),
        .library(name: "Preferences", targets: ["Preferences"]),
        .library(name: "SettingsBundle", targets: ["SettingsBundle"]),
        // An app's own code: `import Security` (Apple's SecItem API on the app's keychain).
        .library(name: "Security", targets: ["Security"]),
    ],
    targets: [
        // The system layer under everything: file system, locks, errors, random,
        // hex, paths, clock, with a failure-injection seam. Foundation-free.
        .target(name: "AppHomeSystem", dependencies: ["PropertyList"]),
        // Foundation-free on purpose: start-up time of `defaults` is the budget.
        .target(name: "PropertyList"),
        .target(name: "Preferences", dependencies: ["AppHomeSystem", "PropertyList"]),
        // NSKeyedArchiver archives as a graph of values and NSCoding-like coders; Foundation-free.
        .target(name: "KeyedArchive", dependencies: ["AppHomeSystem", "PropertyList"]),
        // `plutil`: macOS's property-list tool, with keyed archives shown as their object graph.
        .target(name: "PlutilCommand", dependencies: ["AppHomeSystem", "PropertyList", "KeyedArchive", "CommandSupport"]),
        .executableTarget(name: "plutil", dependencies: ["AppHomeSystem", "PlutilCommand", "CommandSupport"],
                          linkerSettings: staticStdlib),
        .target(name: "CommandSupport", dependencies: ["AppHomeSystem", "Keychain"]),
        // libsodium: hashing for backups, encryption for the keychain.
        .systemLibrary(name: "CSodium", pkgConfig: "libsodium", providers: [.apt(["libsodium-dev"])]),
        .target(name: "DefaultsCommand", dependencies: ["AppHomeSystem", "PropertyList", "KeyedArchive", "Preferences", "Containers", "CommandSupport", "SettingsBundle", "PrefsClient", "SyncedPreferences"]),
        // Start-up is the budget of `defaults`: fully static in release (libsodium and SQLite
        // from their Debian static archives), so a plain `swift build -c release` makes it.
        // The functions and data a read or a write touches are laid out side by side
        // (startup.order, made by scripts/startup-order.sh): fewer pages to fault in.
        .executableTarget(name: "defaults", dependencies: ["AppHomeSystem", "DefaultsCommand"], exclude: ["startup.order"],
                          linkerSettings: [.unsafeFlags(["-static-executable", "-use-ld=lld", "-Xlinker", "--strip-all",
                                                         "-Xlinker", "--symbol-ordering-file=\(Context.packageDirectory)/Sources/defaults/startup.order",
                                                         "-Xlinker", "--no-warn-symbol-ordering"], .when(configuration: .release)),
                                           staticStdlibInDebug]),
        // The benchmarks' code (plistbench, prefsbench); their mains only call it.
        .target(name: "Benchmarks", dependencies: ["AppHomeSystem", "PrefsClient", "PrefsProtocol", "Preferences", "PropertyList", "KeyedArchive"]),
        .executableTarget(name: "plistbench", dependencies: ["Benchmarks"]),
        // <sys/xattr.h>: not in Swift's Glibc module; glibc itself, nothing to link.
        .systemLibrary(name: "CXattr"),
        // SQLite: databases in a home are backed up with its online backup API; the only importer is SQLiteBackup.
        // Loaded with dlopen on the first call (sqlite3.h from libsqlite3-dev for its types), never linked:
        // `apphome` no longer binds its symbols at every start (`apphome run`'s start-up, issue 33).
        // The one dlopen-and-resolve of the libraries below, which are never linked.
        .target(name: "CLazyLibrary"),
        .target(name: "CSQLite", dependencies: ["CLazyLibrary"]),
        .target(name: "SQLiteBackup", dependencies: ["CSQLite"]),
        // libseccomp: the seccomp filter of an app's sandbox (`apphome run`), handed to bubblewrap.
        // Loaded with dlopen when the first filter is built (seccomp.h from libseccomp-dev), never linked.
        .target(name: "CSeccomp", dependencies: ["CLazyLibrary"]),
        .target(name: "Containers", dependencies: ["AppHomeSystem", "Preferences", "PropertyList", "CSodium", "CXattr", "CSeccomp"]),
        // The backup engine on the lifecycle's public surface: the store, manifests, consistent
        // reads, ObjectWriter, restore, prune, restic. Containers never imports it.
        .target(name: "Backups", dependencies: ["AppHomeSystem", "Containers", "Preferences", "PropertyList", "CXattr", "SQLiteBackup"]),
        // The synced key-value stores (com.apple.developer.ubiquity-kvstore-identifier): limits,
        // per-device change logs with hybrid logical clocks, the merge, the Swift API.
        .target(name: "SyncedPreferences", dependencies: ["AppHomeSystem", "PropertyList", "Preferences", "Containers", "PrefsProtocol"]),
        .target(name: "AppHomeCommand", dependencies: ["AppHomeSystem", "Containers", "Backups", "Preferences", "PropertyList", "CommandSupport", "Keychain", "KeychainSecretService", "SettingsBundle", "PrefsClient", "KeychainClient", "SyncedPreferences"]),
        // `apphome` is fully static in release, like `defaults` and `security` (its start-up is on the
        // way to every sandboxed app's start); it links libseccomp's archive whole (CSeccomp's weak
        // references then find it: nothing to load at run). Verbs that may reach the Secret Service
        // run in `apphome-secret-service`, the same code linked dynamically (AppHomeMain).
        .executableTarget(name: "apphome", dependencies: ["AppHomeCommand", "AppHomeSystem", "CommandSupport"],
                          linkerSettings: [.unsafeFlags(["-static-executable", "-use-ld=lld", "-Xlinker", "--strip-all",
                                                         "-Xlinker", "--whole-archive", "-Xlinker", "-lseccomp", "-Xlinker", "--no-whole-archive"],
                                                        .when(configuration: .release)),
                                           staticStdlibInDebug]),
        .executableTarget(name: "apphome-secret-service", dependencies: ["AppHomeCommand"],
                          linkerSettings: staticStdlib),
        // For crash tests only: `apphome` with a step hook that kills it at a journaled step.
        .executableTarget(name: "apphome-crashing", dependencies: ["AppHomeCommand", "AppHomeSystem", "CommandSupport", "Containers"],
                          path: "Tests/Fixtures/apphome-crashing"),
        // libsecret (brings glib-2.0): the Secret Service keeps the keychain's device root key.
        // Loaded with dlopen on the first call that needs it, never linked: a command that
        // prefsd answers, or whose key is in a file, never loads libsecret or GLib.
        .target(name: "CSecret", dependencies: ["CLazyLibrary"]),
        .target(name: "Keychain", dependencies: ["AppHomeSystem", "CSodium", "PropertyList", "Containers"]),
        // The only target that imports libsecret: the Secret Service as the keychain's SecretStore.
        .target(name: "KeychainSecretService", dependencies: ["CSecret", "Keychain"]),
        // The client API: an app's keychain through prefsd when it answers, else the files.
        .target(name: "KeychainClient", dependencies: ["AppHomeSystem", "Keychain", "KeychainSecretService", "Containers", "Preferences", "PrefsClient", "PrefsProtocol", "PropertyList"]),
        // Apple's keychain-item API for an app's own Swift code (`import Security`): SecItemAdd,
        // SecItemCopyMatching, SecItemUpdate, SecItemDelete on the app's AppKeychain. Foundation
        // is allowed here (it is linked by apps, never by a command).
        .target(name: "Security", dependencies: ["AppHomeSystem", "Keychain", "KeychainClient", "PropertyList"]),
        .target(name: "SecurityCommand", dependencies: ["AppHomeSystem", "Keychain", "KeychainClient", "KeychainSecretService", "Preferences", "Containers", "CommandSupport", "PropertyList"]),
        // `security` is fully static in release, like `defaults` (start-up is most of a look-up
        // through prefsd); a static program cannot load libsecret, so the commands that reach the
        // Secret Service run in `security-secret-service`, the same code linked dynamically
        // (SecurityMain). lld, as for `defaults`.
        .executableTarget(name: "security", dependencies: ["SecurityCommand"],
                          linkerSettings: [.unsafeFlags(["-static-executable", "-use-ld=lld", "-Xlinker", "--strip-all"], .when(configuration: .release)),
                                           staticStdlibInDebug]),
        .executableTarget(name: "security-secret-service", dependencies: ["SecurityCommand"],
                          linkerSettings: staticStdlib),
        // git's credential helper on the login keychain: the protocol in GitCredential, a thin main.
        .target(name: "GitCredential", dependencies: ["AppHomeSystem", "CommandSupport", "Keychain", "KeychainClient"]),
        .executableTarget(name: "git-credential-apphome", dependencies: ["AppHomeSystem", "CommandSupport", "GitCredential", "Keychain", "KeychainSecretService"],
                          linkerSettings: staticStdlib),
        // The Secret Service provider: GLib's GDBus for the bus, libgcrypt for the dh session (the
        // library libsecret itself uses); the login keychain behind it.
        // glib-2.0 for the include paths (gio-2.0.pc adds -pthread, which SwiftPM refuses with a warning); the module map links gio, gobject and glib.
        .systemLibrary(name: "CGio", pkgConfig: "glib-2.0", providers: [.apt(["libglib2.0-dev"])]),
        .systemLibrary(name: "CGcrypt", providers: [.apt(["libgcrypt20-dev"])]),
        .target(name: "SecretServiceProvider", dependencies: ["AppHomeSystem", "CGio", "CGcrypt", "CommandSupport", "Keychain", "KeychainSecretService", "PropertyList"]),
        .executableTarget(name: "apphome-secretd", dependencies: ["AppHomeSystem", "CommandSupport", "SecretServiceProvider"],
                          linkerSettings: staticStdlib),
        // An app's SecItemCopyMatching look-ups (bench/keychain.sh runs it inside `apphome run`).
        .executableTarget(name: "secitembench", dependencies: ["Security"]),
        // The Settings app (`apphome settings`): each installed app's Settings.bundle drawn as a
        // web page. SettingsApp holds what it serves and checks (testable, no libsoup);
        // SettingsServer is the HTTP side on libsoup 3 and the GLib main loop; the page's
        // HTML, CSS and JavaScript are Swift strings in SettingsApp/Assets.
        // glib-2.0 for the include paths (libsoup-3.0.pc adds -pthread, as gio's does); the module map links libsoup.
        .systemLibrary(name: "CSoup", pkgConfig: "glib-2.0", providers: [.apt(["libsoup-3.0-dev"])]),
        .target(name: "SettingsApp", dependencies: ["AppHomeSystem", "PropertyList", "Preferences", "Containers", "SettingsBundle",
                                                    "DefaultsCommand", "PrefsClient", "PrefsProtocol"]),
        .target(name: "SettingsServer", dependencies: ["AppHomeSystem", "CSoup", "CommandSupport", "SettingsApp", "PrefsClient", "PrefsProtocol", "Preferences", "Containers"]),
        .executableTarget(name: "apphome-settings", dependencies: ["AppHomeSystem", "CommandSupport", "SettingsServer"],
                          linkerSettings: staticStdlib),
        .testTarget(name: "SettingsAppTests", dependencies: ["TestSupport", "AppHomeSystem", "SettingsApp", "Preferences", "PropertyList", "Containers"]),
        .executableTarget(name: "keychainbench", dependencies: ["AppHomeSystem", "Keychain", "KeychainClient", "KeychainSecretService"]),
        // prefsd: the wire protocol, the service, its command, and the client side.
        .target(name: "PrefsProtocol", dependencies: ["AppHomeSystem", "Preferences", "PropertyList"]),
        .target(name: "PrefsService", dependencies: ["AppHomeSystem", "PrefsProtocol", "Preferences", "PropertyList", "Containers", "Keychain", "SyncedPreferences"]),
        // The `prefsd` command line: options, environment, socket activation; the command layer.
        .target(name: "PrefsdCommand", dependencies: ["AppHomeSystem", "CommandSupport", "Containers", "Keychain", "KeychainSecretService", "Preferences", "PrefsProtocol", "PrefsService", "SettingsBundle"]),
        .executableTarget(name: "prefsd", dependencies: ["AppHomeSystem", "PrefsdCommand", "CommandSupport"],
                          linkerSettings: staticStdlib),
        .target(name: "PrefsClient", dependencies: ["AppHomeSystem", "PrefsProtocol", "Preferences", "PropertyList"]),
        .executableTarget(name: "prefsbench", dependencies: ["Benchmarks"]),
        .testTarget(name: "PrefsServiceTests", dependencies: ["AppHomeSystem", "PrefsService", "PrefsdCommand", "PrefsClient", "PrefsProtocol", "Preferences", "PropertyList", "CommandSupport", "Keychain", "Containers", "TestSupport"]),
        // Helpers every test target shares (scratch directories); tests only.
        .target(name: "TestSupport", path: "Tests/TestSupport"),
        .target(name: "CTestSupport", path: "Tests/CTestSupport"),
        .testTarget(name: "AppHomeSystemTests", dependencies: ["AppHomeSystem", "TestSupport"]),
        .testTarget(name: "PropertyListTests", dependencies: ["PropertyList"]),
        .testTarget(name: "KeyedArchiveTests", dependencies: ["TestSupport", "KeyedArchive", "PropertyList", "PlutilCommand", "CommandSupport"],
                    exclude: ["Fixtures"]),
        .testTarget(name: "PreferencesTests", dependencies: ["TestSupport", "AppHomeSystem", "Preferences", "PropertyList", "PrefsService", "PrefsClient"]),
        .testTarget(name: "DefaultsCommandTests", dependencies: ["AppHomeSystem", "DefaultsCommand", "Preferences", "PropertyList", "KeyedArchive"]),
        .testTarget(name: "SyncedPreferencesTests", dependencies: ["TestSupport", "AppHomeSystem", "SyncedPreferences", "Containers", "Preferences", "PropertyList"]),
        // The bundles, clocks and keys the Containers and Backups tests share.
        .target(name: "ContainersTestSupport", dependencies: ["TestSupport", "Containers", "PropertyList"], path: "Tests/ContainersTestSupport"),
        .testTarget(name: "ContainersTests", dependencies: ["TestSupport", "ContainersTestSupport", "CTestSupport", "AppHomeSystem", "Containers", "Backups", "Preferences", "PropertyList"]),
        .testTarget(name: "BackupsTests", dependencies: ["TestSupport", "ContainersTestSupport", "CTestSupport", "AppHomeSystem", "Containers", "Backups", "Preferences", "PropertyList"]),
        .testTarget(name: "AppHomeCommandTests", dependencies: ["TestSupport", "AppHomeCommand", "Backups", "Containers", "CommandSupport", "Keychain", "PropertyList"]),
        .testTarget(name: "KeychainTests", dependencies: ["TestSupport", "AppHomeSystem", "Backups", "Keychain", "KeychainSecretService", "Containers", "Preferences", "PropertyList"], exclude: ["Fixtures"]),
        .testTarget(name: "KeychainClientTests", dependencies: ["TestSupport", "KeychainClient", "Keychain", "Containers", "PrefsService", "PrefsClient", "PrefsProtocol", "PropertyList"]),
        // The Security module: its API in process, and an app's SecItem calls (secitem-probe, run
        // as an installed app) against security, prefsd, update, backup and uninstall.
        .executableTarget(name: "secitem-probe", dependencies: ["Security"], path: "Tests/Fixtures/secitem-probe"),
        .testTarget(name: "SecurityTests", dependencies: ["TestSupport", "Security"]),
        // Help, man pages and completions against each command's one list of verbs and options.
        .testTarget(name: "CommandReferenceTests", dependencies: ["AppHomeSystem", "CommandSupport", "DefaultsCommand", "AppHomeCommand",
                                                                  "SecurityCommand", "PrefsdCommand", "GitCredential", "Keychain",
                                                                  "PlutilCommand", "SecretServiceProvider"]),
        .testTarget(name: "SecurityCommandTests", dependencies: ["TestSupport", "AppHomeSystem", "SecurityCommand", "Keychain", "KeychainSecretService", "Containers", "CommandSupport", "PrefsService"]),
        // Settings.bundle loading, lint, write validation and registration; the
        // schema is Schemas/settings-bundle.schema.json, embedded at build time in the
        // binary form scripts/compile-settings-schema.py makes of it.
        .target(name: "SettingsBundle", dependencies: ["AppHomeSystem", "PropertyList", "Preferences", "Containers"],
                resources: [.embedInCode("settings-bundle.schema.bplist"), .embedInCode("settings-bundle.kinds.bplist")]),
        .testTarget(name: "SettingsBundleTests", dependencies: ["TestSupport", "AppHomeSystem", "SettingsBundle", "Preferences", "PropertyList"], exclude: ["Fixtures"]),
        .testTarget(name: "EndToEndTests", dependencies: ["TestSupport", "PropertyList", "Preferences", "PrefsProtocol"]),
    ],
    swiftLanguageModes: [.v6]
)

// Start-up is the budget of every command. The release build of the Makefile (RELEASE_FLAGS)
// adds `-Xfrontend -disable-concrete-type-metadata-mangled-name-accessors` to every module: code
// then reaches the metadata of a concrete generic type through its accessor instead of
// demangling its name at run time (docs/STARTUP.md has the figures). It is not set here: SwiftPM
// refuses a dependency whose library targets carry an unsafe flag, whatever its condition, and
// every package that depends on AppHome by version would be refused. Only executable targets,
// which no package links, keep unsafe (linker) flags above.
