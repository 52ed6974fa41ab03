import Foundation

/// A directory under the system temp dir, removed when the test is done.
final class TemporaryDirectory {
    let path: String

    init() {
        let base = FileManager.default.temporaryDirectory.path + "/apphome-tests-" + UUID().uuidString
        try! FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: true)
        path = base
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

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
