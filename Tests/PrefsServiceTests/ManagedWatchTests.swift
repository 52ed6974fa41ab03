import AppHomeSystem
import Foundation
import Preferences
@testable import PrefsService
import Testing

/// prefsd learns that the administrator's managed directory appeared from
/// an inotify event on the nearest directory above it, not by trying to
/// watch it on every turn of its loop.
@Suite struct ManagedWatchTests {
    @Test func aManagedDirectoryMadeLaterIsSeenThroughItsNearestExistingParent() throws {
        let top = NSTemporaryDirectory() + "managed-watch-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: top, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: top) }
        let watcher = DirectoryWatcher()
        let watch = ManagedWatch(ManagedPreferences(directory: top + "/etc/apphome/managed"))

        #expect(!watch.watchIfPresent(watcher))
        #expect(watch.ancestor == top)
        let looks = watch.looks
        // Quiet, or an event elsewhere: nothing concerns it, so the loop does not look.
        try FileManager.default.createDirectory(atPath: top + "/elsewhere", withIntermediateDirectories: true)
        #expect(!watch.concerns(watcher.drain()))
        #expect(!watch.concerns([top + "/etcetera", top + "/et", "/"]))
        #expect(watch.looks == looks)

        // A directory on the way: an event, and the watch moves down to it.
        try FileManager.default.createDirectory(atPath: top + "/etc", withIntermediateDirectories: true)
        #expect(watch.concerns(watcher.drain()))
        #expect(!watch.watchIfPresent(watcher))
        #expect(watch.ancestor == top + "/etc")

        // The rest at once (`mkdir -p`): seen, watched, and the ancestor given up.
        try FileManager.default.createDirectory(atPath: top + "/etc/apphome/managed", withIntermediateDirectories: true)
        #expect(watch.concerns(watcher.drain()))
        #expect(watch.watchIfPresent(watcher))
        #expect(watch.ancestor == nil && watcher.isWatching(top + "/etc/apphome/managed"))
        #expect(!watch.watchIfPresent(watcher), "already watched")

        // A file in it concerns it; the directory removed is a lost watch (the
        // loop treats it as an overflow), then watched from above again.
        #expect(FileManager.default.createFile(atPath: top + "/etc/apphome/managed/com.example.plist", contents: Data()))
        #expect(watch.concerns(watcher.drain()))
        try FileManager.default.removeItem(atPath: top + "/etc/apphome/managed")
        _ = watcher.drain()
        #expect(watcher.overflowed && !watcher.isWatching(top + "/etc/apphome/managed"))
        #expect(!watch.watchIfPresent(watcher))
        #expect(watch.ancestor == top + "/etc/apphome")
        try FileManager.default.createDirectory(atPath: top + "/etc/apphome/managed", withIntermediateDirectories: true)
        #expect(watch.concerns(watcher.drain()))
        #expect(watch.watchIfPresent(watcher))
    }
}
