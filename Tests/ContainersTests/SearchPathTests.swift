import Testing
@testable import Containers
import ContainersTestSupport

@Suite struct SearchPathTests {
    static let home = "/r/Applications/AAAAAAAA-AAAA-4AAA-8AAA-AAAAAAAAAAAA"

    @Test(arguments: [
        (SearchPathDirectory.documentDirectory, 9, "Documents"),
        (.libraryDirectory, 5, "Library"),
        (.cachesDirectory, 13, "Library/Caches"),
        (.applicationSupportDirectory, 14, "Library/Application Support"),
        (.autosavedInformationDirectory, 11, "Library/Autosave Information"),
        (.applicationDirectory, 1, "Applications"),
    ])
    func userDomainGivesOnePathInTheHome(_ directory: SearchPathDirectory, _ raw: UInt, _ relative: String) {
        let context = AppContext(homeDirectory: Self.home + "/")
        #expect(directory.rawValue == raw)
        #expect(context.searchPathForDirectories(directory, in: .userDomainMask, expandTilde: true) == [Self.home + "/" + relative])
        #expect(context.searchPathForDirectories(directory, in: .userDomainMask, expandTilde: false) == ["~/" + relative])
        #expect(context.searchPathForDirectories(directory, in: .allDomainsMask, expandTilde: true) == [Self.home + "/" + relative])
        #expect(context.searchPathForDirectories(directory, in: [.localDomainMask, .systemDomainMask], expandTilde: true).isEmpty)
    }

    @Test func itemReplacementHasNoFixedPath() {
        #expect(SearchPathDirectory.itemReplacementDirectory.rawValue == 99)
        #expect(AppContext(homeDirectory: Self.home).searchPathForDirectories(.itemReplacementDirectory, in: .userDomainMask, expandTilde: true).isEmpty)
    }

    @Test func homeAndTemporaryDirectory() {
        let context = AppContext(homeDirectory: Self.home)
        #expect(context.homeDirectory == Self.home)
        #expect(context.temporaryDirectory == Self.home + "/tmp/")
    }

    @Test func contextComesFromTheVariablesRunSets() throws {
        #expect(try AppContext(environment: ["APPHOME_HOME": Self.home]).homeDirectory == Self.home)
        #expect(try AppContext(environment: ["APPHOME_BUNDLE_ID": "a.b", "CFFIXED_USER_HOME": Self.home]).homeDirectory == Self.home)
        #expect(throws: ContainersError.noAppContext) { try AppContext(environment: ["HOME": "/home/u"]) }
        #expect(throws: ContainersError.noAppContext) { try AppContext(environment: ["APPHOME_HOME": "relative"]) }
    }

    @Test func applicationSupportIsCreatedOnDemand() throws {
        let s = Scratch()
        let manager = ContainerManager(root: s.root)
        let home = try manager.install(try AppBundle(path: s.makeBundle(info: Scratch.info()))).home
        try Containers.TreeOperations.remove(home.applicationSupport)
        let context = AppContext(home: home)
        let paths = try context.paths(for: .applicationSupportDirectory, in: .userDomainMask)
        #expect(paths == [home.applicationSupport])
        #expect(FileSystem_isDirectory(home.applicationSupport))
        #expect(mode(home.applicationSupport) & 0o777 == 0o700)
        let replacement = try context.itemReplacementDirectory()
        #expect(replacement.hasPrefix(home.tmp + "/"))
        #expect(FileSystem_isDirectory(replacement))
        #expect(try context.itemReplacementDirectory() != replacement)
    }
}
