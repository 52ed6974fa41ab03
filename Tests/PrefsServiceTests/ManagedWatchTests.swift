import AppHomeSystem
import Foundation
import Preferences
@testable import PrefsService
import Testing
import TestSupport

/// prefsd learns that the administrator's managed directory appeared from
/// an inotify event on the nearest directory above it, not by trying to
/// watch it on every turn of its loop.
@Suite struct ManagedWatchTests {
    @Test func aManagedDirectoryMadeLaterIsSeenThroughItsNearestExistingParent() throws {
        let top = ScratchDirectory.make("managed-watch")
        defer { ScratchDirectory.remove(top) }
        let watcher = DirectoryWatcher()
        let watch = ManagedWatch(ManagedPreferences(directory: top + "/etc/apphome/managed"))
        func refreshed(_ paths: [String]) -> Bool { watch.refresh(watcher, after: paths, overflowed: watcher.overflowed) != nil }

        // The start (as the loop begins: everything suspect): it looks, and watches from above.
        #expect(watch.refresh(watcher, after: [], overflowed: true) != nil)
        #expect(watch.ancestor == top)
        let looks = watch.looks
        // Quiet, or an event elsewhere: nothing concerns it, so the turn does not look.
        try FileManager.default.createDirectory(atPath: top + "/elsewhere", withIntermediateDirectories: true)
        let elsewhere = watcher.drain()
        #expect(!elsewhere.isEmpty && !watch.concerns(elsewhere))
        #expect(!refreshed(elsewhere) && !refreshed([]))
        #expect(!watch.concerns([top + "/etcetera", top + "/et", "/"]))
        #expect(watch.looks == looks, "no look without an event on the way to it")

        // A directory on the way: an event, and the watch moves down to it.
        try FileManager.default.createDirectory(atPath: top + "/etc", withIntermediateDirectories: true)
        let way = watcher.drain()
        #expect(watch.concerns(way) && refreshed(way))
        #expect(watch.looks > looks && watch.ancestor == top + "/etc")

        // The rest at once (`mkdir -p`): seen, watched, and the ancestor given up.
        try FileManager.default.createDirectory(atPath: top + "/etc/apphome/managed", withIntermediateDirectories: true)
        let made = watcher.drain()
        #expect(watch.concerns(made) && refreshed(made))
        #expect(watch.ancestor == nil && watcher.isWatching(top + "/etc/apphome/managed"))
        #expect(!watch.watchIfPresent(watcher), "already watched")

        // A file in it concerns it and is read; the directory removed is a lost
        // watch (an overflow), then watched from above again.
        #expect(FileManager.default.createFile(atPath: top + "/etc/apphome/managed/com.example.plist", contents: Data()))
        let file = watcher.drain()
        #expect(watch.concerns(file) && refreshed(file))
        try FileManager.default.removeItem(atPath: top + "/etc/apphome/managed")
        let gone = watcher.drain()
        #expect(watcher.overflowed && !watcher.isWatching(top + "/etc/apphome/managed"))
        #expect(refreshed(gone))
        #expect(watch.ancestor == top + "/etc/apphome")
        try FileManager.default.createDirectory(atPath: top + "/etc/apphome/managed", withIntermediateDirectories: true)
        let back = watcher.drain()
        #expect(watch.concerns(back) && refreshed(back))
        #expect(watcher.isWatching(top + "/etc/apphome/managed"))
    }
}
