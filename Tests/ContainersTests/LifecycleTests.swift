import Foundation
import Testing
@testable import Containers
import Backups
import ContainersTestSupport
import PropertyList

/// The lifecycle matrix of `../shared/reference/lifecycle.md` §2: each
/// directory of a home across install, update, uninstall, backup and
/// restore (same device, after an uninstall, from the bundle source).
@Suite struct LifecycleTests {
    enum Event: String, CaseIterable, Sendable { case install, update, uninstall, backup, restore }
    enum Outcome: String, Sendable {
        /// Exists and is empty (a new directory).
        case created
        /// The marker written before the event is still there (moved, same inode).
        case kept
        /// Exists, and the marker written before the event is gone.
        case new
        /// Does not exist.
        case deleted
        /// The bundle of the new version, replaced whole.
        case replaced
        /// Backup: the marker is in the manifest.
        case included
        /// Backup: nothing under the directory is in the manifest.
        case excluded
        /// Restore: the marker is back, with its contents, in the new home.
        case restored
        /// Restore: the bundle is installed again from the bundle source.
        case reinstalled
    }

    static let matrix: [(String, Event, Outcome)] = [
        ("Sample.app", .install, .created), ("Sample.app", .update, .replaced), ("Sample.app", .uninstall, .deleted),
        ("Sample.app", .backup, .excluded), ("Sample.app", .restore, .reinstalled),
        ("Documents", .install, .created), ("Documents", .update, .kept), ("Documents", .uninstall, .deleted),
        ("Documents", .backup, .included), ("Documents", .restore, .restored),
        ("Library/Preferences", .install, .created), ("Library/Preferences", .update, .kept),
        ("Library/Preferences", .uninstall, .deleted), ("Library/Preferences", .backup, .included),
        ("Library/Preferences", .restore, .restored),
        ("Library/Application Support", .install, .created), ("Library/Application Support", .update, .kept),
        ("Library/Application Support", .uninstall, .deleted), ("Library/Application Support", .backup, .included),
        ("Library/Application Support", .restore, .restored),
        ("Library/Custom", .update, .kept), ("Library/Custom", .uninstall, .deleted),
        ("Library/Custom", .backup, .included), ("Library/Custom", .restore, .restored),
        ("Library/Caches", .install, .created), ("Library/Caches", .update, .new), ("Library/Caches", .uninstall, .deleted),
        ("Library/Caches", .backup, .excluded), ("Library/Caches", .restore, .new),
        ("tmp", .install, .created), ("tmp", .update, .new), ("tmp", .uninstall, .deleted),
        ("tmp", .backup, .excluded), ("tmp", .restore, .new),
    ]

