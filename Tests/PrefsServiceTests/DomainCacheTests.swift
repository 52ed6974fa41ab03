import AppHomeSystem
import Containers
import Foundation
import Preferences
import PrefsProtocol
@testable import PrefsService
import PropertyList
import Testing

/// The domain cache's resolver follows the container registry by the
/// file's status: read again when another process installs or uninstalls,
/// not on every request.
@Suite struct DomainCacheTests {
    static let app = "com.example.cached"
    static let uuid = "0A1B2C3D-0000-4000-8000-00000000CAFE"

    static func install(_ root: String) throws {
        let registry = Registry(entries: [try BundleIdentifier(app): RegistryEntry(
            bundleIdentifier: try BundleIdentifier(app), homeUUID: uuid, bundleName: "Cached.app", version: "1",
            shortVersion: nil, displayName: nil, installTime: PlistDate(secondsSince1970: 1_800_000_000))])
        try FileManager.default.createDirectory(atPath: root + "/Applications", withIntermediateDirectories: true)
        try RegistryFile(layout: ContainerLayout(root: root)).write(registry)
    }

    @Test func aRegistryThatStaysAbsentIsReadOnceAndAnInstallIsStillSeen() throws {
        let directory = NSTemporaryDirectory() + "prefsd-cache-tests-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let root = directory + "/root"
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        let cache = DomainCache(root: root)
        var changes = 0
        cache.resolverChanged = { changes += 1 }
        let address = DomainAddress(.named(Self.app))
        let plain = root + "/Library/Preferences/" + Self.app + ".plist"
        // Each request as the loop reads it: a sweep read, then its handling.
        func request() throws -> String {
            cache.requestsArrived()
            return try cache.path(for: address)
        }
        for _ in 0..<5 { #expect(try request() == plain) }
        #expect(cache.resolverBuilds == 1)
        #expect(changes == 1)

        // Another process installs the app: the next request sees it.
        try Self.install(root)
        let home = ContainerLayout(root: root).home(uuid: Self.uuid, bundleName: "Cached.app").preferences + "/" + Self.app + ".plist"
        #expect(try request() == home)
        #expect(try request() == home)
        #expect(cache.resolverBuilds == 2)

        // And an uninstall (the registry removed) too, read once.
        try FileManager.default.removeItem(atPath: ContainerLayout(root: root).registryPath)
        #expect(try request() == plain)
        #expect(try request() == plain)
        #expect(cache.resolverBuilds == 3)

        // Within one sweep the registry is looked at once: an install made
        // after the sweep was read is seen by the next sweep.
        cache.requestsArrived()
        #expect(try cache.path(for: address) == plain)
        try Self.install(root)
        #expect(try cache.path(for: address) == plain)
        #expect(try request() == home)
    }

    /// With the registry's directory watched (or, before it exists, the
    /// root), a sweep looks at the registry only when inotify has events
    /// waiting: an install or uninstall by another process is still seen by
    /// the next request, and a quiet registry costs no `stat`.
    @Test(arguments: [true, false])
    func aWatchedRegistryIsLookedAtOnlyWhenEventsAreWaiting(applicationsExist: Bool) throws {
        let directory = NSTemporaryDirectory() + "prefsd-cache-tests-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let root = directory + "/root"
        try FileManager.default.createDirectory(atPath: applicationsExist ? root + "/Applications" : root, withIntermediateDirectories: true)
        let cache = DomainCache(root: root)
        cache.watchRegistry()
        let address = DomainAddress(.named(Self.app))
        let plain = root + "/Library/Preferences/" + Self.app + ".plist"
        let home = ContainerLayout(root: root).home(uuid: Self.uuid, bundleName: "Cached.app").preferences + "/" + Self.app + ".plist"
        func request() throws -> String {
            cache.requestsArrived()
            return try cache.path(for: address)
        }
        func drain() { cache.handleFileEvents(isSubscribed: { _ in false }, changed: { _ in }) }
        #expect(try request() == plain)
        let quiet = cache.registryLooks
        for _ in 0..<5 { #expect(try request() == plain) }
        #expect(cache.registryLooks == quiet, "no event waiting: no look")

        // Installed by another process, not yet drained: the event waiting makes the next request look.
        try Self.install(root)
        #expect(try request() == home)
        drain()
        #expect(try request() == home)
        let afterDrain = cache.registryLooks
        #expect(try request() == home)
        #expect(cache.registryLooks == afterDrain)

        // Uninstalled, and drained before the request (the loop's order): seen too.
        try FileManager.default.removeItem(atPath: ContainerLayout(root: root).registryPath)
        drain()
        #expect(try request() == plain)
        #expect(cache.resolverBuilds == 3)
    }
}
