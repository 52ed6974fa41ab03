import Foundation
import TestSupport

/// A directory under the system temp dir, removed when the test is done.
final class TemporaryDirectory {
    let path: String

    init() {
        path = ScratchDirectory.make("apphome-tests")
    }

    deinit { ScratchDirectory.remove(path) }

    func write(_ relative: String, _ bytes: [UInt8]) {
        let full = path + "/" + relative
        try! FileManager.default.createDirectory(atPath: (full as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try! Data(bytes).write(to: URL(fileURLWithPath: full))
    }

    func read(_ relative: String) -> [UInt8]? {
        (try? Data(contentsOf: URL(fileURLWithPath: path + "/" + relative))).map { [UInt8]($0) }
    }

    func mode(_ relative: String) -> Int {
        let attributes = try! FileManager.default.attributesOfItem(atPath: path + "/" + relative)
        return (attributes[.posixPermissions] as! NSNumber).intValue
    }
}
