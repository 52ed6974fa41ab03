// ScaryBugs: the app's own code. Its bugs are kept with KeyedArchiver in
// Documents, its settings with Foundation's UserDefaults, and its sync token in
// the keychain with SecItemAdd, as the iOS app does; `apphome run` or `launch`
// gives it its home, its preferences domain and its keychain.
//
//   ScaryBugs add NAME RATING     adds a bug
//   ScaryBugs list                lists the bugs, in the sortOrder setting's order
//   ScaryBugs login TOKEN         keeps the sync token (replacing the one there was)
//   ScaryBugs status              the launch count, the bug count, whether a token is kept
import Foundation
import KeyedArchive
import PropertyList
import Security

final class Bug: KeyedCoding {
    static let archivedClassName = "ScaryBug"
    let name: String
    let rating: Double

    init(name: String, rating: Double) {
        self.name = name
        self.rating = rating
    }

    init(coder: KeyedUnarchiver) throws {
        name = try coder.decodeString(forKey: "name") ?? ""
        rating = try coder.decodeDouble(forKey: "rating")
    }

    func encode(with coder: KeyedArchiver) {
        coder.encode(name, forKey: "name")
        coder.encode(rating, forKey: "rating")
    }
}

final class BugList: KeyedCoding {
    static let archivedClassName = "ScaryBugList"
    var bugs: [Bug]

    init(bugs: [Bug]) { self.bugs = bugs }
    init(coder: KeyedUnarchiver) throws { bugs = try coder.decodeArray(of: Bug.self, forKey: "bugs") }
    func encode(with coder: KeyedArchiver) { coder.encode(bugs, forKey: "bugs") }
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("ScaryBugs: \(message)\n".utf8))
    exit(1)
}

/// Where the app keeps things.
enum Place {
    /// The app's Documents, in its home (HOME inside `apphome run`).
    static var documents: URL { URL(fileURLWithPath: NSHomeDirectory()).appendingPathComponent("Documents") }
    static var archive: URL { documents.appendingPathComponent("bugs.archive") }
    /// The keychain item of the sync token.
    static var tokenQuery: [String: Any] {
        [kSecClass as String: kSecClassGenericPassword,
         kSecAttrService as String: "sync.scarybugs.example.com",
         kSecAttrAccount as String: "ray"]
    }
}

func loadBugs() -> [Bug] {
    guard let data = try? Data(contentsOf: Place.archive) else { return [] }
    do { return try KeyedUnarchiver.unarchivedObject(ofClass: BugList.self, from: Array(data), classes: [Bug.self])?.bugs ?? [] } catch {
        fail("\(Place.archive.path) is not a bug archive: \(error)")
    }
}

func save(_ bugs: [Bug]) {
    do {
        let bytes = try KeyedArchiver.archivedData(withRootObject: BugList(bugs: bugs), format: .binary)
        try FileManager.default.createDirectory(at: Place.documents, withIntermediateDirectories: true)
        try Data(bytes).write(to: Place.archive, options: .atomic)
    } catch { fail("cannot save the bugs: \(error)") }
}

func keepToken(_ token: String) {
    let deleted = SecItemDelete(Place.tokenQuery as CFDictionary)
    guard deleted == errSecSuccess || deleted == errSecItemNotFound else {
        fail("cannot replace the token: \(SecCopyErrorMessageString(deleted, nil) ?? "") (\(deleted))")
    }
    var item = Place.tokenQuery
    item[kSecValueData as String] = Data(token.utf8)
    item[kSecAttrAccessible as String] = kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly
    let status = SecItemAdd(item as CFDictionary, nil)
    guard status == errSecSuccess else { fail("cannot keep the token: \(SecCopyErrorMessageString(status, nil) ?? "") (\(status))") }
}

func token() -> String? {
    var query = Place.tokenQuery
    query[kSecReturnData as String] = kCFBooleanTrue
    query[kSecMatchLimit as String] = kSecMatchLimitOne
    var result: CFTypeRef?
    let status = SecItemCopyMatching(query as CFDictionary, &result)
    switch status {
    case errSecSuccess: return (result as? Data).map { String(decoding: $0, as: UTF8.self) }
    case errSecItemNotFound: return nil
    default: fail("cannot read the token: \(SecCopyErrorMessageString(status, nil) ?? "") (\(status))")
    }
}

let defaults = UserDefaults.standard
defaults.set(defaults.integer(forKey: "launchCount") + 1, forKey: "launchCount")
defaults.synchronize()

let args = Array(CommandLine.arguments.dropFirst())
switch (args.first, args.count) {
case ("add", 3):
    guard let rating = Double(args[2]), (0...5).contains(rating) else { fail("a rating is a number from 0 to 5, not \(args[2])") }
    save(loadBugs() + [Bug(name: args[1], rating: rating)])
    print("added \(args[1]) (\(args[2]))")
case ("list", 1):
    var bugs = loadBugs()
    let order = defaults.string(forKey: "sortOrder") ?? "name"
    bugs.sort { order == "rating" ? $0.rating > $1.rating : $0.name < $1.name }
    for bug in bugs { print("\(bug.name)\t\(bug.rating)") }
case ("login", 2):
    keepToken(args[1])
    print("token kept in the keychain")
case ("status", 1):
    print("launches: \(defaults.integer(forKey: "launchCount"))")
    print("bugs: \(loadBugs().count) in \(Place.archive.path.hasPrefix(NSHomeDirectory()) ? "Documents" : Place.archive.path)")
    print("token: \(token() ?? "none")")
default:
    fail("usage: ScaryBugs add NAME RATING | list | login TOKEN | status")
}