    @Test(arguments: matrix)
    func directoryFollowsTheLifecycle(_ directory: String, _ event: Event, _ outcome: Outcome) throws {
        let s = Scratch()
        let manager = ContainerManager(root: s.root, now: fixedClock)
        let v1 = try AppBundle(path: s.makeBundle("v1", info: Scratch.info(), resource: "one"))
        let installed = try manager.install(v1)
        let oldHome = installed.home
        if event == .install {
            let path = oldHome.path + "/" + directory
            #expect(FileSystem_isDirectory(path))
            if directory.hasSuffix(".app") {
                #expect(s.read(path + "/Resources/data.txt") == "one")
                #expect(mode(path) & 0o777 == 0o555)
            } else {
                #expect(s.entries(path).isEmpty)
                #expect(mode(path) & 0o777 == 0o700)
            }
            #expect(outcome == .created)
            return
        }
        let marker = oldHome.path + "/" + directory + "/marker"
        if !directory.hasSuffix(".app") { try s.write(directory, to: marker) }
        let markerInode = inode(marker)
        let finalPath: String
        switch event {
        case .update:
            let v2 = try AppBundle(path: s.makeBundle("v2", info: Scratch.info(version: "2", short: "2.0"), resource: "two"))
            let report = try manager.update(v2)
            #expect(report.userDataBytesCopied == 0)
            #expect(report.bundleBytesCopied > 0)
            #expect(!FileSystem_exists(oldHome.path))
            finalPath = report.home.path + "/" + directory
        case .uninstall:
            _ = try manager.uninstall(v1.identifier)
            #expect(!FileSystem_exists(oldHome.path))
            #expect(try manager.registry.read().entries.isEmpty)
            finalPath = oldHome.path + "/" + directory
        case .backup:
            let paths = try manager.backup(v1.identifier).manifest.entries.map(\.path)
            let under = paths.filter { $0 == directory || $0.hasPrefix(directory + "/") }
            switch outcome {
            case .included: #expect(under == [directory, directory + "/marker"])
            case .excluded: #expect(under.isEmpty)
            default: Issue.record("not a backup outcome")
            }
            #expect(s.read(marker) == (directory.hasSuffix(".app") ? nil : directory), "a backup changes nothing")
            return
        case .restore:
            let backup = try manager.backup(v1.identifier)
            _ = try manager.uninstall(v1.identifier)
            let report = try manager.restore(from: backup.manifestPath, bundle: v1)
            finalPath = report.home.path + "/" + directory
        case .install:
            return
        }
        switch outcome {
        case .deleted:
            #expect(!FileSystem_exists(finalPath))
        case .kept:
            #expect(s.read(finalPath + "/marker") == directory)
            #expect(inode(finalPath + "/marker") == markerInode, "moved by rename, not copied")
        case .new:
            #expect(FileSystem_isDirectory(finalPath))
            #expect(s.entries(finalPath).isEmpty)
        case .replaced:
            #expect(s.read(finalPath + "/Resources/data.txt") == "two")
            #expect(try AppBundle(path: finalPath).version == "2")
        case .restored:
            #expect(s.read(finalPath + "/marker") == directory)
            #expect(s.entries(finalPath) == ["marker"])
        case .reinstalled:
            #expect(s.read(finalPath + "/Resources/data.txt") == "one")
            #expect(mode(finalPath) & 0o777 == 0o555)
        case .created, .included, .excluded:
            Issue.record("not an outcome of \(event)")
        }
    }

    @Test func installCopiesSymlinksAsLinksAndKeepsExecutableBits() throws {
        let s = Scratch()
        let manager = ContainerManager(root: s.root, now: fixedClock)
        let report = try manager.install(try AppBundle(path: s.makeBundle(info: Scratch.info())))
        #expect(mode(report.home.app + "/link.txt") & S_IFMT == S_IFLNK)
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: report.home.app + "/link.txt") == "Resources/data.txt")
        #expect(mode(report.home.app + "/Sample") & 0o777 == 0o555)
        #expect(mode(report.home.app + "/Resources/data.txt") & 0o777 == 0o444)
        #expect(mode(report.home.path) & 0o777 == 0o700)
        #expect(report.bundleBytesCopied == 3 + 18 + (s.read(report.home.app + "/Info.plist")?.utf8.count ?? 0))
        #expect(report.entry.installTime == fixedClock())
        #expect(ContainerLayout.isValidUUID(report.entry.homeUUID))
    }

    @Test func installRefusesAnInstalledIdentifier() throws {
        let s = Scratch()
        let manager = ContainerManager(root: s.root)
        let bundle = try AppBundle(path: s.makeBundle(info: Scratch.info()))
        _ = try manager.install(bundle)
        #expect(throws: ContainersError.alreadyInstalled("com.example.Sample")) { try manager.install(bundle) }
        #expect(s.homes.count == 1)
        #expect(ContainersError.alreadyInstalled("a.b").description == "a.b is already installed; use 'apphome update' to install a new version")
    }

    @Test func installOfABundleWithAFifoLeavesNoHome() throws {
        let s = Scratch()
        let path = try s.makeBundle(info: Scratch.info())
        mkfifo(path + "/pipe", 0o600)
        let manager = ContainerManager(root: s.root)
        #expect(throws: ContainersError.unsupportedFileType(path: path + "/pipe")) { try manager.install(try AppBundle(path: path)) }
        #expect(s.homes.isEmpty)
        #expect(try manager.registry.read().entries.isEmpty)
    }

    @Test func updateAndUninstallRefuseAnAppThatIsNotInstalled() throws {
        let s = Scratch()
        let manager = ContainerManager(root: s.root)
        let bundle = try AppBundle(path: s.makeBundle(info: Scratch.info()))
        #expect(throws: ContainersError.notInstalled("com.example.Sample")) { try manager.update(bundle) }
        #expect(throws: ContainersError.notInstalled("com.example.Sample")) { try manager.uninstall(bundle.identifier) }
    }
}
